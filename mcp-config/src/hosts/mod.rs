//! The configuration each MCP host keeps for its user (Claude Code,
//! Claude Desktop, Codex, Cursor, Gemini CLI, Goose, VS Code, Windsurf,
//! Zed), found where the host documents it ([`Places`]) and read into
//! [`ConfigFile`]s tagged with their host. Reading starts nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::ConfigError;
use crate::model::{Format, Source};
use crate::parse::{ConfigFile, read_limited};
use crate::trust::{ContentHash, Scope};

mod places;

pub use places::{Places, Platform};

/// An MCP host whose own configuration this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Host {
    /// Claude Code: `~/.claude.json`, its top-level `mcpServers` (user
    /// scope) and `projects[PATH].mcpServers` (local scope, one project).
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// OpenAI's Codex CLI: `~/.codex/config.toml`.
    Codex,
    /// Cursor: `~/.cursor/mcp.json` (global servers).
    Cursor,
    /// Google's Gemini CLI: `~/.gemini/settings.json`.
    Gemini,
    /// Block's Goose: `config.yaml`.
    Goose,
    /// VS Code: the user profile's `mcp.json`.
    VsCode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    Windsurf,
    /// Zed: `settings.json`, `context_servers`.
    Zed,
}

impl Host {
    /// Every host, in the order `--from all` gives them precedence (the
    /// first to define a server name wins).
    pub const ALL: &'static [Host] = &[
        Host::ClaudeCode,
        Host::ClaudeDesktop,
        Host::Codex,
        Host::Cursor,
        Host::Gemini,
        Host::Goose,
        Host::VsCode,
        Host::Windsurf,
        Host::Zed,
    ];

    /// The host's name on a command line: `claude-code`, `claude-desktop`,
    /// `codex`, `cursor`, `gemini`, `goose`, `vscode`, `windsurf`, `zed`.
    pub fn id(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::ClaudeDesktop => "claude-desktop",
            Host::Codex => "codex",
            Host::Cursor => "cursor",
            Host::Gemini => "gemini",
            Host::Goose => "goose",
            Host::VsCode => "vscode",
            Host::Windsurf => "windsurf",
            Host::Zed => "zed",
        }
    }

    /// The host named `id` ([`id`](Self::id), any case; `gemini-cli` and
    /// `vs-code` too).
    pub fn from_id(id: &str) -> Option<Host> {
        let id = id.to_ascii_lowercase();
        match id.as_str() {
            "gemini-cli" => Some(Host::Gemini),
            "vs-code" => Some(Host::VsCode),
            _ => Host::ALL.iter().copied().find(|h| h.id() == id),
        }
    }

    /// The host's name as its users know it.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::ClaudeDesktop => "Claude Desktop",
            Host::Codex => "Codex",
            Host::Cursor => "Cursor",
            Host::Gemini => "Gemini CLI",
            Host::Goose => "Goose",
            Host::VsCode => "VS Code",
            Host::Windsurf => "Windsurf",
            Host::Zed => "Zed",
        }
    }

    /// The format of the host's file.
    pub fn format(self) -> Format {
        match self {
            Host::ClaudeCode | Host::ClaudeDesktop => Format::ClaudeCode,
            Host::Codex => Format::Codex,
            Host::Cursor => Format::Cursor,
            Host::Gemini => Format::Gemini,
            Host::Goose => Format::Goose,
            Host::VsCode => Format::VsCode,
            Host::Windsurf => Format::Windsurf,
            Host::Zed => Format::Zed,
        }
    }
}

/// The host's [`id`](Host::id).
impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Largest `~/.claude.json` read: 64 MiB. Claude Code keeps its own state
/// in that file beside the servers, and it grows.
pub const MAX_CLAUDE_STATE_SIZE: u64 = 64 * 1024 * 1024;

/// One host's server list, read.
#[derive(Debug)]
#[non_exhaustive]
pub struct HostFile {
    /// Whose it is.
    pub host: Host,
    /// [`Scope::User`] for a host's own file in the home folder;
    /// [`Scope::Project`] for Claude Code's local scope, servers kept for
    /// one project (a project's configuration: trust it before starting
    /// them, as for a `.mcp.json`).
    pub scope: Scope,
    /// The servers, their [`Source`] naming the host.
    pub file: ConfigFile,
}

