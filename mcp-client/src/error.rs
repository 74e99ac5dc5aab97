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
///
/// Its `Display` is its own part; the causes (the transport's error, the
/// server's exit, serde's message) are its [`source`](std::error::Error::source)s.
/// Show it to a person with [`mcp_proto::error::chain`]:
/// `connection closed: server exited with status 1: fatal: config missing`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport failed for this request (the connection may still be usable).
    #[error(transparent)]
    Transport(TransportError),
    /// The transport dropped the frame that answered this call (over the
    /// size limit, not JSON-RPC, undecodable): the call fails at once rather
    /// than wait for an answer already thrown away. The connection goes on.
    #[error("the response to {method} was dropped")]
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
        source: SerdeError,
    },
    /// The request's params could not be encoded (a `Serialize` impl
    /// failed, or a map had non-string keys). Nothing was sent.
    #[error("could not encode the params of {method}")]
    Encode {
        /// The method whose params failed to encode.
        method: String,
        /// What serde said.
        #[source]
        source: SerdeError,
    },
    /// No response within the request's timeout; a request that went out was
    /// cancelled on the server (one still queued for a new session never went out).
    #[error("{method} timed out after {after:?} (the request was cancelled on the server)")]
    Timeout {
        /// The method that timed out.
        method: String,
        /// How long the client waited.
        after: Duration,
    },
    /// The connection is closed; the call cannot complete. The
    /// [`CloseReason`] says why (its text is this error's).
    #[error(transparent)]
    Closed(CloseReason),
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
    /// A paginated list's server sent a `nextCursor` it had sent before in
    /// the same listing: following it would go round for ever.
    #[error("page {page} of {method} repeats an earlier cursor ({cursor:?}); giving up")]
    RepeatedCursor {
        /// The list method.
        method: String,
        /// The page (1-based) whose `nextCursor` was a repeat.
        page: usize,
        /// The cursor's first 64 characters (the server's text: shown
        /// escaped).
        cursor: String,
    },
    /// A paginated list's server sent a `nextCursor` longer than
    /// [`MAX_CURSOR_LEN`](crate::MAX_CURSOR_LEN).
    #[error("a nextCursor of {len} bytes in {method}; giving up (limit: {limit} bytes)")]
    CursorTooLong {
        /// The list method.
        method: String,
        /// The cursor's length in bytes.
        len: usize,
        /// The limit, [`MAX_CURSOR_LEN`](crate::MAX_CURSOR_LEN).
        limit: usize,
    },
    /// The connection is at a limit and the caller asked not to wait:
    /// [`RequestBuilder::try_send`](crate::RequestBuilder::try_send) with
    /// [`max_in_flight`](crate::ClientBuilder::max_in_flight) calls already
    /// in flight, or [`Client::notify`](crate::Client::notify) with
    /// [`max_outbound_backlog`](crate::session::SessionConfig::max_outbound_backlog)
    /// messages waiting for a server that is not reading. Nothing was sent.
    #[error(
        "the connection is at its limit of {limit}; nothing was sent (retry once calls complete)"
    )]
    Busy {
        /// The limit that was reached.
        limit: usize,
    },
    /// Too many pages in a `list_all_*` call.
    #[error("more than {limit} pages while listing {method}; giving up (limit: max_list_pages)")]
    TooManyPages {
        /// The list method.
        method: String,
        /// The page cap.
        limit: usize,
    },
    /// A task ended `cancelled` (by the server, or by a `tasks/cancel`
    /// from another requester) before it produced a result.
    #[error("task {task_id} was cancelled")]
    TaskCancelled {
        /// The task.
        task_id: String,
    },
    /// The caller's deadline passed before the task finished; `tasks/cancel`
    /// was sent for it.
    #[error("task {task_id} did not finish within {after:?} (it was cancelled on the server)")]
    TaskDeadline {
        /// The task.
        task_id: String,
        /// The deadline the caller set.
        after: Duration,
    },
    /// The task's ttl passed before it finished: the server may have deleted it.
    #[error("task {task_id} outlived its ttl of {ttl:?} without finishing")]
    TaskExpired {
        /// The task.
        task_id: String,
        /// The task's ttl.
        ttl: Duration,
    },
    /// The server answered with a 2026-07-28 task handle (`resultType:
    /// "task"`, the `io.modelcontextprotocol/tasks` extension) on a
    /// connection where the extension is not in use (a legacy revision):
    /// an invalid answer, as the extension says.
    #[error(
        "the server answered {method} with a 2026-07-28 task handle on a connection that does not use the tasks extension"
    )]
    TaskExtension {
        /// The method it answered.
        method: String,
    },
    /// A [`TaskTicket`](crate::TaskTicket) could not be resumed: the task
    /// expired, the server does not know it, or the connection is to
    /// another server or revision (the [`TicketError`](crate::TicketError)
    /// says which).
    #[error("could not resume the task from its ticket")]
    Ticket(#[source] crate::TicketError),
    /// The server reported a task that is not the one asked about, or whose
    /// id is malformed.
    #[error("a malformed task report from the server")]
    TaskReport(#[source] crate::session::TaskReportError),
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

/// A `serde_json::Error` shared by the clones of the [`ClientError`] that
/// carries it. It derefs to the error, and as a
/// [`source`](std::error::Error::source) it *is* the `serde_json::Error`
/// (an `Arc` as the source would hide it from `downcast_ref`).
#[derive(Debug, Clone)]
pub struct SerdeError(Arc<serde_json::Error>);

impl std::ops::Deref for SerdeError {
    type Target = serde_json::Error;
    fn deref(&self) -> &serde_json::Error {
        &self.0
    }
}

impl From<serde_json::Error> for SerdeError {
    fn from(e: serde_json::Error) -> Self {
        SerdeError(Arc::new(e))
    }
}

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
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

    /// Why the handshake failed, if that is why this call failed.
    pub fn handshake(&self) -> Option<&HandshakeError> {
        match self {
            ClientError::Closed(CloseReason::Handshake(h)) => Some(h),
            _ => None,
        }
    }
}

fn version_list(versions: &[String]) -> String {
    if versions.is_empty() {
        "none named".to_owned()
    } else {
        versions.join(", ")
    }
}

/// Why the connection closed.
///
/// A transport failure is [transparent](CloseReason::Transport): its text
/// and causes are the [`TransportError`]'s (`connection closed: server
/// exited with status 1`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CloseReason {
    /// The client closed it.
    ClosedByClient,
    /// The server closed its side cleanly.
    ServerClosed,
    /// The transport failed (e.g. "connection closed: server exited with
    /// status 1: fatal: config missing"). Transparent: `Display` and
    /// `source` are the transport error's own.
    Transport(TransportError),
    /// The handshake failed.
    Handshake(HandshakeError),
    /// The server ended every new session the client started (HTTP 404 to
    /// a message of it) before answering any call in it, this many times
    /// in a row ([`max_session_renewals`](crate::session::SessionConfig::max_session_renewals));
    /// the client did not start another. The
    /// [`source`](std::error::Error::source) is the last loss.
    SessionsLost {
        /// How many new sessions were started in a row.
        renewals: u32,
        /// The transport's report of the last loss.
        error: TransportError,
    },
    /// The client's driver is gone (its task was dropped or the runtime shut down).
    DriverGone,
    /// The driver was polled outside a tokio runtime (it needs one, with
    /// the time driver enabled, for its timers and handler tasks).
    NoRuntime,
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::ClosedByClient => f.write_str("the client closed the connection"),
            CloseReason::ServerClosed => f.write_str("the server closed the connection"),
            CloseReason::Transport(e) => fmt::Display::fmt(e, f),
            CloseReason::Handshake(_) => f.write_str("handshake failed"),
            CloseReason::DriverGone => {
                f.write_str("connection closed (the client's driver task is gone)")
            }
            CloseReason::SessionsLost { renewals, .. } => write!(
                f,
                "the server ended the session, and each of the {renewals} new ones the client \
                 started in a row, before answering a call in it; not starting another"
            ),
            CloseReason::NoRuntime => f.write_str(
                "connection closed (the client's driver ran outside a tokio runtime; spawn it \
                 on one: tokio::spawn)",
            ),
        }
    }
}

