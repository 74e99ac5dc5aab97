//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

use serde_json::Value;

/// `tests/fixtures` of this crate.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The five revisions, oldest first.
pub const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// Reads a JSON file.
pub fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// JSON numbers compare by value: `50` and `50.0` are the same JSON number
/// (our `f64` fields re-encode integers as `50.0`). Every other difference counts.
pub fn normalize(v: Value) -> Value {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::from(i),
            (None, Some(u), _) => Value::from(u),
            (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(normalize).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, normalize(v))).collect()),
        other => other,
    }
}

/// Loads a revision's schema.
pub fn schema(rev: &str) -> Value {
    read_json(&fixtures().join("schemas").join(rev).join("schema.json"))
}

/// Validates `instance` against the definition `def` of `schema` (not a
/// loose union). Returns the error messages; empty means valid.
pub struct DefValidator {
    schema: Value,
    defs_key: &'static str,
    cache: std::collections::HashMap<String, jsonschema::Validator>,
}

impl DefValidator {
    /// A validator over a whole revision schema.
    pub fn new(schema: Value) -> Self {
        let defs_key = if schema.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        DefValidator {
            schema,
            defs_key,
            cache: Default::default(),
        }
    }

    /// Whether the schema defines `def`.
    pub fn has(&self, def: &str) -> bool {
        self.schema[self.defs_key].get(def).is_some()
    }

    /// The names of `def`'s declared properties (empty if none).
    pub fn properties(&self, def: &str) -> Vec<String> {
        self.schema[self.defs_key][def]
            .get("properties")
            .and_then(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Validates `instance` against `#/<defs>/<def>`.
    pub fn errors(&mut self, def: &str, instance: &Value) -> Vec<String> {
        assert!(self.has(def), "schema has no definition {def}");
        if !self.cache.contains_key(def) {
            let mut root = self.schema.clone();
            let obj = root.as_object_mut().expect("schema is an object");
            obj.insert(
                "$ref".into(),
                Value::from(format!("#/{}/{}", self.defs_key, def)),
            );
            // The root of these schemas is a bare object of definitions: drop
            // any top-level keywords but the dialect and the definitions.
            obj.retain(|k, _| k == "$schema" || k == "$ref" || k == self.defs_key);
            let v =
                jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("compiling {def}: {e}"));
            self.cache.insert(def.to_owned(), v);
        }
        self.cache[def]
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }
}
