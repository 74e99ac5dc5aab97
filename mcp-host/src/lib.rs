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
//!   server that fails does not hold the others back. [`HostBuilder::spawn`]
//!   returns the host at once instead, to watch the servers come up.
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
//!   with why and the next retry, restarting, disabled), from the first
//!   attempt on (`Starting` included) with [`HostBuilder::spawn`]. A
//!   failure's reason stays in the status while its retry runs. A status
//!   reads as a sentence with wall-clock times ("failed to start (…); next
//!   attempt at 2026-12-04T16:15:20Z", RFC 3339 in UTC): an unchanged
//!   status prints the same every time.
//! - **Fail fast.** A call to a tool whose server is down fails at once
//!   with [`ToolError::Unavailable`](mcp_tools::ToolError::Unavailable),
//!   which tells the model what is going on and is model-correctable.
//! - **One toolbox for a whole conversation.** [`Host::toolbox`] is the
//!   same live [`Toolbox`](mcp_tools::Toolbox) from start to close: every
//!   start, restart, [`Host::add`]/[`Host::remove`], [`Host::set_enabled`],
//!   tool-list change and approval changes its servers in place. An agent
//!   keeps it, or a [`Deferred`](mcp_tools::Deferred) conversation made
//!   from it, as long as it likes; every path to a tool answers as
//!   [`Host::call`] does. See "An agent's conversation" below.
//! - **Result budgets.** The most tokens of a result that reach the model:
//!   host-wide ([`HostBuilder::result_budget`]), per server
//!   ([`ServerSpec::result_budget`]) and per tool
//!   ([`ServerSpec::tool_result_budget`]); a cut result is kept for the
//!   `read_result` tool ([`HostBuilder::kept_results`] bounds them) across
//!   every change of the servers.
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
//! - **Trust after the start.** Each server's tool definitions are pinned
//!   ([`HostBuilder::pins`]): a tool that changes or appears later is held
//!   back, out of the model's tools and refused, until the user approves
//!   what [`Host::held`] shows ([`Host::approve`]). Each call passes the
//!   [`ToolPolicy`](mcp_tools::ToolPolicy) first (allow, ask through the
//!   application's callback, deny; [`HostBuilder::tool_options`], per
//!   server [`ServerSpec::tool_rules`]). The administrator's
//!   [`ManagedPolicy`] keeps servers from starting at all
//!   ([`HostBuilder::managed_policy`]). See "Trust" below.
//! - **Durable tasks.** [`Host::start_task`] calls a tool as a task and
//!   records its [`TaskTicket`](mcp_client::TaskTicket) in the host's
//!   [`TicketStore`] ([`HostBuilder::tickets`]: in memory by default, a
//!   store of its own, not the response cache's); after a restart (even a
//!   killed host, with a [`FileTicketStore`]) [`Host::tasks`] lists them
//!   and [`Host::task_result`] follows one to its result, or to a typed
//!   error if the task is gone (bounded by [`DEFAULT_MAX_TICKETS`], pruned
//!   at their deadline or expiry). A ticket file that cannot be read is a
//!   [`TicketStoreError`] that names it and says what to do, never an
//!   empty store.
//!
//! # Which tasks survive a host restart
//!
//! A ticket names a task on a server, so a task outlives the host only
//! where its server does:
//!
//! - **A server that outlives the host** (Streamable HTTP: its own process,
//!   reached over the network) still holds its tasks when a new host starts,
//!   in memory or in its database; the new host follows the ticket on a new
//!   connection to the task's result.
//! - **A stdio server is the host's child** and ends with it (its stdin
//!   closes; a host that shuts down sends SIGTERM, then SIGKILL, to its
//!   process group). A new host spawns a new process, which knows nothing of
//!   the old one's tasks unless the server keeps them outside its process
//!   (in a file or a database). Following such a ticket ends at once in a
//!   typed error, never a wait: [`HostTaskError::Tool`] with a
//!   [`ToolError::Fatal`](mcp_tools::ToolError::Fatal) whose source is
//!   [`ClientError::Ticket`](mcp_client::ClientError::Ticket)`(`[`TicketError::Unknown`](mcp_client::TicketError::Unknown)`)`
//!   (the new process answers `tasks/get` with -32602), and the ticket is
//!   forgotten.
//!
//! So a host that must not lose long tasks across its own restarts runs
//! their servers over HTTP, or servers that keep their tasks on disk.
//! (`tests/tasks.rs` kills a host, which has no response cache, with
//! SIGKILL mid-task and starts another on the same ticket file:
//! FastMCP over HTTP and a stdio server that keeps its tasks in a file give
//! the result; server-everything over stdio gives `TicketError::Unknown`.)
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use mcp_client::Client;
//! use mcp_host::{FileStore, FileTicketStore, Host, Launcher, ResponseCache, ServerSpec};
//! # fn spawn(_: &str) -> Result<mcp_proto::transport::channel::ChannelTransport, std::io::Error> { Ok(mcp_proto::transport::channel::pair().0) }
//!
//! // With mcp-transport-stdio: `StdioTransport::spawn(ServerCommand::new("uvx").arg("mcp-server-git"))?`.
//! let git = Launcher::new(|| async {
//!     Ok(Client::builder("my-host", "1.0").connect(spawn("uvx mcp-server-git")?).await?)
//! });
//! let host = Host::builder()
//!     .server(ServerSpec::new("git", git).startup_timeout(Duration::from_secs(10)).exclude(["git_reset"]))
//!     .cache(ResponseCache::new(FileStore::open("/tmp/my-host-cache.json")))
//!     .tickets(FileTicketStore::open("/tmp/my-host-tasks.json")?)
//!     .start()
//!     .await?;
//! for report in host.status() {
//!     println!("{}: {}", report.name, report.status);
//! }
//! let tools = host.toolbox().openai_definitions().await; // serialize into the model request
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
//! # An agent's conversation
//!
//! A conversation lives longer than a server's process: the model searches
//! for tools on one turn, calls them on later ones, reads on in a result
//! cut many turns before. The host's toolbox is one live thing for all of
//! it. A [`Deferred`](mcp_tools::Deferred) made from it keeps what the model
//! loaded by name, so a server that restarts (killed, crashed, a new
//! version) brings its tools back into the conversation as it comes back;
//! in between, a call says the server is restarting
//! ([`ToolError::Unavailable`](mcp_tools::ToolError::Unavailable), which the
//! model can act on), and a server that went away during a call is started
//! again. A server added with [`Host::add`] is found by the next
//! `search_tools`, with its own [tool rules](ServerSpec::tool_rules); a
//! tool held back by the [pins](HostBuilder::pins) is neither found nor
//! run until [`Host::approve`] lets it through. The results kept for
//! `read_result` belong to the host, not to a server: an id the model got
//! before a restart still reads after it (within
//! [`HostBuilder::kept_results`]; the oldest are forgotten first).
//!
//! ```no_run
//! # async fn run(git: mcp_host::Launcher) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_host::tools::{DeferredOptions, ModelApi};
//! use mcp_host::{Host, ServerSpec};
//!
//! let host = Host::builder()
//!     .server(ServerSpec::new("git", git).tool_result_budget("git_log", 2_000))
//!     .result_budget(8_000)
//!     .start()
//!     .await?;
//! // One per conversation, kept for all of it.
//! let conversation = host.toolbox().deferred(DeferredOptions::new().always(["git_status"]));
//! loop {
//!     let tools = conversation.definitions(ModelApi::Anthropic).await; // this turn's tools
//!     # let _ = tools;
//!     // ... send them with the messages; for each tool call the model makes:
//!     # let (name, arguments) = ("search_tools", serde_json::json!({"query": "show recent commits"}));
//!     let reply = match conversation.call(name, arguments).await {
//!         Ok(out) => out.text,
//!         Err(e) if e.is_model_correctable() => e.message_for_model(),
//!         Err(e) => return Err(e.into()),
//!     };
//!     # let _ = reply; break;
//! }
//! # Ok(()) }
//! ```
//!
//! Result budgets have no key in a configuration entry: a budget follows
//! the application's model (its context, what a token costs), not the
//! server an entry names, and the files are shared with other hosts.
//!
//! # Layers
//!
//! Above `mcp-client` and `mcp-tools`; no transport and no configuration
//! format in the core. With the `config` feature (off by default),
//! `ServerSpec::from_config` and `HostBuilder::config_servers` take the
//! servers `mcp-config` read from a user's `.mcp.json`, `.vscode/mcp.json`
//! or `.cursor/mcp.json` (that pulls in the stdio and HTTP transports).
//!
//! # One dependency
//!
//! A host program depends on this crate alone: it re-exports the crates
//! whose types its API takes and returns, as modules, at the versions it
//! was built with (so a `Client` made with [`client`] is the one
//! [`Launcher`] wants, whatever else is in the dependency graph):
//!
//! | module | crate | for |
//! |---|---|---|
//! | [`client`] | `mcp-client` | `Client`, `ClientBuilder`, `ClientHandler` (what the server asks of the user), errors |
//! | [`tools`] | `mcp-tools` | what [`Host::toolbox`], [`Host::tools`] and [`Host::call`] return |
//! | [`proto`] | `mcp-proto` | wire types (`Tool`, `ProtocolVersion`, `Era`), the `Transport` trait |
//! | `config` (feature `config`) | `mcp-config` | users' config files: `discover`, `load_all`, `ConfigFile`, `Resolver` |
//! | `stdio` (feature `stdio`, or `config`) | `mcp-transport-stdio` | `StdioTransport`, `ServerCommand`, for a [`Launcher`] of your own |
//! | `http` (feature `http`, or `config`) | `mcp-transport-http` | `HttpTransport` (rustls), for a [`Launcher`] of your own |
//!
//! The trust types the API takes and returns ([`PinStore`], [`ToolChange`],
//! [`ManagedPolicy`]) are `mcp-config`'s, re-exported at the root with or
//! without the `config` feature (the core depends on `mcp-config` without
//! its transports).
//!
//! ```toml
//! [dependencies]
//! mcp-host = { version = "0.1", features = ["config"] }
//! ```
//!
//! Why re-exports here rather than a facade crate: a host already depends
//! on this crate, the layer that composes the others, and its features
//! already decide which transports are compiled; re-exporting them costs
//! nothing and adds no crate to version and keep in step. A facade would
//! be one more crate with the same features, for the one job that needs
//! several crates: the other jobs (one server's tools in a program, an
//! agent bridge, a custom transport) are one or two crates each (the
//! README's "Which crate for which job").
//!
//! # Trust
//!
//! **Before a server starts.** A project's config file is code from whoever
//! wrote the project: start its servers only once the user trusted that
//! file, and check again when it changes (before `Host::apply_config`
//! applies an edit). This crate takes entries already read and resolved,
//! and the decision needs the host's own way of asking, so the mechanism
//! is `mcp-config`'s (its "Trusting project files" section:
//! `ConfigFile::summary` to show, `TrustStore` to remember, `resolve_all`
//! to start exactly the text that was trusted); the `mcp` CLI and the
//! `host` example use it, or are given the file explicitly.
//!
//! **Whether it may start at all.** [`HostBuilder::managed_policy`] with
//! `ManagedPolicy::system()` (the administrator's
//! `/etc/mcp/managed-policy.json`: `allowedMcpServers`,
//! `deniedMcpServers` by name, command or URL): a server it refuses is
//! [`Blocked`](ServerStatus::Blocked), never launched, whatever file named
//! it. A policy file that cannot be read is an error to stop on.
//!
//! **What its tools say.** A trusted server can change its tools later (a
//! description gains instructions aimed at the model, a harmless tool
//! turns destructive). With [`HostBuilder::pins`] the host remembers each
//! tool's model-facing definition at the server's first use (per
//! [`ServerSpec::pin_key`]: the config file and entry name for configured
//! servers) and sorts every later listing: a new or changed tool is held
//! back ([`ServerStatus::Ready`]'s `held`, [`Host::held`] with a readable
//! [`diff`](ToolChange::diff) that shows hidden characters), calls to it
//! are refused ([`Refusal::Unapproved`](mcp_tools::Refusal::Unapproved)),
//! and [`Host::approve`] lets it through, in this run and the next:
//!
//! ```no_run
//! # async fn run(servers: Vec<mcp_host::config::ServerConfig>) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_host::{Host, ManagedPolicy, PinStore};
//! use mcp_host::tools::{ToolOptions, ToolPolicy};
//!
//! let host = Host::builder()
//!     .config_servers(&servers, Arc::new(|| mcp_host::client::Client::builder("my-host", "1.0")))
//!     .managed_policy(ManagedPolicy::system()?)
//!     .pins(PinStore::new(PinStore::default_path("my-host").ok_or("no home")?))
//!     .tool_options(ToolOptions::new().policy(ToolPolicy::new()).on_ask(|request| async move {
//!         // Ask the user about `request.tool` with `request.arguments`.
//!         false
//!     }))
//!     .start()
//!     .await?;
//! for change in host.held() {
//!     println!("{}", change.diff()); // show it; if the user agrees:
//!     host.approve(&change).await?;
//! }
//! # Ok(()) }
//! ```
//!
//! **What each call may do.** The [`ToolPolicy`](mcp_tools::ToolPolicy) in
//! [`HostBuilder::tool_options`] decides allow, ask or deny per tool, before
//! anything is sent, on every path ([`Host::call`], [`Host::start_task`],
//! the toolbox's tools); each server's own rules
//! ([`ServerSpec::tool_rules`], a config entry's `toolPolicy`) come first.
//!
//! # Feature flags
//!
//! - `config` (off): servers from `mcp-config` entries, and
//!   `Host::apply_config` to follow edits of the user's file (unchanged
//!   servers keep running; new, changed and deleted ones are started,
//!   restarted and shut down); re-exports `mcp-config` as `config` and
//!   turns on `stdio` and `http`.
//! - `stdio` (off): re-exports `mcp-transport-stdio` as `stdio`.
//! - `http` (off): re-exports `mcp-transport-http`, with rustls, as `http`.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod atomic_file;
mod cache;
mod file_store;
#[cfg(feature = "config")]
mod from_config;
mod host;
mod keeper;
mod slot;
mod spec;
mod status;
mod supervisor;
mod tasks;
mod ticket_store;
mod trust;

