//! What the session knows of the server and how far it got in agreeing on a
//! revision: the [`Phase`], the negotiated [`ServerInfo`], the `_meta`
//! members the revision puts on every request, the remembered era and the
//! renewals; and carrying out the handshake's [`Step`]s (sending the probe
//! or `initialize`, becoming ready, detecting the era again).
//!
//! Invariants of [`Negotiation`]:
//! - `server` is the server of the session in use: set as the session
//!   becomes ready, `None` before and while a new handshake (a renewal,
//!   detecting the era again) is under way;
//! - `protocol_meta` is the members of the revision being probed or in use
//!   in the modern era, `None` in a legacy one;
//! - requests go out only in `Ready`; calls made before wait in the
//!   [`Calls`]' queue and go out, in order, when the session becomes ready.

use std::sync::Arc;
use std::time::Instant;

use mcp_proto::jsonrpc::{Notification, Request, RequestId};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{Era, ErrorObject, ProtocolVersion, RawJson};

use super::calls::{CallId, Calls, Pending, Purpose, Route};
use super::era::{EraMemory, Start};
use super::handshake::{self, Phase, Readiness, Retries, Step};
use super::meta::{MetaParts, compose_params, protocol_members};
use super::output::Output;
use super::renew::Renewals;
use super::{EraHint, Event, ServerInfo, SessionConfig};
use crate::error::{CloseReason, HandshakeError};
use crate::telemetry::Resend;

/// The session's side of the handshake (see the [module docs](self)).
#[derive(Debug)]
pub(super) struct Negotiation {
    phase: Phase,
    /// Shared with the client's handle and the remembered era (one copy
    /// per connection).
    server: Option<Arc<ServerInfo>>,
    /// The `_meta` members every modern request carries, encoded once.
    protocol_meta: Option<RawJson>,
    era: EraMemory,
    renewals: Renewals,
}

/// What the session must do when the negotiation cannot go on: close, for
/// this reason.
pub(super) type Closing = Result<(), CloseReason>;

impl Negotiation {
    pub(super) fn new(config: &SessionConfig) -> Self {
        Negotiation {
            phase: Phase::Idle,
            server: None,
            protocol_meta: None,
            era: EraMemory::new(),
            renewals: Renewals::new(config.max_session_renewals),
        }
    }

    // ---- what it knows --------------------------------------------------

    #[inline]
    pub(super) fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Whether requests go out now.
    #[inline]
    pub(super) fn sends(&self) -> bool {
        matches!(self.phase, Phase::Ready(_))
    }

    #[inline]
    pub(super) fn server(&self) -> Option<&Arc<ServerInfo>> {
        self.server.as_ref()
    }

    pub(super) fn learned(&self) -> Option<&EraHint> {
        self.era.learned()
    }

    #[cfg(test)]
    pub(super) fn protocol_meta(&self) -> Option<&RawJson> {
        self.protocol_meta.as_ref()
    }

    fn version(&self) -> Option<ProtocolVersion> {
        self.server.as_ref().map(|s| s.protocol_version)
    }

    /// Whether the revision in use is a modern one.
    #[inline]
    pub(super) fn modern(&self) -> bool {
        self.server.as_ref().is_some_and(|s| s.era() == Era::Modern)
    }

