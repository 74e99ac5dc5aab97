//! 2026-07-28 request metadata headers: `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*` from `x-mcp-header` annotations, and the Base64 sentinel.

use std::borrow::Cow;
use std::collections::HashMap;

use http::{HeaderMap, HeaderName, HeaderValue};
use mcp_proto::RawJson;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One `x-mcp-header` annotation: the property path in the arguments and
/// the header name part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    pub(crate) path: Vec<String>,
    pub(crate) header: HeaderName,
}

/// Largest integer the spec allows in a mirrored header (JavaScript safe range).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Encodes `value` for a header: as-is when it is plain visible ASCII with no
/// leading or trailing whitespace and does not look like the sentinel,
/// otherwise `=?base64?…?=` of its UTF-8 bytes.
pub(crate) fn encode_header_value(value: &str) -> HeaderValue {
    // Visible ASCII and space only: a control character anywhere (a tab
    // too, which HTTP would carry but a proxy may fold) needs the sentinel.
    let safe_bytes = value.bytes().all(|b| (0x20..=0x7E).contains(&b));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel_like = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = safe_bytes && !padded && !sentinel_like;
    // Both forms are visible ASCII, so this cannot fail; fall back to an
    // empty value rather than panic.
    let value = if plain {
        HeaderValue::from_str(value)
    } else {
        HeaderValue::from_str(&format!("=?base64?{}?=", base64(value.as_bytes())))
    };
    value.unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Standard Base64 (RFC 4648 §4, with padding).
pub(crate) fn base64(input: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(input)
}

/// Whether `s` is an RFC 9110 token (`1*tchar`).
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Reads every `x-mcp-header` annotation of one tool's `inputSchema`, or says
/// why the tool is invalid.
pub(crate) fn tool_param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut out = Vec::new();
    walk(input_schema, true, &mut Vec::new(), &mut out)?;
    let mut seen: HashMap<String, ()> = HashMap::new();
    for h in &out {
        // HeaderName is already lower-case: case-insensitive uniqueness.
        if seen.insert(h.header.as_str().to_owned(), ()).is_some() {
            return Err(format!(
                "x-mcp-header {:?} is used twice (names are case-insensitive)",
                h.header.as_str()
            ));
        }
    }
    Ok(out)
}

/// Keywords whose values are instances, not schemas: not searched.
const INSTANCE_KEYWORDS: &[&str] = &["default", "const", "enum", "examples"];

