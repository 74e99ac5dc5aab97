//! The calls: each caller's handle and options, and the table of requests
//! the session has sent (waiting for an answer), holds back (waiting for the
//! session to be ready) or waits on the owner's input for, with their
//! JSON-RPC ids and deadlines.
//!
//! Invariants of [`Calls`]:
//! - a [`CallId`] is in at most one of the three places at a time;
//! - ids are never reused within a session (an `i64` does not run out);
//! - `next_deadline` is at or before every deadline in the table (every
//!   way in that carries a deadline moves it earlier), so
//!   [`Session::poll_timeout`](super::Session::poll_timeout) is one read;
//! - `unstamped` counts the requests in `sent` not yet given a start
//!   (`started` is `None`, and so is their deadline): a request the client's
//!   driver writes gets both when it is written ([`Calls::sending`]), one
//!   clock read for all it writes at once.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use mcp_proto::jsonrpc::{Request, RequestId};
use mcp_proto::schema::{InputResponses, JsonObject};
use mcp_proto::{Era, ProtocolVersion, RawJson};

use super::meta::{MetaParts, compose_params};
use super::result_type::merge_input;
use super::{IdHash, SessionConfig};
use crate::telemetry::{Call as CallTrace, Resend};

/// A caller's handle for one call, stable across `input_required` retries
/// (which use new JSON-RPC ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub u64);

/// The progress token of a call: derived from its [`CallId`], so the caller can
/// put it into the params itself and it survives `input_required` retries.
pub fn progress_token(call: CallId) -> RequestId {
    RequestId::Number(i64::try_from(call.0).unwrap_or(i64::MAX))
}

/// Per-call options.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Timeout, reset by progress. `None`: the session's default. Use
    /// [`CallOptions::no_timeout`] for long-lived requests such as `subscriptions/listen`.
    pub timeout: Option<Duration>,
    /// Cap on total time. `None`: the session's default.
    pub max_time: Option<Duration>,
    /// Never time out.
    pub unbounded: bool,
    /// Ask the server for progress (adds `_meta.progressToken`).
    pub progress: bool,
}

impl CallOptions {
    /// Options with the session's defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the timeout (reset by progress).
    #[must_use]
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    /// Sets the cap on total time.
    #[must_use]
    pub fn max_time(mut self, t: Duration) -> Self {
        self.max_time = Some(t);
        self
    }
    /// Never time out.
    #[must_use]
    pub fn no_timeout(mut self) -> Self {
        self.unbounded = true;
        self
    }
    /// Ask the server for progress notifications.
    #[must_use]
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Whether every option is the session's default.
    fn is_default(&self) -> bool {
        let CallOptions {
            timeout,
            max_time,
            unbounded,
            progress,
        } = self;
        timeout.is_none() && max_time.is_none() && !unbounded && !progress
    }
}

/// The call's spans and metrics, when anything records them (boxed: most
/// calls have none).
pub(super) type Trace = Option<Box<CallTrace>>;

/// What a user call's completion needs: the call, its telemetry, its method.
pub(super) type Ended = (CallId, Trace, Cow<'static, str>);

/// What a request the session sent is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Probe,
    Initialize,
    User(CallId),
}

/// The methods whose 2026-07-28 answer may be `input_required` (MRTR).
pub(super) const MRTR_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// A request sent, waiting for its answer. What every answer reads is
/// inline; what only some calls have (options of their own, a `_meta` of
/// the caller's, params kept for a retry, a retry's count) is in `rare`,
/// boxed: a plain call's record is written and read on the way of every
/// call, and stays within two cache lines.
#[derive(Debug)]
pub(super) struct Pending {
    purpose: Purpose,
    method: Cow<'static, str>,
    /// `None` until it is written (see the [module docs](self)).
    started: Option<Instant>,
    /// When it times out (progress moves it, up to the cap its options and
    /// `started` give: [`deadlines`]). Its progress token, if it asked for
    /// progress, is [`progress_token`] of its call.
    deadline: Option<Instant>,
    trace: Trace,
    /// `None`: default options, no `_meta`, no params kept, never re-sent,
    /// no `input_required` round taken.
    rare: Option<Box<Rare>>,
    /// Whether a retry may need its params (MRTR, session expiry, an
    /// unconfirmed era): they are kept in `rare` then.
    retained: bool,
    /// Sent while a remembered modern era was unconfirmed.
    hinted: bool,
}

