//! JSON text helpers: composing a request's `_meta`, detecting
//! `input_required` results, merging input responses.

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::RequestId;
use mcp_proto::schema::{
    InputRequest, InputResponses, JsonObject, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROGRESS_TOKEN, META_PROTOCOL_VERSION,
};
use serde::Deserialize;
use serde_json::Value;

/// `{}` as raw JSON (encoding an empty map cannot fail).
pub(crate) fn empty_object() -> RawJson {
    RawJson::empty_object()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputRequiredWire {
    result_type: Option<String>,
    #[serde(default)]
    pub(super) input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    #[serde(default)]
    pub(super) request_state: Option<String>,
}

/// An `input_required` result, detected without decoding ordinary results:
/// a cheap substring check first, then a decode that skips other members.
pub(super) fn input_required(text: &str) -> Option<InputRequiredWire> {
    // Built once: `str::contains` builds a Two-Way searcher per call.
    static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"input_required\""));
    NEEDLE.find(text.as_bytes())?;
    let w: InputRequiredWire = serde_json::from_str(text).ok()?;
    (w.result_type.as_deref() == Some("input_required")).then_some(w)
}

/// What goes into one request's `_meta`, by who decides it. A member the
/// protocol decides is never replaced by the caller's of the same name.
pub(super) struct MetaParts<'a> {
    /// The members the negotiated revision puts on every request (2026-07-28:
    /// protocol version, client info and capabilities, log level), encoded as
    /// JSON object members without the braces; empty when there are none.
    pub(super) protocol: &'a str,
    /// The call's progress token, when it asked for progress.
    pub(super) progress_token: Option<&'a RequestId>,
    /// The caller's own members (`RequestBuilder::meta`). The params' own
    /// `_meta` members, if any, win over these.
    pub(super) caller: Option<&'a JsonObject>,
}

/// The keys of the protocol's members (see [`MetaParts::protocol`]).
const PROTOCOL_KEYS: [&str; 4] = [
    META_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
];

impl MetaParts<'_> {
    fn is_empty(&self) -> bool {
        self.protocol.is_empty() && self.progress_token.is_none() && self.caller.is_none()
    }

    /// Whether the protocol decides `key` (a caller's member of that name is dropped).
    fn is_protocol_key(&self, key: &str) -> bool {
        (self.progress_token.is_some() && key == META_PROGRESS_TOKEN)
            || (!self.protocol.is_empty() && PROTOCOL_KEYS.contains(&key))
    }
}

/// The params as they go on the wire: `params` with the `_meta` that
/// `parts` describes. This is the one place a request's `_meta` is written.
/// `None` when there is nothing to add (the params go out as they are).
///
/// Params with no `_meta` of their own (nearly all) are spliced as text:
/// `{"_meta":{…},` then the params after their `{`, with no re-parse. Params
/// that mention `_meta` anywhere are parsed and merged member by member.
pub(super) fn compose_params(params: Option<&RawJson>, parts: &MetaParts<'_>) -> Option<RawJson> {
    if parts.is_empty() {
        return None;
    }
    static META_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"_meta\""));
    let text = params.map(RawJson::as_str).unwrap_or("{}").trim();
    let rest = match text.strip_prefix('{') {
        Some(rest) if META_KEY.find(text.as_bytes()).is_none() => rest.trim_start(),
        _ => return Some(merge_meta(text, parts)),
    };
    let mut out = String::with_capacity(text.len() + parts.protocol.len() + 64);
    out.push_str("{\"_meta\":{");
    out.push_str(parts.protocol);
    let mut first = parts.protocol.is_empty();
    let mut member = |out: &mut String, key: &str, value: &str| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        push_json_string(out, key);
        out.push(':');
        out.push_str(value);
    };
    if let Some(token) = parts.progress_token {
        let token = serde_json::to_string(token).unwrap_or_else(|_| "0".into());
        member(&mut out, META_PROGRESS_TOKEN, &token);
    }
    for (key, value) in parts.caller.into_iter().flatten() {
        if !parts.is_protocol_key(key) {
            member(&mut out, key, &value.to_string());
        }
    }
    out.push('}');
    if !rest.starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    RawJson::from_string(out).ok()
}

fn push_json_string(out: &mut String, s: &str) {
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

/// [`compose_params`] for params that carry `_meta` (or are not an object).
fn merge_meta(text: &str, parts: &MetaParts<'_>) -> RawJson {
    let mut obj: JsonObject = serde_json::from_str(text).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "request params are not a JSON object; sending only `_meta`");
        JsonObject::new()
    });
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if !meta.is_object() {
        tracing::warn!("the request's `_meta` is not an object; replaced");
        *meta = Value::Object(JsonObject::new());
    }
    if let Value::Object(m) = meta {
        // The params' own members stay; the caller's others are added.
        for (k, v) in parts.caller.into_iter().flatten() {
            if !parts.is_protocol_key(k) {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        let protocol: JsonObject =
            serde_json::from_str(&format!("{{{}}}", parts.protocol)).unwrap_or_default();
        m.extend(protocol);
        if let Some(t) = parts.progress_token {
            if let Ok(v) = serde_json::to_value(t) {
                m.insert(META_PROGRESS_TOKEN.into(), v);
            }
        }
    }
    RawJson::from_value(&obj).unwrap_or_else(|_| empty_object())
}

/// The original params plus `inputResponses` and `requestState` (replacing earlier ones).
pub(super) fn merge_input(
    params: Option<&RawJson>,
    responses: Option<InputResponses>,
    state: Option<String>,
) -> RawJson {
    let mut obj: JsonObject = params.and_then(|p| p.decode().ok()).unwrap_or_default();
    obj.remove("inputResponses");
    obj.remove("requestState");
    if let Some(r) = responses {
        if let Ok(v) = serde_json::to_value(r) {
            obj.insert("inputResponses".into(), v);
        }
    }
    if let Some(s) = state {
        obj.insert("requestState".into(), Value::String(s));
    }
    RawJson::from_value(&obj).unwrap_or_else(|_| empty_object())
}
