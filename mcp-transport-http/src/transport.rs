//! The [`Transport`] implementation: one tokio task per POST over a shared
//! pooled client, every received message funnelled into one queue.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, IdHash, Message, RequestId, Response as RpcResponse};
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind};
use mcp_proto::version::{Era, Feature, ProtocolVersion};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use crate::client::{
    BoxFuture, CLOSE_TIMEOUT, Config, HttpTransportBuilder, INITIAL_BACKOFF, MAX_BACKOFF,
    MAX_REDIRECTS, Unauthorized,
};
use crate::error::{HttpError, excerpt};
use crate::headers::{ParamHeader, add_modern_headers, filter_tools_list};
use crate::sse::{SseDecoder, SseError, SseEvent};

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
/// Error bodies are read up to this size for the excerpt and era detection.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// After the response arrived, how long the rest of an SSE stream may take
/// to end (so the connection goes back to the pool) before it is dropped.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Longest a message waits for an earlier notification's POST.
const ORDER_WAIT: Duration = Duration::from_secs(5);
/// How long an answer waits for its stream to end before it is delivered.
const ANSWER_HOLD: Duration = Duration::from_millis(20);
/// How long the 2024-11-05 fallback waits for the `endpoint` event.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

type Item = Result<Message, TransportError>;

/// An MCP Streamable HTTP transport (2025-03-26 … 2026-07-28), with the
/// 2024-11-05 HTTP+SSE fallback. See the [crate docs](crate).
pub struct HttpTransport {
    shared: Arc<Shared>,
    inbox: mpsc::Receiver<Item>,
    closing: Option<BoxFuture<'static, ()>>,
    done: bool,
    /// Completion of the last notification/response POST.
    order_barrier: Option<watch::Receiver<bool>>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.shared.cfg.url)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Shared {
    cfg: Config,
    state: Mutex<State>,
    tasks: Mutex<Tasks>,
    /// Bounded ([`Config::max_buffered_messages`]): a task that finds it
    /// full waits, and stops reading its body meanwhile.
    inbox: mpsc::Sender<Item>,
}

/// The receiving half of the inbox is gone (the transport was dropped):
/// the task that tried to deliver should end.
#[derive(Debug)]
struct Gone;

#[derive(Default)]
struct State {
    version: Option<ProtocolVersion>,
    session_id: Option<HeaderValue>,
    tool_headers: HashMap<String, Vec<ParamHeader>>,
    /// Set once the 2024-11-05 HTTP+SSE fallback found its POST endpoint.
    sse_endpoint: Option<Uri>,
    standalone_started: bool,
}

#[derive(Default)]
struct Tasks {
    next: u64,
    all: HashMap<u64, AbortHandle, IdHash>,
    by_request: HashMap<RequestId, u64, IdHash>,
    closed: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave these maps inconsistent
    // in a way that matters; keep going.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl HttpTransport {
    /// A transport for `url` with default settings.
    pub fn new(url: &str) -> Result<Self, HttpError> {
        Self::builder(url).build()
    }

    /// A builder for a transport to `url`.
    pub fn builder(url: impl Into<String>) -> HttpTransportBuilder {
        HttpTransportBuilder::new(url)
    }

    pub(crate) fn from_config(cfg: Config) -> Self {
        let (tx, rx) = mpsc::channel(cfg.max_buffered_messages.max(1));
        HttpTransport {
            shared: Arc::new(Shared {
                cfg,
                state: Mutex::new(State::default()),
                tasks: Mutex::new(Tasks::default()),
                inbox: tx,
            }),
            inbox: rx,
            closing: None,
            done: false,
            order_barrier: None,
        }
    }

    /// The session id the server assigned (2025-03-26 … 2025-11-25), if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.shared.state)
            .session_id
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Whether the transport fell back to the 2024-11-05 HTTP+SSE transport.
    pub fn is_legacy_sse(&self) -> bool {
        lock(&self.shared.state).sse_endpoint.is_some()
    }

