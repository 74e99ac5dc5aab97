//! Read the MCP server lists users already wrote for their hosts (Claude
//! Desktop and Claude Code, VS Code, Cursor, Codex, Gemini CLI, Windsurf,
//! Zed, Goose, the proposed standard `mcp.json`) into one typed list, and
//! turn an entry into a transport.
//!
//! This crate only reads. Starting, supervising and caching servers is the
//! job of the layer above; the protocol, transport and session crates know
//! nothing of it.
//!
//! # Example
//!
//! ```no_run
//! use mcp_config::{Resolver, discover, load_all};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let project = std::env::current_dir()?;
//! let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
//! let files = discover(&project, home.as_deref());
//! let list = load_all(&files, &Resolver::new().workspace_folder(&project));
//! for e in &list.errors {
//!     eprintln!("skipped: {}", mcp_proto::error::chain(e));
//! }
//! for server in list.servers.iter().filter(|s| !s.disabled) {
//!     let client = mcp_client::Client::builder("my-host", "1.0")
//!         .connect(server.transport()?)
//!         .await?;
//!     println!("{}: {} tools", server.name, client.list_all::<mcp_proto::schema::Tool>().await?.len());
//!     client.close().await;
//! }
//! # Ok(()) }
//! ```
//!
//! One file, its format detected from its name:
//!
//! ```
//! use mcp_config::{ConfigFile, Resolver, TransportConfig};
//!
//! let file = ConfigFile::parse(".mcp.json", r#"{"mcpServers": {
//!     "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
//!     "api": {"type": "http", "url": "${API_URL:-https://example.com}/mcp",
//!             "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
//! }}"#, None)?;
//! let resolver = Resolver::new().env_vars([("API_TOKEN", "s3cr3t")]);
//! let servers = file.resolve(&resolver)?;
//! let TransportConfig::Http(api) = &servers[0].transport else { unreachable!() };
//! assert_eq!(api.url.expose(), "https://example.com/mcp");
//! assert_eq!(api.headers[0].1.expose(), "Bearer s3cr3t");
//! assert!(!format!("{servers:?}").contains("s3cr3t"));
//! # Ok::<(), mcp_config::ConfigError>(())
//! ```
//!
//! # Formats
//!
//! What each format accepts, from the hosts' documentation (read
//! 2026-12-01): Claude Code's MCP page ("Environment variable expansion in
//! `.mcp.json`"), VS Code's "MCP configuration reference", Cursor's MCP
//! page ("Config interpolation"), and SEP-2633 (PR 2633 of the
//! specification repository, status Draft).
//!
//! | | Claude Code / Desktop | VS Code | Cursor | `mcp.json` (SEP-2633) |
//! |---|---|---|---|---|
//! | files | `.mcp.json`, `claude_desktop_config.json` | `.vscode/mcp.json` | `.cursor/mcp.json`, `~/.cursor/mcp.json` | `mcp.json` |
//! | key | `mcpServers` | `servers`, `inputs` | `mcpServers` | `mcpServers` |
//! | syntax | JSON | JSONC | JSONC | JSON |
//! | `type` | absent = `stdio`, `http`, `sse` | `stdio`, `http`, `sse` (absent: from `command`/`url`) | absent: from `command`/`url`; `stdio`, `http`, `streamable-http`, `sse` | required: `stdio`, `sse`, `streamable-http` |
//! | local sockets | no | `url`: `unix:///path/server.sock#/mcp`, `pipe:///pipe/NAME#/mcp` (Windows) | no | no |
//! | expands | `${VAR}`, `${VAR:-default}` | `${env:VAR}`, `${input:ID}`, `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}`, `${/}` | the same without `${input:...}` | `${env:VAR}`, `${value:TEXT}`, `${input:ID}`, `a \| b` fallbacks |
//!
//! A server on a local socket is written as VS Code writes it (the
//! socket's path, then the HTTP request path in the fragment) and served
//! by `mcp-transport-http` over that socket; see its `LocalSocket`. Only
//! VS Code documents the form: elsewhere such a `url` is refused
//! ([`Shape`](ConfigError::Shape) on `url`), so a file that another host
//! cannot read does not look valid here.
//!
//! Claude Desktop's `claude_desktop_config.json` has the same keys as
//! Claude Code's `.mcp.json` and is read as that format (Claude Desktop
//! documents no expansion, so its files rarely contain any).
//!
//! Every string field is expanded: `command`, `args`, `env` values, `cwd`,
//! `envFile`, `url`, `headers` values. Expanded values are not expanded
//! again. Where this crate is stricter than a host, on purpose:
//!
//! - An unset variable with no default is an error
//!   ([`MissingVariable`](ConfigError::MissingVariable)) in every format
//!   (Claude Code documents this; VS Code substitutes an empty string,
//!   which silently sends an empty token).
//! - In the Claude format, `${...}` that is not a variable name (`$VAR`,
//!   `${x%y}`) stays as written, as Claude Code does. In the others, an
//!   unknown `${...}` (`${command:...}`, `${config:...}`, `op://...`) is an
//!   [`UnsupportedVariable`](ConfigError::UnsupportedVariable) error, not
//!   passed through.
//! - SEP-2633 `${input:ID}` has no `inputs` list: the client asks, and the
//!   answer is treated as a password.
//! - `:-` uses the default when the variable is unset or empty (POSIX).
//!
//! **Sandboxed servers.** VS Code's `"sandboxEnabled": true` with its
//! `sandbox` object (`filesystem.allowWrite`, `denyRead`, `denyWrite`, with
//! `${workspaceFolder}`, `${userHome}` and the other variables expanded in
//! paths, relative ones joined to the workspace folder;
//! `network.allowedDomains`, `deniedDomains`, `*.` wildcards) become
//! [`StdioConfig::sandbox`], and [`ServerConfig::prepare`] confines the
//! server with them (feature `sandbox`, default; Linux, see
//! `mcp_transport_stdio::sandbox`). Claude Code, Claude Desktop, Cursor and
//! SEP-2633 document no such keys; they are read in every format anyway,
//! so that a file asking for a sandbox gets one or its server does not
//! start, never silently none. `sandbox` without `sandboxEnabled: true` is
//! ignored, as VS Code ignores it. Where no sandbox can be had, or without
//! the `sandbox` feature, such a server is not started (the error says why
//! and how to opt out).
//!
//! Fields no format above documents but other hosts write, read so the
//! layer above can honour them: `"disabled": true` / `"enabled": false`
//! (Cline, Roo, Windsurf), `includeTools` / `excludeTools` (Gemini CLI),
//! `cwd`; and one of this crate's own, `toolPolicy` (allow, ask and deny
//! globs over the server's tools: [`ToolPolicyConfig`]). A key that a
//! server entry's format does not document is not read, and not lost
//! either: [`ConfigFile::unknown_keys`] lists each
//! ([`UnknownKey`]: file, server, key) for a warning.
//!
//! The other hosts' own files, read the same way (each format's module
//! cites the host's page it follows):
//!
//! | | Codex | Gemini CLI | Windsurf | Zed | Goose |
//! |---|---|---|---|---|---|
//! | syntax | TOML (`toml` feature) | JSONC | JSON | JSONC | YAML (`yaml` feature) |
//! | key | `mcp_servers` | `mcpServers` | `mcpServers` | `context_servers` | `extensions` |
//! | stdio | `command`, `args`, `env`, `cwd` | `command`, `args`, `env`, `cwd` | `command`, `args`, `env` | `command` (or `{"path", "args", "env"}`), `args`, `env` | `type: stdio`, `cmd`, `args`, `envs` |
//! | remote | `url` (+ `bearer_token_env_var`, `http_headers`, `env_http_headers`) | `httpUrl`; `url` is SSE | `serverUrl` or `url` | `url`, `headers` | `type: streamable_http` or `sse`, `uri`, `headers` |
//! | off | `enabled = false` | `mcp.excluded`, `mcp.allowed` | `disabled` | `enabled: false` | `enabled: false` |
//! | tools | `enabled_tools`, `disabled_tools` | `includeTools`, `excludeTools` | `disabledTools` | | `available_tools` |
//! | expands | nothing | `$VAR`, `${VAR}` | `${env:VAR}` | nothing | nothing |
//!
//! A Goose `builtin`/`platform` extension and a server a Zed extension
//! provides run inside their host only: such an entry is an
//! [`Unsupported`](ConfigError::Unsupported) error of its own, never
//! started.
//!
//! # Every host's configuration
//!
//! [`load_hosts`] reads the file each [`Host`] keeps for its user where
//! that host documents it on each [`Platform`] ([`Places::config_path`]:
//! `~/.claude.json`, `claude_desktop_config.json`, `~/.codex/config.toml`,
//! `~/.cursor/mcp.json`, `~/.gemini/settings.json`, Goose's `config.yaml`,
//! VS Code's user `mcp.json`, `~/.codeium/windsurf/mcp_config.json`, Zed's
//! `settings.json`). Every server's [`Source`] names its host, file and,
//! for Claude Code's servers kept for one project
//! (`projects["/the/project"].mcpServers`), that part of the file. Those
//! are a project's configuration ([`HostFile::scope`] is
//! [`Scope::Project`]): trust them before starting them, as a `.mcp.json`;
//! a decision about them is kept for that part of the file alone
//! ([`TrustStore`]). Reading starts nothing.
//!
//! # Discovery and merging
//!
//! [`discover()`] returns the files present among [`DISCOVERED_FILES`]
//! (project `.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`, then
//! `~/.cursor/mcp.json`), most important first. [`load_all`] merges them by
//! server name: the first file to define a name wins with its whole entry
//! (like Claude Code's project-over-user scopes and Cursor's
//! project-over-global); the others are listed in
//! [`ServerList::shadowed`]. A file or server that fails is in
//! [`ServerList::errors`] and the rest load; a broken server still claims
//! its name, so a same-named server from a less important file does not
//! silently take its place (a file that cannot be parsed at all claims
//! nothing: its names are unknown).
//!
//! # Trusting project files
//!
//! A configuration file in a project folder (`.mcp.json`,
//! `.vscode/mcp.json`, `.cursor/mcp.json`) is written by whoever wrote the
//! project: a freshly cloned repository's `.mcp.json` can name any
//! command, and a host that starts it runs that command with the user's
//! rights. The MCP security best practices ask a client to show the exact
//! command and have the user approve it first; Claude Code and VS Code ask
//! before they start a project's servers. This crate gives a host what it
//! needs to do the same:
//!
//! - [`ConfigFile::summary`]: what the file would run, every server with its
//!   command and all its arguments, the names (never the values) of its
//!   `env` variables and headers, `cwd`, `envFile` and URL, as written
//!   (`${...}` not expanded: showing it reads no secret and asks nothing).
//!   Its `Display` is the text to show; every value is quoted and escaped,
//!   so a value holding terminal control sequences or bidirectional-text
//!   controls cannot hide or rewrite what the user reads.
//! - [`Warning`]s in it: an `env` variable that makes the process load or
//!   run other code ([`injection_risk`]: `LD_PRELOAD`, `LD_AUDIT`,
//!   `DYLD_*`, `NODE_OPTIONS`, `PYTHONPATH`, `BASH_ENV`, `PERL5OPT`,
//!   `RUBYOPT`, `JAVA_TOOL_OPTIONS`, `PATH`, package-index variables, ...:
//!   [`INJECTION_VARIABLES`], [`INJECTION_PREFIXES`], with their sources),
//!   an `envFile` (its variables are not in the summary), a shell or
//!   `sudo` as the command, a program from the project itself.
//! - [`ConfigFile::content_hash`]: the SHA-256 of the exact text parsed. A
//!   host reads the file once ([`ConfigFile::load`]), shows its summary,
//!   checks or records its trust, and resolves that same parsed file
//!   ([`resolve_all`]): what the user saw is what runs, even if the file
//!   changes meanwhile.
//! - [`TrustStore`]: decisions remembered by canonical path and hash, in a
//!   per-user JSON file ([`TrustStore::default_path`]:
//!   `$XDG_CONFIG_HOME/<app>/trusted-configs.json`), written atomically,
//!   readable by the user only, at most [`MAX_TRUSTED_FILES`] entries. A
//!   changed file is a new decision; a damaged store trusts nothing
//!   ([`TrustError::Corrupt`]).
//! - [`scope_of`]: files in the user's home folder (`~/.cursor/mcp.json`,
//!   `~/.mcp.json`) are the user's own ([`Scope::User`]) and need no
//!   decision; a file the user names explicitly (a command-line option)
//!   is trusted by being named.
//!
//! ```no_run
//! use mcp_config::{ConfigFile, Resolver, Scope, TrustStore, discover, resolve_all, scope_of};
//!
//! # fn ask_the_user(_: &str) -> bool { false }
//! # fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let project = std::env::current_dir()?;
//! let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
//! let store = TrustStore::new(TrustStore::default_path("my-host").ok_or("no home")?);
//! let mut files = Vec::new();
//! for path in discover(&project, home.as_deref()) {
//!     let file = ConfigFile::load(&path)?;
//!     let trusted = scope_of(&path, home.as_deref()) == Scope::User
//!         || store.is_trusted(&file)?
//!         || ask_the_user(&file.summary().to_string());
//!     if trusted {
//!         store.trust(&file)?;
//!         files.push(file);
//!     }
//! }
//! let list = resolve_all(&files, &Resolver::new().workspace_folder(&project));
//! # let _ = list; Ok(()) }
//! ```
//!
//! # After a server was trusted
//!
//! Trusting a file trusts what it runs, not what the server says later.
//!
//! - **Pinned tool definitions.** [`PinStore`] remembers, per server
//!   ([`pin_key`]: the file's canonical path and the entry's name; why, in
//!   its docs), the digest of each tool's model-facing definition
//!   ([`tool_digest`]: `name`, `title`, `description`, `inputSchema`,
//!   `outputSchema`, `annotations` as canonical JSON, so key order and
//!   number spelling do not matter) at the server's first use.
//!   [`PinStore::check`] sorts each later listing: a new or changed tool is
//!   a [`ToolChange`] to hold back, with a readable [`diff`](ToolChange::diff);
//!   [`PinStore::approve`] lets it through. The file (`pinned-tools.json`
//!   beside the trust store, version 1, documented on [`PinStore`]) is
//!   written atomically, readable by the user only, bounded
//!   ([`MAX_PIN_STORE_SIZE`], [`MAX_PINNED_SERVERS`], definitions kept to
//!   diff up to [`MAX_KEPT_DEFINITION`]). `mcp-host` holds and refuses the
//!   tools; the `mcp` CLI shows and approves them (`mcp trust --pending`,
//!   `--approve`).
//! - **Text a person cannot see.** [`hidden_chars`] finds what hides text
//!   from a reviewer but not from the model (control and format characters,
//!   zero-width spaces and joiners out of place, bidi overrides and
//!   isolates, tag characters, variation selectors smuggling bytes);
//!   [`reveal`] shows each as `<U+XXXX>`. A [`Summary`] flags each value
//!   holding any ([`Warning::HiddenText`]), a [`ToolChange`] each member
//!   ([`tool_hidden_text`]).
//! - **The administrator's policy.** [`ManagedPolicy`] reads
//!   `allowedMcpServers` / `deniedMcpServers` (Claude Code's managed
//!   settings: by `serverName`, `serverCommand`, `serverUrl`) from
//!   [`MANAGED_POLICY_PATH`] (`/etc/mcp/managed-policy.json` on Linux),
//!   plus the file [`MANAGED_POLICY_ENV`] names, which can only narrow it.
//!   The deny list wins; no user or project file can widen it; a policy
//!   file that cannot be read is an error, not "no policy".
//!
//! ```
//! use mcp_config::{ManagedPolicy, PinStore, ServerOrigin};
//!
//! # let dir = std::env::temp_dir().join(format!("cfg-after-trust-{}", std::process::id()));
//! let policy = ManagedPolicy::parse("/etc/mcp/managed-policy.json", r#"{"deniedMcpServers": [{"serverName": "shell"}]}"#)?;
//! assert!(policy.check("shell", ServerOrigin::Unknown).is_err());
//!
//! let pins = PinStore::new(dir.join("pinned-tools.json"));
//! let tools: Vec<mcp_proto::schema::Tool> = serde_json::from_str(r#"[{"name": "add", "description": "Adds."}]"#)?;
//! assert!(pins.check("/app/.mcp.json#calc", &tools)?.first_use);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Secrets
//!
//! `env` values and `headers` values are always [secret](Expanded); so is
//! any other value into which an environment variable or a password input
//! was expanded. They print as `<redacted>` in `Debug` and `Display`;
//! errors never contain values; a [`ConfigFile`]'s `Debug` hides the
//! `env` and `headers` values as written. [`Expanded::expose`] is for the
//! transport. [`Prepared`]'s `Debug` shows only the program, because
//! `mcp_transport_stdio::ServerCommand`'s own `Debug` shows its environment:
//! do not log the command itself.
//!
//! # JSONC
//!
//! Comments and trailing commas are blanked out in place by a small
//! stripper before `serde_json` parses, so syntax errors keep the user's
//! line and column; no second JSON library.
//!
//! # Feature flags
//!
//! - `stdio` (default): [`ServerConfig::prepare`] / [`ServerConfig::transport`]
//!   for stdio servers, with `mcp-transport-stdio`.
//! - `http` (default): the same for `http` and `sse` servers, with
//!   `mcp-transport-http` (rustls for https).
//! - `sandbox` (default): `"sandboxEnabled": true` honoured (Linux:
//!   `mcp-transport-stdio`'s `sandbox` feature); without it such a server
//!   does not start.
//! - `toml`: Codex's `config.toml`, with the `toml` crate.
//! - `yaml`: Goose's `config.yaml`, with `yaml-rust2` (pure Rust; aliases
//!   refused and nesting bounded). Without these two, such a file is an
//!   error naming the feature; a dependent that reads only JSON pulls
//!   neither crate.
//!
//! # Limits
//!
//! Files over [`MAX_CONFIG_SIZE`] (4 MiB) are refused; so are trust stores
//! over [`MAX_TRUST_STORE_SIZE`], pin stores over [`MAX_PIN_STORE_SIZE`]
//! and policy files over [`MAX_POLICY_SIZE`]; `~/.claude.json`, where
//! Claude Code keeps its state too, over [`MAX_CLAUDE_STATE_SIZE`] (64 MiB).

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod discover;
mod entry;
mod error;
mod formats;
mod hidden;
mod hosts;
mod jsonc;
mod managed;
mod model;
mod parse;
mod pins;
mod resolve;
mod store_file;
mod syntax;
mod transport;
mod trust;
#[cfg(feature = "yaml")]
mod yaml;

