//! JSON text helpers: composing a request's `_meta`, detecting
//! `input_required` results, merging input responses.

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::RequestId;
use mcp_proto::raw::ObjectWriter;
use mcp_proto::schema::{
    InputRequest, InputResponses, JsonObject, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROGRESS_TOKEN, META_PROTOCOL_VERSION,
};
use serde::Deserialize;
use serde_json::Value;

use crate::telemetry::TraceMeta;

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

/// What a 2026-07-28 result's top-level `resultType` says about it.
pub(super) enum ResultKind {
    /// An ordinary result (`"complete"`, another value, or none).
    Complete,
    /// `"input_required"`, with its requests decoded.
    InputRequired(InputRequiredWire),
    /// `"task"`: a task handle (the `io.modelcontextprotocol/tasks` extension).
    Task,
}

/// Reads a result's top-level `resultType` without decoding the result.
///
/// Fast path: a result that opens with its `resultType` as a plain string
/// other than `input_required` and `task` (`{"resultType":"complete",...`)
/// is ordinary, known from those bytes alone. Otherwise two substring checks, for
/// `"input_required"` and for `"task"`, and a decode only when one matches
/// (an escaped quote inside a string value cannot match either).
///
/// Invariant: the same answer as decoding the result's `resultType` with
/// `serde_json`, except for a value written with escapes (`"\u0074ask"`),
/// which is an ordinary result. On the fast path a later, repeated
/// `resultType` would make that decode fail (serde refuses duplicate
/// fields), which is also an ordinary result here.
pub(super) fn result_kind(result: &RawJson) -> ResultKind {
    let text = result.get();
    match leading_result_type(text.as_bytes()) {
        // Confirmed below by a decode, which also refuses a repeated key.
        Some(b"input_required" | b"task") | None => {}
        Some(_) => return ResultKind::Complete,
    }
    if let Some(w) = input_required(text) {
        return ResultKind::InputRequired(w);
    }
    if is_task_handle(text) {
        return ResultKind::Task;
    }
    ResultKind::Complete
}

/// The value of `resultType` when it is the object's first member and a
/// string without escapes: `{ "resultType" : "complete" ,` → `complete`.
/// The compact form servers write (`{"resultType":"complete",`) is matched
/// as whole words, with no byte-by-byte loop.
fn leading_result_type(text: &[u8]) -> Option<&[u8]> {
    fn ws(t: &[u8]) -> &[u8] {
        let n = t
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        t.get(n..).unwrap_or_default()
    }
    fn ends_member(rest: &[u8]) -> bool {
        matches!(ws(rest).first(), Some(b',' | b'}'))
    }
    let t = match text.strip_prefix(b"{\"resultType\":\"") {
        Some(t) => t,
        None => {
            let t = ws(text).strip_prefix(b"{")?;
            let t = ws(t).strip_prefix(b"\"resultType\"")?;
            let t = ws(t).strip_prefix(b":")?;
            ws(t).strip_prefix(b"\"")?
        }
    };
    if let Some(rest) = t.strip_prefix(b"complete\"") {
        return ends_member(rest).then_some(b"complete");
    }
    let end = t.iter().position(|&b| b == b'"' || b == b'\\')?;
    let (value, rest) = t.split_at(end);
    ends_member(rest.strip_prefix(b"\"")?).then_some(value)
}

/// An `input_required` result, detected without decoding ordinary results:
/// a cheap substring check first, then a decode that skips other members.
fn input_required(text: &str) -> Option<InputRequiredWire> {
    // Built once: `str::contains` builds a Two-Way searcher per call.
    static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"input_required\""));
    NEEDLE.find(text.as_bytes())?;
    let w: InputRequiredWire = serde_json::from_str(text).ok()?;
    (w.result_type.as_deref() == Some("input_required")).then_some(w)
}

/// Whether a result is a task handle (`resultType: "task"`): a substring
/// check for `"task"` first, then a decode of `resultType` alone.
fn is_task_handle(text: &str) -> bool {
    static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"task\""));
    if NEEDLE.find(text.as_bytes()).is_none() {
        return false;
    }
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "resultType", borrow)]
        result_type: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_str::<Probe<'_>>(text).is_ok_and(|p| p.result_type.as_deref() == Some("task"))
}

/// What goes into one request's `_meta`, by who decides it (see the
/// [session docs](super#meta) for the order).
pub(super) struct MetaParts<'a> {
    /// The members the negotiated revision puts on every request (2026-07-28:
    /// protocol version, client info and capabilities, log level), as one
    /// object; `None` when there are none.
    pub(super) protocol: Option<&'a RawJson>,
    /// The call's progress token, when it asked for progress.
    pub(super) progress_token: Option<&'a RequestId>,
    /// The members given with `RequestBuilder::meta`: below the protocol's
    /// and the params' own.
    pub(super) caller: Option<&'a JsonObject>,
    /// The W3C trace context (`traceparent`, `tracestate`, `baggage`):
    /// the lowest tier, below every other (see [`crate::telemetry`]).
    pub(super) trace: Option<&'a TraceMeta>,
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
        self.protocol.is_none()
            && self.progress_token.is_none()
            && self.caller.is_none()
            && self.trace.is_none()
    }

    /// The trace context's members that no higher tier names.
    fn trace_members(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        self.trace.into_iter().flatten().filter_map(|(k, v)| {
            let taken = self.is_protocol_key(k) || self.caller.is_some_and(|c| c.contains_key(*k));
            (!taken).then_some((*k, v.as_str()))
        })
    }

    /// Whether the protocol decides `key` (a caller's member of that name is dropped).
    fn is_protocol_key(&self, key: &str) -> bool {
        (self.progress_token.is_some() && key == META_PROGRESS_TOKEN)
            || (self.protocol.is_some() && PROTOCOL_KEYS.contains(&key))
    }
}

