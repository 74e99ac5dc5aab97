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

use std::collections::{HashMap, HashSet};

use mcp_proto::RawJson;
use serde_json::Value;

/// At most this many problems are reported for one call.
pub const MAX_REPORTED_PROBLEMS: usize = 8;

/// How deep the built-in validator follows nested schemas.
const MAX_DEPTH: usize = 32;

/// A compiled argument checker for one schema.
pub(crate) enum Checker {
    /// The built-in subset validator.
    Subset(Box<Node>),
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
        Checker::Subset(Box::new(Node::compile(&value, 0)))
    }

    /// Checks `value`; the error lists the problems, one per line-ish,
    /// separated by `; `.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        let problems = match self {
            Checker::Subset(node) => node.problems(value),
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
    let problems = Node::compile(schema, 0).problems(value);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The keywords of one schema the subset validator reads, compiled once:
/// `type` names as a set of kinds and `enum` as a set of canonical keys,
/// so checking a value costs O(its size), however many names or options
/// the server's schema lists (an array of n items against an enum of m
/// options is n lookups, not n × m comparisons).
pub(crate) struct Node {
    /// The schema is `false`: no value is allowed.
    reject_all: bool,
    /// `type`, when it restricts anything.
    types: Option<Types>,
    /// `enum`.
    options: Option<Options>,
    /// `const`.
    constant: Option<Value>,
    /// `required`.
    required: Vec<String>,
    /// `properties`, in the schema's order (for the "allowed" list).
    properties: Vec<(String, Node)>,
    /// Where each property's schema is in `properties`.
    by_name: HashMap<String, usize>,
    /// `additionalProperties: false`.
    closed: bool,
    /// `items`, when it is one schema.
    items: Option<Box<Node>>,
}

/// `type`: the kinds a value may be.
struct Types {
    /// `"string"` (reported as `expected string`), or an array of names
    /// (reported as `expected one of a, b`).
    single: bool,
    names: Vec<String>,
    /// One bit per kind ([`kind_bit`]).
    allowed: u8,
}

/// `enum`: the canonical key of each option ([`canonical`]), and the
/// first ten as the message shows them.
struct Options {
    keys: HashSet<String>,
    shown: Vec<String>,
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const INTEGER: u8 = 4;
const NUMBER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;

/// The kinds a type name admits; `None` for a name JSON Schema does not
/// have (which rejects nothing).
fn type_bits(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "integer" => INTEGER,
        "number" => INTEGER | NUMBER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => return None,
    })
}

