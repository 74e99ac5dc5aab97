//! Output for people (without `--json`).
//!
//! Every string a server sent passes through [`mcp_cli::terminal`] on its way in
//! here: one-line fields (names, URIs, versions, roles) with
//! [`terminal::line`](fn@mcp_cli::terminal::line), so a newline in a name cannot forge a line of
//! output; texts (descriptions, instructions, tool output) with
//! [`terminal::text`](mcp_cli::terminal::text). Each function's result is safe to print as is.

use std::fmt::Write as _;

use mcp_client::ServerInfo;
use mcp_proto::schema::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;
use serde_json::value::RawValue;

use mcp_cli::raw_json::Object;
use mcp_cli::terminal::{line, text};

/// `info`.
///
/// `versions`: the `supportedVersions` the server sent, if it did.
pub(crate) fn info(s: &ServerInfo, versions: Option<&[String]>) -> String {
    let mut out = String::new();
    let imp = &s.implementation;
    let _ = write!(out, "server: {} {}", line(&imp.name), line(&imp.version));
    if let Some(t) = &imp.title {
        let _ = write!(out, " ({})", line(t));
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "protocol: {} ({} era)",
        s.protocol_version,
        s.protocol_version.era()
    );
    if let Some(v) = versions.filter(|v| !v.is_empty()) {
        let _ = writeln!(out, "server supports: {}", line(&v.join(", ")));
    }
    let caps = serde_json::to_value(&s.capabilities)
        .ok()
        .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "capabilities: {}",
        if caps.is_empty() {
            "none".to_owned()
        } else {
            line(&caps.join(", "))
        }
    );
    if let Some(i) = &s.instructions {
        let _ = writeln!(out, "instructions: {}", text(i.trim_end()));
    }
    out
}

/// A parameter list from a JSON Schema's `properties` and `required`:
/// `(a: number, b: number, steps?: integer)`, each type as [`type_name`]
/// writes it.
fn signature(schema: Option<Object>) -> String {
    let Some(schema) = schema else {
        return "()".into();
    };
    let required: Vec<String> = schema
        .get("required")
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default();
    let props = schema.object("properties").unwrap_or_default();
    let params: Vec<String> = props
        .0
        .iter()
        .map(|(name, p)| {
            let ty = serde_json::from_str::<Value>(p.get())
                .ok()
                .and_then(|p| type_name(&p, 0))
                .map(|t| format!(": {t}"))
                .unwrap_or_default();
            let opt = if required.contains(name) { "" } else { "?" };
            format!("{name}{opt}{ty}")
        })
        .collect();
    format!("({})", params.join(", "))
}

/// How deep [`type_name`] follows nested schemas (array items, unions).
const MAX_TYPE_DEPTH: u8 = 4;

/// Most `enum` values a type shows before `…`.
const MAX_ENUM_VALUES: usize = 6;

/// A JSON Schema's type as a user reads it: `string`, `string | null`
/// (a `type` list, `anyOf` or `oneOf`), `string[]` (an array's `items`),
/// `"a" | "b"` (`enum`, `const`), `Name` (a `$ref`); `None` when the schema
/// says nothing about the type.
fn type_name(schema: &Value, depth: u8) -> Option<String> {
    let obj = schema.as_object()?;
    if depth > MAX_TYPE_DEPTH {
        return Some("…".into());
    }
    if let Some(c) = obj.get("const") {
        return Some(c.to_string());
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        let mut shown: Vec<String> = values
            .iter()
            .take(MAX_ENUM_VALUES)
            .map(Value::to_string)
            .collect();
        if values.len() > MAX_ENUM_VALUES {
            shown.push("…".into());
        }
        return Some(shown.join(" | "));
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        return Some(r.rsplit('/').next().unwrap_or(r).to_owned());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = obj.get(key) {
            let mut names: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for alt in alternatives {
                let name = type_name(alt, depth + 1).unwrap_or_else(|| "any".into());
                if seen.insert(name.clone()) {
                    names.push(name);
                }
            }
            return (!names.is_empty()).then(|| names.join(" | "));
        }
    }
    if let Some(Value::Array(all)) = obj.get("allOf")
        && let [only] = all.as_slice()
    {
        return type_name(only, depth + 1);
    }
    let one = |t: &str| -> String {
        if t != "array" {
            return t.to_owned();
        }
        match obj.get("items").and_then(|i| type_name(i, depth + 1)) {
            Some(item) if item.contains(' ') => format!("({item})[]"),
            Some(item) => format!("{item}[]"),
            None => "array".into(),
        }
    };
    match obj.get("type")? {
        Value::String(t) => Some(one(t)),
        Value::Array(types) => {
            let names: Vec<String> = types.iter().filter_map(Value::as_str).map(one).collect();
            (!names.is_empty()).then(|| names.join(" | "))
        }
        _ => None,
    }
}

