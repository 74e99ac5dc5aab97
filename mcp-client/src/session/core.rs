//! The [`Session`] state machine: its parts, the caller's commands, the
//! input, and the output queues.
//!
//! `Session` composes parts that each keep their own invariants behind
//! private fields: the [`Calls`] (ids, the calls sent, held back and waiting
//! for input, their deadlines), the [`Outbox`] (what waits for the
//! transport, the answers it owes the server counted), the
//! [`ServerRequests`] being answered, the [`EraMemory`] of a hint and what
//! was learned, the [`Renewals`] in a row, and the handshake's [`Phase`].
//! This module is the only one that sees all of them: it routes each input
//! to the parts and carries out the handshake's [`Step`]s.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId};
use mcp_proto::schema::{
    CancelledParams, InputResponses, JsonObject, LoggingLevel, ProgressParams,
};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{Era, ErrorObject, ProtocolVersion, RawJson};

use super::calls::{Calls, Deferred, MRTR_METHODS, Pending, Purpose, Route, Trace};
use super::era::{EraMemory, Start};
use super::handshake::{self, Phase, Readiness, Retries, Step};
use super::meta::{MetaParts, compose_params, protocol_members};
use super::output::Outbox;
use super::renew::Renewals;
use super::result_type::{ResultKind, result_kind};
use super::server_requests::{Admission, ServerRequests};
use super::{CallId, CallOptions, EraHint, Event, Now, ServerInfo, SessionConfig, Transmit};
use crate::error::{ClientError, CloseReason, HandshakeError};
use crate::telemetry::{self, Outcome, Resend};

/// The session state machine. See the [module docs](crate::session).
#[derive(Debug)]
pub struct Session {
    /// Boxed: the session is built on the stack and moved into the
    /// client's shared state; a pointer moves for a fraction of what the
    /// configuration (identity, capabilities: ~540 bytes) costs to copy.
    config: Box<SessionConfig>,
    phase: Phase,
    /// Shared with the client's handle and the remembered era (one copy
    /// per connection).
    server: Option<Arc<ServerInfo>>,
    /// The `_meta` members every modern request carries, encoded once.
    protocol_meta: Option<RawJson>,
    calls: Calls,
    outbox: Outbox,
    events: VecDeque<Event>,
    server_requests: ServerRequests,
    era: EraMemory,
    renewals: Renewals,
    /// The spans and metrics of the session and its calls.
    telemetry: telemetry::Conn,
}

impl Session {
    /// A new session. Call [`start`](Session::start) to begin negotiating.
    pub fn new(config: SessionConfig) -> Self {
        Self::with_config(Box::new(config))
    }

