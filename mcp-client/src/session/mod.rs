//! The sans-IO session core: ids, pending requests, era negotiation,
//! timeouts, cancellation, progress and input-required rounds, as data.
//!
//! [`Session`] does no IO and reads no clock: time is an [`Instant`] passed
//! in by the caller. It is driven by four kinds of calls, in this order of
//! roles (the shape of `quinn-proto`'s `Connection`):
//!
//! - **input**: [`handle_message`](Session::handle_message) for each message
//!   the transport received, [`handle_transport_error`](Session::handle_transport_error),
//!   [`handle_closed`](Session::handle_closed), [`handle_timeout`](Session::handle_timeout);
//! - **commands**: [`request`](Session::request), [`notify`](Session::notify),
//!   [`cancel`](Session::cancel), [`respond`](Session::respond),
//!   [`provide_input`](Session::provide_input), [`close`](Session::close);
//! - **output**: [`poll_transmit`](Session::poll_transmit) (messages to send,
//!   in order), [`poll_event`](Session::poll_event) (what callers must learn),
//!   [`poll_timeout`](Session::poll_timeout) (when to call `handle_timeout`).
//!
//! After any input or command, drain `poll_transmit` and `poll_event`, then
//! re-arm the timer from `poll_timeout`.
//!
//! # Negotiation
//!
//! With [`VersionChoice::Auto`] the session probes `server/discover` with the
//! newest modern revision. A `DiscoverResult` means a modern server; a
//! recognised modern error (such as `UnsupportedProtocolVersion`) means a
//! modern server that wants another version from its `supported` list; any
//! other error, a transport error scoped to the probe, or no answer within
//! [`SessionConfig::probe_timeout`] means a legacy server, and the session
//! falls back to `initialize`. The fallback is never keyed to one error code.
//! Requests made before the session is ready wait in order and are sent when
//! it is.
//!
//! # Remembered eras
//!
//! The era is a property of the server, so the spec (2026-07-28,
//! `basic/versioning`) says clients SHOULD cache it per server and MAY keep
//! it across restarts, "re-probing if the cached assumption later fails".
//! [`Session::start_with_hint`] takes what an earlier connection learned
//! ([`Session::learned_era`]), usually kept in an
//! [`EraCache`](crate::EraCache):
//!
//! - [`EraHint::Legacy`]: `initialize` goes out at once with the remembered
//!   revision, no probe. If the server rejects it (a JSON-RPC error, a
//!   transport error for that request, a malformed result or a revision we
//!   cannot use), the hint is dropped and the era is detected again, once.
//! - [`EraHint::Modern`]: while the remembered `server/discover` answer is
//!   fresh (its `ttlMs`), the session is ready at once with it, no probe
//!   (discovery is optional for a modern server). Until the first response
//!   succeeds the era is *unconfirmed*: requests keep their params, and the
//!   first error (JSON-RPC or transport) makes the session detect the era
//!   again and re-send the failed requests once. A stale answer is probed
//!   again with the remembered revision, because capabilities may have
//!   changed.
//!
//! Timeouts never count as a failed hint: a silent server is not evidence of
//! another era, and the normal timeouts apply.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::RawJson;
use mcp_proto::error::ErrorCode;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId, Response};
use mcp_proto::schema::{
    CancelledParams, ClientCapabilities, DiscoverResult, Implementation, InitializeParams,
    InitializeResult, InputRequest, InputResponses, JsonObject, LoggingLevel,
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROGRESS_TOKEN,
    META_PROTOCOL_VERSION, ProgressParams, ServerCapabilities,
};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{Era, ErrorObject, ProtocolVersion};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ClientError, CloseReason};

#[cfg(test)]
mod tests;

/// Which protocol revision to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VersionChoice {
    /// Probe for the modern era, fall back to the newest legacy revision.
    #[default]
    Auto,
    /// Exactly this revision; anything else is an error.
    Pinned(ProtocolVersion),
    /// The newest revision of this era.
    Era(Era),
}

/// What an earlier connection learned about a server's era, so that the
/// next connection to the same server can skip detection. See the
/// [module docs](self#remembered-eras).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum EraHint {
    /// A legacy server that negotiated this revision with `initialize`.
    Legacy(ProtocolVersion),
    /// A modern server and what its `server/discover` said.
    Modern {
        /// The negotiated server, as the probe found it.
        server: Arc<ServerInfo>,
        /// When that answer stops being fresh (its `ttlMs` after it arrived;
        /// `None`: absent or `0`, stale at once).
        fresh_until: Option<Instant>,
    },
}

impl EraHint {
    /// The remembered era.
    pub fn era(&self) -> Era {
        self.protocol_version().era()
    }

    /// The remembered revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        match self {
            EraHint::Legacy(v) => *v,
            EraHint::Modern { server, .. } => server.protocol_version,
        }
    }

    /// Whether a modern hint's `server/discover` answer is still fresh at `now`
    /// (a legacy hint has no freshness: always `false`).
    pub fn is_fresh(&self, now: Instant) -> bool {
        matches!(self, EraHint::Modern { fresh_until: Some(t), .. } if now < *t)
    }
}

/// How far a hint given to [`Session::start_with_hint`] has been trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HintState {
    /// No hint in play.
    None,
    /// `initialize` went out from a legacy hint.
    Legacy,
    /// Ready from a fresh modern hint; no response has succeeded yet.
    Unconfirmed,
    /// A hint failed; detecting the era again (until the next `Ready`).
    Redetecting,
}

