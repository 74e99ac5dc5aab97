//! JSON as a peer sent it: key order and number spelling kept.
//!
//! The workspace's `serde_json` is built without `preserve_order`, so a
//! `serde_json::Value` sorts object keys. The CLI therefore never routes a
//! server's objects through `Value` on the way to stdout: it keeps them as
//! [`RawValue`] text, splits objects with [`Object`] (an ordered list of raw
//! members) and re-indents text with [`Reformat`] ([`pretty`],
//! [`write_pretty`]), which only adds or removes whitespace outside strings,
//! streams its output and indents at most [`MAX_INDENT_DEPTH`] levels, so
//! what it writes grows linearly with what the server sent.

use std::fmt;
use std::io::{self, Write};

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON object as an ordered list of raw members.
#[derive(Debug, Default)]
pub struct Object(pub Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Object;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((k, v));
                }
                Ok(Object(members))
            }
        }
        d.deserialize_map(V)
    }
}

impl Object {
    /// Parses `text` as an object.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The raw value of member `key` (the last one if repeated).
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| &**v)
    }

    /// Member `key` as a string, if it is one.
    pub fn str(&self, key: &str) -> Option<String> {
        self.get(key)
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
    }

    /// Member `key` as an object, if it is one.
    pub fn object(&self, key: &str) -> Option<Object> {
        self.get(key).and_then(|v| Object::parse(v.get()).ok())
    }

    /// Member `key` as an array of raw elements, if it is one.
    pub fn array(&self, key: &str) -> Option<Vec<Box<RawValue>>> {
        self.get(key)
            .and_then(|v| serde_json::from_str::<Vec<Box<RawValue>>>(v.get()).ok())
    }
}

/// Joins raw JSON values into one array text.
pub fn array_text<'a>(items: impl IntoIterator<Item = &'a RawValue>) -> String {
    let mut s = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(item.get());
    }
    s.push(']');
    s
}

/// Deepest nesting [`Reformat`] indents. A value nested deeper is written
/// compact (no line breaks) on its parent's line, so indentation adds at
/// most `1 + 2 * MAX_INDENT_DEPTH` bytes per structural character (`{`,
/// `[`, `,`, `}`, `]`) of the input: output size stays linear in the
/// input's, however deep a server nests (an indent per level would grow
/// with depth², 100,000 nested arrays in 200 KB giving 20 GB).
pub const MAX_INDENT_DEPTH: usize = 32;

/// Spaces for the deepest indent.
const SPACES: [u8; 2 * MAX_INDENT_DEPTH] = [b' '; 2 * MAX_INDENT_DEPTH];

/// A streaming re-indenter for valid JSON text: feed it the text in pieces
/// (a document, or an array's `[`, items and `,` separately), and it
/// writes as it goes, holding only a few bytes of state, never the output.
///
/// Only whitespace outside strings changes: key order, number spelling and
/// escapes stay as sent. Indented with two spaces per level up to
/// [`MAX_INDENT_DEPTH`], compact below it.
#[derive(Debug)]
pub struct Reformat {
    indent: bool,
    /// Containers open around the current position.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The close of a container just opened whose first member is not yet
    /// seen (`{}` and `[]` stay on one line).
    pending_close: Option<u8>,
}

impl Reformat {
    /// Indented output ([`pretty`]).
    pub fn pretty() -> Self {
        Self::new(true)
    }

    /// One-line output ([`compact`]).
    pub fn compact() -> Self {
        Self::new(false)
    }

    fn new(indent: bool) -> Self {
        Reformat {
            indent,
            depth: 0,
            in_string: false,
            escaped: false,
            pending_close: None,
        }
    }

    /// A line break and the indent of `depth`, when indenting and `depth`
    /// is within [`MAX_INDENT_DEPTH`].
    fn newline<W: Write + ?Sized>(&self, depth: usize, out: &mut W) -> io::Result<()> {
        if !self.indent || depth > MAX_INDENT_DEPTH {
            return Ok(());
        }
        out.write_all(b"\n")?;
        out.write_all(SPACES.get(..2 * depth).unwrap_or(&SPACES))
    }

    /// Writes the next piece of the text, re-indented.
    pub fn feed<W: Write + ?Sized>(&mut self, text: &str, out: &mut W) -> io::Result<()> {
        let bytes = text.as_bytes();
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if self.in_string {
                // Copy the string's bytes up to and including its closing
                // quote in one write (UTF-8 passes through untouched: every
                // byte this looks at is ASCII).
                let start = i;
                while let Some(&c) = bytes.get(i) {
                    i += 1;
                    if self.escaped {
                        self.escaped = false;
                    } else if c == b'\\' {
                        self.escaped = true;
                    } else if c == b'"' {
                        self.in_string = false;
                        break;
                    }
                }
                out.write_all(bytes.get(start..i).unwrap_or_default())?;
                continue;
            }
            i += 1;
            if b.is_ascii_whitespace() {
                continue;
            }
            if let Some(close) = self.pending_close.take() {
                if b == close {
                    out.write_all(&[b])?;
                    continue;
                }
                self.depth += 1;
                self.newline(self.depth, out)?;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    out.write_all(b"\"")?;
                }
                b'{' => {
                    out.write_all(b"{")?;
                    self.pending_close = Some(b'}');
                }
                b'[' => {
                    out.write_all(b"[")?;
                    self.pending_close = Some(b']');
                }
                b'}' | b']' => {
                    let inner = self.depth;
                    self.depth = self.depth.saturating_sub(1);
                    if inner <= MAX_INDENT_DEPTH {
                        self.newline(self.depth, out)?;
                    }
                    out.write_all(&[b])?;
                }
                b',' => {
                    out.write_all(b",")?;
                    self.newline(self.depth, out)?;
                }
                b':' if self.indent && self.depth <= MAX_INDENT_DEPTH => out.write_all(b": ")?,
                _ => out.write_all(&[b])?,
            }
        }
        Ok(())
    }
}

