//! Configuration, the builder, the auth hook and the pooled hyper client.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use http_body_util::Full;

use crate::error::HttpError;
use crate::local::{Endpoint, LocalSocket};
use crate::pool::{Connect, Connector, Pool};
use crate::transport::HttpTransport;

/// A boxed `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The request body type the transport sends (a whole JSON message).
pub type RequestBody = Full<Bytes>;

/// Default for [`HttpTransportBuilder::connect_timeout`]: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default for [`HttpTransportBuilder::request_timeout`]: 120 s until the
/// response headers (and, for JSON answers, the whole body) arrive.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Default for [`HttpTransportBuilder::max_body_size`]: 16 MiB.
pub const DEFAULT_MAX_BODY_SIZE: usize = 16 * 1024 * 1024;
/// Default for [`HttpTransportBuilder::max_resume_attempts`]: 5.
pub const DEFAULT_MAX_RESUME_ATTEMPTS: u32 = 5;
/// Default for [`HttpTransportBuilder::max_unanswered_posts`]: 64.
///
/// Notifications and answers to the server's requests are POSTed one after
/// another, each after the server answered the one before (202 comes at
/// once from a server that reads). 64 never waits on such a server, and
/// bounds what a server that stops answering them can make the client hold.
pub const DEFAULT_MAX_UNANSWERED_POSTS: usize = 64;
/// Default for [`HttpTransportBuilder::max_buffered_messages`]: 1024.
///
/// Received messages wait in one bounded queue until
/// [`poll_recv`](mcp_proto::transport::Transport::poll_recv) takes them.
/// When it is full, the tasks reading response bodies stop reading, so the
/// socket stops being read and TCP (HTTP/1.1) or HTTP/2 flow control slows
/// the server down: a consumer that stops polling gets backpressure instead
/// of a queue that grows without bound.
///
/// Why 1024: it matches `mcp-client`'s own notification queue
/// (`MAX_QUEUED_NOTIFICATIONS`), so a burst the client would accept is not
/// throttled twice; it is far above what ordinary traffic (a few progress
/// notifications per request) ever queues, so the bound only acts on a
/// consumer that stopped reading; and typical messages (a few hundred bytes
/// to a few KiB) keep it at a few MiB. The bound counts messages, not bytes:
/// the worst case is this many messages of
/// [`max_sse_event_size`](HttpTransportBuilder::max_sse_event_size) each,
/// plus one message and one body frame per open stream; lower one or both
/// for servers you do not trust.
pub const DEFAULT_MAX_BUFFERED_MESSAGES: usize = 1024;
/// Longest `poll_close` takes: for the notification and response POSTs
/// still in flight, then the session `DELETE`.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// First reconnection delay when the server gave no `retry`; doubles per
/// attempt without progress up to [`MAX_BACKOFF`].
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(250);
/// Cap of the reconnection backoff.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Shortest wait before an SSE stream is reconnected, whatever the
/// server's `retry` says: at most four reconnections a second per stream
/// (`retry: 0` would otherwise reconnect thousands of times a second).
/// A server's `retry` above it is honoured as it is (the spec's MUST).
pub const MIN_RECONNECT_DELAY: Duration = Duration::from_millis(250);
/// Default for [`HttpTransportBuilder::max_throttle_retries`]: 3.
pub const DEFAULT_MAX_THROTTLE_RETRIES: u32 = 3;
/// Default for [`HttpTransportBuilder::max_retry_wait`]: 60 s, the
/// client's default request timeout.
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// Methods safe to send twice (reads with no side effects), by default:
/// re-issued once when their 2026-07-28 response stream breaks, and
/// retried after a `503` with `Retry-After`.
pub const DEFAULT_REISSUE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
];

/// Retries of one request after a 401/403 that [`AuthProvider::on_unauthorized`]
/// asked for. Two: a new credential, then once more when the server asks
/// for something only a retry can carry (a DPoP nonce, RFC 9449 §9); the
/// provider sees how many came before in [`Unauthorized::retries`].
pub const MAX_AUTH_RETRIES: u32 = 2;

