//! One call's life: its handle and options, the pending and deferred state,
//! sending it, its response and progress, `input_required` rounds and the
//! re-send after an expired HTTP session.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Notification, Request, RequestId};
use mcp_proto::schema::{
    CancelledParams, InputRequest, InputResponses, JsonObject, ProgressParams,
};
use mcp_proto::{Era, ErrorObject};

use super::era::HintState;
use super::wire::{
    InputRequiredWire, MetaParts, ResultKind, compose_params, merge_input, result_kind,
};
use super::{Event, Session, Transmit};
use crate::error::ClientError;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Probe,
    Initialize,
    User(CallId),
}

#[derive(Debug)]
pub(super) struct Pending {
    pub(super) purpose: Purpose,
    pub(super) method: Cow<'static, str>,
    /// Kept only when a retry may need it (MRTR, session expiry): see `retained`.
    pub(super) params: Option<RawJson>,
    pub(super) retained: bool,
    pub(super) options: CallOptions,
    pub(super) started: Instant,
    pub(super) deadline: Option<Instant>,
    pub(super) hard_deadline: Option<Instant>,
    pub(super) rounds: u32,
    pub(super) resent: bool,
    pub(super) progress_token: Option<RequestId>,
    /// The caller's `_meta` members, composed into the params at each send.
    pub(super) meta: Option<Box<JsonObject>>,
    /// Sent while a modern hint was unconfirmed (its params are kept).
    pub(super) hinted: bool,
    /// The call's spans and metrics (see [`crate::telemetry`]).
    pub(super) trace: Option<Box<crate::telemetry::Call>>,
}

/// A user request waiting for the session to become ready, or for input.
#[derive(Debug)]
pub(super) struct Deferred {
    pub(super) call: CallId,
    pub(super) method: Cow<'static, str>,
    pub(super) params: Option<RawJson>,
    pub(super) options: CallOptions,
    pub(super) started: Instant,
    pub(super) rounds: u32,
    pub(super) resent: bool,
    /// The caller's `_meta` members.
    pub(super) meta: Option<Box<JsonObject>>,
    /// The call's spans and metrics (see [`crate::telemetry`]).
    pub(super) trace: Option<Box<crate::telemetry::Call>>,
    /// The deadline the call already has: one queued while the session
    /// (re)starts, or put back to be re-sent after an expired session, keeps
    /// the time its caller gave it (the timeout runs from when the caller
    /// asked, not from when the session got round to sending). `None`: it
    /// starts when the request is sent (a new call; an `input_required`
    /// round, whose wait for the user is not the server's time).
    pub(super) deadline: Option<Instant>,
}

const MRTR_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

impl Session {
    pub(super) fn send_user(
        &mut self,
        d: Deferred,
        responses: Option<InputResponses>,
        state: Option<String>,
        now: Instant,
    ) {
        let modern = self.server.as_ref().is_some_and(|s| s.era() == Era::Modern);
        let id = self.alloc_id();
        let mut trace = d.trace;
        if let Some(t) = &mut trace {
            t.sent(&id, self.server.as_ref().map(|s| s.protocol_version));
        }
        let (fresh, hard) = self.deadlines(&d.options, d.started, now);
        let deadline = d.deadline.or(fresh);
        let token = d.options.progress.then(|| progress_token(d.call));
        let retry_mrtr = modern && MRTR_METHODS.contains(&&*d.method);
        let hinted = self.hint == HintState::Unconfirmed;
        let keep = retry_mrtr || (self.config.resend_on_session_expiry && !modern) || hinted;
        let mut params = d.params;
        if responses.is_some() || state.is_some() {
            params = Some(merge_input(params.as_ref(), responses, state));
        }
        // Kept without the protocol's `_meta`: a re-send composes it again
        // for the revision then in use.
        let composed = compose_params(
            params.as_ref(),
            &MetaParts {
                protocol: self.modern_meta.as_ref(),
                progress_token: token.as_ref(),
                caller: d.meta.as_deref(),
                trace: trace.as_ref().and_then(|t| t.trace_meta()),
            },
        );
        let (wire, kept) = match composed {
            Some(w) => (Some(w), if keep { params } else { None }),
            None => {
                let kept = if keep { params.clone() } else { None };
                (params, kept)
            }
        };
        self.transmit.push_back(Transmit::Message(
            Request::new(id.clone(), d.method.clone(), wire).into(),
        ));
        self.note_deadline(deadline);
        self.pending.insert(
            id,
            Pending {
                purpose: Purpose::User(d.call),
                method: d.method,
                params: kept,
                retained: keep,
                options: d.options,
                started: d.started,
                deadline,
                hard_deadline: hard,
                rounds: d.rounds,
                resent: d.resent,
                progress_token: token,
                meta: d.meta,
                hinted,
                trace,
            },
        );
    }

