//! `mcp call TOOL key=value ...`: arguments as people type them, turned
//! into the JSON object the tool's `inputSchema` describes, before anything
//! is sent.
//!
//! - `key=value`: the value typed by the property's schema: `string`,
//!   `number`, `integer`, `boolean`, `null`, an `enum` (one of its values),
//!   a union (`type: [..]`, `anyOf`, `oneOf`: the first type the text
//!   reads as, a string last);
//! - an `array` property takes one item per repetition (`tag=a tag=b`),
//!   each typed by `items`;
//! - `a.b=value` sets `b` inside the object property `a`;
//! - `key:=JSON` sets raw JSON;
//! - `@FILE` reads a JSON object from a file, `-` from stdin; `key=value`
//!   items after it add to it or replace its keys.
//!
//! A key the schema does not have (unless it allows other properties), a
//! value the type does not read, a missing required argument: each is an
//! error naming what the schema expects. The result is then checked
//! against the whole schema (`mcp_tools::check_arguments`).

use std::io::Read as _;

use serde_json::{Map, Number, Value};

/// Largest `@FILE` or stdin read for the arguments: 16 MiB.
pub(crate) const MAX_ARGS_INPUT: u64 = 16 * 1024 * 1024;

/// How deep `$ref`s are followed.
const MAX_REF_DEPTH: usize = 16;

/// Whether `items` are typed arguments (not the one JSON object of the
/// JSON form): each is `key=value`, `key:=JSON`, `@FILE` or `-`.
pub(crate) fn check_syntax(items: &[String]) -> Result<(), String> {
    for item in items {
        if item == "-" || item.starts_with('@') {
            continue;
        }
        match item.split_once('=') {
            Some((key, _)) if !key.trim_end_matches(':').is_empty() => {}
            _ => {
                return Err(format!(
                    "argument {item:?} is not key=value, key:=JSON, @FILE or - (or one JSON object, like '{{\"a\": 1}}')"
                ));
            }
        }
    }
    if items.iter().filter(|i| *i == "-").count() > 1 {
        return Err("stdin (-) can be read once".into());
    }
    Ok(())
}

/// The arguments object for `items`, typed by `schema` (the tool's
/// `inputSchema`). `stdin` is read for `-`.
pub(crate) fn build(
    schema: &Value,
    items: &[String],
    stdin: &mut dyn std::io::Read,
) -> Result<Value, String> {
    let mut args = Map::new();
    // Keys set by `key=value` once (not array items): a second is a mistake.
    let mut set: Vec<String> = Vec::new();
    for item in items {
        if item == "-" {
            merge(&mut args, read_object("stdin", stdin)?);
            continue;
        }
        if let Some(path) = item.strip_prefix('@') {
            let file = std::fs::File::open(path).map_err(|e| format!("@{path}: {e}"))?;
            merge(&mut args, read_object(&format!("@{path}"), &mut { file })?);
            continue;
        }
        let Some((key, text)) = item.split_once('=') else {
            return Err(format!("argument {item:?} is not key=value"));
        };
        let (key, raw) = match key.strip_suffix(':') {
            Some(k) => (k, true),
            None => (key, false),
        };
        set_path(schema, &mut args, key, text, raw, &mut set)?;
    }
    let value = Value::Object(args);
    required(schema, &value)?;
    mcp_tools::check_arguments(schema, &value).map_err(|problems| {
        format!("the arguments do not fit the tool's inputSchema: {problems}")
    })?;
    Ok(value)
}

fn read_object(what: &str, input: &mut dyn std::io::Read) -> Result<Map<String, Value>, String> {
    let mut text = String::new();
    input
        .take(MAX_ARGS_INPUT + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{what}: {e}"))?;
    if text.len() as u64 > MAX_ARGS_INPUT {
        return Err(format!("{what}: more than {MAX_ARGS_INPUT} bytes"));
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("{what}: expected a JSON object of arguments")),
        Err(e) => Err(format!("{what}: not valid JSON: {e}")),
    }
}

fn merge(args: &mut Map<String, Value>, more: Map<String, Value>) {
    args.extend(more);
}

