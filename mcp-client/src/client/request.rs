//! [`RequestBuilder`] (per-call options, params encoded at send time) and
//! the [`ResponseFuture`] it sends, which decodes the result and cancels the
//! request when dropped.

use std::borrow::Cow;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_proto::schema::{JsonObject, META_PROGRESS_TOKEN, ProgressParams};
use mcp_proto::{RawJson, RequestId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::oneshot;

use super::{Client, Command, ProgressFn, Shared, decode};
use crate::error::ClientError;
use crate::session::{CallId, CallOptions, Embedded, progress_token};

/// One request, being configured: chain the options, then `.await` it
/// (it is an [`IntoFuture`]) or [`send`](RequestBuilder::send) it for a
/// future you can [`cancel`](ResponseFuture::cancel) with a reason.
///
/// ```no_run
/// # async fn f(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
/// use std::time::Duration;
/// use serde_json::json;
///
/// let result = client.call_tool("echo", json!({"message": "hi"})).await?;
/// let slow = client
///     .call_tool("train", json!({"epochs": 3}))
///     .timeout(Duration::from_secs(10))
///     .on_progress(|p| eprintln!("{}/{:?}", p.progress, p.total))
///     .meta("example.com/trace", json!("abc"))
///     .await?;
/// # let _ = (result, slow); Ok(()) }
/// ```
///
/// Dropping the future before it completes cancels the request on the
/// server.
#[must_use = "a request does nothing until awaited or sent"]
pub struct RequestBuilder<'a, R = RawJson> {
    pub(super) client: &'a Client,
    pub(super) method: Cow<'static, str>,
    pub(super) params: Params<'a>,
    pub(super) options: CallOptions,
    pub(super) progress: Option<ProgressFn>,
    pub(super) meta: Option<JsonObject>,
    pub(super) decode: DecodeFn<R>,
}

/// Turns the raw result into the method's result type.
pub(super) type DecodeFn<R> = fn(&str, RawJson) -> Result<R, ClientError>;

pub(super) fn decode_typed<R: DeserializeOwned>(
    method: &str,
    raw: RawJson,
) -> Result<R, ClientError> {
    decode(method, &raw)
}

/// `tools/call`'s decoder: [`CallToolResult::from_raw`](mcp_proto::schema::CallToolResult::from_raw),
/// the derived decoder's result with a fast path for text results (whose
/// text takes the received line's buffer).
#[inline]
pub(super) fn decode_tool_result(
    method: &str,
    raw: RawJson,
) -> Result<mcp_proto::schema::CallToolResult, ClientError> {
    mcp_proto::schema::CallToolResult::from_raw(raw).map_err(|e| ClientError::Decode {
        method: method.to_owned(),
        source: e.into(),
    })
}

pub(super) fn keep_raw(_: &str, raw: RawJson) -> Result<RawJson, ClientError> {
    Ok(raw)
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
    user: Option<&'a JsonObject>,
    members: Option<&'a JsonObject>,
    /// `members` already encoded as one object.
    members_encoded: Option<&'a serde_json::value::RawValue>,
    progress_token: Option<RequestId>,
}

impl MetaSpec<'_> {
    pub(super) fn is_empty(&self) -> bool {
        self.user.is_none() && self.members.is_none() && self.progress_token.is_none()
    }
}

