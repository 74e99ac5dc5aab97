//! Client and server capabilities.

use serde::{Deserialize, Serialize};

use super::JsonObject;

/// What the client supports. Sent in `initialize` (legacy) or in every
/// request's `_meta` (2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// The client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client can sample from a model (`{}`, or `{"tools": {}, "context": {}}` in 2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// The client can elicit input from the user (`{}`, or `{"form": {}, "url": {}}` in 2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions (2026-07-28): identifier → settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Tasks (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// Advertises `sampling` (the client answers `sampling/createMessage`).
    ///
    /// ```
    /// use mcp_proto::schema::ClientCapabilities;
    /// let caps = ClientCapabilities::default().with_sampling().with_elicitation_form().with_roots();
    /// assert_eq!(
    ///     serde_json::to_value(&caps).unwrap(),
    ///     serde_json::json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {}})
    /// );
    /// ```
    #[must_use]
    pub fn with_sampling(mut self) -> Self {
        self.sampling.get_or_insert_with(JsonObject::new);
        self
    }

    /// Advertises form-mode `elicitation` (`{"form": {}}`; servers before
    /// 2025-11-25 read any `elicitation` member as form mode).
    #[must_use]
    pub fn with_elicitation_form(mut self) -> Self {
        let e = self.elicitation.get_or_insert_with(JsonObject::new);
        e.entry("form").or_insert_with(|| JsonObject::new().into());
        self
    }

    /// Advertises URL-mode `elicitation` (2025-11-25+: `{"url": {}}`).
    #[must_use]
    pub fn with_elicitation_url(mut self) -> Self {
        let e = self.elicitation.get_or_insert_with(JsonObject::new);
        e.entry("url").or_insert_with(|| JsonObject::new().into());
        self
    }

    /// Advertises `roots` (the client answers `roots/list`).
    #[must_use]
    pub fn with_roots(mut self) -> Self {
        self.roots.get_or_insert_with(RootsCapability::default);
        self
    }
}

/// The `roots` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RootsCapability {
    /// The client sends `notifications/roots/list_changed` (legacy era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What the server supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// The server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server supports argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Tasks (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A capability whose only option is `listChanged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// The server sends `list_changed` notifications for this list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `resources` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// The server supports `resources/subscribe` (legacy era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}
