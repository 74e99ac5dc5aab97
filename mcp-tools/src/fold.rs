//! Folding a `tools/call` result into the one string a model reads.

use std::fmt::Write as _;

use mcp_proto::schema::{CallToolResult, ContentBlock};

/// Folds a tool result into text for a model.
///
/// - Text blocks are kept verbatim; blocks are joined by `\n` in order.
/// - Every other block becomes one descriptive line:
///   - image / audio: `[image: image/png, 68 bytes]` (decoded size),
///   - resource link: `[resource link: file:///a.txt (a.txt)]`,
///   - embedded resource: `[resource: file:///a.txt]`, followed by its text
///     on the next lines when it has text; a binary one shows its MIME type
///     and size instead,
///   - anything else: `[<type> content]`.
/// - `structuredContent` is appended as compact JSON when no block is text
///   (servers that send both put the same data in a text block).
///
/// `isError` is not looked at: the text of a failed call is the server's
/// explanation, folded the same way.
///
/// ```
/// use mcp_proto::schema::CallToolResult;
/// use mcp_tools::fold_result;
/// use serde_json::json;
///
/// let result: CallToolResult = serde_json::from_value(json!({
///     "content": [
///         {"type": "text", "text": "two files:"},
///         {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
///         {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
///     ],
/// }))?;
/// assert_eq!(
///     fold_result(&result),
///     "two files:\n[resource link: file:///a.txt (a.txt)]\n[image: image/png, 6 bytes]"
/// );
///
/// let structured: CallToolResult =
///     serde_json::from_value(json!({"structuredContent": {"temp": 21.5}}))?;
/// assert_eq!(fold_result(&structured), r#"{"temp":21.5}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn fold_result(result: &CallToolResult) -> String {
    let mut out = String::new();
    let mut any_text = false;
    for block in &result.content {
        if !out.is_empty() {
            out.push('\n');
        }
        match block {
            ContentBlock::Text(t) => {
                any_text = true;
                out.push_str(&t.text);
            }
            ContentBlock::Image(i) => {
                let _ = write!(
                    out,
                    "[image: {}, {} bytes]",
                    i.mime_type,
                    base64_decoded_len(&i.data)
                );
            }
            ContentBlock::Audio(a) => {
                let _ = write!(
                    out,
                    "[audio: {}, {} bytes]",
                    a.mime_type,
                    base64_decoded_len(&a.data)
                );
            }
            ContentBlock::ResourceLink(r) => {
                let _ = write!(out, "[resource link: {} ({})]", r.uri, r.name);
            }
            ContentBlock::Resource(e) => {
                let r = &e.resource;
                match (&r.text, &r.blob) {
                    (Some(text), _) => {
                        any_text = true;
                        let _ = write!(out, "[resource: {}]\n{}", r.uri, text);
                    }
                    (None, Some(blob)) => {
                        let mime = r.mime_type.as_deref().unwrap_or("binary");
                        let _ = write!(
                            out,
                            "[resource: {}, {}, {} bytes]",
                            r.uri,
                            mime,
                            base64_decoded_len(blob)
                        );
                    }
                    (None, None) => {
                        let _ = write!(out, "[resource: {}]", r.uri);
                    }
                }
            }
            ContentBlock::ToolUse(u) => {
                let _ = write!(out, "[tool_use content: {}]", u.name);
            }
            ContentBlock::ToolResult(_) => out.push_str("[tool_result content]"),
            ContentBlock::Unknown(v) => {
                let kind = v.decode::<String>("type").and_then(Result::ok);
                let kind = kind.as_deref().unwrap_or("unknown");
                let _ = write!(out, "[{kind} content]");
            }
            _ => out.push_str("[unknown content]"),
        }
    }
    if !any_text {
        if let Some(s) = &result.structured_content {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&s.compact());
        }
    }
    out
}

/// The decoded size of base64 `data` (padding and whitespace ignored; an
/// invalid encoding gives an estimate, never a panic). Counted, not decoded:
/// the `base64` crate gives only an upper bound without decoding
/// (`decoded_len_estimate`), and decoding a multi-MiB image to learn its size
/// would allocate it twice.
///
/// ```
/// assert_eq!(mcp_tools::base64_decoded_len("QUJDRA=="), 4);
/// ```
pub fn base64_decoded_len(data: &str) -> usize {
    let significant = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    significant / 4 * 3 + (significant % 4 * 3) / 4
}
