//! [`ConfigFile`]: one file read, its format known, its servers parsed but
//! not yet expanded.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::entry::{RawServer, ShapeProblem, parse_server};
use crate::error::ConfigError;
use crate::formats::{self, UnknownKey};
use crate::model::{Format, InputSpec, ServerConfig, Source};
use crate::resolve::Resolver;
use crate::trust::ContentHash;

/// Largest configuration file read: 4 MiB. Server lists are a few KiB; a
/// bigger file is not one.
pub const MAX_CONFIG_SIZE: u64 = 4 * 1024 * 1024;

/// One configuration file, parsed. `${...}` is expanded later, by
/// [`resolve`](Self::resolve), so loading never asks the user anything.
///
/// A problem with the file as a whole (unreadable, bad JSON, no server
/// list) fails [`load`](Self::load); a problem with one server is kept and
/// returned by [`resolve_each`](Self::resolve_each) for that server only, so
/// one broken entry does not hide the others.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    source: Source,
    servers: Vec<Entry>,
    inputs: Vec<InputSpec>,
    /// Keys of server entries that the format does not document.
    unknown: Vec<UnknownKey>,
    /// The hash of the text parsed: what a trust decision is about.
    pub(crate) hash: ContentHash,
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    parsed: Result<RawServer, ShapeProblem>,
}

impl ConfigFile {
    /// Reads `path`, detecting the format from the file name (`.mcp.json`,
    /// `claude_desktop_config.json`, `.vscode/mcp.json`, `.cursor/mcp.json`,
    /// `mcp.json`), or else from its top-level key.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        Self::parse(path, &read(path)?, None)
    }

    /// Reads `path` as `format`, whatever its name.
    pub fn load_as(path: impl AsRef<Path>, format: Format) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        Self::parse(path, &read(path)?, Some(format))
    }

    /// Parses `text` as if read from `path` (which only names it in errors
    /// and picks the format when `format` is `None`).
    pub fn parse(
        path: impl Into<PathBuf>,
        text: &str,
        format: Option<Format>,
    ) -> Result<Self, ConfigError> {
        let path = path.into();
        let format = format.or_else(|| format_from_name(&path));
        let root = match format {
            Some(f) => crate::syntax::parse(&path, text, f)?,
            None => crate::syntax::json(&path, text, true)?,
        };
        let Value::Object(root) = root else {
            return Err(shape(&path, "(top level)", "expected an object"));
        };
        let format = match format {
            Some(f) => f,
            None => {
                let detected = format_from_shape(&path, &root)?;
                if !detected.allows_comments() {
                    // Detected a strict format after a lenient parse.
                    crate::syntax::json(&path, text, false)?;
                }
                detected
            }
        };
        Self::from_root(
            Source::new(path, format),
            &root,
            ContentHash::of(text.as_bytes()),
        )
    }

    /// The file whose top level (or section, see [`Source::section`]) is
    /// `root`, already parsed; `hash` is what a trust decision about it is
    /// about.
    pub(crate) fn from_root(
        source: Source,
        root: &Map<String, Value>,
        hash: ContentHash,
    ) -> Result<Self, ConfigError> {
        let (path, format) = (&source.path, source.format);
        let key = format.servers_key();
        let other = if key == "servers" {
            "mcpServers"
        } else {
            "servers"
        };
        let original = matches!(
            format,
            Format::ClaudeCode | Format::VsCode | Format::Cursor | Format::Standard
        );
        if original && !root.contains_key(key) && root.contains_key(other) {
            return Err(shape(
                path,
                other,
                &format!("the {format} format reads \"{key}\", not \"{other}\": rename the key"),
            ));
        }
        let mut servers = Vec::new();
        let mut unknown = Vec::new();
        match root.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, value) in map {
                    if let Value::Object(entry) = value
                        && formats::checks_keys(format, entry)
                    {
                        unknown.extend(formats::unknown_keys(format, entry).into_iter().map(
                            |key| UnknownKey {
                                path: path.clone(),
                                server: name.clone(),
                                key,
                            },
                        ));
                    }
                    let mut parsed = parse_server(format, name, value);
                    if let Ok(server) = &mut parsed {
                        formats::apply_file_settings(format, root, name, server);
                    }
                    servers.push(Entry {
                        name: name.clone(),
                        parsed,
                    });
                }
            }
            Some(_) => return Err(shape(path, key, "expected an object of servers")),
        }
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        let inputs = match (format, root.get("inputs")) {
            (Format::VsCode, Some(v)) => parse_inputs(path, v)?,
            _ => Vec::new(),
        };
        Ok(ConfigFile {
            source,
            servers,
            inputs,
            unknown,
            hash,
        })
    }

    /// Keys of this file's server entries that its format does not
    /// document: ignored, and worth a warning (a misspelt key).
    pub fn unknown_keys(&self) -> &[UnknownKey] {
        &self.unknown
    }

    /// The file, tagged as `host`'s configuration.
    pub(crate) fn with_host(mut self, host: crate::Host) -> Self {
        self.source.host = Some(host);
        self
    }

    /// The file and its format.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The format the file was read as.
    pub fn format(&self) -> Format {
        self.source.format
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.source.path
    }

    /// The servers' names, sorted.
    pub fn server_names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|e| e.name.as_str())
    }

    /// Every entry by name, sorted, with its parsed shape (`None`: an entry
    /// that cannot be started).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, Option<&RawServer>)> {
        self.servers
            .iter()
            .map(|e| (e.name.as_str(), e.parsed.as_ref().ok()))
    }

    /// Why the entry `name` cannot be started as written (its shape, or
    /// an entry only its host can run), found without expanding anything;
    /// `None` when it can be (or the file has no such entry).
    pub fn entry_error(&self, name: &str) -> Option<ConfigError> {
        let entry = self.servers.iter().find(|e| e.name == name)?;
        entry
            .parsed
            .as_ref()
            .err()
            .map(|p| p.to_error(&self.source.path, name))
    }

    /// The VS Code `inputs` declared in the file.
    pub fn inputs(&self) -> &[InputSpec] {
        &self.inputs
    }

    /// Expands every server; the first error wins. Use
    /// [`resolve_each`](Self::resolve_each) to keep going past a broken one.
    pub fn resolve(&self, resolver: &Resolver) -> Result<Vec<ServerConfig>, ConfigError> {
        self.resolve_each(resolver).into_iter().collect()
    }

    /// Expands every server, sorted by name, each on its own: a missing
    /// variable in one does not stop the others.
    pub fn resolve_each(&self, resolver: &Resolver) -> Vec<Result<ServerConfig, ConfigError>> {
        self.servers
            .iter()
            .map(|e| self.resolve_entry(e, resolver))
            .collect()
    }

    /// Expands the server called `name` only (`None` if the file has none),
    /// so inputs of the other servers are not asked.
    pub fn resolve_server(
        &self,
        name: &str,
        resolver: &Resolver,
    ) -> Option<Result<ServerConfig, ConfigError>> {
        let entry = self.servers.iter().find(|e| e.name == name)?;
        Some(self.resolve_entry(entry, resolver))
    }

    fn resolve_entry(&self, e: &Entry, resolver: &Resolver) -> Result<ServerConfig, ConfigError> {
        match &e.parsed {
            Ok(raw) => resolver.resolve_server(self, &e.name, raw),
            Err(p) => Err(p.to_error(&self.source.path, &e.name)),
        }
    }
}

