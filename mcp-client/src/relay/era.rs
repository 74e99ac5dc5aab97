//! What the relay learns of the revision the host and the server agreed
//! on, and the errors it gives when they cannot agree.
//!
//! The relay does not negotiate: the host does, through it. It only
//! watches, so that it can tell the server's transport which revision is
//! spoken (HTTP puts it in a header), start a new session when the server
//! ends one, and say clearly why a handshake failed across the era line.

use mcp_proto::schema::META_PROTOCOL_VERSION;
use mcp_proto::{ErrorCode, ErrorObject, ProtocolVersion, RawJson};

/// What the relay knows of the revision in use.
#[derive(Debug, Default)]
pub(super) enum Agreed {
    /// No handshake yet (or only a failed one).
    #[default]
    Unknown,
    /// An `initialize`-based revision, and the host's `initialize` params
    /// (sent again, as they were, to start a new session).
    Legacy {
        version: ProtocolVersion,
        params: Option<RawJson>,
    },
    /// 2026-07-28: each request names its revision in `_meta`; this is the
    /// one the transport was last told, and whether the server has answered
    /// one such request successfully yet (a `server/discover` or any other).
    Modern {
        version: ProtocolVersion,
        confirmed: bool,
    },
}

/// The revision a 2026-07-28 request names in its `params._meta`, as sent.
pub(super) fn request_revision(params: Option<&RawJson>) -> Option<String> {
    let [meta] = params?.members(["_meta"])?;
    let meta = RawJson::from_string(meta?.to_owned()).ok()?;
    let [v] = meta.members([META_PROTOCOL_VERSION])?;
    serde_json::from_str(v?).ok()
}

/// A member of an object, decoded as a string.
pub(super) fn string_member(raw: Option<&RawJson>, key: &str) -> Option<String> {
    let [v] = raw?.members([key])?;
    serde_json::from_str(v?).ok()
}

/// The host offered `offered` with `initialize` and the server refused it:
/// a server that speaks only 2026-07-28 gets an error naming both
/// revisions (its code and data kept, so a host that reads them can act).
pub(super) fn initialize_refused(offered: &str, mut error: ErrorObject) -> ErrorObject {
    let modern_only = error
        .unsupported_protocol_version()
        .is_some_and(|d| only_modern(&d.supported));
    if modern_only {
        error.message = format!(
            "the host offered {offered} (initialize) but the server speaks only the \
             2026-07-28 protocol (server/discover): mcp bridge does not translate between \
             the two eras; configure the host for 2026-07-28 ({})",
            error.message
        );
    }
    error
}

/// The host asked for `version` with `server/discover` and the server
/// refused with `error`. A legacy server's refusal keeps its code (any
/// code but -32022 tells a host in auto mode to fall back to
/// `initialize`), with a message naming both eras for a host that cannot.
pub(super) fn discover_refused(version: &str, mut error: ErrorObject) -> ErrorObject {
    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        // A modern server naming the revisions it does speak: as it is.
        return error;
    }
    error.message = format!(
        "the server does not speak {version} (it refused server/discover: {}); it speaks \
         the initialize-based revisions (2025-11-25 and earlier), which the host can use \
         by connecting with initialize: mcp bridge does not translate between the two eras",
        error.message
    );
    error
}

/// A 2026-07-28 request refused before the server ever answered one at
/// that revision, from a host that did not ask `server/discover` first
/// (it was pinned to 2026-07-28): the server may be a legacy one. The
/// error is the server's, with a message that says so.
pub(super) fn unconfirmed_modern(version: ProtocolVersion, mut error: ErrorObject) -> ErrorObject {
    if error.code.is_modern_only() {
        return error;
    }
    error.message = format!(
        "{} (the host sent this request at {version} without server/discover, and the server \
         has not answered any at {version}: it may speak only the initialize-based revisions, \
         2025-11-25 and earlier, which the host can use by connecting with initialize; mcp \
         bridge does not translate between the two eras)",
        error.message
    );
    error
}

/// The JSON-RPC error a legacy stdio server would have sent for a
/// `server/discover` that the server's transport refused (HTTP 400, 404 or
/// 405 with no JSON-RPC body: the sign of a legacy HTTP server).
pub(super) fn discover_refused_by_transport(version: &str, why: &str) -> ErrorObject {
    discover_refused(
        version,
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, why.to_owned()),
    )
}

fn only_modern(supported: &[String]) -> bool {
    !supported.is_empty()
        && supported
            .iter()
            .all(|s| ProtocolVersion::parse(s).is_some_and(|v| v.era() == mcp_proto::Era::Modern))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> RawJson {
        RawJson::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn a_request_names_its_revision_in_meta() {
        let p =
            raw(r#"{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert_eq!(request_revision(Some(&p)).as_deref(), Some("2026-07-28"));
        assert_eq!(request_revision(Some(&raw(r#"{"_meta":{}}"#))), None);
        assert_eq!(request_revision(Some(&raw("{}"))), None);
        assert_eq!(request_revision(None), None);
    }

    #[test]
    fn a_modern_only_refusal_of_initialize_names_both_revisions() {
        let e = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported")
            .with_data(serde_json::json!({"supported": ["2026-07-28"], "requested": "2025-06-18"}));
        let e = initialize_refused("2025-06-18", e);
        assert!(e.message.contains("2025-06-18"), "{}", e.message);
        assert!(e.message.contains("only the 2026-07-28"), "{}", e.message);
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert!(e.data.is_some());
        // A dual-era server's refusal (it names a legacy revision) is its own.
        let e = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported")
            .with_data(serde_json::json!({"supported": ["2026-07-28", "2025-11-25"]}));
        assert_eq!(initialize_refused("2024-01-01", e).message, "Unsupported");
    }

    #[test]
    fn a_legacy_refusal_of_discover_keeps_its_code_and_names_both_eras() {
        let e = discover_refused(
            "2026-07-28",
            ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found"),
        );
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(e.message.contains("2026-07-28") && e.message.contains("2025-11-25"));
        let modern = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no");
        assert_eq!(discover_refused("2026-07-28", modern).message, "no");
    }
}
