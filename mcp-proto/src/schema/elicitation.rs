//! `elicitation/create`: the server asks the user for input, through a form
//! (2025-06-18+) or by sending them to a URL (2025-11-25+).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{JsonObject, TaskMetadata};

/// Params of `elicitation/create` (sent by the server).
///
/// A `mode` this crate does not know decodes to [`ElicitParams::Unknown`];
/// the client should decline it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitParams {
    /// Form mode: `mode` is `"form"` or absent (before 2025-11-25).
    Form(ElicitFormParams),
    /// URL mode (2025-11-25+): `mode` is `"url"`.
    Url(ElicitUrlParams),
    /// A mode this crate does not know, kept as JSON.
    Unknown(Value),
}

impl ElicitParams {
    /// The message shown to the user.
    pub fn message(&self) -> Option<&str> {
        match self {
            ElicitParams::Form(p) => Some(&p.message),
            ElicitParams::Url(p) => Some(&p.message),
            ElicitParams::Unknown(v) => v.get("message").and_then(Value::as_str),
        }
    }
}

impl Serialize for ElicitParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Url<'a> {
            mode: &'static str,
            #[serde(flatten)]
            params: &'a ElicitUrlParams,
        }
        match self {
            ElicitParams::Form(p) => p.serialize(s),
            ElicitParams::Url(p) => Url {
                mode: "url",
                params: p,
            }
            .serialize(s),
            ElicitParams::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Buffered by serde in member order, then matched by `mode`: a JSON
        // object's order is its author's, and a form asks its fields in it
        // (a `serde_json::Map` buffer would sort them).
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Form(ElicitFormParams),
            Url {
                mode: String,
                #[serde(flatten)]
                params: ElicitUrlParams,
            },
            Other(Value),
        }
        Ok(match Wire::deserialize(d)? {
            Wire::Form(f) => match f.mode.as_deref() {
                None | Some("form") => ElicitParams::Form(f),
                Some("url") => {
                    let mut v = serde_json::to_value(&f).unwrap_or(Value::Null);
                    if let Value::Object(o) = &mut v {
                        o.remove("mode");
                    }
                    match ElicitUrlParams::deserialize(v.clone()) {
                        Ok(u) => ElicitParams::Url(u),
                        Err(_) => ElicitParams::Unknown(v),
                    }
                }
                Some(_) => ElicitParams::Unknown(serde_json::to_value(&f).unwrap_or(Value::Null)),
            },
            Wire::Url { mode, params } if mode == "url" => ElicitParams::Url(params),
            Wire::Url { mode, params } => {
                let mut v = serde_json::to_value(&params).unwrap_or(Value::Null);
                if let Value::Object(o) = &mut v {
                    o.insert("mode".into(), Value::String(mode));
                }
                ElicitParams::Unknown(v)
            }
            // Form or URL params that did not decode: that decode's error.
            Wire::Other(v) => match v.get("mode").map(Value::as_str) {
                None | Some(Some("form")) => {
                    let e = ElicitFormParams::deserialize(v).err();
                    return Err(serde::de::Error::custom(e.map_or_else(
                        || "invalid form params".to_owned(),
                        |e| e.to_string(),
                    )));
                }
                Some(Some("url")) => {
                    let mut v = v;
                    if let Value::Object(o) = &mut v {
                        o.remove("mode");
                    }
                    let e = ElicitUrlParams::deserialize(v).err();
                    return Err(serde::de::Error::custom(e.map_or_else(
                        || "invalid URL params".to_owned(),
                        |e| e.to_string(),
                    )));
                }
                _ => ElicitParams::Unknown(v),
            },
        })
    }
}