/// Writes valid JSON text to `out` re-indented ([`Reformat::pretty`]),
/// then a newline.
pub fn write_pretty<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    Reformat::pretty().feed(text, out)?;
    out.write_all(b"\n")
}

/// Writes the raw values as one JSON array to `out`, re-indented, then a
/// newline, without joining them in memory first.
pub fn write_pretty_array<'a, W: Write + ?Sized>(
    out: &mut W,
    items: impl IntoIterator<Item = &'a RawValue>,
) -> io::Result<()> {
    let mut r = Reformat::pretty();
    r.feed("[", out)?;
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            r.feed(",", out)?;
        }
        r.feed(item.get(), out)?;
    }
    r.feed("]", out)?;
    out.write_all(b"\n")
}

/// Re-indents valid JSON text with two spaces ([`Reformat::pretty`]).
/// Only whitespace outside strings changes: key order, number spelling
/// and escapes stay as sent.
pub fn pretty(text: &str) -> String {
    reformat(Reformat::pretty(), text)
}

/// Removes the whitespace outside strings (one line).
pub fn compact(text: &str) -> String {
    reformat(Reformat::compact(), text)
}

fn reformat(mut r: Reformat, text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + text.len() / 4);
    // Writing to a Vec cannot fail.
    let _ = r.feed(text, &mut out);
    // Only whole UTF-8 sequences are copied, so this is the identity.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_keeps_order_numbers_and_strings() {
        let text = r#"{ "z":1.50, "a" : [ ], "m":{"k":"a, \"b\": {c}"},"e":{} ,"l":[1,2]}"#;
        let p = pretty(text);
        assert_eq!(
            p,
            "{\n  \"z\": 1.50,\n  \"a\": [],\n  \"m\": {\n    \"k\": \"a, \\\"b\\\": {c}\"\n  },\n  \"e\": {},\n  \"l\": [\n    1,\n    2\n  ]\n}"
        );
        assert_eq!(
            compact(&p),
            r#"{"z":1.50,"a":[],"m":{"k":"a, \"b\": {c}"},"e":{},"l":[1,2]}"#
        );
    }

    #[test]
    fn pieces_give_the_same_output_as_one_text() {
        let text = r#"{"a":[1,{"b":"x\\\"]"},[]],"c":{ }}"#;
        let whole = pretty(text);
        // Every split point, including inside strings and escapes.
        for cut in 1..text.len() {
            let mut out = Vec::new();
            let mut r = Reformat::pretty();
            r.feed(&text[..cut], &mut out).unwrap();
            r.feed(&text[cut..], &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), whole, "split at {cut}");
        }
        let items: Vec<Box<RawValue>> = serde_json::from_str(r#"[{"q":[1]},2,"s"]"#).unwrap();
        let mut out = Vec::new();
        write_pretty_array(&mut out, items.iter().map(|b| &**b)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            pretty(&array_text(items.iter().map(|b| &**b))) + "\n"
        );
    }

    /// Issue 33: 100,000 nested arrays (200 KB) printed 2 GB and more.
    /// Output stays within a constant factor of the input whatever the
    /// shape, and is still the same JSON.
    #[test]
    fn output_grows_linearly_with_depth() {
        for depth in [10, 1_000, 100_000] {
            let text = format!(r#"{{"x":{}{}}}"#, "[".repeat(depth), "]".repeat(depth));
            let p = pretty(&text);
            assert!(
                p.len() <= text.len() * (2 + 2 * MAX_INDENT_DEPTH),
                "depth {depth}: {} bytes from {}",
                p.len(),
                text.len()
            );
            assert_eq!(compact(&p), text);
        }
        // Deep enough to be compact below the cap: one line from there.
        let deep = pretty(&format!("{}{}", "[".repeat(50), "]".repeat(50)));
        assert_eq!(deep.lines().count(), 2 * MAX_INDENT_DEPTH + 1, "{deep}");
        assert!(deep.lines().all(|l| l.len() <= 2 * MAX_INDENT_DEPTH + 40));
        // Wide arrays at the cap: each element at most one indent longer.
        let wide = format!(
            "{}{}{}",
            "[".repeat(40),
            "1,".repeat(1000) + "1",
            "]".repeat(40)
        );
        assert!(pretty(&wide).len() <= wide.len() * (2 + 2 * MAX_INDENT_DEPTH));
    }

    #[test]
    fn object_keeps_member_order() {
        let o = Object::parse(r#"{"b":1,"a":{"y":2,"x":3},"c":[{"q":1}]}"#).unwrap();
        let keys: Vec<&str> = o.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!(o.get("a").unwrap().get(), r#"{"y":2,"x":3}"#);
        let arr = o.array("c").unwrap();
        assert_eq!(array_text(arr.iter().map(|b| &**b)), r#"[{"q":1}]"#);
    }
}
