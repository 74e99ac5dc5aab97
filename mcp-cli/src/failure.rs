//! Why `mcp` stops without success, the one line it prints, and the exit status.

use std::process::ExitCode;

use mcp_cli::terminal::web_url;
use mcp_client::{ClientError, CloseReason, HandshakeError, TicketError};
use mcp_proto::error::chain;
use mcp_proto::transport::TransportError;

/// Why `mcp` stops without success.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Exit 1: the tool ran and said `isError: true` (its output is already printed).
    ToolError,
    /// Exit 1: `mcp diff` found differences (already printed).
    Differs,
    /// Exit 2: a usage error.
    Usage(String),
    /// Exit 3: `kind` is "connection error", "transport error", "protocol error" or "timeout".
    Fatal { kind: &'static str, message: String },
    /// Exit 4: the server answered the request with a JSON-RPC error (the
    /// server is up and said no); the message quotes its code and message.
    Refused(String),
    /// Exit 130 / 143: interrupted by a signal.
    Interrupted(u8),
}

impl Failure {
    pub(crate) fn fatal(kind: &'static str, message: impl Into<String>) -> Self {
        Failure::Fatal {
            kind,
            message: message.into(),
        }
    }

    /// Classifies a client error for the one-line report: what failed,
    /// then the error and each of its causes once ([`chain`]), with the
    /// CLI's flags where the library names its own knobs.
    pub(crate) fn from_client(what: &str, e: &ClientError) -> Self {
        let mut f = Self::classify(what, e);
        if let Failure::Fatal { kind, message } = &mut f {
            // Before the handshake completes, a transport failure means the
            // server could not be reached at all.
            if what == "handshake" && *kind == "transport error" {
                *kind = "connection error";
            }
            // The library names its builder knob; the flag is ours.
            if message.contains("limit") && message.contains("raise it with `max_") {
                message.push_str(" (with mcp: --max-message-size SIZE, such as 128MiB)");
            }
            if message.contains("SsrfPolicy::allow_private")
                || message.contains("SsrfPolicy::allow_loopback")
            {
                message.push_str(
                    " (with mcp: --oauth-allow-private, if that server is on your network)",
                );
            }
            if let ClientError::Transport(t) | ClientError::Closed(CloseReason::Transport(t)) = e {
                // A valid token the server does not allow: other
                // credentials are the operator's to give (the message says so).
                let forbidden = mcp_auth::AuthError::find(t).is_some_and(|a| a.is_forbidden());
                if t.kind() == mcp_proto::transport::TransportErrorKind::Unauthorized && !forbidden
                {
                    message
                        .push_str("; pass credentials with -H \"Authorization: Bearer <token>\"");
                }
            }
        }
        f
    }

    fn classify(what: &str, e: &ClientError) -> Self {
        // A JSON-RPC error answering a request is the server saying no; an
        // error answering the handshake means there is no session to use.
        if let ClientError::Rpc(obj) = e
            && what != "handshake"
        {
            let mut message = format!("the server answered {what} with an error: {obj}");
            if let Some(urls) = obj.url_elicitation_required() {
                message.push_str(&urls_to_open(&urls.elicitations));
            }
            return Failure::Refused(message);
        }
        // A task the server does not know: its answer to `tasks/get`.
        if let ClientError::Ticket(TicketError::Unknown { message, .. }) = e {
            return Failure::Refused(format!(
                "the server answered {what} with an error: {message}"
            ));
        }
        let kind = match e {
            ClientError::Transport(_) => "transport error",
            ClientError::Timeout { .. } => "timeout",
            ClientError::Closed(CloseReason::Transport(t)) => transport_kind(t),
            ClientError::Closed(CloseReason::ServerClosed | CloseReason::DriverGone) => {
                "connection error"
            }
            _ => "protocol error",
        };
        let message = match e {
            ClientError::Rpc(obj) => format!("the server answered {what} with an error: {obj}"),
            ClientError::Closed(CloseReason::ServerClosed) => {
                format!("the server closed the connection during {what}")
            }
            // The library names the versions; the flag to pick one is ours.
            ClientError::Closed(CloseReason::Handshake(HandshakeError::UnsupportedVersion {
                requested,
                supported,
            })) => format!(
                "{what} failed: the server does not support protocol {requested} (it supports: {}); \
                 pick one of those with --protocol or upgrade the server",
                if supported.is_empty() {
                    "none named".to_owned()
                } else {
                    supported.join(", ")
                }
            ),
            ClientError::Closed(CloseReason::Handshake(HandshakeError::NotModern { cause })) => {
                format!(
                    "{what} failed: the server does not speak the 2026-07-28 revision \
                     (use --protocol auto or a legacy version): {}",
                    chain(&**cause)
                )
            }
            // "handshake failed: <why>" says it all during the handshake.
            ClientError::Closed(CloseReason::Handshake(_)) if what == "handshake" => {
                chain(e).to_string()
            }
            ClientError::Timeout { after, .. } => format!(
                "{what}: no response within {:.1} s; sent the server a cancellation \
                 (notifications/cancelled) and stopped it (a longer --timeout may help)",
                after.as_secs_f64()
            ),
            other => format!("{what}: {}", chain(other)),
        };
        Failure::fatal(kind, message)
    }
}

/// What a `URLElicitationRequired` (-32042) error asks the user to open:
/// `; open ... in a browser, then run the command again`, the http(s) URLs
/// only (the line is made safe when printed).
fn urls_to_open(elicitations: &[serde_json::Value]) -> String {
    let urls: Vec<&str> = elicitations
        .iter()
        .filter_map(|e| e.get("url").and_then(serde_json::Value::as_str))
        .collect();
    let web: Vec<&str> = urls.iter().copied().filter(|u| web_url(u)).collect();
    let mut s = String::new();
    if !web.is_empty() {
        s.push_str(&format!(
            "; open {} in a browser, then run the command again",
            web.join(" and ")
        ));
    }
    if web.len() < urls.len() {
        s.push_str("; (a URL that is not http(s) was not shown)");
    }
    s
}

fn transport_kind(t: &TransportError) -> &'static str {
    use mcp_proto::transport::TransportErrorKind as K;
    match t.kind() {
        K::Closed | K::Unauthorized => "connection error",
        K::Timeout => "timeout",
        _ => "transport error",
    }
}

/// Prints the one-line report and picks the exit status.
pub(crate) fn report(f: Failure) -> ExitCode {
    let code = match &f {
        Failure::ToolError | Failure::Differs => 1,
        Failure::Usage(msg) => {
            eprintln!("mcp: {} (see mcp --help)", one_line(msg));
            2
        }
        Failure::Fatal { kind, message } => {
            eprintln!("mcp: {kind}: {}", one_line(message));
            3
        }
        Failure::Refused(message) => {
            eprintln!("mcp: {}", one_line(message));
            4
        }
        Failure::Interrupted(code) => *code,
    };
    ExitCode::from(code)
}

/// The message as one line, safe for the terminal: error messages quote
/// what servers said (JSON-RPC error messages, HTTP error bodies), so they
/// go through [`mcp_cli::terminal::line`] like any other server text.
pub(crate) fn one_line(s: &str) -> String {
    mcp_cli::terminal::line(s)
}
