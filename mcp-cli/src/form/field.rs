//! One field of a form: what the schema lets the user type, how it is
//! shown, and how a typed answer is checked and turned into its value. No
//! terminal here: the parent module asks, this module decides.

use std::collections::{HashMap, HashSet};

use mcp_cli::terminal::line;
use mcp_proto::schema::{ElicitFormParams, PrimitiveSchema};
use serde_json::Value;

/// One field of the form, as asked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) required: bool,
    kind: Kind,
    default: Option<Value>,
}

/// A choice field's (value, label) pairs in the server's order, indexed
/// once so that reading an answer or showing a value costs O(1) per
/// choice typed, however many the server listed.
#[derive(Debug, Clone)]
struct Choices {
    list: Vec<(String, String)>,
    /// Exact value → its first position.
    by_value: HashMap<String, usize>,
    /// Value or label, ASCII-lowercased → the first position naming it.
    by_name: HashMap<String, usize>,
}

impl Choices {
    fn new(list: Vec<(String, String)>) -> Self {
        let mut by_value = HashMap::with_capacity(list.len());
        let mut by_name = HashMap::with_capacity(list.len());
        for (i, (v, l)) in list.iter().enumerate() {
            by_value.entry(v.clone()).or_insert(i);
            by_name.entry(v.to_ascii_lowercase()).or_insert(i);
            by_name.entry(l.to_ascii_lowercase()).or_insert(i);
        }
        Choices {
            list,
            by_value,
            by_name,
        }
    }

    /// The label of the value `v` (`v` itself if it is not listed).
    fn label(&self, v: &str) -> String {
        match self.by_value.get(v).and_then(|&i| self.list.get(i)) {
            Some((_, l)) => l.clone(),
            None => v.to_owned(),
        }
    }

    /// A choice by its number (1-based), value or label (ASCII
    /// case-insensitive): the first listed that matches.
    fn pick(&self, typed: &str) -> Result<String, String> {
        if let Ok(n) = typed.parse::<usize>()
            && let Some((v, _)) = n.checked_sub(1).and_then(|i| self.list.get(i))
        {
            return Ok(v.clone());
        }
        self.by_name
            .get(&typed.to_ascii_lowercase())
            .and_then(|&i| self.list.get(i))
            .map(|(v, _)| v.clone())
            .ok_or_else(|| format!("one of 1 to {}, or a value listed, please", self.list.len()))
    }
}

