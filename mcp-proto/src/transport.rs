//! The one `Transport` trait every MCP transport implements, and the error it returns.
//!
//! A transport moves whole JSON-RPC [`Message`]s between the client and one
//! server. It knows nothing about ids, sessions' pending requests or
//! timeouts: those live in the client. Third parties implement this trait
//! (a WebSocket, an in-process server, a test double) and depend only on
//! `mcp-proto`.
//!
//! # Why poll-based
//!
//! The trait is a `Sink` + `Stream` pair written with plain `poll_*` methods
//! (as `hyper`'s IO traits and `http-body` are), not `async fn`s:
//!
//! - it is object-safe, so `Pin<Box<dyn Transport>>` works and a client is not
//!   generic over its transport;
//! - the client's driver can interleave reading and writing in one task
//!   without `select!` over borrowed futures, and can *batch*: it calls
//!   [`start_send`](Transport::start_send) for every queued message and
//!   [`poll_flush`](Transport::poll_flush) once, so a stdio transport writes
//!   many small messages with one syscall;
//! - it needs no runtime: this crate has no tokio dependency.
//!
//! Implementing poll methods is a little more work than `async fn`; the
//! [`channel`] adapter and the example below show the pattern, and
//! [`TransportExt`] gives `async` helpers for callers. The test kit
//! (`transport::kit`, feature `test-kit`) checks an implementation against
//! the contract below from its own tests.
//!
//! # Which way to write a transport
//!
//! | you have | write | you get |
//! |---|---|---|
//! | an async API: something to `.await` to send a message and to receive one (a socket's halves, a client library's connection) | a [`SendHalf`](halves::SendHalf) and a [`RecvHalf`](halves::RecvHalf) of `async fn`s, joined by [`halves::Halves`] | the contract kept for you: both directions at once, backpressure, kinds of errors, a bounded close; one boxed future per message, no batching |
//! | a `Stream` + `Sink` of frames (WebSocket libraries) | two functions, for `framed::Framed` (feature `framed`) | the same, over the library's own buffering |
//! | a byte stream of newline-delimited JSON-RPC (`AsyncRead` + `AsyncWrite`) | nothing: `mcp_transport_stdio::LineTransport` | batched writes, a size limit that never buffers an oversized line, kit-tested |
//! | a protocol of your own to get the last instruction out of (stdio, HTTP) | the five `poll_*` methods, against the contract below | batching (many `start_send`, one flush) and control of every buffer |
//!
//! Whatever the way, run the test kit against it.
//!
//! # Contract
//!
//! - **Order.** Messages are delivered in the order they were sent, per
//!   direction. Nothing is reordered, merged or duplicated.
//! - **Sending.** Call [`poll_ready`](Transport::poll_ready) until it is ready,
//!   then [`start_send`](Transport::start_send) one message; repeat, then
//!   [`poll_flush`](Transport::poll_flush). A message accepted by
//!   `start_send` is sent by the next successful flush, or the flush fails.
//! - **Receiving.** [`poll_recv`](Transport::poll_recv) yields
//!   `Some(Ok(message))` per message, `Some(Err(e))` for an error, and
//!   `None` once the server has closed its side cleanly. After `None` it keeps
//!   returning `None`.
//! - **Errors are either scoped or terminal.** An error is *scoped* when it
//!   concerns one frame or one request and the transport goes on working:
//!   - [`TransportErrorKind::Decode`]: one frame could not be decoded (not
//!     JSON, or too large). It is reported once and skipped; the next frame
//!     is read normally.
//!   - any error that carries a [`request_id`](TransportError::request_id):
//!     that one request failed in the transport (an HTTP POST answered 500,
//!     a dropped response stream, an expired session). The client fails that
//!     request (or retries it) and goes on.
//!   - [`TransportErrorKind::SessionExpired`] without a request: the server
//!     ended the session (HTTP 404); the connection goes on, and the client
//!     starts a new session before it sends anything else.
//!   - **a dropped request of the server's**: a `Decode` error marked with
//!     [`refusing_request`](TransportError::refusing_request) says "the
//!     server's request with this id could not be read, because …". A
//!     transport that drops such a frame MUST say so whenever it can read
//!     the frame's top-level `id` (JSON-RPC wants an error answer: the
//!     server waits for one); the client answers it.
//!   - **a dropped answer**: a `Decode` error with a `request_id` says "the
//!     frame answering this request was dropped, because …" (over the size
//!     limit, not JSON-RPC, undecodable). A transport that drops a frame
//!     MUST say so whenever it can learn which request the frame answered
//!     (the id at the start or end of an oversized line, the request an
//!     HTTP response belongs to): otherwise that call waits for its whole
//!     timeout for an answer already thrown away. When a dropped frame may
//!     have been an answer but its id cannot be learned, the transport marks
//!     the error with [`answering_unknown`](TransportError::answering_unknown):
//!     the client then fails every call waiting for an answer, since any of
//!     them may have been the one.
//!
//!   Every other error is *terminal*: the connection is gone, and the
//!   following `poll_recv` returns `None`. [`TransportError::is_terminal`]
//!   tells which.
//! - **Clean close vs. error.** `None` from `poll_recv` is a clean close (EOF
//!   on stdio after a zero exit, a graceful HTTP end). A server that dies
//!   yields a terminal error first (for stdio: [`TransportErrorKind::Closed`]
//!   with the exit status and the last lines of stderr), then `None`.
//! - **Closing.** [`poll_close`](Transport::poll_close) flushes, then shuts the
//!   connection down as the transport's spec says (stdio: close stdin, wait,
//!   SIGTERM, SIGKILL; HTTP: `DELETE` the session). It is bounded in time.
//!   Dropping a transport without closing it must still release everything
//!   (kill the process group, abort tasks), without blocking.
//! - **Protocol version.** The client calls
//!   [`set_protocol_version`](Transport::set_protocol_version) when it has
//!   chosen a revision (before the first request that uses it). Transports
//!   that put the version on the wire (HTTP's `MCP-Protocol-Version` header)
//!   use it; others ignore it.
//!
//! # Who calls what, with which waker
//!
//! One task does all of a connection's IO: `mcp-client`'s driver owns the
//! transport and calls every method itself, one call at a time, each
//! `poll_*` with the driver task's own waker. Nothing else reaches the
//! transport (callers hand their requests to the driver's session and wake
//! it), so a transport may keep one waker per direction and rely on it.
//!
//! A transport therefore: is `Send`; stores the waker of the *latest* call
//! of each `poll_*` method (the driver's task may move between threads, and
//! a driver polled by another future passes that future's waker); never
//! blocks in any method; and may spawn tasks on the current tokio runtime
//! (the driver runs inside one).
//!
//! # What each method returns, by state
//!
//! | state | `poll_recv` | `poll_ready` / `start_send` / `poll_flush` | `poll_close` |
//! |---|---|---|---|
//! | open | `Some(Ok(m))`, scoped `Some(Err(e))`, or `Pending` | `Ready(Ok(()))` or `Pending` (backpressure) | starts closing |
//! | the peer died | one terminal `Some(Err(e))`, then `None` | `Err` of kind [`Closed`](TransportErrorKind::Closed) (or `Io`) | `Ready(Ok(()))` promptly: nothing left to shut down |
//! | the peer closed cleanly | `None` (after every message it sent) | `Err` of kind `Closed` | `Ready(Ok(()))` |
//! | closing or closed locally (`poll_close` called) | `None` (messages not yet received are dropped); never `Pending` forever | `Err` of kind `Closed` | `Ready(Ok(()))` again (idempotent) |
//!
//! `poll_close` is bounded in time: the transport documents its bound (stdio:
//! stdin grace + SIGTERM grace, then SIGKILL; HTTP:
//! `mcp_transport_http::CLOSE_TIMEOUT` for the `DELETE`) and returns
//! `Ready` within it whatever the peer does; an error from it (the `DELETE`
//! failed) is informational: the transport is closed either way.
//!
//! # Which kind an I/O error gets
//!
//! `From<std::io::Error>` maps `BrokenPipe`, `ConnectionReset`,
//! `ConnectionAborted` and `UnexpectedEof` to [`Closed`](TransportErrorKind::Closed)
//! (the peer went away), `TimedOut` to [`Timeout`](TransportErrorKind::Timeout),
//! and everything else to [`Io`](TransportErrorKind::Io). All three are
//! terminal unless the transport scopes the error to a request with
//! [`TransportError::with_request`].
//!
//! # Example: an in-process transport
//!
//! A transport that plays a tiny server answering every request with an
//! empty result. Real transports follow the same shape with IO underneath.
//!
//! ```
//! use std::collections::VecDeque;
//! use std::pin::Pin;
//! use std::task::{Context, Poll, Waker};
//! use mcp_proto::jsonrpc::{Message, Response};
//! use mcp_proto::transport::{Transport, TransportError, TransportErrorKind, TransportExt};
//!
//! #[derive(Default)]
//! struct Loopback {
//!     replies: VecDeque<Message>,
//!     waker: Option<Waker>,
//!     closed: bool,
//! }
//!
//! impl Transport for Loopback {
//!     fn poll_recv(mut self: Pin<&mut Self>, cx: &mut Context<'_>)
//!         -> Poll<Option<Result<Message, TransportError>>> {
//!         if let Some(m) = self.replies.pop_front() {
//!             return Poll::Ready(Some(Ok(m)));
//!         }
//!         if self.closed {
//!             return Poll::Ready(None);
//!         }
//!         self.waker = Some(cx.waker().clone());
//!         Poll::Pending
//!     }
//!     fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
//!         Poll::Ready(Ok(()))
//!     }
//!     fn start_send(mut self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
//!         if self.closed {
//!             return Err(TransportError::new(TransportErrorKind::Closed, "loopback closed"));
//!         }
//!         if let Message::Request(req) = msg {
//!             let empty = mcp_proto::RawJson::empty_object();
//!             self.replies.push_back(Response::new(req.id, empty).into());
//!             if let Some(w) = self.waker.take() { w.wake() }
//!         }
//!         Ok(())
//!     }
//!     fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
//!         Poll::Ready(Ok(()))
//!     }
//!     fn poll_close(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
//!         self.closed = true;
//!         Poll::Ready(Ok(()))
//!     }
//! }
//!
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = Context::from_waker(Waker::noop());
//! #     loop { if let Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! block_on(async {
//!     let mut t = Loopback::default();
//!     let ping = mcp_proto::jsonrpc::Request::new(1.into(), "ping", None);
//!     t.send(ping.into()).await.unwrap();
//!     let reply = t.recv().await.unwrap().unwrap();
//!     assert_eq!(reply.id(), Some(&1.into()));
//!     t.close().await.unwrap();
//!     assert!(t.recv().await.is_none());
//! });
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use crate::error::ErrorCode;
use crate::jsonrpc::{Message, RequestId};
use crate::version::ProtocolVersion;

