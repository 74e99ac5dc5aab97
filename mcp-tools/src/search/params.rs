//! The words of a tool's parameters, read from its input schema's text:
//! each property's name, title, description and string `enum` values, and
//! those of the properties nested one level below (an object's
//! `properties`, an array's `items`). The rest of the schema is skipped
//! unparsed.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Calls `f` with each piece of parameter text in `schema` (a JSON
/// object's text) until `f` says stop (returns `false`); nothing if it is
/// not one.
pub(crate) fn parameter_text(schema: &str, mut f: impl FnMut(&str) -> bool) {
    let Ok(root) = serde_json::from_str::<Root<'_>>(schema) else {
        return;
    };
    for (name, p) in root.properties.map(|p| p.0).unwrap_or_default() {
        if !f(&name) || !p.visit(&mut f, true) {
            return;
        }
    }
}

#[derive(Deserialize)]
struct Root<'a> {
    #[serde(borrow, default)]
    properties: Option<Properties<'a>>,
}

#[derive(Deserialize, Default)]
struct Property<'a> {
    #[serde(borrow, default)]
    title: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    description: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "enum")]
    values: Option<Strings<'a>>,
    #[serde(borrow, default)]
    properties: Option<Properties<'a>>,
    #[serde(borrow, default)]
    items: Option<Box<Property<'a>>>,
}

impl Property<'_> {
    /// Gives this property's text, and (when `nested`) that of its own
    /// properties and items, one level further and no more; whether to go
    /// on.
    fn visit(&self, f: &mut impl FnMut(&str) -> bool, nested: bool) -> bool {
        let own = [&self.title, &self.description].into_iter().flatten();
        let values = self.values.iter().flat_map(|v| &v.0);
        if !own.chain(values).all(|s| f(s)) {
            return false;
        }
        if !nested {
            return true;
        }
        let items = self.items.as_deref();
        let children = self
            .properties
            .iter()
            .chain(items.and_then(|i| i.properties.as_ref()))
            .flat_map(|p| &p.0);
        items.is_none_or(|i| i.visit(f, false))
            && children
                .into_iter()
                .all(|(name, p)| f(name) && p.visit(f, false))
    }
}

/// A `properties` object, in order; a value that is not a schema object
/// (`true`, say) counts as an empty one.
#[derive(Default)]
struct Properties<'a>(Vec<(Cow<'a, str>, Property<'a>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Properties<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Properties<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a properties object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some(name) = m.next_key::<Cow<'de, str>>()? {
                    let p = m.next_value::<Lenient<'de>>()?;
                    out.push((name, p.0));
                }
                Ok(Properties(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// A property schema, or an empty one for anything else (a boolean
/// schema, say).
struct Lenient<'a>(Property<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Lenient<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Lenient<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a property schema")
            }
            fn visit_map<M: MapAccess<'de>>(self, m: M) -> Result<Self::Value, M::Error> {
                Property::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(Lenient)
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Self::Value, S::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Lenient(Property::default()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(Property::default()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(Property::default()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(Property::default()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(Property::default()))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(Property::default()))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(Property::default()))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The strings of an `enum` array (other values skipped).
struct Strings<'a>(Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Strings<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Strings<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an enum array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Self::Value, S::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element::<MaybeText<'de>>()? {
                    out.extend(v.0);
                }
                Ok(Strings(out))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Strings(Vec::new()))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A string, or `None` for any other value.
struct MaybeText<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = MaybeText<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Self::Value, S::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
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
            "repo":{"type":"string","description":"Repository \"name\""},
            "state":{"enum":["open","closed",3]},
            "filter":{"type":"object","properties":{"label":{"description":"A label","properties":{"deep":{"description":"too deep"}}}}},
            "items":{"type":"array","items":{"properties":{"path":{"title":"File path"}}}},
            "flag":true},"required":["repo"]}"#;
        assert_eq!(
            text(schema),
            [
                "repo",
                "Repository \"name\"",
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
    fn anything_else_gives_nothing() {
        assert!(text("not json").is_empty());
        assert!(text(r#"{"type":"object"}"#).is_empty());
        assert!(text(r#"{"properties":[1,2]}"#).is_empty());
    }
}
