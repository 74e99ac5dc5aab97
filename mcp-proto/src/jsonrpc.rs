//! The JSON-RPC 2.0 envelope as MCP uses it.
//!
//! A [`Message`] is decoded once on the hot path: the envelope fields are
//! parsed, while `params` and `result` stay raw JSON ([`RawJson`], a span of
//! the received text itself) until whoever owns the message decodes them
//! into a typed form.
//!
//! Decoding is strict about the envelope (`"jsonrpc": "2.0"`, a request id is
//! never `null`, a response has exactly one of `result` and `error`) and
//! forgiving about everything else (unknown members are ignored).

use std::borrow::Cow;

use serde::Serialize;
use serde::ser::Serializer;
use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::raw::RawJson;

mod decode;
pub(crate) mod depth;
mod error;
mod id;
mod peek;
pub(crate) mod scan;

use self::decode::{decode_slice_error, decode_text};
pub use self::error::{DecodeError, EnvelopeViolation};
pub use self::id::{IdHash, IdHasher, RequestId};
pub use self::peek::{Dropped, FrameHead, FrameKind, answered_id, peek_head, peek_tail};

/// The deepest nesting of arrays and objects a message received from a peer
/// may have, its own object counted: 128.
///
/// A deeper message is refused whole ([`DecodeError::TooDeep`]), checked in
/// the pass that finds the envelope's members (or, for the rare message the
/// fast scanner leaves to `serde_json`, one more counting pass). So every raw
/// value a message holds ([`RawJson`]: `params`, `result`, and what typed
/// results keep raw, such as `structuredContent`) nests at most 127 levels:
/// exactly what `serde_json` decodes (its own limit), and little enough for
/// any code that walks a value recursively (a pretty-printer, a schema
/// walker) to stay far from the end of its stack. Without this limit raw
/// values would have none: `serde_json` skips the values it keeps raw without
/// counting levels.
///
/// It is a constant, not an option: a higher limit would only let through
/// values that no typed decode can read, and no MCP message (JSON Schemas
/// included) comes near it.
pub const MAX_DEPTH: usize = 128;

/// A request: expects exactly one response with the same id.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Request {
    /// The request id.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: Cow<'static, str>,
    /// The raw `params` object, if any.
    pub params: Option<RawJson>,
}

impl Request {
    /// A request with the given id, method and raw params.
    pub fn new(
        id: RequestId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
    ) -> Self {
        Request {
            id,
            method: method.into(),
            params,
        }
    }
}

/// A notification: a one-way message, never answered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Notification {
    /// The method name, e.g. `notifications/progress`.
    pub method: Cow<'static, str>,
    /// The raw `params` object, if any.
    pub params: Option<RawJson>,
}

impl Notification {
    /// A notification with the given method and raw params.
    pub fn new(method: impl Into<Cow<'static, str>>, params: Option<RawJson>) -> Self {
        Notification {
            method: method.into(),
            params,
        }
    }
}

/// A successful response.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The raw `result` value.
    pub result: RawJson,
}

impl Response {
    /// A response for `id` carrying `result`.
    pub fn new(id: RequestId, result: RawJson) -> Self {
        Response { id, result }
    }
}

/// An error response. `id` is `None` when the peer could not read the
/// request's id (it sent `"id": null` or omitted it).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ErrorResponse {
    /// The id of the request this answers, if the peer could read it.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl ErrorResponse {
    /// An error response for `id`.
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse { id, error }
    }
}

/// Any JSON-RPC 2.0 message MCP carries (batches are not part of MCP since
/// 2025-06-18 and are never sent by this crate's users).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A successful response.
    Response(Response),
    /// An error response.
    Error(ErrorResponse),
}

