//! Errors a client call can end with.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::ErrorObject;
use mcp_proto::transport::TransportError;

/// Why a client call failed.
///
/// Errors are data: `Clone`, so one transport failure can be handed to every
/// waiting caller. A tool that *ran* and failed is not an error here: it is a
/// `CallToolResult` with `is_error: true`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport failed for this request (the connection may still be usable).
    #[error("{0}")]
    Transport(#[source] TransportError),
    /// The transport dropped the frame that answered this call (over the
    /// size limit, not JSON-RPC, undecodable): the call fails at once rather
    /// than wait for an answer already thrown away. The connection goes on.
    #[error("the response to {method} was dropped: {}", dropped_cause(error))]
    AnswerDropped {
        /// The method of the call.
        method: String,
        /// What the transport said (a [`Decode`](mcp_proto::transport::TransportErrorKind::Decode)
        /// error; its cause names the limit to raise, if any).
        #[source]
        error: TransportError,
    },
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Rpc(ErrorObject),
    /// The server's result did not match the method's result type (serde's
    /// error is the [`source`](std::error::Error::source)).
    #[error("could not decode the result of {method}")]
    Decode {
        /// The method whose result failed to decode.
        method: String,
        /// What serde said.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// The request's params could not be encoded (a `Serialize` impl
    /// failed, or a map had non-string keys). Nothing was sent.
    #[error("could not encode the params of {method}")]
    Encode {
        /// The method whose params failed to encode.
        method: String,
        /// What serde said.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// No response within the request's timeout; the request was cancelled on the server.
    #[error("{method} timed out after {after:?} (the request was cancelled on the server)")]
    Timeout {
        /// The method that timed out.
        method: String,
        /// How long the client waited.
        after: Duration,
    },
    /// The connection is closed; the call cannot complete.
    #[error("connection closed: {0}")]
    Closed(#[source] CloseReason),
    /// The server speaks no protocol revision this client supports.
    #[error(
        "the server does not support protocol {offered} (it supports: {})",
        supported.join(", ")
    )]
    UnsupportedProtocolVersion {
        /// The version the client asked for.
        offered: String,
        /// The versions the server said it supports.
        supported: Vec<String>,
    },
    /// The method does not exist in the negotiated protocol revision.
    #[error("{method} is not part of protocol revision {version}")]
    NotInRevision {
        /// The method.
        method: String,
        /// The negotiated revision.
        version: mcp_proto::ProtocolVersion,
    },
    /// The server kept asking for input (2026-07-28 `input_required`) beyond the limit.
    #[error(
        "the server asked for input {rounds} times in a row; giving up (limit: max_input_rounds)"
    )]
    TooManyInputRounds {
        /// How many rounds were answered.
        rounds: u32,
    },
    /// Too many pages in a `list_all_*` call.
    #[error("more than {limit} pages while listing {method}; giving up (limit: max_list_pages)")]
    TooManyPages {
        /// The list method.
        method: String,
        /// The page cap.
        limit: usize,
    },
    /// A skill file (SEP-2640) is not what the server's `skills/list` entry
    /// promised (size, digest or frontmatter): its content was not used.
    #[error("skill file {uri} failed verification: {reason}; its content was not used")]
    SkillVerification {
        /// The file's resource URI.
        uri: String,
        /// What did not match.
        reason: String,
    },
}

impl ClientError {
    /// The JSON-RPC error, if the server sent one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// Whether this is a timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Timeout { .. })
    }

    /// Whether the connection is gone (closed, or a terminal transport error).
    pub fn is_closed(&self) -> bool {
        matches!(self, ClientError::Closed(_))
    }
}

fn dropped_cause(e: &TransportError) -> String {
    match e.cause() {
        Some(c) => c.to_string(),
        None => e.to_string(),
    }
}

/// Why the connection closed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CloseReason {
    /// The client closed it.
    ClosedByClient,
    /// The server closed its side cleanly.
    ServerClosed,
    /// The transport failed (e.g. "server exited with status 1: fatal: config missing").
    Transport(TransportError),
    /// The handshake failed.
    Handshake(String),
    /// The client's driver is gone (its task was dropped or the runtime shut down).
    DriverGone,
    /// The driver was polled outside a tokio runtime (it needs one, with
    /// the time driver enabled, for its timers and handler tasks).
    NoRuntime,
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::ClosedByClient => f.write_str("closed by the client"),
            CloseReason::ServerClosed => f.write_str("the server closed the connection"),
            // "connection closed: server exited with status 1: …", not "connection closed: connection closed: …".
            CloseReason::Transport(e)
                if e.kind() == mcp_proto::transport::TransportErrorKind::Closed =>
            {
                match e.cause() {
                    Some(c) => write!(f, "{c}"),
                    None => f.write_str("the transport closed"),
                }
            }
            CloseReason::Transport(e) => write!(f, "{e}"),
            CloseReason::Handshake(m) => write!(f, "handshake failed: {m}"),
            CloseReason::DriverGone => f.write_str("the client's driver task is gone"),
            CloseReason::NoRuntime => f.write_str(
                "the client's driver ran outside a tokio runtime; spawn it on one (tokio::spawn)",
            ),
        }
    }
}

impl std::error::Error for CloseReason {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CloseReason::Transport(e) => Some(e),
            _ => None,
        }
    }
}