fn walk(
    schema: &Value,
    reachable: bool,
    path: &mut Vec<String>,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match schema {
        Value::Object(map) => {
            if let Some(h) = map.get("x-mcp-header") {
                if !reachable || path.is_empty() {
                    return Err(
                        "x-mcp-header is only allowed on properties reachable through `properties` alone"
                            .into(),
                    );
                }
                out.push(check_annotation(h, map, path)?);
            }
            for (k, v) in map {
                if k == "x-mcp-header" || INSTANCE_KEYWORDS.contains(&k.as_str()) {
                    continue;
                }
                if k == "properties"
                    && reachable
                    && let Value::Object(props) = v
                {
                    for (name, sub) in props {
                        path.push(name.clone());
                        let r = walk(sub, true, path, out);
                        path.pop();
                        r?;
                    }
                    continue;
                }
                walk(v, false, path, out)?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for v in items {
                walk(v, false, path, out)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_annotation(
    h: &Value,
    prop: &Map<String, Value>,
    path: &[String],
) -> Result<ParamHeader, String> {
    let name = h
        .as_str()
        .ok_or_else(|| format!("x-mcp-header on {path:?} is not a string"))?;
    if !is_token(name) {
        return Err(format!(
            "x-mcp-header {name:?} is not an HTTP token (empty, or has spaces/control/separator characters)"
        ));
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        other => {
            return Err(format!(
                "x-mcp-header {name:?} is on a property of type {other:?}; only string, integer and boolean are allowed"
            ));
        }
    }
    let header = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes())
        .map_err(|_| format!("x-mcp-header {name:?} does not make a valid header name"))?;
    Ok(ParamHeader {
        path: path.to_vec(),
        header,
    })
}

/// The header value for one annotated argument, or `None` to omit it.
fn param_value(arguments: &Value, path: &[String]) -> Option<HeaderValue> {
    let mut v = arguments;
    for key in path {
        v = v.get(key)?;
    }
    match v {
        Value::String(s) => Some(encode_header_value(s)),
        Value::Bool(b) => Some(HeaderValue::from_static(if *b { "true" } else { "false" })),
        Value::Number(n) => {
            let i = n.as_i64()?;
            (i.abs() <= MAX_SAFE_INTEGER).then(|| HeaderValue::from(i))
        }
        _ => None,
    }
}

/// The members of a request's params the headers come from, borrowed from
/// its JSON text, when [`RawJson::members`] leaves them to a typed decode
/// (params nested deeper than it follows, or a repeated member, which this
/// refuses too). Everything else (`_meta`, a large payload) is skipped
/// without being copied or built into a `Value`: decoding the whole params
/// into a `Value` costs ~15,000 instructions per 64-byte `tools/call` and a
/// copy of every megabyte sent.
#[derive(serde::Deserialize)]
struct HeaderFields<'a> {
    #[serde(borrow, default)]
    name: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a serde_json::value::RawValue>,
}

/// `params.taskId` of a `tasks/*` request, when it is a string.
fn task_id(params: &RawJson) -> Option<Cow<'_, str>> {
    #[derive(serde::Deserialize)]
    struct TaskIdField<'a> {
        #[serde(borrow, rename = "taskId")]
        task_id: Option<&'a serde_json::value::RawValue>,
    }
    let [raw] = match params.members(["taskId"]) {
        Some(found) => found,
        None => [serde_json::from_str::<TaskIdField<'_>>(params.get())
            .ok()?
            .task_id
            .map(RawValue::get)],
    };
    raw.and_then(json_string)
}

/// A JSON string's value, borrowed when it has no escapes.
fn json_string(raw: &str) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(raw) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
    }
}

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// `Mcp-Method`'s value: a constant for the methods of the spec (no
/// allocation per request), encoded for any other.
fn method_value(method: &str) -> HeaderValue {
    macro_rules! known {
        ($($m:literal),* $(,)?) => {
            match method {
                $($m => HeaderValue::from_static($m),)*
                _ => encode_header_value(method),
            }
        };
    }
    known!(
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "prompts/get",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
    )
}

/// Adds `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` for one modern message.
pub(crate) fn add_modern_headers(
    headers: &mut HeaderMap,
    method: &str,
    params: Option<&RawJson>,
    tool_headers: &HashMap<String, Vec<ParamHeader>>,
) {
    headers.insert(MCP_METHOD, method_value(method));
    let by_uri = match method {
        "tools/call" | "prompts/get" => false,
        "resources/read" => true,
        // The tasks extension (SEP-2663): `Mcp-Name` is the task id, so
        // that intermediaries route every request for a task to the
        // instance holding it.
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            if let Some(id) = params.and_then(task_id) {
                headers.insert(MCP_NAME, encode_header_value(&id));
            }
            return;
        }
        _ => return,
    };
    let Some(params) = params else {
        return;
    };
    // One pass that skips `_meta` and the arguments (~500 instructions for
    // a 64-byte `tools/call`, against ~5,000 for the typed decode).
    let [name, uri, arguments] = match params.members(["name", "uri", "arguments"]) {
        Some(found) => found,
        None => match serde_json::from_str::<HeaderFields<'_>>(params.get()) {
            Ok(f) => [f.name, f.uri, f.arguments].map(|m| m.map(RawValue::get)),
            Err(_) => return,
        },
    };
    let raw_name = if by_uri { uri } else { name };
    // A name that is not a string gets no header (as before: `as_str`).
    // Borrowed from the params' text unless it has escapes.
    let Some(name) = raw_name.and_then(json_string) else {
        return;
    };
    headers.insert(MCP_NAME, encode_header_value(&name));
    if method == "tools/call"
        && !tool_headers.is_empty()
        && let (Some(annotations), Some(args)) = (tool_headers.get(&*name), arguments)
        && let Ok(args) = serde_json::from_str::<Value>(args)
    {
        for a in annotations {
            if let Some(v) = param_value(&args, &a.path) {
                headers.insert(a.header.clone(), v);
            }
        }
    }
}

