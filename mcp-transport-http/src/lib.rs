//! The MCP Streamable HTTP transport, on hyper 1's connection API with a
//! small pool of its own, with a spec-exact incremental SSE decoder.
//!
//! [`HttpTransport`] implements [`mcp_proto::transport::Transport`] for every
//! HTTP revision of MCP:
//!
//! | revision | what the transport does |
//! |---|---|
//! | 2024-11-05 (HTTP+SSE) | fallback: an `initialize` POST answered 400/404/405 without a JSON-RPC error body → `GET`, wait for the `endpoint` event, POST there, read answers from the stream |
//! | 2025-03-26 … 2025-11-25 | one POST per message; JSON or SSE answers (priming events skipped); `Mcp-Session-Id` captured from the `initialize` answer and sent after; `MCP-Protocol-Version` from 2025-06-18 on; a dropped SSE answer resumed by `GET` + `Last-Event-ID` after the server's `retry` (with a floor), with capped, jittered exponential backoff and a bounded budget; optional standalone `GET` stream; `notifications/cancelled` POSTed and the local stream dropped; `DELETE` on close; a 404 to any message of a live session (a POST, the `GET` streams) → the loss reported once ([`SessionExpired`](mcp_proto::transport::TransportErrorKind::SessionExpired) not scoped to a request), and nothing but `initialize` sent until the client starts a new session; 429, and 503 with `Retry-After`, retried within the request's deadline where the server did not process the message ([`max_throttle_retries`](HttpTransportBuilder::max_throttle_retries)) |
//! | 2026-07-28 | `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (from `x-mcp-header`, Base64 sentinel when needed) on every POST; tools with invalid annotations left out of `tools/list` with a warning; cancellation closes the response stream; `subscriptions/listen` streams; a broken response stream re-issued once only for [methods you allow](HttpTransportBuilder::reissue_methods) |
//!
//! Era detection is the client's: a POST answered non-2xx **with** a JSON-RPC
//! error body is delivered as that error response (with the request's id);
//! **without** one it is a scoped [`Protocol`](mcp_proto::transport::TransportErrorKind::Protocol)
//! error and the client falls back to `initialize`.
//!
//! # Example
//!
//! ```no_run
//! use mcp_proto::jsonrpc::Request;
//! use mcp_proto::transport::{Transport, TransportExt};
//! use mcp_proto::version::ProtocolVersion;
//! use mcp_transport_http::{BearerToken, HttpTransport};
//! use std::time::Duration;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut transport = HttpTransport::builder("https://mcp.example.com/mcp")
//!     .auth(BearerToken::new("s3cr3t")?)
//!     .request_timeout(Some(Duration::from_secs(60)))
//!     .build()?;
//! std::pin::Pin::new(&mut transport).set_protocol_version(ProtocolVersion::V2026_07_28);
//! let params = mcp_proto::RawJson::from_string(r#"{"_meta":{}}"#.into())?;
//! transport.send(Request::new(1.into(), "server/discover", Some(params)).into()).await?;
//! let answer = transport.recv().await;
//! transport.close().await?;
//! # let _ = answer; Ok(()) }
//! ```
//!
//! # How it works
//!
//! `start_send` never blocks: it spawns one tokio task per message, which
//! takes a connection from the transport's pool: an idle kept-alive one,
//! or a new one, so N requests in flight use N HTTP/1.1 connections (at
//! most [`DEFAULT_MAX_IDLE_CONNECTIONS`] stay open idle, each closed after
//! [`DEFAULT_IDLE_TIMEOUT`] without a request, see
//! [`idle_timeout`](HttpTransportBuilder::idle_timeout); HTTP/2 by ALPN over TLS with the `http2` feature, one
//! connection for all). A host that keeps many sessions with one server
//! makes them with [`HttpTransport::new_session`]: one pool for all of them,
//! so an idle session holds no connection and N sessions need only as many
//! connections as they have requests in flight (1,000 sessions on
//! loopback, at most 128 busy at once: idle at ~14 KiB each against
//! ~30 KiB with a pool each, connected with ~128 TCP connects instead of
//! 1,000).
//! A connection the server closed while idle is
//! never used; a request that found it closed before being written is sent
//! on another. Every message received (a JSON body, each SSE event's data) goes
//! into one bounded queue that `poll_recv` drains
//! ([`DEFAULT_MAX_BUFFERED_MESSAGES`]). When it is full, the tasks stop
//! reading their bodies until there is room, so a consumer that stops
//! polling throttles the server through TCP/HTTP/2 flow control instead of
//! letting memory grow; nothing is dropped, and each stream keeps its
//! order. While the queue is full an answer can wait behind notifications
//! that came first; it moves as soon as the consumer polls again. A failure of one request comes
//! out of `poll_recv` as an error scoped to that request
//! ([`TransportError::request_id`](mcp_proto::transport::TransportError::request_id));
//! the transport stays usable. Notification and response POSTs keep their
//! order relative to later messages (each waits for the earlier ones' 202),
//! and `poll_flush` returns once they were answered (so a client's handshake
//! ends when the server has `notifications/initialized`); requests run
//! concurrently, and their flush does not wait. An answer that arrives on an SSE stream is held
//! until the stream ends (at most 20 ms), so a caller that sends its next
//! request on receipt finds the connection back in the pool.
//!
//! The transport needs a tokio runtime (multi- or current-thread) from the
//! first `start_send` on; building it does not.
//!
//! # The standalone GET stream
//!
//! With [`standalone_stream(true)`](HttpTransportBuilder::standalone_stream)
//! (2025-03-26 … 2025-11-25) the transport opens one `GET` stream for the
//! server's messages that answer no request of ours, **once**: right after
//! the server accepted `notifications/initialized`, and every message sent
//! after that waits (at most 5 s) until the server has answered that `GET`
//! with the stream, a 405, or an error. Why then and not later: a server
//! sends a request tied to none of ours (such as the `elicitation/create` a
//! tool handler issues without a related request) on the standalone stream
//! if one is open, and otherwise may drop it (the TypeScript SDK does), so
//! a `tools/call` that overtakes the `GET` can wait forever for an answer
//! the server already gave up on. Once the `GET` is answered, the server has
//! registered the stream. Why not earlier: before `initialized` there is no
//! session to attach it to.
//!
//! It is never opened again for a request of ours: a resumption of a broken
//! SSE answer is its own `GET`, sent only after the server's `retry` delay
//! (or the backoff) and always with `Last-Event-ID`, so a server can tell it
//! from the standalone stream by the header, not by timing. The standalone
//! stream reconnects itself (also after `retry`, with `Last-Event-ID` once
//! it saw an event id) within the resumption budget.
//!
//! # Local servers: Unix sockets and named pipes
//!
//! A server on the same machine can serve Streamable HTTP on a Unix domain
//! socket instead of a TCP port (what the MCP transports working group
//! recommends for local servers: the socket's file permissions say who may
//! connect, and no port is open to the machine's other users or to a
//! browser). Give the URL as VS Code's `mcp.json` writes it, the socket's
//! path then the request path in the fragment:
//!
//! ```no_run
//! # fn run() -> Result<(), mcp_transport_http::HttpError> {
//! let transport = mcp_transport_http::HttpTransport::new("unix:///run/app/mcp.sock#/mcp")?;
//! # let _ = transport; Ok(()) }
//! ```
//!
//! Everything above works the same over it: sessions, SSE answers and their
//! resumption, the standalone stream, the 2024-11-05 fallback, the auth
//! hook, the pool (connections to the socket are kept alive and reused).
//! The requests are HTTP/1.1 for `http://localhost<fragment>`: `Host:
//! localhost`, as VS Code sends. [`Endpoint`] says what that means for
//! OAuth (the resource identifier is that URL); [`LocalSocket`] lists the
//! forms, [`HttpTransportBuilder::unix_socket`] takes an `http://` URL and
//! a socket apart (for a server that routes by `Host`).
//!
//! A server that checks `Host` against DNS rebinding must allow
//! `localhost` without a port: the Python SDK's default check for an app
//! built for 127.0.0.1 allows only `localhost:<port>` and answers a socket
//! client `421 Misdirected Request` (a browser cannot reach a Unix socket,
//! so such a server can allow `localhost` or turn the check off).
//!
//! Windows named pipes (`pipe:///pipe/NAME#/mcp`, VS Code's form) are
//! written for Windows but neither built nor tested where this crate is
//! (Linux): treat them as untested. Each kind is compiled only on its own
//! system; a URL of the other kind fails at build with
//! [`UrlProblem::SocketUnsupported`].
//!
//! # Cancel safety
//!
//! `poll_recv` is cancel safe: a message is removed from the queue only when
//! it is returned. `start_send` is synchronous. `poll_close` may be polled
//! again after being dropped mid-way, and again after it finished (`Ok` at
//! once). It lets the notification and response POSTs already accepted
//! finish, then sends the `DELETE`, all within [`CLOSE_TIMEOUT`]; requests
//! still in flight are abandoned. Dropping the transport aborts every task
//! without blocking (no `DELETE` is sent then).
//!
//! # Feature flags
//!
//! - `rustls` (default): `https` with rustls (ring) and the webpki roots;
//!   your own rustls configuration with `HttpTransportBuilder::tls_config`.
//!   Without it only `http` URLs and local sockets work, or open connections
//!   yourself with a [`Connector`] (a proxy, another TLS stack).
//! - `native-roots`: adds `HttpTransportBuilder::native_roots(true)` (trust the OS store instead of webpki roots).
//! - `http2`: offers `h2` by ALPN over TLS and speaks HTTP/2 when the
//!   server picks it (off by default: MCP servers speak HTTP/1.1, and the
//!   `h2` crate and its dependencies are nine more crates).
//!
//! # Dependencies
//!
//! A dependent of `mcp-client`, `mcp-transport-stdio` and this crate with
//! `rustls` pulls **49** third-party crates (58 with `http2`; 62 with
//! hyper-util's pooled client and hyper-rustls, before this crate had its
//! own pool). Measured from a throwaway crate outside the workspace with
//! those three as path dependencies and the workspace's `Cargo.lock`:
//!
//! ```text
//! cargo tree -e normal --prefix none | sed 's/ (\*)//' | sort -u \
//!   | grep -v -E '^(mcp-|<the throwaway crate>)' | wc -l
//! ```
//!
//! # Limits
//!
//! All are named constants with a builder method: messages waiting for
//! `poll_recv` [`DEFAULT_MAX_BUFFERED_MESSAGES`] (1024), JSON bodies
//! [`DEFAULT_MAX_BODY_SIZE`] (16 MiB), SSE events [`DEFAULT_MAX_SSE_EVENT_SIZE`]
//! (16 MiB, enforced while reading), connect [`DEFAULT_CONNECT_TIMEOUT`],
//! response headers and JSON bodies [`DEFAULT_REQUEST_TIMEOUT`], idle
//! connections [`DEFAULT_IDLE_TIMEOUT`], same-origin 307/308 redirects
//! [`MAX_REDIRECTS`].
//!
//! Every SSE reconnection loop (a response stream resumed with
//! `Last-Event-ID`, the standalone `GET` stream) waits at least
//! [`MIN_RECONNECT_DELAY`] between attempts whatever the server's `retry`
//! says (`retry: 0` would reconnect thousands of times a second), and at
//! least the server's `retry` (the spec's MUST) and any `Retry-After` it
//! answered a reconnection with; attempts in a row that deliver no message
//! back off exponentially from [`INITIAL_BACKOFF`] to [`MAX_BACKOFF`], with
//! up to a fifth more at random; after [`DEFAULT_MAX_RESUME_ATTEMPTS`] of
//! them the stream is given up (a graceful close does not refill the
//! budget; only a delivered message does). Cross-origin
//! redirects are refused, so `Authorization` and cookies never leave the
//! configured origin. Session ids must be visible ASCII.
//!
//! # What it is not
//!
//! Not a client: ids, pending requests, `initialize`/`server/discover`,
//! re-initializing after [`SessionExpired`](mcp_proto::transport::TransportErrorKind::SessionExpired),
//! and `_meta` in request bodies are `mcp-client`'s. Not an OAuth
//! implementation: [`AuthProvider`] is the hook one plugs into. No HTTP
//! server side.
//!
//! # Stability
//!
//! Error enums are `#[non_exhaustive]`; error `Display` texts may change.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backoff;
mod client;
mod error;
mod headers;
mod local;
mod pool;
pub mod sse;
mod transport;
pub mod uri;

pub use client::{
    AuthProvider, BearerToken, BoxError, BoxFuture, CLOSE_TIMEOUT, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_BUFFERED_MESSAGES, DEFAULT_MAX_RESUME_ATTEMPTS,
    DEFAULT_MAX_RETRY_WAIT, DEFAULT_MAX_THROTTLE_RETRIES, DEFAULT_MAX_UNANSWERED_POSTS,
    DEFAULT_REISSUE_METHODS, DEFAULT_REQUEST_TIMEOUT, HttpTransportBuilder, INITIAL_BACKOFF,
    MAX_AUTH_RETRIES, MAX_BACKOFF, MIN_RECONNECT_DELAY, RequestBody, Unauthorized,
};
pub use error::{HttpError, NotRetried, RetryAt, UrlProblem};
pub use local::{Endpoint, LocalSocket};
pub use pool::{Connected, Connector, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_IDLE_CONNECTIONS, Io};
pub use sse::DEFAULT_MAX_EVENT_SIZE as DEFAULT_MAX_SSE_EVENT_SIZE;
pub use transport::HttpTransport;
pub use uri::MAX_REDIRECTS;