/// The same choices in the same order (the indexes follow from them).
impl PartialEq for Choices {
    fn eq(&self, other: &Self) -> bool {
        self.list == other.list
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<String>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Bool,
    /// One of (value, label).
    One(Choices),
    /// Several of (value, label).
    Many {
        choices: Choices,
        min: Option<u64>,
        max: Option<u64>,
    },
    /// A field this client cannot ask.
    Unknown,
}

impl Field {
    pub(crate) fn new(name: &str, schema: &PrimitiveSchema, required: bool) -> Field {
        let plain = |vals: &[String]| -> Choices {
            Choices::new(vals.iter().map(|v| (v.clone(), v.clone())).collect())
        };
        let titled = |opts: &[mcp_proto::schema::TitledOption]| -> Choices {
            Choices::new(
                opts.iter()
                    .map(|o| (o.value.clone(), o.title.clone()))
                    .collect(),
            )
        };
        let (title, description, kind, default) = match schema {
            PrimitiveSchema::String(s) => (
                s.title.clone(),
                s.description.clone(),
                Kind::Text {
                    min: s.min_length,
                    max: s.max_length,
                    format: s.format.clone(),
                },
                s.default.clone().map(Value::from),
            ),
            PrimitiveSchema::Number(n) => (
                n.title.clone(),
                n.description.clone(),
                Kind::Number {
                    integer: n.schema_type == "integer",
                    min: n.minimum,
                    max: n.maximum,
                },
                n.default
                    .and_then(|d| number_value(d, n.schema_type == "integer")),
            ),
            PrimitiveSchema::Boolean(b) => (
                b.title.clone(),
                b.description.clone(),
                Kind::Bool,
                b.default.map(Value::from),
            ),
            PrimitiveSchema::UntitledSingleSelect(e) => (
                e.title.clone(),
                e.description.clone(),
                Kind::One(plain(&e.values)),
                e.default.clone().map(Value::from),
            ),
            PrimitiveSchema::TitledSingleSelect(e) => (
                e.title.clone(),
                e.description.clone(),
                Kind::One(titled(&e.one_of)),
                e.default.clone().map(Value::from),
            ),
            PrimitiveSchema::LegacyTitled(e) => {
                let names = e.enum_names.clone().unwrap_or_default();
                let choices = e
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        (
                            v.clone(),
                            names.get(i).cloned().unwrap_or_else(|| v.clone()),
                        )
                    })
                    .collect();
                (
                    e.title.clone(),
                    e.description.clone(),
                    Kind::One(Choices::new(choices)),
                    e.default.clone().map(Value::from),
                )
            }
            PrimitiveSchema::UntitledMultiSelect(e) => (
                e.title.clone(),
                e.description.clone(),
                Kind::Many {
                    choices: plain(&e.items.values),
                    min: e.min_items,
                    max: e.max_items,
                },
                e.default.clone().map(Value::from),
            ),
            PrimitiveSchema::TitledMultiSelect(e) => (
                e.title.clone(),
                e.description.clone(),
                Kind::Many {
                    choices: titled(&e.items.any_of),
                    min: e.min_items,
                    max: e.max_items,
                },
                e.default.clone().map(Value::from),
            ),
            _ => (None, None, Kind::Unknown, None),
        };
        Field {
            name: name.to_owned(),
            title,
            description,
            required,
            kind,
            default,
        }
    }

    /// Whether this client can ask the field.
    pub(crate) fn known(&self) -> bool {
        self.kind != Kind::Unknown
    }

    /// The field's heading: title, name, whether required, description.
    pub(super) fn heading(&self) -> String {
        let mut h = match &self.title {
            Some(t) if t != &self.name => format!("{} ({})", line(t), line(&self.name)),
            _ => line(&self.name),
        };
        if self.required {
            h.push_str(", required");
        }
        if let Some(d) = self.description.as_deref().filter(|d| !d.trim().is_empty()) {
            h.push_str(": ");
            h.push_str(&line(d));
        }
        h
    }

    /// The numbered choices, for choice fields.
    pub(super) fn choices(&self) -> Option<String> {
        let list = match &self.kind {
            Kind::One(c) | Kind::Many { choices: c, .. } => c,
            _ => return None,
        };
        let shown: Vec<String> = list
            .list
            .iter()
            .enumerate()
            .map(|(i, (_, label))| format!("{}) {}", i + 1, line(label)))
            .collect();
        Some(shown.join("  "))
    }

    /// What to type, and the default in brackets.
    pub(super) fn prompt(&self) -> String {
        let mut p = match &self.kind {
            Kind::Text { min, max, format } => {
                let mut p = match format.as_deref() {
                    Some("email") => "email address".to_owned(),
                    Some("uri") => "URI".to_owned(),
                    Some("date") => "date (YYYY-MM-DD)".to_owned(),
                    Some("date-time") => "date and time (YYYY-MM-DDTHH:MM:SSZ)".to_owned(),
                    _ => "text".to_owned(),
                };
                match (min, max) {
                    (Some(a), Some(b)) => p.push_str(&format!(", {a} to {b} characters")),
                    (Some(a), None) => p.push_str(&format!(", at least {a} characters")),
                    (None, Some(b)) => p.push_str(&format!(", at most {b} characters")),
                    (None, None) => {}
                }
                p
            }
            Kind::Number { integer, min, max } => {
                let mut p = if *integer { "integer" } else { "number" }.to_owned();
                p.push_str(&range(*min, *max));
                p
            }
            Kind::Bool => "yes or no".to_owned(),
            Kind::One(_) => "choose one (number or value)".to_owned(),
            Kind::Many { min, max, .. } => {
                let count = match (min, max) {
                    (Some(a), Some(b)) if a == b => format!(" {a}"),
                    (Some(a), Some(b)) => format!(" {a} to {b}"),
                    (Some(a), None) => format!(" at least {a}"),
                    (None, Some(b)) => format!(" up to {b}"),
                    (None, None) => String::new(),
                };
                format!("choose{count} (numbers or values, separated by commas)")
            }
            Kind::Unknown => "value".to_owned(),
        };
        if let Some(d) = &self.default {
            p.push_str(&format!(" [{}]", line(&self.show(d))));
        }
        p
    }

    /// A value as the person reads it (labels for choices).
    pub(super) fn show(&self, v: &Value) -> String {
        let label = |s: &str| -> String {
            match &self.kind {
                Kind::One(c) | Kind::Many { choices: c, .. } => c.label(s),
                _ => s.to_owned(),
            }
        };
        match v {
            Value::String(s) => label(s),
            Value::Bool(true) => "yes".into(),
            Value::Bool(false) => "no".into(),
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), label))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        }
    }

    /// The value for what was typed: `Ok(None)` leaves the field out.
    pub(crate) fn parse(&self, typed: &str) -> Result<Option<Value>, String> {
        let typed = typed.trim();
        if typed.is_empty() {
            return match (&self.default, self.required) {
                (Some(d), _) => Ok(Some(d.clone())),
                (None, true) => Err("required: type a value (Ctrl-D declines the request)".into()),
                (None, false) => Ok(None),
            };
        }
        match &self.kind {
            Kind::Text { min, max, format } => {
                let n = typed.chars().count() as u64;
                if let Some(m) = min.filter(|m| n < *m) {
                    return Err(format!("at least {m} characters, please"));
                }
                if let Some(m) = max.filter(|m| n > *m) {
                    return Err(format!("at most {m} characters, please"));
                }
                if let Some(why) = format.as_deref().and_then(|f| bad_format(f, typed)) {
                    return Err(why);
                }
                Ok(Some(Value::from(typed)))
            }
            Kind::Number { integer, min, max } => {
                let x: f64 = if *integer {
                    typed
                        .parse::<i64>()
                        .map_err(|_| "a whole number, please".to_owned())?
                        as f64
                } else {
                    typed
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| "a number, please".to_owned())?
                };
                if min.is_some_and(|m| x < m) || max.is_some_and(|m| x > m) {
                    return Err(format!("a number{}, please", range(*min, *max)));
                }
                if *integer {
                    return Ok(typed.parse::<i64>().ok().map(Value::from));
                }
                Ok(number_value(x, false))
            }
            Kind::Bool => match typed.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Ok(Some(Value::Bool(true))),
                "n" | "no" | "false" | "0" => Ok(Some(Value::Bool(false))),
                _ => Err("yes or no, please".into()),
            },
            Kind::One(choices) => choices.pick(typed).map(|v| Some(Value::from(v))),
            Kind::Many { choices, min, max } => {
                let mut picked: Vec<String> = Vec::new();
                let mut seen = HashSet::new();
                for part in typed.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let v = choices.pick(part)?;
                    if seen.insert(v.clone()) {
                        picked.push(v);
                    }
                }
                let n = picked.len() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    let (a, b) = (
                        min.unwrap_or(0),
                        max.map_or("any".into(), |m| m.to_string()),
                    );
                    return Err(format!("choose {a} to {b}, please"));
                }
                Ok(Some(Value::from(picked)))
            }
            Kind::Unknown => Err("this client cannot ask for this field".into()),
        }
    }
}

