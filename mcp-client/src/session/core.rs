//! The [`Session`] state machine: its state, the caller's commands and the
//! output queues.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, RequestId, Response};
use mcp_proto::schema::{
    InputResponses, JsonObject, LoggingLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROTOCOL_VERSION,
};
use mcp_proto::{Era, ErrorObject, ProtocolVersion, RawJson};
use serde_json::Value;

use super::calls::{Deferred, Pending, Purpose};
use super::era::HintState;
use super::{CallId, CallOptions, EraHint, Event, IdHash, ServerInfo, SessionConfig, Transmit};
use crate::error::{ClientError, CloseReason};

#[derive(Debug)]
pub(super) enum Phase {
    /// Not started (before the first `start`).
    Idle,
    Probing,
    Initializing {
        offered: ProtocolVersion,
    },
    /// Negotiated: requests go out.
    Ready(Readiness),
    Closed(CloseReason),
}

/// Whether the owner was told the session is ready ([`Event::Ready`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Readiness {
    /// Not yet: [`Event::Ready`] waits until the transport has flushed what
    /// the handshake queued (the legacy `notifications/initialized`; see
    /// [`Session::handle_flushed`]).
    Flushing,
    /// [`Event::Ready`] was emitted.
    Announced,
}

/// The session state machine. See the [module docs](crate::session).
#[derive(Debug)]
pub struct Session {
    /// Boxed: the session is built on the stack and moved into the
    /// client's shared state; a pointer moves for a fraction of what the
    /// configuration (identity, capabilities: ~540 bytes) costs to copy.
    pub(super) config: Box<SessionConfig>,
    pub(super) phase: Phase,
    /// Shared with the client's handle and the remembered era (one copy
    /// per connection).
    pub(super) server: Option<Arc<ServerInfo>>,
    pub(super) next_id: i64,
    pub(super) pending: HashMap<RequestId, Pending, IdHash>,
    /// User requests waiting for `Ready`.
    pub(super) queued: VecDeque<Deferred>,
    /// Calls waiting for the owner's answers to `input_required`.
    pub(super) awaiting_input: HashMap<CallId, (Deferred, Option<String>)>,
    pub(super) transmit: VecDeque<Transmit>,
    pub(super) events: VecDeque<Event>,
    /// The `_meta` members every modern request carries, encoded once (an object).
    pub(super) modern_meta: Option<RawJson>,
    pub(super) hint: HintState,
    /// What this session learned about the server's era (see [`Session::learned_era`]).
    pub(super) learned: Option<EraHint>,
    /// The legacy era was found by detection (a failed probe or a legacy
    /// hint), not only chosen by the caller: only then is it worth remembering.
    pub(super) legacy_detected: bool,
    /// The `server/discover` probe that timed out and fell back to
    /// `initialize`: its late answer still counts (see `on_late_probe`).
    pub(super) late_probe: Option<RequestId>,
    /// The fallback `initialize` was refused as "serving 2026-07-28" and the
    /// probe was sent again (once).
    pub(super) reprobed: bool,
    /// The probe was already sent again after an `UnsupportedProtocolVersion`
    /// rejection: a second one ends the handshake (a server that rejects
    /// what it lists cannot make the client loop).
    pub(super) probe_retried: bool,
    /// The server's requests handed to the owner ([`Event::ServerRequest`])
    /// and not yet answered: at most [`SessionConfig::max_server_requests`].
    pub(super) server_requests: HashSet<RequestId, IdHash>,
    /// At or before the earliest deadline (see [`Session::poll_timeout`]).
    pub(super) next_deadline: Option<Instant>,
    /// Answers to the server's requests in `transmit`: at most
    /// [`SessionConfig::max_outbound_backlog`] before input pauses.
    pub(super) backlog: usize,
    /// New sessions started in a row after the server ended the one in use,
    /// with no call answered since (see `renew.rs`).
    pub(super) renewals: u32,
    /// The spans and metrics of the session and its calls.
    pub(super) telemetry: crate::telemetry::Conn,
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
        let telemetry =
            crate::telemetry::Conn::new(config.endpoint.clone(), config.record_tool_content);
        Session {
            telemetry,
            config,
            phase: Phase::Idle,
            server: None,
            next_id: 0,
            pending: HashMap::default(),
            queued: VecDeque::new(),
            awaiting_input: HashMap::new(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            modern_meta: None,
            hint: HintState::None,
            learned: None,
            legacy_detected: false,
            late_probe: None,
            reprobed: false,
            probe_retried: false,
            server_requests: HashSet::default(),
            backlog: 0,
            next_deadline: None,
            renewals: 0,
        }
    }