/// Supplies credentials for every request; the OAuth work plugs in here.
///
/// Object-safe: methods return boxed futures. Only [`header`](Self::header)
/// and [`on_unauthorized`](Self::on_unauthorized) are required; a provider
/// whose credentials depend on the request (a DPoP proof signs its method
/// and URL) implements [`request_headers`](Self::request_headers), and one
/// that learns from answers (a `DPoP-Nonce`) implements
/// [`on_response`](Self::on_response).
pub trait AuthProvider: Send + Sync + 'static {
    /// The `Authorization` value for the next request, if any.
    fn header(&self) -> BoxFuture<'_, Option<HeaderValue>>;

    /// The headers that authorize one request to `url` with `method`,
    /// called for every HTTP request (each retry and redirect included), so
    /// a value may be single-use. They replace headers of the same name.
    /// Default: `Authorization` from [`header`](Self::header).
    fn request_headers<'a>(&'a self, method: &'a Method, url: &'a Uri) -> BoxFuture<'a, HeaderMap> {
        let _ = (method, url);
        Box::pin(async move {
            let mut h = HeaderMap::new();
            if let Some(v) = self.header().await {
                h.insert(http::header::AUTHORIZATION, v);
            }
            h
        })
    }

    /// Every response's status and headers, before the transport acts on
    /// it (so a 401's headers are seen before
    /// [`on_unauthorized`](Self::on_unauthorized)). Default: nothing.
    fn on_response(&self, url: &Uri, status: StatusCode, headers: &HeaderMap) {
        let _ = (url, status, headers);
    }

    /// The server refused a request with 401 or 403 (see [`Unauthorized`]).
    /// Return `Ok(true)` to retry the request with fresh
    /// [`request_headers`](Self::request_headers) (e.g. after refreshing a
    /// token, or a step-up authorization); otherwise the request fails as
    /// [`Unauthorized`](mcp_proto::transport::TransportErrorKind::Unauthorized):
    /// with `Ok(false)` its cause is the server's answer
    /// ([`HttpError::Status`]), with `Err(why)` it is
    /// [`HttpError::Auth`] whose [`source`](std::error::Error::source) is
    /// `why`, so the caller of the failed call can downcast it (e.g. to the
    /// OAuth provider's error type).
    /// A request is retried at most [`MAX_AUTH_RETRIES`] times;
    /// [`Unauthorized::retries`] says how many came before this refusal.
    ///
    /// Tell the two apart: a 401 means the credentials are missing or
    /// invalid (re-authorizing can help); a 403 means they are valid but
    /// not allowed, which only a new authorization with more scopes can fix,
    /// and only when the server says which (`error="insufficient_scope"`).
    fn on_unauthorized(&self, refusal: Unauthorized) -> BoxFuture<'_, Result<bool, BoxError>>;
}

/// Why an [`AuthProvider`] could not authorize a request: any error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<T: AuthProvider + ?Sized> AuthProvider for Arc<T> {
    fn header(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        (**self).header()
    }
    fn request_headers<'a>(&'a self, method: &'a Method, url: &'a Uri) -> BoxFuture<'a, HeaderMap> {
        (**self).request_headers(method, url)
    }
    fn on_response(&self, url: &Uri, status: StatusCode, headers: &HeaderMap) {
        (**self).on_response(url, status, headers)
    }
    fn on_unauthorized(&self, refusal: Unauthorized) -> BoxFuture<'_, Result<bool, BoxError>> {
        (**self).on_unauthorized(refusal)
    }
}

/// A refused request, as [`AuthProvider::on_unauthorized`] sees it.
///
/// `#[non_exhaustive]`: more of the response may be added; build one with
/// [`Unauthorized::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unauthorized {
    /// `401 Unauthorized` or `403 Forbidden`.
    pub status: StatusCode,
    /// The (first) `WWW-Authenticate` header, if the server sent one.
    pub www_authenticate: Option<HeaderValue>,
    /// How many times this request was already retried after a refusal
    /// (0 on the first; at most [`MAX_AUTH_RETRIES`]` - 1`).
    pub retries: u32,
}

