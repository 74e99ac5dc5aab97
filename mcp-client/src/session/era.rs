//! Remembered eras: starting from what an earlier connection learned, and
//! detecting the era again, once, when that proves wrong.

use std::sync::Arc;
use std::time::Instant;

use mcp_proto::{Era, ProtocolVersion};

use super::calls::Pending;
use super::core::Phase;
use super::{CallId, ServerInfo, Session, VersionChoice};
use crate::error::{CloseReason, HandshakeError};

/// What an earlier connection learned about a server's era, so that the
/// next connection to the same server can skip detection. See the
/// [module docs](crate::session#remembered-eras).
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
pub(super) enum HintState {
    /// No hint in play.
    None,
    /// `initialize` went out from a legacy hint.
    Legacy,
    /// Ready from a fresh modern hint; no response has succeeded yet.
    Unconfirmed,
    /// A hint failed; detecting the era again (until the next `Ready`).
    Redetecting,
}

impl Session {
    /// Starts negotiation using what an earlier connection to the same server
    /// learned (see the [module docs](crate::session#remembered-eras)). A hint that does
    /// not fit [`SessionConfig::version`](super::SessionConfig::version) (another era, another pinned
    /// revision) is ignored.
    pub fn start_with_hint(&mut self, now: Instant, hint: Option<EraHint>) {
        if !matches!(self.phase, Phase::Idle) {
            return;
        }
        self.telemetry.start_session();
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
                let server = server.clone();
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
    /// when [`Event::Ready`](super::Event::Ready) is emitted after detection (the probe, or its
    /// fallback to `initialize`) or a hint that held; `None` before, when the
    /// era was only chosen by [`SessionConfig::version`](super::SessionConfig::version) (a legacy pin says
    /// nothing about whether the server is also modern), and after a hint
    /// failed until detection finishes.
    pub fn learned_era(&self) -> Option<&EraHint> {
        self.learned.as_ref()
    }

    /// A hint proved wrong: forget it and detect the era from scratch, once.
    pub(super) fn redetect(&mut self, why: &str, now: Instant) {
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
    pub(super) fn retry_if_hint_failed(&self, call: CallId, p: &Pending, why: &str) -> bool {
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
    pub(super) fn requeue(&mut self, call: CallId, mut p: Pending, now: Instant) {
        let why = format!("{} failed", p.method);
        if let Some(t) = &mut p.trace {
            t.resend(crate::telemetry::Resend::EraRedetected);
        }
        self.put_back(call, p);
        if self.hint == HintState::Unconfirmed {
            self.redetect(&why, now);
        }
    }

    /// The handshake failed: under a legacy hint, detect the era again;
    /// otherwise close.
    pub(super) fn handshake_failed(&mut self, why: HandshakeError, now: Instant) {
        if self.hint == HintState::Legacy {
            self.redetect(&why.to_string(), now);
        } else {
            self.handle_closed(CloseReason::Handshake(why));
        }
    }
}
