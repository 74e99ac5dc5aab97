//! The typed server list every format is read into.

use std::fmt;
use std::path::PathBuf;

use crate::hosts::Host;

/// Which host's format a file is written in. Decides the top-level key,
/// whether comments are allowed, which `type` values exist and which
/// `${...}` forms are expanded (see the [crate docs](crate#formats)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Claude Code's `.mcp.json` and Claude Desktop's
    /// `claude_desktop_config.json`: `mcpServers`, strict JSON, `type`
    /// absent means stdio, `${VAR}` and `${VAR:-default}`.
    ClaudeCode,
    /// VS Code's `.vscode/mcp.json` (and the profile `mcp.json`): `servers`
    /// and `inputs`, JSON with comments, `${env:VAR}`, `${input:ID}`,
    /// `${workspaceFolder}` and the other predefined variables.
    VsCode,
    /// Cursor's `.cursor/mcp.json` and `~/.cursor/mcp.json`: `mcpServers`,
    /// comments allowed, `command` or `url`, `${env:NAME}`, `${userHome}`,
    /// `${workspaceFolder}`.
    Cursor,
    /// The proposed standard `mcp.json` (SEP-2633, a draft): `mcpServers`,
    /// strict JSON, `type` required (`stdio`, `sse`, `streamable-http`),
    /// `${scheme:value}` with `env`, `value` and `input`, `|` fallbacks.
    Standard,
    /// Codex's `~/.codex/config.toml`: TOML, `[mcp_servers.NAME]` tables
    /// (`command`/`args`/`env`/`cwd`, or `url` with `bearer_token_env_var`,
    /// `http_headers`, `env_http_headers`), no `${...}` expansion. Needs the
    /// `toml` feature.
    Codex,
    /// Gemini CLI's `settings.json`: `mcpServers`, comments allowed,
    /// `command`, `url` (SSE) or `httpUrl` (Streamable HTTP), `$VAR` and
    /// `${VAR}`.
    Gemini,
    /// Windsurf's `mcp_config.json`: `mcpServers` as Claude Desktop writes
    /// them, `serverUrl` (or `url`) for remote servers, `${env:VAR}`.
    Windsurf,
    /// Zed's `settings.json`: `context_servers`, comments allowed, `command`
    /// (a string, or the older `{"path", "args", "env"}`) or `url`; no
    /// expansion.
    Zed,
    /// Goose's `config.yaml`: YAML, `extensions` of `type` `stdio` (`cmd`,
    /// `args`, `envs`), `streamable_http` or `sse` (`uri`, `headers`); no
    /// expansion. Needs the `yaml` feature.
    Goose,
}

impl Format {
    /// The format's name as users know it.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "Claude Code / Claude Desktop",
            Format::VsCode => "VS Code",
            Format::Cursor => "Cursor",
            Format::Standard => "mcp.json (SEP-2633)",
            Format::Codex => "Codex",
            Format::Gemini => "Gemini CLI",
            Format::Windsurf => "Windsurf",
            Format::Zed => "Zed",
            Format::Goose => "Goose",
        }
    }

    /// Whether `//` and `/* */` comments and trailing commas are accepted
    /// (JSON formats; TOML and YAML have comments of their own).
    pub fn allows_comments(self) -> bool {
        matches!(
            self,
            Format::VsCode | Format::Cursor | Format::Gemini | Format::Zed
        )
    }

    /// The top-level key holding the servers.
    pub fn servers_key(self) -> &'static str {
        match self {
            Format::VsCode => "servers",
            Format::Codex => "mcp_servers",
            Format::Zed => "context_servers",
            Format::Goose => "extensions",
            _ => "mcpServers",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string after `${...}` expansion, which knows whether it may be shown.
///
/// Environment values and header values are always secret; any other value
/// becomes secret when an environment variable or a password input was
/// expanded into it. A secret prints as `<redacted>` in `Debug` and
/// `Display`; [`expose`](Self::expose) gives the text to whoever needs it
/// (the transport), never to a log.
#[derive(Clone, PartialEq, Eq)]
pub struct Expanded {
    text: String,
    secret: bool,
}

impl Expanded {
    /// A value that may be shown.
    pub fn plain(text: impl Into<String>) -> Self {
        Expanded {
            text: text.into(),
            secret: false,
        }
    }

    /// A value that is never shown.
    pub fn secret(text: impl Into<String>) -> Self {
        Expanded {
            text: text.into(),
            secret: true,
        }
    }

    pub(crate) fn new(text: String, secret: bool) -> Self {
        Expanded { text, secret }
    }

    /// The text itself. Do not log it when [`is_secret`](Self::is_secret).
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// Whether `Debug` and `Display` hide the value.
    pub fn is_secret(&self) -> bool {
        self.secret
    }

    pub(crate) fn into_secret(mut self) -> Self {
        self.secret = true;
        self
    }
}

impl fmt::Debug for Expanded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.secret {
            f.write_str("<redacted>")
        } else {
            fmt::Debug::fmt(&self.text, f)
        }
    }
}

