//! Remembered eras: starting from what an earlier connection learned, and
//! detecting the era again, once, when that proves wrong.

use std::sync::Arc;
use std::time::Instant;

use mcp_proto::{Era, ProtocolVersion};

use super::{ServerInfo, VersionChoice};

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

/// How far a hint given to [`Session::start_with_hint`](super::Session::start_with_hint) has been trusted.
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

/// What the session knows of the server's era beyond this connection: the
/// hint it started from and how far it is trusted, and what it learned to
/// remember for the next connection.
///
/// Invariant: `learned` is `None` from the moment a hint fails until
/// detection finishes (a wrong hint is never handed on).
#[derive(Debug)]
pub(super) struct EraMemory {
    hint: HintState,
    learned: Option<EraHint>,
}

/// How a session starts from a hint.
#[derive(Debug)]
pub(super) enum Start {
    /// No usable hint: detect the era.
    Detect,
    /// A legacy server: `initialize` with this revision at once.
    Legacy(ProtocolVersion),
    /// A modern server whose answer is fresh: ready at once with it.
    Ready(Arc<ServerInfo>),
    /// A modern server whose answer is stale: probe with its revision.
    Probe(ProtocolVersion),
}

impl EraMemory {
    pub(super) fn new() -> Self {
        EraMemory {
            hint: HintState::None,
            learned: None,
        }
    }

    /// How to start from `hint` (ignored when it does not fit `version`:
    /// another era, another pinned revision).
    pub(super) fn start(
        &mut self,
        hint: Option<EraHint>,
        version: VersionChoice,
        now: Instant,
    ) -> Start {
        let fits = |h: &EraHint| match version {
            VersionChoice::Auto => true,
            VersionChoice::Era(e) => h.era() == e,
            VersionChoice::Pinned(v) => h.protocol_version() == v,
        };
        match hint.filter(fits) {
            Some(EraHint::Legacy(v)) => {
                self.hint = HintState::Legacy;
                Start::Legacy(v)
            }
            Some(h @ EraHint::Modern { .. }) if h.is_fresh(now) => {
                let EraHint::Modern { server, .. } = &h else {
                    return Start::Detect;
                };
                let server = server.clone();
                self.hint = HintState::Unconfirmed;
                self.learned = Some(h);
                Start::Ready(server)
            }
            Some(EraHint::Modern { server, .. }) => Start::Probe(server.protocol_version),
            None => Start::Detect,
        }
    }

    /// What this session learned (see [`Session::learned_era`](super::Session::learned_era)).
    pub(super) fn learned(&self) -> Option<&EraHint> {
        self.learned.as_ref()
    }

    /// What detection found, to remember.
    pub(super) fn learn(&mut self, learned: Option<EraHint>) {
        self.learned = learned;
    }

    /// The session became ready: a hint that was being checked is
    /// settled, except a modern one no response has confirmed yet.
    pub(super) fn ready(&mut self) {
        if self.hint != HintState::Unconfirmed {
            self.hint = HintState::None;
        }
    }

    /// A response succeeded: a remembered modern era works.
    #[inline]
    pub(super) fn confirmed(&mut self) {
        if self.hint == HintState::Unconfirmed {
            self.hint = HintState::None;
        }
    }

    /// Whether calls go out under a remembered modern era not yet confirmed.
    #[inline]
    pub(super) fn unconfirmed(&self) -> bool {
        self.hint == HintState::Unconfirmed
    }

    /// Whether `initialize` went out from a remembered legacy era.
    pub(super) fn trusting_legacy(&self) -> bool {
        self.hint == HintState::Legacy
    }

    /// Whether a call that failed (sent under an unconfirmed modern era,
    /// `hinted`, and able to go out again, `may_resend`) should be re-sent
    /// once the era is detected again.
    pub(super) fn retries_failed_call(&self, hinted: bool, may_resend: bool) -> bool {
        hinted && may_resend && matches!(self.hint, HintState::Unconfirmed | HintState::Redetecting)
    }

    /// The hint proved wrong: forget it; the era is detected again, once.
    pub(super) fn forget(&mut self) {
        self.hint = HintState::Redetecting;
        self.learned = None;
    }
}
