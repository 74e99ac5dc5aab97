//! [`RawJson`]: one JSON value kept as its encoded text.
//!
//! `params` and `result` travel as `RawJson` so that a message is parsed
//! once and nothing is copied on the way:
//!
//! - **Received** values are a span of the received message itself: the
//!   transport hands over the line or body it read ([`Message::from_string`]),
//!   the envelope parser records where `result`/`params` start and end, and
//!   the typed decode later reads that span in place. No per-value
//!   allocation, no copy (a 1 MiB result is never duplicated before it is
//!   decoded).
//! - **Sent** values are encoded once, straight into their own buffer
//!   ([`RawJson::from_value`]), sized up front when the caller knows roughly
//!   how large they are ([`RawJson::from_value_with_capacity`]), and written
//!   to the transport from that buffer.
//!
//! `serde_json`'s `Box<RawValue>` cannot do either without `unsafe`: it must
//! own a copy of exactly the value's text, and building one from bytes
//! re-parses them. Conversions from and to it are provided.
//!
//! [`Message::from_string`]: crate::Message::from_string

use std::fmt;
use std::ops::Range;

pub(crate) mod compact;
mod object;
mod raw_object;

pub use object::ObjectWriter;
pub use raw_object::RawObject;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// Bytes of a received message a value kept from it may hold beyond its own
/// size (its buffer's other members and spare capacity) rather than be
/// copied out: below this, a copy costs more than the bytes it frees.
const PIN_SLACK: usize = 4096;

/// One valid JSON value, kept as its encoded text.
///
/// A value received from a peer nests at most
/// [`MAX_DEPTH`](crate::jsonrpc::MAX_DEPTH)` - 1` levels of arrays and
/// objects (the message it came in was checked), and holds at most 4 × its
/// own size (plus 4 KiB) of that message's buffer: a value much smaller than
/// its message is copied out of it when the message is decoded.
///
/// Cheap to move; [`Clone`] copies the value's bytes. Compare with
/// [`as_bytes`](Self::as_bytes) (equality is byte equality: `{"a":1}` and
/// `{ "a": 1 }` differ).
///
/// ```
/// use mcp_proto::RawJson;
///
/// let raw = RawJson::from_value(&serde_json::json!({"text": "hi"}))?;
/// assert_eq!(raw.as_str(), r#"{"text":"hi"}"#);
/// let back: serde_json::Value = raw.decode()?;
/// assert_eq!(back["text"], "hi");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub struct RawJson {
    storage: Storage,
    span: Range<usize>,
}

/// Invariant: `storage[span]` is exactly one valid JSON value (no
/// surrounding whitespace required or forbidden) and, for `Text`, `span`
/// lies on char boundaries.
enum Storage {
    /// Received text (already checked to be UTF-8 once, with its message).
    Text(String),
    /// Encoded here by `serde_json`, which writes UTF-8 only; kept as bytes
    /// so encoding does not pay a UTF-8 check it does not need.
    Bytes(Vec<u8>),
}

impl RawJson {
    /// Encodes `value` (compact JSON).
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Self> {
        Self::from_value_with_capacity(value, 128)
    }

    /// Encodes `value` into a buffer of at least `capacity` bytes: with a
    /// good estimate, a large value is written without the buffer growing
    /// (and being copied) along the way. Excess capacity beyond twice the
    /// encoded length is released. The bytes are `serde_json::to_writer`'s
    /// (strings are checked for what needs escaping in one vectorized pass
    /// rather than a byte at a time; see `raw/compact.rs`).
    #[inline]
    pub fn from_value_with_capacity<T: Serialize + ?Sized>(
        value: &T,
        capacity: usize,
    ) -> serde_json::Result<Self> {
        let mut buf = Vec::with_capacity(capacity);
        if compact::write(value, &mut buf).is_err() {
            // Outside the compact writer's subset (or failed): `serde_json`
            // writes it, or gives the precise error.
            buf.clear();
            serde_json::to_writer(&mut buf, value)?;
        }
        if buf.capacity() / 2 > buf.len() {
            buf.shrink_to_fit();
        }
        let span = 0..buf.len();
        Ok(RawJson {
            storage: Storage::Bytes(buf),
            span,
        })
    }