    /// Starts negotiation: queues the `server/discover` probe or `initialize`.
    pub fn start(&mut self, now: Instant) {
        self.start_with_hint(now, None);
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
        self.backlog < self.config.max_outbound_backlog
    }

    /// The session's configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Number of requests awaiting a response (for tests and metrics).
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Sets the minimum log level. In the modern era it is carried by every
    /// later request's `_meta`; in the legacy era, send `logging/setLevel` yourself.
    pub fn set_log_level(&mut self, level: Option<LoggingLevel>) {
        self.config.log_level = level;
        if let Some(v) = self.server.as_ref().map(|s| s.protocol_version) {
            if v.era() == Era::Modern {
                self.modern_meta = self.build_modern_meta(v);
            }
        }
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

    /// Like [`request_with_meta`](Self::request_with_meta), recorded on
    /// `span` (an application's span, such as an agent's `execute_tool`
    /// span) instead of a span of its own: see
    /// [`telemetry`](crate::telemetry#an-agents-own-execute_tool-span).
    #[allow(clippy::too_many_arguments)]
    pub fn request_in_span(
        &mut self,
        call: CallId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
        meta: Option<JsonObject>,
        options: CallOptions,
        span: tracing::Span,
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
        span: Option<tracing::Span>,
        now: Instant,
    ) -> Result<(), ClientError> {
        if let Phase::Closed(reason) = &self.phase {
            return Err(ClientError::Closed(reason.clone()));
        }
        let trace = self.telemetry.start_call(&method, params.as_ref(), span);
        let d = Deferred {
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
        };
        if matches!(self.phase, Phase::Ready(_)) {
            self.send_user(d, None, None, now);
        } else {
            // Waiting for the session counts against the caller's timeout.
            let deadline = self.deadlines(&d.options, now, now).0;
            self.note_deadline(deadline);
            self.queued.push_back(Deferred { deadline, ..d });
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
        if self.transmit.len() >= self.config.max_outbound_backlog {
            return Err(ClientError::Busy {
                limit: self.config.max_outbound_backlog,
            });
        }
        self.transmit.push_back(Transmit::Message(
            Notification::new(method.into(), params).into(),
        ));
        Ok(())
    }

    /// Cancels a call: the server is told (`notifications/cancelled`, never for
    /// `initialize`), and a late response is ignored. No event is emitted for it.
    pub fn cancel(&mut self, call: CallId, reason: Option<&str>) {
        let why = reason.unwrap_or("cancelled");
        if let Some((d, _)) = self.awaiting_input.remove(&call) {
            self.cancelled(d.trace, &d.method, why);
            return;
        }
        if let Some(pos) = self.queued.iter().position(|d| d.call == call) {
            if let Some(d) = self.queued.remove(pos) {
                self.cancelled(d.trace, &d.method, why);
            }
            return;
        }
        let id = self
            .pending
            .iter()
            .find(|(_, p)| p.purpose == Purpose::User(call))
            .map(|(id, _)| id.clone());
        if let Some(id) = id {
            if let Some(p) = self.pending.remove(&id) {
                self.cancelled(p.trace, &p.method, why);
            }
            self.send_cancelled(id, reason.map(str::to_owned));
        }
    }

    fn cancelled(&self, trace: Option<Box<crate::telemetry::Call>>, method: &str, why: &str) {
        if let Some(t) = trace {
            t.finish(
                &self.telemetry,
                method,
                crate::telemetry::Outcome::Cancelled(why),
            );
        }
    }

    /// Answers a server-to-client request (from [`Event::ServerRequest`]).
    /// An answer to a request the server cancelled (or never sent) is not
    /// sent: the spec says a cancelled request gets no response.
    pub fn respond(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>) {
        if self.is_closed() {
            return;
        }
        if !self.server_requests.remove(&id) {
            tracing::debug!(%id, "answer to a server request that was cancelled or never made; not sent");
            return;
        }
        self.answer(id, result);
    }

    /// Queues the answer to a server request (it counts against the backlog).
    pub(super) fn answer(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>) {
        let msg: Message = match result {
            Ok(r) => Response::new(id, r).into(),
            Err(e) => ErrorResponse::new(Some(id), e).into(),
        };
        self.backlog += 1;
        self.transmit.push_back(Transmit::Message(msg));
    }

    /// Answers an [`Event::InputRequired`]: the call is retried with a new id,
    /// these `inputResponses` and the server's exact `requestState`.
    pub fn provide_input(&mut self, call: CallId, responses: InputResponses, now: Instant) {
        let Some((d, state)) = self.awaiting_input.remove(&call) else {
            return;
        };
        if self.is_closed() {
            return;
        }
        self.send_user(d, Some(responses), state, now);
    }

    /// Closes the session: every call completes with [`ClientError::Closed`].
    pub fn close(&mut self) {
        self.handle_closed(CloseReason::ClosedByClient);
    }

    // ---- output ---------------------------------------------------------

    /// The next thing to hand to the transport.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        let t = self.transmit.pop_front()?;
        if let Transmit::Message(Message::Response(_) | Message::Error(_)) = &t {
            self.backlog = self.backlog.saturating_sub(1);
        }
        Some(t)
    }

    /// Whether anything waits for [`poll_transmit`](Self::poll_transmit).
    pub fn has_transmit(&self) -> bool {
        !self.transmit.is_empty()
    }

    /// Input: the transport has flushed everything
    /// [`poll_transmit`](Self::poll_transmit) returned (or failed to, and
    /// said so). The handshake counts as done only then: [`Event::Ready`]
    /// follows the flush of `notifications/initialized` (over HTTP, the
    /// server's acceptance of it), so a caller that waits for readiness
    /// finds a server that knows the session.
    pub fn handle_flushed(&mut self) {
        if self.transmit.is_empty() && matches!(self.phase, Phase::Ready(Readiness::Flushing)) {
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
        self.next_deadline
    }

    /// When the session gives up on the request `id` it sent (its
    /// timeout), if it has one: what the driver tells the transport with
    /// [`Transport::set_request_deadline`](mcp_proto::transport::Transport::set_request_deadline).
    pub fn request_deadline(&self, id: &RequestId) -> Option<Instant> {
        self.pending.get(id)?.deadline
    }

    /// What the driver needs as it hands request `id` to the transport:
    /// its deadline ([`request_deadline`](Self::request_deadline)) and the
    /// span the transport works in meanwhile (when one is recorded).
    #[cfg(feature = "tokio")]
    #[inline]
    pub(crate) fn sending(&self, id: &RequestId) -> (Option<Instant>, Option<&tracing::Span>) {
        match self.pending.get(id) {
            Some(p) => (
                p.deadline,
                p.trace
                    .as_ref()
                    .map(|t| t.span())
                    .filter(|s| !s.is_disabled()),
            ),
            None => (None, None),
        }
    }

    /// The earliest deadline exactly (every pending and queued call).
    pub(crate) fn earliest_deadline(&self) -> Option<Instant> {
        let pending = self.pending.values().filter_map(|p| p.deadline);
        pending
            .chain(self.queued.iter().filter_map(|d| d.deadline))
            .min()
    }

    /// Keeps [`poll_timeout`](Self::poll_timeout) at or before a deadline
    /// just given to a call: every place that gives one calls this.
    pub(super) fn note_deadline(&mut self, deadline: Option<Instant>) {
        if let Some(d) = deadline {
            self.next_deadline = Some(self.next_deadline.map_or(d, |n| n.min(d)));
        }
    }

    // ---- internals ------------------------------------------------------

    pub(super) fn alloc_id(&mut self) -> RequestId {
        self.next_id += 1;
        RequestId::Number(self.next_id)
    }

    /// The members every request of revision `v` carries in `_meta`, as an object.
    pub(super) fn build_modern_meta(&self, v: ProtocolVersion) -> Option<RawJson> {
        RawJson::from_value(&self.meta_members(v)).ok()
    }

    fn meta_members(&self, v: ProtocolVersion) -> JsonObject {
        let mut m = JsonObject::new();
        m.insert(META_PROTOCOL_VERSION.into(), Value::from(v.as_str()));
        let mut caps = serde_json::to_value(&self.config.capabilities)
            .unwrap_or_else(|_| Value::Object(JsonObject::new()));
        // `tasks` is the 2025-11-25 capability; the 2026-07-28 era has none
        // (tasks there are the `io.modelcontextprotocol/tasks` extension).
        if let Some(o) = caps.as_object_mut() {
            o.remove("tasks");
            if self.config.tasks_extension {
                let ext = o
                    .entry("extensions")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let Some(ext) = ext.as_object_mut() {
                    ext.entry(mcp_proto::schema::TASKS_EXTENSION)
                        .or_insert_with(|| Value::Object(JsonObject::new()));
                }
            }
        }
        m.insert(META_CLIENT_CAPABILITIES.into(), caps);
        if let Ok(info) = serde_json::to_value(&self.config.client_info) {
            m.insert(META_CLIENT_INFO.into(), info);
        }
        if let Some(level) = self.config.log_level {
            if let Ok(l) = serde_json::to_value(level) {
                m.insert(META_LOG_LEVEL.into(), l);
            }
        }
        m
    }
}
