//! [`RequestBuilder`] (per-call options, params encoded at send time) and
//! the [`ResponseFuture`] it sends, which waits for room under the
//! in-flight limit, decodes the result, and cancels the request when dropped.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use mcp_proto::RawJson;
use mcp_proto::schema::{JsonObject, ProgressParams};
use serde::de::DeserializeOwned;
use tokio::sync::{AcquireError, OwnedSemaphorePermit, TryAcquireError};

use super::{Answer, Client, Inner, ProgressFn, Waiter, decode, now};
use crate::error::ClientError;
use crate::session::{CallId, CallOptions};

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
    pub(super) params: Params,
    /// Boxed, `None` while all are unset: a builder is moved by value, and
    /// nearly every call sets none of them.
    pub(super) extras: Option<Box<Extras>>,
    pub(super) decode: DecodeFn<R>,
    /// A task handle answering it is followed to the result (2026-07-28
    /// tasks extension; [`Client::call_tool`] sets it).
    pub(super) follow_task: bool,
}

/// The parts of a request that few calls set.
#[derive(Default)]
pub(super) struct Extras {
    options: CallOptions,
    progress: Option<ProgressFn>,
    meta: Option<JsonObject>,
    span: Option<tracing::Span>,
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

/// Request params, encoded when the request is built. None of them holds
/// the protocol's `_meta`: the session composes that when the request goes
/// out.
pub(super) enum Params {
    /// Encoded (a `_meta` of the caller's own, if any, is inside).
    Raw(Option<RawJson>),
    /// `tools/call` params (`name`, `arguments`) of a tool that must run as
    /// a task (see [`Client::call_tool`]), run through a
    /// [`TaskHandle`](super::TaskHandle).
    Task(RawJson),
    /// Boxed: the builder carries it by value, and it is rare.
    Failed(Box<ClientError>),
}

/// Encodes `params` into a buffer sized from the last params this client
/// encoded (see [`params_capacity`]), and records their size for the next.
pub(super) fn encode_sized<P: serde::Serialize>(
    hint: &AtomicUsize,
    method: &str,
    params: &P,
) -> Params {
    match RawJson::from_value_with_capacity(params, params_capacity(hint.load(Ordering::Relaxed))) {
        Ok(p) => {
            hint.store(p.len(), Ordering::Relaxed);
            Params::Raw(Some(p))
        }
        Err(e) => Params::Failed(Box::new(encode_error(method, e))),
    }
}

/// The buffer for a call's params, given the last call's size: that size
/// and a little headroom (3 % and 8 bytes), so equal sizes never regrow and
/// a larger one grows once and sets the next hint. Kept tight so that a
/// small call's buffer stays within the allocator's smallest size classes.
fn params_capacity(last: usize) -> usize {
    last.saturating_add(last / 32).saturating_add(8)
}

pub(super) fn encode_error(method: &str, e: serde_json::Error) -> ClientError {
    ClientError::Encode {
        method: method.to_owned(),
        source: e.into(),
    }
}

impl<R> std::fmt::Debug for RequestBuilder<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("method", &self.method)
            .field("options", &self.options())
            .finish()
    }
}

impl<'a, R> RequestBuilder<'a, R> {
    pub(super) fn new(
        client: &'a Client,
        method: Cow<'static, str>,
        params: Params,
        decode: DecodeFn<R>,
    ) -> Self {
        RequestBuilder {
            client,
            method,
            params,
            extras: None,
            decode,
            follow_task: false,
        }
    }

    /// Timeout for this call, reset by progress (default: the client's
    /// [`request_timeout`](crate::ClientBuilder::request_timeout)).
    pub fn timeout(mut self, t: Duration) -> Self {
        let extras = self.extras();
        extras.options = extras.options.timeout(t);
        self
    }

    /// Cap on this call's total time however much progress it reports
    /// (default: [`max_request_time`](crate::ClientBuilder::max_request_time)).
    pub fn max_time(mut self, t: Duration) -> Self {
        let extras = self.extras();
        extras.options = extras.options.max_time(t);
        self
    }

    /// Never time out (long-lived requests such as `subscriptions/listen`).
    pub fn no_timeout(mut self) -> Self {
        let extras = self.extras();
        extras.options = extras.options.no_timeout();
        self
    }

