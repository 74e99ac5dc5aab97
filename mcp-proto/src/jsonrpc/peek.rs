//! Which request a frame answered, learned from a frame that could not be
//! decoded: the start of an oversized line, its last bytes, or a JSON value
//! that breaks the envelope.
//!
//! A transport that drops such a frame reports the id it learned here
//! ([`TransportError::with_request`](crate::transport::TransportError::with_request)),
//! so the call it answered fails at once instead of waiting for its timeout.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::RequestId;
use crate::error::ErrorCode;
use crate::transport::TransportError;

/// What a frame is, as far as its first members tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameKind {
    /// A response or an error response (`result` or `error` came first).
    Answer,
    /// A request or a notification (`method` came first).
    Call,
}

/// What the start of a frame tells (see [`peek_head`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameHead {
    /// The frame is a JSON object (it starts with `{`).
    pub object: bool,
    /// The top-level `id`, if it came before the scan had to stop.
    pub id: Option<RequestId>,
    /// The kind, from the first of `result`, `error` and `method`.
    pub kind: Option<FrameKind>,
}

/// Scans the start of a JSON-RPC frame (any prefix of it: the rest may be
/// missing) for its top-level `id` and kind, skipping member values. It
/// stops at the first value that does not end within `head`. Never fails:
/// what could not be learned is `None`.
///
/// ```
/// use mcp_proto::jsonrpc::{FrameKind, RequestId, peek_head};
/// let head = peek_head(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"te"#);
/// assert_eq!(head.id, Some(RequestId::Number(7)));
/// assert_eq!(head.kind, Some(FrameKind::Answer));
/// ```
pub fn peek_head(head: &[u8]) -> FrameHead {
    let mut out = FrameHead::default();
    let mut s = Cursor { b: head, i: 0 };
    s.ws();
    if !s.eat(b'{') {
        return out;
    }
    out.object = true;
    loop {
        s.ws();
        let Some(key) = s.string() else { return out };
        s.ws();
        if !s.eat(b':') {
            return out;
        }
        s.ws();
        let start = s.i;
        let complete = s.skip_value();
        let value = head.get(start..s.i).unwrap_or_default();
        match key {
            b"\"id\"" if complete => out.id = serde_json::from_slice(value).ok(),
            b"\"result\"" | b"\"error\"" => {
                out.kind.get_or_insert(FrameKind::Answer);
            }
            b"\"method\"" => {
                out.kind.get_or_insert(FrameKind::Call);
            }
            _ => {}
        }
        if !complete {
            return out;
        }
        s.ws();
        if !s.eat(b',') {
            return out;
        }
    }
}

/// What a dropped frame was, as far as its first and last bytes tell: the
/// answer to a request, a response whose id could not be learned, or
/// nothing a call waits for. A transport that drops a frame (over its size
/// limit, not JSON, not UTF-8) scopes its error with [`Dropped::scope`], so
/// the call it answered fails at once (see [`crate::transport`]: "a
/// dropped answer").
///
/// ```
/// use mcp_proto::jsonrpc::{Dropped, RequestId};
/// // The Python SDK's order (id first) and the TypeScript SDK's (id last).
/// let py = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"te"#;
/// assert_eq!(Dropped::learn(py, b""), Dropped::Answer(RequestId::Number(7)));
/// let ts_tail = br#"..."}]},"jsonrpc":"2.0","id":8}"#;
/// assert_eq!(Dropped::learn(br#"{"result":{"con"#, ts_tail), Dropped::Answer(8.into()));
/// assert_eq!(Dropped::learn(br#"{"result":{"con"#, b"...x"), Dropped::UnknownAnswer);
/// // The server's own request: answered with an error, never an answer to ours.
/// assert_eq!(Dropped::learn(br#"{"method":"x","id":3,"params":{"#, b""), Dropped::Request(3.into()));
/// assert_eq!(Dropped::learn(br#"{"method":"notifications/x","params":{"#, b""), Dropped::NotAnAnswer);
/// assert_eq!(Dropped::learn(b"Server v1 listening", b""), Dropped::NotAnAnswer);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dropped {
    /// The answer to this request.
    Answer(RequestId),
    /// A response (`result` or `error` came first) whose id could not be
    /// learned: it may have answered any pending request.
    UnknownAnswer,
    /// A request from the server (`method` came first) whose `id` could be
    /// read: it answered nothing, and JSON-RPC asks for an error answer to
    /// it (the server waits for one).
    Request(RequestId),
    /// A notification from the server, a request whose id could not be
    /// read, or not a JSON object (noise): it answered nothing.
    NotAnAnswer,
}