    fn spawn(
        &self,
        request: Option<RequestId>,
        fut: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), TransportError> {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return Err(TransportError::new(
                TransportErrorKind::Other,
                "HttpTransport must be used inside a tokio runtime",
            ));
        };
        let shared = Arc::clone(&self.shared);
        let mut tasks = lock(&self.shared.tasks);
        if tasks.closed {
            return Err(TransportError::new(
                TransportErrorKind::Closed,
                "the HTTP transport is closed",
            ));
        }
        let key = tasks.next;
        tasks.next += 1;
        let req = request.clone();
        // The task removes itself; the lock held here makes sure it is
        // registered before it can finish.
        // Boxed: the exchange future is several KiB, and a task copies its
        // future in when spawned and its whole stage again when it finishes;
        // a box makes both copies pointer-sized (~4 KiB of memcpy per call).
        let handle = rt.spawn(Box::pin(async move {
            fut.await;
            let mut t = lock(&shared.tasks);
            t.all.remove(&key);
            if let Some(id) = req
                && t.by_request.get(&id) == Some(&key)
            {
                t.by_request.remove(&id);
            }
        }));
        tasks.all.insert(key, handle.abort_handle());
        if let Some(id) = request {
            tasks.by_request.insert(id, key);
        }
        Ok(())
    }

    fn send_message(&mut self, msg: Message) -> Result<(), TransportError> {
        let (version, sse_mode) = {
            let s = lock(&self.shared.state);
            (s.version, s.sse_endpoint.is_some())
        };
        let method = msg.method().map(str::to_owned);
        let modern = version.is_some_and(|v| v.era() == Era::Modern)
            && method.as_deref() != Some("initialize")
            && !sse_mode;
        // Cancellation. 2026-07-28: closing the response stream *is* the
        // cancellation; nothing is POSTed. Legacy: the notification is POSTed
        // and the local stream is dropped too (the server must not answer a
        // cancelled request, so keeping it open only holds a connection).
        if method.as_deref() == Some("notifications/cancelled") {
            if let Message::Notification(n) = &msg
                && let Some(id) = cancelled_request_id(n.params.as_ref())
            {
                let mut t = lock(&self.shared.tasks);
                if let Some(key) = t.by_request.remove(&id)
                    && let Some(h) = t.all.remove(&key)
                {
                    h.abort();
                }
            }
            if modern {
                return Ok(());
            }
        }
        let start_standalone = !modern
            && self.shared.cfg.standalone_stream
            && !sse_mode
            && method.as_deref() == Some("notifications/initialized")
            && !std::mem::replace(&mut lock(&self.shared.state).standalone_started, true);
        let request_id = match &msg {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let post = Post::new(&self.shared, msg, method, modern);
        let shared = Arc::clone(&self.shared);
        // Keep order where it matters: a message waits until the POSTs of
        // earlier notifications and responses were answered (202 comes
        // fast), so `notifications/initialized` reaches the server before the
        // next request. Requests themselves run concurrently.
        let wait = self.order_barrier.clone();
        let done = if request_id.is_none() {
            let (tx, rx) = watch::channel(false);
            self.order_barrier = Some(rx);
            Some(tx)
        } else {
            None
        };
        self.spawn(request_id, async move {
            if let Some(mut w) = wait {
                let _ = tokio::time::timeout(ORDER_WAIT, w.wait_for(|d| *d)).await;
            }
            post.run(&shared).await;
            if let Some(tx) = done {
                let _ = tx.send(true);
            }
        })?;
        if start_standalone {
            // Opened once `notifications/initialized` was accepted, and every
            // later message waits until the server has answered the GET (or
            // refused it): see "The standalone GET stream" in the crate docs.
            let shared = Arc::clone(&self.shared);
            let wait = self.order_barrier.clone();
            let (ready, ready_rx) = watch::channel(false);
            self.order_barrier = Some(ready_rx);
            self.spawn(None, async move {
                if let Some(mut w) = wait {
                    let _ = tokio::time::timeout(ORDER_WAIT, w.wait_for(|d| *d)).await;
                }
                standalone_stream(&shared, ready).await;
            })?;
        }
        Ok(())
    }

    fn abort_all(&self) {
        let mut t = lock(&self.shared.tasks);
        t.closed = true;
        for (_, h) in t.all.drain() {
            h.abort();
        }
        t.by_request.clear();
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.abort_all();
    }
}

fn cancelled_request_id(params: Option<&RawJson>) -> Option<RequestId> {
    let v: serde_json::Value = params?.decode().ok()?;
    serde_json::from_value(v.get("requestId")?.clone()).ok()
}

impl Transport for HttpTransport {
    fn poll_recv(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        match self.inbox.poll_recv(cx) {
            Poll::Ready(Some(item)) => {
                if let Err(e) = &item
                    && e.is_terminal()
                {
                    self.done = true;
                }
                Poll::Ready(Some(item))
            }
            // The transport holds a sender, so the channel never ends.
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }

    fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.done || self.closing.is_some() {
            return Poll::Ready(Err(TransportError::new(
                TransportErrorKind::Closed,
                "the HTTP transport is closed",
            )));
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(mut self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        if self.done || self.closing.is_some() {
            return Err(TransportError::new(
                TransportErrorKind::Closed,
                "the HTTP transport is closed",
            ));
        }
        self.send_message(msg)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        // Each message is on its way in its own task as soon as
        // `start_send` returns; failures come back through `poll_recv`,
        // scoped to their request.
        Poll::Ready(Ok(()))
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        if self.closing.is_none() {
            let shared = Arc::clone(&self.shared);
            self.closing = Some(Box::pin(async move { close_session(&shared).await }));
        }
        if let Some(fut) = self.closing.as_mut()
            && fut.as_mut().poll(cx).is_pending()
        {
            return Poll::Pending;
        }
        self.abort_all();
        self.done = true;
        Poll::Ready(Ok(()))
    }

    fn set_protocol_version(self: Pin<&mut Self>, version: ProtocolVersion) {
        lock(&self.shared.state).version = Some(version);
    }
}

/// `DELETE` the session (legacy era), bounded by [`CLOSE_TIMEOUT`].
async fn close_session(shared: &Shared) {
    let (session, version) = {
        let s = lock(&shared.state);
        (s.session_id.clone(), s.version)
    };
    let Some(session) = session else { return };
    let mut headers = HeaderMap::new();
    headers.insert(SESSION_ID, session);
    if let Some(v) = version.filter(|v| v.has(Feature::ProtocolVersionHeader)) {
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static(v.as_str()));
    }
    let req = shared.exchange(Method::DELETE, &shared.cfg.url, headers, Bytes::new());
    match tokio::time::timeout(CLOSE_TIMEOUT, req).await {
        Ok(Ok(resp)) => tracing::debug!(status = %resp.status(), "session DELETE answered"),
        Ok(Err(e)) => tracing::debug!(error = %e, "session DELETE failed"),
        Err(_) => tracing::debug!("session DELETE timed out"),
    }
}

fn err(kind: TransportErrorKind, e: HttpError) -> TransportError {
    TransportError::new(kind, e)
}

fn content_type(resp: &Response<Incoming>) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn same_origin(a: &Uri, b: &Uri) -> bool {
    fn port(u: &Uri) -> Option<u16> {
        u.port_u16().or(match u.scheme_str() {
            Some("http") => Some(80),
            Some("https") => Some(443),
            _ => None,
        })
    }
    a.scheme() == b.scheme()
        && a.host().map(str::to_ascii_lowercase) == b.host().map(str::to_ascii_lowercase)
        && port(a) == port(b)
}

/// Resolves a `Location` (absolute, or absolute-path) against `base`.
fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    if location.starts_with('/') && !location.starts_with("//") {
        let mut parts = base.clone().into_parts();
        parts.path_and_query = Some(location.parse().ok()?);
        return Uri::from_parts(parts).ok();
    }
    let u: Uri = location.parse().ok()?;
    u.scheme().is_some().then_some(u)
}

