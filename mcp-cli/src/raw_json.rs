//! JSON as a peer sent it: key order and number spelling kept.
//!
//! The workspace's `serde_json` is built without `preserve_order`, so a
//! `serde_json::Value` sorts object keys. The CLI therefore never routes a
//! server's objects through `Value` on the way to stdout: it keeps them as
//! [`RawValue`] text, splits objects with [`Object`] (an ordered list of raw
//! members) and re-indents text with [`pretty`], which only adds or removes
//! whitespace outside strings.

use std::fmt;

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

/// Re-indents valid JSON text with two spaces. Only whitespace outside
/// strings changes: key order, number spelling and escapes stay as sent.
pub fn pretty(text: &str) -> String {
    reformat(text, true)
}

/// Removes the whitespace outside strings (one line).
pub fn compact(text: &str) -> String {
    reformat(text, false)
}

fn reformat(text: &str, indent: bool) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = text.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        if indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str("  ");
            }
        }
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
                    chars.next();
                }
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(if indent { ": " } else { ":" }),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    out
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
    fn object_keeps_member_order() {
        let o = Object::parse(r#"{"b":1,"a":{"y":2,"x":3},"c":[{"q":1}]}"#).unwrap();
        let keys: Vec<&str> = o.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!(o.get("a").unwrap().get(), r#"{"y":2,"x":3}"#);
        let arr = o.array("c").unwrap();
        assert_eq!(array_text(arr.iter().map(|b| &**b)), r#"[{"q":1}]"#);
    }
}