impl Serialize for MetaSpec<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if let (None, None, Some(encoded)) = (self.user, &self.progress_token, self.members_encoded)
        {
            // Only the protocol's members: the object encoded at negotiation,
            // the same bytes the map below writes.
            return encoded.serialize(s);
        }
        let mut m = s.serialize_map(None)?;
        if let Some(user) = self.user {
            // The protocol's own members win over the caller's.
            let taken = |k: &str| {
                self.members.is_some_and(|m| m.contains_key(k))
                    || (self.progress_token.is_some() && k == META_PROGRESS_TOKEN)
            };
            for (k, v) in user.iter().filter(|(k, _)| !taken(k)) {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some(members) = self.members {
            for (k, v) in members {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some(t) = &self.progress_token {
            m.serialize_entry(META_PROGRESS_TOKEN, t)?;
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

/// The buffer for a call's params, given the last call's size: that size
/// and a little headroom (3 % and 8 bytes), so equal sizes never regrow and
/// a larger one grows once and sets the next hint. Tight on purpose: a
/// small call's buffer (a 64-byte argument: ~103 bytes, capacity 114)
/// stays in glibc's fast bins (requests up to 120 bytes), which serve 32
/// calls in flight faster than its small bins; the old `9/8 + 64` asked
/// for 179 (BENCHMARKS.md, round eight).
fn params_capacity(last: usize) -> usize {
    last.saturating_add(last / 32).saturating_add(8)
}

pub(super) fn encode_error(method: &str, e: serde_json::Error) -> ClientError {
    ClientError::Encode {
        method: method.to_owned(),
        source: e.into(),
    }
}

/// Adds the caller's `_meta` members to already-encoded params (the
/// request_raw path; typed calls write them while encoding).
fn merge_user_meta(
    method: &str,
    params: Option<RawJson>,
    user: JsonObject,
) -> Result<Option<RawJson>, ClientError> {
    let mut obj: JsonObject = match &params {
        Some(p) => p.decode().map_err(|e| encode_error(method, e))?,
        None => JsonObject::new(),
    };
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
    if let serde_json::Value::Object(m) = meta {
        for (k, v) in user {
            m.entry(k).or_insert(v);
        }
    }
    RawJson::from_value(&obj)
        .map(Some)
        .map_err(|e| encode_error(method, e))
}

impl<R> std::fmt::Debug for RequestBuilder<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("method", &self.method)
            .field("options", &self.options)
            .finish()
    }
}

impl<'a, R> RequestBuilder<'a, R> {
    pub(super) fn new(
        client: &'a Client,
        method: Cow<'static, str>,
        params: Params<'a>,
        decode: DecodeFn<R>,
    ) -> Self {
        RequestBuilder {
            client,
            method,
            params,
            options: CallOptions::default(),
            progress: None,
            meta: None,
            decode,
        }
    }

    /// Timeout for this call, reset by progress (default: the client's
    /// [`request_timeout`](crate::ClientBuilder::request_timeout)).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.options = self.options.timeout(t);
        self
    }

    /// Cap on this call's total time however much progress it reports
    /// (default: [`max_request_time`](crate::ClientBuilder::max_request_time)).
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
    /// callback of its own: they reach [`ClientHandler::on_progress`](crate::ClientHandler::on_progress).
    /// Off by default, as in the spec and the other SDKs: a progress token
    /// invites the server to send notifications, which cost both sides
    /// (about 2.5% of a small sequential call here). Ask for it for calls
    /// that may run long: a server that reports progress then keeps them
    /// alive past the timeout (up to the max time).
    pub fn progress(mut self, on: bool) -> Self {
        self.options = self.options.progress(on);
        self
    }

    /// Calls `f` for each progress notification of this call (and asks for
    /// them, as [`progress`](Self::progress)).
    pub fn on_progress(mut self, f: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        self.options = self.options.progress(true);
        self.progress = Some(Arc::new(f));
        self
    }

    /// Adds a member to the request's `_meta` (the protocol's own members,
    /// such as `progressToken`, win over one of the same name).
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.meta
            .get_or_insert_with(JsonObject::new)
            .insert(key.into(), value.into());
        self
    }

    /// Sends the request now. The returned future resolves to the result;
    /// dropping it, or [`ResponseFuture::cancel`], cancels the request.
    pub fn send(self) -> ResponseFuture<R> {
        let (tx, rx) = oneshot::channel();
        let call = self.client.next_call();
        let method = self.method;
        let encoded = match self.params {
            Params::Raw(p) => match self.meta {
                None => Ok((p, Embedded::default())),
                Some(user) => merge_user_meta(&method, p, user).map(|p| (p, Embedded::default())),
            },
            Params::Failed(e) => Err(e),
            Params::Lazy(encode) => {
                let template = self.client.shared.meta_template();
                let spec = MetaSpec {
                    user: self.meta.as_ref(),
                    members: template.as_deref().map(|t| &t.members),
                    members_encoded: template.as_deref().map(|t| &*t.encoded),
                    progress_token: self.options.progress.then(|| progress_token(call)),
                };
                let embedded = Embedded::new(
                    template.as_deref().map(|t| t.version),
                    self.options.progress,
                );
                let hint = &self.client.shared.params_size_hint;
                encode(&spec, params_capacity(hint.load(Ordering::Relaxed)))
                    .map(|p| {
                        hint.store(p.len(), Ordering::Relaxed);
                        (Some(p), embedded)
                    })
                    .map_err(|e| encode_error(&method, e))
            }
        };
        let sent = encoded.and_then(|(params, embedded)| {
            self.client.submit(Command::Request {
                call,
                method: method.clone(),
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
            method,
            decode: self.decode,
            guard: CancelGuard {
                shared: self.client.shared.clone(),
                call,
                armed: true,
            },
        }
    }
}

impl<R> IntoFuture for RequestBuilder<'_, R> {
    type Output = Result<R, ClientError>;
    type IntoFuture = ResponseFuture<R>;
    fn into_future(self) -> ResponseFuture<R> {
        self.send()
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
            let _ = self
                .shared
                .commands
                .send(Box::new(Command::Cancel(self.call, None)));
        }
    }
}

/// The pending result of a request. Dropping it cancels the request.
#[must_use = "dropping the future cancels the request"]
pub struct ResponseFuture<R = RawJson> {
    rx: oneshot::Receiver<Result<RawJson, ClientError>>,
    early: Option<ClientError>,
    method: Cow<'static, str>,
    decode: DecodeFn<R>,
    guard: CancelGuard,
}

impl<R> std::fmt::Debug for ResponseFuture<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("call", &self.guard.call)
            .finish()
    }
}