    /// [`Session::new`] with the configuration already boxed (the client's
    /// builder keeps it so).
    pub(crate) fn with_config(mut config: Box<SessionConfig>) -> Self {
        // Capabilities that declare the tasks extension already get task
        // handles followed.
        if config
            .capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(mcp_proto::schema::TASKS_EXTENSION))
        {
            config.tasks_extension = true;
        }
        Session {
            telemetry: telemetry::Conn::new(config.endpoint.clone(), config.record_tool_content),
            outbox: Outbox::new(config.max_outbound_backlog),
            server_requests: ServerRequests::new(config.max_server_requests),
            renewals: Renewals::new(config.max_session_renewals),
            config,
            phase: Phase::Idle,
            server: None,
            protocol_meta: None,
            calls: Calls::default(),
            events: VecDeque::new(),
            era: EraMemory::new(),
        }
    }

    /// Starts negotiation: queues the `server/discover` probe or `initialize`.
    pub fn start(&mut self, now: Instant) {
        self.start_with_hint(now, None);
    }

    /// Starts negotiation using what an earlier connection to the same server
    /// learned (see the [module docs](crate::session#remembered-eras)). A hint that does
    /// not fit [`SessionConfig::version`] (another era, another pinned
    /// revision) is ignored.
    pub fn start_with_hint(&mut self, now: Instant, hint: Option<EraHint>) {
        if !matches!(self.phase, Phase::Idle) {
            return;
        }
        self.telemetry.start_session();
        let step = match self.era.start(hint, self.config.version, now) {
            Start::Detect => handshake::detect(&self.config),
            Start::Legacy(v) => Step::Initialize {
                offered: v,
                detected: true,
                late_probe: None,
                retries: Retries::default(),
            },
            Start::Probe(v) => Step::Probe(v, Retries::default()),
            Start::Ready(server) => return self.become_ready(server, now),
        };
        self.take(step, now);
    }

    /// The negotiated server, once [`Event::Ready`] was emitted.
    pub fn server(&self) -> Option<&ServerInfo> {
        self.server.as_deref()
    }

    /// The negotiated server, shared (the client's handle keeps the same copy).
    #[cfg(any(test, feature = "tokio"))]
    pub(crate) fn server_shared(&self) -> Option<&Arc<ServerInfo>> {
        self.server.as_ref()
    }

    /// What this session learned about the server's era, to remember for the
    /// next connection ([`start_with_hint`](Session::start_with_hint)). Set
    /// when [`Event::Ready`] is emitted after detection (the probe, or its
    /// fallback to `initialize`) or a hint that held; `None` before, when the
    /// era was only chosen by [`SessionConfig::version`] (a legacy pin says
    /// nothing about whether the server is also modern), and after a hint
    /// failed until detection finishes.
    pub fn learned_era(&self) -> Option<&EraHint> {
        self.era.learned()
    }

    /// Whether the session is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed(_))
    }

    /// Why the session closed, once it has.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match &self.phase {
            Phase::Closed(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether [`Event::Ready`] was emitted and the session has not started
    /// negotiating again (after an expired HTTP session) or closed since.
    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Ready(Readiness::Announced))
    }

    /// Whether the session takes more input now. `false` while
    /// [`SessionConfig::max_outbound_backlog`] answers to the server's
    /// requests (its pings included) wait for the transport: the server is not reading what it asked for, so
    /// its owner stops reading from it until the transport takes them
    /// (backpressure instead of a queue that grows with what the server sends).
    pub fn accepts_input(&self) -> bool {
        self.outbox.accepts_input()
    }

    /// The session's configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Number of requests awaiting a response (for tests and metrics).
    pub fn in_flight(&self) -> usize {
        self.calls.in_flight()
    }

    /// Sets the minimum log level. In the modern era it is carried by every
    /// later request's `_meta`; in the legacy era, send `logging/setLevel` yourself.
    pub fn set_log_level(&mut self, level: Option<LoggingLevel>) {
        self.config.log_level = level;
        if let Some(v) = self.version().filter(|v| v.era() == Era::Modern) {
            self.protocol_meta = protocol_members(&self.config, v);
        }
    }

    /// The `_meta` members every modern request carries.
    #[cfg(test)]
    pub(super) fn protocol_meta(&self) -> Option<&RawJson> {
        self.protocol_meta.as_ref()
    }

    fn version(&self) -> Option<ProtocolVersion> {
        self.server.as_ref().map(|s| s.protocol_version)
    }

    // ---- commands -------------------------------------------------------

    /// Issues a request under the caller-chosen handle `call` (unique among the
    /// caller's live calls). `params` must be a JSON object (or `None`). The
    /// outcome arrives as [`Event::Completed`] for `call`.
    pub fn request(
        &mut self,
        call: CallId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
        options: CallOptions,
        now: Instant,
    ) -> Result<(), ClientError> {
        self.request_with_meta(call, method, params, None, options, now)
    }

    /// Like [`request`](Self::request), with `_meta` members of the
    /// caller's own, composed with the protocol's each time the request goes
    /// out (see the [module docs](crate::session#meta)).
    #[inline]
    pub fn request_with_meta(
        &mut self,
        call: CallId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
        meta: Option<JsonObject>,
        options: CallOptions,
        now: Instant,
    ) -> Result<(), ClientError> {
        self.request_in(call, method.into(), params, meta, options, None, now)
    }

    /// Like [`request_with_meta`](Self::request_with_meta), recorded on an
    /// application's span (such as an agent's `execute_tool` span) instead
    /// of a span of its own: see
    /// [`telemetry`](crate::telemetry#an-agents-own-execute_tool-span).
    #[allow(clippy::too_many_arguments)]
    pub fn request_in_span(
        &mut self,
        call: CallId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
        meta: Option<JsonObject>,
        options: CallOptions,
        span: telemetry::AppSpan,
        now: Instant,
    ) -> Result<(), ClientError> {
        self.request_in(call, method.into(), params, meta, options, Some(span), now)
    }

    #[allow(clippy::too_many_arguments)]
    fn request_in(
        &mut self,
        call: CallId,
        method: Cow<'static, str>,
        params: Option<RawJson>,
        meta: Option<JsonObject>,
        options: CallOptions,
        span: Option<telemetry::AppSpan>,
        now: Instant,
    ) -> Result<(), ClientError> {
        if let Phase::Closed(reason) = &self.phase {
            return Err(ClientError::Closed(reason.clone()));
        }
        let trace = self.telemetry.start_call(&method, params.as_ref(), span);
        let d = Deferred::new(call, method, params, meta, options, trace, now);
        if matches!(self.phase, Phase::Ready(_)) {
            self.send(d, None, now);
        } else {
            self.calls.hold(d, &self.config, now);
        }
        Ok(())
    }

    /// Sends a notification (legacy: e.g. `notifications/roots/list_changed`).
    pub fn notify(
        &mut self,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        if let Phase::Closed(reason) = &self.phase {
            return Err(ClientError::Closed(reason.clone()));
        }
        self.outbox.notify(Notification::new(method.into(), params))
    }

    /// Cancels a call: the server is told (`notifications/cancelled`, never for
    /// `initialize`), and a late response is ignored. No event is emitted for it.
    pub fn cancel(&mut self, call: CallId, reason: Option<&str>) {
        let Some((trace, method, sent)) = self.calls.cancel(call) else {
            return;
        };
        if let Some(t) = trace {
            let why = reason.unwrap_or("cancelled");
            t.finish(&self.telemetry, &method, Outcome::Cancelled(why));
        }
        if let Some(id) = sent {
            self.send_cancelled(id, reason.map(str::to_owned));
        }
    }

    /// Answers a server-to-client request (from [`Event::ServerRequest`]).
    /// An answer to a request the server cancelled (or never sent) is not
    /// sent: the spec says a cancelled request gets no response.
    pub fn respond(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>) {
        if self.is_closed() {
            return;
        }
        if !self.server_requests.answered(&id) {
            tracing::debug!(%id, "answer to a server request that was cancelled or never made; not sent");
            return;
        }
        self.outbox.answer(id, result);
    }

    /// Answers an [`Event::InputRequired`]: the call is retried with a new id,
    /// these `inputResponses` and the server's exact `requestState`.
    pub fn provide_input(&mut self, call: CallId, responses: InputResponses, now: Instant) {
        let Some((d, state)) = self.calls.take_awaiting(call) else {
            return;
        };
        if self.is_closed() {
            return;
        }
        self.send(d, Some((Some(responses), state)), now);
    }

    /// Closes the session: every call completes with [`ClientError::Closed`].
    pub fn close(&mut self) {
        self.handle_closed(CloseReason::ClosedByClient);
    }

    // ---- output ---------------------------------------------------------

    /// The next thing to hand to the transport.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.outbox.pop()
    }

    /// Whether anything waits for [`poll_transmit`](Self::poll_transmit).
    pub fn has_transmit(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Input: the transport has flushed everything
    /// [`poll_transmit`](Self::poll_transmit) returned (or failed to, and
    /// said so). The handshake counts as done only then: [`Event::Ready`]
    /// follows the flush of `notifications/initialized` (over HTTP, the
    /// server's acceptance of it), so a caller that waits for readiness
    /// finds a server that knows the session.
    pub fn handle_flushed(&mut self) {
        if self.outbox.is_empty() && matches!(self.phase, Phase::Ready(Readiness::Flushing)) {
            self.phase = Phase::Ready(Readiness::Announced);
            self.events.push_back(Event::Ready);
        }
    }

    /// The next event for the owner.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether events wait for [`poll_event`](Self::poll_event).
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next: at or
    /// before the earliest deadline (`None`: nothing can time out). It may
    /// be earlier than any deadline left (a call that had it completed); a
    /// `handle_timeout` then expires nothing and this moves on. Constant
    /// time: the owner asks after every input.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.calls.poll_timeout()
    }

    /// When the session gives up on the request `id` it sent (its
    /// timeout), if it has one: what the driver tells the transport with
    /// [`Transport::set_request_deadline`](mcp_proto::transport::Transport::set_request_deadline).
    pub fn request_deadline(&self, id: &RequestId) -> Option<Instant> {
        self.calls.deadline(id)
    }

    /// What the driver needs as it hands request `id` to the transport:
    /// its deadline ([`request_deadline`](Self::request_deadline)) and its
    /// telemetry, whose span the transport works in meanwhile.
    #[cfg(feature = "tokio")]
    #[inline]
    pub(crate) fn sending(&self, id: &RequestId) -> (Option<Instant>, Option<&telemetry::Call>) {
        self.calls.sending(id)
    }

    // ---- input ----------------------------------------------------------

    /// Feeds one message the transport received at `now` (an [`Instant`],
    /// or a function that reads the clock: see [`Now`]).
    pub fn handle_message(&mut self, msg: Message, now: impl Now) {
        if self.is_closed() {
            return;
        }
        match msg {
            Message::Response(r) => self.on_answer(r.id, Ok(r.result), now),
            Message::Error(e) => match e.id {
                Some(id) => self.on_answer(id, Err(e.error), now),
                None => {
                    tracing::warn!(error = %e.error, "server sent an error response without an id; dropped")
                }
            },
            Message::Notification(n) => self.on_notification(n, now.now()),
            Message::Request(r) => match self.server_requests.admit(&r) {
                Admission::Owner => self.events.push_back(Event::ServerRequest(r)),
                Admission::Answer(answer) => self.outbox.answer(r.id, answer),
            },
            _ => {}
        }
    }

    /// Feeds an error from the transport's receive side.
    pub fn handle_transport_error(&mut self, err: TransportError, now: Instant) {
        if self.is_closed() {
            return;
        }
        if let Some((id, code)) = err.refused_request() {
            // The server waits for an answer to its request: JSON-RPC's
            // error for what was wrong with it, the cause as its message.
            let why = match err.cause() {
                Some(c) => mcp_proto::error::chain(c).to_string(),
                None => err.to_string(),
            };
            tracing::warn!(%id, code = code.0, error = %why, "the server sent a request that could not be read; answered with an error");
            let error = ErrorObject::new(code, why);
            let id = id.clone();
            self.outbox.answer(id.clone(), Err(error.clone()));
            self.events
                .push_back(Event::ServerRequestRefused { id, error });
        } else if err.is_unknown_answer() {
            self.fail_every_waiting_call(&err, now);
        } else if let Some(id) = err.request_id().cloned() {
            self.fail_request(&id, err, now);
        } else if err.kind() == TransportErrorKind::SessionExpired {
            self.on_session_lost(err, now);
        } else if err.is_terminal() {
            self.handle_closed(CloseReason::Transport(err));
        } else {
            tracing::warn!(error = %mcp_proto::error::chain(&err), "skipped an undecodable message from the server");
        }
    }

    /// The transport's receive side ended.
    pub fn handle_closed(&mut self, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let err = ClientError::Closed(reason.clone());
        self.phase = Phase::Closed(reason.clone());
        self.server_requests.clear();
        let (handshake, calls) = self.calls.drain();
        for p in handshake {
            let (trace, method) = p.end();
            self.finish(trace, &method, Outcome::Failed(&err));
        }
        for (call, trace, method) in calls {
            self.complete(call, trace, &method, Err(err.clone()));
        }
        self.telemetry.closed(&reason);
        self.events.push_back(Event::Closed(reason));
    }

    /// Expires every deadline at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.is_closed() {
            self.calls.disarm();
            return;
        }
        self.expire(now);
        self.calls.rearm();
    }

    fn expire(&mut self, now: Instant) {
        for id in self.calls.expired(now) {
            let Some(mut p) = self.calls.remove(&id) else {
                continue;
            };
            let after = now.saturating_duration_since(p.started());
            let method = p.method().to_owned();
            let timeout = || ClientError::Timeout {
                method: method.clone(),
                after,
            };
            match p.purpose() {
                Purpose::Probe => {
                    self.finish(p.take_trace(), p.method(), Outcome::Failed(&timeout()));
                    tracing::debug!(
                        "server/discover probe got no answer; falling back to initialize"
                    );
                    let retries = match self.phase {
                        Phase::Probing(retries) => retries,
                        _ => Retries::default(),
                    };
                    let cause = HandshakeError::Timeout {
                        method: "server/discover",
                        after,
                    };
                    // A slow server may still answer it: that answer counts.
                    let step = handshake::probe_failed(&self.config, retries, cause, Some(id));
                    self.take(step, now);
                }
                Purpose::Initialize => {
                    self.finish(p.take_trace(), p.method(), Outcome::Failed(&timeout()));
                    self.handle_closed(CloseReason::Handshake(HandshakeError::Timeout {
                        method: "initialize",
                        after: self.config.handshake_timeout,
                    }));
                    return;
                }
                Purpose::User(call) => {
                    self.send_cancelled(id, Some("timeout".into()));
                    let e = timeout();
                    let (trace, method) = p.end();
                    self.complete(call, trace, &method, Err(e));
                }
            }
        }
        // Calls still waiting for the session to (re)start: never sent.
        while let Some(d) = self.calls.take_expired_held(now) {
            let after = now.saturating_duration_since(d.started());
            let (call, trace, method) = d.end();
            let e = ClientError::Timeout {
                method: method.to_string(),
                after,
            };
            self.complete(call, trace, &method, Err(e));
        }
    }

    /// A response (or error response) to the request `id`.
    fn on_answer(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>, now: impl Now) {
        let Some(p) = self.calls.remove(&id) else {
            if let Phase::Initializing {
                late_probe: late @ Some(_),
                ..
            } = &mut self.phase
                && late.as_ref() == Some(&id)
            {
                *late = None;
                self.on_late_probe(result, now.now());
                return;
            }
            tracing::debug!(%id, "response for an unknown, cancelled or already answered request; dropped");
            return;
        };
        match p.purpose() {
            Purpose::Probe => {
                self.record_handshake_answer(p, &result);
                let retries = match self.phase {
                    Phase::Probing(retries) => retries,
                    _ => Retries::default(),
                };
                let now = now.now();
                let step = handshake::probe_answered(&self.config, retries, result, now);
                self.take(step, now);
            }
            Purpose::Initialize => {
                self.record_handshake_answer(p, &result);
                let Phase::Initializing {
                    offered,
                    detected,
                    retries,
                    ..
                } = self.phase
                else {
                    return;
                };
                let step = handshake::initialize_answered(
                    &self.config,
                    offered,
                    detected,
                    retries,
                    result,
                );
                self.take(step, now.now());
            }
            Purpose::User(call) => self.on_call_answer(call, p, result, now),
        }
    }

    /// A user call was answered.
    #[inline]
    fn on_call_answer(
        &mut self,
        call: CallId,
        p: Pending,
        result: Result<RawJson, ErrorObject>,
        now: impl Now,
    ) {
        // The session in use works: a loss later starts the count of
        // sessions ended in a row again.
        self.renewals.answered();
        let result = match result {
            Ok(raw) => {
                self.era.confirmed();
                raw
            }
            Err(e) => {
                if self.retries_under_hint(call, &p, &e.to_string()) {
                    self.requeue(call, p, now.now());
                    return;
                }
                let (trace, method) = p.end();
                self.complete(call, trace, &method, Err(ClientError::Rpc(e)));
                return;
            }
        };
        let modern = self.version().is_some_and(|v| v.era() == Era::Modern);
        if modern && MRTR_METHODS.contains(&p.method()) {
            match result_kind(&result) {
                ResultKind::InputRequired(ir) => {
                    self.on_input_required(call, p, ir, now.now());
                    return;
                }
                // The one method the tasks extension covers.
                ResultKind::Task if self.config.tasks_extension && p.method() == "tools/call" => {
                    self.task_created(call, p, result);
                    return;
                }
                ResultKind::Task | ResultKind::Complete => {}
            }
        }
        let (trace, method) = p.end();
        self.complete(call, trace, &method, Ok(result));
    }

    /// The server answered call `call` with a task handle: the call ends
    /// for the session (its span records the handle), and the owner follows
    /// the task.
    #[inline(never)]
    fn task_created(&mut self, call: CallId, p: Pending, handle: RawJson) {
        let (trace, method) = p.end();
        self.finish(trace, &method, Outcome::Answer(&handle));
        self.events.push_back(Event::TaskCreated { call, handle });
    }

    fn on_input_required(
        &mut self,
        call: CallId,
        p: Pending,
        ir: super::result_type::InputRequired,
        now: Instant,
    ) {
        if p.rounds() + 1 > self.config.max_input_rounds {
            let e = ClientError::TooManyInputRounds { rounds: p.rounds() };
            let (trace, method) = p.end();
            self.complete(call, trace, &method, Err(e));
            return;
        }
        let (requests, state) = ir.into_parts();
        let d = p.into_round(call, requests.len(), now);
        if requests.is_empty() {
            // Nothing to answer: retry at once with the state.
            self.send(d, Some((None, state)), now);
        } else {
            self.calls.await_input(d, state);
            self.events
                .push_back(Event::InputRequired { call, requests });
        }
    }

    /// See [`handshake::late_probe_wins`].
    fn on_late_probe(&mut self, result: Result<RawJson, ErrorObject>, now: Instant) {
        if !self.calls.initialize_sent() || !handshake::late_probe_wins(&result) {
            return;
        }
        let Phase::Initializing { retries, .. } = self.phase else {
            return;
        };
        self.calls.forget_initialize();
        let step = handshake::probe_answered(&self.config, retries, result, now);
        self.take(step, now);
    }

    fn on_notification(&mut self, n: Notification, now: Instant) {
        if n.method == "notifications/cancelled" {
            if let Some(p) = n
                .params
                .as_ref()
                .and_then(|raw| serde_json::from_str::<CancelledParams>(raw.get()).ok())
            {
                if self.server_requests.cancelled(&p.request_id) {
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
                match self.calls.progress(&p.progress_token, &self.config, now) {
                    Some((call, trace)) => {
                        if let Some(t) = trace {
                            t.progress(&p);
                        }
                        self.events.push_back(Event::Progress { call, progress: p });
                    }
                    None => {
                        tracing::debug!(token = %p.progress_token, "progress for an unknown or finished request; dropped");
                    }
                }
                return;
            }
        }
        self.events.push_back(Event::Notification(n));
    }

    /// The request `id` failed in the transport (or its answer was dropped).
    fn fail_request(&mut self, id: &RequestId, err: TransportError, now: Instant) {
        let Some(mut p) = self.calls.remove(id) else {
            tracing::debug!(%id, error = %mcp_proto::error::chain(&err), "transport error for an unknown request; dropped");
            return;
        };
        // Credentials are refused whatever the revision: asking again with
        // `initialize` would only run the authorization again (a second
        // browser login).
        let unauthorized = err.kind() == TransportErrorKind::Unauthorized;
        // A server that refused the probe for now (429/503, past what the
        // transport retries) said nothing about its era.
        let throttled = err.kind() == TransportErrorKind::Throttled;
        if !matches!(p.purpose(), Purpose::User(_)) {
            let e = ClientError::Transport(err.clone());
            self.finish(p.take_trace(), p.method(), Outcome::Failed(&e));
        }
        match p.purpose() {
            Purpose::Probe if unauthorized || throttled => {
                self.handle_closed(CloseReason::Transport(err));
            }
            Purpose::Probe => {
                tracing::debug!(error = %mcp_proto::error::chain(&err), "server/discover probe failed in the transport; falling back to initialize");
                let retries = match self.phase {
                    Phase::Probing(retries) => retries,
                    _ => Retries::default(),
                };
                let cause = HandshakeError::Transport {
                    method: "server/discover",
                    error: err,
                };
                let step = handshake::probe_failed(&self.config, retries, cause, None);
                self.take(step, now);
            }
            Purpose::Initialize => {
                if self.era.trusting_legacy()
                    && err.kind() != TransportErrorKind::Closed
                    && !unauthorized
                {
                    let why = format!(
                        "initialize failed in the transport: {}",
                        mcp_proto::error::chain(&err)
                    );
                    self.redetect(&why, now);
                } else {
                    self.handle_closed(CloseReason::Transport(err));
                }
            }
            Purpose::User(call) if err.is_dropped_answer() => {
                // The server answered: nothing to retry, no era to doubt.
                let e = ClientError::AnswerDropped {
                    method: p.method().to_owned(),
                    error: err,
                };
                let (trace, method) = p.end();
                self.complete(call, trace, &method, Err(e));
            }
            Purpose::User(call) => {
                let why = mcp_proto::error::chain(&err).to_string();
                if self.retries_under_hint(call, &p, &why) {
                    self.requeue(call, p, now);
                } else if err.kind() == TransportErrorKind::SessionExpired && p.may_resend() {
                    self.resend_after_expiry(call, p, now);
                } else {
                    let (trace, method) = p.end();
                    self.complete(call, trace, &method, Err(ClientError::Transport(err)));
                }
            }
        }
    }

    /// A dropped message that may have answered any pending request (its id
    /// could not be learned): every call waiting for an answer fails with
    /// it, since any of them may have been the one and none would ever hear
    /// otherwise (see `mcp-transport-stdio`'s codec docs). A pending
    /// handshake request fails as if its own answer had been dropped.
    fn fail_every_waiting_call(&mut self, err: &TransportError, now: Instant) {
        tracing::warn!(error = %mcp_proto::error::chain(err), "a dropped message may have answered any pending request; failing them all");
        let (calls, handshake) = self.calls.waiting_for_answers();
        for (id, call) in calls {
            if let Some(p) = self.calls.remove(&id) {
                let e = ClientError::AnswerDropped {
                    method: p.method().to_owned(),
                    error: err.clone(),
                };
                let (trace, method) = p.end();
                self.complete(call, trace, &method, Err(e));
            }
        }
        if let Some(id) = handshake {
            self.fail_request(&id, err.clone(), now);
        }
    }

    // ---- the handshake --------------------------------------------------

    /// Carries out what the handshake decided.
    fn take(&mut self, step: Step, now: Instant) {
        match step {
            Step::Probe(v, retries) => self.send_probe(v, retries, now),
            Step::Initialize {
                offered,
                detected,
                late_probe,
                retries,
            } => self.send_initialize(offered, detected, late_probe, retries, now),
            Step::Modern {
                server,
                fresh_until,
            } => {
                let server = Arc::new(server);
                self.era.learn(Some(EraHint::Modern {
                    server: server.clone(),
                    fresh_until,
                }));
                self.become_ready(server, now);
            }
            Step::Legacy { server, detected } => {
                let v = server.protocol_version;
                // The transport must leave the probe's modern mode before it
                // sends `notifications/initialized` (HTTP: session id,
                // version header, standalone GET stream).
                self.outbox.protocol_version(v);
                self.outbox
                    .notification(Notification::new("notifications/initialized", None));
                self.era.learn(detected.then_some(EraHint::Legacy(v)));
                self.become_ready(Arc::new(server), now);
            }
            Step::Failed(why) => {
                // A remembered legacy era that the server refuses: detect again.
                if self.era.trusting_legacy() {
                    self.redetect(&why.to_string(), now);
                } else {
                    self.handle_closed(CloseReason::Handshake(why));
                }
            }
            Step::Close(reason) => self.handle_closed(reason),
        }
    }

    fn send_probe(&mut self, v: ProtocolVersion, retries: Retries, now: Instant) {
        self.phase = Phase::Probing(retries);
        self.protocol_meta = protocol_members(&self.config, v);
        self.outbox.protocol_version(v);
        let id = self.calls.next_id();
        let deadline = now + handshake::probe_timeout(&self.config);
        let mut trace = self.telemetry.start_handshake("server/discover");
        if let Some(t) = &mut trace {
            t.sent(&id, Some(v));
        }
        let params = compose_params(
            None,
            &MetaParts::default()
                .protocol(self.protocol_meta.as_ref())
                .trace(trace.as_ref().and_then(|t| t.trace_meta())),
        )
        .unwrap_or_else(RawJson::empty_object);
        self.outbox
            .request(Request::new(id.clone(), "server/discover", Some(params)));
        let pending = Pending::handshake(Purpose::Probe, "server/discover", now, deadline, trace);
        self.calls.insert(id, pending);
    }

    fn send_initialize(
        &mut self,
        v: ProtocolVersion,
        detected: bool,
        late_probe: Option<RequestId>,
        retries: Retries,
        now: Instant,
    ) {
        self.phase = Phase::Initializing {
            offered: v,
            detected,
            late_probe,
            retries,
        };
        let raw = match handshake::initialize_params(&self.config, v) {
            Ok(raw) => raw,
            Err(e) => return self.handle_closed(CloseReason::Handshake(e)),
        };
        let id = self.calls.next_id();
        let mut trace = self.telemetry.start_handshake("initialize");
        if let Some(t) = &mut trace {
            t.sent(&id, Some(v));
        }
        let raw = match trace.as_ref().and_then(|t| t.trace_meta()) {
            Some(meta) => {
                compose_params(Some(&raw), &MetaParts::default().trace(Some(meta))).unwrap_or(raw)
            }
            None => raw,
        };
        self.outbox
            .request(Request::new(id.clone(), "initialize", Some(raw)));
        let deadline = now + self.config.handshake_timeout;
        let pending = Pending::handshake(Purpose::Initialize, "initialize", now, deadline, trace);
        self.calls.insert(id, pending);
    }

    fn become_ready(&mut self, info: Arc<ServerInfo>, now: Instant) {
        let v = info.protocol_version;
        self.protocol_meta = if v.era() == Era::Modern {
            protocol_members(&self.config, v)
        } else {
            // Built for the `server/discover` probe; a legacy session never
            // sends it again (a probe sent later builds it anew).
            None
        };
        self.outbox.protocol_version(v);
        self.telemetry.ready(v);
        self.server = Some(info);
        self.era.ready();
        // What the handshake queued (the legacy `notifications/initialized`)
        // must reach the server before the session counts as ready.
        let readiness = if self.outbox.holds_no_message() {
            self.events.push_back(Event::Ready);
            Readiness::Announced
        } else {
            Readiness::Flushing
        };
        self.phase = Phase::Ready(readiness);
        self.send_held(now);
    }

    /// A remembered era proved wrong: forget it and detect the era from
    /// scratch, once.
    fn redetect(&mut self, why: &str, now: Instant) {
        tracing::info!(
            why,
            "the remembered era of this server no longer holds; detecting it again"
        );
        self.era.forget();
        self.server = None;
        let step = handshake::detect(&self.config);
        self.take(step, now);
    }

    /// Whether a failed call sent under an unconfirmed modern hint is to be
    /// re-sent after the era is detected again.
    fn retries_under_hint(&self, call: CallId, p: &Pending, why: &str) -> bool {
        let retry = self.era.retries_failed_call(p.hinted(), p.may_resend());
        if retry && self.era.unconfirmed() {
            tracing::debug!(?call, why, "a call failed under a remembered modern era");
        }
        retry
    }

    /// Puts a call that failed under a remembered era back in the queue, to
    /// be re-sent once, and starts detecting the era again if that has not
    /// started.
    fn requeue(&mut self, call: CallId, p: Pending, now: Instant) {
        let why = format!("{} failed", p.method());
        self.calls
            .put_back(p.into_resend(call, Resend::EraRedetected));
        if self.era.unconfirmed() {
            self.redetect(&why, now);
        }
    }

    // ---- a session the server ended (see `renew.rs`) --------------------

    /// The transport lost the session (not scoped to a request).
    fn on_session_lost(&mut self, err: TransportError, now: Instant) {
        // During a handshake (this very renewal, or the first) there is no
        // session in use to replace: it carries on.
        if !matches!(self.phase, Phase::Ready(_)) {
            tracing::debug!(error = %mcp_proto::error::chain(&err), "session lost while a handshake is under way");
            return;
        }
        let Some(v) = self.version() else {
            return;
        };
        if v.era() == Era::Modern {
            // 2026-07-28 has no sessions: nothing to renew.
            tracing::warn!(error = %mcp_proto::error::chain(&err), "the transport reported a lost session in the 2026-07-28 era; ignored");
            return;
        }
        let renewal = match self.renewals.next() {
            Ok(n) => n,
            Err(renewals) => {
                return self.handle_closed(CloseReason::SessionsLost {
                    renewals,
                    error: err,
                });
            }
        };
        tracing::info!(error = %mcp_proto::error::chain(&err), renewal, "the server ended the session; starting a new one");
        self.telemetry.renewed(renewal);
        // A new session with the revision in use; calls made meanwhile wait.
        let detected = matches!(self.era.learned(), Some(EraHint::Legacy(_)));
        self.server = None;
        self.send_initialize(v, detected, None, Retries::default(), now);
    }

    /// A call the server did not process because its session was gone:
    /// re-sent once in the new session (the loss came first, so the new
    /// session is starting or has started).
    fn resend_after_expiry(&mut self, call: CallId, p: Pending, now: Instant) {
        tracing::info!(method = %p.method(), "not processed in the session the server ended; re-sending it in the new one");
        self.calls
            .put_back(p.into_resend(call, Resend::SessionExpired));
        if matches!(self.phase, Phase::Ready(_)) {
            // The new session is ready already: it goes now.
            self.send_held(now);
        }
    }

    // ---- calls ----------------------------------------------------------

    /// Sends a user call in the session in use.
    #[inline]
    fn send(
        &mut self,
        d: Deferred,
        input: Option<(Option<InputResponses>, Option<String>)>,
        now: Instant,
    ) {
        let route = Route::new(
            self.version(),
            self.protocol_meta.as_ref(),
            self.era.unconfirmed(),
        );
        let request = self.calls.send(d, input, route, &self.config, now);
        self.outbox.request(request);
    }

    /// Sends the calls held back, in order.
    fn send_held(&mut self, now: Instant) {
        while let Some(d) = self.calls.next_held() {
            self.send(d, None, now);
        }
    }

    fn send_cancelled(&mut self, id: RequestId, reason: Option<String>) {
        let params = CancelledParams::new(id, reason);
        if let Ok(raw) = RawJson::from_value(&params) {
            self.outbox
                .notification(Notification::new("notifications/cancelled", Some(raw)));
        }
    }

    /// A user call ended: its telemetry records the outcome, its owner is told.
    /// Inlined: only the check for telemetry and the event on the way of
    /// every answer; the recording is out of line.
    #[inline(always)]
    fn complete(
        &mut self,
        call: CallId,
        trace: Trace,
        method: &str,
        result: Result<RawJson, ClientError>,
    ) {
        if trace.is_some() {
            self.finish(trace, method, Outcome::of(&result));
        }
        self.events.push_back(Event::Completed { call, result });
    }

    /// A request's telemetry records how it ended.
    #[inline(never)]
    fn finish(&self, trace: Trace, method: &str, outcome: Outcome<'_>) {
        if let Some(t) = trace {
            t.finish(&self.telemetry, method, outcome);
        }
    }

    /// A handshake request was answered: its telemetry records how.
    fn record_handshake_answer(&self, p: Pending, result: &Result<RawJson, ErrorObject>) {
        let (trace, method) = p.end();
        match result {
            Ok(raw) => self.finish(trace, &method, Outcome::Answer(raw)),
            Err(e) => {
                let e = ClientError::Rpc(e.clone());
                self.finish(trace, &method, Outcome::Failed(&e));
            }
        }
    }
}
