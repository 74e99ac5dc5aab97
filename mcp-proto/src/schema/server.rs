//! Typed views of what a server sends the client unprompted: requests
//! (legacy era, or inside a 2026-07-28 `InputRequiredResult`) and notifications.

use crate::RawJson;
use serde_json::Value;

use super::{
    CancelledParams, CreateMessageParams, ElicitParams, ElicitationCompleteParams, ListRootsParams,
    LoggingMessageParams, NotificationParams, PaginatedParams, PingParams, ProgressParams,
    ResourceUpdatedParams, SubscriptionsAcknowledgedParams, TaskIdParams, TaskStatusParams,
};

fn decode<T: serde::de::DeserializeOwned>(params: Option<&RawJson>) -> serde_json::Result<T> {
    match params {
        Some(p) => p.decode(),
        None => T::deserialize(Value::Object(super::JsonObject::new())),
    }
}

fn raw_to_value(params: Option<&RawJson>) -> Option<Value> {
    params.and_then(|p| p.decode().ok())
}

/// A request from the server to the client, decoded by method.
// Over clippy's size limit only when serde_json's `preserve_order` is on
// (rig-core turns it on: mcp-tools' `rig` feature, in `--all-features`
// builds), which makes every JSON map larger. Server
// requests are rare and short-lived; boxing the variants would change how
// every handler matches them.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerRequest {
    /// `ping` (legacy era): answer with an empty result.
    Ping(PingParams),
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageParams),
    /// `elicitation/create`.
    Elicit(ElicitParams),
    /// `roots/list`.
    ListRoots(ListRootsParams),
    /// `tasks/get` (2025-11-25: the server polls a client-side task).
    GetTask(TaskIdParams),
    /// `tasks/result` (2025-11-25).
    GetTaskPayload(TaskIdParams),
    /// `tasks/cancel` (2025-11-25).
    CancelTask(TaskIdParams),
    /// `tasks/list` (2025-11-25).
    ListTasks(PaginatedParams),
    /// A method this crate does not know: answer `-32601`.
    Unknown {
        /// The method name.
        method: String,
        /// The params, if they were JSON.
        params: Option<Value>,
    },
}

impl ServerRequest {
    /// Decodes `params` according to `method`. Unknown methods give
    /// [`ServerRequest::Unknown`]; a known method with bad params gives the
    /// decode error (answer `-32602`).
    pub fn from_parts(method: &str, params: Option<&RawJson>) -> serde_json::Result<Self> {
        Ok(match method {
            "ping" => ServerRequest::Ping(decode(params)?),
            "sampling/createMessage" => ServerRequest::CreateMessage(decode(params)?),
            "elicitation/create" => ServerRequest::Elicit(decode(params)?),
            "roots/list" => ServerRequest::ListRoots(decode(params)?),
            "tasks/get" => ServerRequest::GetTask(decode(params)?),
            "tasks/result" => ServerRequest::GetTaskPayload(decode(params)?),
            "tasks/cancel" => ServerRequest::CancelTask(decode(params)?),
            "tasks/list" => ServerRequest::ListTasks(decode(params)?),
            other => ServerRequest::Unknown {
                method: other.to_owned(),
                params: raw_to_value(params),
            },
        })
    }

    /// Decodes a JSON-RPC request.
    pub fn from_request(req: &crate::Request) -> serde_json::Result<Self> {
        Self::from_parts(&req.method, req.params.as_ref())
    }
}

/// A notification from the server, decoded by method.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/cancelled`.
    Cancelled(CancelledParams),
    /// `notifications/progress`.
    Progress(ProgressParams),
    /// `notifications/message`.
    LoggingMessage(LoggingMessageParams),
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedParams),
    /// `notifications/resources/list_changed`.
    ResourceListChanged(NotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged(NotificationParams),
    /// `notifications/prompts/list_changed`.
    PromptListChanged(NotificationParams),
    /// `notifications/elicitation/complete` (2025-11-25).
    ElicitationComplete(ElicitationCompleteParams),
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    SubscriptionsAcknowledged(SubscriptionsAcknowledgedParams),
    /// `notifications/tasks/status` (2025-11-25) or `notifications/tasks`
    /// (2026-07-28 tasks extension).
    TaskStatus(Box<TaskStatusParams>),
    /// A method this crate does not know: ignore it.
    Unknown {
        /// The method name.
        method: String,
        /// The params, if they were JSON.
        params: Option<Value>,
    },
}

impl ServerNotification {
    /// Decodes `params` according to `method`.
    pub fn from_parts(method: &str, params: Option<&RawJson>) -> serde_json::Result<Self> {
        use ServerNotification as N;
        Ok(match method {
            "notifications/cancelled" => N::Cancelled(decode(params)?),
            "notifications/progress" => N::Progress(decode(params)?),
            "notifications/message" => N::LoggingMessage(decode(params)?),
            "notifications/resources/updated" => N::ResourceUpdated(decode(params)?),
            "notifications/resources/list_changed" => N::ResourceListChanged(decode(params)?),
            "notifications/tools/list_changed" => N::ToolListChanged(decode(params)?),
            "notifications/prompts/list_changed" => N::PromptListChanged(decode(params)?),
            "notifications/elicitation/complete" => N::ElicitationComplete(decode(params)?),
            "notifications/subscriptions/acknowledged" => {
                N::SubscriptionsAcknowledged(decode(params)?)
            }
            "notifications/tasks/status" | "notifications/tasks" => N::TaskStatus(decode(params)?),
            other => N::Unknown {
                method: other.to_owned(),
                params: raw_to_value(params),
            },
        })
    }

    /// Decodes a JSON-RPC notification.
    pub fn from_notification(n: &crate::Notification) -> serde_json::Result<Self> {
        Self::from_parts(&n.method, n.params.as_ref())
    }
}