/// The params as they go on the wire: `params` with the `_meta` that
/// `parts` describes. This is the one place a request's `_meta` is written.
/// `None` when there is nothing to add (the params go out as they are).
///
/// Params with no `_meta` of their own (nearly all) are written once, with
/// `_meta` first and then their own members, with no parse (every piece is
/// valid JSON already: [`ObjectWriter`]). Params that mention `_meta`
/// anywhere are parsed and merged member by member.
pub(super) fn compose_params(params: Option<&RawJson>, parts: &MetaParts<'_>) -> Option<RawJson> {
    if parts.is_empty() {
        return None;
    }
    static META_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"_meta\""));
    let len = params.map_or(0, RawJson::len);
    if params.is_some_and(|p| META_KEY.find(p.as_bytes()).is_some()) {
        return Some(merge_meta(params, parts));
    }
    let protocol_len = parts.protocol.map_or(0, RawJson::len);
    let mut out = ObjectWriter::with_capacity(len + protocol_len + 48);
    out.object("_meta", |meta| {
        if let Some(protocol) = parts.protocol {
            meta.members_of(protocol);
        }
        if let Some(token) = parts.progress_token {
            let _ = meta.value(META_PROGRESS_TOKEN, token);
        }
        for (key, value) in parts.caller.into_iter().flatten() {
            if !parts.is_protocol_key(key) {
                let _ = meta.value(key, value);
            }
        }
        for (key, value) in parts.trace_members() {
            let _ = meta.value(key, value);
        }
    });
    if let Some(p) = params {
        if !out.members_of(p) {
            // Not an object: the spec says params are one; the parsing path
            // says so in the log and sends only `_meta`.
            return Some(merge_meta(params, parts));
        }
    }
    Some(out.finish())
}

/// [`compose_params`] for params that carry `_meta` (or are not an object).
fn merge_meta(params: Option<&RawJson>, parts: &MetaParts<'_>) -> RawJson {
    let text = params.map_or("{}", RawJson::as_str);
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
        // The params' own members stay (the caller wrote them into the
        // params), except the progress token the session routes by.
        if let Some(protocol) = parts.protocol.and_then(|p| p.decode::<JsonObject>().ok()) {
            for (k, v) in protocol {
                m.entry(k).or_insert(v);
            }
        }
        if let Some(t) = parts.progress_token {
            if let Ok(v) = serde_json::to_value(t) {
                m.insert(META_PROGRESS_TOKEN.into(), v);
            }
        }
        for (k, v) in parts.caller.into_iter().flatten() {
            if !parts.is_protocol_key(k) {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        for (k, v) in parts.trace_members() {
            m.entry(k).or_insert_with(|| Value::from(v));
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

#[cfg(test)]
mod tests {
    use super::{ResultKind, result_kind};
    use mcp_proto::RawJson;

    fn kind(text: &str) -> &'static str {
        let raw = RawJson::from_string(text.to_owned()).expect("valid JSON");
        match result_kind(&raw) {
            ResultKind::Complete => "complete",
            ResultKind::InputRequired(_) => "input_required",
            ResultKind::Task => "task",
        }
    }

    /// The fast path (a leading `resultType`) and the scans behind it agree
    /// with a decode of the top-level `resultType`, wherever it stands.
    #[test]
    fn result_kind_reads_the_top_level_result_type_only() {
        let cases = [
            (r#"{"resultType":"complete","content":[]}"#, "complete"),
            (r#" { "resultType" : "complete" }"#, "complete"),
            (
                r#"{"resultType":"completed","x":{"resultType":"task"}}"#,
                "complete",
            ),
            (r#"{"resultType" :"task" ,"task":{}}"#, "task"),
            (r#"{"resultType":"complete\"x","task":{}}"#, "complete"),
            (r#"{"resultType":"task","task":{"taskId":"t"}}"#, "task"),
            (r#"{"task":{"taskId":"t"},"resultType":"task"}"#, "task"),
            (
                r#"{"resultType":"input_required","inputRequests":{}}"#,
                "input_required",
            ),
            (
                r#"{"inputRequests":{},"resultType":"input_required"}"#,
                "input_required",
            ),
            // Nested, or only in a string: not the result's.
            (
                r#"{"resultType":"complete","structuredContent":{"resultType":"task"}}"#,
                "complete",
            ),
            (
                r#"{"content":[{"type":"text","text":"\"task\""}]}"#,
                "complete",
            ),
            (r#"{"structuredContent":{"resultType":"task"}}"#, "complete"),
            // A repeated resultType fails a typed decode: ordinary.
            (
                r#"{"resultType":"task","resultType":"complete"}"#,
                "complete",
            ),
            (
                r#"{"resultType":"complete","resultType":"task"}"#,
                "complete",
            ),
            (r#"{"resultType":7}"#, "complete"),
        ];
        for (text, want) in cases {
            assert_eq!(kind(text), want, "{text}");
        }
    }
}