/// Sets `key` (`a.b.c`) in `args` from `text`.
fn set_path(
    root: &Value,
    args: &mut Map<String, Value>,
    key: &str,
    text: &str,
    raw: bool,
    set: &mut Vec<String>,
) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("argument name {key:?} has an empty part"));
    }
    let mut schema = resolve(root, root);
    let mut object = args;
    for (i, part) in parts.iter().enumerate() {
        let here = parts[..=i].join(".");
        let prop = property(root, schema, part).ok_or_else(|| unknown(root, schema, &here))?;
        if i + 1 < parts.len() {
            if !accepts(root, prop, "object") {
                return Err(format!(
                    "argument {here:?} is {}, not an object: {key:?} cannot be set inside it",
                    describe(root, prop)
                ));
            }
            let slot = object
                .entry(part.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(inner) = slot else {
                return Err(format!("argument {here:?} is already set to a non-object"));
            };
            object = inner;
            schema = prop;
            continue;
        }
        let value = if raw {
            serde_json::from_str(text)
                .map_err(|e| format!("argument {key:?}: not valid JSON after := ({e})"))?
        } else if let Some(items) = array_items(root, prop) {
            // Repetition appends; the first one starts the array.
            let item = convert(root, items, text).map_err(|e| format!("argument {key:?}: {e}"))?;
            match object.get_mut(*part) {
                Some(Value::Array(a)) => {
                    a.push(item);
                    return Ok(());
                }
                _ => Value::Array(vec![item]),
            }
        } else {
            if set.iter().any(|k| k == key) {
                return Err(format!(
                    "argument {key:?} is given twice (it is {}, not an array)",
                    describe(root, prop)
                ));
            }
            convert(root, prop, text).map_err(|e| format!("argument {key:?}: {e}"))?
        };
        set.push(key.to_owned());
        object.insert(part.to_string(), value);
    }
    Ok(())
}

/// `schema` with `$ref`s to the root's `#/$defs/..` or `#/definitions/..`
/// followed.
fn resolve<'s>(root: &'s Value, mut schema: &'s Value) -> &'s Value {
    for _ in 0..MAX_REF_DEPTH {
        let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
            return schema;
        };
        let Some(pointer) = r.strip_prefix('#') else {
            return schema;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => return schema,
        }
    }
    schema
}

/// The alternatives of a union (`anyOf`, `oneOf`), or the schema itself.
fn alternatives<'s>(root: &'s Value, schema: &'s Value) -> Vec<&'s Value> {
    let schema = resolve(root, schema);
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = schema.get(key) {
            return list.iter().map(|s| resolve(root, s)).collect();
        }
    }
    vec![schema]
}

/// The type names a schema allows (empty: no `type` said).
fn types(root: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for s in alternatives(root, schema) {
        match s.get("type") {
            Some(Value::String(t)) => out.push(t.clone()),
            Some(Value::Array(ts)) => {
                out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
            }
            _ => {}
        }
    }
    out
}

fn accepts(root: &Value, schema: &Value, ty: &str) -> bool {
    let t = types(root, schema);
    t.is_empty() || t.iter().any(|x| x == ty)
}

/// The `items` schema of an array property (not a union with a scalar).
fn array_items<'s>(root: &'s Value, schema: &'s Value) -> Option<&'s Value> {
    let alts = alternatives(root, schema);
    let arrays: Vec<&Value> = alts
        .iter()
        .copied()
        .filter(|s| s.get("type").and_then(Value::as_str) == Some("array"))
        .collect();
    let scalar = alts.iter().any(
        |s| matches!(s.get("type").and_then(Value::as_str), Some(t) if t != "array" && t != "null"),
    );
    match (arrays.first(), scalar) {
        (Some(a), false) => Some(a.get("items").map_or(&Value::Null, |i| resolve(root, i))),
        _ => None,
    }
}

/// The schema of property `name` of the object `schema`: from
/// `properties`, else `additionalProperties` when it allows others.
fn property<'s>(root: &'s Value, schema: &'s Value, name: &str) -> Option<&'s Value> {
    for s in alternatives(root, schema) {
        if let Some(p) = s.get("properties").and_then(|p| p.get(name)) {
            return Some(resolve(root, p));
        }
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(true)) => Some(&Value::Null),
        Some(s @ Value::Object(_)) => Some(resolve(root, s)),
        _ => None,
    }
}

/// "unknown argument ...: the tool takes a (integer, required), b (string)".
fn unknown(root: &Value, schema: &Value, key: &str) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let takes: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| {
                    let req = if required.contains(&name.as_str()) {
                        ", required"
                    } else {
                        ""
                    };
                    format!("{name} ({}{req})", describe(root, resolve(root, p)))
                })
                .collect()
        })
        .unwrap_or_default();
    if takes.is_empty() {
        format!("unknown argument {key:?}: the schema names no arguments here")
    } else {
        format!("unknown argument {key:?}: it takes {}", takes.join(", "))
    }
}