pub mod channel;
#[cfg(feature = "framed")]
#[cfg_attr(docsrs, doc(cfg(feature = "framed")))]
pub mod framed;
pub mod halves;
#[cfg(feature = "test-kit")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-kit")))]
pub mod kit;

/// A message-level, bidirectional connection to one MCP server.
///
/// See the [module docs](self) for the contract.
pub trait Transport: Send + 'static {
    /// Receives the next message from the server.
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>>;

    /// Waits until the transport can accept a message with `start_send`.
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>>;

    /// Queues one message. Call only after `poll_ready` returned `Ready(Ok)`.
    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError>;

    /// Sends everything queued by `start_send`.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>>;

    /// Flushes, then shuts the connection down as the transport's spec says.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>>;

    /// Tells the transport which protocol revision the client now speaks.
    /// The default does nothing.
    fn set_protocol_version(self: Pin<&mut Self>, version: ProtocolVersion) {
        let _ = version;
    }

    /// Tells the transport by when the client will have given up on the
    /// request `id` (its timeout), just before that request is handed to
    /// [`start_send`](Transport::start_send). A transport that may wait
    /// before sending a request again (HTTP: a `429` or `503` answer with
    /// `Retry-After`) uses it never to wait past that time: it fails the
    /// request at once instead, saying when the server asked to be retried.
    /// Requests sent without it have no known deadline. The default does
    /// nothing.
    fn set_request_deadline(self: Pin<&mut Self>, id: &RequestId, deadline: Instant) {
        let _ = (id, deadline);
    }

    /// Where the server is, for telemetry: the client puts it on its spans
    /// and metrics as OpenTelemetry's `network.transport`, `server.address`
    /// and `server.port`. Asked once, when the client is built. The default
    /// says nothing ([`Endpoint::default`]).
    fn endpoint(&self) -> Endpoint {
        Endpoint::default()
    }
}

