//! Helpers shared by the tests.
#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mcp_config::{
    ConfigError, ConfigFile, Expanded, Format, InputError, InputSpec, RemoteConfig, Resolver,
    ServerConfig, StdioConfig, TransportConfig,
};

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

pub fn find<'a>(servers: &'a [ServerConfig], name: &str) -> &'a ServerConfig {
    servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name:?} in {servers:?}"))
}

pub fn stdio(s: &ServerConfig) -> &StdioConfig {
    match &s.transport {
        TransportConfig::Stdio(c) => c,
        other => panic!("{}: expected stdio, got {other:?}", s.name),
    }
}

pub fn http(s: &ServerConfig) -> &RemoteConfig {
    match &s.transport {
        TransportConfig::Http(c) => c,
        other => panic!("{}: expected http, got {other:?}", s.name),
    }
}

pub fn sse(s: &ServerConfig) -> &RemoteConfig {
    match &s.transport {
        TransportConfig::Sse(c) => c,
        other => panic!("{}: expected sse, got {other:?}", s.name),
    }
}

pub fn args(c: &StdioConfig) -> Vec<&str> {
    c.args.iter().map(Expanded::expose).collect()
}

pub fn get<'a>(pairs: &'a [(String, Expanded)], key: &str) -> &'a Expanded {
    &pairs
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no {key:?}"))
        .1
}

/// An input provider answering `answer-<id>` and recording every question.
#[derive(Clone, Default)]
pub struct Answers {
    pub asked: Arc<Mutex<Vec<InputSpec>>>,
}

impl Answers {
    pub fn provider(&self) -> impl Fn(&InputSpec) -> Result<String, InputError> + use<> {
        let asked = self.asked.clone();
        move |spec: &InputSpec| {
            asked.lock().unwrap().push(spec.clone());
            Ok(format!("answer-{}", spec.id))
        }
    }

    pub fn ids(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.id.clone())
            .collect()
    }
}

/// Expands `text` as the single argument of a stdio server in `format`.
pub fn expand_arg(
    format: Format,
    text: &str,
    resolver: &Resolver,
) -> Result<Expanded, ConfigError> {
    let key = format.servers_key();
    let inputs = r#"[{"type": "promptString", "id": "tok", "password": true},
                     {"type": "promptString", "id": "name"}]"#;
    let doc = format!(
        r#"{{"inputs": {inputs}, "{key}": {{"s": {{"type": "stdio", "command": "x", "args": [{}]}}}}}}"#,
        serde_json::Value::String(text.to_owned())
    );
    let file = ConfigFile::parse("test.json", &doc, Some(format))?;
    let servers = file.resolve(resolver)?;
    Ok(stdio(&servers[0]).args[0].clone())
}