/// The part of a [`Pending`] request most calls do not have.
#[derive(Debug, Default)]
struct Rare {
    /// Kept only when `retained`.
    params: Option<RawJson>,
    options: CallOptions,
    rounds: u32,
    resent: bool,
    /// The caller's `_meta` members, composed into the params at each send.
    meta: Option<Box<JsonObject>>,
}

impl Rare {
    /// `None` when every part is its default.
    fn boxed(
        params: Option<RawJson>,
        options: CallOptions,
        rounds: u32,
        resent: bool,
        meta: Option<Box<JsonObject>>,
    ) -> Option<Box<Rare>> {
        let plain =
            params.is_none() && meta.is_none() && rounds == 0 && !resent && options.is_default();
        (!plain).then(|| {
            Box::new(Rare {
                params,
                options,
                rounds,
                resent,
                meta,
            })
        })
    }
}

impl Pending {
    /// A handshake request (`server/discover`, `initialize`), sent at `now`.
    pub(super) fn handshake(
        purpose: Purpose,
        method: &'static str,
        now: Instant,
        deadline: Instant,
        trace: Trace,
    ) -> Self {
        Pending {
            purpose,
            method: Cow::Borrowed(method),
            started: Some(now),
            deadline: Some(deadline),
            trace,
            rare: None,
            retained: false,
            hinted: false,
        }
    }

    #[inline]
    pub(super) fn purpose(&self) -> Purpose {
        self.purpose
    }

    #[inline]
    pub(super) fn method(&self) -> &str {
        &self.method
    }

    /// When it was asked for (by the caller; for a handshake request, sent).
    /// `None`: not yet written.
    #[inline]
    pub(super) fn started(&self) -> Option<Instant> {
        self.started
    }

    /// How many `input_required` rounds it has taken.
    #[inline]
    pub(super) fn rounds(&self) -> u32 {
        self.rare.as_ref().map_or(0, |r| r.rounds)
    }

    /// Its options.
    #[inline]
    fn options(&self) -> CallOptions {
        self.rare
            .as_ref()
            .map_or_else(CallOptions::default, |r| r.options)
    }

    /// Whether it was sent again already.
    #[inline]
    fn resent(&self) -> bool {
        self.rare.as_ref().is_some_and(|r| r.resent)
    }

    /// Whether it may go out again, once: it was not re-sent yet and its
    /// params were kept.
    #[inline]
    pub(super) fn may_resend(&self) -> bool {
        self.retained && !self.resent()
    }

    /// Whether it went out under a remembered modern era not yet confirmed.
    #[inline]
    pub(super) fn hinted(&self) -> bool {
        self.hinted
    }

    /// Its telemetry, taken out (a handshake request records its own end).
    #[inline]
    pub(super) fn take_trace(&mut self) -> Trace {
        self.trace.take()
    }

    /// What its completion needs: its telemetry and method. Always
    /// inlined: on the way of every answer, the call's state is taken
    /// apart in place, not copied into a call.
    #[inline(always)]
    pub(super) fn end(self) -> (Trace, Cow<'static, str>) {
        (self.trace, self.method)
    }

    /// The call to send again, once, for `why`: it keeps the deadline its
    /// caller gave it.
    pub(super) fn into_resend(mut self, call: CallId, why: Resend) -> Deferred {
        if let Some(t) = &mut self.trace {
            t.resend(why);
        }
        let rare = self.rare.map(|r| *r).unwrap_or_default();
        Deferred {
            call,
            method: self.method,
            params: rare.params,
            options: rare.options,
            started: self.started,
            rounds: rare.rounds,
            resent: true,
            meta: rare.meta,
            deadline: self.deadline,
            trace: self.trace,
        }
    }

