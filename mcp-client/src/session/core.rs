//! The [`Session`] state machine: its parts, the caller's commands, the
//! input routed to the parts, and the output.
//!
//! `Session` composes parts that each keep their own invariants behind
//! private fields, and is the only module that sees them all: the
//! [`Negotiation`] (the phase, the server, the remembered era, renewals,
//! and carrying out the handshake), the [`Calls`] (ids, the calls sent,
//! held back and waiting for input, their deadlines), the [`Output`] (what
//! waits for the transport, with the answers owed to the server counted;
//! the events; the telemetry), and the [`ServerRequests`] being answered.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use mcp_proto::jsonrpc::{Message, Notification, RequestId};
use mcp_proto::schema::{
    CancelledParams, InputResponses, JsonObject, LoggingLevel, ProgressParams,
};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{ErrorObject, RawJson};

use super::calls::{Calls, Deferred, MRTR_METHODS, Pending, Purpose};
use super::handshake::{Phase, Readiness};
use super::negotiation::{Closing, Negotiation};
use super::output::Output;
use super::result_type::{InputRequired, ResultKind, result_kind};
use super::server_requests::{Admission, ServerRequests};
use super::{CallId, CallOptions, EraHint, Event, Now, ServerInfo, SessionConfig, Transmit};
use crate::error::{ClientError, CloseReason, HandshakeError};
use crate::telemetry::{self, Outcome};

/// The parts the negotiation works with (see
/// [`Parts`](super::negotiation::Parts)), borrowed beside it.
macro_rules! parts {
    ($session:ident) => {
        (&mut $session.calls, &mut $session.output, &*$session.config)
    };
}

/// The session state machine. See the [module docs](crate::session).
#[derive(Debug)]
pub struct Session {
    /// Boxed: the session is built on the stack and moved into the
    /// client's shared state; a pointer moves for a fraction of what the
    /// configuration (identity, capabilities: ~540 bytes) costs to copy.
    config: Box<SessionConfig>,
    negotiation: Negotiation,
    calls: Calls,
    output: Output,
    server_requests: ServerRequests,
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
        let telemetry = telemetry::Conn::new(config.endpoint.clone(), config.record_tool_content);
        Session {
            output: Output::new(config.max_outbound_backlog, telemetry),
            server_requests: ServerRequests::new(config.max_server_requests),
            negotiation: Negotiation::new(&config),
            calls: Calls::default(),
            config,
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
        let closing = self.negotiation.start(hint, parts!(self), now);
        self.closing(closing);
    }

    /// Closes the session if the negotiation cannot go on.
    #[inline]
    fn closing(&mut self, closing: Closing) {
        if let Err(reason) = closing {
            self.handle_closed(reason);
        }
    }

    /// The negotiated server, once [`Event::Ready`] was emitted.
    pub fn server(&self) -> Option<&ServerInfo> {
        self.negotiation.server().map(|s| &**s)
    }

    /// The negotiated server, shared (the client's handle keeps the same copy).
    #[cfg(any(test, feature = "tokio"))]
    pub(crate) fn server_shared(&self) -> Option<&std::sync::Arc<ServerInfo>> {
        self.negotiation.server()
    }

    /// What this session learned about the server's era, to remember for the
    /// next connection ([`start_with_hint`](Session::start_with_hint)). Set
    /// when [`Event::Ready`] is emitted after detection (the probe, or its
    /// fallback to `initialize`) or a hint that held; `None` before, when the
    /// era was only chosen by [`SessionConfig::version`] (a legacy pin says
    /// nothing about whether the server is also modern), and after a hint
    /// failed until detection finishes.
    pub fn learned_era(&self) -> Option<&EraHint> {
        self.negotiation.learned()
    }