    /// A handshake request was answered: its telemetry records how.
    fn finish_handshake(
        &self,
        trace: Option<Box<crate::telemetry::Call>>,
        method: &str,
        result: &Result<RawJson, ErrorObject>,
    ) {
        if let Some(t) = trace {
            use crate::telemetry::Outcome;
            match result {
                Ok(raw) => t.finish(&self.telemetry, method, Outcome::Answer(raw)),
                Err(e) => {
                    let e = ClientError::Rpc(e.clone());
                    t.finish(&self.telemetry, method, Outcome::Failed(&e));
                }
            }
        }
    }

    /// A handshake request failed without an answer.
    pub(super) fn fail_handshake(
        &self,
        trace: Option<Box<crate::telemetry::Call>>,
        method: &str,
        error: ClientError,
    ) {
        if let Some(t) = trace {
            t.finish(
                &self.telemetry,
                method,
                crate::telemetry::Outcome::Failed(&error),
            );
        }
    }

    /// A user call ended: its telemetry records the outcome, its owner is told.
    /// Inlined: only the check for telemetry and the event on the way of
    /// every answer; the recording is out of line.
    #[inline(always)]
    pub(super) fn complete(
        &mut self,
        call: CallId,
        trace: Option<Box<crate::telemetry::Call>>,
        method: &str,
        result: Result<RawJson, ClientError>,
    ) {
        if let Some(t) = trace {
            self.finish_call(&t, method, &result);
        }
        self.events.push_back(Event::Completed { call, result });
    }

    #[inline(never)]
    fn finish_call(
        &self,
        trace: &crate::telemetry::Call,
        method: &str,
        result: &Result<RawJson, ClientError>,
    ) {
        trace.finish(
            &self.telemetry,
            method,
            crate::telemetry::Outcome::of(result),
        );
    }

    /// A request's deadline if it were sent at `now` (`timeout` from now,
    /// within the hard cap), and the hard cap (`max_time` from `started`).
    /// Both `None` for an unbounded call.
    pub(super) fn deadlines(
        &self,
        options: &CallOptions,
        started: Instant,
        now: Instant,
    ) -> (Option<Instant>, Option<Instant>) {
        if options.unbounded {
            return (None, None);
        }
        let timeout = options.timeout.unwrap_or(self.config.request_timeout);
        let hard = started + options.max_time.unwrap_or(self.config.max_request_time);
        (Some((now + timeout).min(hard)), Some(hard))
    }

    pub(super) fn send_cancelled(&mut self, id: RequestId, reason: Option<String>) {
        let params = CancelledParams::new(id, reason);
        if let Ok(raw) = RawJson::from_value(&params) {
            self.transmit.push_back(Transmit::Message(
                Notification::new("notifications/cancelled", Some(raw)).into(),
            ));
        }
    }

    /// Queues a sent call to be re-sent (once: it is marked `resent`) ahead
    /// of newer calls, after the calls already put back, in the order they failed.
    pub(super) fn put_back(&mut self, call: CallId, p: Pending) {
        let pos = self.queued.iter().take_while(|d| d.resent).count();
        let d = Deferred {
            call,
            method: p.method,
            params: p.params,
            options: p.options,
            started: p.started,
            rounds: p.rounds,
            resent: true,
            meta: p.meta,
            deadline: p.deadline,
            trace: p.trace,
        };
        self.queued.insert(pos, d);
    }