    /// How a call goes out in the session in use.
    #[inline]
    pub(super) fn route(&self) -> Route<'_> {
        Route::new(
            self.version(),
            self.protocol_meta.as_ref(),
            self.era.unconfirmed(),
        )
    }

    /// The configuration's log level changed: the modern members follow.
    pub(super) fn log_level_changed(&mut self, config: &SessionConfig) {
        if let Some(v) = self.version().filter(|v| v.era() == Era::Modern) {
            self.protocol_meta = protocol_members(config, v);
        }
    }

    /// The transport flushed everything: a handshake waiting for that is done.
    #[inline]
    pub(super) fn flushed(&mut self, out: &mut Output) {
        if out.transmit_is_empty() && matches!(self.phase, Phase::Ready(Readiness::Flushing)) {
            self.phase = Phase::Ready(Readiness::Announced);
            out.event(Event::Ready);
        }
    }

    /// The session closed.
    pub(super) fn close(&mut self, reason: CloseReason) {
        self.phase = Phase::Closed(reason);
    }

    // ---- the calls' side ------------------------------------------------

    /// A call was answered (`ok`: with a result): the session in use works,
    /// and a remembered modern era is confirmed by a result.
    #[inline]
    pub(super) fn call_answered(&mut self, ok: bool) {
        self.renewals.answered();
        if ok {
            self.era.confirmed();
        }
    }

    /// Whether a failed call, sent under an unconfirmed modern hint, is to
    /// be re-sent after the era is detected again.
    pub(super) fn retries_under_hint(&self, call: CallId, p: &Pending, why: &str) -> bool {
        let retry = self.era.retries_failed_call(p.hinted(), p.may_resend());
        if retry && self.era.unconfirmed() {
            tracing::debug!(?call, why, "a call failed under a remembered modern era");
        }
        retry
    }

    /// Puts a call that failed under a remembered era back in the queue, to
    /// be re-sent once, and starts detecting the era again if that has not
    /// started.
    pub(super) fn requeue(
        &mut self,
        call: CallId,
        p: Pending,
        (calls, out, config): Parts<'_>,
        now: Instant,
    ) -> Closing {
        let why = format!("{} failed", p.method());
        calls.put_back(p.into_resend(call, Resend::EraRedetected));
        if self.era.unconfirmed() {
            return self.redetect(&why, (calls, out, config), now);
        }
        Ok(())
    }

    /// Sends the calls held back, in order (the session is ready).
    pub(super) fn send_held(&self, (calls, out, config): Parts<'_>, now: Instant) {
        while let Some(d) = calls.next_held() {
            out.request(calls.send(d, None, self.route(), config, Some(now)));
        }
    }

    // ---- the handshake --------------------------------------------------

    /// Starts from what an earlier connection learned, or detects.
    pub(super) fn start(
        &mut self,
        hint: Option<EraHint>,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        if !matches!(self.phase, Phase::Idle) {
            return Ok(());
        }
        parts.1.telemetry().start_session();
        let step = match self.era.start(hint, parts.2.version, now) {
            Start::Detect => handshake::detect(parts.2),
            Start::Legacy(v) => Step::Initialize {
                offered: v,
                detected: true,
                late_probe: None,
                retries: Retries::default(),
            },
            Start::Probe(v) => Step::Probe(v, Retries::default()),
            Start::Ready(server) => {
                self.become_ready(server, parts, now);
                return Ok(());
            }
        };
        self.take(step, parts, now)
    }

    /// The probe was answered.
    pub(super) fn probe_answered(
        &mut self,
        result: Result<RawJson, ErrorObject>,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        let step = handshake::probe_answered(parts.2, self.retries(), result, now);
        self.take(step, parts, now)
    }

    /// `initialize` was answered.
    pub(super) fn initialize_answered(
        &mut self,
        result: Result<RawJson, ErrorObject>,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        let Phase::Initializing {
            offered,
            detected,
            retries,
            ..
        } = self.phase
        else {
            return Ok(());
        };
        let step = handshake::initialize_answered(parts.2, offered, detected, retries, result);
        self.take(step, parts, now)
    }

    /// Whether `id` is the probe that timed out and fell back to the
    /// `initialize` now out (its answer still counts).
    pub(super) fn is_late_probe(&self, id: &RequestId) -> bool {
        matches!(&self.phase, Phase::Initializing { late_probe: Some(late), .. } if late == id)
    }

    /// The probe that timed out was answered after all (see
    /// [`handshake::late_probe_wins`]).
    pub(super) fn late_probe_answered(
        &mut self,
        result: Result<RawJson, ErrorObject>,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        let Phase::Initializing {
            late_probe,
            retries,
            ..
        } = &mut self.phase
        else {
            return Ok(());
        };
        *late_probe = None;
        let retries = *retries;
        if !parts.0.initialize_sent() || !handshake::late_probe_wins(&result) {
            return Ok(());
        }
        parts.0.forget_initialize();
        let step = handshake::probe_answered(parts.2, retries, result, now);
        self.take(step, parts, now)
    }

    /// The probe failed as `cause` says (and, when it timed out, its late
    /// answer `late_probe` may still come).
    pub(super) fn probe_failed(
        &mut self,
        cause: HandshakeError,
        late_probe: Option<RequestId>,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        let step = handshake::probe_failed(parts.2, self.retries(), cause, late_probe);
        self.take(step, parts, now)
    }

    /// `initialize` failed in the transport: a remembered legacy era is
    /// detected again, unless the transport closed or refused the
    /// credentials (asking again would only run the authorization again).
    pub(super) fn initialize_failed(
        &mut self,
        err: TransportError,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        if self.era.trusting_legacy()
            && err.kind() != TransportErrorKind::Closed
            && err.kind() != TransportErrorKind::Unauthorized
        {
            let why = format!(
                "initialize failed in the transport: {}",
                mcp_proto::error::chain(&err)
            );
            return self.redetect(&why, parts, now);
        }
        Err(CloseReason::Transport(err))
    }

    /// The retries of the handshake under way.
    fn retries(&self) -> Retries {
        match self.phase {
            Phase::Probing(retries) | Phase::Initializing { retries, .. } => retries,
            _ => Retries::default(),
        }
    }

    /// Carries out what the handshake decided.
    fn take(&mut self, step: Step, parts: Parts<'_>, now: Instant) -> Closing {
        match step {
            Step::Probe(v, retries) => self.send_probe(v, retries, parts, now),
            Step::Initialize {
                offered,
                detected,
                late_probe,
                retries,
            } => {
                let phase = Phase::Initializing {
                    offered,
                    detected,
                    late_probe,
                    retries,
                };
                return self.send_initialize(phase, parts, now);
            }
            Step::Modern {
                server,
                fresh_until,
            } => {
                let server = Arc::new(server);
                self.era.learn(Some(EraHint::Modern {
                    server: server.clone(),
                    fresh_until,
                }));
                self.become_ready(server, parts, now);
            }
            Step::Legacy { server, detected } => {
                let v = server.protocol_version;
                // The transport must leave the probe's modern mode before it
                // sends `notifications/initialized` (HTTP: session id,
                // version header, standalone GET stream).
                parts.1.protocol_version(v);
                parts
                    .1
                    .notification(Notification::new("notifications/initialized", None));
                self.era.learn(detected.then_some(EraHint::Legacy(v)));
                self.become_ready(Arc::new(server), parts, now);
            }
            Step::Failed(why) => {
                // A remembered legacy era that the server refuses: detect again.
                if self.era.trusting_legacy() {
                    return self.redetect(&why.to_string(), parts, now);
                }
                return Err(CloseReason::Handshake(why));
            }
            Step::Close(reason) => return Err(reason),
        }
        Ok(())
    }

    fn send_probe(
        &mut self,
        v: ProtocolVersion,
        retries: Retries,
        (calls, out, config): Parts<'_>,
        now: Instant,
    ) {
        self.phase = Phase::Probing(retries);
        self.protocol_meta = protocol_members(config, v);
        out.protocol_version(v);
        let id = calls.next_id();
        let deadline = now + handshake::probe_timeout(config);
        let mut trace = out.telemetry().start_handshake("server/discover");
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
        out.request(Request::new(id.clone(), "server/discover", Some(params)));
        let pending = Pending::handshake(Purpose::Probe, "server/discover", now, deadline, trace);
        calls.insert(id, pending);
    }

    /// Sends `initialize` for `phase` (an `Initializing`).
    fn send_initialize(
        &mut self,
        phase: Phase,
        (calls, out, config): Parts<'_>,
        now: Instant,
    ) -> Closing {
        let Phase::Initializing { offered: v, .. } = phase else {
            return Ok(());
        };
        self.phase = phase;
        let raw = handshake::initialize_params(config, v).map_err(CloseReason::Handshake)?;
        let id = calls.next_id();
        let mut trace = out.telemetry().start_handshake("initialize");
        if let Some(t) = &mut trace {
            t.sent(&id, Some(v));
        }
        let raw = match trace.as_ref().and_then(|t| t.trace_meta()) {
            Some(meta) => {
                compose_params(Some(&raw), &MetaParts::default().trace(Some(meta))).unwrap_or(raw)
            }
            None => raw,
        };
        out.request(Request::new(id.clone(), "initialize", Some(raw)));
        let deadline = now + config.handshake_timeout;
        let pending = Pending::handshake(Purpose::Initialize, "initialize", now, deadline, trace);
        calls.insert(id, pending);
        Ok(())
    }

    fn become_ready(&mut self, info: Arc<ServerInfo>, parts: Parts<'_>, now: Instant) {
        let (calls, out, config) = parts;
        let v = info.protocol_version;
        self.protocol_meta = if v.era() == Era::Modern {
            protocol_members(config, v)
        } else {
            // Built for the `server/discover` probe; a legacy session never
            // sends it again (a probe sent later builds it anew).
            None
        };
        out.protocol_version(v);
        out.telemetry().ready(v);
        self.server = Some(info);
        self.era.ready();
        // What the handshake queued (the legacy `notifications/initialized`)
        // must reach the server before the session counts as ready.
        let readiness = if out.holds_no_message() {
            out.event(Event::Ready);
            Readiness::Announced
        } else {
            Readiness::Flushing
        };
        self.phase = Phase::Ready(readiness);
        self.send_held((calls, out, config), now);
    }

    /// A remembered era proved wrong: forget it and detect the era from
    /// scratch, once.
    fn redetect(&mut self, why: &str, parts: Parts<'_>, now: Instant) -> Closing {
        tracing::info!(
            why,
            "the remembered era of this server no longer holds; detecting it again"
        );
        self.era.forget();
        self.server = None;
        let step = handshake::detect(parts.2);
        self.take(step, parts, now)
    }

    // ---- a session the server ended (see `renew.rs`) --------------------

    /// The transport lost the session (not scoped to a request).
    pub(super) fn session_lost(
        &mut self,
        err: TransportError,
        parts: Parts<'_>,
        now: Instant,
    ) -> Closing {
        // During a handshake (this very renewal, or the first) there is no
        // session in use to replace: it carries on.
        if !self.sends() {
            tracing::debug!(error = %mcp_proto::error::chain(&err), "session lost while a handshake is under way");
            return Ok(());
        }
        let Some(v) = self.version() else {
            return Ok(());
        };
        if v.era() == Era::Modern {
            // 2026-07-28 has no sessions: nothing to renew.
            tracing::warn!(error = %mcp_proto::error::chain(&err), "the transport reported a lost session in the 2026-07-28 era; ignored");
            return Ok(());
        }
        let renewal = match self.renewals.next() {
            Ok(n) => n,
            Err(renewals) => {
                return Err(CloseReason::SessionsLost {
                    renewals,
                    error: err,
                });
            }
        };
        tracing::info!(error = %mcp_proto::error::chain(&err), renewal, "the server ended the session; starting a new one");
        parts.1.telemetry().renewed(renewal);
        // A new session with the revision in use; calls made meanwhile wait.
        let detected = matches!(self.era.learned(), Some(EraHint::Legacy(_)));
        self.server = None;
        let phase = Phase::Initializing {
            offered: v,
            detected,
            late_probe: None,
            retries: Retries::default(),
        };
        self.send_initialize(phase, parts, now)
    }

    /// A call the server did not process because its session was gone:
    /// re-sent once in the new session (the loss came first, so the new
    /// session is starting or has started).
    pub(super) fn resend_after_expiry(
        &self,
        call: CallId,
        p: Pending,
        parts: Parts<'_>,
        now: Instant,
    ) {
        tracing::info!(method = %p.method(), "not processed in the session the server ended; re-sending it in the new one");
        parts
            .0
            .put_back(p.into_resend(call, Resend::SessionExpired));
        if self.sends() {
            // The new session is ready already: it goes now.
            self.send_held(parts, now);
        }
    }
}

/// The other parts the negotiation works with: the calls (it sends the
/// handshake's requests and, once ready, the calls held back), the output
/// and the configuration.
pub(super) type Parts<'a> = (&'a mut Calls, &'a mut Output, &'a SessionConfig);