/// What [`load_hosts`] found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct HostFiles {
    /// The lists read, in the order of the hosts asked for (for Claude
    /// Code, the project's servers before the user's, as Claude Code gives
    /// the local scope precedence).
    pub files: Vec<HostFile>,
    /// Files that exist but could not be read.
    pub errors: Vec<ConfigError>,
    /// Hosts with no file where they keep one (not installed, or never
    /// given a server), and where it was looked for.
    pub absent: Vec<(Host, PathBuf)>,
}

/// Reads the configuration of each of `hosts` found in `places`. Nothing
/// is started and nothing asked; `${...}` is expanded later, by
/// [`resolve_all`](crate::resolve_all).
///
/// ```
/// use mcp_config::{Host, Places, Platform, load_hosts};
///
/// # let home = std::env::temp_dir().join(format!("hosts-doc-{}", std::process::id()));
/// std::fs::create_dir_all(home.join(".codex")).unwrap();
/// std::fs::write(home.join(".codex/config.toml"), "[mcp_servers.docs]\ncommand = \"docs-server\"\n").unwrap();
/// let found = load_hosts(Host::ALL, &Places::with_env(&home, Platform::Linux, |_| None));
/// # #[cfg(feature = "toml")] {
/// assert_eq!(found.files.len(), 1);
/// assert_eq!(found.files[0].host, Host::Codex);
/// assert_eq!(found.files[0].file.server_names().collect::<Vec<_>>(), ["docs"]);
/// # }
/// assert_eq!(found.absent.len(), Host::ALL.len() - 1);
/// # std::fs::remove_dir_all(&home).unwrap();
/// ```
pub fn load_hosts(hosts: &[Host], places: &Places) -> HostFiles {
    let mut found = HostFiles::default();
    for &host in hosts {
        let path = places.config_path(host);
        if !path.is_file() {
            found.absent.push((host, path));
            continue;
        }
        let read = match host {
            Host::ClaudeCode => claude_code(&path, places.project_dir()),
            _ => ConfigFile::load_as(&path, host.format()).map(|file| {
                vec![HostFile {
                    host,
                    scope: Scope::User,
                    file: file.with_host(host),
                }]
            }),
        };
        match read {
            Ok(files) => found.files.extend(files),
            Err(e) => found.errors.push(e),
        }
    }
    found
}

/// `~/.claude.json`: the project's servers (when it has some), then the
/// user's. Each list's hash is of its own `mcpServers` only: Claude Code
/// rewrites the rest of the file all the time.
fn claude_code(path: &Path, project: Option<&Path>) -> Result<Vec<HostFile>, ConfigError> {
    let text = read_limited(path, MAX_CLAUDE_STATE_SIZE, "MAX_CLAUDE_STATE_SIZE")?;
    let root = crate::syntax::json(path, &text, false)?;
    let Value::Object(root) = root else {
        return Err(ConfigError::Shape {
            path: path.to_owned(),
            server: None,
            field: "(top level)".into(),
            message: "expected an object".into(),
        });
    };
    let hash_of = |section: &serde_json::Map<String, Value>| {
        let servers = section.get("mcpServers").unwrap_or(&Value::Null);
        ContentHash::of(servers.to_string().as_bytes())
    };
    let source = |section: Option<String>| {
        let mut s = Source::new(path, Format::ClaudeCode);
        s.host = Some(Host::ClaudeCode);
        s.section = section;
        s
    };
    let mut files = Vec::new();
    if let Some((key, Value::Object(section))) = project.and_then(|p| project_entry(&root, p))
        && section.get("mcpServers").is_some_and(|s| !s.is_null())
    {
        let file = ConfigFile::from_root(
            source(Some(format!("projects[{key:?}]"))),
            section,
            hash_of(section),
        )?;
        files.push(HostFile {
            host: Host::ClaudeCode,
            scope: Scope::Project,
            file,
        });
    }
    files.push(HostFile {
        host: Host::ClaudeCode,
        scope: Scope::User,
        file: ConfigFile::from_root(source(None), &root, hash_of(&root))?,
    });
    Ok(files)
}

/// The entry of `projects` for `project`, by the path as given or as
/// resolved (Claude Code keys it by the folder it was started in).
fn project_entry<'r>(
    root: &'r serde_json::Map<String, Value>,
    project: &Path,
) -> Option<(&'r String, &'r Value)> {
    let Some(Value::Object(projects)) = root.get("projects") else {
        return None;
    };
    let real = project.canonicalize().ok();
    projects.iter().find(|(key, _)| {
        let key = Path::new(key.as_str());
        key == project || real.as_deref() == Some(key)
    })
}
