//! Read the MCP server lists users already wrote for their hosts (Claude
//! Desktop and Claude Code, VS Code, Cursor, the proposed standard
//! `mcp.json`) into one typed list, and turn an entry into a transport.
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
//! | expands | `${VAR}`, `${VAR:-default}` | `${env:VAR}`, `${input:ID}`, `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}`, `${/}` | the same without `${input:...}` | `${env:VAR}`, `${value:TEXT}`, `${input:ID}`, `a \| b` fallbacks |
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
//! Fields no format above documents but other hosts write, read so the
//! layer above can honour them: `"disabled": true` / `"enabled": false`
//! (Cline, Roo, Windsurf), `includeTools` / `excludeTools` (Gemini CLI),
//! `cwd`. Unknown fields are ignored.
//!
//! # Discovery and merging
//!
//! [`discover`] returns the files present among [`DISCOVERED_FILES`]
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
//!
//! # Limits
//!
//! Files over [`MAX_CONFIG_SIZE`] (4 MiB) are refused.

mod discover;
mod error;
mod jsonc;
mod model;
mod parse;
mod resolve;
mod transport;

pub use discover::{DISCOVERED_FILES, ServerList, Shadowed, discover, load_all};
pub use error::ConfigError;
pub use model::{
    Expanded, Format, InputSpec, OAuthConfig, RemoteConfig, ServerConfig, Source, StdioConfig,
    TransportConfig,
};
pub use parse::{ConfigFile, MAX_CONFIG_SIZE};
pub use resolve::{InputError, InputMissing, InputProvider, Resolver};
pub use transport::{BuildError, Prepared};