/// Where a transport's server is, as OpenTelemetry's attributes name it
/// (`network.transport`, `network.protocol.name`, `server.address`,
/// `server.port`): see [`Transport::endpoint`].
///
/// ```
/// use mcp_proto::transport::Endpoint;
/// let e = Endpoint::tcp("example.com", 443).with_protocol("http");
/// assert_eq!(e.network, Some("tcp"));
/// assert_eq!(e.address.as_deref(), Some("example.com"));
/// assert_eq!(Endpoint::pipe().port, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Endpoint {
    /// `network.transport`: `pipe` (stdio), `tcp`, `unix`, …; `None`: unknown.
    pub network: Option<&'static str>,
    /// `network.protocol.name` (lowercase): `http`, `websocket`, …
    pub protocol: Option<&'static str>,
    /// `server.address`: the host name as configured (no reverse lookup),
    /// an IP address, or a Unix socket's path.
    pub address: Option<String>,
    /// `server.port`.
    pub port: Option<u16>,
}

impl Endpoint {
    /// A server on the other end of pipes (stdio): `network.transport` `pipe`.
    pub fn pipe() -> Self {
        Endpoint {
            network: Some("pipe"),
            ..Endpoint::default()
        }
    }

    /// A server at `address`:`port` over TCP.
    pub fn tcp(address: impl Into<String>, port: u16) -> Self {
        Endpoint {
            network: Some("tcp"),
            address: Some(address.into()),
            port: Some(port),
            ..Endpoint::default()
        }
    }

