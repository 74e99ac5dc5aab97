//! JSON-RPC error objects and MCP's error codes, and how the workspace's
//! Rust errors print.
//!
//! # How errors print
//!
//! Every error type of these crates follows hyper's rule: **its `Display`
//! says only its own part** (what happened at this level and, where it
//! helps, what to do), and **its causes come only from
//! [`source()`](std::error::Error::source)**. A wrapper that adds nothing
//! is `#[error(transparent)]`: it forwards both, so it is not a level.
//! Any reporter that walks the chain (anyhow's `{:#}`, eyre, tracing's
//! error fields, [`chain`]) then prints each cause exactly once.
//!
//! So printing an error with `{}` alone shows only its outermost part
//! (`connection closed`); show a person or a model the whole chain with
//! [`chain`] (`connection closed: server exited with status 1: fatal:
//! config missing`).

use std::error::Error as StdError;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::RawJson;

/// A JSON-RPC error code. The set is open: any integer a peer sends is kept;
/// the associated constants name the codes the JSON-RPC and MCP specifications define.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the peer could not parse the JSON it received.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// `-32600`: the message was not a valid request.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// `-32601`: the method does not exist or is not available.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// `-32602`: invalid method parameters. Since 2026-07-28 also "resource not
    /// found", and the code servers use for "tool set changed; list tools again".
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// `-32603`: internal error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// `-32002`: resource not found (2025-11-25 and earlier; clients still accept it).
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// `-32042`: URL elicitation required (2025-11-25 only); `data` is
    /// [`UrlElicitationRequiredData`].
    pub const URL_ELICITATION_REQUIRED: Self = Self(-32042);
    /// `-32020`: an HTTP header does not match the body (2026-07-28).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// `-32021`: the request needs a client capability the client did not declare
    /// (2026-07-28); `data` is [`MissingRequiredClientCapabilityData`].
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: Self = Self(-32021);
    /// `-32022`: the server does not support the requested protocol version
    /// (2026-07-28); `data` is [`UnsupportedProtocolVersionData`].
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);

    /// The spec's name for this code, if it has one.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "parse error",
            Self::INVALID_REQUEST => "invalid request",
            Self::METHOD_NOT_FOUND => "method not found",
            Self::INVALID_PARAMS => "invalid params",
            Self::INTERNAL_ERROR => "internal error",
            Self::RESOURCE_NOT_FOUND => "resource not found",
            Self::URL_ELICITATION_REQUIRED => "URL elicitation required",
            Self::HEADER_MISMATCH => "header mismatch",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "missing required client capability",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "unsupported protocol version",
            _ => return None,
        })
    }

    /// Whether only a server speaking the 2026-07-28 (modern) era sends this code.
    /// Used for era detection: such an error proves the server is modern.
    pub fn is_modern_only(self) -> bool {
        matches!(
            self,
            Self::HEADER_MISMATCH
                | Self::MISSING_REQUIRED_CLIENT_CAPABILITY
                | Self::UNSUPPORTED_PROTOCOL_VERSION
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{} ({n})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl From<i32> for ErrorCode {
    fn from(v: i32) -> Self {
        Self(v)
    }
}

/// A JSON-RPC error object, as sent by a peer or built locally.
///
/// `data` is kept as its JSON text (a peer's error can carry megabytes of
/// it, and a client reads it rarely: decoded eagerly into a
/// `serde_json::Value` it cost 10 to 100 times its size); the typed
/// accessors decode the structured data of the codes that define it, and
/// [`data_as`](Self::data_as) any other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[non_exhaustive]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description (the peer's words).
    pub message: String,
    /// Additional information, if any, as its JSON text. A `"data": null`
    /// member decodes to `Some` of `null`, so it survives a round trip.
    /// Boxed: errors travel inside every caller's `Result`, and most have
    /// no data.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Box<RawJson>>,
}

/// A member that is present decodes to `Some`, even when it is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawJson>>, D::Error> {
    RawJson::deserialize(d).map(|d| Some(Box::new(d)))
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code.0)?;
        if let Some(d) = &self.data {
            let s = d.as_str();
            if s.len() <= 200 {
                write!(f, ", data: {s}")?;
            } else {
                let mut end = 200;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                write!(f, ", data: {}…", &s[..end])?;
            }
        }
        Ok(())
    }
}

impl ErrorObject {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        // A `Value` always encodes.
        self.data = RawJson::from_value(&data).ok().map(Box::new);
        self
    }

    /// `data` decoded as `T`; `None` when there is none.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Option<serde_json::Result<T>> {
        self.data.as_deref().map(RawJson::decode)
    }

    /// `-32601` for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// The structured data of an `UnsupportedProtocolVersion` (-32022) error.
    pub fn unsupported_protocol_version(&self) -> Option<UnsupportedProtocolVersionData> {
        self.typed_data(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
    }

    /// The structured data of a `MissingRequiredClientCapability` (-32021) error.
    pub fn missing_required_client_capability(
        &self,
    ) -> Option<MissingRequiredClientCapabilityData> {
        self.typed_data(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
    }

    /// The structured data of a `URLElicitationRequired` (-32042) error.
    pub fn url_elicitation_required(&self) -> Option<UrlElicitationRequiredData> {
        self.typed_data(ErrorCode::URL_ELICITATION_REQUIRED)
    }

    /// Whether this is the "tool set changed; list tools again" error some
    /// servers send after a redeploy (-32602 with that message): the caller
    /// should list tools again and retry.
    pub fn is_tool_set_changed(&self) -> bool {
        self.code == ErrorCode::INVALID_PARAMS && {
            let m = self.message.to_ascii_lowercase();
            m.contains("tool set changed") || m.contains("list tools again")
        }
    }

    fn typed_data<T: serde::de::DeserializeOwned>(&self, code: ErrorCode) -> Option<T> {
        if self.code != code {
            return None;
        }
        self.data_as()?.ok()
    }
}

/// `data` of `UnsupportedProtocolVersion` (-32022).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// Versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `data` of `MissingRequiredClientCapability` (-32021).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs (a `ClientCapabilities` object).
    pub required_capabilities: Value,
}