pub use discover::{DISCOVERED_FILES, ServerList, Shadowed, discover, load_all, resolve_all};
pub use error::ConfigError;
pub use formats::UnknownKey;
pub use hidden::{HiddenChar, HiddenChars, hidden_chars, is_hiding_char, reveal};
pub use hosts::{Host, HostFile, HostFiles, MAX_CLAUDE_STATE_SIZE, Places, Platform, load_hosts};
pub use managed::{
    Blocked, MANAGED_POLICY_ENV, MANAGED_POLICY_PATH, MAX_POLICY_SIZE, ManagedPolicy, PolicyError,
    ServerMatch, ServerOrigin,
};
pub use model::{
    Expanded, Format, InputSpec, OAuthConfig, RemoteConfig, SandboxConfig, ServerConfig, Source,
    StdioConfig, ToolPolicyConfig, TransportConfig,
};
pub use parse::{ConfigFile, MAX_CONFIG_SIZE};
pub use pins::{
    ChangeKind, Diff, HiddenText, MAX_KEPT_DEFINITION, MAX_PIN_STORE_SIZE, MAX_PINNED_SERVERS,
    PINNED_MEMBERS, PinCheck, PinStore, ToolChange, canonical_json, hidden_text, pin_key,
    tool_definition, tool_digest, tool_hidden_text,
};
pub use resolve::{InputError, InputMissing, InputProvider, Resolver};
pub use transport::{BuildError, Prepared};
pub use trust::{
    ContentHash, INJECTION_PREFIXES, INJECTION_VARIABLES, Launch, MAX_TRUST_STORE_SIZE,
    MAX_TRUSTED_FILES, Scope, ServerSummary, Summary, TrustError, TrustStore, Warning,
    injection_risk, scope_of,
};