/// Most lines of a description a listing shows without `-v`.
const DESCRIPTION_LINES: usize = 3;
/// Most characters of a description a listing shows without `-v`.
const DESCRIPTION_CHARS: usize = 240;

/// The description as a listing shows it: in full with `verbose`, else its
/// first paragraph up to [`DESCRIPTION_LINES`] lines and
/// [`DESCRIPTION_CHARS`] characters, `…` where it was cut. The flag says
/// whether it was cut.
fn shortened(description: &str, verbose: bool) -> (String, bool) {
    let text = description.trim();
    if verbose {
        return (text.to_owned(), false);
    }
    let mut out = String::new();
    let mut cut = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if i == DESCRIPTION_LINES || (i > 0 && line.trim().is_empty()) {
            cut = true;
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
    if out.chars().count() > DESCRIPTION_CHARS {
        let end = out
            .char_indices()
            .nth(DESCRIPTION_CHARS)
            .map_or(out.len(), |(i, _)| i);
        // Cut at the last space before the limit when there is one.
        let end = out[..end]
            .rfind(' ')
            .filter(|&i| i > end / 2)
            .unwrap_or(end);
        out.truncate(end);
        cut = true;
    }
    if cut {
        out = out.trim_end().to_owned();
        out.push_str(" …");
    }
    (out, cut)
}

/// `tools`, each name after `prefix` (`<server>/` over several servers), and
/// after the signature what the tool says of MCP Apps ([`ui_mark`]). A tool
/// whose definition hides text from a person (in its name, description,
/// schemas or annotations) gets a warning line for each member that does.
pub(crate) fn tools(items: &[Box<RawValue>], verbose: bool, prefix: &str) -> String {
    listing(items, "(no tools)", verbose, |t| {
        let name = t.str("name").unwrap_or_else(|| "<unnamed>".into());
        format!(
            "{prefix}{name}{}{}",
            signature(t.object("inputSchema")),
            ui_mark(t)
        )
    })
}

/// The warnings for a listed item that hides text: its name, title and
/// description, and for a tool every member a model reads.
fn hidden_warnings(raw: &RawValue, item: &Object) -> Vec<String> {
    if let Ok(tool) = serde_json::from_str::<mcp_proto::schema::Tool>(raw.get()) {
        return mcp_config::tool_hidden_text(&tool)
            .iter()
            .map(ToString::to_string)
            .collect();
    }
    ["name", "title", "description"]
        .into_iter()
        .filter_map(|member| {
            let count = mcp_config::hidden_chars(&item.str(member)?).count();
            (count > 0).then(|| {
                format!(
                    "{member} hides {count} character{} from view (shown as <U+XXXX>)",
                    if count == 1 { "" } else { "s" }
                )
            })
        })
        .collect()
}

/// A tool's MCP Apps `_meta.ui`, read as the library reads it
/// ([`Tool::ui`](mcp_proto::schema::Tool::ui), both spellings).
pub(crate) fn tool_ui(t: &Object) -> Option<mcp_proto::schema::ToolUi> {
    let meta = t.get("_meta")?;
    let tool: mcp_proto::schema::Tool =
        serde_json::from_str(&format!("{{\"name\":\"\",\"_meta\":{}}}", meta.get())).ok()?;
    tool.ui()
}

/// `  [UI ui://…]` for a tool with an MCP Apps UI, `  [app only, UI ui://…]`
/// for one no model is offered; empty for any other tool.
fn ui_mark(t: &Object) -> String {
    let Some(ui) = tool_ui(t) else {
        return String::new();
    };
    let mut parts = Vec::new();
    if !ui.is_model_visible() {
        parts.push("app only".to_owned());
    }
    if let Some(uri) = &ui.resource_uri {
        parts.push(format!("UI {uri}"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("  [{}]", parts.join(", "))
}

/// `resources`.
pub(crate) fn resources(items: &[Box<RawValue>], verbose: bool) -> String {
    listing(items, "(no resources)", verbose, |r| uri_head(r, "uri"))
}

/// `templates`.
pub(crate) fn templates(items: &[Box<RawValue>], verbose: bool) -> String {
    listing(items, "(no resource templates)", verbose, |r| {
        uri_head(r, "uriTemplate")
    })
}

/// `prompts`.
pub(crate) fn prompts(items: &[Box<RawValue>], verbose: bool) -> String {
    listing(items, "(no prompts)", verbose, |p| {
        let args: Vec<String> = p
            .array("arguments")
            .unwrap_or_default()
            .iter()
            .filter_map(|a| Object::parse(a.get()).ok())
            .map(|a| {
                let required = a.get("required").is_some_and(|r| r.get().trim() == "true");
                format!(
                    "{}{}",
                    a.str("name").unwrap_or_default(),
                    if required { "" } else { "?" }
                )
            })
            .collect();
        format!("{}({})", p.str("name").unwrap_or_default(), args.join(", "))
    })
}

/// One line per item (`head`, then its description indented, shortened
/// unless `verbose`), or `empty` for none; items that are not objects are
/// skipped.
fn listing(
    items: &[Box<RawValue>],
    empty: &str,
    verbose: bool,
    head: impl Fn(&Object) -> String,
) -> String {
    let mut out = String::new();
    let mut any_cut = false;
    for raw in items {
        let Ok(item) = Object::parse(raw.get()) else {
            continue;
        };
        let _ = writeln!(out, "{}", line(&head(&item)));
        if let Some(d) = item.str("description") {
            let (shown, cut) = shortened(&text(&d), verbose);
            any_cut |= cut;
            for l in shown.lines() {
                let _ = writeln!(out, "    {l}");
            }
        }
        for w in hidden_warnings(raw, &item) {
            let _ = writeln!(out, "    warning: {w}");
        }
    }
    if items.is_empty() {
        out.push_str(empty);
        out.push('\n');
    }
    if any_cut {
        out.push_str("(descriptions shortened; -v or --json shows them in full)\n");
    }
    out
}

/// `<uri>  <name> (<mimeType>)` for a resource or template.
fn uri_head(r: &Object, uri_key: &str) -> String {
    let mut head = format!(
        "{}  {}",
        r.str(uri_key).unwrap_or_default(),
        r.str("name").unwrap_or_default()
    );
    if let Some(m) = r.str("mimeType") {
        let _ = write!(head, " ({m})");
    }
    head
}

use mcp_tools::base64_decoded_len as base64_len;

/// Sizes as the tool bridge writes them.
fn plural_bytes(n: usize) -> String {
    format!("{n} bytes")
}

fn resource_contents(out: &mut Vec<String>, r: &ResourceContents) {
    let mime = r
        .mime_type
        .as_deref()
        .map(|m| format!(", {}", line(m)))
        .unwrap_or_default();
    let uri = line(&r.uri);
    match (&r.text, &r.blob) {
        (Some(t), _) => {
            out.push(format!("[resource: {uri}{mime}]"));
            out.push(text(t.trim_end_matches('\n')).into_owned());
        }
        (None, Some(blob)) => out.push(format!(
            "[resource: {uri}{mime}, {}]",
            plural_bytes(base64_len(blob))
        )),
        (None, None) => out.push(format!("[resource: {uri}{mime}, no contents]")),
    }
}

/// One content block folded to text lines.
fn block(out: &mut Vec<String>, b: &ContentBlock) {
    match b {
        ContentBlock::Text(t) => out.push(text(&t.text).into_owned()),
        ContentBlock::Image(i) => out.push(format!(
            "[image: {}, {}]",
            line(&i.mime_type),
            plural_bytes(base64_len(&i.data))
        )),
        ContentBlock::Audio(a) => out.push(format!(
            "[audio: {}, {}]",
            line(&a.mime_type),
            plural_bytes(base64_len(&a.data))
        )),
        ContentBlock::ResourceLink(l) => out.push(format!(
            "[resource link: {} ({})]",
            line(&l.uri),
            line(&l.name)
        )),
        ContentBlock::Resource(e) => resource_contents(out, &e.resource),
        ContentBlock::ToolUse(u) => {
            out.push(format!("[tool use: {} ({})]", line(&u.name), line(&u.id)))
        }
        ContentBlock::ToolResult(r) => {
            out.push(format!("[tool result for {}]", line(&r.tool_use_id)))
        }
        ContentBlock::Unknown(v) => {
            let kind = v.decode::<String>("type").and_then(Result::ok);
            let kind = kind.as_deref().unwrap_or("?");
            out.push(format!("[content of unknown type {:?}]", line(kind)));
        }
        _ => out.push("[content of a kind this client cannot show]".into()),
    }
}

/// `call`: the result folded to text exactly as the tool bridge folds it
/// for a model ([`mcp_tools::fold_result`]): text blocks joined by
/// newlines, other blocks one descriptive line each, `structuredContent` as
/// JSON when there is no text. Binary data written as text (base64 in
/// `structuredContent` or in a text block) is summarised
/// ([`summarise_binary`]).
pub(crate) fn call(result: &CallToolResult) -> String {
    let mut out = summarise_binary(&text(&mcp_tools::fold_result(result)));
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `read`: text contents as they are, blobs as one descriptive line.
pub(crate) fn read(contents: &[ResourceContents]) -> String {
    let mut lines = Vec::new();
    for c in contents {
        match (&c.text, &c.blob) {
            (Some(t), _) if contents.len() == 1 => {
                lines.push(text(t.trim_end_matches('\n')).into_owned())
            }
            _ => resource_contents(&mut lines, c),
        }
    }
    let mut out = summarise_binary(&lines.join("\n"));
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Shortest run of base64 (or hex) characters [`summarise_binary`] takes
/// for binary data: 512 characters, 384 bytes. Words, hashes, ids and
/// most tokens are far shorter or broken up by other characters.
const MIN_BINARY_RUN: usize = 512;

/// Text with every run of at least [`MIN_BINARY_RUN`] base64 characters
/// (`A-Z a-z 0-9 + / - _ =`) replaced by `[base64 data, N bytes]` (or
/// `[hex data, N bytes]` when every character is a hex digit): what a
/// terminal should show instead of an image copied into JSON.
pub(crate) fn summarise_binary(text: &str) -> String {
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=');
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len().min(64 * 1024));
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_b64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_b64(bytes[i]) {
            i += 1;
        }
        if i - start < MIN_BINARY_RUN {
            continue;
        }
        // Runs are ASCII, so `start` and `i` are char boundaries.
        let run = &text[start..i];
        out.push_str(&text[copied..start]);
        if run.bytes().all(|b| b.is_ascii_hexdigit()) {
            let _ = write!(out, "[hex data, {}]", plural_bytes(run.len() / 2));
        } else {
            let _ = write!(out, "[base64 data, {}]", plural_bytes(base64_len(run)));
        }
        copied = i;
    }
    out.push_str(&text[copied..]);
    out
}

/// `prompt`: the description, then each message as `[role]` and its content.
pub(crate) fn prompt(raw: &Object) -> String {
    #[derive(serde::Deserialize)]
    struct Msg {
        role: String,
        content: ContentBlock,
    }
    let mut out = String::new();
    if let Some(d) = raw.str("description").map(|d| summarise_binary(&text(&d))) {
        let _ = writeln!(out, "{}", d.trim_end());
    }
    for m in raw.array("messages").unwrap_or_default() {
        match serde_json::from_str::<Msg>(m.get()) {
            Ok(m) => {
                let mut lines = Vec::new();
                block(&mut lines, &m.content);
                let shown = summarise_binary(&lines.join("\n"));
                let _ = writeln!(out, "[{}] {shown}", line(&m.role));
            }
            Err(_) => {
                let _ = writeln!(out, "[message this client cannot show]");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ends_with_one_newline() {
        let r: CallToolResult =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"hello"}]}"#).unwrap();
        assert_eq!(call(&r), "hello\n");
        let r: CallToolResult =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"a\n"}]}"#).unwrap();
        assert_eq!(call(&r), "a\n");
        let r: CallToolResult = serde_json::from_str(r#"{"content":[]}"#).unwrap();
        assert_eq!(call(&r), "");
    }

    #[test]
    fn prompt_messages() {
        let raw = r#"{"description":"d","messages":[
            {"role":"user","content":{"type":"text","text":"hi"}},
            {"role":"assistant","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}
        ]}"#;
        assert_eq!(
            prompt(&Object::parse(raw).unwrap()),
            "d\n[user] hi\n[assistant] [image: image/png, 8 bytes]\n"
        );
    }

    #[test]
    fn types_read_as_a_user_would() {
        let t = |s: &str| type_name(&serde_json::from_str(s).unwrap(), 0);
        assert_eq!(
            t(r#"{"type":["string","null"]}"#).as_deref(),
            Some("string | null")
        );
        assert_eq!(
            t(r#"{"anyOf":[{"type":"integer"},{"type":"null"}],"default":null}"#).as_deref(),
            Some("integer | null")
        );
        assert_eq!(
            t(r#"{"type":"array","items":{"type":"string"}}"#).as_deref(),
            Some("string[]")
        );
        assert_eq!(
            t(r#"{"type":"array","items":{"type":["number","string"]}}"#).as_deref(),
            Some("(number | string)[]")
        );
        assert_eq!(t(r#"{"type":"array"}"#).as_deref(), Some("array"));
        assert_eq!(t(r#"{"enum":["a","b"]}"#).as_deref(), Some(r#""a" | "b""#));
        assert_eq!(t(r##"{"$ref":"#/$defs/Name"}"##).as_deref(), Some("Name"));
        assert_eq!(
            t(r#"{"allOf":[{"type":"boolean"}]}"#).as_deref(),
            Some("boolean")
        );
        assert_eq!(
            t(r#"{"anyOf":[{"type":"string"},{}]}"#).as_deref(),
            Some("string | any")
        );
        assert_eq!(t(r#"{"description":"x"}"#), None);
        // Deep nesting stops.
        let deep = r#"{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}}}}"#;
        assert_eq!(t(deep).as_deref(), Some("…[][][][][]"));
    }

    #[test]
    fn descriptions_shorten_to_the_first_lines_of_the_first_paragraph() {
        assert_eq!(shortened("one line", false), ("one line".into(), false));
        assert_eq!(shortened("a\nb\n\nc", false), ("a\nb …".into(), true));
        assert_eq!(shortened("a\nb\nc\nd", false), ("a\nb\nc …".into(), true));
        assert_eq!(shortened("a\nb\nc\nd", true), ("a\nb\nc\nd".into(), false));
        let long = "word ".repeat(100);
        let (short, cut) = shortened(&long, false);
        assert!(
            cut && short.chars().count() <= DESCRIPTION_CHARS + 2,
            "{short}"
        );
        assert!(short.ends_with("word …"));
    }

    #[test]
    fn binary_runs_are_summarised() {
        let b64 = "QUJD".repeat(200); // 800 chars, 600 bytes
        let text = format!(r#"{{"mime":"image/png","data":"{b64}","n":1}}"#);
        assert_eq!(
            summarise_binary(&text),
            r#"{"mime":"image/png","data":"[base64 data, 600 bytes]","n":1}"#
        );
        let hex = "ab".repeat(300);
        assert_eq!(summarise_binary(&hex), "[hex data, 300 bytes]");
        let short = "QUJD".repeat(10);
        assert_eq!(summarise_binary(&short), short);
        assert_eq!(summarise_binary("é plain text ü"), "é plain text ü");
    }

    #[test]
    fn signature_keeps_property_order() {
        let schema = Object::parse(
            r#"{"type":"object","properties":{"b":{"type":"number"},"a":{}},"required":["b"]}"#,
        )
        .ok();
        assert_eq!(signature(schema), "(b: number, a?)");
    }

    /// The listing's type names over a server's schema are linear
    /// (`tests/scaling.rs`); `cargo xtask scaling` runs this.
    #[test]
    #[ignore = "timing: run by `cargo xtask scaling`"]
    fn scaling_of_the_listing() {
        use test_support::scaling::{Shape, check, repeated};
        check(&[Shape {
            name: "listing: anyOf type names",
            build: |n| {
                repeated(
                    r#"{"anyOf":["#,
                    n,
                    ",",
                    |i| format!(r##"{{"$ref":"#/d/T{i}"}}"##),
                    "]}",
                )
            },
            run: |b| {
                let v: Value = serde_json::from_slice(b).unwrap();
                assert!(type_name(&v, 0).is_some());
            },
        }]);
    }
}
