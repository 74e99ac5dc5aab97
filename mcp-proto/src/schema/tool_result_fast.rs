//! The fast path of [`CallToolResult::from_json`]: a tool result made only
//! of text blocks (what almost every tool returns), read in one validating
//! pass with the envelope's scanner instead of `serde_json`'s visitor
//! machinery.
//!
//! It accepts a subset of what the serde decoder accepts and builds the same
//! value; anything else (another member, another kind of block, a key with
//! escapes, a repeated member, invalid JSON) returns `None` and the caller
//! decodes with `serde_json`, which also gives the precise error. A property
//! test compares both on generated results.

use std::ops::Range;

use crate::RawJson;
use crate::jsonrpc::scan::Scanner;

use super::{CallToolResult, ContentBlock, ResultType, TextContent};

/// `text` as a [`CallToolResult`], if it is one the fast path reads.
pub(crate) fn call_tool_result(text: &str) -> Option<CallToolResult> {
    read(text, None)
}

/// Like [`call_tool_result`], from a value it may take the buffer of: the
/// largest text block without escapes becomes that buffer instead of a copy
/// of it (see [`RawJson::into_substring`]). The value back if the fast path
/// does not read it.
#[inline]
pub(crate) fn call_tool_result_owned(raw: RawJson) -> Result<CallToolResult, RawJson> {
    let mut taken = None;
    let Some(mut r) = read(raw.as_str(), Some(&mut taken)) else {
        return Err(raw);
    };
    if let Some((i, span)) = taken {
        set_text(&mut r.content, i, raw.into_substring(span));
    }
    Ok(r)
}

/// The text block whose string is filled in last, from the buffer itself:
/// its index and its span in the text.
type Taken = Option<(usize, Range<usize>)>;

fn set_text(blocks: &mut [ContentBlock], i: usize, text: String) {
    if let Some(ContentBlock::Text(t)) = blocks.get_mut(i) {
        t.text = text;
    }
}

fn read(text: &str, mut take: Option<&mut Taken>) -> Option<CallToolResult> {
    let mut s = Scanner::new(text.as_bytes());
    let mut content: Option<Vec<ContentBlock>> = None;
    let mut is_error: Option<Option<bool>> = None;
    let mut result_type: Option<Option<ResultType>> = None;
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if s.eat(b'}').is_none() {
        loop {
            s.ws();
            match key(&mut s)? {
                Key::Content if content.is_none() => {
                    content = Some(match s.peek()? {
                        b'n' => {
                            s.literal(b"null")?;
                            Vec::new()
                        }
                        _ => text_blocks(&mut s, text, take.as_deref_mut())?,
                    });
                }
                Key::IsError if is_error.is_none() => {
                    is_error = Some(match s.peek()? {
                        b't' => s.literal(b"true").map(|()| Some(true))?,
                        b'f' => s.literal(b"false").map(|()| Some(false))?,
                        b'n' => s.literal(b"null").map(|()| None)?,
                        _ => return None,
                    });
                }
                Key::ResultType if result_type.is_none() => {
                    result_type = Some(match s.peek()? {
                        b'n' => s.literal(b"null").map(|()| None)?,
                        _ => Some(match &*string(&mut s, text)? {
                            "complete" => ResultType::Complete,
                            "input_required" => ResultType::InputRequired,
                            "task" => ResultType::Task,
                            other => ResultType::Unknown(other.to_owned()),
                        }),
                    });
                }
                _ => return None,
            }
            if !s.another_member()? {
                break;
            }
        }
    }
    s.ws();
    if s.i != text.len() {
        return None;
    }
    Some(CallToolResult {
        result_type: result_type.flatten(),
        content: content.unwrap_or_default(),
        structured_content: None,
        is_error: is_error.flatten(),
        meta: None,
        extra: crate::RawObject::new(),
    })
}

/// The members the fast path reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Content,
    IsError,
    ResultType,
}

