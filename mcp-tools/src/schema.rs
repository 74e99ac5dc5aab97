//! Checking the model's arguments against a tool's input schema.
//!
//! Without the `jsonschema` feature, a small built-in validator checks the
//! subset of JSON Schema that catches most model mistakes, and ignores every
//! other keyword (it never rejects what a full validator would accept):
//!
//! - `type`: a name or an array of names (`object`, `array`, `string`,
//!   `number`, `integer`, `boolean`, `null`); `integer` accepts `2.0`,
//! - `enum` and `const` (JSON equality),
//! - for objects: `required`, `properties` (recursively) and
//!   `additionalProperties: false`,
//! - for arrays: `items` when it is one schema (recursively).
//!
//! `$ref`, `anyOf`, `oneOf`, `allOf`, `not`, `if`, formats, patterns and
//! bounds are not checked; the server still validates. With the `jsonschema`
//! feature, the whole schema is checked by the `jsonschema` crate instead.

use mcp_proto::RawJson;
use serde_json::Value;

/// At most this many problems are reported for one call.
pub const MAX_REPORTED_PROBLEMS: usize = 8;

/// How deep the built-in validator follows nested schemas.
const MAX_DEPTH: usize = 32;

/// A compiled argument checker for one schema.
pub(crate) enum Checker {
    /// The built-in subset validator.
    Subset(Value),
    #[cfg(feature = "jsonschema")]
    /// The full validator.
    Full(Box<jsonschema::Validator>),
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Checker::Subset(_) => f.write_str("Checker::Subset"),
            #[cfg(feature = "jsonschema")]
            Checker::Full(_) => f.write_str("Checker::Full"),
        }
    }
}

impl Checker {
    /// Compiles `schema`. With the `jsonschema` feature, a schema that
    /// crate cannot compile falls back to the subset validator (logged).
    pub(crate) fn new(schema: &RawJson) -> Self {
        let value = crate::tool::schema_value(schema);
        #[cfg(feature = "jsonschema")]
        {
            match jsonschema::validator_for(&value) {
                Ok(v) => return Checker::Full(Box::new(v)),
                Err(e) => {
                    tracing::debug!(error = %e, "the tool's schema does not compile; using the subset validator");
                }
            }
        }
        Checker::Subset(value)
    }

    /// Checks `value`; the error lists the problems, one per line-ish,
    /// separated by `; `.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        let problems = match self {
            Checker::Subset(schema) => {
                let mut problems = Vec::new();
                check_subset(schema, value, &mut String::new(), &mut problems, 0);
                problems.truncate(MAX_REPORTED_PROBLEMS);
                problems
            }
            #[cfg(feature = "jsonschema")]
            Checker::Full(v) => v
                .iter_errors(value)
                .take(MAX_REPORTED_PROBLEMS)
                .map(|e| {
                    let path = e.instance_path().to_string();
                    format!("{}: {}", if path.is_empty() { "/" } else { &path }, e)
                })
                .collect(),
        };
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// Checks `value` against `schema` with the built-in subset validator.
///
/// ```
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
///     "required": ["city"],
/// });
/// assert!(mcp_tools::check_arguments(&schema, &json!({"city": "Oslo", "days": 3})).is_ok());
/// assert_eq!(
///     mcp_tools::check_arguments(&schema, &json!({"days": "3"})).unwrap_err(),
///     "/: missing required property `city`; /days: expected integer, got string"
/// );
/// ```
pub fn check_arguments(schema: &Value, value: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    check_subset(schema, value, &mut String::new(), &mut problems, 0);
    problems.truncate(MAX_REPORTED_PROBLEMS);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn has_type(v: &Value, ty: &str) -> bool {
    match ty {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        "integer" => matches!(v, Value::Number(n) if is_integer(n)),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        // An unknown type name: do not reject.
        _ => true,
    }
}

fn at(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

fn check_subset(
    schema: &Value,
    value: &Value,
    path: &mut String,
    problems: &mut Vec<String>,
    depth: usize,
) {
    if problems.len() >= MAX_REPORTED_PROBLEMS || depth > MAX_DEPTH {
        return;
    }
    let Value::Object(schema) = schema else {
        // `false` rejects everything; `true` and junk accept.
        if schema == &Value::Bool(false) {
            problems.push(format!("{}: no value is allowed here", at(path)));
        }
        return;
    };
    match schema.get("type") {
        Some(Value::String(ty)) if !has_type(value, ty) => {
            problems.push(format!(
                "{}: expected {ty}, got {}",
                at(path),
                type_name(value)
            ));
            return;
        }
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            if !names.is_empty() && !names.iter().any(|t| has_type(value, t)) {
                problems.push(format!(
                    "{}: expected one of {}, got {}",
                    at(path),
                    names.join(", "),
                    type_name(value)
                ));
                return;
            }
        }
        _ => {}
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.iter().any(|o| json_eq(o, value)) {
            let shown: Vec<String> = options.iter().take(10).map(Value::to_string).collect();
            problems.push(format!(
                "{}: {} is not one of {}",
                at(path),
                value,
                shown.join(", ")
            ));
        }
    }
    if let Some(c) = schema.get("const") {
        if !json_eq(c, value) {
            problems.push(format!("{}: must be {c}, got {value}", at(path)));
        }
    }
    match value {
        Value::Object(obj) => {
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(name) {
                        problems.push(format!("{}: missing required property `{name}`", at(path)));
                    }
                }
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (key, v) in obj {
                let len = path.len();
                path.push('/');
                push_pointer_token(path, key);
                match props.and_then(|p| p.get(key)) {
                    Some(sub) => check_subset(sub, v, path, problems, depth + 1),
                    None if closed => {
                        let allowed: Vec<&str> = props
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        problems.push(format!(
                            "{path}: unknown property (allowed: {})",
                            allowed.join(", ")
                        ));
                    }
                    None => {}
                }
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema @ Value::Object(_)) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    check_subset(item_schema, v, path, problems, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// JSON equality where `1` equals `1.0` (as JSON Schema requires).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// JSON Pointer escaping (RFC 6901).
fn push_pointer_token(path: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// A compiled output-schema checker (feature `jsonschema`).
#[cfg(feature = "jsonschema")]
pub(crate) fn output_checker(schema: &RawJson) -> Option<Box<jsonschema::Validator>> {
    match jsonschema::validator_for(&crate::tool::schema_value(schema)) {
        Ok(v) => Some(Box::new(v)),
        Err(e) => {
            tracing::warn!(error = %e, "the tool's output schema does not compile; structured content will not be checked");
            None
        }
    }
}