impl Unauthorized {
    /// A refusal with this status and challenge, of a request not retried
    /// yet.
    pub fn new(status: StatusCode, www_authenticate: Option<HeaderValue>) -> Self {
        Unauthorized {
            status,
            www_authenticate,
            retries: 0,
        }
    }

    /// The same refusal, after `retries` earlier retries of the request.
    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// Whether the status is `403 Forbidden` (valid credentials, not
    /// allowed) rather than `401 Unauthorized`.
    pub fn is_forbidden(&self) -> bool {
        self.status == StatusCode::FORBIDDEN
    }
}

/// A fixed bearer token: `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct BearerToken(HeaderValue);

impl BearerToken {
    /// A provider sending `Bearer <token>`; fails if the token is not a valid header value.
    pub fn new(token: &str) -> Result<Self, HttpError> {
        let mut v = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            HttpError::InvalidHeader {
                name: "authorization".into(),
            }
        })?;
        v.set_sensitive(true);
        Ok(BearerToken(v))
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl AuthProvider for BearerToken {
    fn header(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        Box::pin(async move { Some(self.0.clone()) })
    }
    fn on_unauthorized(&self, _: Unauthorized) -> BoxFuture<'_, Result<bool, BoxError>> {
        Box::pin(async { Ok(false) })
    }
}

/// Everything the tasks need, fixed at build time.
pub(crate) struct Config {
    pub(crate) url: Uri,
    pub(crate) headers: HeaderMap,
    pub(crate) auth: Option<Arc<dyn AuthProvider>>,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) max_body_size: usize,
    pub(crate) max_sse_event_size: usize,
    pub(crate) max_buffered_messages: usize,
    pub(crate) max_unanswered_posts: usize,
    pub(crate) standalone_stream: bool,
    pub(crate) max_resume_attempts: u32,
    pub(crate) reissue_methods: Vec<Cow<'static, str>>,
    pub(crate) max_throttle_retries: u32,
    pub(crate) max_retry_wait: Option<Duration>,
    pub(crate) legacy_sse_fallback: bool,
    pub(crate) http: Pool,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("auth", &self.auth.is_some())
            .field("request_timeout", &self.request_timeout)
            .field("max_body_size", &self.max_body_size)
            .field("max_sse_event_size", &self.max_sse_event_size)
            .field("max_buffered_messages", &self.max_buffered_messages)
            .field("max_unanswered_posts", &self.max_unanswered_posts)
            .field("standalone_stream", &self.standalone_stream)
            .finish_non_exhaustive()
    }
}

/// Builds an [`HttpTransport`]. Start with [`HttpTransport::builder`].
#[must_use = "call .build() to get the transport"]
pub struct HttpTransportBuilder {
    url: String,
    headers: HeaderMap,
    header_error: Option<HttpError>,
    auth: Option<Arc<dyn AuthProvider>>,
    connect_timeout: Option<Duration>,
    request_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    max_idle_connections: usize,
    max_body_size: usize,
    max_sse_event_size: usize,
    max_buffered_messages: usize,
    max_unanswered_posts: usize,
    standalone_stream: bool,
    max_resume_attempts: u32,
    reissue_methods: Vec<Cow<'static, str>>,
    max_throttle_retries: u32,
    max_retry_wait: Option<Duration>,
    legacy_sse_fallback: bool,
    native_roots: bool,
    connector: Option<Arc<dyn Connector>>,
    /// Boxed: rarely set, and the builder travels by value (in
    /// `mcp_config::Prepared`, next to a much smaller variant).
    socket: Option<Box<LocalSocket>>,
    #[cfg(feature = "rustls")]
    tls_config: Option<Arc<rustls::ClientConfig>>,
}