    /// Checks that `text` is one JSON value, nested at most
    /// [`MAX_DEPTH`](crate::jsonrpc::MAX_DEPTH)` - 1` levels (as deep as
    /// `serde_json` decodes), and keeps it (no copy).
    pub fn from_string(text: String) -> serde_json::Result<Self> {
        serde_json::from_str::<&RawValue>(&text)?;
        let limit = crate::jsonrpc::MAX_DEPTH - 1;
        if crate::jsonrpc::depth::exceeds(text.as_bytes(), limit) {
            return Err(serde::de::Error::custom(format_args!(
                "nested deeper than {limit} levels"
            )));
        }
        let span = 0..text.len();
        Ok(RawJson {
            storage: Storage::Text(text),
            span,
        })
    }

    /// `{}`.
    pub fn empty_object() -> Self {
        Self::trusted_text("{}".to_owned())
    }

    /// `null`.
    pub fn null() -> Self {
        Self::trusted_text("null".to_owned())
    }

    /// A value known to be valid JSON (built by this crate).
    pub(crate) fn trusted_text(text: String) -> Self {
        let span = 0..text.len();
        RawJson {
            storage: Storage::Text(text),
            span,
        }
    }

    /// `text[span]` as a value. The caller (the envelope parser) guarantees
    /// that the span is one JSON value on char boundaries.
    pub(crate) fn trusted_span(text: String, span: Range<usize>) -> Self {
        debug_assert!(text.get(span.clone()).is_some());
        RawJson {
            storage: Storage::Text(text),
            span,
        }
    }

    /// `text[span]` as a value kept from a received message, which must not
    /// keep much more of that message alive than its own size: when the
    /// rest of the buffer (other members, spare capacity) is more than three
    /// times the span and [`PIN_SLACK`] bytes, the span is copied out and
    /// the buffer dropped, so a kept value holds at most 4 × its size +
    /// `PIN_SLACK`. (A 20-byte `result` beside a 1 MiB member of no interest
    /// would otherwise hold that MiB for as long as the result is kept.)
    /// Otherwise the span is read in place, as [`trusted_span`](Self::trusted_span):
    /// a large result is never copied.
    pub(crate) fn kept_span(text: String, span: Range<usize>) -> Self {
        let unused = text.capacity().saturating_sub(span.len());
        if unused <= span.len().saturating_mul(3).saturating_add(PIN_SLACK) {
            return Self::trusted_span(text, span);
        }
        match text.get(span.clone()) {
            Some(value) => Self::trusted_text(value.to_owned()),
            None => Self::trusted_span(text, span),
        }
    }

    /// The encoded value.
    pub fn as_bytes(&self) -> &[u8] {
        let all: &[u8] = match &self.storage {
            Storage::Text(s) => s.as_bytes(),
            Storage::Bytes(b) => b,
        };
        all.get(self.span.clone()).unwrap_or(b"null")
    }

    /// The encoded value as text. Free for received values; values encoded
    /// here are UTF-8 checked first (O(n), for display and debugging; typed
    /// decoding never needs it).
    pub fn as_str(&self) -> &str {
        match &self.storage {
            Storage::Text(s) => s.get(self.span.clone()).unwrap_or("null"),
            Storage::Bytes(_) => std::str::from_utf8(self.as_bytes()).unwrap_or("null"),
        }
    }