/// `data` of `URLElicitationRequired` (-32042, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations (`ElicitRequestURLParams` objects) the client must complete.
    pub elicitations: Vec<Value>,
}

/// Most levels of a chain [`Chain`] prints; a longer chain ends in `: …`
/// (a source that returns itself would otherwise print forever).
const MAX_CHAIN_DEPTH: usize = 32;

/// An error and every cause in its [`source`](StdError::source) chain, for
/// `Display`: `outer: cause: root cause`. See the [module docs](self) for the
/// rule that makes each cause appear once.
///
/// A cause whose text the level above already ends with is not printed
/// again, so a foreign error that writes its source into its own message
/// (`IO error: broken pipe` over `broken pipe`) still reads once; a cause
/// with no text is skipped.
///
/// ```
/// use mcp_proto::error::chain;
/// use mcp_proto::transport::{TransportError, TransportErrorKind};
///
/// let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the server hung up");
/// let err = TransportError::from(io);
/// assert_eq!(err.to_string(), "connection closed"); // its own part only
/// assert_eq!(chain(&err).to_string(), "connection closed: the server hung up");
///
/// // In a log line or a message for a person:
/// eprintln!("error: {}", chain(&err));
/// ```
pub fn chain<'a>(err: &'a (dyn StdError + 'static)) -> Chain<'a> {
    Chain(err)
}

/// Displays an error and its causes once each; made by [`chain`].
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a>(&'a (dyn StdError + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut above = self.0.to_string();
        f.write_str(&above)?;
        let mut wrote = !above.is_empty();
        let mut next = self.0.source();
        for _ in 0..MAX_CHAIN_DEPTH {
            let Some(cause) = next else {
                return Ok(());
            };
            let text = cause.to_string();
            if !text.is_empty() && !above.ends_with(&text) {
                if wrote {
                    f.write_str(": ")?;
                }
                f.write_str(&text)?;
                wrote = true;
            }
            above = text;
            next = cause.source();
        }
        if next.is_some() {
            f.write_str(": …")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as StdError;
    use std::fmt;

    use super::chain;
    use crate::testing::assert_causes_once;
    use crate::transport::{TransportError, TransportErrorKind};

    /// A level with its own text and an optional cause, as our types are.
    #[derive(Debug)]
    struct Level(&'static str, Option<Box<dyn StdError + 'static>>);

    impl fmt::Display for Level {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Level {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref()
        }
    }

    /// A foreign error that writes its source into its own text.
    #[derive(Debug)]
    struct Repeats(std::io::Error);

    impl fmt::Display for Repeats {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "IO error: {}", self.0)
        }
    }

    impl StdError for Repeats {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    fn io(text: &'static str) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, text)
    }

    #[test]
    fn transport_errors_print_their_kind_and_leave_the_cause_to_the_chain() {
        let e = TransportError::from(io("the server hung up"));
        assert_eq!(e.to_string(), "connection closed");
        assert_eq!(
            chain(&e).to_string(),
            "connection closed: the server hung up"
        );
        assert_causes_once(&e);
        let e = TransportError::new(TransportErrorKind::Protocol, "HTTP 500");
        assert_eq!(chain(&e).to_string(), "transport protocol error: HTTP 500");
        assert_causes_once(&e);
        let e = TransportError::from_kind(TransportErrorKind::Timeout);
        assert_eq!(chain(&e).to_string(), "timed out");
        let e = TransportError::from(crate::Message::from_slice(b"{").unwrap_err());
        assert_causes_once(&e);
    }

    #[test]
    fn a_chain_prints_every_level_once_in_order() {
        let e = Level(
            "calling tool `echo` failed",
            Some(Box::new(Level(
                "connection closed",
                Some(Box::new(io("broken pipe"))),
            ))),
        );
        assert_causes_once(&e);
        assert_eq!(
            chain(&e).to_string(),
            "calling tool `echo` failed: connection closed: broken pipe"
        );
        // No cause: the error alone.
        assert_eq!(chain(&Level("alone", None)).to_string(), "alone");
    }

    #[test]
    fn a_foreign_error_that_repeats_its_source_still_reads_once() {
        let e = Level("send failed", Some(Box::new(Repeats(io("broken pipe")))));
        assert_eq!(chain(&e).to_string(), "send failed: IO error: broken pipe");
        // ... and the rule's check names it.
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_causes_once(&e)));
        assert!(caught.is_err());
    }

    #[test]
    fn empty_levels_are_skipped_and_deep_chains_are_cut() {
        let e = Level("top", Some(Box::new(Level("", Some(Box::new(io("root")))))));
        assert_eq!(chain(&e).to_string(), "top: root");
        let mut deep = Level("level", None);
        for _ in 0..100 {
            deep = Level("level", Some(Box::new(deep)));
        }
        let text = chain(&deep).to_string();
        assert!(text.ends_with(": …"), "{text}");
        assert!(text.len() < 40 * "level: ".len(), "{text}");
    }
}