    /// Ask for progress notifications (they reset the timeout) without a
    /// callback of its own: they reach [`ClientHandler::on_progress`](crate::ClientHandler::on_progress).
    /// Off by default, as in the spec and the other SDKs: a progress token
    /// invites the server to send notifications, which cost both sides.
    /// Ask for it for calls that may run long: a server that reports
    /// progress then keeps them alive past the timeout (up to the max time).
    pub fn progress(mut self, on: bool) -> Self {
        let extras = self.extras();
        extras.options = extras.options.progress(on);
        self
    }

    /// Calls `f` for each progress notification of this call (and asks for
    /// them, as [`progress`](Self::progress)). `f` runs on the connection's
    /// driver task, outside its lock: while it runs the connection is
    /// neither read nor written, so keep it short (hand slow work to a
    /// channel or task of your own; see the crate's [bounds](crate#bounds)).
    /// A panic in it is caught and logged.
    pub fn on_progress(mut self, f: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        let extras = self.extras();
        extras.options = extras.options.progress(true);
        extras.progress = Some(Arc::new(f));
        self
    }

    /// Adds a member to the request's `_meta`. The members the protocol
    /// decides (`progressToken`, and in 2026-07-28 the protocol version and
    /// the client's info, capabilities and log level) keep the protocol's
    /// value, and a `_meta` member the params carry themselves wins over one
    /// given here (see [`session`](crate::session#meta)).
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.extras()
            .meta
            .get_or_insert_with(JsonObject::new)
            .insert(key.into(), value.into());
        self
    }

    /// Records this call on `span` (an application's own span, such as an
    /// agent's `execute_tool` span) instead of a span of its own: the MCP
    /// attributes, events and outcome go to it, and its trace context to
    /// the server; its name and kind are left as they are. See
    /// [`telemetry`](crate::telemetry#an-agents-own-execute_tool-span).
    pub fn in_span(mut self, span: tracing::Span) -> Self {
        self.extras().span = Some(span);
        self
    }

    /// The rarely set parts, allocated at the first one set.
    fn extras(&mut self) -> &mut Extras {
        self.extras.get_or_insert_default()
    }

    /// The call's options.
    fn options(&self) -> CallOptions {
        self.extras
            .as_ref()
            .map_or_else(CallOptions::default, |e| e.options)
    }

    /// Sends the request: hands it to the connection now if fewer than
    /// [`max_in_flight`](crate::ClientBuilder::max_in_flight) calls are in
    /// flight; otherwise the returned future, once polled, waits for a call
    /// to end (calls that wait go in the order they started waiting) and
    /// holds the encoded params meanwhile. The future resolves to the
    /// result; dropping it, or [`ResponseFuture::cancel`], cancels the
    /// request.
    pub fn send(self) -> ResponseFuture<R> {
        let mut future = self.prepare();
        if let Stage::Unsent(outgoing) = &mut future.stage {
            let next = start(&future.client, outgoing, None);
            future.stage = next;
        }
        future
    }

    /// The future with the params encoded and the request not yet handed
    /// over (see [`Stage::Unsent`]).
    fn prepare(self) -> ResponseFuture<R> {
        if let Params::Task(_) = &self.params {
            return self.send_as_task();
        }
        let client = self.client;
        match self.into_outgoing() {
            Ok((outgoing, decode)) => ResponseFuture {
                // Method names are nearly always `'static`: cloning one is free.
                method: outgoing.method.clone(),
                stage: Stage::Unsent(outgoing),
                decode,
                client: client.clone(),
            },
            Err((method, decode, e)) => ResponseFuture::failed(client, method, decode, e),
        }
    }

    /// Like [`send`](Self::send), but fails with [`ClientError::Busy`]
    /// instead of waiting when
    /// [`max_in_flight`](crate::ClientBuilder::max_in_flight) calls are
    /// already in flight. Nothing is sent then.
    pub fn try_send(self) -> Result<ResponseFuture<R>, ClientError> {
        if let Params::Task(_) = &self.params {
            return Ok(self.send_as_task());
        }
        let client = self.client;
        let slot = match Arc::clone(&client.inner().slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(TryAcquireError::NoPermits) => {
                return Err(ClientError::Busy {
                    limit: client.inner().max_in_flight,
                });
            }
            Err(TryAcquireError::Closed) => return Err(client.inner().closed_error()),
        };
        let (mut outgoing, decode) = self.into_outgoing().map_err(|(_, _, e)| e)?;
        let method = outgoing.method.clone();
        Ok(ResponseFuture {
            stage: submit(client.inner(), &mut outgoing, slot, None),
            method,
            decode,
            client: client.clone(),
        })
    }

    /// Runs a task-required tool as a task: the future polls it and ends
    /// with the result of `tasks/result`, decoded as this call's result.
    /// Its deadline is the call's max time (default: the client's
    /// [`max_request_time`](crate::ClientBuilder::max_request_time)); its
    /// status messages reach the progress callback.
    fn send_as_task(self) -> ResponseFuture<R> {
        let client = self.client.clone();
        let deadline = task_deadline(self.client, &self.options());
        let progress = self.extras.as_ref().and_then(|e| e.progress.clone());
        let meta = self.extras.as_ref().and_then(|e| e.meta.clone());
        let (outgoing, decode) = match self.into_outgoing() {
            Ok(parts) => parts,
            Err((method, decode, e)) => {
                return ResponseFuture::failed(&client, method, decode, e);
            }
        };
        let method = outgoing.method.clone();
        let work = super::mcp_task::follow::run_required(
            client.clone(),
            outgoing.params,
            meta,
            progress,
            deadline,
        );
        ResponseFuture {
            stage: Stage::Task(Box::pin(work)),
            method,
            decode,
            client,
        }
    }

    /// The request as it will be handed to the session, or the error that
    /// encoding its params met.
    #[allow(clippy::type_complexity)]
    fn into_outgoing(
        self,
    ) -> Result<(Outgoing, DecodeFn<R>), (Cow<'static, str>, DecodeFn<R>, ClientError)> {
        let params = match self.params {
            Params::Raw(p) => p,
            Params::Task(p) => Some(p),
            Params::Failed(e) => return Err((self.method, self.decode, *e)),
        };
        Ok((
            Outgoing {
                method: self.method,
                params,
                extras: self.extras,
                follow_task: self.follow_task,
            },
            self.decode,
        ))
    }
}