    /// The text without whitespace between tokens (what `serde_json` writes
    /// for the same value, but for number spellings and escapes, which are
    /// kept as received). Borrowed when there is none to remove: one pass,
    /// no allocation for what servers usually send.
    ///
    /// ```
    /// use mcp_proto::RawJson;
    /// let raw = RawJson::from_string("{ \"a\" : [1, \" x \"]\n}".into())?;
    /// assert_eq!(raw.compact(), r#"{"a":[1," x "]}"#);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn compact(&self) -> std::borrow::Cow<'_, str> {
        let text = self.as_str();
        let mut out: Option<String> = None;
        let mut in_string = false;
        let mut escaped = false;
        for (i, c) in text.char_indices() {
            let drop = !in_string && matches!(c, ' ' | '\t' | '\n' | '\r');
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                }
            } else if c == '"' {
                in_string = true;
            }
            match (&mut out, drop) {
                (None, false) => {}
                (None, true) => out = Some(text.get(..i).unwrap_or_default().to_owned()),
                (Some(o), false) => o.push(c),
                (Some(_), true) => {}
            }
        }
        match out {
            Some(o) => o.into(),
            None => text.into(),
        }
    }

    /// Same as [`as_str`](Self::as_str); the name `serde_json::value::RawValue` uses.
    pub fn get(&self) -> &str {
        self.as_str()
    }

    /// Length of the encoded value in bytes.
    pub fn len(&self) -> usize {
        self.span.len()
    }

    /// Never true (the shortest JSON value is one byte); present for symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.span.is_empty()
    }

    /// Whether the value is `null` (surrounding whitespace ignored).
    pub fn is_null(&self) -> bool {
        self.as_bytes().trim_ascii() == b"null"
    }

    /// Decodes the value into `T`, reading it in place.
    pub fn decode<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        match &self.storage {
            Storage::Text(s) => serde_json::from_str(s.get(self.span.clone()).unwrap_or("null")),
            Storage::Bytes(_) => serde_json::from_slice(self.as_bytes()),
        }
    }

    /// The encoded bytes, moved out without a copy when this value owns its
    /// whole buffer (anything built with [`from_value`](Self::from_value)).
    pub fn into_bytes(self) -> Vec<u8> {
        let whole = match &self.storage {
            Storage::Text(s) => self.span == (0..s.len()),
            Storage::Bytes(b) => self.span == (0..b.len()),
        };
        if !whole {
            return self.as_bytes().to_vec();
        }
        match self.storage {
            Storage::Text(s) => s.into_bytes(),
            Storage::Bytes(b) => b,
        }
    }

    /// `span` of the value's text (relative to the value; on char
    /// boundaries) as a `String`. Received text whose buffer is not much
    /// larger than that span becomes the string: the span is moved to the
    /// front of the buffer, which is not reallocated. Otherwise the span is copied.
    pub(crate) fn into_substring(self, span: Range<usize>) -> String {
        let start = self.span.start + span.start;
        let end = self.span.start + span.end;
        let reuse = match &self.storage {
            Storage::Text(s) => {
                // At most about as much again, or 256 bytes, is kept unused.
                let wasted = s.capacity().saturating_sub(span.len());
                s.is_char_boundary(start)
                    && s.is_char_boundary(end)
                    && end <= s.len()
                    && wasted <= span.len().max(256)
            }
            Storage::Bytes(_) => false,
        };
        match self.storage {
            Storage::Text(mut s) if reuse => {
                s.truncate(end);
                s.drain(..start);
                s
            }
            _ => self.as_str().get(span).unwrap_or_default().to_owned(),
        }
    }

    /// The values of the members named `keys`, if this value is an object
    /// (each `None` when absent), found in one pass that skips every other
    /// member's value without decoding it: reading a `tools/call`'s `name`
    /// this way costs a fraction of a typed decode, which must walk its
    /// `_meta` and arguments key by key.
    ///
    /// `None` when this is not an object, when one of `keys` appears twice
    /// (a typed decode refuses that too), or when the object is nested
    /// deeper than this scan follows (100 levels; `serde_json` allows 128):
    /// decode it instead.
    ///
    /// ```
    /// use mcp_proto::RawJson;
    ///
    /// let p = RawJson::from_string(
    ///     r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1}}"#.into(),
    /// )?;
    /// let [name, uri, args] = p.members(["name", "uri", "arguments"]).unwrap();
    /// assert_eq!(name, Some(r#""echo""#));
    /// assert_eq!(uri, None);
    /// assert_eq!(args, Some(r#"{"text":"hi"}"#));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn members<const N: usize>(&self, keys: [&str; N]) -> Option<[Option<&str>; N]> {
        use crate::jsonrpc::scan::{SCAN_DEPTH, Scanner};
        let text = self.as_bytes();
        let mut spans: [Option<Range<usize>>; N] = std::array::from_fn(|_| None);
        let mut s = Scanner::new(text);
        s.ws();
        s.eat(b'{')?;
        s.ws();
        if s.eat(b'}').is_none() {
            loop {
                s.ws();
                if s.peek()? != b'"' {
                    return None;
                }
                let quoted_from = s.i;
                let (key, escaped) = s.string()?;
                let key: std::borrow::Cow<'_, [u8]> = if escaped {
                    let decoded: String =
                        serde_json::from_slice(text.get(quoted_from..s.i)?).ok()?;
                    decoded.into_bytes().into()
                } else {
                    text.get(key)?.into()
                };
                s.ws();
                s.eat(b':')?;
                s.ws();
                let start = s.i;
                s.value(SCAN_DEPTH - 1)?;
                if let Some(i) = keys.iter().position(|k| k.as_bytes() == &*key)
                    && spans.get_mut(i)?.replace(start..s.i).is_some()
                {
                    return None;
                }
                if !s.another_member()? {
                    break;
                }
            }
        }
        let mut found = [None; N];
        for (slot, span) in found.iter_mut().zip(spans) {
            if let Some(span) = span {
                *slot = Some(std::str::from_utf8(text.get(span)?).ok()?);
            }
        }
        Some(found)
    }

    /// As a `serde_json` raw value (copies the text).
    pub fn to_raw_value(&self) -> Box<RawValue> {
        // A `Box<RawValue>` can only be built by parsing; the text is valid
        // JSON, so this does not fail.
        serde_json::from_str::<Box<RawValue>>(self.as_str())
            .unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
}