    /// Whether the session is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self.negotiation.phase(), Phase::Closed(_))
    }

    /// Why the session closed, once it has.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match self.negotiation.phase() {
            Phase::Closed(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether [`Event::Ready`] was emitted and the session has not started
    /// negotiating again (after an expired HTTP session) or closed since.
    pub fn is_ready(&self) -> bool {
        matches!(self.negotiation.phase(), Phase::Ready(Readiness::Announced))
    }

    /// Whether the session takes more input now. `false` while
    /// [`SessionConfig::max_outbound_backlog`] answers to the server's
    /// requests (its pings included) wait for the transport: the server is not reading what it asked for, so
    /// its owner stops reading from it until the transport takes them
    /// (backpressure instead of a queue that grows with what the server sends).
    pub fn accepts_input(&self) -> bool {
        self.output.accepts_input()
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
        self.negotiation.log_level_changed(&self.config);
    }

    /// The `_meta` members every modern request carries.
    #[cfg(test)]
    pub(super) fn protocol_meta(&self) -> Option<&RawJson> {
        self.negotiation.protocol_meta()
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
        self.request_in(
            call,
            method.into(),
            params,
            meta,
            options,
            None,
            Some(now),
            now,
        )
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
        self.request_in(
            call,
            method.into(),
            params,
            meta,
            options,
            Some(span),
            Some(now),
            now,
        )
    }

    /// A call of the client's own driver, which writes it: its time starts
    /// when it is written ([`sending`](Self::sending)), not now. `clock`
    /// is read only if the session holds the call back.
    #[cfg(feature = "tokio")]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn request_written(
        &mut self,
        call: CallId,
        method: Cow<'static, str>,
        params: Option<RawJson>,
        meta: Option<JsonObject>,
        options: CallOptions,
        span: Option<telemetry::AppSpan>,
        clock: impl Now,
    ) -> Result<(), ClientError> {
        self.request_in(call, method, params, meta, options, span, None, clock)
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
        now: Option<Instant>,
        clock: impl Now,
    ) -> Result<(), ClientError> {
        if let Some(reason) = self.close_reason() {
            return Err(ClientError::Closed(reason.clone()));
        }
        let trace = self
            .output
            .telemetry()
            .start_call(&method, params.as_ref(), span);
        let d = Deferred::new(call, method, params, meta, options, trace, now);
        if self.negotiation.sends() {
            self.calls_send(d, None, now);
        } else {
            self.calls
                .hold(d, &self.config, now.unwrap_or_else(|| clock.now()));
        }
        Ok(())
    }

    /// Sends a notification (legacy: e.g. `notifications/roots/list_changed`).
    pub fn notify(
        &mut self,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        if let Some(reason) = self.close_reason() {
            return Err(ClientError::Closed(reason.clone()));
        }
        self.output.notify(Notification::new(method.into(), params))
    }

    /// Cancels a call: the server is told (`notifications/cancelled`, never for
    /// `initialize`), and a late response is ignored. No event is emitted for it.
    pub fn cancel(&mut self, call: CallId, reason: Option<&str>) {
        let Some((trace, method, sent)) = self.calls.cancel(call) else {
            return;
        };
        let why = reason.unwrap_or("cancelled");
        self.output.finish(trace, &method, Outcome::Cancelled(why));
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
        self.output.answer(id, result);
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
        self.output.pop_transmit()
    }

    /// Whether anything waits for [`poll_transmit`](Self::poll_transmit).
    pub fn has_transmit(&self) -> bool {
        !self.output.transmit_is_empty()
    }

    /// Input: the transport has flushed everything
    /// [`poll_transmit`](Self::poll_transmit) returned (or failed to, and
    /// said so). The handshake counts as done only then: [`Event::Ready`]
    /// follows the flush of `notifications/initialized` (over HTTP, the
    /// server's acceptance of it), so a caller that waits for readiness
    /// finds a server that knows the session.
    pub fn handle_flushed(&mut self) {
        self.negotiation.flushed(&mut self.output);
    }

    /// The next event for the owner.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.output.pop_event()
    }

    /// Whether events wait for [`poll_event`](Self::poll_event).
    pub fn has_events(&self) -> bool {
        self.output.has_events()
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
    pub(crate) fn sending(
        &mut self,
        id: &RequestId,
        now: impl Now,
    ) -> (Option<Instant>, Option<&telemetry::Call>) {
        self.calls.sending(id, &self.config, now)
    }

    /// Whether a request queued for the transport has no start yet (see
    /// [`request_written`](Self::request_written)).
    #[cfg(feature = "tokio")]
    #[inline]
    pub(crate) fn has_unstamped(&self) -> bool {
        self.calls.has_unstamped()
    }

    /// Starts at `now` the time of every request queued for the transport
    /// that has none yet (the driver, when a pass leaves some unwritten).
    #[cfg(feature = "tokio")]
    pub(crate) fn stamp_unwritten(&mut self, now: Instant) {
        self.calls.stamp(&self.config, now);
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
                Admission::Owner => self.output.event(Event::ServerRequest(r)),
                Admission::Answer(answer) => self.output.answer(r.id, answer),
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
            self.output.answer(id.clone(), Err(error.clone()));
            self.output.event(Event::ServerRequestRefused { id, error });
        } else if err.is_unknown_answer() {
            self.fail_every_waiting_call(&err, now);
        } else if let Some(id) = err.request_id().cloned() {
            self.fail_request(&id, err, now);
        } else if err.kind() == TransportErrorKind::SessionExpired {
            let closing = self.negotiation.session_lost(err, parts!(self), now);
            self.closing(closing);
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
        self.negotiation.close(reason.clone());
        self.server_requests.clear();
        let (handshake, calls) = self.calls.drain();
        for p in handshake {
            let (trace, method) = p.end();
            self.output.finish(trace, &method, Outcome::Failed(&err));
        }
        for (call, trace, method) in calls {
            self.output.complete(call, trace, &method, Err(err.clone()));
        }
        self.output.telemetry().closed(&reason);
        self.output.event(Event::Closed(reason));
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
            let after = p
                .started()
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
            let method = p.method().to_owned();
            let timeout = || ClientError::Timeout {
                method: method.clone(),
                after,
            };
            match p.purpose() {
                Purpose::Probe => {
                    self.output
                        .finish(p.take_trace(), p.method(), Outcome::Failed(&timeout()));
                    tracing::debug!(
                        "server/discover probe got no answer; falling back to initialize"
                    );
                    let cause = HandshakeError::Timeout {
                        method: "server/discover",
                        after,
                    };
                    // A slow server may still answer it: that answer counts.
                    let closing = self
                        .negotiation
                        .probe_failed(cause, Some(id), parts!(self), now);
                    self.closing(closing);
                }
                Purpose::Initialize => {
                    self.output
                        .finish(p.take_trace(), p.method(), Outcome::Failed(&timeout()));
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
                    self.output.complete(call, trace, &method, Err(e));
                }
            }
        }
        // Calls still waiting for the session to (re)start: never sent.
        while let Some(d) = self.calls.take_expired_held(now) {
            let after = d
                .started()
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
            let (call, trace, method) = d.end();
            let e = ClientError::Timeout {
                method: method.to_string(),
                after,
            };
            self.output.complete(call, trace, &method, Err(e));
        }
    }

    /// A response (or error response) to the request `id`.
    fn on_answer(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>, now: impl Now) {
        let Some(p) = self.calls.remove(&id) else {
            if self.negotiation.is_late_probe(&id) {
                let now = now.now();
                let closing = self
                    .negotiation
                    .late_probe_answered(result, parts!(self), now);
                return self.closing(closing);
            }
            tracing::debug!(%id, "response for an unknown, cancelled or already answered request; dropped");
            return;
        };
        let closing = match p.purpose() {
            Purpose::Probe => {
                self.record_handshake_answer(p, &result);
                let now = now.now();
                self.negotiation.probe_answered(result, parts!(self), now)
            }
            Purpose::Initialize => {
                self.record_handshake_answer(p, &result);
                let now = now.now();
                self.negotiation
                    .initialize_answered(result, parts!(self), now)
            }
            Purpose::User(call) => return self.on_call_answer(call, p, result, now),
        };
        self.closing(closing);
    }

    /// A user call was answered. Inlined into [`on_answer`](Self::on_answer):
    /// the call's state is not moved again on the way of every answer.
    #[inline(always)]
    fn on_call_answer(
        &mut self,
        call: CallId,
        p: Pending,
        result: Result<RawJson, ErrorObject>,
        now: impl Now,
    ) {
        // The session in use works: a loss later starts the count of
        // sessions ended in a row again.
        self.negotiation.call_answered(result.is_ok());
        let result = match result {
            Ok(raw) => raw,
            Err(e) => {
                if self
                    .negotiation
                    .retries_under_hint(call, &p, &e.to_string())
                {
                    let now = now.now();
                    let closing = self.negotiation.requeue(call, p, parts!(self), now);
                    return self.closing(closing);
                }
                let (trace, method) = p.end();
                self.output
                    .complete(call, trace, &method, Err(ClientError::Rpc(e)));
                return;
            }
        };
        if self.negotiation.modern() && MRTR_METHODS.contains(&p.method()) {
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
        self.output.complete(call, trace, &method, Ok(result));
    }

    /// The server answered call `call` with a task handle: the call ends
    /// for the session (its span records the handle), and the owner follows
    /// the task.
    #[inline(never)]
    fn task_created(&mut self, call: CallId, p: Pending, handle: RawJson) {
        let (trace, method) = p.end();
        self.output.finish(trace, &method, Outcome::Answer(&handle));
        self.output.event(Event::TaskCreated { call, handle });
    }

    fn on_input_required(&mut self, call: CallId, p: Pending, ir: InputRequired, now: Instant) {
        if p.rounds() + 1 > self.config.max_input_rounds {
            let e = ClientError::TooManyInputRounds { rounds: p.rounds() };
            let (trace, method) = p.end();
            self.output.complete(call, trace, &method, Err(e));
            return;
        }
        let (requests, state) = ir.into_parts();
        let d = p.into_round(call, requests.len(), now);
        if requests.is_empty() {
            // Nothing to answer: retry at once with the state.
            self.send(d, Some((None, state)), now);
        } else {
            self.calls.await_input(d, state);
            self.output.event(Event::InputRequired { call, requests });
        }
    }

    fn on_notification(&mut self, n: Notification, now: Instant) {
        if n.method == "notifications/cancelled" {
            if let Some(p) = n
                .params
                .as_ref()
                .and_then(|raw| serde_json::from_str::<CancelledParams>(raw.get()).ok())
            {
                if self.server_requests.cancelled(&p.request_id) {
                    self.output
                        .event(Event::ServerRequestCancelled(p.request_id));
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
                        self.output.event(Event::Progress { call, progress: p });
                    }
                    None => {
                        tracing::debug!(token = %p.progress_token, "progress for an unknown or finished request; dropped");
                    }
                }
                return;
            }
        }
        self.output.event(Event::Notification(n));
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
            self.output
                .finish(p.take_trace(), p.method(), Outcome::Failed(&e));
        }
        match p.purpose() {
            Purpose::Probe if unauthorized || throttled => {
                self.handle_closed(CloseReason::Transport(err));
            }
            Purpose::Probe => {
                tracing::debug!(error = %mcp_proto::error::chain(&err), "server/discover probe failed in the transport; falling back to initialize");
                let cause = HandshakeError::Transport {
                    method: "server/discover",
                    error: err,
                };
                let closing = self
                    .negotiation
                    .probe_failed(cause, None, parts!(self), now);
                self.closing(closing);
            }
            Purpose::Initialize => {
                let closing = self.negotiation.initialize_failed(err, parts!(self), now);
                self.closing(closing);
            }
            Purpose::User(call) if err.is_dropped_answer() => {
                // The server answered: nothing to retry, no era to doubt.
                let e = ClientError::AnswerDropped {
                    method: p.method().to_owned(),
                    error: err,
                };
                let (trace, method) = p.end();
                self.output.complete(call, trace, &method, Err(e));
            }
            Purpose::User(call) => {
                let why = mcp_proto::error::chain(&err).to_string();
                if self.negotiation.retries_under_hint(call, &p, &why) {
                    let closing = self.negotiation.requeue(call, p, parts!(self), now);
                    self.closing(closing);
                } else if err.kind() == TransportErrorKind::SessionExpired && p.may_resend() {
                    self.negotiation
                        .resend_after_expiry(call, p, parts!(self), now);
                } else {
                    let (trace, method) = p.end();
                    self.output
                        .complete(call, trace, &method, Err(ClientError::Transport(err)));
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
                self.output.complete(call, trace, &method, Err(e));
            }
        }
        if let Some(id) = handshake {
            self.fail_request(&id, err.clone(), now);
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
        self.calls_send(d, input, Some(now));
    }

    /// [`send`](Self::send), or with `now` `None` one whose time starts
    /// when it is written.
    #[inline]
    fn calls_send(
        &mut self,
        d: Deferred,
        input: Option<(Option<InputResponses>, Option<String>)>,
        now: Option<Instant>,
    ) {
        let route = self.negotiation.route();
        let request = self.calls.send(d, input, route, &self.config, now);
        self.output.request(request);
    }

    fn send_cancelled(&mut self, id: RequestId, reason: Option<String>) {
        let params = CancelledParams::new(id, reason);
        if let Ok(raw) = RawJson::from_value(&params) {
            self.output
                .notification(Notification::new("notifications/cancelled", Some(raw)));
        }
    }

    /// A handshake request was answered: its telemetry records how.
    fn record_handshake_answer(&self, p: Pending, result: &Result<RawJson, ErrorObject>) {
        let (trace, method) = p.end();
        match result {
            Ok(raw) => self.output.finish(trace, &method, Outcome::Answer(raw)),
            Err(e) => {
                let e = ClientError::Rpc(e.clone());
                self.output.finish(trace, &method, Outcome::Failed(&e));
            }
        }
    }
}