/// One of the [`Key`]s, written without escapes, and the `:` after it;
/// `None` for any other key.
fn key(s: &mut Scanner<'_>) -> Option<Key> {
    let key = if s.literal(b"\"content\"").is_some() {
        Key::Content
    } else if s.literal(b"\"isError\"").is_some() {
        Key::IsError
    } else if s.literal(b"\"resultType\"").is_some() {
        Key::ResultType
    } else {
        return None;
    };
    colon(s)?;
    Some(key)
}

/// `:` and the whitespace around it.
fn colon(s: &mut Scanner<'_>) -> Option<()> {
    s.ws();
    s.eat(b':')?;
    s.ws();
    Some(())
}

/// A string value (the scanner at its opening quote), unescaped.
fn string<'t>(s: &mut Scanner<'_>, text: &'t str) -> Option<std::borrow::Cow<'t, str>> {
    match string_span(s, text)? {
        Ok(span) => text.get(span).map(Into::into),
        Err(unescaped) => Some(unescaped.into()),
    }
}

/// A string value (the scanner at its opening quote): the span of its
/// content when it has no escapes, else its content unescaped.
fn string_span(s: &mut Scanner<'_>, text: &str) -> Option<Result<Range<usize>, String>> {
    if s.peek()? != b'"' {
        return None;
    }
    let (span, escaped) = s.string()?;
    if escaped {
        // Rare in keys, common in text (newlines): `serde_json` unescapes
        // this one string; the scanner has checked its escapes already.
        let quoted = text.get(span.start - 1..span.end + 1)?;
        return serde_json::from_str::<String>(quoted).ok().map(Err);
    }
    Some(Ok(span))
}