impl fmt::Debug for HttpTransportBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransportBuilder")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl HttpTransportBuilder {
    pub(crate) fn new(url: impl Into<String>) -> Self {
        HttpTransportBuilder {
            url: url.into(),
            headers: HeaderMap::new(),
            header_error: None,
            auth: None,
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            idle_timeout: Some(crate::pool::DEFAULT_IDLE_TIMEOUT),
            max_idle_connections: crate::pool::DEFAULT_MAX_IDLE_CONNECTIONS,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_sse_event_size: crate::sse::DEFAULT_MAX_EVENT_SIZE,
            max_buffered_messages: DEFAULT_MAX_BUFFERED_MESSAGES,
            max_unanswered_posts: DEFAULT_MAX_UNANSWERED_POSTS,
            standalone_stream: false,
            max_resume_attempts: DEFAULT_MAX_RESUME_ATTEMPTS,
            reissue_methods: DEFAULT_REISSUE_METHODS
                .iter()
                .map(|m| Cow::Borrowed(*m))
                .collect(),
            max_throttle_retries: DEFAULT_MAX_THROTTLE_RETRIES,
            max_retry_wait: Some(DEFAULT_MAX_RETRY_WAIT),
            legacy_sse_fallback: true,
            native_roots: false,
            connector: None,
            socket: None,
            #[cfg(feature = "rustls")]
            tls_config: None,
        }
    }

    /// Adds a header sent on every request (e.g. `Authorization`). An
    /// invalid name or value makes [`build`](Self::build) fail.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(mut v)) => {
                if n == http::header::AUTHORIZATION || n == http::header::COOKIE {
                    v.set_sensitive(true);
                }
                self.headers.append(n, v);
            }
            _ => {
                self.header_error = Some(HttpError::InvalidHeader {
                    name: name.to_owned(),
                });
            }
        }
        self
    }

    /// Sets the credentials hook (called before every request).
    pub fn auth(mut self, provider: impl AuthProvider) -> Self {
        self.auth = Some(Arc::new(provider));
        self
    }

    /// Connect timeout of the built-in connector, TCP or local socket
    /// (default 10 s; `None`: the OS's). Ignored with a custom
    /// [`connector`](Self::connector).
    pub fn connect_timeout(mut self, t: Option<Duration>) -> Self {
        self.connect_timeout = t;
        self
    }

    /// How long to wait for response headers, and for a whole JSON body
    /// (default 120 s; `None`: no limit). SSE streams are not limited by
    /// it: a long tool call streams as long as it needs; the client's own
    /// request deadlines and cancellation bound them.
    pub fn request_timeout(mut self, t: Option<Duration>) -> Self {
        self.request_timeout = t;
        self
    }

    /// How long an HTTP/1.1 connection may stay open with no request on it
    /// before the transport closes it (default
    /// [`DEFAULT_IDLE_TIMEOUT`](crate::DEFAULT_IDLE_TIMEOUT), 4 s, which
    /// explains the choice; `None`: keep idle connections until the server
    /// closes them). The next request opens a new connection; a connection
    /// with a request or a stream on it is never closed by this timer.
    ///
    /// An idle connection costs ~28 KiB (hyper's buffers, channel and task)
    /// and a socket; over `https`, reconnecting costs a TLS handshake, so a
    /// host that calls a remote server every few seconds may want longer,
    /// up to just under the server's own keep-alive timeout.
    pub fn idle_timeout(mut self, t: Option<Duration>) -> Self {
        self.idle_timeout = t;
        self
    }

    /// Most HTTP/1.1 connections kept open idle for reuse, for this
    /// transport and the sessions made from it with
    /// [`new_session`](crate::HttpTransport::new_session) (default
    /// [`DEFAULT_MAX_IDLE_CONNECTIONS`](crate::DEFAULT_MAX_IDLE_CONNECTIONS),
    /// 128, which explains the choice; 0: none, a connection per request).
    /// A connection that finishes while this many wait is closed. Set it
    /// to the number of requests you expect in flight at once to this
    /// server, so that each finds a connection rather than opening one.
    pub fn max_idle_connections(mut self, n: usize) -> Self {
        self.max_idle_connections = n;
        self
    }

    /// Largest JSON response body (default 16 MiB).
    pub fn max_body_size(mut self, n: usize) -> Self {
        self.max_body_size = n.max(1);
        self
    }

    /// Largest SSE event (default 16 MiB).
    pub fn max_sse_event_size(mut self, n: usize) -> Self {
        self.max_sse_event_size = n.max(1);
        self
    }

    /// How many received messages may wait for
    /// [`poll_recv`](mcp_proto::transport::Transport::poll_recv) before the
    /// transport stops reading from the server (default
    /// [`DEFAULT_MAX_BUFFERED_MESSAGES`], which explains the choice; at
    /// least 1).
    ///
    /// All streams share this queue: while it is full, no stream is read,
    /// so an answer can wait behind notifications that came first. It moves
    /// again as soon as the consumer polls. A consumer that stops polling
    /// until some answer arrives would wait forever, with or without this
    /// bound (the answer would sit unread in the queue); `mcp-client` only
    /// stops polling while its handler is behind, and its handler never
    /// waits for an answer.
    pub fn max_buffered_messages(mut self, n: usize) -> Self {
        self.max_buffered_messages = n.max(1);
        self
    }

    /// How many notification and response POSTs may wait for the server's
    /// answer before [`poll_ready`](mcp_proto::transport::Transport::poll_ready)
    /// is pending (default [`DEFAULT_MAX_UNANSWERED_POSTS`], at least 1).
    /// Requests are not counted: the client bounds its calls in flight
    /// itself. A server that stops answering these POSTs thus stops the
    /// client writing, and then (`mcp-client` pauses reading while its
    /// answers back up) reading.
    pub fn max_unanswered_posts(mut self, n: usize) -> Self {
        self.max_unanswered_posts = n.max(1);
        self
    }

    /// Opens the standalone `GET` stream for server-initiated messages
    /// after `notifications/initialized` (2025-03-26 … 2025-11-25 only;
    /// default off; a 405 answer is fine). Later messages wait until the
    /// server answered it; see [the crate docs](crate#the-standalone-get-stream).
    pub fn standalone_stream(mut self, on: bool) -> Self {
        self.standalone_stream = on;
        self
    }

    /// Reconnections allowed per stream that make no progress (default 5).
    /// Only a delivered message refills the budget; a graceful close does
    /// not.
    pub fn max_resume_attempts(mut self, n: u32) -> Self {
        self.max_resume_attempts = n;
        self
    }

    /// Methods safe to send twice (reads with no side effects; default
    /// [`DEFAULT_REISSUE_METHODS`]): a broken response stream of theirs is
    /// re-issued once as a new request in the 2026-07-28 era, and they are
    /// retried after a `503` with `Retry-After` (see
    /// [`max_throttle_retries`](Self::max_throttle_retries)). Pass an empty
    /// list to never re-issue or retry after a 503.
    pub fn reissue_methods<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        self.reissue_methods = methods.into_iter().map(Into::into).collect();
        self
    }

    /// How many times in a row a message the server refused for now is sent
    /// again (default [`DEFAULT_MAX_THROTTLE_RETRIES`]; 0: never), each time
    /// after the wait its `Retry-After` asks for (a number of seconds or an
    /// HTTP date), with up to a fifth more at random so that clients
    /// refused together do not come back together.
    ///
    /// What is retried, by what the status says about the message:
    ///
    /// - `429 Too Many Requests` (RFC 6585): the server refused the message
    ///   and did not process it, so any message is retried, a `tools/call`
    ///   too. Without `Retry-After`, after a backoff from
    ///   [`INITIAL_BACKOFF`], doubling.
    /// - `503 Service Unavailable` with `Retry-After`: an origin server says
    ///   it did not handle the request, but a gateway in front of it answers
    ///   503 too when the server failed mid-way, after the request may have
    ///   run. So only what is safe to send twice is retried: the
    ///   [`reissue_methods`](Self::reissue_methods) (reads), `ping`,
    ///   `initialize` (before a session exists), notifications and responses.
    ///   A `tools/call` whose fate is unknown never is.
    /// - A 503 without `Retry-After`, and every other status, is never
    ///   retried: nothing says when, or that the server did not act.
    ///
    /// A wait never runs past the request's deadline, when the client told
    /// the transport ([`Transport::set_request_deadline`](mcp_proto::transport::Transport::set_request_deadline)),
    /// nor beyond [`max_retry_wait`](Self::max_retry_wait): a `Retry-After`
    /// beyond either fails the request at once with
    /// [`HttpError::Throttled`], which says when the server asked to be
    /// retried (kind [`Throttled`](mcp_proto::transport::TransportErrorKind::Throttled)).
    pub fn max_throttle_retries(mut self, n: u32) -> Self {
        self.max_throttle_retries = n;
        self
    }

    /// The longest the transport waits before sending a refused message
    /// again (default [`DEFAULT_MAX_RETRY_WAIT`]; `None`: as long as the
    /// request's deadline allows). See [`max_throttle_retries`](Self::max_throttle_retries).
    pub fn max_retry_wait(mut self, t: Option<Duration>) -> Self {
        self.max_retry_wait = t;
        self
    }

    /// Whether an `initialize` POST answered 400/404/405 without a JSON-RPC
    /// error body falls back to the 2024-11-05 HTTP+SSE transport (default on).
    pub fn legacy_sse_fallback(mut self, on: bool) -> Self {
        self.legacy_sse_fallback = on;
        self
    }

    /// Trusts the operating system's root certificates instead of the
    /// bundled webpki roots.
    ///
    /// Needs the `native-roots` feature.
    #[cfg(feature = "native-roots")]
    #[cfg_attr(docsrs, doc(cfg(feature = "native-roots")))]
    pub fn native_roots(mut self, on: bool) -> Self {
        self.native_roots = on;
        self
    }

    /// Sends the requests through the Unix domain socket at `path` instead
    /// of a TCP connection to the URL's host; the URL (which must be
    /// `http://`) still gives the `Host` header and the request path. For
    /// a server that routes by `Host` behind a socket (a sidecar proxy);
    /// otherwise the URL form `unix:///path.sock#/mcp` says the same in one
    /// string (see [`LocalSocket`]). Replaces the URL's own socket, if it
    /// names one. Only on Unix: elsewhere [`build`](Self::build) fails with
    /// [`UrlProblem::SocketUnsupported`](crate::UrlProblem::SocketUnsupported).
    ///
    /// ```no_run
    /// use mcp_transport_http::HttpTransport;
    ///
    /// let t = HttpTransport::builder("http://mcp.internal/mcp")
    ///     .unix_socket("/run/envoy/egress.sock")
    ///     .build()?;
    /// # let _ = t; Ok::<(), mcp_transport_http::HttpError>(())
    /// ```
    pub fn unix_socket(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.socket = Some(Box::new(LocalSocket::Unix(path.into())));
        self
    }

    /// Sends the requests through the Windows named pipe `name` (its full
    /// name, `\\.\pipe\NAME`), as [`unix_socket`](Self::unix_socket)
    /// does with a Unix socket. Only on Windows, and written for it without
    /// being built or tested there: elsewhere [`build`](Self::build) fails
    /// with [`UrlProblem::SocketUnsupported`](crate::UrlProblem::SocketUnsupported).
    pub fn named_pipe(mut self, name: impl Into<String>) -> Self {
        self.socket = Some(Box::new(LocalSocket::NamedPipe(name.into())));
        self
    }

    /// Opens connections with your own [`Connector`] (a proxy, a unix
    /// socket, your own TLS stack...) instead of the built-in TCP + TLS.
    /// The connect timeout, TLS settings and local socket of this builder
    /// are then ignored.
    pub fn connector(mut self, connector: impl Connector) -> Self {
        self.connector = Some(Arc::new(connector));
        self
    }

    /// Uses this rustls configuration for `https` (your own roots, client
    /// certificates...) instead of the bundled webpki roots. Its ALPN
    /// protocols are set by the transport (`http/1.1`, and `h2` first with
    /// the `http2` feature) when the list is empty.
    ///
    /// Needs the `rustls` feature (on by default).
    #[cfg(feature = "rustls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rustls")))]
    pub fn tls_config(mut self, config: rustls::ClientConfig) -> Self {
        self.tls_config = Some(Arc::new(config));
        self
    }

    /// Builds the transport. Needs no runtime; the first send needs tokio.
    pub fn build(self) -> Result<HttpTransport, HttpError> {
        let mut endpoint = Endpoint::parse(&self.url)?;
        if let Some(socket) = self.socket {
            endpoint = endpoint.with_socket(*socket);
        }
        if self.connector.is_none() {
            endpoint.check().map_err(|reason| HttpError::InvalidUrl {
                url: self.url.clone(),
                reason,
            })?;
        }
        let (url, socket) = endpoint.into_parts();
        let scheme = url.scheme_str().unwrap_or("");
        if let Some(e) = self.header_error {
            return Err(e);
        }
        let connect = match (self.connector, socket) {
            (Some(c), _) => Connect::Custom(c),
            (None, Some(socket)) => Connect::Local {
                socket,
                timeout: self.connect_timeout,
            },
            (None, None) => Connect::BuiltIn {
                timeout: self.connect_timeout,
                #[cfg(feature = "rustls")]
                tls: tls_connector(scheme, self.native_roots, self.tls_config)?,
            },
        };
        #[cfg(not(feature = "rustls"))]
        if scheme == "https" && matches!(connect, Connect::BuiltIn { .. }) {
            let _ = self.native_roots;
            return Err(HttpError::InvalidUrl {
                url: self.url,
                reason: crate::error::UrlProblem::HttpsWithoutTls,
            });
        }
        let http = Pool::new(&url, connect, self.idle_timeout, self.max_idle_connections)?;
        let cfg = Config {
            url,
            headers: self.headers,
            auth: self.auth,
            request_timeout: self.request_timeout,
            max_body_size: self.max_body_size,
            max_sse_event_size: self.max_sse_event_size,
            max_buffered_messages: self.max_buffered_messages,
            max_unanswered_posts: self.max_unanswered_posts,
            standalone_stream: self.standalone_stream,
            max_resume_attempts: self.max_resume_attempts,
            reissue_methods: self.reissue_methods,
            max_throttle_retries: self.max_throttle_retries,
            max_retry_wait: self.max_retry_wait,
            legacy_sse_fallback: self.legacy_sse_fallback,
            http,
        };
        Ok(HttpTransport::from_config(Arc::new(cfg)))
    }
}

