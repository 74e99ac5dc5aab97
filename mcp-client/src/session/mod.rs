//! The sans-IO session core: ids, pending requests, era negotiation,
//! timeouts, cancellation, progress and input-required rounds, as data.
//!
//! [`Session`] does no IO and reads no clock: time is an [`Instant`](std::time::Instant) passed
//! in by the caller. It is driven by four kinds of calls, in this order of
//! roles (the shape of `quinn-proto`'s `Connection`):
//!
//! - **input**: [`handle_message`](Session::handle_message) for each message
//!   the transport received, [`handle_transport_error`](Session::handle_transport_error),
//!   [`handle_closed`](Session::handle_closed), [`handle_timeout`](Session::handle_timeout),
//!   [`handle_flushed`](Session::handle_flushed) when the transport has
//!   flushed everything `poll_transmit` gave it;
//! - **commands**: [`request`](Session::request), [`notify`](Session::notify),
//!   [`cancel`](Session::cancel), [`respond`](Session::respond),
//!   [`provide_input`](Session::provide_input), [`close`](Session::close);
//! - **output**: [`poll_transmit`](Session::poll_transmit) (messages to send,
//!   in order), [`poll_event`](Session::poll_event) (what callers must learn),
//!   [`poll_timeout`](Session::poll_timeout) (when to call `handle_timeout`),
//!   [`accepts_input`](Session::accepts_input) (whether to read more now).
//!
//! After any input or command, drain `poll_transmit` and `poll_event`, then
//! re-arm the timer from `poll_timeout`. Read from the transport only while
//! `accepts_input` holds: the session stops taking input while the answers
//! it owes the server back up (the server is not reading them), so a server
//! cannot grow the client's memory by sending faster than it reads.
//!
//! # `_meta`
//!
//! A request's `_meta` is written in one place, when the request goes out
//! (again for each re-send, in the revision then in use). Who decides a
//! member, in order:
//!
//! 1. the params themselves: a `_meta` the caller wrote into the params is
//!    sent as written (the raw escape hatch stays raw), except
//!    `progressToken` when the call asked for progress (the session routes
//!    progress by its own token);
//! 2. the protocol: in 2026-07-28 the revision, the client's info and
//!    capabilities and the log level on every request; `progressToken`;
//! 3. the members given with [`request_with_meta`](Session::request_with_meta)
//!    (`RequestBuilder::meta`);
//! 4. the W3C trace context (`traceparent`, `tracestate`, `baggage`) of the
//!    request's OpenTelemetry span (feature `opentelemetry`, see
//!    [`telemetry`](crate::telemetry#trace-context-to-the-server-feature-opentelemetry)).
//!
//! A member is never replaced by one of a lower rank of the same name.
//!
//! # The server's requests
//!
//! A server request (legacy era) reaches the owner as
//! [`Event::ServerRequest`] and is answered with [`respond`](Session::respond).
//! At most [`SessionConfig::max_server_requests`] are out at once; more are
//! answered "client busy" by the session. A `notifications/cancelled` for
//! one emits [`Event::ServerRequestCancelled`]: the owner stops working on
//! it, and an answer given later is not sent (the spec: a cancelled request
//! gets no response).
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
//!
//! A probe answer is not thrown away for being late: a slow modern server
//! (the Python SDK starting on a loaded machine) may answer `server/discover`
//! after the probe timeout, and then refuses the fallback `initialize` with
//! -32022 because the connection now serves 2026-07-28. So a valid
//! `DiscoverResult` arriving while the fallback `initialize` is unanswered
//! wins (the session is modern; the `initialize` answer is dropped), and a
//! -32022 refusal of the fallback `initialize` naming a modern revision we
//! speak sends the probe again, once. A legacy server waits no longer.
//!
//! # Dropped answers
//!
//! When the transport drops the frame that answered a call (over the size
//! limit, not JSON-RPC: a `Decode` error scoped to that request, see
//! [`mcp_proto::transport`]), the call fails at once with
//! [`ClientError::AnswerDropped`](crate::ClientError::AnswerDropped), which
//! names the size, the limit and what to raise. A dropped response whose id
//! could not be learned fails every call waiting for an answer (any may have
//! been it); the connection goes on.
//! Requests made before the session is ready wait in order and are sent when
//! it is.
//!
//! # A session the server ended
//!
//! When the transport reports the session lost (Streamable HTTP: the server
//! answered 404 to a message of it), the session starts a new one at once,
//! with `initialize`, as the spec requires; calls made meanwhile wait for
//! it. A call the server did not process (its own message was answered
//! 404) is re-sent in the new session, once, when
//! [`SessionConfig::resend_on_session_expiry`] kept its params; a call in
//! flight on a stream of the old session keeps its own fate. A server that
//! ends [`SessionConfig::max_session_renewals`] new sessions in a row before
//! answering a call in any closes the connection with
//! [`CloseReason::SessionsLost`](crate::CloseReason::SessionsLost).
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

mod calls;
mod config;
mod core;
mod era;
mod handshake;
mod meta;
mod negotiation;
mod output;
mod renew;
mod result_type;
mod server_requests;
pub mod task;

#[cfg(test)]
mod tests;

pub use self::core::Session;
pub use calls::{CallId, CallOptions, progress_token};
pub use config::{
    DEFAULT_MAX_OUTBOUND_BACKLOG, DEFAULT_MAX_SERVER_REQUESTS, DEFAULT_MAX_SESSION_RENEWALS,
    SessionConfig, VersionChoice,
};
pub use era::EraHint;
pub use handshake::ServerInfo;
pub use output::{Event, Transmit};
pub use task::{MAX_SERVER_DURATION, TaskNext, TaskReportError, TaskTracker};

/// When an input reached the session: an [`Instant`](std::time::Instant),
/// or a function returning one, called only if the session needs the time.
/// Most answers complete a call and need none, so the tokio driver passes
/// its clock function and reads the clock only when an answer needs it.
pub trait Now {
    /// The time.
    fn now(self) -> std::time::Instant;
}

impl Now for std::time::Instant {
    fn now(self) -> std::time::Instant {
        self
    }
}

impl<F: FnOnce() -> std::time::Instant> Now for F {
    fn now(self) -> std::time::Instant {
        self()
    }
}

pub(crate) use mcp_proto::jsonrpc::IdHash;
