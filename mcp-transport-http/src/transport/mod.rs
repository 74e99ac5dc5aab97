//! The [`Transport`] implementation: POSTs over a shared pooled client,
//! every received message funnelled into one queue.
//!
//! Request POSTs run *inline* ([`inline`]): polled by the transport's own
//! `poll_recv` (the driver's task), each with its own waker, their answers
//! handed straight to `poll_recv`. Notifications and responses, and
//! requests beyond [`inline::MAX_INLINE`] at once, run on tokio tasks of
//! their own. Either way a slow answer never holds up another request.
//!
//! - [`inline`]: the inline request POSTs;
//! - this module: the transport;
//! - [`shared`]: the state its tasks share (session, task registry, inbox);
//! - [`post`]: one outgoing message and what to do with its answer;
//! - [`exchange`]: one HTTP exchange (auth, redirects, timeout) and helpers;
//! - [`sse_read`]: reading one SSE stream with backpressure;
//! - [`get`]: `GET` streams (resumption, standalone stream) and backoff;
//! - [`legacy_sse`]: the 2024-11-05 HTTP+SSE fallback.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::{HeaderName, HeaderValue};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, RequestId};
use mcp_proto::transport::{SpanField, Transport, TransportError, TransportErrorKind};
use mcp_proto::version::{Era, ProtocolVersion};
use tokio::runtime::Handle;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, watch};

use crate::client::{BoxFuture, CLOSE_TIMEOUT, Config, HttpTransportBuilder};
use crate::error::HttpError;

mod exchange;
mod get;
mod inline;
mod legacy_sse;
mod post;
mod shared;
mod sse_read;

use self::get::standalone_stream;
use self::inline::InlineSet;
use self::post::Post;
pub(crate) use self::shared::Shared;
use self::shared::{Gone, State, Tasks, close_session, lock};

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
/// Error bodies are read up to this size for the excerpt and era detection.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// Longest a message waits for an earlier notification's POST.
const ORDER_WAIT: Duration = Duration::from_secs(5);

type Item = Result<Message, TransportError>;