impl Clone for RawJson {
    fn clone(&self) -> Self {
        match &self.storage {
            Storage::Text(_) => Self::trusted_text(self.as_str().to_owned()),
            Storage::Bytes(_) => {
                let buf = self.as_bytes().to_vec();
                let span = 0..buf.len();
                RawJson {
                    storage: Storage::Bytes(buf),
                    span,
                }
            }
        }
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        Self::trusted_text(Box::<str>::from(raw).into_string())
    }
}

impl From<&RawValue> for RawJson {
    fn from(raw: &RawValue) -> Self {
        Self::trusted_text(raw.get().to_owned())
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for RawJson {}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.as_str()).finish()
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RawJson {
    type Err = serde_json::Error;
    fn from_str(s: &str) -> serde_json::Result<Self> {
        Self::from_string(s.to_owned())
    }
}

/// Written verbatim (through `serde_json`'s raw value support), without
/// parsing it again: the text is one valid JSON value (the type's
/// invariant), which is what a `&RawValue` would be checked for. This is
/// what `RawValue`'s own `Serialize` emits (a struct of one field, both
/// named `$serde_json::private::RawValue`, holding the text), so any serializer sees
/// the same as it would from `serde_json::value::RawValue`: `serde_json`'s
/// write the text as it is, its `Value` serializer parses it.
/// (A tool catalog's schemas are written every model turn: the check
/// parse cost as much again as writing them.)
impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut raw = s.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        // Without surrounding whitespace, as a `&RawValue` parsed from it.
        let text = self.as_str().trim_matches([' ', '\t', '\n', '\r']);
        raw.serialize_field(RAW_VALUE_TOKEN, text)?;
        raw.end()
    }
}