    /// The call's next `input_required` round (its `rounds`-th), asked for
    /// `requests` inputs at `now`: its timeout starts again when it is sent.
    pub(super) fn into_round(mut self, call: CallId, requests: usize, now: Instant) -> Deferred {
        if let Some(t) = &mut self.trace {
            t.input_required(requests);
        }
        let rare = self.rare.map(|r| *r).unwrap_or_default();
        Deferred {
            call,
            method: self.method,
            params: rare.params,
            options: rare.options,
            started: Some(now),
            rounds: rare.rounds + 1,
            resent: rare.resent,
            meta: rare.meta,
            deadline: None,
            trace: self.trace,
        }
    }
}

/// A user request not on the wire: waiting for the session to become ready,
/// to be re-sent, or for the owner's input.
#[derive(Debug)]
pub(super) struct Deferred {
    call: CallId,
    method: Cow<'static, str>,
    params: Option<RawJson>,
    options: CallOptions,
    /// `None`: a new call whose start is when it is written.
    started: Option<Instant>,
    rounds: u32,
    resent: bool,
    /// The caller's `_meta` members.
    meta: Option<Box<JsonObject>>,
    trace: Trace,
    /// The deadline the call already has: one queued while the session
    /// (re)starts, or put back to be re-sent after an expired session, keeps
    /// the time its caller gave it (the timeout runs from when the caller
    /// asked, not from when the session got round to sending). `None`: it
    /// starts when the request is sent (a new call; an `input_required`
    /// round, whose wait for the user is not the server's time).
    deadline: Option<Instant>,
}

impl Deferred {
    /// A new call, asked for at `now` (`None`: its time starts when it is
    /// written).
    #[inline]
    pub(super) fn new(
        call: CallId,
        method: Cow<'static, str>,
        params: Option<RawJson>,
        meta: Option<JsonObject>,
        options: CallOptions,
        trace: Trace,
        now: Option<Instant>,
    ) -> Self {
        Deferred {
            call,
            method,
            params,
            options,
            started: now,
            rounds: 0,
            resent: false,
            meta: meta.map(Box::new),
            deadline: None,
            trace,
        }
    }

    /// When its caller asked for it (for an `input_required` round, when
    /// the round began).
    #[inline]
    pub(super) fn started(&self) -> Option<Instant> {
        self.started
    }

    /// What its completion needs: the call, its telemetry and method.
    #[inline(always)]
    pub(super) fn end(self) -> Ended {
        (self.call, self.trace, self.method)
    }
}

/// The deadlines of a request sent at `now` (`timeout` from now, within the
/// hard cap), and the hard cap (`max_time` from `started`). Both `None` for
/// an unbounded call.
fn deadlines(
    config: &SessionConfig,
    options: &CallOptions,
    started: Instant,
    now: Instant,
) -> (Option<Instant>, Option<Instant>) {
    if options.unbounded {
        return (None, None);
    }
    let timeout = options.timeout.unwrap_or(config.request_timeout);
    let hard = started + options.max_time.unwrap_or(config.max_request_time);
    (Some((now + timeout).min(hard)), Some(hard))
}

/// How the session in use sends a call: its revision, the `_meta` members
/// it puts on every request, and whether its era is a remembered one not
/// yet confirmed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Route<'a> {
    version: Option<ProtocolVersion>,
    protocol_meta: Option<&'a RawJson>,
    unconfirmed: bool,
}

impl<'a> Route<'a> {
    #[inline]
    pub(super) fn new(
        version: Option<ProtocolVersion>,
        protocol_meta: Option<&'a RawJson>,
        unconfirmed: bool,
    ) -> Self {
        Route {
            version,
            protocol_meta,
            unconfirmed,
        }
    }
}