/// An MCP Streamable HTTP transport (2025-03-26 … 2026-07-28), with the
/// 2024-11-05 HTTP+SSE fallback. See the [crate docs](crate).
pub struct HttpTransport {
    shared: Arc<Shared>,
    /// Boxed items: the channel allocates its first block of 32 slots up
    /// front and keeps it, so an idle transport holds 32 pointers (~0.3 KiB)
    /// instead of 32 items (~3.1 KiB); one allocation per message that
    /// comes through it (answers to inline POSTs do not).
    inbox: mpsc::Receiver<Box<Item>>,
    closing: Option<BoxFuture<'static, ()>>,
    done: bool,
    /// Completion of the last notification/response POST.
    order_barrier: Option<watch::Receiver<bool>>,
    /// What `poll_flush` waits for: the answer to the last notification or
    /// response POST (or the standalone GET) not yet seen by a flush.
    flush_wait: Option<BoxFuture<'static, ()>>,
    /// Request POSTs polled by `poll_recv` instead of tasks ([`inline`]).
    inline: InlineSet,
    /// Last items of inline POSTs, to deliver before anything else.
    finished: VecDeque<Item>,
    /// The runtime messages are sent from (for work `poll_recv` hands to a
    /// task).
    runtime: Option<Handle>,
    /// The deadline the client gave the request it sends next
    /// ([`Transport::set_request_deadline`]), taken by its POST.
    next_deadline: Option<(RequestId, Instant)>,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.shared.cfg.url)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
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

    /// A transport for a new session with the same server, sharing this
    /// one's settings and its connections (the pool, its idle timeout, the
    /// connector and TLS). For a host that holds many sessions with one
    /// server: they connect once per connection in use instead of once per
    /// session, and idle sessions hold no connection of their own.
    ///
    /// The new transport starts with no session: a client connects it as it
    /// would a freshly built one (`initialize` or `server/discover`). Closing
    /// or dropping either transport leaves the other working. Idle
    /// connections close after the [idle timeout](crate::HttpTransportBuilder::idle_timeout),
    /// or when the last transport sharing them is gone.
    ///
    /// ```
    /// use mcp_transport_http::HttpTransport;
    ///
    /// # fn run() -> Result<(), mcp_transport_http::HttpError> {
    /// let first = HttpTransport::builder("http://127.0.0.1:8080/mcp")
    ///     .idle_timeout(Some(std::time::Duration::from_secs(30)))
    ///     .build()?;
    /// // 100 more sessions, one pool of connections (and one idle timeout) for all.
    /// let more: Vec<HttpTransport> = (0..100).map(|_| first.new_session()).collect();
    /// # let _ = more; Ok(()) }
    /// # run().unwrap();
    /// ```
    #[must_use]
    pub fn new_session(&self) -> HttpTransport {
        HttpTransport::from_config(Arc::clone(&self.shared.cfg))
    }

    pub(crate) fn from_config(cfg: Arc<Config>) -> Self {
        let (tx, rx) = mpsc::channel(cfg.max_buffered_messages.max(1));
        HttpTransport {
            shared: Arc::new(Shared {
                cfg,
                state: Mutex::new(State::default()),
                tasks: Mutex::new(Tasks::default()),
                inbox: tx,
                loss_pending: AtomicBool::new(false),
            }),
            inbox: rx,
            closing: None,
            done: false,
            order_barrier: None,
            flush_wait: None,
            inline: InlineSet::new(),
            finished: VecDeque::new(),
            runtime: None,
            next_deadline: None,
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

    /// Runs `fut` on a task of its own, registered so that closing aborts
    /// it; `request`: the request it POSTs; `post`: whether it is a
    /// notification or response POST (counted against
    /// [`Config::max_unanswered_posts`] until it ends).
    fn spawn(
        &self,
        rt: &Handle,
        request: Option<RequestId>,
        post: bool,
        fut: BoxFuture<'static, ()>,
    ) -> Result<(), TransportError> {
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
        // `fut` comes boxed from where it is made: a future is copied
        // whole (its size is its largest state, KiB for an exchange) each
        // time it is moved, so it is moved once, into its box; the task's
        // own future is a pointer and a few words.
        let handle = rt.spawn(async move {
            fut.await;
            let mut t = lock(&shared.tasks);
            t.all.remove(&key);
            if let Some(id) = req
                && t.by_request.get(&id) == Some(&key)
            {
                t.by_request.remove(&id);
            }
            if post {
                t.posts -= 1;
                if let Some(w) = t.room.take() {
                    w.wake();
                }
            }
        });
        if post {
            tasks.posts += 1;
        }
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
        if !in_runtime() {
            return Err(no_runtime());
        }
        if self.runtime.is_none() {
            self.runtime = Handle::try_current().ok();
        }
        let method: Option<Cow<'static, str>> = match &msg {
            Message::Request(r) => Some(r.method.clone()),
            Message::Notification(n) => Some(n.method.clone()),
            _ => None,
        };
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
                self.inline.cancel(&id);
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
        let deadline = match (self.next_deadline.take(), &msg) {
            (Some((id, at)), Message::Request(r)) if id == r.id => Some(at),
            _ => None,
        };
        let mut post = Post::new(&self.shared, msg, method, modern, deadline);
        // The request's span, if the client records one (it hands the
        // request over inside it): the POST's redirects, retries and
        // re-issue are logged in it, so they become its events.
        let span = post.request_id().and_then(|_| request_span());
        if let (Some(span), Some(session)) = (&span, post.sent_session()) {
            span.record(SpanField::SESSION_ID.name(), session);
        }
        let shared = Arc::clone(&self.shared);
        // Keep order where it matters: a message waits until the POSTs of
        // earlier notifications and responses were answered (202 comes
        // fast), so `notifications/initialized` reaches the server before the
        // next request. Requests themselves run concurrently.
        let wait = self.order_wait();
        if let Some(id) = post.request_id().cloned() {
            if self.inline.has_room() {
                // Boxed where it is made (moved once: see `spawn`); wrapped
                // in its span, when there is one, around the box.
                let mut fut: BoxFuture<'static, Option<Item>> = Box::pin(async move {
                    if let Some(w) = wait {
                        wait_for_order(w).await;
                    }
                    post.run(&shared).await
                });
                if let Some(span) = span {
                    fut = Box::pin(tracing::Instrument::instrument(fut, span));
                }
                // Polled once here: on its way now (written by the
                // connection's task), as a spawned POST would be.
                if let Some(item) = self.inline.start(id, fut)
                    && let Ok(rt) = Handle::try_current()
                {
                    self.hand_over(&rt, item);
                }
            } else {
                let rt = Handle::try_current().map_err(|_| no_runtime())?;
                let mut fut: BoxFuture<'static, ()> = Box::pin(posted(wait, post, shared, None));
                if let Some(span) = span {
                    fut = Box::pin(tracing::Instrument::instrument(fut, span));
                }
                self.spawn(&rt, Some(id), false, fut)?;
            }
        } else {
            let (done, rx) = watch::channel(false);
            // The next flush waits for this one (which follows the earlier ones).
            self.flush_wait = Some(Box::pin(wait_for_order(rx.clone())));
            self.order_barrier = Some(rx);
            let rt = Handle::try_current().map_err(|_| no_runtime())?;
            self.spawn(
                &rt,
                None,
                true,
                Box::pin(posted(wait, post, shared, Some(done))),
            )?;
        }
        if start_standalone {
            // Opened once `notifications/initialized` was accepted, and every
            // later message waits until the server has answered the GET (or
            // refused it): see "The standalone GET stream" in the crate docs.
            let shared = Arc::clone(&self.shared);
            let wait = self.order_barrier.clone();
            let (ready, ready_rx) = watch::channel(false);
            self.flush_wait = Some(Box::pin(wait_for_order(ready_rx.clone())));
            self.order_barrier = Some(ready_rx);
            let rt = Handle::try_current().map_err(|_| no_runtime())?;
            self.spawn(
                &rt,
                None,
                false,
                Box::pin(async move {
                    if let Some(w) = wait {
                        wait_for_order(w).await;
                    }
                    standalone_stream(&shared, ready).await;
                }),
            )?;
        }
        Ok(())
    }

    /// What the next message waits for: the last notification or response
    /// POST (or the standalone GET), unless it was answered already.
    fn order_wait(&mut self) -> Option<watch::Receiver<bool>> {
        if self.order_barrier.as_ref().is_some_and(|b| *b.borrow()) {
            self.order_barrier = None;
        }
        self.order_barrier.clone()
    }

    /// Queues an item the inline POST finished with, behind what is queued.
    fn hand_over(&self, rt: &Handle, item: Item) {
        match self.shared.inbox.try_send(Box::new(item)) {
            Ok(()) | Err(TrySendError::Closed(_)) => {}
            Err(TrySendError::Full(item)) => {
                let shared = Arc::clone(&self.shared);
                rt.spawn(async move {
                    let _ = shared.inbox.send(item).await;
                });
            }
        }
    }

    /// `poll_recv` found no runtime: the inline POSTs cannot be polled
    /// there (their timers need one), so they go on on tasks of their own.
    fn move_inline_to_tasks(&mut self) {
        let Some(rt) = self.runtime.clone() else {
            return;
        };
        for (request, fut) in self.inline.take_all() {
            let shared = Arc::clone(&self.shared);
            let _ = self.spawn(
                &rt,
                Some(request),
                false,
                Box::pin(async move {
                    if let Some(item) = fut.await {
                        let _ = shared.push(item).await;
                    }
                }),
            );
        }
    }

    fn deliver(&mut self, item: Item) -> Poll<Option<Item>> {
        if let Err(e) = &item
            && e.is_terminal()
        {
            self.done = true;
        }
        Poll::Ready(Some(item))
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

/// The span the client hands a request over in, when a subscriber records
/// it (one atomic load when no subscriber was ever set).
fn request_span() -> Option<tracing::Span> {
    if !tracing::dispatcher::has_been_set() {
        return None;
    }
    Some(tracing::Span::current()).filter(|s| !s.is_disabled())
}

fn cancelled_request_id(params: Option<&RawJson>) -> Option<RequestId> {
    let v: serde_json::Value = params?.decode().ok()?;
    serde_json::from_value(v.get("requestId")?.clone()).ok()
}

impl Transport for HttpTransport {
    /// `tcp`, `http`, and the configured URL's host and port (the
    /// scheme's default when it names none).
    fn endpoint(&self) -> mcp_proto::transport::Endpoint {
        let url = &self.shared.cfg.url;
        let port = url
            .port_u16()
            .unwrap_or(if url.scheme_str() == Some("https") {
                443
            } else {
                80
            });
        let host = url
            .host()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        mcp_proto::transport::Endpoint::tcp(host, port).with_protocol("http")
    }

    fn poll_recv(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let this = &mut *self;
        this.inline.set_waker(cx.waker());
        if this.shared.loss_pending.load(Ordering::Acquire)
            && let Some(e) = this.shared.take_loss()
        {
            return this.deliver(Err(e));
        }
        if let Some(item) = this.finished.pop_front() {
            return this.deliver(item);
        }
        // The transport holds a sender, so the channel never ends.
        if let Poll::Ready(Some(item)) = this.inbox.poll_recv(cx) {
            return this.deliver(*item);
        }
        if this.inline.is_empty() {
            return Poll::Pending;
        }
        if !in_runtime() {
            this.move_inline_to_tasks();
            return Poll::Pending;
        }
        this.inline.poll_woken(&mut this.finished);
        if !this.finished.is_empty() {
            // Straight to the caller, unless the POSTs queued messages of
            // their own (a stream's) that must come first.
            if this.inbox.is_empty() {
                if let Some(item) = this.finished.pop_front() {
                    return this.deliver(item);
                }
            } else if let Some(rt) = this.runtime.clone() {
                while let Some(item) = this.finished.pop_front() {
                    this.hand_over(&rt, item);
                }
            }
        }
        // What the inline POSTs queued while they were polled.
        match this.inbox.poll_recv(cx) {
            Poll::Ready(Some(item)) => this.deliver(*item),
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }

    /// Ready unless [`max_unanswered_posts`](HttpTransportBuilder::max_unanswered_posts)
    /// notification and response POSTs wait for the server's answer.
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.done || self.closing.is_some() {
            return Poll::Ready(Err(TransportError::new(
                TransportErrorKind::Closed,
                "the HTTP transport is closed",
            )));
        }
        let mut t = lock(&self.shared.tasks);
        if t.posts >= self.shared.cfg.max_unanswered_posts {
            t.room = Some(cx.waker().clone());
            return Poll::Pending;
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

    /// A request is on its way as soon as `start_send` returns (its POST
    /// runs on its own; a failure comes back through `poll_recv`, scoped to
    /// it). A notification or a response is flushed when the server has
    /// answered its POST (202), and, right after `notifications/initialized`
    /// with the [standalone stream](HttpTransportBuilder::standalone_stream),
    /// the `GET`: what later messages wait for anyway, at most 5 s each.
    /// So the client's handshake ends when the server has the session's
    /// `initialized`.
    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        if let Some(wait) = self.flush_wait.as_mut() {
            std::task::ready!(wait.as_mut().poll(cx));
            self.flush_wait = None;
        }
        Poll::Ready(Ok(()))
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        if self.closing.is_none() {
            let shared = Arc::clone(&self.shared);
            // Notifications and responses accepted before the close go out
            // before the `DELETE` (they are not aborted mid-POST); requests
            // in flight are abandoned. All within `CLOSE_TIMEOUT`.
            let sent = self.order_barrier.clone();
            self.closing = Some(Box::pin(async move {
                let close = async {
                    if let Some(mut sent) = sent {
                        let _ = sent.wait_for(|done| *done).await;
                    }
                    close_session(&shared).await;
                };
                if tokio::time::timeout(CLOSE_TIMEOUT, close).await.is_err() {
                    tracing::debug!("closing timed out");
                }
            }));
        }
        if let Some(fut) = self.closing.as_mut()
            && fut.as_mut().poll(cx).is_pending()
        {
            return Poll::Pending;
        }
        // Closing again is `Ok` at once: the finished future is not polled again.
        self.closing = Some(Box::pin(std::future::ready(())));
        drop(self.inline.take_all());
        self.abort_all();
        self.done = true;
        Poll::Ready(Ok(()))
    }

    /// Kept for the request's POST: a `429`/`503` it gets is retried only
    /// if the server's `Retry-After` ends before this time.
    fn set_request_deadline(mut self: Pin<&mut Self>, id: &RequestId, deadline: Instant) {
        self.next_deadline = Some((id.clone(), deadline));
    }

    fn set_protocol_version(self: Pin<&mut Self>, version: ProtocolVersion) {
        let mut s = lock(&self.shared.state);
        s.version = Some(version);
        s.post_headers = None;
    }
}

/// Whether a tokio runtime is current. Inside a task (the driver's, a
/// caller's) that is one thread-local read; `Handle::try_current` also
/// clones the handle.
fn in_runtime() -> bool {
    tokio::task::try_id().is_some() || Handle::try_current().is_ok()
}

fn no_runtime() -> TransportError {
    TransportError::new(
        TransportErrorKind::Other,
        "HttpTransport must be used inside a tokio runtime",
    )
}

/// Waits (at most [`ORDER_WAIT`]) until an earlier POST was answered.
async fn wait_for_order(mut w: watch::Receiver<bool>) {
    let _ = tokio::time::timeout(ORDER_WAIT, w.wait_for(|d| *d)).await;
}

/// A POST on its own task: after the earlier POST it must follow (`wait`),
/// its outcome into the inbox, then `done` tells the next one it may go.
///
/// A function returning a block, not an `async fn`: an `async fn` keeps a
/// second copy of each argument (its body's own binding), and `post` is a
/// third of a POST's future.
#[allow(
    clippy::manual_async_fn,
    reason = "an `async fn` keeps a second copy of each argument in its future"
)]
fn posted(
    wait: Option<watch::Receiver<bool>>,
    mut post: Post,
    shared: Arc<Shared>,
    done: Option<watch::Sender<bool>>,
) -> impl Future<Output = ()> + Send {
    async move {
        if let Some(w) = wait {
            wait_for_order(w).await;
        }
        if let Some(item) = post.run(&shared).await {
            // Gone: the transport was dropped; nothing left to do.
            let _ = shared.push(item).await;
        }
        if let Some(done) = done {
            let _ = done.send(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::header::CONTENT_LENGTH;
    use http::{HeaderMap, Method, Uri};

    #[test]
    fn cancelled_id_parsing() {
        let p = RawJson::from_string(r#"{"requestId":7,"reason":"x"}"#.into()).unwrap();
        assert_eq!(cancelled_request_id(Some(&p)), Some(RequestId::Number(7)));
        let p = RawJson::from_string(r#"{"requestId":"a"}"#.into()).unwrap();
        assert_eq!(cancelled_request_id(Some(&p)), Some("a".into()));
        assert_eq!(cancelled_request_id(None), None);
    }

    /// A POST's future is what each request in flight holds, and what is
    /// copied into its box when it starts. In a debug build it was 3,520
    /// bytes while the exchange kept a second copy of its arguments and of
    /// the `Post`, and the built request across the wait for the answer.
    #[test]
    fn a_post_future_stays_small() {
        const LIMIT: usize = 2_600;
        let t = HttpTransport::new("http://127.0.0.1:1/mcp").unwrap();
        let msg: Message = mcp_proto::jsonrpc::Request::new(1.into(), "ping", None).into();
        let post = Post::new(&t.shared, msg, Some("ping".into()), false, None);
        let fut = posted(None, post, Arc::clone(&t.shared), None);
        let size = std::mem::size_of_val(&fut);
        assert!(size <= LIMIT, "{size} bytes, over {LIMIT}");
    }

    /// A POST carries its body's length, set in the seat its headers have
    /// for it: the map's entries stay where they are (a header added to a
    /// cloned map moves them all), and hyper, finding the header, adds none.
    #[test]
    fn a_post_sets_its_length_in_place() {
        let t = HttpTransport::new("http://127.0.0.1:1/mcp").unwrap();
        let headers = {
            let mut s = lock(&t.shared.state);
            s.version = Some(ProtocolVersion::V2025_11_25);
            s.set_session(Some(HeaderValue::from_static("session-1")));
            s.post_headers(&t.shared.cfg).clone()
        };
        let first = |h: &HeaderMap| std::ptr::from_ref(h.iter().next().unwrap().1) as usize;
        let before = first(&headers);
        let url: Uri = "http://127.0.0.1:1/mcp".parse().unwrap();
        let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let req = t.shared.request(&Method::POST, &url, headers, None, body);
        assert_eq!(req.headers()[CONTENT_LENGTH], "40");
        assert_eq!(req.headers().get_all(CONTENT_LENGTH).iter().count(), 1);
        assert_eq!(first(req.headers()), before, "the entries moved");
    }
}