impl fmt::Display for Expanded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.secret {
            f.write_str("<redacted>")
        } else {
            f.write_str(&self.text)
        }
    }
}

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportConfig {
    /// Spawn a process and speak newline-delimited JSON-RPC on its stdio.
    Stdio(StdioConfig),
    /// Streamable HTTP (`"type": "http"`, `"streamable-http"`, or a Cursor
    /// `url`). The HTTP transport also falls back to the 2024-11-05
    /// HTTP+SSE transport on its own when the server only speaks that.
    Http(RemoteConfig),
    /// The 2024-11-05 HTTP+SSE transport (`"type": "sse"`): `url` is the
    /// SSE endpoint (`GET`), which names the endpoint to `POST` to.
    Sse(RemoteConfig),
}

/// `stdio npx -y server`, `http https://host/mcp`, `sse URL`: for status
/// lines. Secret parts print as `<redacted>`.
impl fmt::Display for TransportConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportConfig::Stdio(s) => {
                write!(f, "stdio {}", s.command)?;
                for a in &s.args {
                    write!(f, " {a}")?;
                }
                Ok(())
            }
            TransportConfig::Http(r) => write!(f, "http {}", r.url),
            TransportConfig::Sse(r) => write!(f, "sse {}", r.url),
        }
    }
}

/// A server started as a child process.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StdioConfig {
    /// The program (looked up in `PATH` if it has no slash).
    pub command: Expanded,
    /// Its arguments.
    pub args: Vec<Expanded>,
    /// Variables set on top of the inherited environment, in file order.
    /// Values are always [secret](Expanded::is_secret).
    pub env: Vec<(String, Expanded)>,
    /// The working directory (`cwd`), if the file sets one; relative paths
    /// were joined to the workspace folder when the resolver knows it.
    pub cwd: Option<PathBuf>,
    /// VS Code's and Cursor's `envFile`: a dotenv file read when the
    /// transport is built (so edits apply on restart); `env` wins over it.
    pub env_file: Option<PathBuf>,
    /// VS Code's `"sandboxEnabled": true` with its `sandbox` object: the
    /// server runs confined (see [`SandboxConfig`]); `None` when not
    /// enabled (a `sandbox` object without `sandboxEnabled` is ignored, as
    /// VS Code does).
    pub sandbox: Option<SandboxConfig>,
}

/// VS Code's `sandbox` object of a server with `"sandboxEnabled": true`.
///
/// Resolved (in a [`ServerConfig`]), paths are expanded (`${workspaceFolder}`,
/// `${userHome}`, ...) and relative ones joined to the workspace folder; in
/// a [`Summary`](crate::Summary) they are as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// `filesystem.allowWrite`: where the server may write.
    pub allow_write: Vec<PathBuf>,
    /// `filesystem.denyRead`: what the server may not read.
    pub deny_read: Vec<PathBuf>,
    /// `filesystem.denyWrite`: where it may not write, even if allowed.
    pub deny_write: Vec<PathBuf>,
    /// `network.allowedDomains`: the hosts it may reach (`*.` wildcards);
    /// empty: no network.
    pub allowed_domains: Vec<String>,
    /// `network.deniedDomains`: refused even when allowed.
    pub denied_domains: Vec<String>,
}

impl StdioConfig {
    /// A command with no arguments or environment.
    pub fn new(command: impl Into<String>) -> Self {
        StdioConfig {
            command: Expanded::plain(command),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            env_file: None,
            sandbox: None,
        }
    }
}

/// A server reached over HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteConfig {
    /// The endpoint URL (secret when a variable was expanded into it).
    pub url: Expanded,
    /// Headers sent on every request, in file order. Values are always
    /// [secret](Expanded::is_secret).
    pub headers: Vec<(String, Expanded)>,
    /// The SEP-2633 `oauth` object, for hosts that run an OAuth flow.
    pub oauth: Option<OAuthConfig>,
}

impl RemoteConfig {
    /// A URL with no headers.
    pub fn new(url: impl Into<String>) -> Self {
        RemoteConfig {
            url: Expanded::plain(url),
            headers: Vec::new(),
            oauth: None,
        }
    }
}

