//! What the caller configures: the revision to speak, limits and identity.

use std::time::Duration;

use mcp_proto::schema::{ClientCapabilities, Implementation, LoggingLevel};
use mcp_proto::transport::Endpoint;
use mcp_proto::{Era, ProtocolVersion};

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

/// Limits and identity for a [`Session`](super::Session).
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
    /// Only [`VersionChoice::Auto`] probes on this clock: with a pinned
    /// modern revision or era there is nothing to fall back to, so the probe
    /// is the handshake and waits [`handshake_timeout`](Self::handshake_timeout)
    /// (an OAuth flow run for it on a loaded machine can take longer than 5 s).
    pub probe_timeout: Duration,
    /// How long the handshake (`initialize`) may take. Default 60 s.
    pub handshake_timeout: Duration,
    /// Default per-request timeout; progress notifications reset it. Default 60 s.
    /// It runs from when the call is made: time queued for a new session and
    /// a re-send after an expired one count against it; an `input_required`
    /// round starts it again.
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
    /// How many of the server's requests (legacy era) may be handed to the
    /// owner unanswered at once; more are answered "client busy" (-32603) at
    /// once. Default [`DEFAULT_MAX_SERVER_REQUESTS`].
    pub max_server_requests: usize,
    /// How many answers to the server's requests (its pings included) may
    /// wait for the transport before the session stops taking input
    /// ([`Session::accepts_input`](super::Session::accepts_input)); also how
    /// many queued messages make [`Session::notify`](super::Session::notify)
    /// refuse with [`ClientError::Busy`](crate::ClientError::Busy). A server
    /// that stops reading while it keeps sending is then no longer read
    /// from, instead of growing this queue. Default [`DEFAULT_MAX_OUTBOUND_BACKLOG`].
    pub max_outbound_backlog: usize,
    /// How many new sessions in a row the server may end (HTTP 404) before
    /// answering any call in them; one more loss closes the connection
    /// with [`CloseReason::SessionsLost`](crate::CloseReason::SessionsLost)
    /// instead of starting another. Default [`DEFAULT_MAX_SESSION_RENEWALS`].
    pub max_session_renewals: u32,
    /// Where the server is, for the spans and metrics (see
    /// [`telemetry`](crate::telemetry)); the client fills it from
    /// [`Transport::endpoint`](mcp_proto::transport::Transport::endpoint).
    pub endpoint: Endpoint,
    /// Declare the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`)
    /// in every modern request's client capabilities: the server may then
    /// answer a `tools/call` with a task handle, reported as
    /// [`Event::TaskCreated`](super::Event::TaskCreated). Default on (see
    /// [`ClientBuilder::tasks_extension`](crate::ClientBuilder::tasks_extension)
    /// for why). No effect on a legacy session.
    pub tasks_extension: bool,
    /// Record `tools/call` arguments and results on the call's span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). They may
    /// hold sensitive data: default off.
    pub record_tool_content: bool,
}

/// Default [`SessionConfig::max_server_requests`].
pub const DEFAULT_MAX_SERVER_REQUESTS: usize = 64;

/// Default [`SessionConfig::max_outbound_backlog`]: a server's answers are
/// small (a ping's is ~40 bytes), so this bounds the queue to well under a
/// MiB while never pausing a server that reads what it asked for.
pub const DEFAULT_MAX_OUTBOUND_BACKLOG: usize = 1024;

/// Default [`SessionConfig::max_session_renewals`]: a session a server
/// ended is replaced at once, again if the first replacement is ended too
/// (a server restarting under load), but a server that ends every session
/// it starts is given up on after three, within a few round trips.
pub const DEFAULT_MAX_SESSION_RENEWALS: u32 = 3;

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
            max_server_requests: DEFAULT_MAX_SERVER_REQUESTS,
            max_outbound_backlog: DEFAULT_MAX_OUTBOUND_BACKLOG,
            max_session_renewals: DEFAULT_MAX_SESSION_RENEWALS,
            endpoint: Endpoint::default(),
            record_tool_content: false,
            tasks_extension: true,
        }
    }
}
