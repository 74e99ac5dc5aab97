//! A Model Context Protocol client for both protocol eras.
//!
//! - [`session`]: the sans-IO core. Ids, pending requests, era negotiation
//!   (`server/discover` probe with `initialize` fallback), timeouts reset by
//!   progress, cancellation, `input_required` rounds: all as data, with time
//!   passed in. Testable without processes, sockets or a runtime.
//! - [`Client`] (feature `tokio`, on by default): a cheap, cloneable handle;
//!   many calls in flight over one transport, no lock held across a call. Its
//!   [`Driver`] is one task that owns the session and the transport.
//!
//! # Example
//!
//! ```no_run
//! # async fn run(transport: impl mcp_proto::transport::Transport) -> Result<(), mcp_client::ClientError> {
//! use mcp_client::Client;
//! use mcp_proto::schema::Tool;
//! use serde_json::json;
//!
//! let client = Client::builder("my-agent", "1.0.0").connect(transport).await?;
//! for tool in client.list_all::<Tool>().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let result = client.call_tool("echo", json!({"message": "hi"})).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! # Remembering what each server speaks
//!
//! Every connection detects the server's era (a `server/discover` probe,
//! falling back to `initialize`). An [`EraCache`] passed to
//! [`ClientBuilder::era_cache`] with a key for the server (HTTP: endpoint
//! origin and path; stdio: the command line) remembers the outcome, as the
//! spec recommends, so later connections skip the probe: a legacy server is
//! sent `initialize` at once, a modern one reuses its `server/discover`
//! answer while that is fresh. A remembered era that proves wrong is
//! forgotten and detected again within the same connection.
//!
//! # Cancel safety
//!
//! Dropping a request's future cancels the request: the server is sent
//! `notifications/cancelled` (never for `initialize`) and a late response is
//! ignored. Timeouts cancel the same way.
//!
//! # Feature flags
//!
//! - `tokio` (default): [`Client`], [`Driver`]. Without it only [`session`] remains.
//! - `skills`: the Skills extension (SEP-2640): `Client::list_skills`,
//!   `Client::load_skill`, `Client::read_skill_file`, each file verified
//!   against the listing (size, SHA-256, frontmatter) before it is used.
//!
//! # Design notes
//!
//! Unlike `STYLE.md`'s sketch, the session is not generic over a waiter type:
//! calls are named by a caller-chosen [`CallId`](session::CallId) that stays
//! the same across `input_required` retries (which need new JSON-RPC ids),
//! and the driver keeps the reply channels. That keeps the core free of any
//! async type and makes retries invisible to callers.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod era_cache;
pub mod error;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
pub mod handler;
pub mod session;

#[cfg(feature = "tokio")]
mod client;

pub use era_cache::{DEFAULT_ERA_CACHE_ENTRIES, EraCache};
pub use error::{ClientError, CloseReason, HandshakeError, SerdeError};
pub use handler::{ClientHandler, ListKind, NoHandler};
pub use session::{EraHint, ServerInfo, VersionChoice};

#[cfg(feature = "skills")]
#[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
pub use client::skills::LoadedSkill;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use client::{
    Client, ClientBuilder, DEFAULT_MAX_LIST_PAGES, Driver, MAX_CONCURRENT_SERVER_REQUESTS,
    MAX_QUEUED_NOTIFICATIONS, ProgressFn, RequestBuilder, ResponseFuture,
};

/// The README's example, compiled with the doc-tests so it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExample;
