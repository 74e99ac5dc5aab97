//! How deeply a JSON text nests arrays and objects, measured without
//! recursion and without building anything.

/// Whether `text` (JSON, or anything: it is not validated here) opens more
/// than `limit` arrays and objects inside one another.
///
/// One pass, constant memory: a counter, with string contents skipped by
/// `memchr` (brackets inside strings do not count). Used where a value is
/// kept as raw text, which `serde_json` validates with no depth limit.
pub(crate) fn exceeds(text: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        i += 1;
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' => {
                // To the closing quote: past every `\x` pair.
                loop {
                    let Some(rest) = text.get(i..) else {
                        return false;
                    };
                    match memchr::memchr2(b'"', b'\\', rest) {
                        None => return false,
                        Some(k) if rest.get(k) == Some(&b'"') => {
                            i += k + 1;
                            break;
                        }
                        Some(k) => i += k + 2,
                    }
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_brackets_outside_strings() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(!exceeds(deep(5).as_bytes(), 5));
        assert!(exceeds(deep(6).as_bytes(), 5));
        assert!(!exceeds(br#"[{"a":"[[[[[[","b":"\"[[[[[[\\"}]"#, 2));
        assert!(exceeds(br#"[{"a":"\\",   "b":[[]]}]"#, 3));
        // Siblings do not add up.
        assert!(!exceeds(b"[[],[],{},[[]]]", 3));
        // Unterminated strings and garbage end the scan without a panic.
        assert!(!exceeds(br#"["abc\"#, 1));
        assert!(!exceeds(br#"["\"#, 1));
        // 100,000 levels: refused at the limit, in a loop (no recursion).
        assert!(exceeds(deep(100_000).as_bytes(), 128));
    }
}