/// Resolves the HTTP+SSE `endpoint` event data (any relative reference
/// form servers use: absolute URL, absolute path, or relative path).
fn resolve_endpoint(base: &Uri, data: &str) -> Option<Uri> {
    let data = data.trim();
    if let Some(u) = resolve(base, data) {
        return Some(u);
    }
    // A relative path: replace the last segment of the base path.
    let path = base.path();
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    resolve(base, &format!("{dir}/{data}"))
}

async fn read_limited(body: Incoming, limit: usize) -> Result<Bytes, HttpError> {
    match Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            if e.is::<http_body_util::LengthLimitError>() {
                Err(HttpError::BodyTooLarge { limit })
            } else {
                Err(HttpError::Client(e))
            }
        }
    }
}

fn kind_of_client_error(e: &HttpError) -> TransportErrorKind {
    match e {
        HttpError::Timeout { .. } => TransportErrorKind::Timeout,
        HttpError::Client(_) => TransportErrorKind::Io,
        HttpError::SessionExpired { .. } => TransportErrorKind::SessionExpired,
        _ => TransportErrorKind::Protocol,
    }
}

impl Shared {
    /// Delivers one item to `poll_recv`, waiting while the inbox is full:
    /// this wait is the backpressure (the caller reads nothing meanwhile).
    async fn push(&self, item: Item) -> Result<(), Gone> {
        self.inbox.send(item).await.map_err(|_| Gone)
    }

    /// One HTTP exchange: auth header, same-origin 307/308 redirects, the
    /// request timeout, one retry after a 401/403 if the auth hook asks.
    async fn exchange(
        &self,
        method: Method,
        url: &Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<Incoming>, HttpError> {
        let mut url = url.clone();
        let mut redirects = 0;
        let mut auth_retried = false;
        loop {
            let mut req = Request::builder()
                .method(method.clone())
                .uri(url.clone())
                .body(Full::new(body.clone()))
                .map_err(|e| HttpError::Client(Box::new(e)))?;
            let h = req.headers_mut();
            for (k, v) in &self.cfg.headers {
                h.append(k.clone(), v.clone());
            }
            for (k, v) in &headers {
                h.insert(k.clone(), v.clone());
            }
            if let Some(auth) = &self.cfg.auth
                && let Some(mut v) = auth.header().await
            {
                v.set_sensitive(true);
                h.insert(http::header::AUTHORIZATION, v);
            }
            let fut = self.cfg.http.send(req);
            let resp = match self.cfg.request_timeout {
                Some(t) => tokio::time::timeout(t, fut)
                    .await
                    .map_err(|_| HttpError::Timeout {
                        what: "waiting for the response headers",
                        after: t,
                    })?,
                None => fut.await,
            }
            .map_err(|e| HttpError::Client(Box::new(e)))?;
            let status = resp.status();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                if let (Some(auth), false) = (&self.cfg.auth, auth_retried) {
                    let www = resp.headers().get(WWW_AUTHENTICATE).cloned();
                    if auth.on_unauthorized(Unauthorized::new(status, www)).await {
                        auth_retried = true;
                        continue;
                    }
                }
                return Ok(resp);
            }
            if status.is_redirection() {
                let location = resp
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                if status != StatusCode::TEMPORARY_REDIRECT
                    && status != StatusCode::PERMANENT_REDIRECT
                {
                    return Err(HttpError::Redirect {
                        status,
                        reason: "only 307 and 308 keep the method and body; point the client at the final URL".into(),
                    });
                }
                let Some(target) = location.as_deref().and_then(|l| resolve(&url, l)) else {
                    return Err(HttpError::Redirect {
                        status,
                        reason: "missing or unusable Location header".into(),
                    });
                };
                if !same_origin(&url, &target) {
                    return Err(HttpError::CrossOriginRedirect {
                        location: target.to_string(),
                    });
                }
                redirects += 1;
                if redirects > MAX_REDIRECTS {
                    return Err(HttpError::Redirect {
                        status,
                        reason: format!("more than {MAX_REDIRECTS} redirects"),
                    });
                }
                url = target;
                continue;
            }
            return Ok(resp);
        }
    }

    /// Headers common to every request after the handshake (legacy: session
    /// id and version; modern: version).
    fn base_headers(&self, is_initialize: bool) -> HeaderMap {
        let s = lock(&self.state);
        // Room for these and the per-request headers the caller adds.
        let mut h = HeaderMap::with_capacity(8);
        if is_initialize {
            return h;
        }
        if let Some(v) = s.version {
            if v.has(Feature::ProtocolVersionHeader) {
                h.insert(PROTOCOL_VERSION, HeaderValue::from_static(v.as_str()));
            }
            if v.has(Feature::HttpSession)
                && let Some(id) = &s.session_id
            {
                h.insert(SESSION_ID, id.clone());
            }
        }
        h
    }