/// `.await` hands the request over at the future's first poll, together
/// with the caller's waker (one lock for both); [`send`](RequestBuilder::send)
/// hands it over at once.
impl<R> IntoFuture for RequestBuilder<'_, R> {
    type Output = Result<R, ClientError>;
    type IntoFuture = ResponseFuture<R>;
    fn into_future(self) -> ResponseFuture<R> {
        self.prepare()
    }
}

/// How long a call followed as a task may run: the call's max time
/// (default: the client's [`max_request_time`](crate::ClientBuilder::max_request_time));
/// `None` for an unbounded call.
fn task_deadline(client: &Client, options: &CallOptions) -> Option<Duration> {
    Follow::of(options).deadline(client)
}

/// What a call that follows a task handle answering it keeps of its
/// options: the task's time cap (see [`task_deadline`]). In
/// [`Stage::Sent`], not the future itself: that stage is smaller than
/// [`Stage::Unsent`], so plain calls carry it for free.
#[derive(Clone, Copy)]
struct Follow {
    max_time: Option<Duration>,
    unbounded: bool,
}

impl Follow {
    fn of(options: &CallOptions) -> Self {
        Follow {
            max_time: options.max_time,
            unbounded: options.unbounded,
        }
    }

    fn deadline(self, client: &Client) -> Option<Duration> {
        if self.unbounded {
            return None;
        }
        Some(
            self.max_time
                .unwrap_or_else(|| client.inner().lock().session.config().max_request_time),
        )
    }
}

/// A request as the session takes it. Handed over by `&mut` and taken
/// apart field by field ([`submit`]): moved whole, its ~170 bytes would be
/// copied with a call to `memcpy` at each step of every call.
#[derive(Default)]
struct Outgoing {
    method: Cow<'static, str>,
    params: Option<RawJson>,
    extras: Option<Box<Extras>>,
    /// See [`RequestBuilder::follow_task`].
    follow_task: bool,
}