/// Limits and identity for a [`Session`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Who the client is.
    pub client_info: Implementation,
    /// What the client supports (usually derived from its handler).
    pub capabilities: ClientCapabilities,
    /// Which revision to speak.
    pub version: VersionChoice,
    /// How long to wait for the `server/discover` probe before falling back
    /// to `initialize` (a legacy server may not answer at all). Default 5 s.
    pub probe_timeout: Duration,
    /// How long the handshake (`initialize`) may take. Default 60 s.
    pub handshake_timeout: Duration,
    /// Default per-request timeout; progress notifications reset it. Default 60 s.
    pub request_timeout: Duration,
    /// Cap on a request's total time however much progress it reports. Default 10 × `request_timeout`.
    pub max_request_time: Duration,
    /// How many `input_required` rounds one call may take. Default 8.
    pub max_input_rounds: u32,
    /// Keep each request's params until it completes so it can be re-sent after
    /// an expired HTTP session. Costs one copy of the params per request; the
    /// HTTP transport's users turn it on. Default off.
    pub resend_on_session_expiry: bool,
    /// Minimum log level the server should emit (2026-07-28: sent in each
    /// request's `_meta`; legacy: use `logging/setLevel`).
    pub log_level: Option<LoggingLevel>,
}

impl SessionConfig {
    /// Defaults for a client with this identity.
    pub fn new(client_info: Implementation) -> Self {
        SessionConfig {
            client_info,
            capabilities: ClientCapabilities::default(),
            version: VersionChoice::Auto,
            probe_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            max_request_time: Duration::from_secs(600),
            max_input_rounds: 8,
            resend_on_session_expiry: false,
            log_level: None,
        }
    }
}

/// A caller's handle for one call, stable across `input_required` retries
/// (which use new JSON-RPC ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub u64);

/// The progress token of a call: derived from its [`CallId`], so the caller can
/// put it into the params itself and it survives `input_required` retries.
pub fn progress_token(call: CallId) -> RequestId {
    RequestId::Number(i64::try_from(call.0).unwrap_or(i64::MAX))
}

/// What the caller already wrote into the params' `_meta` (so the session
/// need not splice it in, which would copy and re-validate the params).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Embedded {
    /// The 2026-07-28 per-request members for this revision
    /// ([`Session::request_meta_members`]).
    pub modern: Option<ProtocolVersion>,
    /// `progressToken` = [`progress_token`] of the call.
    pub progress_token: bool,
}

impl Embedded {
    /// Members of `modern` (if any) and, if `progress_token`, the call's token.
    pub fn new(modern: Option<ProtocolVersion>, progress_token: bool) -> Self {
        Embedded {
            modern,
            progress_token,
        }
    }
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

/// What the server is, once negotiated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The negotiated revision.
    pub protocol_version: ProtocolVersion,
    /// The server's identity (2026-07-28: from `_meta` of `server/discover`; may be a placeholder
    /// if the server sent none).
    pub implementation: Implementation,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    pub instructions: Option<String>,
    /// Versions the server said it supports (2026-07-28 `supportedVersions`).
    pub supported_versions: Vec<String>,
    /// The handshake result exactly as the server sent it (the `initialize`
    /// result, or the `server/discover` result).
    pub raw: RawJson,
}

impl ServerInfo {
    /// The era of the negotiated revision.
    pub fn era(&self) -> Era {
        self.protocol_version.era()
    }
}

/// Something to hand to the transport.
#[derive(Debug)]
#[non_exhaustive]
pub enum Transmit {
    /// Send this message.
    Message(Message),
    /// Tell the transport the revision now in use
    /// ([`Transport::set_protocol_version`](mcp_proto::transport::Transport::set_protocol_version)).
    ProtocolVersion(ProtocolVersion),
}

/// Something the session's owner must act on.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// Negotiation finished; [`Session::server`] is available.
    Ready,
    /// A call finished: its raw result or an error.
    Completed {
        /// The call.
        call: CallId,
        /// The raw `result`, or why it failed.
        result: Result<RawJson, ClientError>,
    },
    /// A call reported progress.
    Progress {
        /// The call.
        call: CallId,
        /// The notification's params.
        progress: ProgressParams,
    },
    /// The server needs input before the call can finish (2026-07-28 MRTR).
    /// Answer with [`Session::provide_input`].
    InputRequired {
        /// The call.
        call: CallId,
        /// Key → request (`elicitation/create`, `sampling/createMessage`, `roots/list`).
        requests: Vec<(String, InputRequest)>,
    },
    /// A server-to-client request (legacy era) the owner must answer with [`Session::respond`].
    /// (`ping` is answered by the session itself.)
    ServerRequest(Request),
    /// A notification from the server (progress for our own calls is routed
    /// as [`Event::Progress`] instead).
    Notification(Notification),
    /// The session is closed; every call has completed.
    Closed(CloseReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Probe,
    Initialize,
    User(CallId),
}