    /// Handles one SSE event of a stream: skips priming and non-message
    /// events, decodes the rest. Nothing is pushed here: the caller pushes
    /// (and waits for room), or holds the answer to `expect` until the
    /// stream ends.
    fn on_event(
        &self,
        ev: &mut SseEvent,
        expect: Option<&RequestId>,
        tools_list: bool,
    ) -> EventOutcome {
        if ev.data.is_empty() || ev.event != "message" {
            return EventOutcome::Skipped;
        }
        // The event's text becomes the message's storage (no copy).
        match Message::from_string(std::mem::take(&mut ev.data)) {
            Ok(msg) if is_answer_to(&msg, expect) => EventOutcome::Answer(if tools_list {
                self.filter_tools(msg)
            } else {
                msg
            }),
            Ok(msg) => EventOutcome::Deliver(msg),
            Err(e) => {
                tracing::warn!(error = %e, "undecodable SSE event skipped");
                EventOutcome::Report(TransportError::from(e))
            }
        }
    }

    fn filter_tools(&self, msg: Message) -> Message {
        if let Message::Response(r) = &msg {
            let mut s = lock(&self.state);
            if let Some(new) = filter_tools_list(r.result.get(), &mut s.tool_headers)
                && let Ok(raw) = RawJson::from_string(new)
            {
                return Message::Response(RpcResponse::new(r.id.clone(), raw));
            }
        }
        msg
    }
}

fn is_answer_to(msg: &Message, expect: Option<&RequestId>) -> bool {
    match (msg, expect) {
        (Message::Response(_) | Message::Error(_), Some(id)) => msg.id() == Some(id),
        _ => false,
    }
}

enum EventOutcome {
    Skipped,
    /// A message for `poll_recv` (not the awaited answer).
    Deliver(Message),
    /// An undecodable event, reported to `poll_recv`; not progress.
    Report(TransportError),
    Answer(Message),
}

/// How an SSE stream read ended.
enum StreamEnd {
    /// The awaited response arrived (the rest of the stream was drained).
    Answered,
    /// The server ended the stream (graceful close), `progress` tells
    /// whether any message was delivered.
    Ended { progress: bool },
    /// The body failed mid-stream.
    Broken { progress: bool, error: HttpError },
    /// The transport is gone; nobody reads what this stream delivers.
    Gone,
}

/// Reads an SSE body to its end, pushing every message.
///
/// Each push waits for room in the inbox, and no frame is read meanwhile:
/// a consumer that stops polling stops the reads from the socket, and flow
/// control then slows the server down (backpressure, nothing dropped).
///
/// The answer to `expect` is held back until the stream ends (at most
/// [`ANSWER_HOLD`]), so the connection is back in the pool when the caller
/// sees the answer and sends its next request: sequential callers reuse one
/// connection instead of racing the pool.
async fn read_sse(
    shared: &Shared,
    mut body: Incoming,
    dec: &mut SseDecoder,
    expect: Option<&RequestId>,
    tools_list: bool,
) -> StreamEnd {
    let mut buf = BytesMut::new();
    let mut s = ReadState::default();
    loop {
        let frame = if s.answered {
            let wait = if s.held.is_some() {
                ANSWER_HOLD
            } else {
                DRAIN_GRACE
            };
            match tokio::time::timeout(wait, body.frame()).await {
                Ok(f) => f,
                Err(_) if s.held.is_some() => {
                    if s.release(shared).await.is_err() {
                        return StreamEnd::Gone;
                    }
                    continue;
                }
                Err(_) => return StreamEnd::Answered,
            }
        } else {
            body.frame().await
        };
        match frame {
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                loop {
                    let item = match dec.decode(&mut buf) {
                        Ok(Some(mut ev)) => {
                            s.on_outcome(shared.on_event(&mut ev, expect, tools_list))
                        }
                        Ok(None) => break,
                        Err(e @ SseError::EventTooLarge { .. }) => {
                            tracing::warn!(error = %e, "oversized SSE event discarded");
                            if s.too_large_reported {
                                None
                            } else {
                                s.too_large_reported = true;
                                let mut te = TransportError::new(TransportErrorKind::Decode, e);
                                if let (Some(id), false) = (expect, s.answered) {
                                    // Most likely the answer itself: fail the
                                    // request rather than wait for it forever.
                                    te = te.with_request(id.clone());
                                    s.answered = true;
                                }
                                Some(Err(te))
                            }
                        }
                    };
                    if let Some(item) = item
                        && shared.push(item).await.is_err()
                    {
                        return StreamEnd::Gone;
                    }
                }
            }
            Some(Err(e)) => {
                // Keep the decoder's last event id; drop the partial event.
                dec.reset_stream();
                if s.release(shared).await.is_err() {
                    return StreamEnd::Gone;
                }
                if s.answered {
                    return StreamEnd::Answered;
                }
                return StreamEnd::Broken {
                    progress: s.progress,
                    error: HttpError::Client(Box::new(e)),
                };
            }
            None => {
                while let Ok(Some(mut ev)) = dec.decode_eof(&mut buf) {
                    if let Some(item) = s.on_outcome(shared.on_event(&mut ev, expect, tools_list))
                        && shared.push(item).await.is_err()
                    {
                        return StreamEnd::Gone;
                    }
                }
                dec.reset_stream();
                if s.release(shared).await.is_err() {
                    return StreamEnd::Gone;
                }
                if s.answered {
                    return StreamEnd::Answered;
                }
                return StreamEnd::Ended {
                    progress: s.progress,
                };
            }
        }
    }
}

/// What [`read_sse`] knows about its stream so far.
#[derive(Default)]
struct ReadState {
    /// A message was delivered (or the answer arrived).
    progress: bool,
    /// The answer arrived (or the request was failed).
    answered: bool,
    /// The answer, held until the stream ends or [`ANSWER_HOLD`] passes.
    held: Option<Message>,
    too_large_reported: bool,
}