/// The calls of a session (see the [module docs](self) for the invariants).
#[derive(Debug, Default)]
pub(super) struct Calls {
    next_id: i64,
    sent: HashMap<RequestId, Pending, IdHash>,
    /// User requests waiting for the session, re-sends first.
    queued: VecDeque<Deferred>,
    /// Calls waiting for the owner's answers to `input_required`, with the
    /// server's `requestState`.
    awaiting_input: HashMap<CallId, (Deferred, Option<String>)>,
    next_deadline: Option<Instant>,
    unstamped: usize,
}

impl Calls {
    /// A fresh request id.
    #[inline]
    pub(super) fn next_id(&mut self) -> RequestId {
        self.next_id += 1;
        RequestId::Number(self.next_id)
    }

    /// Records a request sent as `id`.
    #[inline]
    pub(super) fn insert(&mut self, id: RequestId, pending: Pending) {
        self.note_deadline(pending.deadline);
        self.sent.insert(id, pending);
    }

    /// The request sent as `id`, forgotten.
    #[inline]
    pub(super) fn remove(&mut self, id: &RequestId) -> Option<Pending> {
        let p = self.sent.remove(id)?;
        self.forget(&p);
        Some(p)
    }

    /// Keeps `unstamped` for a request leaving `sent`.
    #[inline]
    fn forget(&mut self, p: &Pending) {
        if p.started.is_none() {
            self.unstamped -= 1;
        }
    }

    /// When the session gives up on the request `id`.
    #[inline]
    pub(super) fn deadline(&self, id: &RequestId) -> Option<Instant> {
        self.sent.get(id)?.deadline
    }

    /// The request `id`, being written: its time starts at `now` if it
    /// had none yet. Its deadline and telemetry.
    #[cfg(feature = "tokio")]
    #[inline]
    pub(super) fn sending(
        &mut self,
        id: &RequestId,
        config: &SessionConfig,
        now: impl super::Now,
    ) -> (Option<Instant>, Option<&CallTrace>) {
        let Some(p) = self.sent.get_mut(id) else {
            return (None, None);
        };
        if p.started.is_none() {
            let now = now.now();
            p.started = Some(now);
            p.deadline = deadlines(config, &p.options(), now, now).0;
            self.unstamped -= 1;
            if let Some(d) = p.deadline {
                self.next_deadline = Some(self.next_deadline.map_or(d, |n| n.min(d)));
            }
        }
        (p.deadline, p.trace.as_deref())
    }

    /// Whether a request in `sent` has no start yet.
    #[cfg(feature = "tokio")]
    #[inline]
    pub(super) fn has_unstamped(&self) -> bool {
        self.unstamped > 0
    }

    /// Starts the time of every request in `sent` that has none yet, at
    /// `now` (those not written in a pass: waiting for the transport).
    #[cfg(feature = "tokio")]
    pub(super) fn stamp(&mut self, config: &SessionConfig, now: Instant) {
        if self.unstamped == 0 {
            return;
        }
        for p in self.sent.values_mut() {
            if p.started.is_none() {
                p.started = Some(now);
                p.deadline = deadlines(config, &p.options(), now, now).0;
                if let Some(d) = p.deadline {
                    self.next_deadline = Some(self.next_deadline.map_or(d, |n| n.min(d)));
                }
            }
        }
        self.unstamped = 0;
    }

    /// Number of requests awaiting an answer.
    pub(super) fn in_flight(&self) -> usize {
        self.sent.len()
    }

