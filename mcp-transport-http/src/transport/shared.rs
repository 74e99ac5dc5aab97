//! The state every task of one transport shares: the session (its id,
//! version and the headers built from them), the registry of running
//! tasks, and the inbox all received messages funnel into.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, Uri};
use mcp_proto::jsonrpc::{IdHash, RequestId};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::version::{Era, Feature, ProtocolVersion};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::AbortHandle;

use super::{ACCEPT_BOTH, Item, PROTOCOL_VERSION, SESSION_ID};
use crate::client::Config;
use crate::error::HttpError;
use crate::headers::ParamHeader;

pub(crate) struct Shared {
    /// Shared with the transports made by [`HttpTransport::new_session`](super::HttpTransport::new_session).
    pub(super) cfg: Arc<Config>,
    pub(super) state: Mutex<State>,
    pub(super) tasks: Mutex<Tasks>,
    /// Bounded ([`Config::max_buffered_messages`]): a task that finds it
    /// full waits, and stops reading its body meanwhile.
    pub(super) inbox: mpsc::Sender<Box<Item>>,
    /// `State::loss_to_deliver` is set: checked by every `poll_recv`
    /// without taking the lock.
    pub(super) loss_pending: AtomicBool,
}

/// The receiving half of the inbox is gone (the transport was dropped):
/// the task that tried to deliver should end.
#[derive(Debug)]
pub(super) struct Gone;

#[derive(Default)]
pub(super) struct State {
    pub(super) version: Option<ProtocolVersion>,
    pub(super) session_id: Option<HeaderValue>,
    /// The headers every POST after the handshake starts with (content
    /// type, accept, version, session id), built once per version and
    /// session and cloned per POST; `None`: to be built.
    pub(super) post_headers: Option<HeaderMap>,
    pub(super) tool_headers: HashMap<String, Vec<ParamHeader>>,
    /// Set once the 2024-11-05 HTTP+SSE fallback found its POST endpoint.
    pub(super) sse_endpoint: Option<Uri>,
    pub(super) standalone_started: bool,
    /// The session the server no longer knows (it answered 404 to a message
    /// of it), until the client sends `initialize` for a new one: nothing
    /// else is sent meanwhile (see [`Shared::lose_session`]).
    pub(super) lost_session: Option<HeaderValue>,
    /// The loss not yet delivered because the inbox was full when it was
    /// found; `poll_recv` delivers it before anything else.
    pub(super) loss_to_deliver: Option<TransportError>,
}

#[derive(Default)]
pub(super) struct Tasks {
    pub(super) next: u64,
    pub(super) all: HashMap<u64, AbortHandle, IdHash>,
    pub(super) by_request: HashMap<RequestId, u64, IdHash>,
    pub(super) closed: bool,
    /// Notification and response POSTs not yet answered: at most
    /// [`Config::max_unanswered_posts`] before `poll_ready` is pending.
    pub(super) posts: usize,
    /// `poll_ready`'s waker while it waits for `posts` to drop.
    pub(super) room: Option<std::task::Waker>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave these maps inconsistent
    // in a way that matters; keep going.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Most of a `DELETE` answer's body read so that its connection can be
/// reused.
const DELETE_BODY_LIMIT: usize = 64 * 1024;

/// `DELETE` the session (legacy era).
pub(super) async fn close_session(shared: &Shared) {
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
    let req = shared.exchange(Method::DELETE, &shared.cfg.url, &headers, Bytes::new());
    match req.await {
        Ok(resp) => {
            tracing::debug!(status = %resp.status(), "session DELETE answered");
            // Read the answer's body (a few bytes, if any) to its end, so
            // its connection goes back to the pool: other sessions may
            // share it (`new_session`). A body larger than this closes the
            // connection instead; all of it within `CLOSE_TIMEOUT`.
            let body = http_body_util::Limited::new(resp.into_body(), DELETE_BODY_LIMIT);
            let _ = http_body_util::BodyExt::collect(body).await;
        }
        Err(e) => tracing::debug!(error = %mcp_proto::error::chain(&e), "session DELETE failed"),
    }
}

impl State {
    /// Sets (or forgets) the session id.
    pub(super) fn set_session(&mut self, id: Option<HeaderValue>) {
        self.session_id = id;
        self.post_headers = None;
    }