impl ReadState {
    /// The item to push for one event, if any.
    fn on_outcome(&mut self, outcome: EventOutcome) -> Option<Item> {
        match outcome {
            EventOutcome::Answer(m) => {
                self.answered = true;
                self.progress = true;
                // A second answer to the same id: deliver the first now.
                self.held.replace(m).map(Ok)
            }
            EventOutcome::Deliver(m) => {
                self.progress = true;
                Some(Ok(m))
            }
            EventOutcome::Report(e) => Some(Err(e)),
            EventOutcome::Skipped => None,
        }
    }

    /// Delivers the held answer, if any.
    async fn release(&mut self, shared: &Shared) -> Result<(), Gone> {
        match self.held.take() {
            Some(m) => shared.push(Ok(m)).await,
            None => Ok(()),
        }
    }
}

/// Delay before reconnection attempt `attempt` (0-based): the server's
/// `retry` if it gave one (the spec's MUST), else capped exponential backoff;
/// never less than the server asked.
fn backoff(attempt: u32, server_retry: Option<Duration>) -> Duration {
    let exp = INITIAL_BACKOFF
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(MAX_BACKOFF);
    match server_retry {
        Some(r) if attempt == 0 => r,
        Some(r) => r.max(exp),
        None => exp,
    }
}

/// One outgoing message and what to do with its answer.
struct Post {
    body: Bytes,
    request_id: Option<RequestId>,
    method: Option<String>,
    modern: bool,
    headers: HeaderMap,
    version: Option<ProtocolVersion>,
    url: Uri,
    sse_mode: bool,
}

impl Post {
    fn new(shared: &Shared, msg: Message, method: Option<String>, modern: bool) -> Self {
        let is_init = method.as_deref() == Some("initialize");
        let mut headers = shared.base_headers(is_init);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, ACCEPT_BOTH);
        let (version, url, sse_mode) = {
            let s = lock(&shared.state);
            if modern
                && let (Some(m), Message::Request(_) | Message::Notification(_)) =
                    (method.as_deref(), &msg)
            {
                let params = match &msg {
                    Message::Request(r) => r.params.as_ref(),
                    Message::Notification(n) => n.params.as_ref(),
                    _ => None,
                };
                let params: Option<serde_json::Value> = match m {
                    "tools/call" | "prompts/get" | "resources/read" => {
                        params.and_then(|p| p.decode().ok())
                    }
                    _ => None,
                };
                add_modern_headers(&mut headers, m, params.as_ref(), &s.tool_headers);
            }
            (
                s.version,
                s.sse_endpoint
                    .clone()
                    .unwrap_or_else(|| shared.cfg.url.clone()),
                s.sse_endpoint.is_some(),
            )
        };
        let request_id = match &msg {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        Post {
            body: Bytes::from(msg.to_vec()),
            request_id,
            method,
            modern,
            headers,
            version,
            url,
            sse_mode,
        }
    }

    async fn run(self, shared: &Shared) {
        let result = self.exchange(shared).await;
        if let Err(e) = result {
            match &self.request_id {
                Some(id) => {
                    // Gone: nobody is left to tell.
                    let _ = shared.push(Err(e.with_request(id.clone()))).await;
                }
                None => tracing::warn!(
                    method = self.method.as_deref().unwrap_or("<response>"),
                    error = %e,
                    "a notification or response POST failed"
                ),
            }
        }
    }

    fn is(&self, m: &str) -> bool {
        self.method.as_deref() == Some(m)
    }

    async fn exchange(&self, shared: &Shared) -> Result<(), TransportError> {
        let mut reissued = false;
        loop {
            let resp = shared
                .exchange(
                    Method::POST,
                    &self.url,
                    self.headers.clone(),
                    self.body.clone(),
                )
                .await
                .map_err(|e| err(kind_of_client_error(&e), e))?;
            let status = resp.status();
            if status.is_success() {
                if self.is("initialize") && !self.sse_mode {
                    capture_session(shared, &resp)?;
                }
                match self.on_success(shared, resp).await {
                    Err(Broken::Reissue) if !reissued => {
                        reissued = true;
                        tracing::info!(method = ?self.method, "response stream broke; re-issuing the request once");
                        continue;
                    }
                    Err(Broken::Reissue) => {
                        return Err(err(
                            TransportErrorKind::Io,
                            HttpError::StreamEnded { resumes: 0 },
                        ));
                    }
                    Err(Broken::Fail(e)) => return Err(e),
                    Ok(()) => return Ok(()),
                }
            }
            return self.on_failure(shared, resp).await;
        }
    }