    /// A server at a Unix domain socket's `path`.
    pub fn unix(path: impl Into<String>) -> Self {
        Endpoint {
            network: Some("unix"),
            address: Some(path.into()),
            ..Endpoint::default()
        }
    }

    /// With `network.protocol.name` (lowercase, e.g. `http`).
    #[must_use]
    pub fn with_protocol(mut self, name: &'static str) -> Self {
        self.protocol = Some(name);
        self
    }
}

/// A field of the client's request span (`mcp.request`, mcp-client's
/// telemetry) that a transport fills in. The client hands each request to
/// its transport inside that span, so a transport that learns something
/// only on the wire records it into the current span. The client declares
/// the field and the transport records it through this one definition: a
/// renamed field is a compile error on both sides, not a silent miss.
///
/// ```
/// use mcp_proto::transport::SpanField;
/// assert_eq!(SpanField::SESSION_ID.name(), "mcp.session.id");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanField(&'static str);

impl SpanField {
    /// `mcp.session.id`: the HTTP session (`MCP-Session-Id`) the request
    /// went out in.
    pub const SESSION_ID: SpanField = SpanField("mcp.session.id");

    /// The field's name, as `tracing` spans declare and record it.
    pub const fn name(self) -> &'static str {
        self.0
    }
}

impl<T: Transport + ?Sized> Transport for Pin<Box<T>> {
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        self.get_mut().as_mut().poll_recv(cx)
    }
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().as_mut().poll_ready(cx)
    }
    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        self.get_mut().as_mut().start_send(msg)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().as_mut().poll_flush(cx)
    }
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().as_mut().poll_close(cx)
    }
    fn set_protocol_version(self: Pin<&mut Self>, version: ProtocolVersion) {
        self.get_mut().as_mut().set_protocol_version(version);
    }
    fn set_request_deadline(self: Pin<&mut Self>, id: &RequestId, deadline: Instant) {
        self.get_mut().as_mut().set_request_deadline(id, deadline);
    }
    fn endpoint(&self) -> Endpoint {
        self.as_ref().get_ref().endpoint()
    }
}

/// A type-erased transport.
pub type BoxTransport = Pin<Box<dyn Transport>>;

/// `async` conveniences over [`Transport`] for callers (tests, simple tools).
pub trait TransportExt: Transport + Unpin {
    /// Sends one message and flushes.
    fn send(&mut self, msg: Message) -> impl Future<Output = Result<(), TransportError>> + Send
    where
        Self: Sized,
    {
        let mut msg = Some(msg);
        poll_fn(move |cx| {
            if msg.is_some() {
                match Pin::new(&mut *self).poll_ready(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                }
                if let Some(m) = msg.take() {
                    Pin::new(&mut *self).start_send(m)?;
                }
            }
            Pin::new(&mut *self).poll_flush(cx)
        })
    }

    /// Receives the next message; `None` after a clean close.
    fn recv(&mut self) -> impl Future<Output = Option<Result<Message, TransportError>>> + Send
    where
        Self: Sized,
    {
        poll_fn(move |cx| Pin::new(&mut *self).poll_recv(cx))
    }

