//! The transport's connections: a small pool of `hyper::client::conn`
//! senders for its one origin (redirects to another origin are refused, so
//! there is no key to hash), instead of hyper-util's general client. One
//! pool per built transport, shared by the transports made from it with
//! [`HttpTransport::new_session`](crate::HttpTransport::new_session).
//!
//! - HTTP/1.1: one request at a time per connection. A request takes the
//!   most recently used idle connection, or opens a new one, so up to N
//!   requests run at once on N connections. A connection goes back to the
//!   pool when its response body has been read to the end (a body dropped
//!   before its end closes the connection: HTTP/1.1 cannot skip the rest).
//!   At most [`DEFAULT_MAX_IDLE_CONNECTIONS`] wait idle (or
//!   [`max_idle_connections`](crate::HttpTransportBuilder::max_idle_connections)).
//! - An idle HTTP/1.1 connection is closed once it has been idle for the
//!   idle timeout ([`DEFAULT_IDLE_TIMEOUT`], or
//!   [`idle_timeout`](crate::HttpTransportBuilder::idle_timeout)): one
//!   timer task per pool, alive only while connections are idle,
//!   wakes when the oldest one expires and drops the expired ones; the
//!   next request opens a new connection. A connection in use is not in
//!   the idle list, so the timer never touches it.
//! - A reused connection the server closed meanwhile (its keep-alive ran
//!   out) fails before the request was written: the request is sent again
//!   on another connection, as hyper-util's client does.
//! - HTTP/2 (`http2` feature, negotiated by ALPN over TLS): one connection,
//!   shared by every request.
//!
//! Why not hyper-util's `legacy::Client`: its `client-legacy` feature and
//! hyper-rustls are 13 crates a dependent pays for (`lib.rs`,
//! "Dependencies"), and it is a general client (any origin, a pool keyed by
//! a hash of it, a task per check-in) where the transport needs one origin.
//! It is not about speed: per call, the two cost the same instructions.

mod connect;

