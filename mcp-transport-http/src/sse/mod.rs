//! A spec-exact, incremental Server-Sent Events decoder (sans-IO).
//!
//! Bytes go in as they arrive, in chunks of any size; events come out. The
//! decoder follows the WHATWG HTML "event stream interpretation" rules
//! exactly (<https://html.spec.whatwg.org/multipage/server-sent-events.html>):
//!
//! ```text
//! stream        = [ bom ] *event
//! event         = *( comment / field ) end-of-line
//! comment       = colon *any-char end-of-line
//! field         = 1*name-char [ colon [ space ] *any-char ] end-of-line
//! end-of-line   = ( cr lf / cr / lf )
//! ```
//!
//! - CRLF, LF and a lone CR each end a line; a CRLF split across two chunks
//!   ends one line, not two (the decoder remembers it just saw a CR).
//! - One U+FEFF byte order mark is stripped at the very start of the stream,
//!   even when its three bytes arrive in different chunks.
//! - Lines are decoded as UTF-8 with invalid sequences replaced by U+FFFD,
//!   never an error.
//! - `event`, `data`, `id` (ignored whole if it contains NUL) and `retry`
//!   (ASCII digits only) are understood; other fields are ignored.
//! - A blank line dispatches the event. The last event ID moves even when
//!   nothing is dispatched (an `id`-only block); an event whose data buffer
//!   is empty is not dispatched.
//! - At end of stream, a partial event is discarded ([`SseDecoder::decode_eof`]).
//!
//! # Limits
//!
//! The only error is [`SseError::EventTooLarge`]: the raw bytes of one
//! event's lines (comments excluded) went over
//! [`max_event_size`](SseDecoder::with_max_event_size) (default
//! [`DEFAULT_MAX_EVENT_SIZE`], 16 MiB). The check runs while reading, so a
//! peer that never ends a line cannot make the buffer grow past the limit.
//! After the error, the decoder discards input up to the next blank line and
//! then goes on normally. After [`decode`](SseDecoder::decode) returns
//! `Ok(None)`, the caller's buffer holds at most `max_event_size` bytes (or
//! 2, the start of a byte order mark, if the limit is smaller).
//!
//! # Example
//!
//! ```
//! use bytes::BytesMut;
//! use mcp_transport_http::sse::SseDecoder;
//!
//! let mut dec = SseDecoder::new();
//! let mut buf = BytesMut::from(&b"id: 7\r\ndata: {\"jsonrpc\":"[..]);
//! assert!(dec.decode(&mut buf)?.is_none()); // not a whole event yet
//! buf.extend_from_slice(b"\"2.0\"}\r\n\r\n");
//! let ev = dec.decode(&mut buf)?.expect("one event");
//! assert_eq!(ev.event, "message");
//! assert_eq!(ev.data, r#"{"jsonrpc":"2.0"}"#);
//! assert_eq!(dec.last_event_id(), "7");
//! # Ok::<(), mcp_transport_http::sse::SseError>(())
//! ```
#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use bytes::{Buf, BytesMut};

#[cfg(test)]
mod tests;

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod search_tests {
    #[test]
    fn find_line_end_matches_naive_search() {
        let naive = |h: &[u8]| h.iter().position(|&b| b == b'\n' || b == b'\r');
        let mut cases: Vec<Vec<u8>> = vec![vec![], b"abc".to_vec(), b"\n".to_vec()];
        for len in 0..40 {
            for pos in 0..len {
                for end in [b'\n', b'\r'] {
                    let mut v = vec![b'x'; len];
                    if let Some(slot) = v.get_mut(pos) {
                        *slot = end;
                    }
                    cases.push(v);
                }
            }
            // Bytes next to 0x0A/0x0D that could fool a sloppy bit trick.
            cases.push(
                (0..len)
                    .map(|i| [0x0B, 0x0C, 0x8A, 0x8D, 0x09, 0xFF][i % 6])
                    .collect(),
            );
        }
        for c in cases {
            assert_eq!(super::find_line_end(&c), naive(&c), "{c:?}");
        }
    }
}

/// Default for [`SseDecoder::with_max_event_size`]: 16 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The event type; `"message"` when the event had no `event` field.
    pub event: String,
    /// The data lines joined with `\n` (no trailing newline).
    pub data: String,
    /// The last event ID at the time of dispatch (the spec's `lastEventId`);
    /// empty if none was ever set.
    pub id: String,
}

/// The SSE decoder's only error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// One event was larger than the configured limit. The event is
    /// discarded; decoding resumes after the next blank line.
    #[error(
        "an SSE event of at least {} went over the {} limit and was discarded; raise it with `max_sse_event_size`",
        mcp_proto::transport::ByteSize(*size as u64),
        mcp_proto::transport::ByteSize(*limit as u64)
    )]
    EventTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
        /// How many bytes of the event had arrived when it was dropped
        /// (more than `limit`; the rest is discarded as it arrives, so its
        /// whole size is never known).
        size: usize,
    },
}