#[derive(Debug)]
struct Pending {
    purpose: Purpose,
    method: Cow<'static, str>,
    /// Kept only when a retry may need it (MRTR, session expiry): see `retained`.
    params: Option<RawJson>,
    retained: bool,
    options: CallOptions,
    started: Instant,
    deadline: Option<Instant>,
    hard_deadline: Option<Instant>,
    rounds: u32,
    resent: bool,
    progress_token: Option<RequestId>,
    embedded: Embedded,
    /// Sent while a modern hint was unconfirmed (its params are kept).
    hinted: bool,
}

/// A user request waiting for the session to become ready, or for input.
#[derive(Debug)]
struct Deferred {
    call: CallId,
    method: Cow<'static, str>,
    params: Option<RawJson>,
    options: CallOptions,
    started: Instant,
    rounds: u32,
    resent: bool,
    embedded: Embedded,
}

#[derive(Debug)]
enum Phase {
    /// Not started (before the first `start`).
    Idle,
    Probing,
    Initializing {
        offered: ProtocolVersion,
    },
    Ready,
    Closed(CloseReason),
}

pub(crate) use mcp_proto::jsonrpc::IdHash;

/// The session state machine. See the [module docs](self).
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    phase: Phase,
    server: Option<ServerInfo>,
    next_id: i64,
    pending: HashMap<RequestId, Pending, IdHash>,
    /// User requests waiting for `Ready`.
    queued: VecDeque<Deferred>,
    /// Calls waiting for the owner's answers to `input_required`.
    awaiting_input: HashMap<CallId, (Deferred, Option<String>)>,
    transmit: VecDeque<Transmit>,
    events: VecDeque<Event>,
    /// The earliest deadline of the user requests sent since the owner last
    /// asked ([`Session::take_new_deadline`]).
    newest_deadline: Option<Instant>,
    /// `_meta` members every modern request carries, pre-serialized (without braces).
    modern_meta: String,
    hint: HintState,
    /// What this session learned about the server's era (see [`Session::learned_era`]).
    learned: Option<EraHint>,
    /// The legacy era was found by detection (a failed probe or a legacy
    /// hint), not only chosen by the caller: only then is it worth remembering.
    legacy_detected: bool,
}

const MRTR_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