impl std::error::Error for CloseReason {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CloseReason::Transport(e) => e.source(),
            CloseReason::Handshake(e) => Some(e),
            CloseReason::SessionsLost { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Why the handshake (`server/discover` or `initialize`) failed: the
/// [`CloseReason`] of a connection that never became ready.
///
/// Its `Display` is its own part; the cause (the server's error, serde's
/// message, the transport's error) is its [`source`](std::error::Error::source),
/// typed. Cheap to clone (what is not a string is behind an `Arc`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The server answered the handshake request with a JSON-RPC error
    /// (the [`source`](std::error::Error::source); also [`rpc`](HandshakeError::rpc)).
    Rejected {
        /// `server/discover` or `initialize`.
        method: &'static str,
        /// The server's error answer.
        error: ErrorObject,
    },
    /// The server and the client have no protocol revision in common (or
    /// the server answered `initialize` with another revision than the
    /// pinned one).
    UnsupportedVersion {
        /// The revision the client asked for.
        requested: String,
        /// The revisions the server named (its `supported` list, or the one
        /// its `initialize` result chose).
        supported: Vec<String>,
    },
    /// A revision was pinned to the 2026-07-28 era, and the server does not
    /// speak it: `server/discover` was refused with a legacy error, timed
    /// out, or answered with something else (the
    /// [`source`](std::error::Error::source) says which).
    NotModern {
        /// How `server/discover` failed.
        cause: Arc<HandshakeError>,
    },
    /// The handshake result does not decode as the method's result type
    /// (serde's error is the [`source`](std::error::Error::source)).
    InvalidResult {
        /// `server/discover` or `initialize`.
        method: &'static str,
        /// What serde said.
        source: Arc<serde_json::Error>,
    },
    /// The handshake request could not be encoded (a client capability's
    /// `Serialize` failed); nothing was sent.
    Encode {
        /// The method whose params failed to encode.
        method: &'static str,
        /// What serde said.
        source: Arc<serde_json::Error>,
    },
    /// The handshake request failed in the transport. Only the cause of
    /// [`NotModern`](HandshakeError::NotModern): otherwise the connection
    /// closes with [`CloseReason::Transport`].
    Transport {
        /// `server/discover` or `initialize`.
        method: &'static str,
        /// What the transport said.
        error: TransportError,
    },
    /// No answer to the handshake request in time.
    Timeout {
        /// `server/discover` or `initialize`.
        method: &'static str,
        /// How long the client waited.
        after: Duration,
    },
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::Rejected { method, .. } => write!(f, "the server rejected {method}"),
            HandshakeError::UnsupportedVersion {
                requested,
                supported,
            } => write!(
                f,
                "the server does not support protocol {requested} (it supports: {}); pin a \
                 revision both sides speak, or upgrade the older side",
                version_list(supported)
            ),
            HandshakeError::NotModern { .. } => f.write_str(
                "the server does not speak the 2026-07-28 revision (let the client negotiate \
                 with VersionChoice::Auto, or pin a legacy revision)",
            ),
            HandshakeError::InvalidResult { method, .. } => {
                write!(f, "the {method} result is malformed")
            }
            HandshakeError::Encode { method, .. } => {
                write!(f, "could not encode the {method} params")
            }
            HandshakeError::Transport { method, .. } => {
                write!(f, "{method} failed in the transport")
            }
            HandshakeError::Timeout { method, after } => write!(
                f,
                "no answer to {method} within {after:?} (a server slow to start needs a longer \
                 handshake_timeout)"
            ),
        }
    }
}

