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

/// The new sessions started in a row after the server ended the one in
/// use, with no call answered since.
///
/// Invariant: at most `limit`; one more loss is given up on.
#[derive(Debug)]
pub(super) struct Renewals {
    in_a_row: u32,
    limit: u32,
}

impl Renewals {
    /// `limit` is [`SessionConfig::max_session_renewals`](super::SessionConfig::max_session_renewals).
    pub(super) fn new(limit: u32) -> Self {
        Renewals { in_a_row: 0, limit }
    }

    /// A call was answered: the session in use works.
    #[inline]
    pub(super) fn answered(&mut self) {
        self.in_a_row = 0;
    }

    /// The server ended the session in use: the number of the new session
    /// to start, or `Err` with how many were started when that is the limit.
    pub(super) fn next(&mut self) -> Result<u32, u32> {
        if self.in_a_row >= self.limit {
            return Err(self.in_a_row);
        }
        self.in_a_row += 1;
        Ok(self.in_a_row)
    }
}
