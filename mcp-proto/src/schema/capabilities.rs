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

    /// Declares the 2026-07-28 tasks extension
    /// ([`TASKS_EXTENSION`](super::TASKS_EXTENSION)): the server may answer a
    /// `tools/call` with a task handle.
    #[must_use]
    pub fn with_tasks_extension(mut self) -> Self {
        self.extensions
            .get_or_insert_with(JsonObject::new)
            .entry(super::TASKS_EXTENSION)
            .or_insert_with(|| JsonObject::new().into());
        self
    }

    /// Declares the 2025-11-25 `tasks` capability as a receiver: the server
    /// may send `sampling/createMessage` and `elicitation/create` as tasks
    /// (each only if `sampling` / `elicitation` is declared already, so
    /// call this after them), and `tasks/list` and `tasks/cancel`.
    ///
    /// ```
    /// use mcp_proto::schema::ClientCapabilities;
    /// let caps = ClientCapabilities::default().with_sampling().with_task_requests();
    /// assert_eq!(
    ///     serde_json::to_value(&caps).unwrap()["tasks"],
    ///     serde_json::json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}})
    /// );
    /// ```
    #[must_use]
    pub fn with_task_requests(mut self) -> Self {
        let mut requests = JsonObject::new();
        if self.sampling.is_some() {
            requests.insert("sampling".into(), serde_json::json!({"createMessage": {}}));
        }
        if self.elicitation.is_some() {
            requests.insert("elicitation".into(), serde_json::json!({"create": {}}));
        }
        if requests.is_empty() {
            return self;
        }
        let tasks = self.tasks.get_or_insert_with(JsonObject::new);
        tasks
            .entry("list")
            .or_insert_with(|| JsonObject::new().into());
        tasks
            .entry("cancel")
            .or_insert_with(|| JsonObject::new().into());
        tasks.entry("requests").or_insert(requests.into());
        self
    }

    /// Whether this client takes `method` (`sampling/createMessage`,
    /// `elicitation/create`) as a task: `tasks.requests` names it.
    pub fn takes_task_request(&self, method: &str) -> bool {
        let (group, name) = match method {
            "sampling/createMessage" => ("sampling", "createMessage"),
            "elicitation/create" => ("elicitation", "create"),
            _ => return false,
        };
        self.tasks
            .as_ref()
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get(group))
            .and_then(|g| g.get(name))
            .is_some()
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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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

decode_keeping_unknown_raw!(ServerCapabilities "a server capabilities object" {
    extra JsonObject;
    required {}
    optional {
        tools: "tools",
        resources: "resources",
        prompts: "prompts",
        logging: "logging",
        completions: "completions",
        experimental: "experimental",
        extensions: "extensions",
        tasks: "tasks",
    }
});

impl ServerCapabilities {
    /// Whether the server takes `tools/call` as a task: the 2025-11-25
    /// `tasks.requests.tools.call` capability, or the 2026-07-28
    /// [`TASKS_EXTENSION`](super::TASKS_EXTENSION) among its extensions.
    pub fn tool_tasks(&self) -> bool {
        let legacy = self
            .tasks
            .as_ref()
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"))
            .is_some();
        legacy || self.has_extension(super::TASKS_EXTENSION)
    }

    /// Whether the server declared the extension `id` (2026-07-28).
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
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
