//! [`RequestBuilder`] (per-call options, params encoded at send time) and
//! the [`ResponseFuture`] it sends, which cancels the request when dropped.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_proto::schema::{JsonObject, ProgressParams};
use mcp_proto::{RawJson, RequestId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::oneshot;

use super::{Client, Command, ProgressFn, Shared, decode};
use crate::error::ClientError;
use crate::session::{CallId, CallOptions, Embedded, progress_token};

/// A request being configured. Send it with [`send`](RequestBuilder::send)
/// (raw result) or [`send_typed`](RequestBuilder::send_typed).
///
/// Dropping the returned future before it completes cancels the request on
/// the server.
#[must_use = "a request does nothing until sent"]
pub struct RequestBuilder<'a> {
    pub(super) client: &'a Client,
    pub(super) method: Cow<'static, str>,
    pub(super) params: Params<'a>,
    pub(super) options: CallOptions,
    pub(super) progress: Option<ProgressFn>,
}

pub(super) type LazyParams<'a> =
    Box<dyn FnOnce(&MetaSpec<'_>, usize) -> serde_json::Result<RawJson> + Send + 'a>;

/// Request params, before they are sent.
pub(super) enum Params<'a> {
    /// Already encoded (the caller's `_meta`, if any, is inside).
    Raw(Option<RawJson>),
    /// Encoded at send time, with the `_meta` the request needs written in
    /// the same pass (no splice, no second copy of large arguments). Only for
    /// params types that have no `_meta` of their own.
    Lazy(LazyParams<'a>),
    Failed(ClientError),
}

/// What goes into `_meta` when lazy params are encoded.
pub(super) struct MetaSpec<'a> {
    members: Option<&'a JsonObject>,
    progress_token: Option<RequestId>,
}

impl MetaSpec<'_> {
    pub(super) fn is_empty(&self) -> bool {
        self.members.is_none() && self.progress_token.is_none()
    }
}

impl Serialize for MetaSpec<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if let Some(members) = self.members {
            for (k, v) in members {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some(t) = &self.progress_token {
            m.serialize_entry(mcp_proto::schema::META_PROGRESS_TOKEN, t)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
pub(super) struct WithMeta<'a, P: ?Sized> {
    #[serde(rename = "_meta")]
    pub(super) meta: &'a MetaSpec<'a>,
    #[serde(flatten)]
    pub(super) params: &'a P,
}

pub(super) fn encode_error(e: &serde_json::Error) -> ClientError {
    ClientError::Decode {
        method: "request params".into(),
        message: e.to_string(),
    }
}

impl std::fmt::Debug for RequestBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("method", &self.method)
            .field("options", &self.options)
            .finish()
    }
}

impl RequestBuilder<'_> {
    /// Timeout for this call, reset by progress.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.options = self.options.timeout(t);
        self
    }

    /// Cap on this call's total time.
    pub fn max_time(mut self, t: Duration) -> Self {
        self.options = self.options.max_time(t);
        self
    }

    /// Never time out (long-lived requests such as `subscriptions/listen`).
    pub fn no_timeout(mut self) -> Self {
        self.options = self.options.no_timeout();
        self
    }

    /// Ask for progress notifications (they reset the timeout) without a
    /// callback. Off by default, as in the spec and the other SDKs: a
    /// progress token invites the server to send notifications, which cost
    /// both sides (about 2.5% of a small sequential call here). Ask for it
    /// for calls that may run long: a server that reports progress then
    /// keeps them alive past the timeout (up to the max time).
    pub fn progress(mut self, on: bool) -> Self {
        self.options = self.options.progress(on);
        self
    }

    /// Calls `f` for each progress notification of this call.
    pub fn on_progress(mut self, f: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        self.options = self.options.progress(true);
        self.progress = Some(Arc::new(f));
        self
    }

    /// Sends the request; resolves to the raw result.
    pub fn send(self) -> ResponseFuture {
        let (tx, rx) = oneshot::channel();
        let call = self.client.next_call();
        let encoded = match self.params {
            Params::Raw(p) => Ok((p, Embedded::default())),
            Params::Failed(e) => Err(e),
            Params::Lazy(encode) => {
                let template = self.client.shared.meta_template();
                let members = template.as_deref().map(|(_, m)| m);
                let spec = MetaSpec {
                    members,
                    progress_token: self.options.progress.then(|| progress_token(call)),
                };
                let embedded =
                    Embedded::new(template.as_deref().map(|(v, _)| *v), self.options.progress);
                let hint = &self.client.shared.params_size_hint;
                // A little headroom over the last size: equal sizes never regrow.
                let capacity = hint.load(Ordering::Relaxed).saturating_mul(9) / 8 + 64;
                encode(&spec, capacity)
                    .map(|p| {
                        hint.store(p.len(), Ordering::Relaxed);
                        (Some(p), embedded)
                    })
                    .map_err(|e| encode_error(&e))
            }
        };
        let sent = encoded.and_then(|(params, embedded)| {
            self.client.submit(Command::Request {
                call,
                method: self.method,
                params,
                embedded,
                options: self.options,
                progress: self.progress,
                reply: tx,
            })
        });
        ResponseFuture {
            rx,
            early: sent.err(),
            guard: CancelGuard {
                shared: self.client.shared.clone(),
                call,
                armed: true,
            },
        }
    }

    /// Sends the request and decodes the result.
    pub async fn send_typed<R: DeserializeOwned>(self) -> Result<R, ClientError> {
        let method = self.method.clone();
        let raw = self.send().await?;
        decode(&method, &raw)
    }
}

struct CancelGuard {
    shared: Arc<Shared>,
    call: CallId,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.shared.commands.send(Command::Cancel(self.call, None));
        }
    }
}

/// The pending result of a request. Dropping it cancels the request.
#[must_use = "dropping the future cancels the request"]
pub struct ResponseFuture {
    rx: oneshot::Receiver<Result<RawJson, ClientError>>,
    early: Option<ClientError>,
    guard: CancelGuard,
}

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("call", &self.guard.call)
            .finish()
    }
}

impl ResponseFuture {
    /// Cancels the request with a reason the server may log (the spec's
    /// `notifications/cancelled` `reason`). Dropping the future cancels too,
    /// with a generic reason.
    pub fn cancel(mut self, reason: &str) {
        if self.guard.armed {
            self.guard.armed = false;
            let _ = self
                .guard
                .shared
                .commands
                .send(Command::Cancel(self.guard.call, Some(reason.to_owned())));
        }
    }

    pub(super) fn failed(client: &Client, err: ClientError) -> Self {
        let (_tx, rx) = oneshot::channel();
        ResponseFuture {
            rx,
            early: Some(err),
            guard: CancelGuard {
                shared: client.shared.clone(),
                call: CallId(0),
                armed: false,
            },
        }
    }
}

impl Future for ResponseFuture {
    type Output = Result<RawJson, ClientError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(e) = self.early.take() {
            self.guard.armed = false;
            return Poll::Ready(Err(e));
        }
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(r) => {
                self.guard.armed = false;
                Poll::Ready(r.unwrap_or_else(|_| Err(self.guard.shared.closed_error())))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