impl Dropped {
    /// Classifies a dropped frame from its first bytes (`head`, scanned
    /// with [`peek_head`]) and its last ones (`tail`, with [`peek_tail`]; may
    /// be empty while the frame is still arriving). An id at the start
    /// decides alone, so a frame whose start names its request is known as
    /// soon as that start has arrived.
    pub fn learn(head: &[u8], tail: &[u8]) -> Self {
        Self::from_parts(&peek_head(head), tail)
    }

    /// [`learn`](Self::learn) with the head already scanned.
    pub fn from_parts(head: &FrameHead, tail: &[u8]) -> Self {
        if !head.object {
            return Dropped::NotAnAnswer;
        }
        if head.kind == Some(FrameKind::Call) {
            return match head.id.clone().or_else(|| peek_tail(tail)) {
                Some(id) => Dropped::Request(id),
                None => Dropped::NotAnAnswer,
            };
        }
        match (head.kind, head.id.clone().or_else(|| peek_tail(tail))) {
            (_, Some(id)) => Dropped::Answer(id),
            (Some(FrameKind::Answer), None) => Dropped::UnknownAnswer,
            // An object that names no kind in its head and has no id at
            // either end: nothing to fail.
            (_, None) => Dropped::NotAnAnswer,
        }
    }

    /// Whether a call waits for this frame (an answer, known or not).
    pub fn is_answer(&self) -> bool {
        matches!(self, Dropped::Answer(_) | Dropped::UnknownAnswer)
    }

    /// Scopes `error` (the reason the frame was dropped, usually of kind
    /// [`Decode`](crate::transport::TransportErrorKind::Decode)) as the
    /// transport contract asks: to the request it answered, to every
    /// waiting request when the id is unknown, or, for the server's own
    /// request, as one to refuse with [`ErrorCode::PARSE_ERROR`] (it could
    /// not be read).
    pub fn scope(&self, error: TransportError) -> TransportError {
        match self {
            Dropped::Answer(id) => error.with_request(id.clone()),
            Dropped::UnknownAnswer => error.answering_unknown(),
            Dropped::Request(id) => error.refusing_request(id.clone(), ErrorCode::PARSE_ERROR),
            Dropped::NotAnAnswer => error,
        }
    }
}

/// Learns the top-level `id` from the last bytes of a JSON object whose
/// last member is `"id"` with a number or string value (as the TypeScript
/// SDK writes responses: `{"result":…,"jsonrpc":"2.0","id":7}`). `None`
/// when the object does not end that way, or the value starts before `tail`.
///
/// The last value before the closing `}` belongs to the top-level object,
/// so no nested `id` can be mistaken for it.
///
/// ```
/// use mcp_proto::jsonrpc::{RequestId, peek_tail};
/// assert_eq!(peek_tail(br#"..."}]},"jsonrpc":"2.0","id":"a-1"}"#), Some(RequestId::from("a-1")));
/// assert_eq!(peek_tail(br#"...,"x":{"id":1}}"#), None);
/// ```
pub fn peek_tail(tail: &[u8]) -> Option<RequestId> {
    let end = trim_end(tail, tail.len());
    let close = end.checked_sub(1)?;
    if tail.get(close) != Some(&b'}') {
        return None;
    }
    let value_end = trim_end(tail, close);
    let last = *tail.get(value_end.checked_sub(1)?)?;
    let value_start = if last == b'"' {
        // The opening quote: the first one before the closing quote that no
        // backslash escapes (inside a string every quote is escaped).
        let mut j = value_end - 1;
        loop {
            j = j.checked_sub(1)?;
            if tail.get(j) == Some(&b'"') && backslashes_before(tail, j).is_multiple_of(2) {
                break j;
            }
        }
    } else {
        let mut j = value_end;
        while j > 0
            && tail.get(j - 1).is_some_and(|b| {
                b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')
            })
        {
            j -= 1;
        }
        if j == value_end {
            return None;
        }
        j
    };
    let colon = trim_end(tail, value_start).checked_sub(1)?;
    if tail.get(colon) != Some(&b':') {
        return None;
    }
    let key_end = trim_end(tail, colon);
    let key_start = key_end.checked_sub(4)?;
    if tail.get(key_start..key_end) != Some(b"\"id\"") {
        return None;
    }
    let before = trim_end(tail, key_start).checked_sub(1)?;
    if !matches!(tail.get(before), Some(b',' | b'{')) {
        return None;
    }
    serde_json::from_slice(tail.get(value_start..value_end)?).ok()
}