/// From `serde_json` (text, or a `Value`), the value's text as it is, with
/// no intermediate tree. From any other deserializer (serde's buffer for
/// `#[serde(flatten)]` and untagged enums, another format), the value is
/// decoded into a `serde_json::Value` and encoded: `Box<RawValue>` refuses
/// those outright, so a type holding a `RawJson` could not sit inside a
/// flattened one.
impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, AnyValue(Keep))
    }
}

/// The newtype name by which `serde_json`'s deserializers recognise a raw
/// value (the name `Box<RawValue>` asks for): they answer with a map of one
/// member, this name, whose value is the text. Checked by a test, since
/// `serde_json` does not document it.
pub(crate) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Where [`AnyValue`] puts the value it read: its text borrowed from the
/// input (`serde_json` reading text in place), or a [`RawJson`] of its own.
pub(crate) trait RawSink {
    /// What the visit returns.
    type Out;
    /// The value's text, borrowed from the input (valid JSON).
    fn borrowed(self, text: &str) -> Self::Out;
    /// The value, owned.
    fn owned(self, raw: RawJson) -> Self::Out;
}

/// Makes a [`RawJson`] of the value.
pub(crate) struct Keep;

impl RawSink for Keep {
    type Out = RawJson;
    fn borrowed(self, text: &str) -> RawJson {
        RawJson::trusted_text(text.to_owned())
    }
    fn owned(self, raw: RawJson) -> RawJson {
        raw
    }
}

/// A visitor for any value: `serde_json`'s raw-value answer (the text, no
/// tree), or any value at all from another deserializer (through a `Value`).
pub(crate) struct AnyValue<S>(pub(crate) S);

impl<S: RawSink> AnyValue<S> {
    fn encode<E: serde::de::Error>(self, v: serde_json::Value) -> Result<S::Out, E> {
        RawJson::from_value(&v)
            .map(|raw| self.0.owned(raw))
            .map_err(E::custom)
    }
}