    /// Sends a user call: records it and returns the request for the wire.
    /// `input` is the answers to its `input_required` round and the server's
    /// `requestState`.
    #[inline]
    pub(super) fn send(
        &mut self,
        d: Deferred,
        input: Option<(Option<InputResponses>, Option<String>)>,
        route: Route<'_>,
        config: &SessionConfig,
        now: Option<Instant>,
    ) -> Request {
        let modern = route.version.is_some_and(|v| v.era() == Era::Modern);
        let id = self.next_id();
        let mut trace = d.trace;
        if let Some(t) = &mut trace {
            t.sent(&id, route.version);
        }
        let started = d.started.or(now);
        let deadline = match (started, now) {
            _ if d.deadline.is_some() => d.deadline,
            (Some(started), now) => {
                deadlines(config, &d.options, started, now.unwrap_or(started)).0
            }
            (None, _) => {
                self.unstamped += 1;
                None
            }
        };
        let token = d.options.progress.then(|| progress_token(d.call));
        let retry_mrtr = modern && MRTR_METHODS.contains(&&*d.method);
        let keep = retry_mrtr || (config.resend_on_session_expiry && !modern) || route.unconfirmed;
        let mut params = d.params;
        if let Some((responses, state)) = input {
            params = Some(merge_input(params.as_ref(), responses, state));
        }
        // Kept without the protocol's `_meta`: a re-send composes it again
        // for the revision then in use.
        let composed = compose_params(
            params.as_ref(),
            &MetaParts::default()
                .protocol(route.protocol_meta)
                .progress_token(token.as_ref())
                .caller(d.meta.as_deref())
                .trace(trace.as_ref().and_then(|t| t.trace_meta())),
        );
        let (wire, kept) = match composed {
            Some(w) => (Some(w), if keep { params } else { None }),
            None => {
                let kept = if keep { params.clone() } else { None };
                (params, kept)
            }
        };
        let request = Request::new(id.clone(), d.method.clone(), wire);
        // Into the table in place (not through `insert`): a call's state is
        // written once on the way of every request.
        self.note_deadline(deadline);
        self.sent.insert(
            id,
            Pending {
                purpose: Purpose::User(d.call),
                method: d.method,
                started,
                deadline,
                trace,
                rare: Rare::boxed(kept, d.options, d.rounds, d.resent, d.meta),
                retained: keep,
                hinted: route.unconfirmed,
            },
        );
        request
    }

    /// Holds a new call back until the session is ready: waiting counts
    /// against its timeout.
    pub(super) fn hold(&mut self, mut d: Deferred, config: &SessionConfig, now: Instant) {
        d.started = Some(now);
        d.deadline = deadlines(config, &d.options, now, now).0;
        self.note_deadline(d.deadline);
        self.queued.push_back(d);
    }

    /// Queues a call to be re-sent (once) ahead of newer calls, after the
    /// calls already put back, in the order they failed.
    pub(super) fn put_back(&mut self, d: Deferred) {
        let pos = self.queued.iter().take_while(|d| d.resent).count();
        self.note_deadline(d.deadline);
        self.queued.insert(pos, d);
    }

    /// The next call held back, in order.
    #[inline]
    pub(super) fn next_held(&mut self) -> Option<Deferred> {
        self.queued.pop_front()
    }

    /// Parks a call until the owner answers its `input_required` round.
    pub(super) fn await_input(&mut self, d: Deferred, state: Option<String>) {
        self.awaiting_input.insert(d.call, (d, state));
    }

    /// The call parked for input, and the server's `requestState`.
    pub(super) fn take_awaiting(&mut self, call: CallId) -> Option<(Deferred, Option<String>)> {
        self.awaiting_input.remove(&call)
    }

    /// Cancels `call` wherever it is: what its completion needs, and the id
    /// it was sent as (the server is to be told) if it was.
    pub(super) fn cancel(
        &mut self,
        call: CallId,
    ) -> Option<(Trace, Cow<'static, str>, Option<RequestId>)> {
        if let Some((d, _)) = self.awaiting_input.remove(&call) {
            return Some((d.trace, d.method, None));
        }
        if let Some(pos) = self.queued.iter().position(|d| d.call == call) {
            let d = self.queued.remove(pos)?;
            return Some((d.trace, d.method, None));
        }
        let id = self
            .sent
            .iter()
            .find(|(_, p)| p.purpose == Purpose::User(call))
            .map(|(id, _)| id.clone())?;
        let p = self.remove(&id)?;
        Some((p.trace, p.method, Some(id)))
    }