impl Session {
    /// A new session. Call [`start`](Session::start) to begin negotiating.
    pub fn new(config: SessionConfig) -> Self {
        Session {
            config,
            phase: Phase::Idle,
            server: None,
            next_id: 0,
            pending: HashMap::default(),
            queued: VecDeque::new(),
            awaiting_input: HashMap::new(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            newest_deadline: None,
            modern_meta: String::new(),
            hint: HintState::None,
            learned: None,
            legacy_detected: false,
        }
    }

    /// Starts negotiation: queues the `server/discover` probe or `initialize`.
    pub fn start(&mut self, now: Instant) {
        self.start_with_hint(now, None);
    }

    /// Starts negotiation using what an earlier connection to the same server
    /// learned (see the [module docs](self#remembered-eras)). A hint that does
    /// not fit [`SessionConfig::version`] (another era, another pinned
    /// revision) is ignored.
    pub fn start_with_hint(&mut self, now: Instant, hint: Option<EraHint>) {
        if !matches!(self.phase, Phase::Idle) {
            return;
        }
        let fits = |h: &EraHint| match self.config.version {
            VersionChoice::Auto => true,
            VersionChoice::Era(e) => h.era() == e,
            VersionChoice::Pinned(v) => h.protocol_version() == v,
        };
        match hint.filter(fits) {
            Some(EraHint::Legacy(v)) => {
                self.hint = HintState::Legacy;
                self.legacy_detected = true;
                self.send_initialize(v, now);
            }
            Some(h @ EraHint::Modern { .. }) if h.is_fresh(now) => {
                let EraHint::Modern { server, .. } = &h else {
                    return;
                };
                let server = ServerInfo::clone(server);
                self.hint = HintState::Unconfirmed;
                self.learned = Some(h);
                self.become_ready(server, now);
            }
            Some(EraHint::Modern { server, .. }) => {
                self.send_probe(server.protocol_version, now);
            }
            None => self.detect(now),
        }
    }

    /// What this session learned about the server's era, to remember for the
    /// next connection ([`start_with_hint`](Session::start_with_hint)). Set
    /// when [`Event::Ready`] is emitted after detection (the probe, or its
    /// fallback to `initialize`) or a hint that held; `None` before, when the
    /// era was only chosen by [`SessionConfig::version`] (a legacy pin says
    /// nothing about whether the server is also modern), and after a hint
    /// failed until detection finishes.
    pub fn learned_era(&self) -> Option<&EraHint> {
        self.learned.as_ref()
    }

    /// Detects the era from scratch, as [`VersionChoice`] says.
    fn detect(&mut self, now: Instant) {
        match self.config.version {
            VersionChoice::Auto | VersionChoice::Era(Era::Modern) => {
                self.send_probe(ProtocolVersion::LATEST, now);
            }
            VersionChoice::Pinned(v) if v.era() == Era::Modern => self.send_probe(v, now),
            VersionChoice::Pinned(v) => self.send_initialize(v, now),
            VersionChoice::Era(_) => self.send_initialize(ProtocolVersion::LATEST_LEGACY, now),
        }
    }

    /// The negotiated server, once [`Event::Ready`] was emitted.
    pub fn server(&self) -> Option<&ServerInfo> {
        self.server.as_ref()
    }

    /// Whether the session is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed(_))
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

    /// The `_meta` members every request carries in the negotiated revision
    /// (2026-07-28: protocol version, client capabilities and info, log level),
    /// and that revision; `None` before negotiation or in the legacy era.
    pub fn request_meta_members(&self) -> Option<(ProtocolVersion, JsonObject)> {
        let v = self.server.as_ref()?.protocol_version;
        (v.era() == Era::Modern).then(|| (v, self.meta_members(v)))
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
        self.request_embedded(call, method, params, options, Embedded::default(), now)
    }

    /// Like [`request`](Session::request), for params whose `_meta` already
    /// holds what `embedded` says. If that does not match what the negotiated
    /// revision needs when the request goes out, the session adds the rest.
    pub fn request_embedded(
        &mut self,
        call: CallId,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
        options: CallOptions,
        embedded: Embedded,
        now: Instant,
    ) -> Result<(), ClientError> {
        if let Phase::Closed(reason) = &self.phase {
            return Err(ClientError::Closed(reason.clone()));
        }
        let d = Deferred {
            call,
            method: method.into(),
            params,
            options,
            started: now,
            rounds: 0,
            resent: false,
            embedded,
        };
        if matches!(self.phase, Phase::Ready) {
            self.send_user(d, None, None, now);
        } else {
            self.queued.push_back(d);
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
        self.transmit.push_back(Transmit::Message(
            Notification::new(method.into(), params).into(),
        ));
        Ok(())
    }

    /// Cancels a call: the server is told (`notifications/cancelled`, never for
    /// `initialize`), and a late response is ignored. No event is emitted for it.
    pub fn cancel(&mut self, call: CallId, reason: Option<&str>) {
        if self.awaiting_input.remove(&call).is_some() {
            return;
        }
        if let Some(pos) = self.queued.iter().position(|d| d.call == call) {
            self.queued.remove(pos);
            return;
        }
        let id = self
            .pending
            .iter()
            .find(|(_, p)| p.purpose == Purpose::User(call))
            .map(|(id, _)| id.clone());
        if let Some(id) = id {
            self.pending.remove(&id);
            self.send_cancelled(id, reason.map(str::to_owned));
        }
    }

    /// Answers a server-to-client request (from [`Event::ServerRequest`]).
    pub fn respond(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>) {
        if self.is_closed() {
            return;
        }
        let msg: Message = match result {
            Ok(r) => Response::new(id, r).into(),
            Err(e) => ErrorResponse::new(Some(id), e).into(),
        };
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

    // ---- input ----------------------------------------------------------

    /// Feeds one message the transport received.
    pub fn handle_message(&mut self, msg: Message, now: Instant) {
        if self.is_closed() {
            return;
        }
        match msg {
            Message::Response(r) => self.on_response(r.id, Ok(r.result), now),
            Message::Error(e) => match e.id {
                Some(id) => self.on_response(id, Err(e.error), now),
                None => {
                    tracing::warn!(error = %e.error, "server sent an error response without an id; dropped")
                }
            },
            Message::Notification(n) => self.on_notification(n, now),
            Message::Request(r) => {
                if r.method == "ping" {
                    self.respond(r.id, Ok(empty_object()));
                } else {
                    self.events.push_back(Event::ServerRequest(r));
                }
            }
            _ => {}
        }
    }

    /// Feeds an error from the transport's receive side.
    pub fn handle_transport_error(&mut self, err: TransportError, now: Instant) {
        if self.is_closed() {
            return;
        }
        if let Some(id) = err.request_id().cloned() {
            let Some(p) = self.pending.remove(&id) else {
                tracing::debug!(%id, error = %err, "transport error for an unknown request; dropped");
                return;
            };
            match p.purpose {
                Purpose::Probe => {
                    tracing::debug!(error = %err, "server/discover probe failed in the transport; falling back to initialize");
                    self.probe_failed(now);
                }
                Purpose::Initialize => {
                    if self.hint == HintState::Legacy && err.kind() != TransportErrorKind::Closed {
                        self.redetect(&format!("initialize failed in the transport: {err}"), now);
                    } else {
                        self.handle_closed(CloseReason::Transport(err));
                    }
                }
                Purpose::User(call) => {
                    if self.retry_if_hint_failed(call, &p, &err.to_string()) {
                        self.requeue(call, p, now);
                    } else if err.kind() == TransportErrorKind::SessionExpired
                        && p.retained
                        && !p.resent
                    {
                        self.resend_after_expiry(call, p, now);
                    } else {
                        self.events.push_back(Event::Completed {
                            call,
                            result: Err(ClientError::Transport(err)),
                        });
                    }
                }
            }
        } else if err.is_terminal() {
            self.handle_closed(CloseReason::Transport(err));
        } else {
            tracing::warn!(error = %err, "skipped an undecodable message from the server");
        }
    }

    /// The transport's receive side ended. `None`: a clean close.
    pub fn handle_closed(&mut self, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let err = ClientError::Closed(reason.clone());
        self.phase = Phase::Closed(reason.clone());
        let mut calls: Vec<CallId> = self
            .pending
            .drain()
            .filter_map(|(_, p)| match p.purpose {
                Purpose::User(c) => Some(c),
                _ => None,
            })
            .collect();
        calls.extend(self.queued.drain(..).map(|d| d.call));
        calls.extend(self.awaiting_input.drain().map(|(c, _)| c));
        calls.sort();
        for call in calls {
            self.events.push_back(Event::Completed {
                call,
                result: Err(err.clone()),
            });
        }
        self.events.push_back(Event::Closed(reason));
    }

    /// Expires every deadline at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.is_closed() {
            return;
        }
        let expired: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            let Some(p) = self.pending.remove(&id) else {
                continue;
            };
            match p.purpose {
                Purpose::Probe => {
                    tracing::debug!(
                        "server/discover probe got no answer; falling back to initialize"
                    );
                    self.probe_failed(now);
                }
                Purpose::Initialize => {
                    self.handle_closed(CloseReason::Handshake(format!(
                        "no answer to initialize within {:?}",
                        self.config.handshake_timeout
                    )));
                    return;
                }
                Purpose::User(call) => {
                    self.send_cancelled(id, Some("timeout".into()));
                    self.events.push_back(Event::Completed {
                        call,
                        result: Err(ClientError::Timeout {
                            method: p.method.into_owned(),
                            after: now.saturating_duration_since(p.started),
                        }),
                    });
                }
            }
        }
    }

