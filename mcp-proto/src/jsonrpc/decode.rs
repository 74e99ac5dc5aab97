//! Decoding a message: the scanner's fast path, the `serde_json` path for
//! everything else, and the envelope rules both apply.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::raw::RawJson;

use super::{
    DecodeError, EnvelopeViolation, ErrorResponse, Message, Notification, Request, RequestId,
    Response, scan,
};

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

#[derive(Deserialize, Clone, Copy)]
#[serde(field_identifier, rename_all = "lowercase")]
pub(super) enum Field {
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
pub(super) struct RawEnvelope<R> {
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
pub(super) fn decode_text(text: String) -> Result<Message, (DecodeError, String)> {
    match scan::envelope(text.as_bytes()).and_then(|spans| fast_envelope(&text, spans)) {
        Some(env) => keep_text(env, text),
        None => decode_text_serde(text),
    }
}

/// The envelope from the scanner's spans; `None` for what the fast path
/// leaves to `serde_json` (non-string `jsonrpc`/`method`, escapes in them,
/// non-integer ids, an `error` that is not an error object).
pub(super) fn fast_envelope(text: &str, spans: scan::Spans) -> Option<RawEnvelope<Range<usize>>> {
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
        Some(r) => Some(error_object(text.get(r.clone())?)?),
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

/// An error response's `error` member, `None` if it is not an error
/// object. Out of line: [`fast_envelope`] runs for every message, this for
/// few of them.
#[cold]
#[inline(never)]
fn error_object(text: &str) -> Option<ErrorObject> {
    serde_json::from_str(text).ok()
}

/// The message, owning `text`, its raw value a span of it.
pub(super) fn keep_text(
    env: RawEnvelope<Range<usize>>,
    text: String,
) -> Result<Message, (DecodeError, String)> {
    let mut text = Some(text);
    env.classify(|span| RawJson::kept_span(text.take().unwrap_or_default(), span))
        .map_err(|v| (DecodeError::Envelope(v), text.unwrap_or_default()))
}

/// The general path: `serde_json` parses `text` in place (borrowing the raw
/// values), and gives the precise error for what is not a message. Out of
/// line: [`decode_text`] runs for every message, this for few of them.
#[cold]
#[inline(never)]
pub(super) fn decode_text_serde(text: String) -> Result<Message, (DecodeError, String)> {
    if is_batch(text.as_bytes()) {
        return Err((DecodeError::Envelope(EnvelopeViolation::Batch), text));
    }
    // `serde_json` keeps raw values without counting their levels: count
    // them here (the fast path's scanner stops at fewer levels still).
    if super::depth::exceeds(text.as_bytes(), super::MAX_DEPTH) {
        let limit = super::MAX_DEPTH;
        return Err((DecodeError::TooDeep { limit }, text));
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
pub(super) fn decode_slice_error(bytes: &[u8]) -> DecodeError {
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
