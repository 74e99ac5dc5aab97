//! The transport's error type.

use mcp_proto::transport::ByteSize;
use std::time::{Duration, SystemTime};

use http::StatusCode;

use crate::sse::SseError;

/// What went wrong in the HTTP transport. It is the cause inside a
/// [`TransportError`](mcp_proto::transport::TransportError) (reach it with
/// `cause()` and `downcast_ref`); [`HttpTransport::new`](crate::HttpTransport::new)
/// returns it directly.
///
/// Its `Display` is its own part; what caused it (hyper's error, the
/// auth provider's) is the [`source`](std::error::Error::source): print
/// the whole chain with [`mcp_proto::error::chain`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The URL could not be used.
    #[error("invalid MCP server URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it is unusable.
        reason: UrlProblem,
    },
    /// A configured header name or value is not valid HTTP.
    #[error("invalid header {name:?}: names must be HTTP tokens and values visible ASCII")]
    InvalidHeader {
        /// The header name as given.
        name: String,
    },
    /// The server answered with a status the transport cannot use.
    #[error("HTTP {status} from the MCP server: {excerpt}")]
    Status {
        /// The status.
        status: StatusCode,
        /// The start of the response body (lossy UTF-8, at most 200 chars).
        excerpt: String,
    },
    /// A success status with a content type that is neither JSON nor SSE.
    #[error(
        "HTTP {status} with content type {content_type:?} (expected application/json or text/event-stream): {excerpt}"
    )]
    UnexpectedContentType {
        /// The status.
        status: StatusCode,
        /// The content type received (empty if absent).
        content_type: String,
        /// The start of the body.
        excerpt: String,
    },
    /// A JSON body that is not one JSON-RPC message.
    #[error("HTTP {status} body {excerpt:?} is not a JSON-RPC message")]
    InvalidBody {
        /// The status.
        status: StatusCode,
        /// What the decoder found wrong.
        #[source]
        source: mcp_proto::jsonrpc::DecodeError,
        /// The start of the body.
        excerpt: String,
    },
    /// The body went over the configured limit. It is dropped the moment
    /// that is known: at its `Content-Length`, else when the bytes read
    /// cross the limit (a body that never ends fails then, not at a timeout).
    #[error(
        "the response body ({}) is over the {} limit; raise it with `max_body_size`",
        match size {
            Some(n) => ByteSize(*n).to_string(),
            None => format!("at least {}", ByteSize(*received)),
        },
        ByteSize(*limit as u64)
    )]
    BodyTooLarge {
        /// The limit in bytes.
        limit: usize,
        /// The body's size, when the server said (`Content-Length`).
        size: Option<u64>,
        /// How much of the body had been read when it was dropped (0 when
        /// its `Content-Length` said it up front).
        received: u64,
    },
    /// HTTP 404 on a request that carried a session id: the server ended
    /// the session. Start a new one with `initialize`.
    #[error("the server no longer knows session {session:?} (HTTP 404); re-initialize")]
    SessionExpired {
        /// The session id that expired.
        session: String,
    },
    /// The server's `Mcp-Session-Id` is not visible ASCII (0x21–0x7E).
    #[error("the server sent an invalid Mcp-Session-Id (must be visible ASCII)")]
    InvalidSessionId,
    /// A redirect to another origin (scheme, host or port): refused, so
    /// credentials never leave the configured origin.
    #[error("refused a redirect to another origin ({location}); point the client at the final URL")]
    CrossOriginRedirect {
        /// Where the server wanted to send the request.
        location: String,
    },
    /// A redirect the transport does not follow (not 307/308, no Location,
    /// or too many).
    #[error("HTTP {status} redirect not followed: {reason}")]
    Redirect {
        /// The status.
        status: StatusCode,
        /// Why it was not followed.
        reason: String,
    },
    /// A response stream ended before the response to its request arrived.
    #[error("the response stream ended before the response arrived{}", if *.resumes > 0 { format!(" (after {} resumption attempts)", .resumes) } else { String::new() })]
    StreamEnded {
        /// How many times the transport tried to resume it.
        resumes: u32,
    },
    /// A limit on time was reached.
    #[error("{what} timed out after {after:?}")]
    Timeout {
        /// What was being waited for.
        what: &'static str,
        /// The configured timeout.
        after: Duration,
    },
    /// The server refused the request (401 or 403) and the
    /// [`AuthProvider`](crate::AuthProvider) could not authorize it; the
    /// [`source`](std::error::Error::source) is the provider's error (e.g.
    /// `mcp_auth::AuthError`).
    #[error("the MCP server answered HTTP {status} and authorization failed")]
    Auth {
        /// `401 Unauthorized` or `403 Forbidden`.
        status: StatusCode,
        /// Why the provider could not authorize the request.
        #[source]
        source: crate::BoxError,
    },
    /// The server refused the request for now, with `429 Too Many
    /// Requests` or `503 Service Unavailable`, and the transport did not
    /// retry it (any more): [`not_retried`](Self::Throttled::not_retried)
    /// says why. See [`HttpTransportBuilder::max_throttle_retries`](crate::HttpTransportBuilder::max_throttle_retries)
    /// for what is retried.
    #[error(
        "HTTP {status}: the server asked to be retried {}{}",
        match retry_at {
            Some(r) => format!("in {:?} (at {})", r.delay, httpdate::fmt_http_date(r.at)),
            None => "later (no Retry-After)".to_owned(),
        },
        match not_retried {
            Some(why) => format!("; not retried: {why}"),
            None => String::new(),
        }
    )]
    Throttled {
        /// `429 Too Many Requests` or `503 Service Unavailable`.
        status: StatusCode,
        /// When the server asked to be retried (its `Retry-After`), if it said.
        retry_at: Option<RetryAt>,
        /// Why the transport did not retry; `None` on a reconnection of an
        /// SSE stream, which its own budget retries.
        not_retried: Option<NotRetried>,
    },
    /// An SSE event over the size limit.
    #[error(transparent)]
    Sse(#[from] SseError),
    /// The connection or the HTTP exchange failed (hyper's error, or the
    /// connector's, is the [`source`](std::error::Error::source)).
    #[error("HTTP request failed")]
    Client(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// TLS could not be set up (the root certificates could not be loaded).
    #[error("TLS setup failed")]
    Tls(#[source] crate::BoxError),
}

/// When a server asked to be retried (its `Retry-After`, RFC 9110 §10.2.3:
/// a number of seconds or an HTTP date), from when its answer arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryAt {
    /// How long after its answer arrived.
    pub delay: Duration,
    /// The same as a time.
    pub at: SystemTime,
}

/// Why a request the server refused with 429 or 503 was not retried
/// ([`HttpError::Throttled`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotRetried {
    /// The server asked for a wait that ends after the request's deadline
    /// (the client's timeout for it), so the call fails now rather than at
    /// its deadline.
    #[error("that is after the request's deadline (in {remaining:?})")]
    AfterDeadline {
        /// How long the request had left when the answer arrived.
        remaining: Duration,
    },
    /// The server asked for a wait longer than the transport waits for one
    /// retry ([`HttpTransportBuilder::max_retry_wait`](crate::HttpTransportBuilder::max_retry_wait)).
    #[error("that is longer than max_retry_wait ({max:?})")]
    TooLong {
        /// The longest wait the transport accepts.
        max: Duration,
    },
    /// The request was refused this many times in a row ([`HttpTransportBuilder::max_throttle_retries`](crate::HttpTransportBuilder::max_throttle_retries)).
    #[error("refused {attempts} times in a row")]
    Attempts {
        /// How many times it was sent.
        attempts: u32,
    },
    /// A 503 does not say that the server did not process the request (a
    /// gateway answers 503 when the server behind it failed mid-way), and
    /// this method is not one that is safe to send twice
    /// ([`HttpTransportBuilder::reissue_methods`](crate::HttpTransportBuilder::reissue_methods)):
    /// a `tools/call` may have run.
    #[error("{method} may have been processed, and it is not safe to send twice")]
    MayHaveRun {
        /// The request's method.
        method: String,
    },
}