    // ---- output ---------------------------------------------------------

    /// The next thing to hand to the transport.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmit.pop_front()
    }

    /// The next event for the owner.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether events wait for [`poll_event`](Self::poll_event).
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// The earliest deadline among user requests sent since the last call
    /// (an owner that only ever moves its timer earlier checks this instead
    /// of [`poll_timeout`](Self::poll_timeout), which looks at every request).
    pub fn take_new_deadline(&mut self) -> Option<Instant> {
        self.newest_deadline.take()
    }

    /// The earliest deadline, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending.values().filter_map(|p| p.deadline).min()
    }

    // ---- internals ------------------------------------------------------

    fn alloc_id(&mut self) -> RequestId {
        self.next_id += 1;
        RequestId::Number(self.next_id)
    }

    fn build_modern_meta(&self, v: ProtocolVersion) -> String {
        let s = Value::Object(self.meta_members(v)).to_string();
        // Strip the outer braces: the members are spliced into `_meta`.
        s.get(1..s.len().saturating_sub(1))
            .unwrap_or_default()
            .to_owned()
    }

    fn meta_members(&self, v: ProtocolVersion) -> JsonObject {
        let mut m = JsonObject::new();
        m.insert(META_PROTOCOL_VERSION.into(), Value::from(v.as_str()));
        m.insert(
            META_CLIENT_CAPABILITIES.into(),
            serde_json::to_value(&self.config.capabilities)
                .unwrap_or_else(|_| Value::Object(JsonObject::new())),
        );
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

    fn send_probe(&mut self, v: ProtocolVersion, now: Instant) {
        self.phase = Phase::Probing;
        self.modern_meta = self.build_modern_meta(v);
        self.transmit.push_back(Transmit::ProtocolVersion(v));
        let id = self.alloc_id();
        let params = splice_meta(None, &self.modern_meta, None);
        self.transmit.push_back(Transmit::Message(
            Request::new(id.clone(), "server/discover", Some(params)).into(),
        ));
        self.pending.insert(
            id,
            Pending {
                purpose: Purpose::Probe,
                method: Cow::Borrowed("server/discover"),
                params: None,
                retained: false,
                options: CallOptions::default(),
                started: now,
                deadline: Some(now + self.config.probe_timeout),
                hard_deadline: None,
                rounds: 0,
                resent: false,
                progress_token: None,
                embedded: Embedded::default(),
                hinted: false,
            },
        );
    }

    fn send_initialize(&mut self, v: ProtocolVersion, now: Instant) {
        self.phase = Phase::Initializing { offered: v };
        let params = InitializeParams::new(
            v.as_str(),
            self.config.capabilities.clone(),
            self.config.client_info.clone(),
        );
        let raw = match RawJson::from_value(&params) {
            Ok(r) => r,
            Err(e) => {
                self.handle_closed(CloseReason::Handshake(format!(
                    "could not encode initialize: {e}"
                )));
                return;
            }
        };
        let id = self.alloc_id();
        self.transmit.push_back(Transmit::Message(
            Request::new(id.clone(), "initialize", Some(raw)).into(),
        ));
        self.pending.insert(
            id,
            Pending {
                purpose: Purpose::Initialize,
                method: Cow::Borrowed("initialize"),
                params: None,
                retained: false,
                options: CallOptions::default(),
                started: now,
                deadline: Some(now + self.config.handshake_timeout),
                hard_deadline: None,
                rounds: 0,
                resent: false,
                progress_token: None,
                embedded: Embedded::default(),
                hinted: false,
            },
        );
    }

    fn probe_failed(&mut self, now: Instant) {
        match self.config.version {
            VersionChoice::Auto => {
                self.legacy_detected = true;
                self.send_initialize(ProtocolVersion::LATEST_LEGACY, now);
            }
            _ => self.handle_closed(CloseReason::Handshake(
                "the server did not answer server/discover: it does not speak the 2026-07-28 revision \
                 (use --protocol auto or a legacy version)"
                    .into(),
            )),
        }
    }

    fn become_ready(&mut self, info: ServerInfo, now: Instant) {
        let v = info.protocol_version;
        if v.era() == Era::Modern {
            self.modern_meta = self.build_modern_meta(v);
        }
        self.transmit.push_back(Transmit::ProtocolVersion(v));
        self.server = Some(info);
        self.phase = Phase::Ready;
        if self.hint != HintState::Unconfirmed {
            self.hint = HintState::None;
        }
        self.events.push_back(Event::Ready);
        while let Some(d) = self.queued.pop_front() {
            self.send_user(d, None, None, now);
        }
    }

    fn send_user(
        &mut self,
        d: Deferred,
        responses: Option<InputResponses>,
        state: Option<String>,
        now: Instant,
    ) {
        let modern = self.server.as_ref().is_some_and(|s| s.era() == Era::Modern);
        let id = self.alloc_id();
        let timeout = d.options.timeout.unwrap_or(self.config.request_timeout);
        let max_time = d.options.max_time.unwrap_or(self.config.max_request_time);
        let (deadline, hard) = if d.options.unbounded {
            (None, None)
        } else {
            let hard = d.started + max_time;
            (Some((now + timeout).min(hard)), Some(hard))
        };
        let version = self.server.as_ref().map(|s| s.protocol_version);
        let token = d.options.progress.then(|| progress_token(d.call));
        let retry_mrtr = modern && MRTR_METHODS.contains(&&*d.method);
        let hinted = self.hint == HintState::Unconfirmed;
        let keep = retry_mrtr || (self.config.resend_on_session_expiry && !modern) || hinted;
        // Per-request `_meta` (modern) and the progress token; MRTR answers.
        let mut params = d.params;
        if responses.is_some() || state.is_some() {
            params = Some(merge_input(params.as_ref(), responses, state));
        }
        let wanted = Embedded::new(version.filter(|v| v.era() == Era::Modern), token.is_some());
        let wire_params = if d.embedded == wanted || !(modern || token.is_some()) {
            // The caller already wrote exactly what is needed (or nothing is).
            None
        } else {
            let meta = if modern {
                self.modern_meta.as_str()
            } else {
                ""
            };
            Some(splice_meta(params.as_ref(), meta, token.as_ref()))
        };
        let embedded = if wire_params.is_some() {
            Embedded::default()
        } else {
            d.embedded
        };
        let (wire, kept) = match wire_params {
            Some(w) => (Some(w), if keep { params } else { None }),
            None => {
                let kept = if keep { params.clone() } else { None };
                (params, kept)
            }
        };
        self.transmit.push_back(Transmit::Message(
            Request::new(id.clone(), d.method.clone(), wire).into(),
        ));
        self.newest_deadline = match (self.newest_deadline, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
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
                embedded,
                hinted,
            },
        );
    }

    fn send_cancelled(&mut self, id: RequestId, reason: Option<String>) {
        let params = CancelledParams::new(id, reason);
        if let Ok(raw) = RawJson::from_value(&params) {
            self.transmit.push_back(Transmit::Message(
                Notification::new("notifications/cancelled", Some(raw)).into(),
            ));
        }
    }

    /// A hint proved wrong: forget it and detect the era from scratch, once.
    fn redetect(&mut self, why: &str, now: Instant) {
        tracing::info!(
            why,
            "the remembered era of this server no longer holds; detecting it again"
        );
        self.hint = HintState::Redetecting;
        self.learned = None;
        self.legacy_detected = false;
        self.server = None;
        self.detect(now);
    }

    /// Whether a failed call sent under an unconfirmed modern hint should be
    /// re-sent after the era is detected again (starting that detection if
    /// this is the first such failure).
    fn retry_if_hint_failed(&self, call: CallId, p: &Pending, why: &str) -> bool {
        if !p.hinted || p.resent || !p.retained {
            return false;
        }
        match self.hint {
            HintState::Unconfirmed => {
                tracing::debug!(?call, why, "a call failed under a remembered modern era");
                true
            }
            HintState::Redetecting => true,
            HintState::None | HintState::Legacy => false,
        }
    }

    /// Puts a failed call back in the queue (ahead of newer calls) to be re-sent
    /// once, and starts detecting the era again if that has not started.
    fn requeue(&mut self, call: CallId, p: Pending, now: Instant) {
        let why = format!("{} failed", p.method);
        self.put_back(call, p);
        if self.hint == HintState::Unconfirmed {
            self.redetect(&why, now);
        }
    }

    /// The handshake failed: under a legacy hint, detect the era again;
    /// otherwise close.
    fn handshake_failed(&mut self, why: String, now: Instant) {
        if self.hint == HintState::Legacy {
            self.redetect(&why, now);
        } else {
            self.handle_closed(CloseReason::Handshake(why));
        }
    }

    /// Queues a sent call to be re-sent (once: it is marked `resent`) ahead
    /// of newer calls, after the calls already put back, in the order they failed.
    fn put_back(&mut self, call: CallId, p: Pending) {
        let pos = self.queued.iter().take_while(|d| d.resent).count();
        let d = Deferred {
            call,
            method: p.method,
            params: p.params,
            options: p.options,
            started: p.started,
            rounds: p.rounds,
            resent: true,
            embedded: p.embedded,
        };
        self.queued.insert(pos, d);
    }

    fn resend_after_expiry(&mut self, call: CallId, p: Pending, now: Instant) {
        tracing::info!(method = %p.method, "server session expired; starting a new session and retrying once");
        self.put_back(call, p);
        if matches!(self.phase, Phase::Ready) {
            let v = self
                .server
                .as_ref()
                .map_or(ProtocolVersion::LATEST_LEGACY, |s| s.protocol_version);
            self.server = None;
            self.send_initialize(v, now);
        }
    }

    fn on_notification(&mut self, n: Notification, now: Instant) {
        if n.method == "notifications/progress" {
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

    fn on_response(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>, now: Instant) {
        let Some(p) = self.pending.remove(&id) else {
            tracing::debug!(%id, "response for an unknown, cancelled or already answered request; dropped");
            return;
        };
        match p.purpose {
            Purpose::Probe => self.on_probe_response(result, now),
            Purpose::Initialize => self.on_initialize_response(result, now),
            Purpose::User(call) => {
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
                            self.requeue(call, p, now);
                            return;
                        }
                        self.events.push_back(Event::Completed {
                            call,
                            result: Err(ClientError::Rpc(e)),
                        });
                        return;
                    }
                };
                let modern = self.server.as_ref().is_some_and(|s| s.era() == Era::Modern);
                if modern && MRTR_METHODS.contains(&&*p.method) {
                    if let Some(ir) = input_required(result.get()) {
                        self.on_input_required(call, p, ir, now);
                        return;
                    }
                }
                self.events.push_back(Event::Completed {
                    call,
                    result: Ok(result),
                });
            }
        }
    }

    fn on_input_required(&mut self, call: CallId, p: Pending, ir: InputRequiredWire, now: Instant) {
        let rounds = p.rounds + 1;
        if rounds > self.config.max_input_rounds {
            self.events.push_back(Event::Completed {
                call,
                result: Err(ClientError::TooManyInputRounds { rounds: p.rounds }),
            });
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
            embedded: p.embedded,
        };
        let requests: Vec<(String, InputRequest)> =
            ir.input_requests.unwrap_or_default().into_iter().collect();
        if requests.is_empty() {
            // Nothing to answer: retry at once with the state.
            self.send_user(d, None, ir.request_state, now);
        } else {
            self.awaiting_input.insert(call, (d, ir.request_state));
            self.events
                .push_back(Event::InputRequired { call, requests });
        }
    }

    fn on_probe_response(&mut self, result: Result<RawJson, ErrorObject>, now: Instant) {
        let raw_copy = result.as_ref().ok().cloned();
        let preferred = match self.config.version {
            VersionChoice::Pinned(v) => v,
            _ => ProtocolVersion::LATEST,
        };
        match result {
            Ok(raw) => match serde_json::from_str::<DiscoverResult>(raw.get()) {
                Ok(d) => {
                    let ours: Vec<ProtocolVersion> = d
                        .supported_versions
                        .iter()
                        .filter_map(|s| ProtocolVersion::parse(s))
                        .collect();
                    let modern = ours
                        .iter()
                        .copied()
                        .filter(|v| v.era() == Era::Modern)
                        .max();
                    let choice = match self.config.version {
                        VersionChoice::Pinned(v) => ours.contains(&v).then_some(v),
                        _ => modern,
                    };
                    match choice {
                        Some(v) => {
                            let implementation = d
                                .server_info()
                                .unwrap_or_else(|| Implementation::new("unknown", "unknown"));
                            let info = ServerInfo {
                                protocol_version: v,
                                implementation,
                                capabilities: d.capabilities,
                                instructions: d.instructions,
                                supported_versions: d.supported_versions,
                                raw: raw_copy.unwrap_or_else(empty_object),
                            };
                            let fresh_until = d
                                .ttl_ms
                                .filter(|&ms| ms > 0)
                                .and_then(|ms| now.checked_add(Duration::from_millis(ms)));
                            self.learned = Some(EraHint::Modern {
                                server: Arc::new(info.clone()),
                                fresh_until,
                            });
                            self.become_ready(info, now);
                        }
                        None => self.no_common_modern_version(preferred, d.supported_versions, now),
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "server/discover answered with something that is not a DiscoverResult; treating the server as legacy");
                    self.probe_failed(now);
                }
            },
            Err(e) if e.code.is_modern_only() => {
                let supported = e
                    .unsupported_protocol_version()
                    .map(|d| d.supported)
                    .unwrap_or_default();
                if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
                    self.no_common_modern_version(preferred, supported, now);
                } else {
                    // A modern server that rejected the probe for another modern reason.
                    self.handle_closed(CloseReason::Handshake(format!(
                        "the server rejected server/discover: {e}"
                    )));
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "server/discover failed; treating the server as legacy");
                self.probe_failed(now);
            }
        }
    }

    /// A modern server that does not support our modern version(s).
    fn no_common_modern_version(
        &mut self,
        offered: ProtocolVersion,
        supported: Vec<String>,
        now: Instant,
    ) {
        let ours: Vec<ProtocolVersion> = supported
            .iter()
            .filter_map(|s| ProtocolVersion::parse(s))
            .collect();
        match self.config.version {
            VersionChoice::Auto => {
                if let Some(v) = ours
                    .iter()
                    .copied()
                    .filter(|v| v.era() == Era::Modern)
                    .max()
                {
                    self.send_probe(v, now);
                    return;
                }
                if let Some(v) = ours
                    .iter()
                    .copied()
                    .filter(|v| v.era() == Era::Legacy)
                    .max()
                {
                    // A dual-era server whose only common revision is a legacy one.
                    self.send_initialize(v, now);
                    return;
                }
            }
            VersionChoice::Pinned(_) | VersionChoice::Era(_) => {}
        }
        let err = ClientError::UnsupportedProtocolVersion {
            offered: offered.to_string(),
            supported,
        };
        self.handle_closed(CloseReason::Handshake(err.to_string()));
    }

    fn on_initialize_response(&mut self, result: Result<RawJson, ErrorObject>, now: Instant) {
        let Phase::Initializing { offered } = self.phase else {
            return;
        };
        let raw_copy = result.as_ref().ok().cloned();
        let r = match result {
            Ok(raw) => match serde_json::from_str::<InitializeResult>(raw.get()) {
                Ok(r) => r,
                Err(e) => {
                    self.handshake_failed(format!("the initialize result is malformed: {e}"), now);
                    return;
                }
            },
            Err(e) => {
                self.handshake_failed(format!("the server rejected initialize: {e}"), now);
                return;
            }
        };
        let got = ProtocolVersion::parse(&r.protocol_version).filter(|v| v.era() == Era::Legacy);
        let acceptable = match (self.config.version, got) {
            (_, None) => None,
            (VersionChoice::Pinned(p), Some(g)) => (p == g).then_some(g),
            (_, Some(g)) => Some(g),
        };
        let Some(v) = acceptable else {
            let err = ClientError::UnsupportedProtocolVersion {
                offered: offered.to_string(),
                supported: vec![r.protocol_version],
            };
            self.handshake_failed(err.to_string(), now);
            return;
        };
        // The transport must leave the probe's modern mode before it sends
        // `notifications/initialized` (HTTP: session id, version header,
        // standalone GET stream).
        self.transmit.push_back(Transmit::ProtocolVersion(v));
        self.transmit.push_back(Transmit::Message(
            Notification::new("notifications/initialized", None).into(),
        ));
        let info = ServerInfo {
            protocol_version: v,
            implementation: r.server_info,
            capabilities: r.capabilities,
            instructions: r.instructions,
            supported_versions: vec![v.to_string()],
            raw: raw_copy.unwrap_or_else(empty_object),
        };
        self.learned = self.legacy_detected.then_some(EraHint::Legacy(v));
        self.become_ready(info, now);
    }
}

