//! `subscriptions/listen` (2026-07-28): one long-lived request over which the
//! server streams the notifications the client asked for.

use serde::{Deserialize, Serialize};

use super::{JsonObject, ResultType, subscription_id};
use crate::RequestId;

/// Which notifications to receive on a `subscriptions/listen` stream. The
/// server echoes the subset it agreed to in
/// `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (`io.modelcontextprotocol/tasks` extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
    /// Unknown members (other extensions' filters), kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionFilter {
    /// An empty filter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for `notifications/tools/list_changed`.
    #[must_use]
    pub fn with_tools_list_changed(mut self) -> Self {
        self.tools_list_changed = Some(true);
        self
    }

    /// Asks for `notifications/prompts/list_changed`.
    #[must_use]
    pub fn with_prompts_list_changed(mut self) -> Self {
        self.prompts_list_changed = Some(true);
        self
    }

    /// Asks for `notifications/resources/list_changed`.
    #[must_use]
    pub fn with_resources_list_changed(mut self) -> Self {
        self.resources_list_changed = Some(true);
        self
    }

    /// Asks for `notifications/resources/updated` about `uri`.
    #[must_use]
    pub fn with_resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_subscriptions
            .get_or_insert_with(Vec::new)
            .push(uri.into());
        self
    }

    /// Asks for `notifications/tasks` about `task_id` (tasks extension).
    #[must_use]
    pub fn with_task(mut self, task_id: impl Into<String>) -> Self {
        self.task_ids
            .get_or_insert_with(Vec::new)
            .push(task_id.into());
        self
    }
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListenParams {
    /// What to receive.
    pub notifications: SubscriptionFilter,
    /// `_meta` (the per-request protocol fields).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ListenParams {
    /// Listens for `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        ListenParams {
            notifications,
            meta: None,
        }
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Result of `subscriptions/listen`: sent when the server closes the stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListenResult {
    /// `resultType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta` (holds `io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ListenResult {
    /// The subscription id from `_meta`.
    pub fn subscription_id(&self) -> Option<RequestId> {
        subscription_id(self.meta.as_ref())
    }
}

/// Params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedParams {
    /// The subset of the filter the server agreed to.
    pub notifications: SubscriptionFilter,
    /// `_meta` (holds `io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsAcknowledgedParams {
    /// The subscription id from `_meta`.
    pub fn subscription_id(&self) -> Option<RequestId> {
        subscription_id(self.meta.as_ref())
    }
}
