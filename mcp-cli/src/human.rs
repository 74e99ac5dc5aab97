//! Output for people (without `--json`).

use std::fmt::Write as _;

use mcp_client::ServerInfo;
use mcp_proto::schema::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::value::RawValue;

use mcp_cli::raw_json::Object;

/// `info`.
pub(crate) fn info(s: &ServerInfo) -> String {
    let mut out = String::new();
    let imp = &s.implementation;
    let _ = write!(out, "server: {} {}", imp.name, imp.version);
    if let Some(t) = &imp.title {
        let _ = write!(out, " ({t})");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "protocol: {} ({} era)",
        s.protocol_version,
        s.protocol_version.era()
    );
    if s.supported_versions.len() > 1 {
        let _ = writeln!(out, "server supports: {}", s.supported_versions.join(", "));
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
            caps.join(", ")
        }
    );
    if let Some(i) = &s.instructions {
        let _ = writeln!(out, "instructions: {}", i.trim_end());
    }
    out
}

/// A parameter list from a JSON Schema's `properties` and `required`:
/// `(a: number, b: number, steps?: integer)`.
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
            let ty = Object::parse(p.get())
                .ok()
                .and_then(|o| o.str("type"))
                .map(|t| format!(": {t}"))
                .unwrap_or_default();
            let opt = if required.contains(name) { "" } else { "?" };
            format!("{name}{opt}{ty}")
        })
        .collect();
    format!("({})", params.join(", "))
}

fn described(out: &mut String, head: &str, description: Option<String>) {
    let _ = writeln!(out, "{head}");
    if let Some(d) = description {
        for line in d.trim().lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
}

/// `tools`.
pub(crate) fn tools(items: &[Box<RawValue>]) -> String {
    listing(items, "(no tools)", |t| {
        let name = t.str("name").unwrap_or_else(|| "<unnamed>".into());
        format!("{name}{}", signature(t.object("inputSchema")))
    })
}

/// `resources`.
pub(crate) fn resources(items: &[Box<RawValue>]) -> String {
    listing(items, "(no resources)", |r| uri_head(r, "uri"))
}

/// `templates`.
pub(crate) fn templates(items: &[Box<RawValue>]) -> String {
    listing(items, "(no resource templates)", |r| {
        uri_head(r, "uriTemplate")
    })
}

/// `prompts`.
pub(crate) fn prompts(items: &[Box<RawValue>]) -> String {
    listing(items, "(no prompts)", |p| {
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

/// One line per item (`head`, then its description), or `empty` for none;
/// items that are not objects are skipped.
fn listing(items: &[Box<RawValue>], empty: &str, head: impl Fn(&Object) -> String) -> String {
    let mut out = String::new();
    for item in items {
        let Ok(item) = Object::parse(item.get()) else {
            continue;
        };
        described(&mut out, &head(&item), item.str("description"));
    }
    if items.is_empty() {
        out.push_str(empty);
        out.push('\n');
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

/// Decoded size of base64 text (padding and whitespace ignored).
fn base64_len(data: &str) -> usize {
    let n = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    n * 3 / 4
}

/// Sizes as the tool bridge writes them.
fn plural_bytes(n: usize) -> String {
    format!("{n} bytes")
}

fn resource_contents(out: &mut Vec<String>, r: &ResourceContents) {
    let mime = r
        .mime_type
        .as_deref()
        .map(|m| format!(", {m}"))
        .unwrap_or_default();
    match (&r.text, &r.blob) {
        (Some(text), _) => {
            out.push(format!("[resource: {}{mime}]", r.uri));
            out.push(text.trim_end_matches('\n').to_owned());
        }
        (None, Some(blob)) => out.push(format!(
            "[resource: {}{mime}, {}]",
            r.uri,
            plural_bytes(base64_len(blob))
        )),
        (None, None) => out.push(format!("[resource: {}{mime}, no contents]", r.uri)),
    }
}

/// One content block folded to text lines.
fn block(out: &mut Vec<String>, b: &ContentBlock) {
    match b {
        ContentBlock::Text(t) => out.push(t.text.clone()),
        ContentBlock::Image(i) => out.push(format!(
            "[image: {}, {}]",
            i.mime_type,
            plural_bytes(base64_len(&i.data))
        )),
        ContentBlock::Audio(a) => out.push(format!(
            "[audio: {}, {}]",
            a.mime_type,
            plural_bytes(base64_len(&a.data))
        )),
        ContentBlock::ResourceLink(l) => {
            out.push(format!("[resource link: {} ({})]", l.uri, l.name))
        }
        ContentBlock::Resource(e) => resource_contents(out, &e.resource),
        ContentBlock::ToolUse(u) => out.push(format!("[tool use: {} ({})]", u.name, u.id)),
        ContentBlock::ToolResult(r) => out.push(format!("[tool result for {}]", r.tool_use_id)),
        ContentBlock::Unknown(v) => {
            let kind = v.get("type").and_then(|t| t.as_str()).unwrap_or("?");
            out.push(format!("[content of unknown type {kind:?}]"));
        }
        _ => out.push("[content of a kind this client cannot show]".into()),
    }
}

/// `call`: the result folded to text exactly as the tool bridge folds it
/// for a model ([`mcp_tools::fold_result`]): text blocks joined by
/// newlines, other blocks one descriptive line each, `structuredContent` as
/// JSON when there is no text.
pub(crate) fn call(result: &CallToolResult) -> String {
    let mut out = mcp_tools::fold_result(result);
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
            (Some(t), _) if contents.len() == 1 => lines.push(t.trim_end_matches('\n').to_owned()),
            _ => resource_contents(&mut lines, c),
        }
    }
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
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
    if let Some(d) = raw.str("description") {
        let _ = writeln!(out, "{}", d.trim_end());
    }
    for m in raw.array("messages").unwrap_or_default() {
        match serde_json::from_str::<Msg>(m.get()) {
            Ok(m) => {
                let mut lines = Vec::new();
                block(&mut lines, &m.content);
                let _ = writeln!(out, "[{}] {}", m.role, lines.join("\n"));
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
    fn signature_keeps_property_order() {
        let schema = Object::parse(
            r#"{"type":"object","properties":{"b":{"type":"number"},"a":{}},"required":["b"]}"#,
        )
        .ok();
        assert_eq!(signature(schema), "(b: number, a?)");
    }
}
