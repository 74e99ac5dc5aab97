//! The words of a tool's parameters, read from its input schema's text:
//! each property's name, title, description and string `enum` values, and
//! those of the properties nested one level below (an object's
//! `properties`, an array's `items`), in the order the schema writes them.
//!
//! The schema is walked as text, once, and nothing else of it is parsed or
//! kept: a value of no interest is skipped by counting brackets (so any
//! depth costs no stack; strings, brackets and runs of spaces are found
//! eight bytes at a time, [`bytes`](super::bytes)), a string is handed over
//! as a slice of the schema (one with escapes is copied, each escape that
//! is no letter or digit becoming a space), and the walk stops when the
//! caller has enough (the index reads a bounded number of terms), at the
//! end of the schema's `properties` (nothing after them is read: a second
//! `properties` key is ignored) or at the first byte that is not JSON (the
//! text read before it is kept: a tool's schema was checked when the tool
//! was read).

use std::borrow::Cow;

use super::bytes::{HIGH, ONES, first_of, zeros};

/// Calls `f` with each piece of parameter text in `schema` (a JSON
/// object's text) until `f` says stop (returns `false`); nothing if it is
/// not one. The walk ends with the schema's (first) `properties`.
pub(crate) fn parameter_text(schema: &str, mut f: impl FnMut(&str) -> bool) {
    let mut s = Scanner {
        text: schema,
        at: 0,
    };
    let _ = s.object(|s, key| {
        if key == "properties" && s.peek() == Some(b'{') {
            // Nothing after it is read: the walk ends here.
            s.properties(&mut f, 1).and(Err(Stop))
        } else {
            s.skip()
        }
    });
}

/// Why a walk ended early: the caller had enough, or the text is not JSON.
struct Stop;

type Walk = Result<(), Stop>;

/// A position in a schema's text.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scanner<'a> {
    /// A `properties` object: each property's name, then its text; `depth`
    /// more levels of properties below it are read.
    fn properties<F: FnMut(&str) -> bool>(&mut self, f: &mut F, depth: u8) -> Walk {
        self.object(|s, name| {
            give(f, &name)?;
            if s.peek() == Some(b'{') {
                s.property(f, depth, true)
            } else {
                s.skip()
            }
        })
    }

    /// One property schema: its title, description and string enum values,
    /// and (when `depth` allows) its own properties and its `items`' (when
    /// `items` allows).
    fn property<F: FnMut(&str) -> bool>(&mut self, f: &mut F, depth: u8, items: bool) -> Walk {
        self.object(|s, key| match (&*key, s.peek()) {
            ("title" | "description", Some(b'"')) => give(f, &s.string()?),
            ("enum", Some(b'[')) => s.array(|s| {
                if s.peek() == Some(b'"') {
                    give(f, &s.string()?)
                } else {
                    s.skip()
                }
            }),
            ("properties", Some(b'{')) if depth > 0 => s.properties(f, depth - 1),
            ("items", Some(b'{')) if depth > 0 && items => s.property(f, depth, false),
            _ => s.skip(),
        })
    }

    /// The next byte that is not white space, if any (not consumed).
    fn peek(&mut self) -> Option<u8> {
        let b = self.text.as_bytes();
        // Compact JSON, and most places in indented JSON, have none.
        if let Some(&c) = b.get(self.at)
            && !matches!(c, b' ' | b'\t' | b'\n' | b'\r')
        {
            return Some(c);
        }
        loop {
            // Indented schemas have runs of spaces: eight at a time.
            self.at += spaces_len(b.get(self.at..).unwrap_or_default());
            match b.get(self.at) {
                Some(b'\t' | b'\n' | b'\r') => self.at += 1,
                c => return c.copied(),
            }
        }
    }

    /// Consumes `c`, after white space.
    fn eat(&mut self, c: u8) -> Walk {
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// An object, calling `each` with each key, the scanner before its
    /// value (which `each` must consume).
    fn object(&mut self, mut each: impl FnMut(&mut Self, Cow<'a, str>) -> Walk) -> Walk {
        self.eat(b'{')?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(Stop);
            }
            let key = self.string()?;
            self.eat(b':')?;
            each(self, key)?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Stop),
            }
        }
    }

    /// An array, calling `each` with the scanner before each element.
    fn array(&mut self, mut each: impl FnMut(&mut Self) -> Walk) -> Walk {
        self.eat(b'[')?;
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            each(self)?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Stop),
            }
        }
    }

    /// A string (the scanner at its opening quote): a slice of the text,
    /// or decoded when it has escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, Stop> {
        let start = self.at;
        let escaped = self.string_end()?;
        let raw = self.text.get(start..self.at).ok_or(Stop)?;
        let inner = &raw[1..raw.len() - 1];
        if escaped {
            Ok(Cow::Owned(unescape(inner)))
        } else {
            Ok(Cow::Borrowed(inner))
        }
    }

    /// Moves past the string at the scanner (at its opening quote, and
    /// then after its closing quote); whether it has escapes.
    fn string_end(&mut self) -> Result<bool, Stop> {
        let b = self.text.as_bytes();
        let mut i = self.at + 1;
        let mut escaped = false;
        loop {
            i += plain_len(b.get(i..).unwrap_or_default());
            match b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    i += 2;
                }
                _ => return Err(Stop),
            }
        }
        self.at = i + 1;
        Ok(escaped)
    }

    /// Moves past one value of any kind.
    fn skip(&mut self) -> Walk {
        let b = self.text.as_bytes();
        match self.peek() {
            Some(b'"') => self.string_end().map(drop),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                loop {
                    self.at += structure_len(b.get(self.at..).unwrap_or_default());
                    match b.get(self.at) {
                        Some(b'"') => {
                            self.string_end()?;
                            continue;
                        }
                        Some(b'{' | b'[') => depth += 1,
                        Some(_) => {
                            // A closing bracket: no other byte stops
                            // `structure_len`.
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Ok(());
                            }
                        }
                        None => return Err(Stop),
                    }
                    self.at += 1;
                }
            }
            Some(_) => {
                let n = b[self.at..]
                    .iter()
                    .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(b.len() - self.at);
                if n == 0 {
                    return Err(Stop);
                }
                self.at += n;
                Ok(())
            }
            None => Err(Stop),
        }
    }
}

