//! JSON text helpers: splicing `_meta` into params, detecting
//! `input_required` results, merging input responses.

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::RequestId;
use mcp_proto::schema::{InputRequest, InputResponses, JsonObject, META_PROGRESS_TOKEN};
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
    // Built once: `str::contains` builds a Two-Way searcher per call, about
    // 3 instructions per byte of an ordinary result; this is a fraction.
    static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"input_required\""));
    NEEDLE.find(text.as_bytes())?;
    let w: InputRequiredWire = serde_json::from_str(text).ok()?;
    (w.result_type.as_deref() == Some("input_required")).then_some(w)
}

/// Returns `params` with `members` (JSON object members, no braces) and an
/// optional progress token added to its `_meta`. `params` is spliced as text
/// when it has no `_meta` of its own (the common case, no re-parse); otherwise
/// it is parsed and merged.
pub(super) fn splice_meta(
    params: Option<&RawJson>,
    members: &str,
    token: Option<&RequestId>,
) -> RawJson {
    let mut meta = String::with_capacity(members.len() + 32);
    meta.push_str(members);
    if let Some(t) = token {
        if !meta.is_empty() {
            meta.push(',');
        }
        meta.push('"');
        meta.push_str(META_PROGRESS_TOKEN);
        meta.push_str("\":");
        meta.push_str(&serde_json::to_string(t).unwrap_or_else(|_| "0".into()));
    }
    let text = params.map(RawJson::as_str).unwrap_or("{}").trim();
    let spliced = if text.starts_with('{') && !text.contains("\"_meta\"") {
        let rest = text[1..].trim_start();
        let mut s = String::with_capacity(text.len() + meta.len() + 12);
        s.push_str("{\"_meta\":{");
        s.push_str(&meta);
        s.push('}');
        if !rest.starts_with('}') {
            s.push(',');
        }
        s.push_str(rest);
        RawJson::from_string(s).ok()
    } else {
        None
    };
    spliced.unwrap_or_else(|| merge_meta_slow(text, &meta))
}

fn merge_meta_slow(text: &str, meta_members: &str) -> RawJson {
    let mut obj: JsonObject = serde_json::from_str(text).unwrap_or_default();
    let add: JsonObject = serde_json::from_str(&format!("{{{meta_members}}}")).unwrap_or_default();
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(m) = meta {
        for (k, v) in add {
            m.entry(k).or_insert(v);
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