/// ` from 1 to 100`, ` at least 0`, ...
fn range(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!(" from {a} to {b}"),
        (Some(a), None) => format!(" of at least {a}"),
        (None, Some(b)) => format!(" of at most {b}"),
        (None, None) => String::new(),
    }
}

/// `x` as JSON: an integer field's value as an integer.
fn number_value(x: f64, integer: bool) -> Option<Value> {
    if integer && x.fract() == 0.0 && x.abs() < 9.0e15 {
        return Some(Value::from(x as i64));
    }
    serde_json::Number::from_f64(x).map(Value::Number)
}

/// Why `typed` is not in `format`, if it is not.
fn bad_format(format: &str, typed: &str) -> Option<String> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |s: &str| {
        let mut parts = s.split('-');
        let (Some(y), Some(m), Some(d), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        digits(y, 4)
            && digits(m, 2)
            && digits(d, 2)
            && (1..=12).contains(&m.parse::<u8>().unwrap_or(0))
            && (1..=31).contains(&d.parse::<u8>().unwrap_or(0))
    };
    let ok = match format {
        "email" => typed.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !typed.contains(char::is_whitespace)
        }),
        "uri" => typed.split_once(':').is_some_and(|(scheme, rest)| {
            !rest.is_empty()
                && scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !typed.contains(char::is_whitespace)
        }),
        "date" => date(typed),
        "date-time" => typed
            .split_once(['T', 't'])
            .is_some_and(|(d, t)| date(d) && t.len() >= 5 && t.get(2..3) == Some(":")),
        _ => true,
    };
    (!ok).then(|| {
        match format {
            "email" => "an email address like name@example.com, please",
            "uri" => "a URI like https://example.com, please",
            "date" => "a date like 2025-12-31, please",
            _ => "a date and time like 2025-12-31T23:59:00Z, please",
        }
        .to_owned()
    })
}

