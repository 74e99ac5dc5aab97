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
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::raw::RawJson;

mod scan;

/// A request id: an integer or a string, never `null` (MCP forbids it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id. MCP clients built on this crate allocate these.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl RequestId {
    /// The id as a JSON value (used where an id is embedded in params,
    /// e.g. `notifications/cancelled`).
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            RequestId::Number(n) => serde_json::Value::from(*n),
            RequestId::String(s) => serde_json::Value::from(&**s),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("request id out of range"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RequestId, E> {
                // Some peers echo integer ids as floats (`1.0`); accept exact integers only.
                if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
                    #[allow(clippy::cast_possible_truncation)]
                    Ok(RequestId::Number(v as i64))
                } else {
                    Err(E::custom("request id must be an integer or a string"))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

/// A fast hasher for request ids and the other small keys a client
/// allocates itself (FxHash-style multiply-rotate; SipHash was 2% of a
/// small-message benchmark). Not for keys a peer chooses and inserts: it
/// offers no protection against hash flooding. A server-chosen id is only
/// ever looked up in a map keyed by ids this process allocated.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n.cast_unsigned());
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// `BuildHasher` for [`IdHasher`]: `HashMap<RequestId, V, IdHash>`.
pub type IdHash = std::hash::BuildHasherDefault<IdHasher>;

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

    /// This message as compact JSON bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(128);
        self.write_to(&mut v);
        v
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
        Some(RequestId::String(v)) => {
            let _ = serde_json::to_writer(&mut *out, &**v);
        }
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
    let _ = serde_json::to_writer(&mut *out, method);
}

/// Which envelope rule a message broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeViolation {
    /// `jsonrpc` missing or not `"2.0"`.
    Version,
    /// A message with `method` and `id: null`.
    NullRequestId,
    /// A response with both `result` and `error`, or neither and no `method`.
    Shape,
    /// A response with a `result` but no `id`.
    MissingId,
    /// The top level is a JSON array (a batch); MCP does not use batches.
    Batch,
}

impl fmt::Display for EnvelopeViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnvelopeViolation::Version => "\"jsonrpc\" must be \"2.0\"",
            EnvelopeViolation::NullRequestId => "a request id must not be null",
            EnvelopeViolation::Shape => {
                "not a request, notification, result or error (check method/result/error members)"
            }
            EnvelopeViolation::MissingId => "a result response has no id",
            EnvelopeViolation::Batch => "JSON-RPC batches are not supported by MCP",
        })
    }
}

/// A message that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON, or JSON of the wrong shape (e.g. `error.code` not an integer).
    #[error("invalid JSON-RPC message: {message}")]
    Json {
        /// serde_json's description, with line and column.
        message: String,
        /// Whether the input ended early (truncated) rather than being malformed.
        eof: bool,
    },
    /// Valid JSON that breaks a JSON-RPC envelope rule.
    #[error("invalid JSON-RPC envelope: {0}")]
    Envelope(EnvelopeViolation),
}

impl DecodeError {
    fn from_json(e: &serde_json::Error) -> Self {
        DecodeError::Json {
            eof: e.is_eof(),
            message: e.to_string(),
        }
    }
}

/// `id` as it appeared: absent, `null`, or a value.
#[derive(Default)]
enum IdField {
    #[default]
    Absent,
    Null,
    Id(RequestId),
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<RequestId>::deserialize(d)? {
            Some(id) => IdField::Id(id),
            None => IdField::Null,
        })
    }
}

/// `"jsonrpc"`: true when it is exactly `"2.0"`. Borrowing visitor, no allocation.
struct VersionField(bool);