use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::header::HOST;
use http::{HeaderValue, Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::time::Instant;

use crate::client::RequestBody;
use crate::error::{HttpError, UrlProblem};

#[cfg(feature = "rustls")]
pub(crate) use self::connect::alpn;
pub(crate) use self::connect::{Connect, open_local};
pub use self::connect::{Connected, Connector, Io};

/// Most idle HTTP/1.1 connections kept for reuse, by default (per pool: a
/// transport and those made from it with
/// [`new_session`](crate::HttpTransport::new_session) share one; change it
/// with [`max_idle_connections`](crate::HttpTransportBuilder::max_idle_connections)): 128.
///
/// Why a cap at all: the idle timeout already closes what is not reused,
/// so the cap only bounds the sockets and memory (~28 KiB each, see
/// [`DEFAULT_IDLE_TIMEOUT`]) a burst leaves behind for those 4 s.
///
/// Why 128: a connection that comes back while the cap is reached is
/// closed, and the next request opens a new one. With more requests in
/// flight than the cap, that happens on nearly every request: 1,000
/// sessions connecting 128 at once over one pool (two requests each)
/// made ~1,340 TCP connections with a cap of 32, and ~310–510 with 128,
/// each closed one leaving a socket in `TIME_WAIT`.
/// A host with more requests in flight at once to one server should
/// raise it to that number.
pub const DEFAULT_MAX_IDLE_CONNECTIONS: usize = 128;
/// How long an HTTP/1.1 connection stays open with nothing to do, by
/// default (change it with
/// [`idle_timeout`](crate::HttpTransportBuilder::idle_timeout)): 4 s.
///
/// Why close it at all: a kept-alive connection holds hyper's read and
/// write buffers, its request channel and its task (~28 KiB of live heap
/// per connection) and a socket on both ends, for a
/// session that may not send again for minutes. Reconnecting costs one TCP
/// connect (and a TLS handshake over `https`) on the next request.
///
/// Why 4 s: common servers close idle keep-alive connections themselves
/// after 5 s (Node's `http` server, `keepAliveTimeout`; uvicorn,
/// `timeout_keep_alive`). A client that closes first avoids the race of
/// sending a request on a connection the server is closing at that moment
/// (the request is then lost in flight, and one that was written cannot be
/// retried safely); Node's `agentkeepalive` picks 4 s for the same reason.
/// Requests that follow each other within 4 s still share one connection.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// The connection pool of one transport and its
/// [`new_session`](crate::HttpTransport::new_session)s. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Pool(Arc<Inner>);

struct Inner {
    connect: Connect,
    /// `Host` for HTTP/1.1: every request goes to the configured origin.
    host: HeaderValue,
    /// `None`: idle connections stay open until the server closes them.
    idle_timeout: Option<Duration>,
    /// Most idle connections kept.
    max_idle: usize,
    idle: Mutex<IdleList>,
    #[cfg(feature = "http2")]
    h2: Mutex<Option<hyper::client::conn::http2::SendRequest<RequestBody>>>,
}

#[derive(Default)]
struct IdleList {
    conns: Vec<Idle>,
    /// The timer task that closes expired connections is running.
    reaper: bool,
}

struct Idle {
    tx: http1::SendRequest<RequestBody>,
    since: Instant,
}

impl Idle {
    fn usable(&self, now: Instant, timeout: Option<Duration>) -> bool {
        !self.tx.is_closed() && timeout.is_none_or(|t| now.duration_since(self.since) < t)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

enum Sender {
    H1(http1::SendRequest<RequestBody>),
    #[cfg(feature = "http2")]
    H2(hyper::client::conn::http2::SendRequest<RequestBody>),
}

impl Pool {
    /// A pool for `url`'s origin (`url` has a host: the builder checked).
    /// Idle connections are closed after `idle_timeout` (`None`: kept); at
    /// most `max_idle` wait.
    pub(crate) fn new(
        url: &Uri,
        connect: Connect,
        idle_timeout: Option<Duration>,
        max_idle: usize,
    ) -> Result<Self, HttpError> {
        let host = match (url.host(), url.port()) {
            (Some(h), Some(p)) if Some(p.as_u16()) != default_port(url) => {
                HeaderValue::from_str(&format!("{h}:{p}"))
            }
            (h, _) => HeaderValue::from_str(h.unwrap_or("")),
        }
        .map_err(|_| HttpError::InvalidUrl {
            url: url.to_string(),
            reason: UrlProblem::HostHeader,
        })?;
        Ok(Pool(Arc::new(Inner {
            connect,
            host,
            idle_timeout,
            max_idle,
            idle: Mutex::new(IdleList::default()),
            #[cfg(feature = "http2")]
            h2: Mutex::new(None),
        })))
    }

    /// Sends `req` (an absolute URL of the pool's origin) on an idle
    /// connection or a new one.
    pub(crate) async fn send(
        &self,
        mut req: Request<RequestBody>,
    ) -> Result<Response<ResponseBody>, HttpError> {
        let client = |e: hyper::Error| HttpError::Client(Box::new(e));
        #[cfg(feature = "http2")]
        if let Some(mut tx) = self.h2() {
            let resp = tx.send_request(req).await.map_err(client)?;
            return Ok(resp.map(|b| ResponseBody::new(b, None)));
        }
        let target = req.uri().clone();
        let mut origin_form = false;
        loop {
            let (mut tx, reused) = match self.checkout() {
                Some(tx) => (tx, true),
                // Boxed: connecting (TCP, TLS, handshake) is a large future
                // and the rare path; the request's task stays small.
                None => match Box::pin(self.open(&target)).await? {
                    Sender::H1(tx) => (tx, false),
                    #[cfg(feature = "http2")]
                    Sender::H2(mut tx) => {
                        *req.uri_mut() = target;
                        let resp = tx.send_request(req).await.map_err(client)?;
                        return Ok(resp.map(|b| ResponseBody::new(b, None)));
                    }
                },
            };
            if !origin_form {
                // HTTP/1.1 to an origin server: `/path?query` and `Host`.
                let pq = target.path_and_query().cloned();
                *req.uri_mut() = pq.map_or_else(|| Uri::from_static("/"), Uri::from);
                req.headers_mut()
                    .entry(HOST)
                    .or_insert_with(|| self.0.host.clone());
                origin_form = true;
            }
            if tx.ready().await.is_err() {
                // Closed while idle: try the next one (or a new one).
                continue;
            }
            match tx.try_send_request(req).await {
                Ok(resp) => {
                    let pool = self.clone();
                    return Ok(resp.map(|b| ResponseBody::new(b, Some((pool, tx)))));
                }
                Err(mut e) => match e.take_message() {
                    // Not written: the reused connection was already gone.
                    Some(r) if reused => req = r,
                    _ => return Err(client(e.into_error())),
                },
            }
        }
    }

    /// The `Host` header HTTP/1.1 requests get (unless they have one).
    pub(crate) fn host(&self) -> &HeaderValue {
        &self.0.host
    }

    #[cfg(feature = "http2")]
    fn h2(&self) -> Option<hyper::client::conn::http2::SendRequest<RequestBody>> {
        let mut h2 = lock(&self.0.h2);
        match &*h2 {
            Some(tx) if !tx.is_closed() => Some(tx.clone()),
            Some(_) => {
                *h2 = None;
                None
            }
            None => None,
        }
    }

    fn checkout(&self) -> Option<http1::SendRequest<RequestBody>> {
        let now = Instant::now();
        let mut idle = lock(&self.0.idle);
        // The timer may be late (a busy runtime): check the age here too.
        while let Some(i) = idle.conns.pop() {
            if i.usable(now, self.0.idle_timeout) {
                return Some(i.tx);
            }
        }
        None
    }

    fn check_in(&self, tx: http1::SendRequest<RequestBody>) {
        if tx.is_closed() {
            return;
        }
        let timeout = self.0.idle_timeout;
        let now = Instant::now();
        if timeout.is_some_and(|t| t.is_zero()) {
            return;
        }
        let mut idle = lock(&self.0.idle);
        // Only when full: sweep out the closed and expired ones (the timer
        // and `checkout` drop them otherwise). Sweeping on every check-in
        // cost a scan of the whole list per request, ~8,000 instructions
        // with 128 idle (callgrind).
        if idle.conns.len() >= self.0.max_idle {
            idle.conns.retain(|i| i.usable(now, timeout));
            if idle.conns.len() >= self.0.max_idle {
                return;
            }
        }
        if let Some(t) = timeout.filter(|_| !idle.reaper) {
            // Outside a runtime (a body dropped after it shut down) no
            // timer can run: close the connection rather than keep it
            // forever.
            let Ok(rt) = tokio::runtime::Handle::try_current() else {
                return;
            };
            idle.reaper = true;
            rt.spawn(reap(Arc::downgrade(&self.0), t, now + t));
        }
        idle.conns.push(Idle { tx, since: now });
    }

    /// A new connection, its task spawned.
    async fn open(&self, url: &Uri) -> Result<Sender, HttpError> {
        let (stream, h2) = self
            .0
            .connect
            .connect(url)
            .await
            .map_err(|e| HttpError::Client(Box::new(e)))?;
        let io = TokioIo::new(stream);
        let client = |e: hyper::Error| HttpError::Client(Box::new(e));
        #[cfg(feature = "http2")]
        if h2 {
            let (tx, conn) =
                hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .timer(hyper_util::rt::TokioTimer::new())
                    .handshake(io)
                    .await
                    .map_err(client)?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(error = %mcp_proto::error::chain(&e), "HTTP/2 connection ended");
                }
            });
            *lock(&self.0.h2) = Some(tx.clone());
            return Ok(Sender::H2(tx));
        }
        let _ = h2;
        let (tx, conn) = http1::handshake(io).await.map_err(client)?;
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %mcp_proto::error::chain(&e), "HTTP/1.1 connection ended");
            }
        });
        Ok(Sender::H1(tx))
    }
}