/// SEP-2633's `oauth`: how the client starts an OAuth flow for a remote
/// server. All optional.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// A pre-registered client id (otherwise dynamic registration).
    pub client_id: Option<String>,
    /// Scopes to request.
    pub scopes: Vec<String>,
    /// The redirect URI for the callback.
    pub redirect_uri: Option<String>,
}

/// One server of a user's configuration, ready to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The key under `mcpServers` / `servers`.
    pub name: String,
    /// How to reach it.
    pub transport: TransportConfig,
    /// `"disabled": true` (Cline, Roo, Windsurf) or `"enabled": false`: the
    /// user keeps the entry but does not want it started.
    pub disabled: bool,
    /// `includeTools` (Gemini CLI's name): only these tools, if set.
    pub include_tools: Option<Vec<String>>,
    /// `excludeTools`: never these tools.
    pub exclude_tools: Vec<String>,
    /// `toolPolicy`: which tools run without asking, ask first, or never
    /// run (see [`ToolPolicyConfig`]).
    pub tool_policy: ToolPolicyConfig,
    /// SEP-2633 `title`: a display name.
    pub title: Option<String>,
    /// SEP-2633 `description`.
    pub description: Option<String>,
    /// Where the entry was read.
    pub source: Source,
}

impl ServerConfig {
    /// A server with default settings, as if read from `source`.
    pub fn new(name: impl Into<String>, transport: TransportConfig, source: Source) -> Self {
        ServerConfig {
            name: name.into(),
            transport,
            disabled: false,
            include_tools: None,
            exclude_tools: Vec::new(),
            tool_policy: ToolPolicyConfig::default(),
            title: None,
            description: None,
            source,
        }
    }
}

/// A server entry's `toolPolicy`: tool-name globs (`*` within a segment,
/// `**` across, as `includeTools`) whose calls run without asking
/// (`allow`), need a person's approval each time (`ask`), or are refused
/// (`deny`). A key of this crate's own (no host documents per-tool
/// approval in these files; others ignore it):
///
/// ```json
/// "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
///           "toolPolicy": {"allow": ["read_*", "list_*"], "ask": ["write_file"], "deny": ["move_file"]}}
/// ```
///
/// Where a tool matches several lists, `deny` beats `ask` beats `allow`;
/// a tool matching none is decided by the host's policy (by default from
/// the tool's annotations: `mcp_tools::ToolPolicy`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolPolicyConfig {
    /// Run without asking.
    pub allow: Vec<String>,
    /// Ask a person before each call.
    pub ask: Vec<String>,
    /// Never call.
    pub deny: Vec<String>,
}

impl ToolPolicyConfig {
    /// Whether no list has any pattern.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}

/// The file (and format) a server was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Source {
    /// The file's path as given to [`ConfigFile::load`](crate::ConfigFile::load).
    pub path: PathBuf,
    /// The format it was read as.
    pub format: Format,
    /// The host whose configuration this is, when it was read as one
    /// ([`load_hosts`](crate::load_hosts)).
    pub host: Option<Host>,
    /// The part of the file the servers were read from, when not its top
    /// level: Claude Code's local scope in `~/.claude.json` is
    /// `projects["/the/project"]`.
    pub section: Option<String>,
}

impl Source {
    /// A source.
    pub fn new(path: impl Into<PathBuf>, format: Format) -> Self {
        Source {
            path: path.into(),
            format,
            host: None,
            section: None,
        }
    }
}

/// `claude-code ~/.claude.json projects["/src/app"]`: the host (when
/// known), the file, and the part of it. Paths print as they are: make
/// them safe for a terminal before showing them.
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(host) = self.host {
            write!(f, "{} ", host.id())?;
        }
        write!(f, "{}", self.path.display())?;
        if let Some(section) = &self.section {
            write!(f, " {section}")?;
        }
        Ok(())
    }
}

/// A VS Code `inputs` entry (`"type": "promptString"`): a value the host
/// asks the user for the first time `${input:ID}` is expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputSpec {
    /// The `id` that `${input:ID}` names.
    pub id: String,
    /// What to show the user.
    pub description: Option<String>,
    /// Hide what the user types, and never show the value.
    pub password: bool,
    /// The value proposed to the user.
    pub default: Option<String>,
}

impl InputSpec {
    /// An input with no description.
    pub fn new(id: impl Into<String>, password: bool) -> Self {
        InputSpec {
            id: id.into(),
            description: None,
            password,
            default: None,
        }
    }
}