/// Validates a `tools/list` result: learns each valid tool's annotations
/// (into `learned`) and returns the result with invalid tools removed, or
/// `None` when nothing had to change.
pub(crate) fn filter_tools_list(
    result: &str,
    learned: &mut HashMap<String, Vec<ParamHeader>>,
) -> Option<String> {
    let mut value: Value = serde_json::from_str(result).ok()?;
    let tools = value.get_mut("tools")?.as_array_mut()?;
    let before = tools.len();
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("<unnamed>");
        let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
        match tool_param_headers(schema) {
            Ok(headers) => {
                if headers.is_empty() {
                    learned.remove(name);
                } else {
                    learned.insert(name.to_owned(), headers);
                }
                true
            }
            Err(reason) => {
                tracing::warn!(tool = name, %reason, "tool left out of tools/list: invalid x-mcp-header annotation");
                learned.remove(name);
                false
            }
        }
    });
    if tools.len() == before {
        return None;
    }
    serde_json::to_string(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_encoding_examples() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn base64_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    /// SEP-2243's value-encoding table, and each rule on its own: a control
    /// character anywhere (a tab inside the value too) needs the sentinel.
    #[test]
    fn values_that_need_the_base64_sentinel() {
        let enc = |v: &str| encode_header_value(v).to_str().unwrap().to_owned();
        assert_eq!(enc("us-west1"), "us-west1");
        assert_eq!(enc("us west 1"), "us west 1");
        assert_eq!(enc(""), "");
        assert_eq!(enc("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(enc(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(enc("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            enc("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(enc("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(enc("a\tb"), "=?base64?YQli?=");
        assert_eq!(enc("line1\r\nline2"), "=?base64?bGluZTENCmxpbmUy?=");
        assert_eq!(enc("del\u{7f}"), "=?base64?ZGVsfw==?=");
    }

    #[test]
    fn annotations_found_on_nested_properties() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}},
            "q":{"type":"string"}}});
        let h = tool_param_headers(&schema).unwrap();
        assert_eq!(h.len(), 2);
        let mut headers = HeaderMap::new();
        let mut tools = HashMap::new();
        tools.insert("t".to_owned(), h);
        add_modern_headers(
            &mut headers,
            "tools/call",
            Some(
                &RawJson::from_value(
                    &json!({"name":"t","arguments":{"region":"eu 1 ","opts":{"dry":true},"q":"x"}}),
                )
                .unwrap(),
            ),
            &tools,
        );
        assert_eq!(headers["mcp-method"], "tools/call");
        assert_eq!(headers["mcp-name"], "t");
        assert_eq!(headers["mcp-param-region"], "=?base64?ZXUgMSA=?=");
        assert_eq!(headers["mcp-param-dry"], "true");
    }

    /// The tasks extension's requests carry their task id as `Mcp-Name`
    /// (SEP-2663's Streamable HTTP binding); other methods none.
    #[test]
    fn tasks_requests_name_their_task() {
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let mut headers = HeaderMap::new();
            let params = RawJson::from_value(
                &json!({"_meta": {"taskId": "no"}, "taskId": "786512e2", "inputResponses": {}}),
            )
            .unwrap();
            add_modern_headers(&mut headers, method, Some(&params), &HashMap::new());
            assert_eq!(headers["mcp-method"], method);
            assert_eq!(headers["mcp-name"], "786512e2", "{method}");
        }
        let mut headers = HeaderMap::new();
        let params = RawJson::from_value(&json!({"taskId": 7})).unwrap();
        add_modern_headers(&mut headers, "tasks/get", Some(&params), &HashMap::new());
        assert!(headers.get("mcp-name").is_none());
        let mut headers = HeaderMap::new();
        let params = RawJson::from_value(&json!({"taskId": "x"})).unwrap();
        add_modern_headers(&mut headers, "tasks/list", Some(&params), &HashMap::new());
        assert!(headers.get("mcp-name").is_none());
    }

    /// `Mcp-Name` comes from the params however they are written: with
    /// `_meta` first, an escaped name, or arguments nested deeper than the
    /// one-pass scan follows (the typed decode reads those); a repeated
    /// `name` gets none.
    #[test]
    fn the_name_header_is_read_from_any_params() {
        let name_of = |params: &str| {
            let mut headers = HeaderMap::new();
            let params = RawJson::from_string(params.to_owned()).unwrap();
            add_modern_headers(&mut headers, "tools/call", Some(&params), &HashMap::new());
            headers
                .get("mcp-name")
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(
            name_of(r#"{"_meta":{"name":"x"},"name":"echo"}"#).as_deref(),
            Some("echo")
        );
        assert_eq!(name_of(r#"{"name":"\u0065cho"}"#).as_deref(), Some("echo"));
        let deep = format!(
            r#"{{"name":"echo","arguments":{{"a":{}1{}}}}}"#,
            "[".repeat(110),
            "]".repeat(110)
        );
        assert_eq!(name_of(&deep).as_deref(), Some("echo"));
        assert_eq!(name_of(r#"{"name":"echo","name":"other"}"#), None);
        assert_eq!(name_of(r#"{"name":7}"#), None);
    }

    #[test]
    fn invalid_annotations_rejected() {
        for (schema, why) in [
            (
                json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
                "number",
            ),
            (
                json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
                "empty",
            ),
            (
                json!({"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
                "space",
            ),
            (
                json!({"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
                "duplicate",
            ),
            (
                json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
                "items",
            ),
            (
                json!({"anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
                "anyOf",
            ),
            (json!({"type":"object","x-mcp-header":"Root"}), "root"),
        ] {
            assert!(tool_param_headers(&schema).is_err(), "{why}");
        }
    }

    #[test]
    fn tools_list_filter_drops_only_invalid_tools() {
        let result = json!({"tools":[
            {"name":"good","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}}},
            {"name":"plain","inputSchema":{"type":"object"}}]})
        .to_string();
        let mut learned = HashMap::new();
        let out = filter_tools_list(&result, &mut learned).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        let names: Vec<_> = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["good", "plain"]);
        assert!(learned.contains_key("good") && !learned.contains_key("bad"));
        // Nothing invalid: the result passes through untouched.
        let ok = json!({"tools":[{"name":"plain","inputSchema":{}}]}).to_string();
        assert_eq!(filter_tools_list(&ok, &mut learned), None);
    }

    #[test]
    fn integers_and_missing_values() {
        let args = json!({"n": 42, "big": 9007199254740993_i64, "f": 1.5, "z": null});
        assert_eq!(param_value(&args, &["n".into()]).unwrap(), "42");
        assert!(param_value(&args, &["big".into()]).is_none());
        assert!(param_value(&args, &["f".into()]).is_none());
        assert!(param_value(&args, &["z".into()]).is_none());
        assert!(param_value(&args, &["absent".into()]).is_none());
    }

    /// The `x-mcp-header` annotations of a server's tools are read in
    /// linear time (as every decode: `mcp-cli/tests/scaling.rs`); `cargo
    /// xtask scaling` runs this.
    #[test]
    #[ignore = "timing: run by `cargo xtask scaling`"]
    fn scaling_of_header_annotations() {
        use test_support::scaling::{Shape, check, repeated};
        check(&[
            Shape {
                name: "x-mcp-header: annotated properties",
                build: |n| {
                    let props = repeated(
                        "{",
                        n,
                        ",",
                        |i| format!(r#""p{i}":{{"type":"string","x-mcp-header":"h{i}"}}"#),
                        "}",
                    );
                    format!(
                        r#"{{"tools":[{{"name":"t","inputSchema":{{"type":"object","properties":{}}}}}]}}"#,
                        String::from_utf8(props).unwrap()
                    )
                    .into_bytes()
                },
                run: |b| {
                    let mut learned = HashMap::new();
                    assert!(
                        filter_tools_list(std::str::from_utf8(b).unwrap(), &mut learned).is_none()
                    );
                    assert!(!learned.is_empty());
                },
            },
            Shape {
                name: "x-mcp-header: annotated tools",
                build: |n| {
                    repeated(
                        r#"{"tools":["#,
                        n,
                        ",",
                        |i| {
                            format!(
                                r#"{{"name":"t{i}","inputSchema":{{"type":"object","properties":{{"p":{{"type":"string","x-mcp-header":"h"}}}}}}}}"#
                            )
                        },
                        "]}",
                    )
                },
                run: |b| {
                    let mut learned = HashMap::new();
                    assert!(
                        filter_tools_list(std::str::from_utf8(b).unwrap(), &mut learned).is_none()
                    );
                    assert!(!learned.is_empty());
                },
            },
        ]);
    }
}