/// What a schema expects, in words: `integer`, `one of "a", "b"`,
/// `array of string`, `integer or null`.
fn describe(root: &Value, schema: &Value) -> String {
    let schema = resolve(root, schema);
    if let Some(Value::Array(values)) = schema.get("enum") {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", values.join(", "));
    }
    if let Some(c) = schema.get("const") {
        return format!("exactly {c}");
    }
    let alts = alternatives(root, schema);
    if alts.len() > 1 {
        let parts: Vec<String> = alts.iter().map(|a| describe(root, a)).collect();
        return parts.join(" or ");
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => match schema.get("items") {
            Some(items) => format!("array of {}", describe(root, items)),
            None => "array".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any value".into(),
    }
}

/// `text` as the value `schema` describes.
fn convert(root: &Value, schema: &Value, text: &str) -> Result<Value, String> {
    let schema = resolve(root, schema);
    let expected = || describe(root, schema);
    for alt in alternatives(root, schema) {
        if let Some(Value::Array(values)) = alt.get("enum") {
            if let Some(v) = values.iter().find(|v| enum_matches(v, text)) {
                return Ok(v.clone());
            }
        }
        if let Some(c) = alt.get("const")
            && enum_matches(c, text)
        {
            return Ok(c.clone());
        }
    }
    let has_enum = alternatives(root, schema)
        .iter()
        .any(|a| a.get("enum").is_some() || a.get("const").is_some());
    let types = types(root, schema);
    if types.is_empty() {
        if has_enum {
            return Err(format!("expected {}, got {text:?}", expected()));
        }
        // No type said: the text as it is.
        return Ok(Value::String(text.to_owned()));
    }
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("null") && text == "null" {
        return Ok(Value::Null);
    }
    if has("boolean") {
        match text.to_ascii_lowercase().as_str() {
            "true" => return Ok(Value::Bool(true)),
            "false" => return Ok(Value::Bool(false)),
            _ => {}
        }
    }
    if has("integer")
        && let Some(n) = number(text).filter(|n| n.is_i64() || n.is_u64())
    {
        return Ok(Value::Number(n));
    }
    if has("number")
        && let Some(n) = number(text)
    {
        return Ok(Value::Number(n));
    }
    if has("string") && !has_enum_only(root, schema) {
        return Ok(Value::String(text.to_owned()));
    }
    if has("object") || has("array") {
        let members = if has("object") {
            ", or set its members with key.member=value"
        } else {
            ""
        };
        return Err(format!(
            "expected {}: give it as JSON with key:=JSON{members}",
            expected()
        ));
    }
    Err(format!("expected {}, got {text:?}", expected()))
}

/// Whether every string alternative of `schema` is an enum (so a free
/// string is not accepted).
fn has_enum_only(root: &Value, schema: &Value) -> bool {
    let strings: Vec<&Value> = alternatives(root, schema)
        .into_iter()
        .filter(|a| {
            a.get("type").and_then(Value::as_str) == Some("string") || a.get("enum").is_some()
        })
        .collect();
    !strings.is_empty()
        && strings
            .iter()
            .all(|a| a.get("enum").is_some() || a.get("const").is_some())
}

fn enum_matches(v: &Value, text: &str) -> bool {
    match v {
        Value::String(s) => s == text,
        // `1`, `true`, `null`: the JSON text of the value.
        other => {
            let written = other.to_string();
            written.as_str() == text
        }
    }
}

/// A JSON number written as `text` (finite), as JSON reads it.
fn number(text: &str) -> Option<Number> {
    let t = text.trim();
    if t.is_empty() || t.starts_with('+') {
        return None;
    }
    serde_json::from_str::<Number>(t).ok()
}

/// Every required argument present, at the top and inside each object
/// given (through `$ref`s and unions, which the schema check after does
/// not follow).
fn required(root: &Value, value: &Value) -> Result<(), String> {
    let mut missing = Vec::new();
    required_at(root, root, value, "", &mut missing, 0);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "missing required argument{}: {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ))
    }
}