/// Incremental SSE decoder. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct SseDecoder {
    // ---- line scanning ----
    /// Where scanning for a line end resumes in the caller's buffer.
    next_index: usize,
    /// The previous line ended with CR: swallow one LF if it comes next.
    skip_lf: bool,
    /// The BOM question is settled (stream start is behind us).
    bom_checked: bool,
    /// After `EventTooLarge`: drop lines until the next blank line.
    discarding: bool,
    /// While discarding: the current (dropped) line already had bytes.
    discarded_line_nonempty: bool,
    // ---- event buffers (WHATWG names) ----
    data: Vec<u8>,
    event_type: String,
    id_buffer: String,
    last_event_id: String,
    retry: Option<Duration>,
    /// Raw bytes of the current event's non-comment lines.
    event_size: usize,
    max_event_size: usize,
    /// The first bytes of the `data` of the event last dropped for its size.
    dropped_head: Vec<u8>,
}

/// How many bytes of a dropped event's data [`SseDecoder::dropped_head`]
/// keeps: enough for a JSON-RPC envelope's members before its payload.
pub const DROPPED_HEAD: usize = 1024;

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder at stream start with the default event size limit.
    pub fn new() -> Self {
        SseDecoder {
            next_index: 0,
            skip_lf: false,
            bom_checked: false,
            discarding: false,
            discarded_line_nonempty: false,
            data: Vec::new(),
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
            event_size: 0,
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
            dropped_head: Vec::new(),
        }
    }

    /// Sets the largest event accepted, in bytes of its lines (comments
    /// excluded). `0` is treated as 1.
    #[must_use]
    pub fn with_max_event_size(mut self, limit: usize) -> Self {
        self.max_event_size = limit.max(1);
        self
    }

    /// The configured event size limit.
    pub fn max_event_size(&self) -> usize {
        self.max_event_size
    }

    /// The last event ID seen (moves on every blank line, even when no event
    /// is dispatched). Send it as `Last-Event-ID` to resume.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Seeds the last event ID, e.g. when a new decoder reads a resumed
    /// stream. Like an `id` field, a value containing NUL is ignored.
    pub fn set_last_event_id(&mut self, id: &str) {
        if !id.contains('\0') {
            id.clone_into(&mut self.last_event_id);
            id.clone_into(&mut self.id_buffer);
        }
    }

    /// The first bytes (at most [`DROPPED_HEAD`]) of the data of the event
    /// last discarded with [`SseError::EventTooLarge`]: the start of the
    /// message it carried, to tell which request it answered
    /// ([`mcp_proto::jsonrpc::Dropped::learn`]). Empty before any such event.
    pub fn dropped_head(&self) -> &[u8] {
        &self.dropped_head
    }

    /// The reconnection time the server asked for with `retry`, if any.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Decodes the next event from `buf`, consuming the bytes it used.
    ///
    /// Returns `Ok(None)` when `buf` holds no complete event: append more
    /// bytes and call again. Call in a loop: one chunk can hold many events.
    /// Never panics, whatever the input.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, SseError> {
        loop {
            if !self.bom_checked {
                match bom_state(buf) {
                    Bom::Undecided => return Ok(None),
                    Bom::Present => buf.advance(BOM.len()),
                    Bom::Absent => {}
                }
                self.bom_checked = true;
            }
            if self.skip_lf {
                match buf.first() {
                    None => return Ok(None),
                    Some(b'\n') => buf.advance(1),
                    Some(_) => {}
                }
                self.skip_lf = false;
            }
            let start = self.next_index.min(buf.len());
            let found = buf.get(start..).and_then(find_line_end);
            let Some(rel) = found else {
                return self.on_partial_line(buf);
            };
            let pos = start + rel;
            self.next_index = 0;
            let ended_with_cr = buf.get(pos) == Some(&b'\r');
            let line = buf.get(..pos).unwrap_or_default();
            let step = match self.on_line(line) {
                Step::TooLarge(size) => Step::Dropped(self.too_large(size, line)),
                step => step,
            };
            // Consume the line and its terminator.
            buf.advance(pos + 1);
            if ended_with_cr {
                match buf.first() {
                    Some(b'\n') => buf.advance(1),
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            match step {
                Step::Continue => {}
                Step::Dispatch(ev) => return Ok(Some(ev)),
                Step::Dropped(e) => return Err(e),
                Step::TooLarge(_) => {} // made `Dropped` above
            }
        }
    }

    /// Decodes what is left at end of stream: every complete event still in
    /// `buf`, one per call, then `Ok(None)`, after which `buf` is empty and a
    /// partial event has been discarded (the spec's rule). The last event ID
    /// and retry survive; the decoder can read a resumed stream next.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, SseError> {
        if let Some(ev) = self.decode(buf)? {
            return Ok(Some(ev));
        }
        buf.clear();
        self.reset_stream();
        Ok(None)
    }

    /// Forgets the current stream's partial state (keeps the last event ID,
    /// the retry time and the limit), ready to read a new stream from its
    /// start, as for a reconnection.
    pub fn reset_stream(&mut self) {
        self.next_index = 0;
        self.skip_lf = false;
        self.bom_checked = false;
        self.discarding = false;
        self.discarded_line_nonempty = false;
        self.data.clear();
        self.event_type.clear();
        self.event_size = 0;
        // The spec keeps the id buffer equal to the last event ID across
        // reconnections: a new stream starts from the stored value.
        self.id_buffer.clone_from(&self.last_event_id);
    }

    /// Drops the current event: `size` bytes of it had arrived, the last
    /// of them in `line` (the line being read, complete or not).
    fn too_large(&mut self, size: usize, line: &[u8]) -> SseError {
        self.dropped_head.clear();
        let keep = self.data.len().min(DROPPED_HEAD);
        self.dropped_head
            .extend_from_slice(self.data.get(..keep).unwrap_or_default());
        if let Some(value) = data_value(line) {
            let keep = value.len().min(DROPPED_HEAD - self.dropped_head.len());
            self.dropped_head
                .extend_from_slice(value.get(..keep).unwrap_or_default());
        }
        self.discarding = true;
        self.data.clear();
        self.event_type.clear();
        self.event_size = 0;
        SseError::EventTooLarge {
            limit: self.max_event_size,
            size,
        }
    }

    /// No line end in `buf`: remember how far we scanned, enforce the limit.
    fn on_partial_line(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, SseError> {
        if self.discarding {
            if !buf.is_empty() {
                self.discarded_line_nonempty = true;
                buf.clear();
            }
            self.next_index = 0;
            return Ok(None);
        }
        self.next_index = buf.len();
        // A comment line does not count towards the event, but an endless one
        // must not grow the buffer either: bound the bare line too.
        let is_comment = buf.first() == Some(&b':');
        let pending = if is_comment {
            buf.len()
        } else {
            self.event_size.saturating_add(buf.len())
        };
        if pending > self.max_event_size {
            let err = self.too_large(pending, buf);
            buf.clear();
            self.next_index = 0;
            self.discarded_line_nonempty = true;
            return Err(err);
        }
        Ok(None)
    }

    /// Processes one complete line (without its terminator).
    fn on_line(&mut self, line: &[u8]) -> Step {
        if self.discarding {
            let blank = line.is_empty() && !self.discarded_line_nonempty;
            self.discarded_line_nonempty = false;
            if blank {
                self.discarding = false;
                // The dropped event still moves the cursor (its id lines
                // before the limit was hit were processed).
                self.last_event_id.clone_from(&self.id_buffer);
            }
            return Step::Continue;
        }
        if line.is_empty() {
            return self.dispatch();
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            // `:comment`
            Some(0) => {
                if line.len() > self.max_event_size {
                    return Step::TooLarge(line.len());
                }
                return Step::Continue;
            }
            Some(i) => {
                let name = line.get(..i).unwrap_or_default();
                let mut value = line.get(i + 1..).unwrap_or_default();
                if let Some(rest) = value.strip_prefix(b" ") {
                    value = rest;
                }
                (name, value)
            }
            None => (line, &b""[..]),
        };
        self.event_size = self.event_size.saturating_add(line.len());
        if self.event_size > self.max_event_size {
            return Step::TooLarge(self.event_size);
        }
        match name {
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"id" if !value.contains(&0) => {
                self.id_buffer = String::from_utf8_lossy(value).into_owned();
            }
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Step::Continue
    }

    /// The spec's "dispatch the event" steps.
    fn dispatch(&mut self) -> Step {
        // 1. Set the last event ID string to the last event ID buffer.
        self.last_event_id.clone_from(&self.id_buffer);
        self.event_size = 0;
        // 2. If the data buffer is empty, reset data and type; return.
        if self.data.is_empty() {
            self.event_type.clear();
            return Step::Continue;
        }
        // 3. If the data buffer's last character is LF, remove it.
        if self.data.last() == Some(&b'\n') {
            self.data.pop();
        }
        // 4.-5. Create the event; type "message" unless set.
        let event = if self.event_type.is_empty() {
            String::from("message")
        } else {
            std::mem::take(&mut self.event_type)
        };
        let data = match String::from_utf8(std::mem::take(&mut self.data)) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        // 6. Reset the data and event type buffers (done by `take`).
        Step::Dispatch(SseEvent {
            event,
            data,
            id: self.last_event_id.clone(),
        })
    }
}

enum Step {
    Continue,
    Dispatch(SseEvent),
    /// The event went over the limit; this many bytes of it had arrived.
    TooLarge(usize),
    /// The event was dropped (`TooLarge`, with the line at hand).
    Dropped(SseError),
}

/// The value of a `data` field line (`data:x`, `data: x`), if it is one.
fn data_value(line: &[u8]) -> Option<&[u8]> {
    let value = line.strip_prefix(b"data")?;
    match value.first() {
        Some(b':') => {
            let value = value.get(1..).unwrap_or_default();
            Some(value.strip_prefix(b" ").unwrap_or(value))
        }
        // `data` alone is an empty value; `datax` another field.
        _ => None,
    }
}

enum Bom {
    Present,
    Absent,
    Undecided,
}

fn bom_state(buf: &[u8]) -> Bom {
    if buf.starts_with(BOM) {
        Bom::Present
    } else if buf.len() < BOM.len() && BOM.starts_with(buf) {
        // Empty, or a prefix of the BOM: wait for more bytes.
        Bom::Undecided
    } else {
        Bom::Absent
    }
}

/// The first CR or LF in `hay`. Eight bytes at a time (SWAR, no `unsafe`):
/// long `data:` lines are the common case for MCP answers.
fn find_line_end(hay: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const LF: u64 = LO * b'\n' as u64;
    const CR: u64 = LO * b'\r' as u64;
    let is_end = |b: &u8| *b == b'\n' || *b == b'\r';
    let mut chunks = hay.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(bytes);
        let (a, b) = (w ^ LF, w ^ CR);
        // Non-zero iff some byte of `a` or `b` is zero (the classic test).
        let found = ((a.wrapping_sub(LO) & !a) | (b.wrapping_sub(LO) & !b)) & HI;
        if found != 0 {
            return chunk.iter().position(is_end).map(|p| offset + p);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(is_end)
        .map(|p| offset + p)
}

/// `retry`: only a non-empty run of ASCII digits counts (no sign, no spaces).
/// A value too large for `u64` milliseconds is ignored.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in value {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// Fuzzing entry points (used by `fuzz/fuzz_targets/sse_decoder.rs`);
/// compiled only for tests and `--cfg fuzzing`, not part of the API.
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing {
    use bytes::BytesMut;

    use super::{SseDecoder, SseError, SseEvent};

    type Outcome = (
        Vec<Result<SseEvent, SseError>>,
        String,
        Option<std::time::Duration>,
    );

    fn run(chunks: &[&[u8]], limit: usize) -> Outcome {
        let mut dec = SseDecoder::new().with_max_event_size(limit);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for c in chunks {
            buf.extend_from_slice(c);
            loop {
                match dec.decode(&mut buf) {
                    Ok(None) => break,
                    Ok(Some(e)) => out.push(Ok(e)),
                    Err(e) => out.push(Err(e)),
                }
            }
            // The buffer bound: after `Ok(None)` at most `limit` bytes are held
            // (or 2: the start of a byte order mark being decided).
            assert!(
                buf.len() <= limit.max(2),
                "buffer {} > limit {limit}",
                buf.len()
            );
        }
        loop {
            match dec.decode_eof(&mut buf) {
                Ok(None) => break,
                Ok(Some(e)) => out.push(Ok(e)),
                Err(e) => out.push(Err(e)),
            }
        }
        assert!(buf.is_empty());
        // How much of a dropped event had arrived depends on the chunking.
        for item in &mut out {
            if let Err(SseError::EventTooLarge { size, .. }) = item {
                *size = 0;
            }
        }
        (out, dec.last_event_id().to_owned(), dec.retry())
    }

    /// Decodes `data` whole and in chunks chosen by its first bytes; panics if
    /// the outcomes differ or the buffer bound is broken. The decoder itself
    /// must never panic.
    pub fn sse_decoder(data: &[u8]) {
        let Some((&ctl, rest)) = data.split_first() else {
            return;
        };
        let limit = 1 + usize::from(ctl & 0x3F) * 4;
        let whole = run(&[rest], limit);
        // Chunk sizes from a tiny deterministic sequence seeded by `ctl`.
        let mut chunks = Vec::new();
        let mut seed = u32::from(ctl) | 1;
        let mut input = rest;
        while !input.is_empty() {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let n = 1 + (seed >> 16) as usize % 7;
            let (a, b) = input.split_at(n.min(input.len()));
            chunks.push(a);
            input = b;
        }
        assert_eq!(run(&chunks, limit), whole, "chunked decoding differs");
        let bytes: Vec<&[u8]> = rest.chunks(1).collect();
        assert_eq!(run(&bytes, limit), whole, "bytewise decoding differs");
    }
}
