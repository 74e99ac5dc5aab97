//! [`ConfigFile`]: one file read, its format known, its servers parsed but
//! not yet expanded.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::ConfigError;
use crate::formats::{self, UnknownKey};
use crate::model::{
    Expanded, Format, InputSpec, OAuthConfig, SandboxConfig, ServerConfig, Source, ToolPolicyConfig,
};
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

/// A per-server problem found while parsing, turned into a [`ConfigError`]
/// (which is not `Clone`) each time it is reported.
#[derive(Debug, Clone)]
pub(crate) enum ShapeProblem {
    Shape {
        field: String,
        message: String,
    },
    UnknownType {
        value: String,
        expected: &'static str,
    },
    Missing {
        field: &'static str,
        hint: &'static str,
    },
    /// An entry of the host's that is not a server this crate can start
    /// (a Goose built-in, a Zed extension's server).
    Unsupported {
        message: String,
    },
}

impl ShapeProblem {
    pub(crate) fn shape(field: &str, message: &str) -> Self {
        ShapeProblem::Shape {
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// A server as written: strings still hold `${...}`.
#[derive(Debug, Clone)]
pub(crate) struct RawServer {
    pub(crate) transport: RawTransport,
    pub(crate) disabled: bool,
    pub(crate) include_tools: Option<Vec<String>>,
    pub(crate) exclude_tools: Vec<String>,
    pub(crate) tool_policy: ToolPolicyConfig,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
}

impl RawServer {
    /// A server reached through `transport`, every other field at its
    /// default.
    pub(crate) fn new(transport: RawTransport) -> Self {
        RawServer {
            transport,
            disabled: false,
            include_tools: None,
            exclude_tools: Vec::new(),
            tool_policy: ToolPolicyConfig::default(),
            title: None,
            description: None,
        }
    }
}

/// A header whose value is read from an environment variable when the
/// server is resolved (Codex's `bearer_token_env_var`, `env_http_headers`).
#[derive(Debug, Clone)]
pub(crate) struct EnvHeader {
    pub(crate) name: String,
    pub(crate) var: String,
    /// Written before the variable's value (`"Bearer "`).
    pub(crate) prefix: &'static str,
    /// Left out, rather than an error, when the variable is unset or empty.
    pub(crate) optional: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum RawTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Values kept as secrets so `Debug` of a [`ConfigFile`] shows none.
        env: Vec<(String, Expanded)>,
        cwd: Option<String>,
        env_file: Option<String>,
        /// Paths still hold `${...}`.
        sandbox: Option<SandboxConfig>,
    },
    Remote {
        sse: bool,
        url: String,
        headers: Vec<(String, Expanded)>,
        oauth: Option<OAuthConfig>,
        env_headers: Vec<EnvHeader>,
    },
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

impl ShapeProblem {
    fn to_error(&self, path: &Path, server: &str) -> ConfigError {
        let (path, server) = (path.to_owned(), server.to_owned());
        match self.clone() {
            ShapeProblem::Shape { field, message } => ConfigError::Shape {
                path,
                server: Some(server),
                field,
                message,
            },
            ShapeProblem::UnknownType { value, expected } => ConfigError::UnknownType {
                path,
                server,
                value,
                expected,
            },
            ShapeProblem::Missing { field, hint } => ConfigError::MissingField {
                path,
                server,
                field,
                hint,
            },
            ShapeProblem::Unsupported { message } => ConfigError::Unsupported {
                path,
                server,
                message,
            },
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

const CLAUDE_TYPES: &str = "\"stdio\" (or no type), \"http\" and \"sse\"";
const VSCODE_TYPES: &str = "\"stdio\", \"http\" and \"sse\"";
const CURSOR_TYPES: &str = "\"stdio\", \"http\", \"streamable-http\" and \"sse\"";
const STANDARD_TYPES: &str = "\"stdio\", \"sse\" and \"streamable-http\"";

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Stdio,
    Http,
    Sse,
}

fn parse_server(format: Format, name: &str, v: &Value) -> Result<RawServer, ShapeProblem> {
    let bad = |field: &str, message: &str| ShapeProblem::Shape {
        field: field.to_owned(),
        message: message.to_owned(),
    };
    let Value::Object(o) = v else {
        return Err(bad("(server)", "expected an object"));
    };
    if let Some(parsed) = formats::parse_server(format, o) {
        return parsed;
    }
    if format == Format::Standard
        && !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '[' | ']'))
    {
        return Err(bad(
            "(name)",
            "SEP-2633 server names use only letters, digits, '_', '-', '[' and ']'",
        ));
    }
    let ty = opt_string(o, "type")?;
    let has = |k: &str| o.get(k).is_some_and(|v| !v.is_null());
    let unknown = |expected| ShapeProblem::UnknownType {
        value: ty.clone().unwrap_or_default(),
        expected,
    };
    let kind = match (format, ty.as_deref()) {
        (_, Some("stdio")) => Kind::Stdio,
        (_, Some("sse")) => Kind::Sse,
        (Format::ClaudeCode | Format::VsCode | Format::Cursor, Some("http")) => Kind::Http,
        (Format::Cursor | Format::Standard, Some("streamable-http")) => Kind::Http,
        (Format::ClaudeCode, None) => Kind::Stdio,
        (Format::VsCode | Format::Cursor, None) if has("command") => Kind::Stdio,
        (Format::VsCode | Format::Cursor, None) if has("url") => Kind::Http,
        (Format::VsCode | Format::Cursor, None) => {
            return Err(ShapeProblem::Missing {
                field: "command",
                hint: " (set \"command\" for a local server, or \"url\" for a remote one)",
            });
        }
        (Format::Standard, None) => {
            return Err(ShapeProblem::Missing {
                field: "type",
                hint: " (SEP-2633 requires \"stdio\", \"sse\" or \"streamable-http\")",
            });
        }
        (Format::ClaudeCode, Some(_)) => return Err(unknown(CLAUDE_TYPES)),
        (Format::VsCode, Some(_)) => return Err(unknown(VSCODE_TYPES)),
        (Format::Cursor, Some(_)) => return Err(unknown(CURSOR_TYPES)),
        (Format::Standard, Some(_)) => return Err(unknown(STANDARD_TYPES)),
        // `formats::parse_server` read these above; never reached.
        (Format::Codex | Format::Gemini | Format::Windsurf | Format::Zed | Format::Goose, _) => {
            return Err(bad("(server)", "not a JSON server entry"));
        }
    };
    let strict = format == Format::Standard;
    let transport = if kind == Kind::Stdio {
        if strict {
            for k in ["url", "headers", "oauth"] {
                if has(k) {
                    return Err(bad(k, "not allowed for stdio servers (SEP-2633)"));
                }
            }
        }
        let Some(command) = opt_string(o, "command")?.filter(|c| !c.is_empty()) else {
            let hint = if has("url") {
                " (this entry has a \"url\": add \"type\": \"http\" or \"sse\")"
            } else {
                " (the program that starts the server, e.g. \"npx\")"
            };
            return Err(ShapeProblem::Missing {
                field: "command",
                hint,
            });
        };
        RawTransport::Stdio {
            command,
            args: string_array(o, "args")?.unwrap_or_default(),
            env: string_map(o, "env")?,
            cwd: opt_string(o, "cwd")?,
            env_file: opt_string(o, "envFile")?,
            sandbox: parse_sandbox(o)?,
        }
    } else {
        if strict {
            for k in ["command", "args", "env"] {
                if has(k) {
                    return Err(bad(k, "not allowed for remote servers (SEP-2633)"));
                }
            }
        }
        let Some(url) = opt_string(o, "url")?.filter(|u| !u.is_empty()) else {
            return Err(ShapeProblem::Missing {
                field: "url",
                hint: " (the server's endpoint, e.g. \"https://example.com/mcp\")",
            });
        };
        RawTransport::Remote {
            sse: kind == Kind::Sse,
            url,
            headers: string_map(o, "headers")?,
            oauth: parse_oauth(o)?,
            env_headers: Vec::new(),
        }
    };
    let disabled = match (o.get("disabled"), o.get("enabled")) {
        (Some(Value::Bool(true)), _) | (_, Some(Value::Bool(false))) => true,
        (None | Some(Value::Null | Value::Bool(_)), None | Some(Value::Null | Value::Bool(_))) => {
            false
        }
        _ => return Err(bad("disabled", "expected true or false")),
    };
    Ok(RawServer {
        transport,
        disabled,
        include_tools: string_array(o, "includeTools")?,
        exclude_tools: string_array(o, "excludeTools")?.unwrap_or_default(),
        tool_policy: parse_tool_policy(o)?,
        title: opt_string(o, "title")?,
        description: opt_string(o, "description")?,
    })
}

/// `sandboxEnabled` and `sandbox` (VS Code's keys; read in every format:
/// a file that asks for a sandbox gets one or fails, never silently none).
pub(crate) fn parse_sandbox(o: &Map<String, Value>) -> Result<Option<SandboxConfig>, ShapeProblem> {
    let bad = |field: &str, message: &str| ShapeProblem::Shape {
        field: field.to_owned(),
        message: message.to_owned(),
    };
    match o.get("sandboxEnabled") {
        None | Some(Value::Null | Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => {}
        Some(_) => return Err(bad("sandboxEnabled", "expected true or false")),
    }
    fn section<'a>(
        v: Option<&'a Value>,
        empty: &'a Map<String, Value>,
        field: &str,
    ) -> Result<&'a Map<String, Value>, ShapeProblem> {
        match v {
            None | Some(Value::Null) => Ok(empty),
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(ShapeProblem::Shape {
                field: field.to_owned(),
                message: "expected an object".into(),
            }),
        }
    }
    let empty = Map::new();
    let sandbox = section(o.get("sandbox"), &empty, "sandbox")?;
    let fs = section(sandbox.get("filesystem"), &empty, "sandbox.filesystem")?;
    let net = section(sandbox.get("network"), &empty, "sandbox.network")?;
    let list = |m: &Map<String, Value>, section: &str, key: &str| {
        string_array(m, key)
            .map(Option::unwrap_or_default)
            .map_err(|p| match p {
                ShapeProblem::Shape { field, message } => ShapeProblem::Shape {
                    field: format!("sandbox.{section}.{field}"),
                    message,
                },
                other => other,
            })
    };
    let paths = |key| list(fs, "filesystem", key).map(|v| v.into_iter().map(Into::into).collect());
    Ok(Some(SandboxConfig {
        allow_write: paths("allowWrite")?,
        deny_read: paths("denyRead")?,
        deny_write: paths("denyWrite")?,
        allowed_domains: list(net, "network", "allowedDomains")?,
        denied_domains: list(net, "network", "deniedDomains")?,
    }))
}

pub(crate) fn parse_tool_policy(o: &Map<String, Value>) -> Result<ToolPolicyConfig, ShapeProblem> {
    match o.get("toolPolicy") {
        None | Some(Value::Null) => Ok(ToolPolicyConfig::default()),
        Some(Value::Object(p)) => {
            if let Some(k) = p
                .keys()
                .find(|k| !["allow", "ask", "deny"].contains(&k.as_str()))
            {
                return Err(ShapeProblem::Shape {
                    field: format!("toolPolicy.{k}"),
                    message: "unknown list (expected allow, ask or deny)".into(),
                });
            }
            let list = |key: &str| {
                string_array(p, key)
                    .map(Option::unwrap_or_default)
                    .map_err(|e| match e {
                        ShapeProblem::Shape { field, message } => ShapeProblem::Shape {
                            field: format!("toolPolicy.{field}"),
                            message,
                        },
                        other => other,
                    })
            };
            Ok(ToolPolicyConfig {
                allow: list("allow")?,
                ask: list("ask")?,
                deny: list("deny")?,
            })
        }
        Some(_) => Err(ShapeProblem::Shape {
            field: "toolPolicy".into(),
            message: "expected an object with allow, ask and deny lists".into(),
        }),
    }
}

fn parse_oauth(o: &Map<String, Value>) -> Result<Option<OAuthConfig>, ShapeProblem> {
    match o.get("oauth") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(a)) => Ok(Some(OAuthConfig {
            client_id: opt_string(a, "clientId")?,
            scopes: string_array(a, "scopes")?.unwrap_or_default(),
            redirect_uri: opt_string(a, "redirectUri")?,
        })),
        Some(_) => Err(ShapeProblem::Shape {
            field: "oauth".into(),
            message: "expected an object".into(),
        }),
    }
}

pub(crate) fn opt_string(
    o: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, ShapeProblem> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ShapeProblem::Shape {
            field: key.to_owned(),
            message: "expected a string".into(),
        }),
    }
}

pub(crate) fn string_array(
    o: &Map<String, Value>,
    key: &str,
) -> Result<Option<Vec<String>>, ShapeProblem> {
    let problem = |field: String| ShapeProblem::Shape {
        field,
        message: "expected an array of strings".into(),
    };
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(problem(format!("{key}[{i}]"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(problem(key.to_owned())),
    }
}

/// An object of strings; the values are kept as secrets.
pub(crate) fn string_map(
    o: &Map<String, Value>,
    key: &str,
) -> Result<Vec<(String, Expanded)>, ShapeProblem> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), Expanded::secret(s.clone()))),
                _ => Err(ShapeProblem::Shape {
                    field: format!("{key}.{k}"),
                    message: "expected a string (quote numbers and booleans)".into(),
                }),
            })
            .collect(),
        Some(_) => Err(ShapeProblem::Shape {
            field: key.to_owned(),
            message: "expected an object of strings".into(),
        }),
    }
}
