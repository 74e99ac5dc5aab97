//! A file's text into a JSON value, whatever its syntax: JSON (strict, or
//! with comments where the format allows them), TOML (Codex) or YAML
//! (Goose). Every format is then read from the same [`Value`].

use std::path::Path;

use serde_json::Value;

use crate::error::ConfigError;
use crate::model::Format;

/// The text of `path`, read as `format` writes it.
pub(crate) fn parse(path: &Path, text: &str, format: Format) -> Result<Value, ConfigError> {
    match format {
        Format::Codex => toml(path, text),
        Format::Goose => yaml(path, text),
        _ => json(path, text, format.allows_comments()),
    }
}

/// JSON, or JSONC when `lenient`. A strict parse that fails on what JSONC
/// would accept says so in its hint.
pub(crate) fn json(path: &Path, text: &str, lenient: bool) -> Result<Value, ConfigError> {
    let result = if lenient {
        serde_json::from_str(&crate::jsonc::strip(text))
    } else {
        serde_json::from_str(text)
    };
    result.map_err(|e| {
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_owned(),
            None => message,
        };
        let hint = if !lenient && serde_json::from_str::<Value>(&crate::jsonc::strip(text)).is_ok()
        {
            " (this format is strict JSON: no comments or trailing commas)"
        } else {
            ""
        };
        ConfigError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message,
            hint,
        }
    })
}

/// TOML (toml-rs keeps its own nesting limit). Dates become strings.
#[cfg(feature = "toml")]
fn toml(path: &Path, text: &str) -> Result<Value, ConfigError> {
    toml::from_str::<Value>(text).map_err(|e| {
        // toml's span is a byte range; count lines and columns ourselves.
        let at = e.span().map_or(0, |s| s.start).min(text.len());
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ConfigError::Syntax {
            path: path.to_owned(),
            line,
            column,
            message: e.message().trim().to_owned(),
            hint: "",
        }
    })
}

#[cfg(not(feature = "toml"))]
fn toml(path: &Path, _text: &str) -> Result<Value, ConfigError> {
    Err(missing_feature(path, "Codex's config.toml", "toml"))
}

#[cfg(feature = "yaml")]
fn yaml(path: &Path, text: &str) -> Result<Value, ConfigError> {
    crate::yaml::parse(text).map_err(|e| ConfigError::Syntax {
        path: path.to_owned(),
        line: e.line,
        column: e.column,
        message: e.message,
        hint: "",
    })
}

#[cfg(not(feature = "yaml"))]
fn yaml(path: &Path, _text: &str) -> Result<Value, ConfigError> {
    Err(missing_feature(path, "Goose's config.yaml", "yaml"))
}

#[cfg(any(not(feature = "toml"), not(feature = "yaml")))]
fn missing_feature(path: &Path, what: &str, feature: &str) -> ConfigError {
    ConfigError::Shape {
        path: path.to_owned(),
        server: None,
        field: "(file)".into(),
        message: format!("reading {what} needs mcp-config's `{feature}` feature"),
    }
}
