//! Reserved `_meta` keys and the per-request protocol fields of 2026-07-28.

use serde_json::Value;

use super::{ClientCapabilities, Implementation, JsonObject};
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