    /// The headers every POST after the handshake starts with.
    pub(super) fn post_headers(&mut self, cfg: &Config) -> &HeaderMap {
        if self.post_headers.is_none() {
            let mut h = self.base_headers();
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(ACCEPT, ACCEPT_BOTH);
            // HTTP/1.1's `Host`, which the pool would otherwise add to each
            // request (growing its copy of this map). Not with HTTP/2, whose
            // `:authority` may spell the origin differently (a default port).
            if !cfg!(feature = "http2") {
                h.insert(http::header::HOST, cfg.http.host().clone());
            }
            // A seat for each POST's `Content-Length`, which
            // `Shared::request` sets. A clone of this map has no spare room:
            // the first header added to it (hyper adds this one otherwise)
            // moves its entries into a block twice the size, for the legacy
            // era's six entries a block over glibc's cache limit, ~650
            // instructions a request. A 2026-07-28 POST adds `Mcp-*`
            // headers anyway; without the seat its map grows once, from
            // four entries to a block the cache serves.
            if self.version.is_none_or(|v| v.era() != Era::Modern) {
                h.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
            }
            self.post_headers = Some(h);
        }
        self.post_headers.get_or_insert_default()
    }

    /// Headers common to every request after the handshake (legacy: session
    /// id and version; modern: version).
    pub(super) fn base_headers(&self) -> HeaderMap {
        // Room for these and the per-request headers the caller adds.
        let mut h = HeaderMap::with_capacity(8);
        if let Some(v) = self.version {
            if v.has(Feature::ProtocolVersionHeader) {
                h.insert(PROTOCOL_VERSION, HeaderValue::from_static(v.as_str()));
            }
            if v.has(Feature::HttpSession)
                && let Some(id) = &self.session_id
            {
                h.insert(SESSION_ID, id.clone());
            }
        }
        h
    }
}

impl Shared {
    /// The server answered 404 to a message that carried the session id
    /// `sent`: it no longer knows that session. If it is still the current
    /// one, it is forgotten and the loss is reported once, not scoped to a
    /// request ([`SessionExpired`](TransportErrorKind::SessionExpired)), so
    /// the client starts a new session; until the client sends
    /// `initialize`, nothing else is sent (the spec: "MUST start a new
    /// session", before anything else). The report goes into the inbox
    /// before any error scoped to a request of the lost session: those are
    /// made after this returns (a later 404 finds the session already
    /// forgotten), and queue behind it. Returns the error for the message
    /// that found the loss.
    pub(super) fn lose_session(&self, sent: &HeaderValue) -> HttpError {
        let lost = || HttpError::SessionExpired {
            session: sent.to_str().unwrap_or("").to_owned(),
        };
        let mut s = lock(&self.state);
        if s.session_id.as_ref() == Some(sent) {
            tracing::info!(
                "the server no longer knows the session (HTTP 404); a new one must start"
            );
            s.set_session(None);
            s.standalone_started = false;
            s.lost_session = Some(sent.clone());
            let report = TransportError::new(TransportErrorKind::SessionExpired, lost());
            // Under the lock: whatever sees the session forgotten queues
            // behind this.
            if let Err(e) = self.inbox.try_send(Box::new(Err(report))) {
                if let TrySendError::Full(item) = e
                    && let Err(report) = *item
                {
                    s.loss_to_deliver = Some(report);
                    self.loss_pending.store(true, Ordering::Release);
                }
            }
        }
        lost()
    }

    /// The loss `lose_session` could not queue, to deliver first.
    pub(super) fn take_loss(&self) -> Option<TransportError> {
        let mut s = lock(&self.state);
        self.loss_pending.store(false, Ordering::Release);
        s.loss_to_deliver.take()
    }

    /// Delivers one item to `poll_recv`, waiting while the inbox is full:
    /// this wait is the backpressure (the caller reads nothing meanwhile).
    pub(super) async fn push(&self, item: Item) -> Result<(), Gone> {
        self.inbox.send(Box::new(item)).await.map_err(|_| Gone)
    }
}