    /// Closes the transport.
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send
    where
        Self: Sized,
    {
        poll_fn(move |cx| Pin::new(&mut *self).poll_close(cx))
    }
}

impl<T: Transport + Unpin> TransportExt for T {}

/// What kind of failure a [`TransportError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// An I/O error on the underlying connection.
    Io,
    /// The peer is gone: the process exited, the connection was closed, or
    /// the transport was closed locally.
    Closed,
    /// One frame could not be decoded (not JSON-RPC, or over the size limit).
    /// Scoped: the transport skips it and goes on.
    Decode,
    /// The transport gave up waiting (connect or request timeout).
    Timeout,
    /// The peer broke the transport's protocol (an HTTP status or content
    /// type the spec does not allow, a malformed SSE stream).
    Protocol,
    /// The server no longer knows the session (HTTP 404 on a live session).
    ///
    /// Not scoped to a request, it reports the loss (once per lost session,
    /// before any error scoped to a request of that session): the
    /// connection works, and the client must start a new session
    /// (`initialize`) before it sends anything else; the transport sends
    /// nothing but `initialize` until then. Scoped to a request, it means
    /// that request was answered 404 (or held back while the session was
    /// lost): the server did not process it, so sending it again in the new
    /// session is safe.
    SessionExpired,
    /// The server rejected the client's credentials (HTTP 401/403).
    Unauthorized,
    /// The server refused the request for now and did not process it (HTTP
    /// 429 Too Many Requests, or 503 Service Unavailable): too many
    /// requests, or overloaded. The transport retries what is safe within
    /// the request's deadline; this error means it did not (any more), and
    /// its cause says when the server asked to be retried, if it said.
    Throttled,
    /// Anything else.
    Other,
}

impl fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportErrorKind::Io => "I/O error",
            TransportErrorKind::Closed => "connection closed",
            TransportErrorKind::Decode => "undecodable message",
            TransportErrorKind::Timeout => "timed out",
            TransportErrorKind::Protocol => "transport protocol error",
            TransportErrorKind::SessionExpired => "session expired",
            TransportErrorKind::Unauthorized => "unauthorized",
            TransportErrorKind::Throttled => "refused for now by the server",
            TransportErrorKind::Other => "transport error",
        })
    }
}

/// A transport failure: a [kind](TransportErrorKind), an optional request it
/// is scoped to, and an optional cause.
///
/// Cheap to clone (the cause is shared), so one error can fail many waiters.
/// Third-party transports build it with [`TransportError::new`].
///
/// Its `Display` is the kind alone (`connection closed`); the cause is its
/// [`source`](StdError::source), so print it with
/// [`chain`](crate::error::chain): `connection closed: server exited with
/// status 1: fatal: config missing`.
#[derive(Clone)]
pub struct TransportError {
    kind: TransportErrorKind,
    request: Option<RequestId>,
    /// A dropped frame that may have answered any pending request.
    unknown_answer: bool,
    /// A dropped frame that was the server's request `request` (then not
    /// one of the client's): the JSON-RPC error code to answer it with.
    /// Beside the kind and the flag, it fits the padding: the error stays
    /// 48 bytes, and so do the results that carry it on every call.
    refused: Option<std::num::NonZeroI32>,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

impl TransportError {
    /// An error of `kind` caused by `source` (any error, or a message string).
    pub fn new(
        kind: TransportErrorKind,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        TransportError {
            kind,
            request: None,
            unknown_answer: false,
            refused: None,
            source: Some(Arc::from(source.into())),
        }
    }

    /// An error of `kind` with no further cause.
    pub fn from_kind(kind: TransportErrorKind) -> Self {
        TransportError {
            kind,
            request: None,
            unknown_answer: false,
            refused: None,
            source: None,
        }
    }

    /// Scopes this error to one request: only that request fails.
    #[must_use]
    pub fn with_request(mut self, id: RequestId) -> Self {
        self.request = Some(id);
        self.refused = None;
        self
    }

    /// Marks a dropped frame (a [`Decode`](TransportErrorKind::Decode)
    /// error) that may have been the answer to any pending request: it
    /// looked like a response, but its id could not be learned. The client
    /// fails every call waiting for an answer (see the module docs).
    #[must_use]
    pub fn answering_unknown(mut self) -> Self {
        self.unknown_answer = true;
        self
    }