/// Hands the request to the session if a slot is free under the in-flight
/// limit; otherwise waits for one. `waker`: the caller's, when it is polling.
/// `request` is left empty.
fn start(client: &Client, request: &mut Outgoing, waker: Option<&Waker>) -> Stage {
    let inner = client.inner();
    match Arc::clone(&inner.slots).try_acquire_owned() {
        Ok(slot) => submit(inner, request, slot, waker),
        Err(TryAcquireError::NoPermits) => Stage::Admitting {
            slot: Box::pin(Arc::clone(&inner.slots).acquire_owned()),
            outgoing: Box::new(std::mem::take(request)),
        },
        Err(TryAcquireError::Closed) => Stage::Failed(inner.closed_error()),
    }
}

/// Hands the request to the session under the lock and wakes the driver.
/// The call's waiter starts with `waker`, so the caller that submits while
/// it polls needs no second lock to wait. `request` is left empty.
fn submit(
    inner: &Inner,
    request: &mut Outgoing,
    slot: OwnedSemaphorePermit,
    waker: Option<&Waker>,
) -> Stage {
    let method = std::mem::take(&mut request.method);
    let params = request.params.take();
    let Extras {
        options,
        progress,
        meta,
        span,
    } = request.extras.take().map(|e| *e).unwrap_or_default();
    let follow = request.follow_task.then(|| Follow::of(&options));
    let waker = waker.cloned();
    let submitted = inner.update(|st| {
        st.next_call += 1;
        let call = CallId(st.next_call);
        // Its time starts when the driver writes it (one clock read for
        // all it writes in a pass), or now if the session holds it back.
        let span = span.map(crate::telemetry::AppSpan::from);
        let submitted = st
            .session
            .request_written(call, method, params, meta, options, span, now);
        match submitted {
            Ok(()) => {
                st.waiters.insert(call, Waiter::new(waker, progress, slot));
                (Ok(call), true)
            }
            Err(e) => (Err(e), false),
        }
    });
    match submitted {
        Ok(call) => Stage::Sent { call, follow },
        Err(e) => Stage::Failed(e),
    }
}

type SlotFuture =
    Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send + 'static>>;

enum Stage {
    /// Encoded, not yet handed over: `.await` hands it over at the first
    /// poll, with the caller's waker.
    Unsent(Outgoing),
    /// Waiting for room under the in-flight limit.
    Admitting {
        slot: SlotFuture,
        outgoing: Box<Outgoing>,
    },
    /// Handed to the session; the driver answers in the call's [`Waiter`].
    Sent {
        call: CallId,
        /// Set for a call that follows a task handle answering it.
        follow: Option<Follow>,
    },
    /// A task-required tool run as a task ([`RequestBuilder::send_as_task`]):
    /// dropping it before the task ends sends `tasks/cancel` for it.
    Task(TaskFuture),
    Failed(ClientError),
    Done,
}

type TaskFuture = Pin<Box<dyn Future<Output = Result<RawJson, ClientError>> + Send + 'static>>;

/// The pending result of a request. Dropping it cancels the request.
#[must_use = "dropping the future cancels the request"]
pub struct ResponseFuture<R = RawJson> {
    stage: Stage,
    method: Cow<'static, str>,
    decode: DecodeFn<R>,
    /// Keeps the connection open while the call is pending.
    client: Client,
}

impl<R> std::fmt::Debug for ResponseFuture<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let call = match &self.stage {
            Stage::Sent { call, .. } => Some(*call),
            _ => None,
        };
        f.debug_struct("ResponseFuture")
            .field("method", &self.method)
            .field("call", &call)
            .finish()
    }
}

impl<R> ResponseFuture<R> {
    /// Cancels the request with a reason the server may log (the spec's
    /// `notifications/cancelled` `reason`). Dropping the future cancels too,
    /// with a generic reason. A request still waiting for room is never sent.
    pub fn cancel(mut self, reason: &str) {
        if let Stage::Sent { call, .. } = std::mem::replace(&mut self.stage, Stage::Done) {
            cancel(self.client.inner(), call, reason);
        }
    }