/// The idle timer of one pool: sleeps until the oldest idle connection
/// expires (`first`, then each time the oldest left), drops the expired
/// ones (hyper's connection task then ends and closes the socket), and
/// ends when none is idle or the pool is gone.
async fn reap(pool: Weak<Inner>, timeout: Duration, first: Instant) {
    let mut next = first;
    loop {
        tokio::time::sleep_until(next).await;
        let Some(inner) = pool.upgrade() else { return };
        let now = Instant::now();
        let (expired, done) = {
            let mut idle = lock(&inner.idle);
            let (keep, gone): (Vec<Idle>, Vec<Idle>) = std::mem::take(&mut idle.conns)
                .into_iter()
                .partition(|i| i.usable(now, Some(timeout)));
            idle.conns = keep;
            match idle.conns.iter().map(|i| i.since).min() {
                Some(oldest) => next = oldest + timeout,
                None => idle.reaper = false,
            }
            (gone, !idle.reaper)
        };
        // Dropped outside the lock.
        drop(expired);
        if done {
            return;
        }
    }
}

fn default_port(url: &Uri) -> Option<u16> {
    match url.scheme_str() {
        Some("http") => Some(80),
        Some("https") => Some(443),
        _ => None,
    }
}

/// A response body; at its end, its HTTP/1.1 connection goes back to the
/// pool.
pub(crate) struct ResponseBody {
    inner: Incoming,
    check_in: Option<(Pool, http1::SendRequest<RequestBody>)>,
}

impl ResponseBody {
    fn new(inner: Incoming, check_in: Option<(Pool, http1::SendRequest<RequestBody>)>) -> Self {
        ResponseBody { inner, check_in }
    }

    fn done(&mut self) {
        if let Some((pool, tx)) = self.check_in.take() {
            pool.check_in(tx);
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        match &frame {
            None => self.done(),
            // A broken body: its connection is not reused.
            Some(Err(_)) => self.check_in = None,
            Some(Ok(_)) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        // Nothing left to read (an empty 202, say): reusable as it is.
        if self.inner.is_end_stream() {
            self.done();
        }
    }
}
