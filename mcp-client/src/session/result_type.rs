//! What a 2026-07-28 result's top-level `resultType` says it is (an
//! ordinary result, `input_required`, a task handle), read from the JSON
//! text without decoding ordinary results; and the params of the retry
//! that answers an `input_required` round.

use mcp_proto::RawJson;
use mcp_proto::schema::{InputRequest, InputResponses, JsonObject};
use serde::Deserialize;
use serde_json::Value;

/// An `input_required` result (2026-07-28 MRTR): what the server asks
/// for, and the state it wants back with the answers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputRequired {
    result_type: Option<String>,
    #[serde(default)]
    input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    #[serde(default)]
    request_state: Option<String>,
}

impl InputRequired {
    /// The requests by key (in key order), and the server's `requestState`.
    pub(super) fn into_parts(self) -> (Vec<(String, InputRequest)>, Option<String>) {
        let requests = self
            .input_requests
            .unwrap_or_default()
            .into_iter()
            .collect();
        (requests, self.request_state)
    }
}

/// What a 2026-07-28 result's top-level `resultType` says about it.
pub(super) enum ResultKind {
    /// An ordinary result (`"complete"`, another value, or none).
    Complete,
    /// `"input_required"`, with its requests decoded.
    InputRequired(InputRequired),
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
fn input_required(text: &str) -> Option<InputRequired> {
    // Built once: `str::contains` builds a Two-Way searcher per call.
    static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"input_required\""));
    NEEDLE.find(text.as_bytes())?;
    let w: InputRequired = serde_json::from_str(text).ok()?;
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
    RawJson::from_value(&obj).unwrap_or_else(|_| RawJson::empty_object())
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
