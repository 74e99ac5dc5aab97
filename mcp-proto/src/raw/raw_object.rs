//! [`RawObject`]: a received JSON object kept as its text, members decoded
//! one at a time on demand.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::{AnyValue, RAW_VALUE_TOKEN, RawJson, RawSink};
use crate::schema::JsonObject;

/// A JSON object kept as its text: the `_meta` of what a server sends, and
/// the members a type does not name (its `extra`).
///
/// # Why not a `serde_json::Map`
///
/// A `Map` of what a peer sent costs far more than the text it came from:
/// each member a `String` and a 32-byte `Value`, each object a B-tree node
/// of some 600 bytes however few members it has. `[{"a":0},{"a":0},…]` is 8
/// bytes a member on the wire and about 700 in a `Value`: a 16 MiB message
/// of them would take over a gigabyte. Kept as text, an object costs its
/// size; the program decodes the member it reads ([`get`](Self::get),
/// [`decode`](Self::decode)), or all of them ([`to_object`](Self::to_object)).
///
/// The text is compact JSON written here from the members as received
/// (each value verbatim), so it is at most about the size of those members
/// on the wire. A member given twice is kept twice, and read as its last
/// occurrence (as `serde_json::Map` keeps the last). Equality is equality of
/// that text.
///
/// ```
/// use mcp_proto::RawObject;
///
/// let meta: RawObject = serde_json::from_str(r#"{"trace": "abc", "n": [1, 2]}"#)?;
/// assert_eq!(meta.get("n"), Some("[1, 2]"));
/// assert_eq!(meta.decode::<Vec<u32>>("n").transpose()?, Some(vec![1, 2]));
/// assert_eq!(meta.get("nope"), None);
/// assert_eq!(serde_json::to_string(&meta)?, r#"{"trace":"abc","n":[1, 2]}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RawObject {
    /// Invariant: empty (no members), or one JSON object in compact form
    /// around its members' values as received (`{"k":v,…}`), each key
    /// written by this crate's string writer.
    text: String,
}

impl RawObject {
    /// No members.
    pub fn new() -> Self {
        RawObject::default()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The object's JSON text (`{}` when empty).
    pub fn as_str(&self) -> &str {
        if self.text.is_empty() {
            "{}"
        } else {
            &self.text
        }
    }

    /// The object as a [`RawJson`] (copies the text).
    pub fn to_raw(&self) -> RawJson {
        RawJson::trusted_text(self.as_str().to_owned())
    }

    /// Every member: its key (unescaped) and its value's text, in the order
    /// received.
    pub fn members(&self) -> Vec<(Cow<'_, str>, &str)> {
        if self.text.is_empty() {
            return Vec::new();
        }
        // The text is written here: a map of raw values always reads back.
        let entries: Vec<(Cow<'_, str>, &RawValue)> =
            match serde_json::from_str::<MemberList<'_>>(&self.text) {
                Ok(m) => m.0,
                Err(_) => Vec::new(),
            };
        entries.into_iter().map(|(k, v)| (k, v.get())).collect()
    }

    /// The text of member `key`'s value (its last occurrence), if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        if self.text.is_empty() {
            return None;
        }
        // One pass over the text, nothing collected (`members` would build
        // the whole list to read one member). The text is written here: it
        // always reads back.
        let mut de = serde_json::Deserializer::from_str(&self.text);
        LastMember(key)
            .deserialize(&mut de)
            .ok()
            .flatten()
            .map(RawValue::get)
    }

    /// Member `key` decoded as `T`, if present.
    pub fn decode<T: DeserializeOwned>(&self, key: &str) -> Option<serde_json::Result<T>> {
        self.get(key).map(serde_json::from_str)
    }

    /// How many members there are (a member given twice counts twice).
    pub fn len(&self) -> usize {
        self.members().len()
    }

    /// Whether member `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets member `key` to `value` (encoded here), replacing every earlier
    /// occurrence.
    pub fn insert<T: Serialize + ?Sized>(
        &mut self,
        key: &str,
        value: &T,
    ) -> serde_json::Result<()> {
        let value = RawJson::from_value(value)?;
        if self.contains_key(key) {
            let kept: Vec<(String, String)> = self
                .members()
                .into_iter()
                .filter(|(k, _)| k != key)
                .map(|(k, v)| (k.into_owned(), v.to_owned()))
                .collect();
            self.text.clear();
            for (k, v) in kept {
                self.push(&k, &v);
            }
        }
        self.push(key, value.as_str());
        Ok(())
    }

    /// Every member decoded into a `serde_json::Map` (what an earlier
    /// version of this crate kept): costs what the introduction says.
    pub fn to_object(&self) -> serde_json::Result<JsonObject> {
        serde_json::from_str(self.as_str())
    }

    /// Appends a member whose value is the JSON text `value` (checked by the
    /// caller: a value received, or encoded here).
    pub(crate) fn push(&mut self, key: &str, value: &str) {
        if self.text.is_empty() {
            self.text.push('{');
        } else {
            // Replace the closing brace by a comma.
            self.text.pop();
            self.text.push(',');
        }
        let mut quoted = Vec::with_capacity(key.len() + 2);
        super::compact::write_str(&mut quoted, key);
        self.text.push_str(&String::from_utf8_lossy(&quoted));
        self.text.push(':');
        self.text.push_str(value.trim_ascii());
        self.text.push('}');
    }

    /// Reads the next member's value from `map` into this object under
    /// `key` (for hand-written decoders that keep unknown members).
    ///
    /// The value's text goes straight from the input into this object's
    /// text when the deserializer reads text in place (`serde_json`), with
    /// no copy of its own in between.
    pub(crate) fn push_next<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<(), A::Error> {
        map.next_value_seed(Append { object: self, key })
    }

    /// Releases spare capacity (after the last member is pushed).
    pub(crate) fn shrink(&mut self) {
        self.text.shrink_to_fit();
    }
}