    async fn on_success(&self, shared: &Shared, resp: Response<Incoming>) -> Result<(), Broken> {
        let status = resp.status();
        let ct = content_type(&resp);
        let id = match &self.request_id {
            Some(id) if !self.sse_mode => id,
            // Notifications and responses: 202 (or any 2xx) with no body.
            // HTTP+SSE: the answer comes on the GET stream. Drain what there
            // is so the connection goes back to the pool.
            _ => {
                let _ = read_limited(resp.into_body(), ERROR_BODY_LIMIT).await;
                return Ok(());
            }
        };
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(Broken::Fail(err(
                TransportErrorKind::Protocol,
                HttpError::Status {
                    status,
                    excerpt: "a request was answered without a body".into(),
                },
            )));
        }
        if ct.starts_with("application/json") {
            let body = resp.into_body();
            let read = read_limited(body, shared.cfg.max_body_size);
            let bytes = match shared.cfg.request_timeout {
                Some(t) => tokio::time::timeout(t, read).await.map_err(|_| {
                    Broken::Fail(err(
                        TransportErrorKind::Timeout,
                        HttpError::Timeout {
                            what: "reading the JSON response body",
                            after: t,
                        },
                    ))
                })?,
                None => read.await,
            }
            .map_err(|e| Broken::Fail(err(kind_of_client_error(&e), e)))?;
            let msg = Message::from_slice(&bytes).map_err(|e| {
                Broken::Fail(err(
                    TransportErrorKind::Protocol,
                    HttpError::InvalidBody {
                        status,
                        reason: e.to_string(),
                        excerpt: excerpt(&bytes),
                    },
                ))
            })?;
            let msg = if self.modern && self.is("tools/list") && is_answer_to(&msg, Some(id)) {
                shared.filter_tools(msg)
            } else {
                msg
            };
            // Gone: the transport was dropped; nothing left to do.
            let _ = shared.push(Ok(msg)).await;
            return Ok(());
        }
        if ct.starts_with("text/event-stream") {
            return self.on_stream(shared, resp.into_body(), id).await;
        }
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        Err(Broken::Fail(err(
            TransportErrorKind::Protocol,
            HttpError::UnexpectedContentType {
                status,
                content_type: ct,
                excerpt: excerpt(&bytes),
            },
        )))
    }

    /// Reads a response stream; resumes it (legacy) or asks for a re-issue
    /// (modern) when it ends before the answer.
    async fn on_stream(
        &self,
        shared: &Shared,
        body: Incoming,
        id: &RequestId,
    ) -> Result<(), Broken> {
        let tools_list = self.modern && self.is("tools/list");
        let mut dec = SseDecoder::new().with_max_event_size(shared.cfg.max_sse_event_size);
        let mut end = read_sse(shared, body, &mut dec, Some(id), tools_list).await;
        let resumable = !self.modern && self.version.is_some_and(|v| v.has(Feature::SseResumption));
        let mut attempts: u32 = 0;
        let mut total: u32 = 0;
        loop {
            let (progress, cause) = match end {
                StreamEnd::Answered | StreamEnd::Gone => return Ok(()),
                StreamEnd::Ended { progress } => (progress, None),
                StreamEnd::Broken { progress, error } => (progress, Some(error)),
            };
            if self.modern {
                let allowed = self
                    .method
                    .as_deref()
                    .is_some_and(|m| shared.cfg.reissue_methods.iter().any(|r| r == m));
                if allowed {
                    return Err(Broken::Reissue);
                }
                return Err(Broken::Fail(stream_error(cause, 0)));
            }
            if !resumable || dec.last_event_id().is_empty() {
                return Err(Broken::Fail(stream_error(cause, total)));
            }
            if progress {
                attempts = 0;
            }
            if attempts >= shared.cfg.max_resume_attempts {
                return Err(Broken::Fail(stream_error(cause, total)));
            }
            let delay = backoff(attempts, dec.retry());
            attempts += 1;
            total += 1;
            tracing::debug!(
                ?delay,
                last_event_id = dec.last_event_id(),
                "resuming SSE stream"
            );
            tokio::time::sleep(delay).await;
            end = match resume_get(shared, dec.last_event_id()).await {
                Ok(Some(body)) => read_sse(shared, body, &mut dec, Some(id), tools_list).await,
                Ok(None) => {
                    return Err(Broken::Fail(err(
                        TransportErrorKind::Protocol,
                        HttpError::StreamEnded { resumes: total },
                    )));
                }
                Err(e) => {
                    if matches!(e, HttpError::SessionExpired { .. }) {
                        return Err(Broken::Fail(err(TransportErrorKind::SessionExpired, e)));
                    }
                    // A failed reconnection is a stream that made no progress.
                    StreamEnd::Broken {
                        progress: false,
                        error: e,
                    }
                }
            };
        }
    }

    async fn on_failure(
        &self,
        shared: &Shared,
        resp: Response<Incoming>,
    ) -> Result<(), TransportError> {
        let status = resp.status();
        let www = resp.headers().get(WWW_AUTHENTICATE).cloned();
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        let status_err = || HttpError::Status {
            status,
            excerpt: excerpt(&bytes),
        };
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            // The auth hook already saw the challenge in `Shared::exchange`.
            if let Some(www) = www {
                tracing::debug!(www_authenticate = ?www, "request unauthorized");
            }
            return Err(err(TransportErrorKind::Unauthorized, status_err()));
        }
        // A live legacy session the server forgot.
        if status == StatusCode::NOT_FOUND
            && !self.modern
            && !self.sse_mode
            && let Some(session) = self.headers.get(SESSION_ID)
        {
            let mut s = lock(&shared.state);
            if s.session_id.as_ref() == Some(session) {
                s.session_id = None;
                s.standalone_started = false;
            }
            return Err(err(
                TransportErrorKind::SessionExpired,
                HttpError::SessionExpired {
                    session: session.to_str().unwrap_or("").to_owned(),
                },
            ));
        }
        // Era detection: a JSON-RPC error body is the answer.
        if let (Some(id), Ok(Message::Error(e))) = (&self.request_id, Message::from_slice(&bytes)) {
            let e = ErrorResponse::new(Some(e.id.unwrap_or_else(|| id.clone())), e.error);
            let _ = shared.push(Ok(Message::Error(e))).await;
            return Ok(());
        }
        if self.is("initialize")
            && shared.cfg.legacy_sse_fallback
            && !self.sse_mode
            && matches!(status.as_u16(), 400 | 404 | 405)
        {
            match open_legacy_sse(shared).await {
                Ok(endpoint) => {
                    tracing::info!(%endpoint, "server speaks the 2024-11-05 HTTP+SSE transport; using it");
                    let resp = shared
                        .exchange(
                            Method::POST,
                            &endpoint,
                            self.sse_headers(),
                            self.body.clone(),
                        )
                        .await
                        .map_err(|e| err(kind_of_client_error(&e), e))?;
                    if resp.status().is_success() {
                        return Ok(());
                    }
                    let status = resp.status();
                    let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
                        .await
                        .unwrap_or_default();
                    return Err(err(
                        TransportErrorKind::Protocol,
                        HttpError::Status {
                            status,
                            excerpt: excerpt(&bytes),
                        },
                    ));
                }
                Err(e) => tracing::debug!(error = %e, "HTTP+SSE fallback did not work"),
            }
        }
        Err(err(TransportErrorKind::Protocol, status_err()))
    }

    fn sse_headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h
    }
}