pub use cache::{
    CacheEntry, CacheKey, CacheStats, CacheStore, CacheTarget, DEFAULT_MAX_ENTRIES, MAX_TTL,
    MemoryStore, ResponseCache,
};
pub use file_store::{DEFAULT_MAX_FILE_BYTES, FILE_FORMAT_VERSION, FileStore};
pub use host::{Host, HostBuilder, HostError};
pub use spec::{DEFAULT_STARTUP_TIMEOUT, LaunchError, Launcher, MAX_REASON_CHARS, ServerSpec};
pub use status::{Backoff, ServerReport, ServerStatus};
pub use tasks::HostTaskError;
pub use ticket_store::{
    DEFAULT_MAX_TICKETS, FileTicketStore, MemoryTicketStore, TICKET_FILE_VERSION, TicketStore,
    TicketStoreError,
};
pub use trust::Origin;

// The trust pieces the host's API takes and returns (mcp-config's, with
// or without the `config` feature).
pub use mcp_config::{ChangeKind, ManagedPolicy, PinStore, ToolChange, TrustError};

#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub use from_config::{ClientFactory, ConfigChanges, TransportAdjust};

// The crates a host program uses, at the versions this crate was built
// with (see "One dependency" above).
pub use mcp_client as client;
pub use mcp_proto as proto;
pub use mcp_tools as tools;

#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub use mcp_config as config;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use mcp_transport_http as http;
#[cfg(feature = "stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
pub use mcp_transport_stdio as stdio;