impl<'de, S: RawSink> serde::de::Visitor<'de> for AnyValue<S> {
    type Value = S::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<S::Out, A::Error> {
        use crate::schema::MaybeBorrowed;
        let Some(first) = map.next_key::<MaybeBorrowed<'de>>()? else {
            return Ok(self.0.owned(RawJson::empty_object()));
        };
        if first.as_str() == RAW_VALUE_TOKEN {
            // `serde_json` has validated the text.
            return Ok(match map.next_value::<MaybeBorrowed<'de>>()? {
                MaybeBorrowed::Borrowed(t) => self.0.borrowed(t),
                MaybeBorrowed::Owned(t) => self.0.owned(RawJson::trusted_text(t)),
            });
        }
        // An object from another deserializer.
        let mut object = serde_json::Map::new();
        object.insert(first.as_str().to_owned(), map.next_value()?);
        while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
            object.insert(k, v);
        }
        self.encode(serde_json::Value::Object(object))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<S::Out, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        self.encode(v)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<S::Out, A::Error> {
        let v = serde_json::Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
        self.encode(v)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<S::Out, D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, self)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<S::Out, E> {
        Ok(self.0.owned(RawJson::null()))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<S::Out, E> {
        Ok(self.0.owned(RawJson::null()))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<S::Out, E> {
        self.encode(v.into())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<S::Out, E> {
        self.encode(v.into())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<S::Out, E> {
        self.encode(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<S::Out, E> {
        self.encode(v.into())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<S::Out, E> {
        self.encode(v.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn members_are_found_in_one_pass() {
        let raw = |t: &str| RawJson::from_string(t.into()).unwrap();
        let keys = ["name", "uri", "arguments"];
        let p = raw(
            r#" { "_meta" : {"name":"inner","a":[1,{"uri":2}]}, "name" : "echo" ,"arguments":{"text":"a\"b"}} "#,
        );
        assert_eq!(
            p.members(keys),
            Some([Some(r#""echo""#), None, Some(r#"{"text":"a\"b"}"#)])
        );
        // Keys compare by their decoded text.
        assert_eq!(
            raw(r#"{"na\u006de":1}"#).members(keys),
            Some([Some("1"), None, None])
        );
        assert_eq!(raw("{}").members(keys), Some([None, None, None]));
        // A repeated member asked for is refused; one not asked for is not.
        assert_eq!(raw(r#"{"name":1,"name":2}"#).members(keys), None);
        assert_eq!(
            raw(r#"{"x":1,"x":2,"uri":3}"#).members(keys),
            Some([None, Some("3"), None])
        );
        // Not an object.
        assert_eq!(raw(r#"["name"]"#).members(keys), None);
        assert_eq!(raw(r#""name""#).members(keys), None);
        // Deeper than the scan follows: left to a typed decode.
        let deep = format!(
            r#"{{"name":"n","a":{}1{}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_ok());
        assert_eq!(raw(&deep).members(keys), None);
        // Values encoded here (bytes) read the same as received text.
        let encoded = RawJson::from_value(&serde_json::json!({"uri": "file:///a b"})).unwrap();
        assert_eq!(
            encoded.members(keys),
            Some([None, Some(r#""file:///a b""#), None])
        );
    }

    /// What `members` finds is what a full decode finds.
    #[test]
    fn members_agree_with_a_full_decode() {
        let texts = [
            r#"{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":"t"}}"#,
            r#"{"a":null,"b":true,"c":false,"d":-1.5e3,"e":"\u00e9\n","f":[[],{}],"name":[]}"#,
            r#"{"uri":"r\/s","arguments":{"deep":{"deeper":[1,2,{"x":"}"}]}}}"#,
            r#"{"é":"ü","name":"ñ","arguments":"{not an object}"}"#,
        ];
        for t in texts {
            let v: serde_json::Value = serde_json::from_str(t).unwrap();
            let raw = RawJson::from_string(t.into()).unwrap();
            let found = raw.members(["name", "uri", "arguments"]).unwrap();
            for (key, got) in ["name", "uri", "arguments"].iter().zip(found) {
                let got = got.map(|g| serde_json::from_str::<serde_json::Value>(g).unwrap());
                assert_eq!(got.as_ref(), v.get(key), "{key} in {t}");
            }
        }
    }

    #[test]
    fn spans_read_in_place() {
        let text = r#"{"result":{"a":[1,2]}}"#.to_owned();
        let raw = RawJson::trusted_span(text, 10..21);
        assert_eq!(raw.as_str(), r#"{"a":[1,2]}"#);
        let v: serde_json::Value = raw.decode().unwrap();
        assert_eq!(v["a"][1], 2);
        assert_eq!(raw.clone().into_bytes(), br#"{"a":[1,2]}"#);
    }

    #[test]
    fn encoded_values_are_bytes_until_read_as_text() {
        let raw = RawJson::from_value_with_capacity(&["x", "é"], 1 << 16).unwrap();
        assert_eq!(raw.as_str(), r#"["x","é"]"#);
        assert!(
            raw.into_bytes().capacity() < 1 << 15,
            "excess capacity released"
        );
    }

    /// `serde_json`'s raw-value answer is recognised (this fails if its
    /// private name changes), and other deserializers give the same text.
    #[test]
    fn decodes_from_serde_json_and_from_serde_buffers() {
        let text = r#"{"a": [1, {"b": null}], "c": "d"}"#;
        let raw: RawJson = serde_json::from_str(text).unwrap();
        assert_eq!(raw.as_str(), text, "verbatim from text");
        let raw: RawJson = serde_json::from_slice(text.as_bytes()).unwrap();
        assert_eq!(raw.as_str(), text);
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let raw: RawJson = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(raw.decode::<serde_json::Value>().unwrap(), v);
        // Inside `#[serde(flatten)]`, which buffers into serde's own tree.
        #[derive(Deserialize)]
        struct Inner {
            raw: RawJson,
        }
        #[derive(Deserialize)]
        struct Outer {
            #[serde(flatten)]
            inner: Inner,
        }
        for member in [text, "1", "-2", "1.5", "true", "null", r#""s""#, "[]", "{}"] {
            let outer: Outer = serde_json::from_str(&format!(r#"{{"raw":{member}}}"#)).unwrap();
            let want: serde_json::Value = serde_json::from_str(member).unwrap();
            assert_eq!(outer.inner.raw.decode::<serde_json::Value>().unwrap(), want);
        }
    }

    #[test]
    fn compact_removes_whitespace_between_tokens_only() {
        let raw = |t: &str| RawJson::from_string(t.into()).unwrap();
        for (text, want) in [
            (r#"{"a":1}"#, r#"{"a":1}"#),
            (" [ 1 ,\t2 ]\r\n", "[1,2]"),
            (
                r#"{ "k \" } " : "v\\" , "é" : [ ] }"#,
                r#"{"k \" } ":"v\\","é":[]}"#,
            ),
        ] {
            let r = raw(text);
            let got = r.compact();
            assert_eq!(got, want);
            let a: serde_json::Value = serde_json::from_str(&got).unwrap();
            let b: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(a, b);
        }
        assert!(matches!(
            raw("[1]").compact(),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn from_string_validates() {
        assert!(RawJson::from_string("{".into()).is_err());
        assert!(RawJson::from_string("1 2".into()).is_err());
        assert!(RawJson::from_string(" null ".into()).unwrap().is_null());
    }

    #[test]
    fn serializes_verbatim_inside_other_values() {
        let raw = RawJson::from_string(r#"{"b":1,"a":2}"#.into()).unwrap();
        let out = serde_json::to_string(
            &serde_json::json!({"x": raw.decode::<serde_json::Value>().unwrap()}),
        )
        .unwrap();
        assert!(out.contains("\"a\":2"));
        #[derive(Serialize)]
        struct W<'a> {
            v: &'a RawJson,
        }
        assert_eq!(
            serde_json::to_string(&W { v: &raw }).unwrap(),
            r#"{"v":{"b":1,"a":2}}"#
        );
        let back: RawJson = serde_json::from_str(r#" {"b":1,"a":2}"#).unwrap();
        assert_eq!(back, raw);
    }

    /// Serializing writes the text as it is (inner whitespace, key order,
    /// number spellings and escapes kept; surrounding whitespace dropped),
    /// to any of `serde_json`'s serializers
    /// as a `RawValue` would be: the writers, the pretty writer, the
    /// `Value` serializer, and this crate's compact writer.
    #[test]
    fn serializes_as_serde_jsons_raw_value_does() {
        let text = " { \"k\" : [1.50, \"\\u00e9\\n\"] , \"a\":{}} ";
        let raw = RawJson::from_string(text.into()).unwrap();
        let theirs = RawValue::from_string(text.into()).unwrap();
        assert_eq!(
            serde_json::to_string(&raw).unwrap(),
            serde_json::to_string(&theirs).unwrap()
        );
        let text = text.trim();
        assert_eq!(serde_json::to_string(&raw).unwrap(), text);
        assert_eq!(
            serde_json::to_string_pretty(&[&raw]).unwrap(),
            serde_json::to_string_pretty(&[&theirs]).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&raw).unwrap(),
            serde_json::to_value(&theirs).unwrap()
        );
        let mut via_compact = Vec::new();
        compact::write(&[&raw], &mut via_compact).unwrap();
        assert_eq!(via_compact, format!("[{text}]").into_bytes());
    }
}
