//! An MCP host's server layer: the servers a user configured, started at
//! once, kept running, their tools merged, their answers cached.
//!
//! Every MCP host (an IDE, an agent CLI, a desktop app) needs the same
//! layer over its SDK. This crate is that layer, independent of how the
//! servers are configured: each server is a name, a [`Launcher`] (anything
//! that yields a connected [`mcp_client::Client`]) and its options
//! ([`ServerSpec`]).
//!
//! - **Start together.** [`HostBuilder::start`] starts every enabled server
//!   concurrently, each within its startup timeout, and returns when each
//!   one's first attempt ended: the time of the slowest, not the sum. A
//!   server that fails does not hold the others back.
//! - **Supervise.** A server that fails to start or goes away (its process
//!   exited, its connection closed; seen through
//!   [`Client::closed`](mcp_client::Client::closed), no polling) is reported
//!   with the reason (the stdio transport's stderr tail, the HTTP status)
//!   and tried again with capped, jittered exponential [`Backoff`] while
//!   the others keep serving. A restarted server's tools are listed again
//!   and the toolbox follows. A remote (HTTP) server has no connection
//!   that closes when it goes away: a call failing with a connection error
//!   (refused, reset, session lost) tells the host, which reconnects the
//!   same way.
//! - **Observe.** [`Host::status`] and [`Host::watch`]: per server
//!   [`ServerStatus`] (starting, ready with era and tool count, failed
//!   with why and the next retry, restarting, disabled). A failure's
//!   reason stays in the status while its retry runs.
//! - **Fail fast.** A call to a tool whose server is down fails at once
//!   with [`ToolError::Unavailable`](mcp_tools::ToolError::Unavailable),
//!   which tells the model what is going on and is model-correctable.
//! - **Control.** Per server: [`enabled`](ServerSpec::enabled) (and
//!   [`Host::set_enabled`] at run time), [`Host::restart`] (a new process
//!   now, or a failed server retried without waiting),
//!   [`Host::add`]/[`Host::remove`] while the host runs, tool
//!   [`include`](ServerSpec::include)/[`exclude`](ServerSpec::exclude)
//!   globs, a [`prefix`](ServerSpec::prefix).
//! - **Cache.** [`ResponseCache`] keeps answers while their `ttlMs` says
//!   they are fresh (SEP-2549), `private` ones per principal, invalidated
//!   by `list_changed`; in memory or in a [`FileStore`], so a host that
//!   restarts sends no `tools/list` to a server whose answer is still
//!   fresh.
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use mcp_client::Client;
//! use mcp_host::{FileStore, Host, Launcher, ResponseCache, ServerSpec};
//! # fn spawn(_: &str) -> Result<mcp_proto::transport::channel::ChannelTransport, std::io::Error> { Ok(mcp_proto::transport::channel::pair().0) }
//!
//! // With mcp-transport-stdio: `StdioTransport::spawn(ServerCommand::new("uvx").arg("mcp-server-git"))?`.
//! let git = Launcher::new(|| async {
//!     Ok(Client::builder("my-host", "1.0").connect(spawn("uvx mcp-server-git")?).await?)
//! });
//! let host = Host::builder()
//!     .server(ServerSpec::new("git", git).startup_timeout(Duration::from_secs(10)).exclude(["git_reset"]))
//!     .cache(ResponseCache::new(FileStore::open("/tmp/my-host-cache.json")))
//!     .start()
//!     .await?;
//! for report in host.status() {
//!     println!("{}: {}", report.name, report.status);
//! }
//! let tools = host.toolbox().openai_tools().await; // hand these to the model
//! # let _ = tools;
//! match host.call("git_status", serde_json::json!({"repo_path": "."})).await {
//!     Ok(out) => println!("{}", out.text),
//!     Err(e) if e.is_model_correctable() => println!("tell the model: {}", e.message_for_model()),
//!     Err(e) => return Err(e.into()),
//! }
//! host.close().await;
//! # Ok(()) }
//! ```
//!
//! # Layers
//!
//! Above `mcp-client` and `mcp-tools`; no transport and no configuration
//! format in the core. With the `config` feature (off by default),
//! `ServerSpec::from_config` and `HostBuilder::config_servers` take the
//! servers `mcp-config` read from a user's `.mcp.json`, `.vscode/mcp.json`
//! or `.cursor/mcp.json` (that pulls in the stdio and HTTP transports).
//!
//! **Trust.** A project's config file is code from whoever wrote the
//! project: start its servers only once the user trusted that file, and
//! check again when it changes (before `Host::apply_config` applies an
//! edit). This crate takes entries already read and resolved, and the
//! decision needs the host's own way of asking, so the mechanism is
//! `mcp-config`'s (its "Trusting project files" section:
//! `ConfigFile::summary` to show, `TrustStore` to remember, `resolve_all`
//! to start exactly the text that was trusted); the `mcp` CLI and the
//! `host` example use it, or are given the file explicitly.
//!
//! # Feature flags
//!
//! - `config` (off): servers from `mcp-config` entries, and
//!   `Host::apply_config` to follow edits of the user's file (unchanged
//!   servers keep running; new, changed and deleted ones are started,
//!   restarted and shut down).

mod cache;
#[cfg(feature = "config")]
mod config;
mod file_store;
mod host;
mod spec;
mod status;
mod supervisor;

pub use cache::{
    CacheEntry, CacheKey, CacheStats, CacheStore, CacheTarget, DEFAULT_MAX_ENTRIES, MAX_TTL,
    MemoryStore, ResponseCache,
};
pub use file_store::{DEFAULT_MAX_FILE_BYTES, FILE_FORMAT_VERSION, FileStore};
pub use host::{Host, HostBuilder, HostError};
pub use spec::{DEFAULT_STARTUP_TIMEOUT, LaunchError, Launcher, MAX_REASON_CHARS, ServerSpec};
pub use status::{Backoff, ServerReport, ServerStatus};

#[cfg(feature = "config")]
pub use config::{ClientFactory, ConfigChanges, TransportAdjust};