/// Form-mode params: a message and a flat object schema of primitive fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitFormParams {
    /// `"form"`, or absent (always absent before 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The message shown to the user.
    pub message: String,
    /// What to ask for.
    pub requested_schema: ElicitSchema,
    /// Run as a task (2025-11-25 tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitFormParams {
    /// Form params asking `message` with `schema`.
    pub fn new(message: impl Into<String>, schema: ElicitSchema) -> Self {
        ElicitFormParams {
            mode: None,
            message: message.into(),
            requested_schema: schema,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// URL-mode params (2025-11-25+): send the user to `url` out of band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitUrlParams {
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Correlates `notifications/elicitation/complete` (required in
    /// 2025-11-25, gone in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Run as a task (2025-11-25 tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `requestedSchema` of a form: an object of primitive properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitSchema {
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Field name → field schema, in the server's order.
    #[serde(default)]
    pub properties: Properties,
    /// Required field names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// `$schema` (2025-11-25+).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitSchema {
    /// An object schema with `properties`.
    pub fn new(properties: impl Into<Properties>) -> Self {
        ElicitSchema {
            schema_type: "object".into(),
            properties: properties.into(),
            required: None,
            schema: None,
            extra: JsonObject::new(),
        }
    }
}

/// A form's fields, in the order the server wrote them: the order a person
/// is asked in. (A JSON object's member order is the author's; a sorted map
/// would ask for "address" before "name".) A name written twice keeps its
/// last schema at its first place, as a JSON parser keeps the last value.
///
/// Lookups and inserts take constant time (an insertion-ordered hash map),
/// so decoding a form of n fields costs O(n) whatever the server sends.
///
/// ```
/// use mcp_proto::schema::ElicitSchema;
///
/// let schema: ElicitSchema = serde_json::from_str(
///     r#"{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}"#,
/// )?;
/// let names: Vec<&str> = schema.properties.iter().map(|(name, _)| name).collect();
/// assert_eq!(names, ["name", "age"]);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Properties(IndexMap<String, PrimitiveSchema>);

/// Equal when they hold the same fields in the same order (the order is
/// what a person is asked in).
impl PartialEq for Properties {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().eq(other.0.iter())
    }
}

impl Properties {
    /// No fields.
    pub fn new() -> Self {
        Properties(IndexMap::new())
    }

    /// The schema of the field `name`.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchema> {
        self.0.get(name)
    }

    /// Sets the schema of `name`: in place if it is there (returning the
    /// old one), else as the last field.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        schema: PrimitiveSchema,
    ) -> Option<PrimitiveSchema> {
        self.0.insert(name.into(), schema)
    }

    /// The fields in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &PrimitiveSchema)> {
        self.0.iter().map(|(n, s)| (n.as_str(), s))
    }

    /// How many fields.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&str> for Properties {
    type Output = PrimitiveSchema;

    /// The schema of the field `name`. Panics when there is none (as a
    /// map's index does); [`get`](Properties::get) does not.
    fn index(&self, name: &str) -> &PrimitiveSchema {
        match self.get(name) {
            Some(s) => s,
            None => panic!("no field named {name:?}"),
        }
    }
}

impl<N: Into<String>> FromIterator<(N, PrimitiveSchema)> for Properties {
    fn from_iter<I: IntoIterator<Item = (N, PrimitiveSchema)>>(iter: I) -> Self {
        let mut p = Properties::new();
        for (n, s) in iter {
            p.insert(n, s);
        }
        p
    }
}

impl From<BTreeMap<String, PrimitiveSchema>> for Properties {
    fn from(map: BTreeMap<String, PrimitiveSchema>) -> Self {
        Properties(map.into_iter().collect())
    }
}

/// The fields in order, as `(&name, &schema)`: [`Properties`]' iterator.
#[derive(Debug, Clone)]
pub struct PropertiesIter<'a>(indexmap::map::Iter<'a, String, PrimitiveSchema>);

impl<'a> Iterator for PropertiesIter<'a> {
    type Item = (&'a String, &'a PrimitiveSchema);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for PropertiesIter<'_> {}

impl<'a> IntoIterator for &'a Properties {
    type Item = (&'a String, &'a PrimitiveSchema);
    type IntoIter = PropertiesIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        PropertiesIter(self.0.iter())
    }
}

impl Serialize for Properties {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (n, schema) in &self.0 {
            m.serialize_entry(n, schema)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Properties {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Properties;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of field schemas")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Properties, A::Error> {
                // The hint is the server's word: capped, the map grows as
                // fields actually arrive.
                let room = a.size_hint().unwrap_or(0).min(1024);
                let mut p = Properties(IndexMap::with_capacity(room));
                while let Some((name, schema)) = a.next_entry::<String, PrimitiveSchema>()? {
                    p.insert(name, schema);
                }
                Ok(p)
            }
        }
        d.deserialize_map(Visit)
    }
}

/// The schema of one form field.
///
/// Decoding picks the variant from `type` and the enum keywords; a field
/// this crate cannot read decodes to [`PrimitiveSchema::Unknown`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchema {
    /// `{"type": "string"}`.
    String(StringSchema),
    /// `{"type": "number" | "integer"}`.
    Number(NumberSchema),
    /// `{"type": "boolean"}`.
    Boolean(BooleanSchema),
    /// `{"type": "string", "enum": [...]}`.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// `{"type": "string", "oneOf": [{"const", "title"}]}` (2025-11-25+).
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// `{"type": "array", "items": {"enum": [...]}}` (2025-11-25+).
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// `{"type": "array", "items": {"anyOf": [{"const", "title"}]}}` (2025-11-25+).
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// `{"type": "string", "enum": [...], "enumNames": [...]}` (deprecated).
    LegacyTitled(LegacyTitledEnumSchema),
    /// A schema this crate does not know, kept as JSON.
    Unknown(Value),
}

