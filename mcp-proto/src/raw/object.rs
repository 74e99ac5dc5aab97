//! [`ObjectWriter`]: a JSON object built member by member into one buffer,
//! valid by construction, so the result needs no second parse.

use serde::Serialize;

use super::{RawJson, Storage, compact};

/// Writes a JSON object member by member. Every value is valid JSON by
/// construction (encoded here, or already a [`RawJson`], or the members of
/// a `RawJson` object), so [`finish`](Self::finish) makes a [`RawJson`]
/// without parsing the text again: what a request's `_meta` composition
/// needs on every call.
///
/// Keys are not checked for duplicates; the caller decides which member
/// wins by writing only that one.
///
/// ```
/// use mcp_proto::RawJson;
/// use mcp_proto::raw::ObjectWriter;
///
/// let params = RawJson::from_value(&serde_json::json!({"name": "echo"}))?;
/// let mut w = ObjectWriter::with_capacity(64);
/// w.object("_meta", |meta| meta.value("progressToken", &7))?;
/// assert!(w.members_of(&params));
/// assert_eq!(w.finish().as_str(), r#"{"_meta":{"progressToken":7},"name":"echo"}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug)]
pub struct ObjectWriter {
    buf: Vec<u8>,
    /// No member written yet (the next needs no comma).
    empty: bool,
}

impl ObjectWriter {
    /// An empty object, with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut buf = Vec::with_capacity(capacity.max(2));
        buf.push(b'{');
        ObjectWriter { buf, empty: true }
    }

    fn key(&mut self, key: &str) {
        if !std::mem::replace(&mut self.empty, false) {
            self.buf.push(b',');
        }
        compact::write_str(&mut self.buf, key);
        self.buf.push(b':');
    }

    /// A member whose value is encoded here. On an encoding error nothing
    /// is written.
    pub fn value<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> serde_json::Result<()> {
        let (len, empty) = (self.buf.len(), self.empty);
        self.key(key);
        let at = self.buf.len();
        if compact::write(value, &mut self.buf).is_err() {
            self.buf.truncate(at);
            if let Err(e) = serde_json::to_writer(&mut self.buf, value) {
                self.buf.truncate(len);
                self.empty = empty;
                return Err(e);
            }
        }
        Ok(())
    }

    /// A member whose value is already encoded.
    pub fn raw(&mut self, key: &str, value: &RawJson) {
        self.key(key);
        self.buf.extend_from_slice(value.as_bytes());
    }

    /// A member whose value is an object written by `f` into the same
    /// buffer.
    pub fn object<R>(&mut self, key: &str, f: impl FnOnce(&mut ObjectWriter) -> R) -> R {
        self.key(key);
        let mut inner = ObjectWriter {
            buf: std::mem::take(&mut self.buf),
            empty: true,
        };
        inner.buf.push(b'{');
        let out = f(&mut inner);
        inner.buf.push(b'}');
        self.buf = inner.buf;
        out
    }

    /// Every member of `object`, in its order. Whether `object` is a JSON
    /// object (if not, nothing is written).
    pub fn members_of(&mut self, object: &RawJson) -> bool {
        let text = object.as_bytes().trim_ascii();
        let Some(inner) = text
            .strip_prefix(b"{")
            .and_then(|t| t.strip_suffix(b"}"))
            .map(<[u8]>::trim_ascii)
        else {
            return false;
        };
        if !inner.is_empty() {
            if !std::mem::replace(&mut self.empty, false) {
                self.buf.push(b',');
            }
            self.buf.extend_from_slice(inner);
        }
        true
    }

    /// The object.
    pub fn finish(mut self) -> RawJson {
        self.buf.push(b'}');
        let span = 0..self.buf.len();
        // Invariant: `{`, members each made of a written key and a valid
        // value (or a valid object's members), `}`.
        RawJson {
            storage: Storage::Bytes(self.buf),
            span,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::{Value, json};

    fn raw(v: Value) -> RawJson {
        RawJson::from_value(&v).unwrap()
    }

    /// Whatever is written parses back to what was meant: keys escaped,
    /// nested objects closed, an empty object's members adding nothing.
    #[test]
    fn what_is_written_is_valid_json() {
        let mut w = ObjectWriter::with_capacity(0);
        w.value("k\"ey\n", &json!([1, "two", null])).unwrap();
        w.object("empty", |_| ());
        w.object("nested", |n| {
            n.raw("r", &raw(json!({"x": 1})));
            assert!(n.members_of(&raw(json!({}))));
            assert!(n.members_of(&RawJson::from_string(" { \"m\" : 2 } ".into()).unwrap()));
        });
        assert!(!w.members_of(&raw(json!([1]))), "not an object");
        assert!(w.members_of(&raw(json!({"a": {"b": "}"}}))));
        let out = w.finish();
        let parsed: Value = serde_json::from_str(out.as_str()).unwrap();
        assert_eq!(
            parsed,
            json!({"k\"ey\n": [1, "two", null], "empty": {}, "nested": {"r": {"x": 1}, "m": 2}, "a": {"b": "}"}})
        );
        assert_eq!(ObjectWriter::with_capacity(8).finish().as_str(), "{}");
    }
}