/// How many bytes of `b` come before its first `"` or `\\` (all of them
/// if it has neither): eight at a time, the bytes of a string being most
/// of a schema.
fn plain_len(b: &[u8]) -> usize {
    first_of(b, |x| {
        zeros(x ^ (ONES * u64::from(b'"'))) | zeros(x ^ (ONES * u64::from(b'\\')))
    })
}

/// How many bytes of `b` come before its first quote or bracket (`"`,
/// `{`, `}`, `[`, `]`; all of them if it has none): what skipping a
/// value looks at, eight bytes at a time.
fn structure_len(b: &[u8]) -> usize {
    first_of(b, |x| {
        // `[` and `]` are `{` and `}` less 0x20: one test for each pair.
        let y = x | (ONES * 0x20);
        zeros(x ^ (ONES * u64::from(b'"')))
            | zeros(y ^ (ONES * u64::from(b'{')))
            | zeros(y ^ (ONES * u64::from(b'}')))
    })
}

/// How many spaces `b` begins with, eight bytes at a time.
fn spaces_len(b: &[u8]) -> usize {
    first_of(b, |x| {
        // The high bit of each byte that is not a space, exactly (no
        // carry between bytes: each sum stays below 0x100).
        let t = x ^ (ONES * u64::from(b' '));
        ((t & !HIGH).wrapping_add(!HIGH) | t) & HIGH
    })
}