impl Serialize for PrimitiveSchema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PrimitiveSchema::String(x) => x.serialize(s),
            PrimitiveSchema::Number(x) => x.serialize(s),
            PrimitiveSchema::Boolean(x) => x.serialize(s),
            PrimitiveSchema::UntitledSingleSelect(x) => x.serialize(s),
            PrimitiveSchema::TitledSingleSelect(x) => x.serialize(s),
            PrimitiveSchema::UntitledMultiSelect(x) => x.serialize(s),
            PrimitiveSchema::TitledMultiSelect(x) => x.serialize(s),
            PrimitiveSchema::LegacyTitled(x) => x.serialize(s),
            PrimitiveSchema::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchema {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(PrimitiveSchema::from_value(v))
    }
}

impl PrimitiveSchema {
    fn from_value(v: Value) -> Self {
        fn typed<T: serde::de::DeserializeOwned>(
            v: Value,
            wrap: fn(T) -> PrimitiveSchema,
        ) -> PrimitiveSchema {
            match T::deserialize(&v) {
                Ok(t) => wrap(t),
                Err(_) => PrimitiveSchema::Unknown(v),
            }
        }
        let has = |k: &str| v.get(k).is_some();
        match v.get("type").and_then(Value::as_str) {
            Some("string") if has("oneOf") => typed(v, PrimitiveSchema::TitledSingleSelect),
            Some("string") if has("enum") && has("enumNames") => {
                typed(v, PrimitiveSchema::LegacyTitled)
            }
            Some("string") if has("enum") => typed(v, PrimitiveSchema::UntitledSingleSelect),
            Some("string") => typed(v, PrimitiveSchema::String),
            Some("number" | "integer") => typed(v, PrimitiveSchema::Number),
            Some("boolean") => typed(v, PrimitiveSchema::Boolean),
            Some("array") if v.get("items").and_then(|i| i.get("anyOf")).is_some() => {
                typed(v, PrimitiveSchema::TitledMultiSelect)
            }
            Some("array") => typed(v, PrimitiveSchema::UntitledMultiSelect),
            _ => PrimitiveSchema::Unknown(v),
        }
    }
}

/// A string field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// `email`, `uri`, `date` or `date-time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A number or integer field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<f64>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A boolean field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BooleanSchema {
    /// `"boolean"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice among plain strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UntitledSingleSelectEnumSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One titled choice: a value and its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TitledOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label.
    pub title: String,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice among titled options (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledSingleSelectEnumSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<TitledOption>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `items` of an untitled multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UntitledItems {
    /// `"string"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `items` of a titled multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledItems {
    /// The choices.
    pub any_of: Vec<TitledOption>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Several choices among plain strings (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledMultiSelectEnumSchema {
    /// `"array"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Several choices among titled options (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectEnumSchema {
    /// `"array"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice with parallel `enumNames` labels (deprecated, 2025-06-18 style).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegacyTitledEnumSchema {
    /// `"string"`.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels, parallel to `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

string_enum! {
    /// The user's answer to an elicitation.
    ElicitAction {
        /// `"accept"`: submitted (form: `content` holds the values).
        Accept = "accept",
        /// `"decline"`: explicitly refused.
        Decline = "decline",
        /// `"cancel"`: dismissed without choosing.
        Cancel = "cancel",
    }
}

/// Result of `elicitation/create` (sent by the client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Form values (only with `accept` in form mode): field → string,
    /// number, boolean or array of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// `accept` with form values.
    pub fn accept(content: JsonObject) -> Self {
        Self::new(ElicitAction::Accept).with_content(content)
    }

    /// `decline`.
    pub fn decline() -> Self {
        Self::new(ElicitAction::Decline)
    }

    /// `cancel`.
    pub fn cancel() -> Self {
        Self::new(ElicitAction::Cancel)
    }

    /// Sets the form values.
    #[must_use]
    pub fn with_content(mut self, content: JsonObject) -> Self {
        self.content = Some(content);
        self
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25): a URL-mode
/// elicitation finished out of band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteParams {
    /// The `elicitationId` of the URL-mode request.
    pub elicitation_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}
