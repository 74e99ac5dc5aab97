//! `initialize` (legacy era) and `server/discover` (2026-07-28).

use serde::{Deserialize, Serialize};

use super::{
    CacheScope, ClientCapabilities, Implementation, JsonObject, META_SERVER_INFO, ResultType,
    ServerCapabilities,
};

/// Params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeParams {
    /// The newest version the client supports (a string: a server may see one it does not know).
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl InitializeParams {
    /// Params offering `protocol_version`.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeParams {
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
            meta: None,
        }
    }
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The version the server chose.
    pub protocol_version: String,
    /// The server's capabilities.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// The server's identity.
    pub server_info: Implementation,
    /// Guidance for the model on how to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

decode_keeping_unknown_raw!(InitializeResult "an initialize result object" {
    extra JsonObject;
    required { protocol_version: "protocolVersion", server_info: "serverInfo" }
    optional {
        capabilities: "capabilities",
        instructions: "instructions",
        meta: "_meta",
    }
});

/// Params of `server/discover`: only `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DiscoverParams {
    /// `_meta` (the per-request protocol fields).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// `"complete"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Versions the server supports.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// Guidance for the model on how to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Freshness hint in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache this result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `_meta` (holds `io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl DiscoverResult {
    /// The server's identity from `_meta`, if it sent one.
    pub fn server_info(&self) -> Option<Implementation> {
        let v = self.meta.as_ref()?.get(META_SERVER_INFO)?;
        Implementation::deserialize(v).ok()
    }
}