enum Broken {
    /// Modern era: the caller allows re-issuing this method.
    Reissue,
    Fail(TransportError),
}

fn stream_error(cause: Option<HttpError>, resumes: u32) -> TransportError {
    match cause {
        Some(e) => err(TransportErrorKind::Io, e),
        None => err(
            TransportErrorKind::Protocol,
            HttpError::StreamEnded { resumes },
        ),
    }
}

fn capture_session(shared: &Shared, resp: &Response<Incoming>) -> Result<(), TransportError> {
    let Some(v) = resp.headers().get(SESSION_ID) else {
        return Ok(());
    };
    let ok = !v.is_empty() && v.as_bytes().iter().all(|b| (0x21..=0x7E).contains(b));
    if !ok {
        return Err(err(
            TransportErrorKind::Protocol,
            HttpError::InvalidSessionId,
        ));
    }
    let mut v = v.clone();
    v.set_sensitive(true);
    lock(&shared.state).session_id = Some(v);
    Ok(())
}

/// `GET` with `Last-Event-ID`. `Ok(None)`: the server does not offer it (405).
async fn resume_get(shared: &Shared, last_event_id: &str) -> Result<Option<Incoming>, HttpError> {
    let mut headers = shared.base_headers(false);
    headers.insert(ACCEPT, ACCEPT_SSE);
    if let Ok(v) = HeaderValue::from_str(last_event_id) {
        headers.insert(LAST_EVENT_ID, v);
    }
    get_stream(shared, headers).await
}

async fn get_stream(shared: &Shared, headers: HeaderMap) -> Result<Option<Incoming>, HttpError> {
    let sent_session = headers.get(SESSION_ID).cloned();
    let resp = shared
        .exchange(Method::GET, &shared.cfg.url, headers, Bytes::new())
        .await?;
    let status = resp.status();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Ok(None);
    }
    if status == StatusCode::NOT_FOUND
        && let Some(session) = sent_session
    {
        let mut s = lock(&shared.state);
        if s.session_id.as_ref() == Some(&session) {
            s.session_id = None;
        }
        return Err(HttpError::SessionExpired {
            session: session.to_str().unwrap_or("").to_owned(),
        });
    }
    let ct = content_type(&resp);
    if !status.is_success() {
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        return Err(HttpError::Status {
            status,
            excerpt: excerpt(&bytes),
        });
    }
    if !ct.starts_with("text/event-stream") {
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        return Err(HttpError::UnexpectedContentType {
            status,
            content_type: ct,
            excerpt: excerpt(&bytes),
        });
    }
    Ok(Some(resp.into_body()))
}

/// The optional standalone `GET` stream (legacy era): server requests and
/// notifications. Reconnects with `Last-Event-ID` within the budget.
/// `ready` is dropped once the server answered the first GET (with the
/// stream, 405, or an error): the messages queued behind it go out then.
async fn standalone_stream(shared: &Shared, ready: watch::Sender<bool>) {
    let mut dec = SseDecoder::new().with_max_event_size(shared.cfg.max_sse_event_size);
    let mut attempts: u32 = 0;
    let mut ready = Some(ready);
    loop {
        let mut headers = shared.base_headers(false);
        headers.insert(ACCEPT, ACCEPT_SSE);
        if !dec.last_event_id().is_empty()
            && let Ok(v) = HeaderValue::from_str(dec.last_event_id())
        {
            headers.insert(LAST_EVENT_ID, v);
        }
        let opened = get_stream(shared, headers).await;
        // The server has registered the stream (or refused it) by the time
        // its answer's headers arrive.
        if let Some(r) = ready.take() {
            let _ = r.send(true);
        }
        let progress = match opened {
            Ok(None) => {
                tracing::debug!("server does not offer the standalone GET stream (405)");
                return;
            }
            Ok(Some(body)) => match read_sse(shared, body, &mut dec, None, false).await {
                StreamEnd::Ended { progress } | StreamEnd::Broken { progress, .. } => progress,
                StreamEnd::Answered => true,
                StreamEnd::Gone => return,
            },
            Err(e @ HttpError::SessionExpired { .. }) => {
                tracing::debug!(error = %e, "standalone GET stream: session gone");
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, "standalone GET stream failed");
                false
            }
        };
        if progress {
            attempts = 0;
        }
        if attempts >= shared.cfg.max_resume_attempts {
            tracing::warn!(
                "standalone GET stream: giving up after {attempts} reconnections without progress"
            );
            return;
        }
        tokio::time::sleep(backoff(attempts, dec.retry())).await;
        attempts += 1;
    }
}