    pub(super) fn failed(
        client: &Client,
        method: impl Into<Cow<'static, str>>,
        decode: DecodeFn<R>,
        err: ClientError,
    ) -> Self {
        ResponseFuture {
            stage: Stage::Failed(err),
            method: method.into(),
            decode,
            client: client.clone(),
        }
    }
}

/// Forgets a call: its waiter goes (releasing its slot) and the session
/// tells the server, unless it already completed.
fn cancel(inner: &Inner, call: CallId, reason: &str) {
    inner.update(|st| {
        let pending = st.waiters.remove(&call).is_some_and(|w| w.answer.is_none());
        if pending {
            st.session.cancel(call, Some(reason));
        }
        ((), pending)
    });
}

/// The call's answer and progress callback, taken with its waiter, once
/// the driver has left the answer; `None` if the waiter is gone without
/// one. Until then the waiter holds `waker`.
fn poll_answer(
    inner: &Inner,
    call: CallId,
    waker: &Waker,
) -> Poll<Option<(Answer, Option<ProgressFn>)>> {
    let mut st = inner.lock();
    let Entry::Occupied(mut entry) = st.waiters.entry(call) else {
        return Poll::Ready(None);
    };
    let waiter = entry.get_mut();
    if let Some(answer) = waiter.answer.take() {
        let waiter = entry.remove();
        return Poll::Ready(Some((answer, waiter.progress)));
    }
    if !waiter.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
        waiter.waker = Some(waker.clone());
    }
    Poll::Pending
}

impl<R> Drop for ResponseFuture<R> {
    fn drop(&mut self) {
        if let Stage::Sent { call, .. } = self.stage {
            cancel(self.client.inner(), call, "the caller dropped the request");
        }
    }
}

impl<R> Future for ResponseFuture<R> {
    type Output = Result<R, ClientError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            match &mut this.stage {
                Stage::Unsent(outgoing) => {
                    let next = start(&this.client, outgoing, Some(cx.waker()));
                    this.stage = next;
                    if let Stage::Sent { .. } = this.stage {
                        // The waiter holds this task's waker.
                        return Poll::Pending;
                    }
                }
                Stage::Admitting { slot, .. } => {
                    let slot = ready!(slot.as_mut().poll(cx));
                    let Stage::Admitting { mut outgoing, .. } =
                        std::mem::replace(&mut this.stage, Stage::Done)
                    else {
                        continue;
                    };
                    match slot {
                        Ok(slot) => {
                            let inner = this.client.inner();
                            this.stage = submit(inner, &mut outgoing, slot, Some(cx.waker()));
                            if let Stage::Sent { .. } = this.stage {
                                return Poll::Pending;
                            }
                        }
                        Err(_) => this.stage = Stage::Failed(this.client.inner().closed_error()),
                    }
                }
                Stage::Sent { call, follow } => {
                    let answer = ready!(poll_answer(this.client.inner(), *call, cx.waker()));
                    let follow = *follow;
                    this.stage = Stage::Done;
                    return Poll::Ready(match answer {
                        Some((Answer::Done(raw), _)) => (this.decode)(&this.method, raw),
                        Some((Answer::Failed(e), _)) => Err(*e),
                        Some((Answer::Task(handle), progress)) => match follow {
                            Some(follow) => {
                                let deadline = follow.deadline(&this.client);
                                let work = super::mcp_task::follow::follow_created(
                                    this.client.clone(),
                                    handle,
                                    progress,
                                    deadline,
                                );
                                this.stage = Stage::Task(Box::pin(work));
                                continue;
                            }
                            // The raw escape hatch and `call_tool_as_task`
                            // take the handle itself.
                            None => (this.decode)(&this.method, handle),
                        },
                        // The waiter went without an answer: the driver is gone.
                        None => Err(this.client.inner().closed_error()),
                    });
                }
                Stage::Task(work) => {
                    let answer = ready!(work.as_mut().poll(cx));
                    this.stage = Stage::Done;
                    return Poll::Ready(answer.and_then(|raw| (this.decode)(&this.method, raw)));
                }
                Stage::Failed(_) => {
                    let Stage::Failed(e) = std::mem::replace(&mut this.stage, Stage::Done) else {
                        continue;
                    };
                    return Poll::Ready(Err(e));
                }
                Stage::Done => panic!("ResponseFuture polled after it completed"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
}