fn read(path: &Path) -> Result<String, ConfigError> {
    read_limited(path, MAX_CONFIG_SIZE, "MAX_CONFIG_SIZE")
}

/// The text of `path`, refused when over `limit` bytes (`limit_name`
/// names the constant in the error).
pub(crate) fn read_limited(
    path: &Path,
    limit: u64,
    limit_name: &str,
) -> Result<String, ConfigError> {
    use std::io::Read as _;
    let io = |source| ConfigError::Io {
        path: path.to_owned(),
        source,
    };
    let too_big = |len: u64| {
        shape(
            path,
            "(file)",
            &format!("the file is {len} bytes, more than {limit_name} ({limit})"),
        )
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > limit {
        return Err(too_big(len));
    }
    // A file that grows while it is read stops at the limit.
    let mut text = String::new();
    file.take(limit + 1).read_to_string(&mut text).map_err(io)?;
    if text.len() as u64 > limit {
        return Err(too_big(text.len() as u64));
    }
    Ok(text)
}

fn shape(path: &Path, field: &str, message: &str) -> ConfigError {
    ConfigError::Shape {
        path: path.to_owned(),
        server: None,
        field: field.to_owned(),
        message: message.to_owned(),
    }
}

fn format_from_name(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|p| p.to_str());
    let extension = path.extension().and_then(|e| e.to_str());
    match (name, parent) {
        (".mcp.json" | ".claude.json" | "claude_desktop_config.json", _) => {
            Some(Format::ClaudeCode)
        }
        ("mcp.json", Some(".vscode")) => Some(Format::VsCode),
        ("mcp.json", Some(".cursor")) => Some(Format::Cursor),
        ("settings.json", Some(".gemini")) => Some(Format::Gemini),
        ("mcp_config.json", _) => Some(Format::Windsurf),
        ("settings.json", Some("zed" | "Zed" | ".zed")) => Some(Format::Zed),
        _ => match extension {
            Some("toml") => Some(Format::Codex),
            Some("yaml" | "yml") => Some(Format::Goose),
            _ => None,
        },
    }
}

fn format_from_shape(path: &Path, root: &Map<String, Value>) -> Result<Format, ConfigError> {
    let named_mcp_json = path.file_name().and_then(|n| n.to_str()) == Some("mcp.json");
    if root.contains_key("mcpServers") {
        Ok(if named_mcp_json {
            Format::Standard
        } else {
            Format::ClaudeCode
        })
    } else if root.contains_key("servers") {
        Ok(Format::VsCode)
    } else if root.contains_key("context_servers") {
        Ok(Format::Zed)
    } else {
        Err(ConfigError::UnknownFormat {
            path: path.to_owned(),
        })
    }
}

fn parse_inputs(path: &Path, v: &Value) -> Result<Vec<InputSpec>, ConfigError> {
    let Value::Array(items) = v else {
        return Err(shape(path, "inputs", "expected an array"));
    };
    let mut inputs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = |k: &str| format!("inputs[{i}].{k}");
        let Value::Object(o) = item else {
            return Err(shape(path, &format!("inputs[{i}]"), "expected an object"));
        };
        let string = |k: &str| -> Result<Option<String>, ConfigError> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(shape(path, &field(k), "expected a string")),
            }
        };
        match string("type")?.as_deref() {
            Some("promptString") => {}
            Some(other) => {
                return Err(shape(
                    path,
                    &field("type"),
                    &format!("input type {other:?} is not supported (only \"promptString\")"),
                ));
            }
            None => {
                return Err(shape(
                    path,
                    &field("type"),
                    "missing (use \"promptString\")",
                ));
            }
        }
        let Some(id) = string("id")? else {
            return Err(shape(path, &field("id"), "missing"));
        };
        let password = match o.get("password") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(shape(path, &field("password"), "expected true or false")),
        };
        inputs.push(InputSpec {
            id,
            description: string("description")?,
            password,
            default: string("default")?,
        });
    }
    Ok(inputs)
}