/// A JSON string's text with escapes, as words see it: a letter or digit
/// written `\uXXXX` is itself, any other escape (a quote, a line break, a
/// surrogate half) a space, which parts words as the character would.
fn unescape(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = &rest[at + 1..];
        let code = escape
            .strip_prefix('u')
            .and_then(|e| e.get(..4))
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        let (c, len) = match code {
            Some(code) => {
                let c = char::from_u32(code).filter(|c| c.is_alphanumeric());
                (c.unwrap_or(' '), 5)
            }
            None => (' ', escape.chars().next().map_or(0, char::len_utf8)),
        };
        out.push(c);
        rest = escape.get(len..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Hands `text` to `f`: whether the caller wants more.
fn give(f: &mut impl FnMut(&str) -> bool, text: &str) -> Walk {
    if f(text) { Ok(()) } else { Err(Stop) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(schema: &str) -> Vec<String> {
        let mut v = Vec::new();
        parameter_text(schema, |s| {
            v.push(s.to_owned());
            true
        });
        v
    }

    #[test]
    fn names_descriptions_enums_and_one_nested_level() {
        let schema = r#"{"type":"object","properties":{
            "repo":{"type":"string","description":"Repository \"name\" \u00e9t\u00e9\\"},
            "state":{"enum":["open","closed",3]},
            "filter":{"type":"object","properties":{"label":{"description":"A label","properties":{"deep":{"description":"too deep"}}}}},
            "items":{"type":"array","items":{"properties":{"path":{"title":"File path"}}}},
            "flag":true},"required":["repo"]}"#;
        assert_eq!(
            text(schema),
            [
                "repo",
                "Repository  name  été ",
                "state",
                "open",
                "closed",
                "filter",
                "label",
                "A label",
                "items",
                "path",
                "File path",
                "flag"
            ]
        );
    }

    #[test]
    fn skips_any_depth_and_stops_when_told() {
        let deep = format!(
            r#"{{"$defs":{}1{},"properties":{{"a":{{"default":{}"x"{},"description":"wanted"}},"b":{{}}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000),
            "{\"k\":".repeat(10_000),
            "}".repeat(10_000),
        );
        assert_eq!(text(&deep), ["a", "wanted", "b"]);
        let mut seen = Vec::new();
        parameter_text(r#"{"properties":{"a":{},"b":{},"c":{}}}"#, |s| {
            seen.push(s.to_owned());
            seen.len() < 2
        });
        assert_eq!(seen, ["a", "b"]);
        // The walk ends with the (first) properties: nothing after them,
        // not even broken JSON, is read.
        assert_eq!(
            text(r#"{"properties":{"a":{}},"properties":{"b":{}},"x":[}"#),
            ["a"]
        );
    }

    #[test]
    fn text_before_broken_json_is_kept() {
        assert_eq!(
            text(r#"{"properties":{"a":{"description":"one \u00e9\n"},"b":{"description":"#),
            ["a", "one é ", "b"]
        );
        assert_eq!(
            text(r#"{"properties":{"a":{"enum":["x" "y"]}}}"#),
            ["a", "x"]
        );
    }

    #[test]
    fn plain_runs_end_at_quotes_and_backslashes() {
        for text in [
            "",
            "abc",
            "abcdefgh\"",
            "abcdefghijklmn\\op\"",
            "é\"ü\"",
            "\"\"",
        ] {
            let slow = text.bytes().position(|c| c == b'"' || c == b'\\');
            assert_eq!(
                plain_len(text.as_bytes()),
                slow.unwrap_or(text.len()),
                "{text}"
            );
        }
    }

    #[test]
    fn structure_runs_end_at_quotes_and_brackets() {
        for text in [
            "",
            "abc",
            "abcdefgh{",
            "a: 1, b: [2]",
            "{",
            "       }",
            "ab;;;;;;;;;]]",
            "é\"ü\"",
            "{{{{{{{{{{",
            "[\\ \\ ]",
        ] {
            let slow = text.bytes().position(|c| b"\"{}[]".contains(&c));
            assert_eq!(
                structure_len(text.as_bytes()),
                slow.unwrap_or(text.len()),
                "{text}"
            );
        }
        for c in 0..=255u8 {
            let mut b = *b"abcdefghijklmnopqrstuvwxyz";
            b[9] = c;
            let slow = b.iter().position(|c| b"\"{}[]".contains(c));
            assert_eq!(structure_len(&b), slow.unwrap_or(b.len()), "{c}");
        }
    }

    #[test]
    fn space_runs_end_at_any_other_byte() {
        for at in 0..12 {
            for c in 0..=255u8 {
                let mut b = [b' '; 13];
                b[at] = c;
                let slow = b.iter().take_while(|&&c| c == b' ').count();
                assert_eq!(spaces_len(&b), slow, "{c} at {at}");
                assert_eq!(spaces_len(&b[..at]), at);
            }
        }
    }

    #[test]
    fn anything_else_gives_nothing() {
        assert!(text("not json").is_empty());
        assert!(text(r#"{"type":"object"}"#).is_empty());
        assert!(text(r#"{"properties":[1,2]}"#).is_empty());
    }
}