    /// Marks a dropped frame (a [`Decode`](TransportErrorKind::Decode)
    /// error) that was a request from the server whose `id` could be read:
    /// the client answers it with an error of `code` (the cause as its
    /// message), as JSON-RPC asks, rather than leave the server waiting for
    /// an answer. `id` names the *server's* request, never one of the
    /// client's: the error is not [scoped to a request](Self::request_id).
    #[must_use]
    pub fn refusing_request(mut self, id: RequestId, code: ErrorCode) -> Self {
        // Code 0 is no JSON-RPC error: answered as an internal error.
        let code = std::num::NonZeroI32::new(code.0)
            .or(std::num::NonZeroI32::new(ErrorCode::INTERNAL_ERROR.0));
        self.request = Some(id);
        self.refused = code;
        self
    }

    /// The server's request this dropped frame was, and the error to
    /// answer it with ([`refusing_request`](Self::refusing_request)).
    pub fn refused_request(&self) -> Option<(&RequestId, ErrorCode)> {
        let code = self.refused?;
        Some((self.request.as_ref()?, ErrorCode(code.get())))
    }

    /// Whether this error is a dropped frame that may have answered any
    /// pending request ([`answering_unknown`](Self::answering_unknown)).
    pub fn is_unknown_answer(&self) -> bool {
        self.unknown_answer
    }

    /// Whether this error is a dropped frame that answered the request in
    /// [`request_id`](Self::request_id): a `Decode` error scoped to a request.
    pub fn is_dropped_answer(&self) -> bool {
        self.kind == TransportErrorKind::Decode && self.request_id().is_some()
    }

    /// The kind of failure.
    pub fn kind(&self) -> TransportErrorKind {
        self.kind
    }

    /// The request this error is scoped to, if any (never the server's
    /// request of [`refused_request`](Self::refused_request)).
    pub fn request_id(&self) -> Option<&RequestId> {
        match self.refused {
            None => self.request.as_ref(),
            Some(_) => None,
        }
    }

    /// Whether the transport is unusable after this error (see the module docs).
    pub fn is_terminal(&self) -> bool {
        self.request.is_none()
            && !matches!(
                self.kind,
                TransportErrorKind::Decode | TransportErrorKind::SessionExpired
            )
    }

    /// The underlying cause, if any.
    pub fn cause(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

impl fmt::Debug for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TransportError");
        d.field("kind", &self.kind);
        if let Some(r) = self.request_id() {
            d.field("request", r);
        }
        if self.unknown_answer {
            d.field("unknown_answer", &true);
        }
        if let Some((id, code)) = self.refused_request() {
            d.field("refused_request", id);
            d.field("refused_code", &code.0);
        }
        if let Some(s) = &self.source {
            d.field("source", &s.to_string());
        }
        d.finish()
    }
}

/// Its own part only: the [kind](TransportErrorKind). The cause is the
/// [`source`](StdError::source); [`chain`](crate::error::chain) prints both.
impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

/// A size for an error message: `64.0 MiB`, `16 MiB` (an exact number of
/// MiB, as limits usually are), `1000 bytes`.
///
/// ```
/// use mcp_proto::transport::ByteSize;
/// assert_eq!(ByteSize(64 * 1024 * 1024 + 50).to_string(), "64.0 MiB");
/// assert_eq!(ByteSize(16 * 1024 * 1024).to_string(), "16 MiB");
/// assert_eq!(ByteSize(1000).to_string(), "1000 bytes");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: u64 = 1024 * 1024;
        match self.0 {
            n if n >= MIB && n.is_multiple_of(MIB) => write!(f, "{} MiB", n / MIB),
            n if n >= MIB => write!(f, "{:.1} MiB", n as f64 / MIB as f64),
            n => write!(f, "{n} bytes"),
        }
    }
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        let kind = match e.kind() {
            std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::UnexpectedEof => TransportErrorKind::Closed,
            std::io::ErrorKind::TimedOut => TransportErrorKind::Timeout,
            _ => TransportErrorKind::Io,
        };
        TransportError::new(kind, e)
    }
}

impl From<crate::jsonrpc::DecodeError> for TransportError {
    fn from(e: crate::jsonrpc::DecodeError) -> Self {
        TransportError::new(TransportErrorKind::Decode, e)
    }
}