impl Message {
    /// Decodes one message from bytes (one stdio line, one HTTP body, one SSE `data`).
    ///
    /// Copies the bytes once (into the message's own text); a transport
    /// that owns what it read should use [`from_string`](Self::from_string).
    /// Never panics; every malformed input is a [`DecodeError`].
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DecodeError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => decode_text(text.to_owned()).map_err(|(e, _)| e),
            // Not UTF-8: let serde_json say where and why.
            Err(_) => Err(decode_slice_error(bytes)),
        }
    }

    /// Decodes one message from its text, keeping the text as the storage
    /// of its raw `params`/`result` (a span of it, not a copy).
    pub fn from_string(text: String) -> Result<Self, DecodeError> {
        decode_text(text).map_err(|(e, _)| e)
    }

    /// Like [`from_string`](Self::from_string), but a failure hands the text
    /// back with the error (to log it, or to tell noise from a broken message).
    pub fn try_from_string(text: String) -> Result<Self, (DecodeError, String)> {
        decode_text(text)
    }

    /// Appends this message as JSON to `out`, compact except inside raw
    /// values: `params` and `result` are copied verbatim, so a [`RawJson`]
    /// holding pretty-printed JSON (e.g. parsed from a peer's body) brings
    /// its whitespace, raw newlines included. Everything else is escaped by
    /// `serde_json`. A newline-delimited framing must rewrite CR/LF in the
    /// raw values (insignificant whitespace there) before framing with `\n`,
    /// as `mcp-transport-stdio` does.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        if let Some(raw) = self.write_until_raw(out) {
            out.extend_from_slice(raw.as_bytes());
        }
        out.push(b'}');
    }

    /// Like [`write_to`](Self::write_to), but a message with a raw value
    /// (a request's or notification's `params`, a response's `result`) is
    /// written only up to that value, which is handed back: the message's
    /// JSON is then what was written, the value's bytes, and `}`. A
    /// transport writes a large value from its own buffer this way instead
    /// of copying it. A message without one is written whole (`None`).
    pub fn write_split(self, out: &mut Vec<u8>) -> Option<RawJson> {
        if self.write_until_raw(out).is_none() {
            out.push(b'}');
            return None;
        }
        match self {
            Message::Request(r) => r.params,
            Message::Notification(n) => n.params,
            Message::Response(r) => Some(r.result),
            Message::Error(_) => None,
        }
    }

    /// The raw `params` of a request or notification, or `result` of a response.
    pub fn raw(&self) -> Option<&RawJson> {
        match self {
            Message::Request(r) => r.params.as_ref(),
            Message::Notification(n) => n.params.as_ref(),
            Message::Response(r) => Some(&r.result),
            Message::Error(_) => None,
        }
    }

    /// Writes the message up to its raw value (key included) and returns
    /// that value; without one, everything but the closing `}`.
    fn write_until_raw(&self, out: &mut Vec<u8>) -> Option<&RawJson> {
        match self {
            Message::Request(r) => write_head(out, Some(&r.id), &r.method),
            Message::Notification(n) => write_head(out, None, &n.method),
            Message::Response(r) => write_id(out, Some(&r.id)),
            Message::Error(e) => {
                write_id(out, e.id.as_ref());
                out.extend_from_slice(b",\"error\":");
                // An ErrorObject is strings, an integer and a Value: writing
                // it into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, &e.error);
                return None;
            }
        }
        let raw = self.raw()?;
        out.extend_from_slice(if matches!(self, Message::Response(_)) {
            b",\"result\":"
        } else {
            b",\"params\":"
        });
        Some(raw)
    }

    /// This message as compact JSON bytes, in a buffer allocated once for
    /// a message without escapes to expand (see `encoded_len_hint`).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.encoded_len_hint());
        self.write_to(&mut v);
        v
    }

    /// The length of this message's JSON when its strings need no escapes:
    /// the envelope, a number id at its longest, the method, a string id
    /// and the raw value. An error's object is sized by its message only.
    /// A buffer that grows while a message is written is copied into a
    /// block twice its size: for a `tools/call`, ~700 instructions (most
    /// requests are a little over any fixed first guess).
    pub(crate) fn encoded_len_hint(&self) -> usize {
        // `{"jsonrpc":"2.0","id":` + 20 digits + `,"method":""` + `,"params":` + `}`.
        const ENVELOPE: usize = 66;
        let id = |id: Option<&RequestId>| match id {
            Some(RequestId::String(s)) => s.len() + 2,
            _ => 0,
        };
        ENVELOPE
            + match self {
                Message::Request(r) => id(Some(&r.id)) + r.method.len(),
                Message::Notification(n) => n.method.len(),
                Message::Response(r) => id(Some(&r.id)),
                Message::Error(e) => id(e.id.as_ref()) + 48 + e.error.message.len(),
            }
            + self.raw().map_or(0, RawJson::len)
    }

    /// This message as compact JSON text: the payload of a WebSocket text
    /// frame (or any message-framed transport); [`str::parse`] reads it back.
    ///
    /// ```
    /// use mcp_proto::jsonrpc::{Message, Request};
    /// let m: Message = Request::new(1.into(), "ping", None).into();
    /// let text = m.to_text();
    /// assert_eq!(text, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    /// assert_eq!(text.parse::<Message>().unwrap().method(), Some("ping"));
    /// ```
    pub fn to_text(&self) -> String {
        // JSON written from `String`s and validated raw values is UTF-8.
        String::from_utf8(self.to_vec())
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Response(r) => Some(&r.id),
            Message::Error(e) => e.id.as_ref(),
            Message::Notification(_) => None,
        }
    }
}

impl std::str::FromStr for Message {
    type Err = DecodeError;
    fn from_str(s: &str) -> Result<Self, DecodeError> {
        decode_text(s.to_owned()).map_err(|(e, _)| e)
    }
}

impl From<Request> for Message {
    fn from(v: Request) -> Self {
        Message::Request(v)
    }
}
impl From<Notification> for Message {
    fn from(v: Notification) -> Self {
        Message::Notification(v)
    }
}
impl From<Response> for Message {
    fn from(v: Response) -> Self {
        Message::Response(v)
    }
}
impl From<ErrorResponse> for Message {
    fn from(v: ErrorResponse) -> Self {
        Message::Error(v)
    }
}

/// The same bytes as [`Message::write_to`].
impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.to_vec();
        match serde_json::from_slice::<&RawValue>(&text) {
            Ok(raw) => raw.serialize(s),
            Err(e) => Err(serde::ser::Error::custom(e)),
        }
    }
}

/// `{"jsonrpc":"2.0","id":<id>` (the id only when given; `null` for an
/// error response whose request id was unreadable is written by the caller).
fn write_id(out: &mut Vec<u8>, id: Option<&RequestId>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        Some(RequestId::Number(n)) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Some(RequestId::String(v)) => write_str(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

/// `{"jsonrpc":"2.0"[,"id":<id>],"method":<method>`.
fn write_head(out: &mut Vec<u8>, id: Option<&RequestId>, method: &str) {
    match id {
        Some(id) => write_id(out, Some(id)),
        None => out.extend_from_slice(b"{\"jsonrpc\":\"2.0\""),
    }
    out.extend_from_slice(b",\"method\":");
    write_str(out, method);
}

/// `s` as a JSON string, the bytes `serde_json` writes.
fn write_str(out: &mut Vec<u8>, s: &str) {
    crate::raw::compact::write_str(out, s);
}

#[cfg(test)]
mod tests;

#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