/// The TLS connector for an `https` endpoint. A plain-http endpoint never
/// needs TLS (redirects to another origin are refused): no root store is
/// built, which saves ~2 MiB of memory.
#[cfg(feature = "rustls")]
fn tls_connector(
    scheme: &str,
    native_roots: bool,
    config: Option<Arc<rustls::ClientConfig>>,
) -> Result<Option<tokio_rustls::TlsConnector>, HttpError> {
    if scheme == "http" {
        return Ok(None);
    }
    let mut config = match config {
        Some(c) => c,
        None => {
            let roots = root_store(native_roots)?;
            // ring is the workspace's TLS crypto (no cmake or clang to
            // build). rustls 0.23.48 deprecates its ring provider only to
            // steer users to aws-lc-rs's post-quantum key exchange: the same
            // provider, and a build with the newest dependencies stays free
            // of warnings.
            #[allow(deprecated)]
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| HttpError::Tls(e.into()))?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        }
    };
    if config.alpn_protocols.is_empty() {
        Arc::make_mut(&mut config).alpn_protocols = crate::pool::alpn();
    }
    Ok(Some(tokio_rustls::TlsConnector::from(config)))
}

#[cfg(feature = "rustls")]
fn root_store(native_roots: bool) -> Result<rustls::RootCertStore, HttpError> {
    #[cfg(feature = "native-roots")]
    if native_roots {
        let found = rustls_native_certs::load_native_certs();
        if found.certs.is_empty() {
            return Err(HttpError::Tls(
                format!(
                    "no native root CA certificates found (errors: {:?})",
                    found.errors
                )
                .into(),
            ));
        }
        let mut roots = rustls::RootCertStore::empty();
        let (added, _ignored) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            return Err(HttpError::Tls(
                "none of the native root CA certificates could be parsed".into(),
            ));
        }
        return Ok(roots);
    }
    let _ = native_roots;
    Ok(rustls::RootCertStore::from_iter(
        webpki_roots::TLS_SERVER_ROOTS.iter().cloned(),
    ))
}
