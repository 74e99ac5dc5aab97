//! Canonical JSON and hidden-character counts straight from JSON text, one
//! value at a time: a schema of millions of members (a hostile server's)
//! costs about its text, never a `serde_json::Value` tree (some thirty
//! times it).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Appends the canonical text of the JSON `text` to `out` (the rules of
/// [`canonical_json`](super::canonical_json)); `None` if `text` is not JSON
/// (or nests deeper than the decoder goes).
pub(crate) fn canonical_text(text: &str, out: &mut String) -> Option<()> {
    let mut de = serde_json::Deserializer::from_str(text);
    Canonical(out).deserialize(&mut de).ok()?;
    de.end().ok()
}

/// How many characters hiding text ([`hidden_chars`](crate::hidden_chars))
/// the keys and strings of the JSON `text` hold (0 if it is not JSON).
pub(crate) fn hidden_count(text: &str) -> usize {
    let mut n = 0;
    let mut de = serde_json::Deserializer::from_str(text);
    match Hidden(&mut n).deserialize(&mut de) {
        Ok(()) => n,
        Err(_) => 0,
    }
}

/// Writes one value's canonical text.
struct Canonical<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Canonical<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Canonical<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.0.push_str(if v { "true" } else { "false" });
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.0
            .push_str(&super::definition::canonical_number(&v.into()));
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.0
            .push_str(&super::definition::canonical_number(&v.into()));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let n = serde_json::Number::from_f64(v).ok_or_else(|| E::custom("not a finite number"))?;
        self.0.push_str(&super::definition::canonical_number(&n));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        super::definition::write_string(v, self.0);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.push_str("null");
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.push('[');
        let mut first = true;
        loop {
            let mark = self.0.len();
            if !first {
                self.0.push(',');
            }
            if seq.next_element_seed(Canonical(&mut *self.0))?.is_none() {
                self.0.truncate(mark);
                break;
            }
            first = false;
        }
        self.0.push(']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Sorted by key; a key given twice keeps its last value (as
        // `serde_json::Map` does).
        let mut members = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            let mut value = String::new();
            map.next_value_seed(Canonical(&mut value))?;
            members.insert(key, value);
        }
        self.0.push('{');
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                self.0.push(',');
            }
            super::definition::write_string(key, self.0);
            self.0.push(':');
            self.0.push_str(value);
        }
        self.0.push('}');
        Ok(())
    }
}

/// Counts the hidden characters of one value's keys and strings.
struct Hidden<'a>(&'a mut usize);

impl<'de> DeserializeSeed<'de> for Hidden<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Hidden<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        *self.0 += crate::hidden_chars(v).count();
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Hidden(&mut *self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            *self.0 += crate::hidden_chars(&key).count();
            map.next_value_seed(Hidden(&mut *self.0))?;
        }
        Ok(())
    }
}