/// The `id` of a complete JSON value that is not a valid JSON-RPC message
/// but looks like an answer: an object with a number or string `id` and no
/// `method` (a request's id names the *server's* request, not ours).
///
/// ```
/// use mcp_proto::jsonrpc::{RequestId, answered_id};
/// assert_eq!(answered_id(br#"{"jsonrpc":"1.0","id":3,"result":{}}"#), Some(RequestId::Number(3)));
/// assert_eq!(answered_id(br#"{"id":3,"method":7}"#), None);
/// ```
pub fn answered_id(json: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<IgnoredAny>,
    }
    let p: Peek<'_> = serde_json::from_slice(json).ok()?;
    if p.method.is_some() {
        return None;
    }
    serde_json::from_str(p.id?.get()).ok()
}

fn trim_end(b: &[u8], mut end: usize) -> usize {
    while end > 0 && b.get(end - 1).is_some_and(u8::is_ascii_whitespace) {
        end -= 1;
    }
    end
}

fn backslashes_before(b: &[u8], mut j: usize) -> usize {
    let mut n = 0;
    while j > 0 && b.get(j - 1) == Some(&b'\\') {
        n += 1;
        j -= 1;
    }
    n
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.i += 1;
        }
        hit
    }

    /// A whole string with its quotes, or `None` if it does not end in the input.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        if !self.eat(b'"') {
            return None;
        }
        let rest = self.b.get(self.i..)?;
        let mut k = 0;
        while let Some(off) = rest.get(k..).and_then(|r| memchr::memchr2(b'"', b'\\', r)) {
            let at = k + off;
            if rest.get(at) == Some(&b'\\') {
                k = at + 2;
                continue;
            }
            self.i += at + 1;
            return self.b.get(start..self.i);
        }
        self.i = self.b.len();
        None
    }

    /// Skips one value; `false` if it does not end within the input.
    fn skip_value(&mut self) -> bool {
        match self.peek() {
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(c) = self.peek() {
                    match c {
                        b'"' => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                false
            }
            Some(_) => {
                while self
                    .peek()
                    .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                self.i < self.b.len()
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_finds_an_id_before_the_value() {
        let h = peek_head(br#" { "jsonrpc" : "2.0", "id" : "x\"y", "result": {"a":[1,"}"]"#);
        assert_eq!(h.id, Some(RequestId::from("x\"y")));
        assert_eq!(h.kind, Some(FrameKind::Answer));
        let h = peek_head(br#"{"result":{"a":[1,2]},"jsonrpc":"2.0","id":9}"#);
        assert_eq!(h.id, Some(RequestId::Number(9)));
        let h = peek_head(br#"{"result":{"a":"#);
        assert_eq!(
            (h.object, h.id, h.kind),
            (true, None, Some(FrameKind::Answer))
        );
        let h = peek_head(br#"{"method":"sampling/createMessage","id":4,"params":{"#);
        assert_eq!(h.kind, Some(FrameKind::Call));
        // An id cut off by the end of the head is not guessed.
        assert_eq!(peek_head(br#"{"id":12"#).id, None);
        assert!(!peek_head(b"Server v1 listening").object);
        // A nested id is skipped with its value.
        assert_eq!(peek_head(br#"{"result":{"id":5},"x":1"#).id, None);
    }

    #[test]
    fn tail_finds_only_a_last_top_level_id() {
        assert_eq!(
            peek_tail(b"]},\"jsonrpc\":\"2.0\",\"id\":42}\r\n"),
            Some(RequestId::Number(42))
        );
        assert_eq!(
            peek_tail(br#"x", "id" : "a\\" }"#),
            Some(RequestId::from("a\\"))
        );
        assert_eq!(peek_tail(br#""q\",\"id\":1}"#), None, "inside a string");
        assert_eq!(peek_tail(br#"{"x":{"id":1}}"#), None);
        assert_eq!(peek_tail(br#","id":null}"#), None);
        assert_eq!(peek_tail(br#"d":1}"#), None);
        assert_eq!(peek_tail(b""), None);
    }
}