/// A member's value read into a [`RawObject`] under `key`.
struct Append<'a> {
    object: &'a mut RawObject,
    key: &'a str,
}

impl RawSink for Append<'_> {
    type Out = ();
    fn borrowed(self, text: &str) {
        self.object.push(self.key, text);
    }
    fn owned(self, raw: RawJson) {
        self.object.push(self.key, raw.as_str());
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Append<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, AnyValue(self))
    }
}

/// Finds the value of a member by key (its last occurrence) in one pass,
/// keeping nothing but the match.
struct LastMember<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for LastMember<'_> {
    type Value = Option<&'de RawValue>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LastMember<'_> {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(k) = map.next_key::<crate::schema::MaybeBorrowed<'de>>()? {
            let value = map.next_value::<&'de RawValue>()?;
            if k.as_str() == self.0 {
                found = Some(value);
            }
        }
        Ok(found)
    }
}

/// The members of an object, borrowing keys and raw values from the text.
struct MemberList<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for MemberList<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MemberList<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MemberList<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<crate::schema::MaybeBorrowed<'de>>()? {
                    let key = match k {
                        crate::schema::MaybeBorrowed::Borrowed(s) => Cow::Borrowed(s),
                        crate::schema::MaybeBorrowed::Owned(s) => Cow::Owned(s),
                    };
                    out.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(MemberList(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let members = self.members();
        let mut m = s.serialize_map(Some(members.len()))?;
        for (k, v) in &members {
            match serde_json::from_str::<&RawValue>(v) {
                Ok(raw) => m.serialize_entry(k, raw)?,
                Err(e) => return Err(serde::ser::Error::custom(e)),
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut o = RawObject::new();
                while let Some(k) = map.next_key::<crate::schema::MaybeBorrowed<'de>>()? {
                    o.push_next(k.as_str(), &mut map)?;
                }
                o.shrink();
                Ok(o)
            }
        }
        d.deserialize_map(V)
    }
}

impl From<&JsonObject> for RawObject {
    fn from(object: &JsonObject) -> Self {
        let mut o = RawObject::new();
        for (k, v) in object {
            // A `Value` always encodes.
            if let Ok(raw) = RawJson::from_value(v) {
                o.push(k, raw.as_str());
            }
        }
        o
    }
}

impl From<JsonObject> for RawObject {
    fn from(object: JsonObject) -> Self {
        RawObject::from(&object)
    }
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawObject").field(&self.as_str()).finish()
    }
}

impl fmt::Display for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn members_read_as_received_and_last_wins() {
        let o: RawObject =
            serde_json::from_str(r#" { "a" : 1 , "k\"ey" : {"x": [ ]}, "a": "two" } "#).unwrap();
        assert_eq!(o.len(), 3);
        assert_eq!(o.get("a"), Some(r#""two""#));
        assert_eq!(o.get("k\"ey"), Some(r#"{"x": [ ]}"#));
        assert_eq!(o.as_str(), r#"{"a":1,"k\"ey":{"x": [ ]},"a":"two"}"#);
        let mut o = o;
        o.insert("a", &3).unwrap();
        o.insert("new", "v").unwrap();
        assert_eq!(o.as_str(), r#"{"k\"ey":{"x": [ ]},"a":3,"new":"v"}"#);
        assert_eq!(
            serde_json::to_value(&o).unwrap(),
            serde_json::json!({"k\"ey": {"x": []}, "a": 3, "new": "v"})
        );
        assert!(RawObject::new().is_empty());
        assert_eq!(RawObject::new().as_str(), "{}");
        assert!(
            serde_json::from_str::<RawObject>("[1]").is_err(),
            "an object"
        );
    }

    #[test]
    fn decodes_inside_flattened_types_and_from_values() {
        #[derive(Deserialize, Serialize)]
        struct Inner {
            meta: RawObject,
        }
        #[derive(Deserialize, Serialize)]
        struct Outer {
            #[serde(flatten)]
            inner: Inner,
            #[serde(flatten)]
            rest: RawObject,
        }
        let text = r#"{"meta":{"a":[1,{"b":2}]},"x":true}"#;
        let outer: Outer = serde_json::from_str(text).unwrap();
        assert_eq!(outer.inner.meta.get("a"), Some(r#"[1,{"b":2}]"#));
        assert_eq!(serde_json::to_string(&outer).unwrap(), text);
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let from_value: Inner = serde_json::from_value(v).unwrap();
        assert_eq!(
            from_value
                .meta
                .decode::<serde_json::Value>("a")
                .unwrap()
                .unwrap()[1]["b"],
            2
        );
    }
}