/// The kind of `v` (an integral number is an integer).
fn kind_bit(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(n) if is_integer(n) => INTEGER,
        Value::Number(_) => NUMBER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

impl Node {
    /// Compiles `schema`; below [`MAX_DEPTH`] every schema accepts
    /// everything (the validator does not follow deeper).
    fn compile(schema: &Value, depth: usize) -> Node {
        let mut node = Node {
            reject_all: false,
            types: None,
            options: None,
            constant: None,
            required: Vec::new(),
            properties: Vec::new(),
            by_name: HashMap::new(),
            closed: false,
            items: None,
        };
        if depth > MAX_DEPTH {
            return node;
        }
        let Value::Object(schema) = schema else {
            // `false` rejects everything; `true` and junk accept.
            node.reject_all = schema == &Value::Bool(false);
            return node;
        };
        node.types = match schema.get("type") {
            Some(Value::String(ty)) => type_bits(ty).map(|allowed| Types {
                single: true,
                names: vec![ty.clone()],
                allowed,
            }),
            Some(Value::Array(types)) => {
                let names: Vec<String> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                let mut allowed = 0;
                let mut unknown = false;
                for n in &names {
                    match type_bits(n) {
                        Some(b) => allowed |= b,
                        None => unknown = true,
                    }
                }
                (!names.is_empty() && !unknown).then_some(Types {
                    single: false,
                    names,
                    allowed,
                })
            }
            _ => None,
        };
        if let Some(Value::Array(options)) = schema.get("enum") {
            node.options = Some(Options {
                keys: options
                    .iter()
                    .map(|o| {
                        let mut key = String::new();
                        canonical(o, &mut key);
                        key
                    })
                    .collect(),
                shown: options.iter().take(10).map(Value::to_string).collect(),
            });
        }
        node.constant = schema.get("const").cloned();
        if let Some(Value::Array(required)) = schema.get("required") {
            node.required = required
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            node.by_name.reserve(props.len());
            for (name, sub) in props {
                node.by_name.insert(name.clone(), node.properties.len());
                node.properties
                    .push((name.clone(), Node::compile(sub, depth + 1)));
            }
        }
        node.closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        if let Some(item_schema @ Value::Object(_)) = schema.get("items") {
            node.items = Some(Box::new(Node::compile(item_schema, depth + 1)));
        }
        node
    }

    /// At most [`MAX_REPORTED_PROBLEMS`] problems with `value`.
    fn problems(&self, value: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        self.check(value, &mut String::new(), &mut problems);
        problems.truncate(MAX_REPORTED_PROBLEMS);
        problems
    }

    fn check(&self, value: &Value, path: &mut String, problems: &mut Vec<String>) {
        if problems.len() >= MAX_REPORTED_PROBLEMS {
            return;
        }
        if self.reject_all {
            problems.push(format!("{}: no value is allowed here", at(path)));
            return;
        }
        if let Some(t) = &self.types {
            let bit = kind_bit(value);
            if t.allowed & bit == 0 {
                problems.push(if t.single {
                    format!(
                        "{}: expected {}, got {}",
                        at(path),
                        t.names.join(""),
                        type_name(value)
                    )
                } else {
                    format!(
                        "{}: expected one of {}, got {}",
                        at(path),
                        t.names.join(", "),
                        type_name(value)
                    )
                });
                return;
            }
        }
        if let Some(o) = &self.options {
            let mut key = String::new();
            canonical(value, &mut key);
            if !o.keys.contains(&key) {
                problems.push(format!(
                    "{}: {} is not one of {}",
                    at(path),
                    value,
                    o.shown.join(", ")
                ));
            }
        }
        if let Some(c) = &self.constant {
            if !json_eq(c, value) {
                problems.push(format!("{}: must be {c}, got {value}", at(path)));
            }
        }
        match value {
            Value::Object(obj) => {
                for name in &self.required {
                    if !obj.contains_key(name) {
                        problems.push(format!("{}: missing required property `{name}`", at(path)));
                    }
                }
                for (key, v) in obj {
                    let len = path.len();
                    path.push('/');
                    push_pointer_token(path, key);
                    match self.by_name.get(key).and_then(|&i| self.properties.get(i)) {
                        Some((_, sub)) => sub.check(v, path, problems),
                        None if self.closed => {
                            let allowed: Vec<&str> =
                                self.properties.iter().map(|(n, _)| n.as_str()).collect();
                            problems.push(format!(
                                "{path}: unknown property (allowed: {})",
                                allowed.join(", ")
                            ));
                        }
                        None => {}
                    }
                    path.truncate(len);
                    if problems.len() >= MAX_REPORTED_PROBLEMS {
                        return;
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for (i, v) in items.iter().enumerate() {
                        let len = path.len();
                        path.push('/');
                        path.push_str(&i.to_string());
                        item.check(v, path, problems);
                        path.truncate(len);
                        if problems.len() >= MAX_REPORTED_PROBLEMS {
                            return;
                        }
                    }
                }
            }
            _ => {}
        }
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

fn at(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// Writes a key for `v` such that values equal as JSON Schema compares
/// them (`1` equals `1.0`; [`json_eq`]) get the same key: numbers by their
/// value as `f64` (zero's sign dropped), strings and member names
/// length-prefixed, objects in their map's (sorted) order. Numbers beyond
/// 2^53 that differ only past `f64`'s precision share a key: the subset
/// validator then accepts a value a full one would refuse, never the
/// reverse.
fn canonical(v: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match v {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            let f = if f == 0.0 { 0.0 } else { f };
            let _ = write!(out, "#{f:?};");
        }
        Value::String(s) => {
            let _ = write!(out, "s{}:{s}", s.len());
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, item) in map {
                let _ = write!(out, "{}:{k}", k.len());
                canonical(item, out);
            }
            out.push('}');
        }
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
