//! Reserved `_meta` keys and the per-request protocol fields of 2026-07-28.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ClientCapabilities, Implementation, JsonObject, LoggingLevel, ProgressToken};
use crate::version::ProtocolVersion;

/// `_meta` key: protocol version of a request (2026-07-28, required).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: client capabilities relevant to a request (2026-07-28, required).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: client name and version (2026-07-28, recommended).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: server name and version on results (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: minimum log level for a request (2026-07-28).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: correlates a notification with its `subscriptions/listen` request.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: opts a request into progress notifications.
pub const META_PROGRESS_TOKEN: &str = "progressToken";
/// `_meta` key: W3C trace context `traceparent` (2026-07-28, OpenTelemetry propagation).
pub const META_TRACEPARENT: &str = "traceparent";
/// `_meta` key: W3C trace context `tracestate` (2026-07-28).
pub const META_TRACESTATE: &str = "tracestate";
/// `_meta` key: W3C `baggage` (2026-07-28).
pub const META_BAGGAGE: &str = "baggage";

/// The reserved members of a request's `_meta`, typed. Convert with
/// [`RequestMeta::into_object`] and put the result in a params' `meta`.
///
/// ```
/// use mcp_proto::schema::{RequestMeta, ClientCapabilities, LoggingLevel, META_LOG_LEVEL};
/// use mcp_proto::ProtocolVersion;
/// let meta = RequestMeta::new(ProtocolVersion::V2026_07_28, ClientCapabilities::default())
///     .with_log_level(LoggingLevel::Warning)
///     .into_object();
/// assert_eq!(meta[META_LOG_LEVEL], "warning");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion` (required in 2026-07-28).
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities` (required in 2026-07-28).
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo` (recommended).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`: without it the server sends no log
    /// notifications for this request.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`: opts into `notifications/progress`.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// Other keys (trace context, extensions), kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestMeta {
    /// The required fields.
    pub fn new(version: ProtocolVersion, client_capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: version.as_str().to_owned(),
            client_capabilities,
            client_info: None,
            log_level: None,
            progress_token: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets `clientInfo`.
    #[must_use]
    pub fn with_client_info(mut self, info: Implementation) -> Self {
        self.client_info = Some(info);
        self
    }

    /// Sets the minimum log level for this request.
    #[must_use]
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sets the progress token.
    #[must_use]
    pub fn with_progress_token(mut self, token: ProgressToken) -> Self {
        self.progress_token = Some(token);
        self
    }

    /// The `_meta` object.
    pub fn into_object(self) -> JsonObject {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => JsonObject::new(),
        }
    }
}

/// Builds the `_meta` object a 2026-07-28 request carries.
///
/// ```
/// use mcp_proto::schema::{request_meta, ClientCapabilities, Implementation, META_PROTOCOL_VERSION};
/// use mcp_proto::ProtocolVersion;
/// let meta = request_meta(
///     ProtocolVersion::V2026_07_28,
///     &ClientCapabilities::default(),
///     Some(&Implementation::new("my-agent", "1.0.0")),
/// );
/// assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
/// ```
pub fn request_meta(
    version: ProtocolVersion,
    capabilities: &ClientCapabilities,
    client_info: Option<&Implementation>,
) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert(META_PROTOCOL_VERSION.into(), Value::from(version.as_str()));
    m.insert(
        META_CLIENT_CAPABILITIES.into(),
        serde_json::to_value(capabilities).unwrap_or_else(|_| Value::Object(JsonObject::new())),
    );
    if let Some(info) = client_info
        && let Ok(v) = serde_json::to_value(info)
    {
        m.insert(META_CLIENT_INFO.into(), v);
    }
    m
}
