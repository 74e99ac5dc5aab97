//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

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

impl DefValidator {
    fn defs(&self) -> &serde_json::Map<String, Value> {
        self.schema[self.defs_key]
            .as_object()
            .expect("definitions object")
    }

    /// Flattens `$ref`, `allOf`, `anyOf` and `oneOf` into the leaf schemas.
    fn leaves<'a>(&'a self, s: &'a Value, out: &mut Vec<&'a Value>, depth: usize) {
        if depth > 12 {
            return;
        }
        if let Some(d) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .and_then(|n| self.defs().get(n))
        {
            self.leaves(d, out, depth + 1);
        }
        for k in ["allOf", "anyOf", "oneOf"] {
            if let Some(a) = s.get(k).and_then(Value::as_array) {
                for b in a {
                    self.leaves(b, out, depth + 1);
                }
            }
        }
        out.push(s);
    }

    /// Members of `instance`, at any depth, that definition `def` does not
    /// declare. The schemas allow extra members, so this catches what
    /// validation cannot: a field of another revision leaking into this one.
    /// `_meta` and free-form values (JSON Schemas, arguments, structured
    /// content, metadata, experimental/extension settings) are not entered.
    pub fn undeclared(&self, def: &str, instance: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let root = &self.defs()[def];
        self.walk(&[root], instance, "", &mut out);
        out.retain(|k| k != "jsonrpc" && k != "id");
        out
    }

    fn walk(&self, parts: &[&Value], inst: &Value, path: &str, out: &mut Vec<String>) {
        const FREE: &[&str] = &[
            "_meta",
            "inputSchema",
            "outputSchema",
            "arguments",
            "input",
            "structuredContent",
            "metadata",
            "experimental",
            "extensions",
            "data",
        ];
        let mut leaves = Vec::new();
        for p in parts {
            self.leaves(p, &mut leaves, 0);
        }
        match inst {
            Value::Object(o) => {
                let declared: std::collections::BTreeSet<&String> = leaves
                    .iter()
                    .filter_map(|l| l.get("properties").and_then(Value::as_object))
                    .flat_map(|p| p.keys())
                    .collect();
                let maps: Vec<&Value> = leaves
                    .iter()
                    .filter_map(|l| l.get("additionalProperties"))
                    .filter(|a| a.is_object() && !a.as_object().is_some_and(|m| m.is_empty()))
                    .collect();
                if declared.is_empty() && maps.is_empty() {
                    return; // free-form object
                }
                for (k, v) in o {
                    if FREE.contains(&k.as_str()) {
                        continue;
                    }
                    let at = format!("{path}{k}");
                    if declared.contains(k) {
                        let subs: Vec<&Value> = leaves
                            .iter()
                            .filter_map(|l| l.get("properties").and_then(|p| p.get(k)))
                            .collect();
                        self.walk(&subs, v, &format!("{at}."), out);
                    } else if !maps.is_empty() {
                        self.walk(&maps, v, &format!("{at}."), out);
                    } else {
                        out.push(at);
                    }
                }
            }
            Value::Array(a) => {
                let items: Vec<&Value> = leaves.iter().filter_map(|l| l.get("items")).collect();
                if items.is_empty() {
                    return;
                }
                for (i, v) in a.iter().enumerate() {
                    self.walk(&items, v, &format!("{path}{i}."), out);
                }
            }
            _ => {}
        }
    }
}