/// Each cause as its own type (`serde_json::Error`, not the `Arc` around
/// it), so `downcast_ref` finds it.
impl std::error::Error for HandshakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HandshakeError::Rejected { error, .. } => Some(error),
            HandshakeError::NotModern { cause } => Some(&**cause),
            HandshakeError::InvalidResult { source, .. }
            | HandshakeError::Encode { source, .. } => Some(&**source),
            HandshakeError::Transport { error, .. } => Some(error),
            HandshakeError::UnsupportedVersion { .. } | HandshakeError::Timeout { .. } => None,
        }
    }
}

impl HandshakeError {
    /// The server's JSON-RPC error answer, if the handshake ended with one
    /// (directly, or as the cause of [`NotModern`](HandshakeError::NotModern)).
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            HandshakeError::Rejected { error, .. } => Some(error),
            HandshakeError::NotModern { cause } => cause.rpc(),
            _ => None,
        }
    }

    /// Whether no answer came in time (directly, or as the cause of
    /// [`NotModern`](HandshakeError::NotModern)).
    pub fn is_timeout(&self) -> bool {
        match self {
            HandshakeError::Timeout { .. } => true,
            HandshakeError::NotModern { cause } => cause.is_timeout(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::ErrorCode;
    use mcp_proto::error::chain;
    use mcp_proto::transport::TransportErrorKind;
    use std::error::Error as _;

    fn exited() -> TransportError {
        TransportError::new(
            TransportErrorKind::Closed,
            "server exited with status 1: fatal: config missing",
        )
    }

    /// Each level's Display is its own part (mcp_proto::error), for every
    /// variant that has a cause.
    #[test]
    fn errors_print_each_cause_once() {
        let serde = || SerdeError::from(serde_json::from_str::<u32>("\"x\"").unwrap_err());
        let io = TransportError::from(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "the pipe broke",
        ));
        let rejected = HandshakeError::Rejected {
            method: "initialize",
            error: ErrorObject::new(ErrorCode::INVALID_PARAMS, "bad"),
        };
        let errors = [
            ClientError::Transport(io.clone()),
            ClientError::AnswerDropped {
                method: "tools/call".into(),
                error: TransportError::new(TransportErrorKind::Decode, "64.0 MiB, over the limit"),
            },
            ClientError::Decode {
                method: "tools/call".into(),
                source: serde(),
            },
            ClientError::Encode {
                method: "tools/call".into(),
                source: serde(),
            },
            ClientError::Closed(CloseReason::Transport(exited())),
            ClientError::Closed(CloseReason::Transport(io)),
            ClientError::Closed(CloseReason::Handshake(rejected.clone())),
            ClientError::Closed(CloseReason::Handshake(HandshakeError::NotModern {
                cause: Arc::new(HandshakeError::Transport {
                    method: "server/discover",
                    error: exited(),
                }),
            })),
            ClientError::Closed(CloseReason::Handshake(HandshakeError::InvalidResult {
                method: "initialize",
                source: Arc::new(serde_json::from_str::<u32>("{").unwrap_err()),
            })),
        ];
        for e in &errors {
            test_support::assert_causes_once(e);
        }
        assert_eq!(
            chain(&errors[4]).to_string(),
            "connection closed: server exited with status 1: fatal: config missing"
        );
        assert_eq!(
            chain(&errors[6]).to_string(),
            "handshake failed: the server rejected initialize: bad (code -32602)"
        );
    }

    #[test]
    fn a_decode_errors_source_is_serdes_error() {
        let serde = serde_json::from_str::<u32>("\"x\"").unwrap_err();
        let err = ClientError::Decode {
            method: "tools/call".into(),
            source: serde.into(),
        };
        let source = err.source().expect("a source");
        let serde = source
            .downcast_ref::<serde_json::Error>()
            .expect("the source downcasts to serde_json::Error");
        assert!(serde.is_data(), "{serde}");
        assert_eq!(source.to_string(), serde.to_string());
    }
}
