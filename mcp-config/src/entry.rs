//! One server entry as written: what it parses to ([`RawServer`], its
//! [`RawTransport`]) before `${...}` is expanded, the problems one entry can
//! have ([`ShapeProblem`], kept per server so one broken entry does not hide
//! the others), and the parser of the JSON-family formats' entries with the
//! value readers every format's parser shares.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::ConfigError;
use crate::formats;
use crate::model::{Expanded, Format, OAuthConfig, SandboxConfig, ToolPolicyConfig};

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
        /// Values kept as secrets so `Debug` of a [`ConfigFile`](crate::ConfigFile) shows none.
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

impl ShapeProblem {
    pub(crate) fn to_error(&self, path: &Path, server: &str) -> ConfigError {
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

pub(crate) fn parse_server(
    format: Format,
    name: &str,
    v: &Value,
) -> Result<RawServer, ShapeProblem> {
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