impl HttpError {
    /// How long the server asked to wait before the next try, if this is a
    /// refusal that said ([`Throttled`](Self::Throttled) with a `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            HttpError::Throttled {
                retry_at: Some(r), ..
            } => Some(r.delay),
            _ => None,
        }
    }
}

/// The first 200 characters of a body, for error messages.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body.get(..body.len().min(800)).unwrap_or_default());
    let trimmed = text.trim();
    let mut out: String = trimmed.chars().take(200).collect();
    if trimmed.chars().count() > 200 || body.len() > 800 {
        out.push('…');
    }
    if out.is_empty() {
        out.push_str("<empty body>");
    }
    out
}

/// Why a URL cannot be used ([`HttpError::InvalidUrl`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UrlProblem {
    /// It is not a URI (the parser's reason).
    #[error("{0}")]
    Syntax(http::uri::InvalidUri),
    /// The scheme is not `http`, `https`, or a local socket's (`unix`,
    /// `pipe`).
    #[error("the scheme must be http or https (or unix for a server on a Unix socket)")]
    Scheme,
    /// There is no host.
    #[error("the URL has no host")]
    NoHost,
    /// The host and port do not make a valid `Host` header.
    #[error("the host is not a valid Host header")]
    HostHeader,
    /// An `https` URL with the built-in connector, built without the
    /// `rustls` feature.
    #[error("https needs the `rustls` feature (or pass your own connector)")]
    HttpsWithoutTls,
    /// A `unix:` URL that is not `unix:///absolute/path.sock#/request-path`
    /// (an authority, a relative or empty path, a query outside the
    /// fragment, a bad escape): see [`LocalSocket`](crate::LocalSocket).
    #[error(
        "a Unix socket URL is unix:///absolute/path/to/server.sock#/request-path (the request path goes in the fragment)"
    )]
    SocketPath,
    /// A `pipe:` URL that is not `pipe:///pipe/NAME#/request-path`.
    #[error("a named pipe URL is pipe:///pipe/NAME#/request-path")]
    PipeName,
    /// The fragment of a socket URL is not a request path (and query).
    #[error("the fragment of a socket URL must be the request path, e.g. #/mcp")]
    SocketTarget,
    /// This system cannot connect to this kind of socket.
    #[error("{0}")]
    SocketUnsupported(&'static str),
    /// `https` through a local socket: not supported.
    #[error(
        "https through a local socket is not supported; use http:// (the socket's file permissions guard it)"
    )]
    HttpsOverSocket,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(text: &str) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, text.to_owned())
    }

    /// Each level's Display is its own part (mcp_proto::error); the
    /// transport's error inside a TransportError too.
    #[test]
    fn errors_print_each_cause_once() {
        let decode = "{".parse::<mcp_proto::Message>().unwrap_err();
        let errors = [
            HttpError::InvalidBody {
                status: StatusCode::OK,
                source: decode,
                excerpt: "{".into(),
            },
            HttpError::Auth {
                status: StatusCode::UNAUTHORIZED,
                source: Box::new(io("the identity provider is down")),
            },
            HttpError::Client(Box::new(io("tcp connect error: refused"))),
            HttpError::Tls(Box::new(io("no root certificates"))),
            HttpError::Sse(SseError::EventTooLarge {
                limit: 16,
                size: 17,
            }),
        ];
        for e in errors {
            test_support::assert_causes_once(&e);
            let t = mcp_proto::transport::TransportError::new(
                mcp_proto::transport::TransportErrorKind::Io,
                e,
            );
            test_support::assert_causes_once(&t);
        }
        let auth = HttpError::Auth {
            status: StatusCode::UNAUTHORIZED,
            source: Box::new(io("the identity provider is down")),
        };
        assert_eq!(
            mcp_proto::error::chain(&auth).to_string(),
            "the MCP server answered HTTP 401 Unauthorized and authorization failed: the identity provider is down"
        );
    }
}