/// `{}` as raw JSON (encoding an empty map cannot fail).
pub(crate) fn empty_object() -> RawJson {
    RawJson::empty_object()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputRequiredWire {
    result_type: Option<String>,
    #[serde(default)]
    input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    #[serde(default)]
    request_state: Option<String>,
}

/// An `input_required` result, detected without decoding ordinary results:
/// a cheap substring check first, then a decode that skips other members.
fn input_required(text: &str) -> Option<InputRequiredWire> {
    if !text.contains("\"input_required\"") {
        return None;
    }
    let w: InputRequiredWire = serde_json::from_str(text).ok()?;
    (w.result_type.as_deref() == Some("input_required")).then_some(w)
}

/// Returns `params` with `members` (JSON object members, no braces) and an
/// optional progress token added to its `_meta`. `params` is spliced as text
/// when it has no `_meta` of its own (the common case, no re-parse); otherwise
/// it is parsed and merged.
fn splice_meta(params: Option<&RawJson>, members: &str, token: Option<&RequestId>) -> RawJson {
    let mut meta = String::with_capacity(members.len() + 32);
    meta.push_str(members);
    if let Some(t) = token {
        if !meta.is_empty() {
            meta.push(',');
        }
        meta.push('"');
        meta.push_str(META_PROGRESS_TOKEN);
        meta.push_str("\":");
        meta.push_str(&serde_json::to_string(t).unwrap_or_else(|_| "0".into()));
    }
    let text = params.map(RawJson::as_str).unwrap_or("{}").trim();
    let spliced = if text.starts_with('{') && !text.contains("\"_meta\"") {
        let rest = text[1..].trim_start();
        let mut s = String::with_capacity(text.len() + meta.len() + 12);
        s.push_str("{\"_meta\":{");
        s.push_str(&meta);
        s.push('}');
        if !rest.starts_with('}') {
            s.push(',');
        }
        s.push_str(rest);
        RawJson::from_string(s).ok()
    } else {
        None
    };
    spliced.unwrap_or_else(|| merge_meta_slow(text, &meta))
}

fn merge_meta_slow(text: &str, meta_members: &str) -> RawJson {
    let mut obj: JsonObject = serde_json::from_str(text).unwrap_or_default();
    let add: JsonObject = serde_json::from_str(&format!("{{{meta_members}}}")).unwrap_or_default();
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(m) = meta {
        for (k, v) in add {
            m.entry(k).or_insert(v);
        }
    }
    RawJson::from_value(&obj).unwrap_or_else(|_| empty_object())
}

/// The original params plus `inputResponses` and `requestState` (replacing earlier ones).
fn merge_input(
    params: Option<&RawJson>,
    responses: Option<InputResponses>,
    state: Option<String>,
) -> RawJson {
    let mut obj: JsonObject = params.and_then(|p| p.decode().ok()).unwrap_or_default();
    obj.remove("inputResponses");
    obj.remove("requestState");
    if let Some(r) = responses {
        if let Ok(v) = serde_json::to_value(r) {
            obj.insert("inputResponses".into(), v);
        }
    }
    if let Some(s) = state {
        obj.insert("requestState".into(), Value::String(s));
    }
    RawJson::from_value(&obj).unwrap_or_else(|_| empty_object())
}
