//! The [`Transport`] implementation: one tokio task per POST over a shared
//! pooled client, every received message funnelled into one queue.
//!
//! - this module: the transport, its shared state and task registry;
//! - [`post`]: one outgoing message and what to do with its answer;
//! - [`exchange`]: one HTTP exchange (auth, redirects, timeout) and helpers;
//! - [`sse_read`]: reading one SSE stream with backpressure;
//! - [`get`]: `GET` streams (resumption, standalone stream) and backoff;
//! - [`legacy_sse`]: the 2024-11-05 HTTP+SSE fallback.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{IdHash, Message, RequestId};
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind};
use mcp_proto::version::{Era, Feature, ProtocolVersion};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::client::{BoxFuture, CLOSE_TIMEOUT, Config, HttpTransportBuilder};
use crate::error::HttpError;
use crate::headers::ParamHeader;

mod exchange;
mod get;
mod legacy_sse;
mod post;
mod sse_read;

use self::get::standalone_stream;
use self::post::Post;

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
        self.abort_all();
        self.done = true;
        Poll::Ready(Ok(()))
    }

    fn set_protocol_version(self: Pin<&mut Self>, version: ProtocolVersion) {
        lock(&self.shared.state).version = Some(version);
    }
}

/// `DELETE` the session (legacy era).
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
    match req.await {
        Ok(resp) => tracing::debug!(status = %resp.status(), "session DELETE answered"),
        Err(e) => tracing::debug!(error = %e, "session DELETE failed"),
    }
}

impl Shared {
    /// Delivers one item to `poll_recv`, waiting while the inbox is full:
    /// this wait is the backpressure (the caller reads nothing meanwhile).
    async fn push(&self, item: Item) -> Result<(), Gone> {
        self.inbox.send(item).await.map_err(|_| Gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelled_id_parsing() {
        let p = RawJson::from_string(r#"{"requestId":7,"reason":"x"}"#.into()).unwrap();
        assert_eq!(cancelled_request_id(Some(&p)), Some(RequestId::Number(7)));
        let p = RawJson::from_string(r#"{"requestId":"a"}"#.into()).unwrap();
        assert_eq!(cancelled_request_id(Some(&p)), Some("a".into()));
        assert_eq!(cancelled_request_id(None), None);
    }
}
