//! JSON with comments (VS Code's JSONC) turned into plain JSON of the same
//! length, so `serde_json`'s line and column point into the user's file.
//!
//! `//` line comments and `/* */` block comments become spaces (newlines
//! inside a block comment are kept); a comma followed only by whitespace or
//! comments before `]` or `}` becomes a space. Nothing inside strings is
//! touched. An unterminated block comment is left as is, so the JSON parser
//! reports it at its position.

/// Returns `text` with comments and trailing commas blanked out, byte for
/// byte the same length, newlines where they were.
pub(crate) fn strip(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let bytes = text.as_bytes();
    let mut i = 0;
    // The last comma outside strings and comments, not yet followed by a value.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(len) = text[i + 2..].find("*/") else {
                    return String::from_utf8_lossy(&out).into_owned();
                };
                for b in &mut out[i..i + 2 + len + 2] {
                    if *b != b'\n' && *b != b'\r' {
                        *b = b' ';
                    }
                }
                i += 2 + len + 2;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b']' | b'}' => {
                if let Some(c) = pending_comma.take() {
                    out[c] = b' ';
                }
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced, each by an ASCII space: still UTF-8.
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn comments_and_trailing_commas_become_spaces() {
        let src =
            "{\n  // a comment\n  \"a\": [1, 2,], /* block\n over lines */ \"b\": {\"c\": 1,},\n}";
        let out = strip(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.matches('\n').count(), src.matches('\n').count());
        let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(v, serde_json::json!({"a": [1, 2], "b": {"c": 1}}));
    }

    #[test]
    fn strings_are_left_alone() {
        let src = r#"{"url": "http://x//y", "s": "a,]", "q": "\"/*"}"#;
        assert_eq!(strip(src), src);
    }

    #[test]
    fn a_comma_before_a_comment_then_a_brace_is_trailing() {
        let out = strip("[1, // last\n]");
        let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(v, serde_json::json!([1]));
    }

    #[test]
    fn a_missing_value_between_commas_is_still_an_error() {
        assert!(serde_json::from_str::<serde_json::Value>(&strip("[1,,]")).is_err());
    }

    proptest::proptest! {
        /// Any text: no panic, same length, newlines where they were, and
        /// valid JSON stays the same JSON.
        #[test]
        fn any_text_keeps_its_shape(text in r#"[ -~\n\t\u{e9}\u{1f4a1}/*,{}\[\]"\\]{0,80}"#) {
            let out = strip(&text);
            proptest::prop_assert_eq!(out.len(), text.len());
            for (a, b) in text.bytes().zip(out.bytes()) {
                proptest::prop_assert!(a == b || b == b' ', "{a} became {b}");
                proptest::prop_assert_eq!(a == b'\n', b == b'\n');
            }
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                proptest::prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&out).ok(), Some(v));
            }
        }
    }

    #[test]
    fn positions_survive() {
        // The error is on line 3: the comment on line 1 must not shift it.
        let src = "{ /* x */\n \"a\": 1,\n \"b\": nope }";
        let err = serde_json::from_str::<serde_json::Value>(&strip(src)).expect_err("bad");
        assert_eq!(err.line(), 3);
    }
}
