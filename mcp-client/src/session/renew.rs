//! A session the server ended: starting a new one, and re-sending what it
//! did not process.
//!
//! Streamable HTTP (2025-03-26 … 2025-11-25, "Session Management"): a
//! server that no longer knows a session answers 404 to any message of it,
//! and the client MUST then start a new session, with an `initialize`
//! without the session id. The transport reports the loss once
//! ([`SessionExpired`](mcp_proto::transport::TransportErrorKind::SessionExpired)
//! not scoped to a request), whichever message found it (a request, a
//! notification, a response, the `GET` stream), and sends nothing but
//! `initialize` until then. The session:
//!
//! - starts a new session at once: `initialize` with the revision in use,
//!   then `notifications/initialized`; calls made meanwhile wait, as during
//!   the first handshake, and count the wait against their timeouts;
//! - re-sends, in the new session, a call whose own message was answered
//!   404 (or held back by the transport): the server did not process it,
//!   so this is safe for every method, a `tools/call` too. Only once per
//!   call, and only with [`resend_on_session_expiry`](super::SessionConfig::resend_on_session_expiry)
//!   (its params must have been kept); otherwise the call fails with the
//!   transport's error;
//! - leaves alone the calls in flight on streams of the old session: each
//!   ends with its answer or its own error (one whose stream broke may
//!   have run, and is never re-sent);
//! - gives up after [`max_session_renewals`](super::SessionConfig::max_session_renewals)
//!   new sessions in a row that the server ended before answering any call
//!   in them: the connection closes with [`CloseReason::SessionsLost`], so a
//!   server that 404s every session cannot make the client loop.

use std::time::Instant;

use mcp_proto::transport::TransportError;
use mcp_proto::{Era, ProtocolVersion};

use super::calls::Pending;
use super::core::Phase;
use super::{CallId, Session};
use crate::error::CloseReason;

impl Session {
    /// The transport lost the session (not scoped to a request).
    pub(super) fn on_session_lost(&mut self, err: TransportError, now: Instant) {
        // During a handshake (this very renewal, or the first) there is no
        // session in use to replace: it carries on.
        if !matches!(self.phase, Phase::Ready(_)) {
            tracing::debug!(error = %mcp_proto::error::chain(&err), "session lost while a handshake is under way");
            return;
        }
        let Some(v) = self.server.as_ref().map(|s| s.protocol_version) else {
            return;
        };
        if v.era() == Era::Modern {
            // 2026-07-28 has no sessions: nothing to renew.
            tracing::warn!(error = %mcp_proto::error::chain(&err), "the transport reported a lost session in the 2026-07-28 era; ignored");
            return;
        }
        if self.renewals >= self.config.max_session_renewals {
            self.handle_closed(CloseReason::SessionsLost {
                renewals: self.renewals,
                error: err,
            });
            return;
        }
        self.renewals += 1;
        tracing::info!(error = %mcp_proto::error::chain(&err), renewal = self.renewals, "the server ended the session; starting a new one");
        self.telemetry.renewed(self.renewals);
        self.renew(v, now);
    }

    /// Starts a new session with revision `v`: `initialize`, then what the
    /// handshake does. Calls made meanwhile wait for it.
    fn renew(&mut self, v: ProtocolVersion, now: Instant) {
        self.server = None;
        self.send_initialize(v, now);
    }

    /// A call the server did not process because its session was gone:
    /// re-sent once in the new session (the loss came first, so the new
    /// session is starting or has started).
    pub(super) fn resend_after_expiry(&mut self, call: CallId, mut p: Pending, now: Instant) {
        tracing::info!(method = %p.method, "not processed in the session the server ended; re-sending it in the new one");
        if let Some(t) = &mut p.trace {
            t.resend(crate::telemetry::Resend::SessionExpired);
        }
        self.put_back(call, p);
        if matches!(self.phase, Phase::Ready(_)) {
            // The new session is ready already: it goes now.
            while let Some(d) = self.queued.pop_front() {
                self.send_user(d, None, None, now);
            }
        }
    }
}
