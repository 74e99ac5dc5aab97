//! YAML (Goose's `config.yaml`) into a JSON value, from yaml-rust2's event
//! parser: nesting is bounded ([`MAX_DEPTH`]) and aliases are refused, so
//! a hostile file can neither overflow the stack nor expand exponentially
//! (a "billion laughs"). Goose writes its file with serde, which emits
//! neither. Plain scalars resolve as YAML 1.2's core schema says (`true`,
//! `null`, `~`, integers, floats); quoted ones are strings. Only the first
//! document is read.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Deepest nesting of mappings and sequences read.
const MAX_DEPTH: usize = 64;

/// Why the text is not YAML this crate reads: 1-based line and column.
#[derive(Debug)]
pub(crate) struct YamlError {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

fn error(mark: Marker, message: impl Into<String>) -> YamlError {
    YamlError {
        line: mark.line(),
        column: mark.col() + 1,
        message: message.into(),
    }
}

/// A mapping or sequence being built: a mapping keeps the key waiting for
/// its value.
enum Open {
    Mapping(Map<String, Value>, Option<String>),
    Sequence(Vec<Value>),
}

/// The first document of `text`; an empty text is `null`.
pub(crate) fn parse(text: &str) -> Result<Value, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| error(*e.marker(), e.info()))?;
        let value = match event {
            Event::StreamEnd | Event::DocumentEnd if stack.is_empty() => return Ok(Value::Null),
            Event::StreamStart | Event::DocumentStart | Event::Nothing => continue,
            Event::StreamEnd | Event::DocumentEnd => {
                return Err(error(mark, "the document ends inside a collection"));
            }
            Event::Alias(_) => {
                return Err(error(
                    mark,
                    "aliases (*name) are not read here: write the value out",
                ));
            }
            Event::Scalar(text, style, _, tag) => {
                let plain = style == TScalarStyle::Plain && tag.is_none();
                if plain {
                    resolve(text)
                } else {
                    Value::String(text)
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(error(
                        mark,
                        format!("nested deeper than {MAX_DEPTH} levels"),
                    ));
                }
                stack.push(if matches!(event, Event::MappingStart(..)) {
                    Open::Mapping(Map::new(), None)
                } else {
                    Open::Sequence(Vec::new())
                });
                continue;
            }
            Event::MappingEnd => match stack.pop() {
                Some(Open::Mapping(map, None)) => Value::Object(map),
                _ => return Err(error(mark, "unbalanced mapping")),
            },
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Sequence(items)) => Value::Array(items),
                _ => return Err(error(mark, "unbalanced sequence")),
            },
        };
        match stack.last_mut() {
            None => return Ok(value),
            Some(Open::Sequence(items)) => items.push(value),
            Some(Open::Mapping(map, key)) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                None => {
                    *key = Some(match value {
                        Value::String(s) => s,
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        Value::Null => "null".into(),
                        _ => return Err(error(mark, "a mapping key must be a scalar")),
                    });
                }
            },
        }
    }
}

/// A plain scalar as YAML 1.2's core schema types it.
fn resolve(text: String) -> Value {
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(&text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = text.parse::<i64>() {
            return Value::Number(i.into());
        }
    }
    let numeric = digits
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if numeric && let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
        return Value::Number(n);
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn goose_shapes_read_as_json() {
        let v = parse(
            "extensions:\n  fs:\n    type: stdio\n    cmd: npx\n    args: [\"-y\", 'x', 3]\n    enabled: true\n    timeout: 300\n    envs: {}\n    description: ~\n    ratio: 0.5\n",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"extensions": {"fs": {"type": "stdio", "cmd": "npx", "args": ["-y", "x", 3],
                "enabled": true, "timeout": 300, "envs": {}, "description": null, "ratio": 0.5}}})
        );
        assert_eq!(parse("").unwrap(), Value::Null);
        assert_eq!(
            parse("a: '1'\nb: 1.2.3\n").unwrap(),
            json!({"a": "1", "b": "1.2.3"})
        );
    }

    #[test]
    fn aliases_and_deep_nesting_are_refused() {
        let e = parse("a: &x [1]\nb: *x\n").unwrap_err();
        assert!(e.message.contains("aliases"), "{}", e.message);
        assert_eq!(e.line, 2);
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).is_err());
        let e = parse("a: [1, 2\n").unwrap_err();
        assert!(e.line >= 1);
    }
}
