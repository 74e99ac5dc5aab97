//! Wire types for the Model Context Protocol, every revision from
//! 2024-11-05 to 2026-07-28, and the one [`Transport`](transport::Transport)
//! trait every MCP transport implements.
//!
//! This crate does no IO and has no async runtime dependency.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope. A [`Message`] is decoded once;
//!   `params` and `result` stay raw JSON until someone asks for a typed form.
//! - [`error`]: [`ErrorObject`] and the open [`ErrorCode`] set with the
//!   spec's named codes and their structured `data`; how every Rust error
//!   of these crates prints (its own part only), and
//!   [`chain`](error::chain), which prints an error with all its causes.
//! - [`version`]: [`ProtocolVersion`], its [`Era`], and which
//!   [`Feature`](version::Feature)s each revision has.
//! - [`schema`]: typed params and results of every method, plus typed
//!   dispatch of what a server sends unprompted
//!   ([`ServerRequest`](schema::ServerRequest),
//!   [`ServerNotification`](schema::ServerNotification)) and of 2026-07-28
//!   results by `resultType` ([`RequestOutcome`](schema::RequestOutcome)).
//! - [`method`]: ties method names to their param and result types:
//!   [`Method`](method::Method) (client → server),
//!   [`ServerMethod`](method::ServerMethod) (server → client) and
//!   [`NotificationMethod`](method::NotificationMethod).
//! - [`transport`]: the [`Transport`](transport::Transport) trait, its
//!   [`TransportError`](transport::TransportError), an in-memory
//!   [`channel`](transport::channel) pair, and
//!   [`halves`](transport::halves): a transport from any async send/receive
//!   pair; with feature `framed`, an adapter for message-framed connections
//!   (WebSocket); with feature
//!   `test-kit`, `transport::kit`: the contract checks a transport crate
//!   runs against itself from its tests.
//!
//! # What it is not
//!
//! Not a client: ids, pending requests, timeouts and negotiation live in
//! `mcp-client`. Not a transport: stdio and HTTP live in
//! `mcp-transport-stdio` and `mcp-transport-http`.
//!
//! # Example
//!
//! ```
//! use mcp_proto::{Message, schema::CallToolResult};
//!
//! let line = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
//! let Message::Response(resp) = Message::from_slice(line)? else { panic!("not a response") };
//! let result: CallToolResult = resp.result.decode()?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Feature flags
//!
//! All off by default; docs.rs shows every one.
//!
//! - `framed`: `transport::framed`, a transport over any message-framed
//!   connection (WebSocket).
//! - `test-kit`: `transport::kit` and `transport_kit_tests!`, the
//!   contract checks a transport crate runs from its tests.
//! - `test-util`: `testing`, finding the real peers the workspace's tests
//!   run against.
//!
//! # Stability
//!
//! Types the server sends are `#[non_exhaustive]`; unknown members are kept
//! in `extra` maps and unknown content kinds decode to `Unknown` variants, so
//! a newer server never breaks decoding.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod error;
pub mod jsonrpc;
pub mod method;
pub mod raw;
pub mod schema;
pub mod transport;
pub mod version;

#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{Message, Notification, Request, RequestId, Response};
pub use raw::{RawJson, RawObject};
pub use version::{Era, ProtocolVersion};