/// `[{"type":"text","text":…}, …]`: text blocks with `type` first and no
/// other member.
///
/// With `take`, the largest text without escapes is left empty and its
/// span recorded there instead of being copied.
fn text_blocks(
    s: &mut Scanner<'_>,
    text: &str,
    mut take: Option<&mut Taken>,
) -> Option<Vec<ContentBlock>> {
    s.eat(b'[')?;
    s.ws();
    if s.eat(b']').is_some() {
        return Some(Vec::new());
    }
    // One block is the common case: no room for four of a large enum
    // (allocated as it is made, not grown from empty: `reserve_exact` on an
    // empty `Vec` goes through the growth path).
    let mut blocks = Vec::with_capacity(1);
    loop {
        s.ws();
        s.eat(b'{')?;
        s.ws();
        // `"type":"text"` then `"text":`, each key and the tag compared as
        // written: a literal without a backslash is a complete string.
        s.literal(b"\"type\"")?;
        colon(s)?;
        if s.literal(b"\"text\"").is_none() && string(s, text)? != "text" {
            return None;
        }
        s.ws();
        s.eat(b',')?;
        s.ws();
        s.literal(b"\"text\"")?;
        colon(s)?;
        let body = match string_span(s, text)? {
            Err(unescaped) => unescaped,
            Ok(span) => match take.as_deref_mut() {
                Some(best) if best.as_ref().is_none_or(|(_, b)| span.len() > b.len()) => {
                    // The largest so far: filled in at the end. The one it
                    // displaces is copied now.
                    if let Some((i, before)) = best.replace((blocks.len(), span)) {
                        set_text(&mut blocks, i, text.get(before)?.to_owned());
                    }
                    String::new()
                }
                _ => text.get(span)?.to_owned(),
            },
        };
        s.ws();
        s.eat(b'}')?;
        blocks.push(ContentBlock::Text(TextContent::new(body)));
        s.ws();
        match s.next()? {
            b',' => {}
            b']' => return Some(blocks),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// What the serde decoder makes of `text`, and what `from_json` makes of it.
    fn both(
        text: &str,
    ) -> (
        Result<CallToolResult, String>,
        Result<CallToolResult, String>,
    ) {
        let serde = serde_json::from_str::<CallToolResult>(text).map_err(|e| e.to_string());
        let ours = CallToolResult::from_json(text).map_err(|e| e.to_string());
        // `from_raw` on the same text, as the span of a received message
        // (whose buffer its largest text may take) and as a value of its own.
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#);
        if let Ok(crate::Message::Response(r)) = crate::Message::from_string(line) {
            let owned = CallToolResult::from_raw(r.result).map_err(drop);
            assert_eq!(owned, ours.clone().map_err(drop), "from_raw: {text}");
        }
        if let Ok(raw) = RawJson::from_string(text.to_owned()) {
            let owned = CallToolResult::from_raw(raw).map_err(|e| e.to_string());
            assert_eq!(owned, ours, "from_raw: {text}");
        }
        (serde, ours)
    }

    /// The largest text without escapes takes the received buffer; the
    /// others are copied; a buffer much larger than the text is not taken.
    #[test]
    fn the_largest_plain_text_takes_the_buffer() {
        let big = "b".repeat(300);
        let text = format!(
            r#"{{"content":[{{"type":"text","text":"a"}},{{"type":"text","text":"{big}"}},{{"type":"text","text":"c\n"}}]}}"#
        );
        let raw = RawJson::from_string(text.clone()).unwrap();
        let at = raw.as_str().find(&big).unwrap() + raw.as_str().as_ptr() as usize;
        let r = CallToolResult::from_raw(raw).unwrap();
        let texts: Vec<&str> = r.content.iter().filter_map(ContentBlock::as_text).collect();
        assert_eq!(texts, ["a", big.as_str(), "c\n"]);
        assert_eq!(r, CallToolResult::from_json(&text).unwrap());
        let taken = r.content[1].as_text().unwrap();
        // Moved to the front of the buffer the text was in.
        assert_eq!(taken.as_ptr() as usize, at - text.find(&big).unwrap());
        // Ten times the text around it: copied.
        let padded = format!(
            r#"{{"content":[{{"type":"text","text":"x"}}],"isError":false{}}}"#,
            " ".repeat(2000)
        );
        let raw = RawJson::from_string(padded.clone()).unwrap();
        let buffer = raw.as_str().as_ptr() as usize;
        let r = CallToolResult::from_raw(raw).unwrap();
        let t = r.content[0].as_text().unwrap();
        assert_ne!(t.as_ptr() as usize, buffer);
        assert!(t.len() == 1);
    }

    #[test]
    fn text_results_take_the_fast_path() {
        for text in [
            r#"{"content":[{"type":"text","text":"hi"}]}"#,
            r#"{"resultType":"complete","content":[{"type":"text","text":"hi"}]}"#,
            r#" { "content" : [ { "type" : "text" , "text" : "a\nb\"é" } , {"type":"text","text":""} ] , "isError" : true } "#,
            r#"{"content":[],"isError":null,"resultType":"task"}"#,
            r#"{"content":null}"#,
            r#"{}"#,
        ] {
            let fast = call_tool_result(text);
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast, serde_json::from_str(text).ok(), "{text}");
        }
        // Escapes are unescaped as serde_json does.
        let r = call_tool_result(r#"{"content":[{"type":"text","text":"a\n\u00e9\\"}]}"#).unwrap();
        assert_eq!(r.content[0].as_text(), Some("a\né\\"));
    }

    #[test]
    fn everything_else_is_left_to_serde_json() {
        for text in [
            r#"{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}"#,
            r#"{"content":[{"text":"hi","type":"text"}]}"#,
            r#"{"content":[{"type":"text","text":"hi","annotations":{"priority":1}}]}"#,
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#,
            r#"{"con\u0074ent":[]}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"content":[],"_meta":{}}"#,
            r#"{"content":[{"type":"text","text":"a	b"}]}"#,
            r#"{"content":[{"type":"text","text":"hi"}]} x"#,
            r#"{"content":[{"type":"text","text":"hi"},]}"#,
            r#"{"isError":1}"#,
            r#"[]"#,
        ] {
            assert_eq!(call_tool_result(text), None, "{text}");
            let (serde, ours) = both(text);
            assert_eq!(serde, ours, "{text}");
        }
    }

    fn string_literal() -> impl Strategy<Value = String> {
        let text = proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just("é"),
                Just("\""),
                Just("\\"),
                Just("\n"),
                Just("\u{1}"),
                Just(" "),
                Just("}"),
                Just("xxxxxxxxxxxxxxxxxxxx")
            ],
            0..6,
        )
        .prop_map(|parts| parts.concat());
        prop_oneof![
            4 => text.clone().prop_map(|t| serde_json::to_string(&t).unwrap()),
            // Escapes serde_json would not write, and raw (invalid) text.
            1 => Just(r#""\u0074ext""#.to_owned()),
            1 => Just(r#""\x""#.to_owned()),
            1 => text.prop_map(|t| format!("\"{t}\"")),
        ]
    }

    fn block() -> impl Strategy<Value = String> {
        let tag = prop_oneof![
            6 => Just(r#""text""#.to_owned()),
            1 => Just(r#""image""#.to_owned()),
            1 => Just(r#""te\u0078t""#.to_owned()),
            1 => Just("1".to_owned()),
        ];
        (tag, string_literal(), 0..6u8).prop_map(|(tag, s, shape)| match shape {
            0..=2 => format!(r#"{{"type":{tag},"text":{s}}}"#),
            3 => format!(r#"{{"text":{s},"type":{tag}}}"#),
            4 => format!(r#"{{"type":{tag},"text":{s},"annotations":null}}"#),
            _ => format!(r#"{{"type":{tag}}}"#),
        })
    }

    fn member() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => proptest::collection::vec(block(), 0..3)
                .prop_map(|b| format!(r#""content":[{}]"#, b.join(","))),
            1 => Just(r#""content":null"#.to_owned()),
            1 => Just(r#""content":{}"#.to_owned()),
            2 => prop_oneof![Just("true"), Just("false"), Just("null"), Just("1"), Just("\"x\"")]
                .prop_map(|v| format!(r#""isError":{v}"#)),
            2 => prop_oneof![
                Just(r#""complete""#), Just(r#""input_required""#), Just(r#""task""#),
                Just(r#""other""#), Just("null"), Just("3")
            ]
            .prop_map(|v| format!(r#""resultType":{v}"#)),
            1 => Just(r#""structuredContent":{"a":[1,2]}"#.to_owned()),
            1 => Just(r#""_meta":{"k":"v"}"#.to_owned()),
            1 => Just(r#""extra":[true]"#.to_owned()),
        ]
    }

    fn result_text() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec(member(), 0..4),
            proptest::collection::vec(
                prop_oneof![4 => Just(""), 1 => Just(" "), 1 => Just("\n\t")],
                8,
            ),
        )
            .prop_map(|(members, ws)| {
                let w = |i: usize| ws[i % ws.len()];
                let body: Vec<String> = members
                    .iter()
                    .enumerate()
                    .map(|(i, m)| format!("{}{m}{}", w(i), w(i + 3)))
                    .collect();
                format!("{}{{{}}}{}", w(5), body.join(","), w(6))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        /// The fast path builds what the serde decoder builds, and leaves to
        /// it everything it does not read (so errors are serde's).
        #[test]
        fn fast_and_serde_decoders_agree(text in result_text(), cut in 0usize..200, flip in any::<(usize, u8)>()) {
            let (serde, ours) = both(&text);
            prop_assert_eq!(&serde, &ours, "{}", text);
            if let Some(fast) = call_tool_result(&text) {
                prop_assert_eq!(Ok(fast), serde.clone());
            }
            // Truncated and corrupted variants.
            let mut bytes = text.clone().into_bytes();
            bytes.truncate(cut.min(bytes.len()));
            if let Ok(cut) = String::from_utf8(bytes) {
                let (serde, ours) = both(&cut);
                prop_assert_eq!(serde, ours, "{}", cut);
            }
            let mut bytes = text.into_bytes();
            if !bytes.is_empty() {
                let at = flip.0 % bytes.len();
                bytes[at] = b"{}[],:\"\\ 1tn"[usize::from(flip.1) % 12];
                if let Ok(flipped) = String::from_utf8(bytes) {
                    let (serde, ours) = both(&flipped);
                    prop_assert_eq!(serde, ours, "{}", flipped);
                }
            }
        }
    }
}
