//! Draining the server's stderr and keeping its last lines.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::oneshot;

use crate::command::StderrCallback;

/// How many of the last stderr lines are kept for exit errors.
pub const STDERR_TAIL_LINES: usize = 5;

/// Longest stderr line passed on; the rest of a longer line is dropped (a
/// server printing megabytes without a newline must not grow memory).
pub const MAX_STDERR_LINE: usize = 8 * 1024;

/// Longest line kept in the tail (exit errors stay readable).
const MAX_TAIL_LINE: usize = 512;

const READ_CHUNK: usize = 16 * 1024;

/// The last few stderr lines, shared between the draining task and the
/// transport.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: &str) {
        let mut q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if q.len() == STDERR_TAIL_LINES {
            q.pop_front();
        }
        q.push_back(truncate(line, MAX_TAIL_LINE).to_owned());
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        let q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        q.iter().cloned().collect()
    }
}

/// `s` cut to at most `max` bytes, on a char boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default()
}

/// Reads `stderr` to its end, line by line: each line goes to `tracing`,
/// the callback (if any) and the tail. `_done` is dropped at the end, which
/// tells the waiter that stderr is fully read.
pub(crate) async fn drain<R: AsyncRead + Unpin>(
    mut stderr: R,
    program: String,
    forward: bool,
    callback: Option<StderrCallback>,
    tail: Tail,
    _done: oneshot::Sender<()>,
) {
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut line: Vec<u8> = Vec::new();
    let emit = |line: &mut Vec<u8>| {
        let bytes = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(bytes);
        if forward {
            tracing::info!(target: "mcp_transport_stdio::stderr", server = %program, "{text}");
        }
        if let Some(cb) = &callback {
            cb(&text);
        }
        tail.push(&text);
        line.clear();
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = chunk.get(..n).unwrap_or_default();
        while !rest.is_empty() {
            let (part, more) = match memchr::memchr(b'\n', rest) {
                Some(i) => (rest.get(..i).unwrap_or_default(), rest.get(i + 1..)),
                None => (rest, None),
            };
            let room = MAX_STDERR_LINE.saturating_sub(line.len());
            line.extend_from_slice(part.get(..room).unwrap_or(part));
            match more {
                Some(more) => {
                    emit(&mut line);
                    rest = more;
                }
                None => rest = &[],
            }
        }
    }
    if !line.is_empty() {
        emit(&mut line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(input: &[u8]) -> (Vec<String>, Vec<String>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let cb: StderrCallback = Arc::new(move |l: &str| seen2.lock().unwrap().push(l.to_owned()));
        let tail = Tail::default();
        let (tx, _rx) = oneshot::channel();
        drain(input, "t".into(), true, Some(cb), tail.clone(), tx).await;
        let seen = seen.lock().unwrap().clone();
        (seen, tail.lines())
    }

    #[tokio::test]
    async fn splits_lines_and_keeps_the_tail() {
        let (seen, tail) = run(b"a\r\nb\n\nc\nd\ne\nf\nno newline").await;
        assert_eq!(seen, ["a", "b", "", "c", "d", "e", "f", "no newline"]);
        assert_eq!(tail, ["c", "d", "e", "f", "no newline"]);
    }

    #[tokio::test]
    async fn long_lines_are_cut_not_buffered() {
        let mut input = vec![b'x'; 3 * MAX_STDERR_LINE];
        input.extend_from_slice("é\nok\n".as_bytes());
        let (seen, tail) = run(&input).await;
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].len(), MAX_STDERR_LINE);
        assert_eq!(seen[1], "ok");
        assert_eq!(tail[0].len(), MAX_TAIL_LINE);
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("héllo", 3), "hé");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