impl<R> ResponseFuture<R> {
    /// Cancels the request with a reason the server may log (the spec's
    /// `notifications/cancelled` `reason`). Dropping the future cancels too,
    /// with a generic reason.
    pub fn cancel(mut self, reason: &str) {
        if self.guard.armed {
            self.guard.armed = false;
            let _ = self.guard.shared.commands.send(Box::new(Command::Cancel(
                self.guard.call,
                Some(reason.to_owned()),
            )));
        }
    }

    pub(super) fn failed(
        client: &Client,
        method: &'static str,
        decode: DecodeFn<R>,
        err: ClientError,
    ) -> Self {
        let (_tx, rx) = oneshot::channel();
        ResponseFuture {
            rx,
            early: Some(err),
            method: Cow::Borrowed(method),
            decode,
            guard: CancelGuard {
                shared: client.shared.clone(),
                call: CallId(0),
                armed: false,
            },
        }
    }
}

impl<R> Future for ResponseFuture<R> {
    type Output = Result<R, ClientError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(e) = self.early.take() {
            self.guard.armed = false;
            return Poll::Ready(Err(e));
        }
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(r) => {
                self.guard.armed = false;
                match r {
                    Ok(Ok(raw)) => Poll::Ready((self.decode)(&self.method, raw)),
                    Ok(Err(e)) => Poll::Ready(Err(e)),
                    Err(_) => Poll::Ready(Err(self.guard.shared.closed_error())),
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A call's params fit the buffer sized from an equal call, and a
    /// small call's buffer stays a fast-bin size (at most 120 bytes).
    #[test]
    fn params_capacity_fits_equal_sizes_and_stays_small_for_small_calls() {
        for last in [0, 1, 103, 4096, 1 << 20] {
            assert!(params_capacity(last) >= last, "{last}");
        }
        assert!(params_capacity(103) <= 120, "{}", params_capacity(103));
        assert!(params_capacity(1 << 20) <= (1 << 20) + (1 << 20) / 16);
    }

    /// The pre-encoded `_meta` is written only when nothing else goes into
    /// `_meta`, and then as the same bytes the member-by-member path writes.
    #[test]
    fn encoded_meta_members_write_the_same_bytes() {
        let members: JsonObject = serde_json::from_value(serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1\"é"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}, "x": [1, 2.5, null]},
        }))
        .unwrap();
        let encoded = serde_json::value::to_raw_value(&members).unwrap();
        let user: JsonObject = serde_json::from_value(serde_json::json!({"trace": "t"})).unwrap();
        for (user, token) in [
            (None, None),
            (Some(&user), None),
            (None, Some(RequestId::Number(7))),
            (Some(&user), Some(RequestId::Number(7))),
        ] {
            let spec = |encoded| MetaSpec {
                user,
                members: Some(&members),
                members_encoded: encoded,
                progress_token: token.clone(),
            };
            assert_eq!(
                serde_json::to_string(&spec(Some(&*encoded))).unwrap(),
                serde_json::to_string(&spec(None)).unwrap(),
                "user {user:?}, token {token:?}"
            );
        }
    }
}