    /// Progress for the call with `token`, if it asked for progress: its
    /// timeout starts again from `now`. The call and its telemetry.
    pub(super) fn progress(
        &mut self,
        token: &RequestId,
        config: &SessionConfig,
        now: Instant,
    ) -> Option<(CallId, Option<&CallTrace>)> {
        let (call, p) = self.sent.values_mut().find_map(|p| match p.purpose {
            Purpose::User(call) if p.options().progress && progress_token(call) == *token => {
                Some((call, p))
            }
            _ => None,
        })?;
        if let (Some(_), Some(started)) = (p.deadline, p.started) {
            // A timeout from now, within the cap: no earlier than the
            // deadline it replaces, so `next_deadline` holds.
            p.deadline = deadlines(config, &p.options(), started, now).0;
        }
        Some((call, p.trace.as_deref()))
    }

    /// Whether the handshake's `initialize` waits for its answer.
    pub(super) fn initialize_sent(&self) -> bool {
        self.sent.values().any(|p| p.purpose == Purpose::Initialize)
    }

    /// Forgets the handshake's `initialize` (its answer will be dropped).
    pub(super) fn forget_initialize(&mut self) {
        self.sent.retain(|_, p| p.purpose != Purpose::Initialize);
    }

    /// The user calls waiting for an answer, in the order they were made,
    /// and the handshake request waiting for one, if any.
    pub(super) fn waiting_for_answers(&self) -> (Vec<(RequestId, CallId)>, Option<RequestId>) {
        let mut calls = Vec::new();
        let mut handshake = None;
        for (id, p) in &self.sent {
            match p.purpose {
                Purpose::User(call) => calls.push((id.clone(), call)),
                Purpose::Probe | Purpose::Initialize => handshake = Some(id.clone()),
            }
        }
        calls.sort_by_key(|(_, call)| *call);
        (calls, handshake)
    }

    /// The requests sent whose deadline is at or before `now`.
    pub(super) fn expired(&self, now: Instant) -> Vec<RequestId> {
        self.sent
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// A held-back call whose deadline is at or before `now`, forgotten.
    pub(super) fn take_expired_held(&mut self, now: Instant) -> Option<Deferred> {
        let pos = self
            .queued
            .iter()
            .position(|d| d.deadline.is_some_and(|t| t <= now))?;
        self.queued.remove(pos)
    }

    /// Every request sent, forgotten: the handshake's, and the user calls
    /// (with those held back and parked for input) in the order they were
    /// made, with what their completion needs.
    pub(super) fn drain(&mut self) -> (Vec<Pending>, Vec<Ended>) {
        self.next_deadline = None;
        self.unstamped = 0;
        let mut handshake = Vec::new();
        let mut calls = Vec::new();
        for (_, p) in self.sent.drain() {
            match p.purpose {
                Purpose::User(c) => calls.push((c, p.trace, p.method)),
                Purpose::Probe | Purpose::Initialize => handshake.push(p),
            }
        }
        calls.extend(self.queued.drain(..).map(Deferred::end));
        calls.extend(
            self.awaiting_input
                .drain()
                .map(|(c, (d, _))| (c, d.trace, d.method)),
        );
        calls.sort_by_key(|(call, _, _)| *call);
        (handshake, calls)
    }

    /// At or before the earliest deadline (`None`: nothing can time out).
    #[inline]
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        self.next_deadline
    }

    /// After expiring what was due: the earliest deadline exactly.
    pub(super) fn rearm(&mut self) {
        let sent = self.sent.values().filter_map(|p| p.deadline);
        self.next_deadline = sent
            .chain(self.queued.iter().filter_map(|d| d.deadline))
            .min();
    }

    /// Nothing will time out (the session closed).
    pub(super) fn disarm(&mut self) {
        self.next_deadline = None;
    }

    /// Keeps `next_deadline` at or before a deadline just given to a call.
    #[inline]
    fn note_deadline(&mut self, deadline: Option<Instant>) {
        if let Some(d) = deadline {
            self.next_deadline = Some(self.next_deadline.map_or(d, |n| n.min(d)));
        }
    }
}