impl<'de> Deserialize<'de> for VersionField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = VersionField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"2.0\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionField, E> {
                Ok(VersionField(v == "2.0"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<VersionField, E> {
                Ok(VersionField(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<VersionField, E> {
                Ok(VersionField(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<VersionField, E> {
                Ok(VersionField(false))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<VersionField, E> {
                Ok(VersionField(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<VersionField, E> {
                Ok(VersionField(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// Method names MCP uses, so decoding the common ones does not allocate.
const KNOWN_METHODS: &[&str] = &[
    "notifications/progress",
    "notifications/message",
    "notifications/cancelled",
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/prompts/list_changed",
    "notifications/subscriptions/acknowledged",
    "notifications/elicitation/complete",
    "notifications/initialized",
    "notifications/roots/list_changed",
    "ping",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "initialize",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
];

/// Interns known method names as `&'static str`.
pub(crate) fn intern_method(m: &str) -> Cow<'static, str> {
    match KNOWN_METHODS.iter().find(|k| **k == m) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(m.to_owned()),
    }
}

struct MethodField(Cow<'static, str>);

impl<'de> Deserialize<'de> for MethodField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = MethodField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a method name string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MethodField, E> {
                Ok(MethodField(intern_method(v)))
            }
        }
        d.deserialize_str(V)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

/// Every envelope member, before the shape is classified. `R` is how a raw
/// value is held: borrowed from the text being decoded (the fast path, then
/// turned into a span of that text) or owned (any other deserializer).
struct RawEnvelope<R> {
    version_ok: bool,
    id: IdField,
    method: Option<Cow<'static, str>>,
    params: Option<R>,
    result: Option<R>,
    error: Option<ErrorObject>,
}

impl<R> Default for RawEnvelope<R> {
    fn default() -> Self {
        RawEnvelope {
            version_ok: false,
            id: IdField::Absent,
            method: None,
            params: None,
            result: None,
            error: None,
        }
    }
}

/// A raw value as the envelope sees it.
trait RawSlot {
    fn text(&self) -> &str;
}

impl RawSlot for &RawValue {
    fn text(&self) -> &str {
        self.get()
    }
}

impl RawSlot for Box<RawValue> {
    fn text(&self) -> &str {
        self.get()
    }
}

impl<'de, R: Deserialize<'de> + RawSlot> Deserialize<'de> for RawEnvelope<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<R>(std::marker::PhantomData<R>);
        impl<'de, R: Deserialize<'de> + RawSlot> Visitor<'de> for V<R> {
            type Value = RawEnvelope<R>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC 2.0 message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEnvelope<R>, A::Error> {
                let mut env = RawEnvelope::default();
                while let Some(key) = map.next_key::<Field>()? {
                    match key {
                        Field::Jsonrpc => env.version_ok = map.next_value::<VersionField>()?.0,
                        Field::Id => env.id = map.next_value()?,
                        Field::Method => env.method = Some(map.next_value::<MethodField>()?.0),
                        Field::Params => {
                            let raw: R = map.next_value()?;
                            // `"params": null` is treated as absent.
                            env.params = (raw.text() != "null").then_some(raw);
                        }
                        Field::Result => env.result = Some(map.next_value()?),
                        Field::Error => env.error = Some(map.next_value()?),
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(env)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<R> RawEnvelope<R> {
    fn map_raw<S>(self, mut f: impl FnMut(R) -> S) -> RawEnvelope<S> {
        RawEnvelope {
            version_ok: self.version_ok,
            id: self.id,
            method: self.method,
            params: self.params.map(&mut f),
            result: self.result.map(&mut f),
            error: self.error,
        }
    }

    /// The message this envelope is, with each raw value turned into a
    /// [`RawJson`] by `keep` (called at most once).
    fn classify(self, keep: impl FnOnce(R) -> RawJson) -> Result<Message, EnvelopeViolation> {
        if !self.version_ok {
            return Err(EnvelopeViolation::Version);
        }
        match (self.method, self.result, self.error) {
            (Some(method), None, None) => match self.id {
                IdField::Id(id) => Ok(Message::Request(Request {
                    id,
                    method,
                    params: self.params.map(keep),
                })),
                IdField::Absent => Ok(Message::Notification(Notification {
                    method,
                    params: self.params.map(keep),
                })),
                IdField::Null => Err(EnvelopeViolation::NullRequestId),
            },
            (None, Some(result), None) => match self.id {
                IdField::Id(id) => Ok(Message::Response(Response {
                    id,
                    result: keep(result),
                })),
                _ => Err(EnvelopeViolation::MissingId),
            },
            (None, None, Some(error)) => Ok(Message::Error(ErrorResponse {
                id: match self.id {
                    IdField::Id(id) => Some(id),
                    _ => None,
                },
                error,
            })),
            _ => Err(EnvelopeViolation::Shape),
        }
    }
}

fn is_batch(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// Decodes `text` in place: the one raw value of the message (a request's
/// or notification's `params`, a response's `result`) becomes a span of
/// `text`, which the message then owns. The hand-written scanner handles
/// every ordinary message; anything else goes through `serde_json`.
fn decode_text(text: String) -> Result<Message, (DecodeError, String)> {
    match scan::envelope(text.as_bytes()).and_then(|spans| fast_envelope(&text, spans)) {
        Some(env) => keep_text(env, text),
        None => decode_text_serde(text),
    }
}

/// The envelope from the scanner's spans; `None` for what the fast path
/// leaves to `serde_json` (non-string `jsonrpc`/`method`, escapes in them,
/// non-integer ids, an `error` that is not an error object).
fn fast_envelope(text: &str, spans: scan::Spans) -> Option<RawEnvelope<Range<usize>>> {
    let plain = |r: &Range<usize>| {
        scan::plain_string(text.as_bytes().get(r.clone())?)?;
        text.get(r.start + 1..r.end - 1)
    };
    let version_ok = match &spans.jsonrpc {
        Some(r) => plain(r)? == "2.0",
        None => false,
    };
    let id = match &spans.id {
        None => IdField::Absent,
        Some(r) => match text.as_bytes().get(r.start)? {
            b'"' => IdField::Id(RequestId::String(plain(r)?.into())),
            b'n' => IdField::Null,
            b'-' | b'0'..=b'9' => {
                IdField::Id(RequestId::Number(text.get(r.clone())?.parse().ok()?))
            }
            _ => return None,
        },
    };
    let method = match &spans.method {
        Some(r) => Some(intern_method(plain(r)?)),
        None => None,
    };
    let error = match &spans.error {
        Some(r) => Some(serde_json::from_str::<ErrorObject>(text.get(r.clone())?).ok()?),
        None => None,
    };
    Some(RawEnvelope {
        version_ok,
        id,
        method,
        // `"params": null` is treated as absent.
        params: spans.params.filter(|r| text.get(r.clone()) != Some("null")),
        result: spans.result,
        error,
    })
}

/// The message, owning `text`, its raw value a span of it.
fn keep_text(
    env: RawEnvelope<Range<usize>>,
    text: String,
) -> Result<Message, (DecodeError, String)> {
    let mut text = Some(text);
    env.classify(|span| RawJson::trusted_span(text.take().unwrap_or_default(), span))
        .map_err(|v| (DecodeError::Envelope(v), text.unwrap_or_default()))
}

/// The general path: `serde_json` parses `text` in place (borrowing the raw
/// values), and gives the precise error for what is not a message.
fn decode_text_serde(text: String) -> Result<Message, (DecodeError, String)> {
    if is_batch(text.as_bytes()) {
        return Err((DecodeError::Envelope(EnvelopeViolation::Batch), text));
    }
    let env: RawEnvelope<&RawValue> = match serde_json::from_str(&text) {
        Ok(env) => env,
        Err(e) => return Err((DecodeError::from_json(&e), text)),
    };
    // Where the raw values sit in `text` (they are sub-slices of it).
    let base = text.as_ptr() as usize;
    let env = env.map_raw(|raw| {
        let start = (raw.get().as_ptr() as usize).saturating_sub(base);
        start..start + raw.get().len()
    });
    keep_text(env, text)
}

/// The error for bytes that are not UTF-8 (or otherwise not a message).
fn decode_slice_error(bytes: &[u8]) -> DecodeError {
    if is_batch(bytes) {
        return DecodeError::Envelope(EnvelopeViolation::Batch);
    }
    match serde_json::from_slice::<RawEnvelope<Box<RawValue>>>(bytes) {
        Err(e) => DecodeError::from_json(&e),
        Ok(env) => match env.classify(RawJson::from) {
            Err(v) => DecodeError::Envelope(v),
            // Unreachable: serde_json rejects invalid UTF-8 in strings, and
            // outside strings JSON is ASCII.
            Ok(_) => DecodeError::Json {
                message: "invalid UTF-8".into(),
                eof: false,
            },
        },
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawEnvelope::<Box<RawValue>>::deserialize(d)?
            .classify(RawJson::from)
            .map_err(|v| de::Error::custom(format_args!("invalid JSON-RPC envelope: {v}")))
    }
}

#[cfg(test)]
mod tests;

#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