fn required_at(
    root: &Value,
    schema: &Value,
    value: &Value,
    prefix: &str,
    missing: &mut Vec<String>,
    depth: usize,
) {
    let Value::Object(given) = value else {
        return;
    };
    if depth > MAX_REF_DEPTH {
        return;
    }
    let Some(object) = alternatives(root, schema)
        .into_iter()
        .find(|a| a.get("properties").is_some() || a.get("required").is_some())
    else {
        return;
    };
    let required = object.get("required").and_then(Value::as_array);
    for k in required.into_iter().flatten().filter_map(Value::as_str) {
        if !given.contains_key(k) {
            let p = property(root, object, k).unwrap_or(&Value::Null);
            missing.push(format!("{prefix}{k} ({})", describe(root, p)));
        }
    }
    for (k, v) in given {
        if let Some(p) = property(root, object, k) {
            required_at(root, p, v, &format!("{prefix}{k}."), missing, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b(schema: &Value, items: &[&str]) -> Result<Value, String> {
        let items: Vec<String> = items.iter().map(|s| (*s).to_owned()).collect();
        check_syntax(&items)?;
        build(schema, &items, &mut std::io::empty())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "loud": {"type": "boolean"},
                "mode": {"enum": ["fast", "slow"], "type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "sizes": {"type": "array", "items": {"type": "integer"}},
                "origin": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "level": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
            },
            "required": ["name", "count"],
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}
        })
    }

    #[test]
    fn every_type_is_read_from_text() {
        let v = b(
            &schema(),
            &[
                "name=Ann",
                "count=3",
                "ratio=0.5",
                "loud=true",
                "mode=slow",
                "tags=a",
                "tags=b c",
                "sizes=1",
                "sizes=2",
                "origin.x=1",
                "origin.y=-2",
                "note=null",
                "level=7",
            ],
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"name": "Ann", "count": 3, "ratio": 0.5, "loud": true, "mode": "slow",
                   "tags": ["a", "b c"], "sizes": [1, 2], "origin": {"x": 1, "y": -2},
                   "note": null, "level": 7})
        );
        let v = b(&schema(), &["name=007", "count=1", "level=high", "note=x"]).unwrap();
        assert_eq!(v["name"], "007");
        assert_eq!(v["level"], "high");
        let v = b(
            &schema(),
            &["name:=\"x\"", "count:=2", "origin:={\"x\": 1, \"y\": 2}"],
        )
        .unwrap();
        assert_eq!(v["origin"], json!({"x": 1, "y": 2}));
    }

    #[test]
    fn mistakes_name_what_the_schema_expects() {
        let e = |items: &[&str]| b(&schema(), items).unwrap_err();
        let msg = e(&["name=a", "count=three"]);
        assert!(
            msg.contains("\"count\": expected integer, got \"three\""),
            "{msg}"
        );
        let msg = e(&["name=a", "count=1.5"]);
        assert!(msg.contains("expected integer"), "{msg}");
        let msg = e(&["name=a", "count=1", "mode=medium"]);
        assert!(msg.contains("one of \"fast\", \"slow\""), "{msg}");
        let msg = e(&["name=a", "cout=1"]);
        assert!(
            msg.starts_with("unknown argument \"cout\": it takes "),
            "{msg}"
        );
        assert!(msg.contains("count (integer, required)"), "{msg}");
        let msg = e(&["name=a"]);
        assert_eq!(msg, "missing required argument: count (integer)");
        let msg = e(&["name=a", "count=1", "loud=yes"]);
        assert!(msg.contains("expected boolean"), "{msg}");
        let msg = e(&["name=a", "name=b", "count=1"]);
        assert!(msg.contains("given twice"), "{msg}");
        let msg = e(&["name=a", "count=1", "origin=1"]);
        assert!(msg.contains(":="), "{msg}");
        let msg = e(&["name=a", "count=1", "origin.z=1"]);
        assert!(msg.contains("unknown argument \"origin.z\""), "{msg}");
        let msg = e(&["name=a", "count=1", "ratio.x=1"]);
        assert!(msg.contains("not an object"), "{msg}");
        let msg = e(&["name=a", "count=1", "origin.x=1"]);
        assert_eq!(msg, "missing required argument: origin.y (integer)");
        let msg = e(&["name=a", "count=1", "tags:=[1]"]);
        assert!(
            msg.contains("inputSchema") && msg.contains("/tags/0"),
            "{msg}"
        );
        assert!(
            b(&schema(), &["oops"])
                .unwrap_err()
                .contains("not key=value")
        );
        assert!(b(&schema(), &["-", "-"]).is_err());
    }

    #[test]
    fn files_and_stdin_give_objects() {
        let items = vec!["-".to_owned(), "count=5".to_owned()];
        let v = build(
            &schema(),
            &items,
            &mut &br#"{"name": "from stdin", "count": 1}"#[..],
        )
        .unwrap();
        assert_eq!(v, json!({"name": "from stdin", "count": 5}));
        let e = build(&schema(), &items, &mut &b"[1]"[..]).unwrap_err();
        assert!(e.contains("expected a JSON object"), "{e}");
        let open = json!({"type": "object", "additionalProperties": true});
        assert_eq!(
            b(&open, &["anything=goes"]).unwrap(),
            json!({"anything": "goes"})
        );
        let none = json!({"type": "object"});
        assert!(
            b(&none, &["x=1"])
                .unwrap_err()
                .contains("names no arguments")
        );
    }
}