/// The form's fields in the order asked: the order the server wrote them.
pub(crate) fn fields(p: &ElicitFormParams) -> Vec<Field> {
    let required: HashSet<&str> = p
        .requested_schema
        .required
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    p.requested_schema
        .properties
        .iter()
        .map(|(name, schema)| Field::new(name, schema, required.contains(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(schema: &str, required: bool) -> Field {
        Field::new("f", &serde_json::from_str(schema).unwrap(), required)
    }

    #[test]
    fn text_fields_check_length_and_format() {
        let f = field(r#"{"type":"string","minLength":2,"maxLength":4}"#, true);
        assert_eq!(f.parse("abc"), Ok(Some(Value::from("abc"))));
        assert!(f.parse("a").is_err());
        assert!(f.parse("abcde").is_err());
        assert!(f.parse("").unwrap_err().starts_with("required"));
        let email = field(r#"{"type":"string","format":"email"}"#, false);
        assert!(email.parse("ann@example.com").is_ok());
        for bad in ["ann", "ann@", "@x.org", "ann@localhost", "a b@x.org"] {
            assert!(email.parse(bad).is_err(), "{bad}");
        }
        assert_eq!(email.parse(""), Ok(None));
        let date = field(r#"{"type":"string","format":"date"}"#, false);
        assert!(date.parse("2025-12-31").is_ok());
        assert!(date.parse("2025-13-01").is_err() && date.parse("31.12.2025").is_err());
        let uri = field(r#"{"type":"string","format":"uri"}"#, false);
        assert!(uri.parse("https://example.com/x").is_ok());
        assert!(uri.parse("example dot com").is_err());
        let d = field(r#"{"type":"string","default":"It was"}"#, false);
        assert_eq!(d.parse("  "), Ok(Some(Value::from("It was"))));
        assert!(d.prompt().ends_with("[It was]"), "{}", d.prompt());
    }

    #[test]
    fn numbers_keep_their_range_and_kind() {
        let i = field(
            r#"{"type":"integer","minimum":1,"maximum":100,"default":42}"#,
            false,
        );
        assert_eq!(i.parse("7"), Ok(Some(Value::from(7))));
        assert_eq!(i.parse(""), Ok(Some(Value::from(42))));
        assert!(i.parse("0").is_err() && i.parse("101").is_err() && i.parse("7.5").is_err());
        assert_eq!(i.prompt(), "integer from 1 to 100 [42]");
        let n = field(
            r#"{"type":"number","minimum":0,"maximum":1000,"default":3.14}"#,
            false,
        );
        assert_eq!(n.parse("2.5"), Ok(Some(Value::from(2.5))));
        assert!(n.parse("NaN").is_err() && n.parse("inf").is_err() && n.parse("-1").is_err());
    }

    #[test]
    fn booleans_and_choices() {
        let b = field(r#"{"type":"boolean"}"#, true);
        assert_eq!(b.parse("Yes"), Ok(Some(Value::Bool(true))));
        assert_eq!(b.parse("n"), Ok(Some(Value::Bool(false))));
        assert!(b.parse("maybe").is_err());
        let one = field(
            r#"{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Green Lantern"}],"default":"hero-1"}"#,
            false,
        );
        assert_eq!(one.parse("2"), Ok(Some(Value::from("hero-2"))));
        assert_eq!(one.parse("green lantern"), Ok(Some(Value::from("hero-2"))));
        assert_eq!(one.parse(""), Ok(Some(Value::from("hero-1"))));
        assert!(one.parse("3").is_err());
        assert_eq!(one.choices().unwrap(), "1) Superman  2) Green Lantern");
        assert!(one.prompt().ends_with("[Superman]"));
        let legacy = field(
            r#"{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"]}"#,
            false,
        );
        assert_eq!(legacy.parse("dogs"), Ok(Some(Value::from("pet-2"))));
        let many = field(
            r#"{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["Guitar","Piano","Drums"]}}"#,
            true,
        );
        assert_eq!(
            many.parse("1, 3"),
            Ok(Some(serde_json::json!(["Guitar", "Drums"])))
        );
        assert!(many.parse("1,2,3").is_err());
        assert!(many.parse(",").is_err());
        let titled_many = field(
            r#"{"type":"array","items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"}]},"default":["fish-1"]}"#,
            false,
        );
        assert_eq!(
            titled_many.parse("salmon,1"),
            Ok(Some(serde_json::json!(["fish-2", "fish-1"])))
        );
        assert!(titled_many.prompt().ends_with("[Tuna]"));
    }

    #[test]
    fn server_text_in_a_form_is_made_safe() {
        let f = Field::new(
            "n\u{1b}[2K",
            &serde_json::from_str(
                r#"{"type":"string","title":"T\u001b]0;x\u0007","description":"d\u202e","enum":["a\u009b"]}"#,
            )
            .unwrap(),
            true,
        );
        let all = format!("{}{}{}", f.heading(), f.choices().unwrap(), f.prompt());
        assert!(
            !all.contains(['\u{1b}', '\u{7}', '\u{202e}', '\u{9b}']),
            "{all:?}"
        );
    }

    /// The form's own work over a server's form is linear, as every decode
    /// is (`tests/scaling.rs`); `cargo xtask scaling` runs this.
    #[test]
    #[ignore = "timing: run by `cargo xtask scaling`"]
    fn scaling_of_the_form() {
        use test_support::scaling::{Shape, check, repeated};
        fn form(b: &[u8]) -> ElicitFormParams {
            serde_json::from_slice(b).unwrap()
        }
        check(&[
            Shape {
                name: "form: required fields",
                build: |n| {
                    let props = repeated(
                        "{",
                        n,
                        ",",
                        |i| format!(r#""f{i}":{{"type":"string"}}"#),
                        "}",
                    );
                    let req = repeated("[", n, ",", |i| format!(r#""f{i}""#), "]");
                    format!(
                        r#"{{"message":"m","requestedSchema":{{"type":"object","properties":{},"required":{}}}}}"#,
                        String::from_utf8(props).unwrap(),
                        String::from_utf8(req).unwrap()
                    )
                    .into_bytes()
                },
                run: |b| assert!(fields(&form(b)).iter().all(|f| f.required)),
            },
            Shape {
                name: "form: choices picked",
                build: |n| {
                    let opts = repeated(
                        "[",
                        n,
                        ",",
                        |i| format!(r#"{{"const":"v{i}","title":"T{i}"}}"#),
                        "]",
                    );
                    let typed = repeated("", n, ", ", |i| format!("t{i}"), "");
                    format!(
                        "{{\"message\":\"m\",\"requestedSchema\":{{\"type\":\"object\",\"properties\":{{\"c\":{{\"type\":\"array\",\"items\":{{\"anyOf\":{}}}}}}}}}}}\n{}",
                        String::from_utf8(opts).unwrap(),
                        String::from_utf8(typed).unwrap()
                    )
                    .into_bytes()
                },
                run: |b| {
                    let (json, typed) = std::str::from_utf8(b).unwrap().split_once('\n').unwrap();
                    let fields = fields(&form(json.as_bytes()));
                    let picked = fields[0].parse(typed).unwrap().unwrap();
                    assert!(picked.as_array().is_some_and(|a| !a.is_empty()));
                    assert!(!fields[0].show(&picked).is_empty());
                },
            },
        ]);
    }
}