    pub(super) fn on_notification(&mut self, n: Notification, now: Instant) {
        if n.method == "notifications/cancelled" {
            if let Some(p) = n
                .params
                .as_ref()
                .and_then(|raw| serde_json::from_str::<CancelledParams>(raw.get()).ok())
            {
                if self.server_requests.remove(&p.request_id) {
                    self.events
                        .push_back(Event::ServerRequestCancelled(p.request_id));
                }
            }
        } else if n.method == "notifications/progress" {
            if let Some(p) = n
                .params
                .as_ref()
                .and_then(|raw| serde_json::from_str::<ProgressParams>(raw.get()).ok())
            {
                if let Some(pending) = self
                    .pending
                    .values_mut()
                    .find(|pending| pending.progress_token.as_ref() == Some(&p.progress_token))
                {
                    if let Purpose::User(call) = pending.purpose {
                        if pending.options.progress {
                            if let Some(t) = &pending.trace {
                                t.progress(&p);
                            }
                            let timeout = pending
                                .options
                                .timeout
                                .unwrap_or(self.config.request_timeout);
                            if let (Some(_), Some(hard)) = (pending.deadline, pending.hard_deadline)
                            {
                                pending.deadline = Some((now + timeout).min(hard));
                            }
                            self.events.push_back(Event::Progress { call, progress: p });
                            return;
                        }
                    }
                }
                tracing::debug!(token = %p.progress_token, "progress for an unknown or finished request; dropped");
                return;
            }
        }
        self.events.push_back(Event::Notification(n));
    }

    pub(super) fn on_response(
        &mut self,
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
        now: impl super::Now,
    ) {
        let Some(p) = self.pending.remove(&id) else {
            if self.late_probe.as_ref() == Some(&id) {
                self.on_late_probe(result, now.now());
                return;
            }
            tracing::debug!(%id, "response for an unknown, cancelled or already answered request; dropped");
            return;
        };
        match p.purpose {
            Purpose::Probe => {
                self.finish_handshake(p.trace, &p.method, &result);
                self.on_probe_response(result, now.now());
            }
            Purpose::Initialize => {
                self.finish_handshake(p.trace, &p.method, &result);
                self.on_initialize_response(result, now.now());
            }
            Purpose::User(call) => {
                // The session in use works: a loss later starts the count
                // of sessions ended in a row again.
                self.renewals = 0;
                let result = match result {
                    Ok(raw) => {
                        if self.hint == HintState::Unconfirmed {
                            // The remembered era works.
                            self.hint = HintState::None;
                        }
                        raw
                    }
                    Err(e) => {
                        if self.retry_if_hint_failed(call, &p, &e.to_string()) {
                            self.requeue(call, p, now.now());
                            return;
                        }
                        self.complete(call, p.trace, &p.method, Err(ClientError::Rpc(e)));
                        return;
                    }
                };
                let modern = self.server.as_ref().is_some_and(|s| s.era() == Era::Modern);
                if modern && MRTR_METHODS.contains(&&*p.method) {
                    match result_kind(&result) {
                        ResultKind::InputRequired(ir) => {
                            self.on_input_required(call, p, ir, now.now());
                            return;
                        }
                        // The one method the tasks extension covers.
                        ResultKind::Task
                            if self.config.tasks_extension && p.method == "tools/call" =>
                        {
                            self.task_created(call, p, result);
                            return;
                        }
                        ResultKind::Task | ResultKind::Complete => {}
                    }
                }
                self.complete(call, p.trace, &p.method, Ok(result));
            }
        }
    }

    /// The server answered call `call` with a task handle: the call ends
    /// for the session (its span records the handle), and the owner follows
    /// the task.
    #[inline(never)]
    fn task_created(&mut self, call: CallId, p: Pending, handle: RawJson) {
        if let Some(t) = &p.trace {
            self.finish_call(t, &p.method, &Ok(handle.clone()));
        }
        self.events.push_back(Event::TaskCreated { call, handle });
    }

    fn on_input_required(&mut self, call: CallId, p: Pending, ir: InputRequiredWire, now: Instant) {
        let rounds = p.rounds + 1;
        if rounds > self.config.max_input_rounds {
            let e = ClientError::TooManyInputRounds { rounds: p.rounds };
            self.complete(call, p.trace, &p.method, Err(e));
            return;
        }
        let d = Deferred {
            call,
            method: p.method,
            params: p.params,
            options: p.options,
            started: now,
            rounds,
            resent: p.resent,
            meta: p.meta,
            deadline: None,
            trace: p.trace,
        };
        let mut d = d;
        let requests: Vec<(String, InputRequest)> =
            ir.input_requests.unwrap_or_default().into_iter().collect();
        if let Some(t) = &mut d.trace {
            t.input_required(requests.len());
        }
        if requests.is_empty() {
            // Nothing to answer: retry at once with the state.
            self.send_user(d, None, ir.request_state, now);
        } else {
            self.awaiting_input.insert(call, (d, ir.request_state));
            self.events
                .push_back(Event::InputRequired { call, requests });
        }
    }
}