/// The 2024-11-05 HTTP+SSE fallback: `GET` the URL, wait for `endpoint`,
/// keep reading the stream in a task. Returns the POST endpoint.
async fn open_legacy_sse(shared: &Shared) -> Result<Uri, HttpError> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, ACCEPT_SSE);
    let Some(body) = get_stream(shared, headers).await? else {
        return Err(HttpError::Status {
            status: StatusCode::METHOD_NOT_ALLOWED,
            excerpt: "GET not allowed: not an HTTP+SSE server either".into(),
        });
    };
    let (tx, rx) = oneshot::channel();
    let inbox = shared.inbox.clone();
    let base = shared.cfg.url.clone();
    let max = shared.cfg.max_sse_event_size;
    let task = tokio::spawn(legacy_sse_reader(body, base.clone(), max, tx, inbox));
    let endpoint = match tokio::time::timeout(ENDPOINT_TIMEOUT, rx).await {
        Ok(Ok(Some(e))) => e,
        Ok(_) => {
            task.abort();
            return Err(HttpError::StreamEnded { resumes: 0 });
        }
        Err(_) => {
            task.abort();
            return Err(HttpError::Timeout {
                what: "waiting for the HTTP+SSE endpoint event",
                after: ENDPOINT_TIMEOUT,
            });
        }
    };
    if !same_origin(&base, &endpoint) {
        task.abort();
        return Err(HttpError::CrossOriginRedirect {
            location: endpoint.to_string(),
        });
    }
    // Keep the reader alive as long as the transport.
    let mut t = lock(&shared.tasks);
    let key = t.next;
    t.next += 1;
    t.all.insert(key, task.abort_handle());
    drop(t);
    lock(&shared.state).sse_endpoint = Some(endpoint.clone());
    Ok(endpoint)
}

async fn legacy_sse_reader(
    mut body: Incoming,
    base: Uri,
    max: usize,
    endpoint_tx: oneshot::Sender<Option<Uri>>,
    inbox: mpsc::Sender<Item>,
) {
    let mut dec = SseDecoder::new().with_max_event_size(max);
    let mut buf = BytesMut::new();
    let mut endpoint_tx = Some(endpoint_tx);
    let cause = loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                loop {
                    match dec.decode(&mut buf) {
                        Ok(Some(ev)) if ev.event == "endpoint" => {
                            if let Some(tx) = endpoint_tx.take() {
                                let _ = tx.send(resolve_endpoint(&base, &ev.data));
                            }
                        }
                        Ok(Some(ev)) if ev.event == "message" && !ev.data.is_empty() => {
                            let item = Message::from_string(ev.data).map_err(TransportError::from);
                            // Waits for room (backpressure); fails only
                            // when the transport is gone.
                            if inbox.send(item).await.is_err() {
                                return;
                            }
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(e) => {
                            let e = TransportError::new(TransportErrorKind::Decode, e);
                            if inbox.send(Err(e)).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
            Some(Err(e)) => break TransportError::new(TransportErrorKind::Closed, e),
            None => {
                break TransportError::new(
                    TransportErrorKind::Closed,
                    "the server closed the HTTP+SSE stream",
                );
            }
        }
    };
    if let Some(tx) = endpoint_tx.take() {
        let _ = tx.send(None);
        return;
    }
    // HTTP+SSE has no resumption: the connection is gone.
    let _ = inbox.send(Err(cause)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_respects_retry_and_caps() {
        assert_eq!(backoff(0, None), INITIAL_BACKOFF);
        assert_eq!(backoff(1, None), INITIAL_BACKOFF * 2);
        assert_eq!(backoff(30, None), MAX_BACKOFF);
        assert_eq!(
            backoff(0, Some(Duration::from_millis(3))),
            Duration::from_millis(3)
        );
        assert_eq!(
            backoff(3, Some(Duration::from_secs(60))),
            Duration::from_secs(60)
        );
        assert_eq!(
            backoff(2, Some(Duration::from_millis(1))),
            INITIAL_BACKOFF * 4
        );
    }

    #[test]
    fn origins_and_locations() {
        let base: Uri = "http://127.0.0.1:8080/mcp".parse().unwrap();
        assert!(same_origin(
            &base,
            &"http://127.0.0.1:8080/other".parse().unwrap()
        ));
        assert!(!same_origin(
            &base,
            &"http://127.0.0.1:8081/mcp".parse().unwrap()
        ));
        assert!(!same_origin(
            &base,
            &"https://127.0.0.1:8080/mcp".parse().unwrap()
        ));
        let https: Uri = "https://h/mcp".parse().unwrap();
        assert!(same_origin(&https, &"https://h:443/x".parse().unwrap()));
        assert_eq!(
            resolve(&base, "/x?y=1").unwrap().to_string(),
            "http://127.0.0.1:8080/x?y=1"
        );
        assert!(resolve(&base, "//evil/x").is_none());
        assert_eq!(
            resolve_endpoint(&base, "/messages?sessionId=1")
                .unwrap()
                .to_string(),
            "http://127.0.0.1:8080/messages?sessionId=1"
        );
        assert_eq!(
            resolve_endpoint(&base, "messages?s=1").unwrap().to_string(),
            "http://127.0.0.1:8080/messages?s=1"
        );
    }

    #[test]
    fn cancelled_id_parsing() {
        let p = RawJson::from_string(r#"{"requestId":7,"reason":"x"}"#.into()).unwrap();
        assert_eq!(cancelled_request_id(Some(&p)), Some(RequestId::Number(7)));
        let p = RawJson::from_string(r#"{"requestId":"a"}"#.into()).unwrap();
        assert_eq!(cancelled_request_id(Some(&p)), Some("a".into()));
        assert_eq!(cancelled_request_id(None), None);
    }
}
