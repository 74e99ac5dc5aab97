//! Ties each method name to its param and result types.
//!
//! - [`Method`]: requests the client sends (`tools/call`, …).
//! - [`ServerMethod`]: requests the server sends the client (legacy era), or
//!   embeds in an `InputRequiredResult` (2026-07-28).
//! - [`NotificationMethod`]: notifications, either direction.
//!
//! Each marker type is a zero-sized struct named after the method.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::schema::{
    CallToolParams, CallToolResult, CancelTaskResult, CancelledParams, CompleteParams,
    CompleteResult, CreateMessageParams, CreateMessageResult, DiscoverParams, DiscoverResult,
    ElicitParams, ElicitResult, ElicitationCompleteParams, EmptyResult, GetPromptParams,
    GetPromptResult, GetTaskPayloadResult, GetTaskResult, InitializeParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListRootsParams,
    ListRootsResult, ListTasksResult, ListToolsResult, ListenParams, ListenResult,
    LoggingMessageParams, NotificationParams, PaginatedParams, PingParams, ProgressParams,
    ReadResourceParams, ReadResourceResult, ResourceUpdatedParams, SetLevelParams, SubscribeParams,
    SubscriptionsAcknowledgedParams, TaskIdParams, TaskStatusParams, UnsubscribeParams,
    UpdateTaskParams,
};

/// A request method the client sends: its wire name, params and result.
pub trait Method {
    /// The wire name, e.g. `"tools/call"`.
    const NAME: &'static str;
    /// The params type.
    type Params: Serialize + Send + 'static;
    /// The result type.
    type Result: DeserializeOwned + Send + 'static;
}

/// A request method the server sends the client: the client decodes the
/// params and encodes the result.
pub trait ServerMethod {
    /// The wire name, e.g. `"sampling/createMessage"`.
    const NAME: &'static str;
    /// The params type.
    type Params: DeserializeOwned + Send + 'static;
    /// The result type.
    type Result: Serialize + Send + 'static;
}

/// A notification: its wire name and params.
pub trait NotificationMethod {
    /// The wire name, e.g. `"notifications/progress"`.
    const NAME: &'static str;
    /// The params type.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}

macro_rules! methods {
    ($trait:ident: $($(#[$doc:meta])* $ty:ident = $name:literal, $params:ty => $result:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        #[non_exhaustive]
        pub struct $ty;
        impl $trait for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    )*};
}

macro_rules! notifications {
    ($($(#[$doc:meta])* $ty:ident = $name:literal, $params:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        #[non_exhaustive]
        pub struct $ty;
        impl NotificationMethod for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
        }
    )*};
}

methods! { Method:
    /// `initialize` (legacy era).
    Initialize = "initialize", InitializeParams => InitializeResult;
    /// `server/discover` (2026-07-28).
    Discover = "server/discover", DiscoverParams => DiscoverResult;
    /// `ping` (legacy era).
    Ping = "ping", EmptyResult => EmptyResult;
    /// `tools/list`.
    ListTools = "tools/list", PaginatedParams => ListToolsResult;
    /// `tools/call`.
    CallTool = "tools/call", CallToolParams => CallToolResult;
    /// `resources/list`.
    ListResources = "resources/list", PaginatedParams => ListResourcesResult;
    /// `resources/templates/list`.
    ListResourceTemplates = "resources/templates/list", PaginatedParams => ListResourceTemplatesResult;
    /// `resources/read`.
    ReadResource = "resources/read", ReadResourceParams => ReadResourceResult;
    /// `resources/subscribe` (legacy era).
    Subscribe = "resources/subscribe", SubscribeParams => EmptyResult;
    /// `resources/unsubscribe` (legacy era).
    Unsubscribe = "resources/unsubscribe", UnsubscribeParams => EmptyResult;
    /// `subscriptions/listen` (2026-07-28).
    Listen = "subscriptions/listen", ListenParams => ListenResult;
    /// `prompts/list`.
    ListPrompts = "prompts/list", PaginatedParams => ListPromptsResult;
    /// `prompts/get`.
    GetPrompt = "prompts/get", GetPromptParams => GetPromptResult;
    /// `completion/complete`.
    Complete = "completion/complete", CompleteParams => CompleteResult;
    /// `logging/setLevel` (legacy era).
    SetLevel = "logging/setLevel", SetLevelParams => EmptyResult;
    /// `tasks/get` (2025-11-25 core; 2026-07-28 tasks extension).
    GetTask = "tasks/get", TaskIdParams => GetTaskResult;
    /// `tasks/result` (2025-11-25 only).
    GetTaskPayload = "tasks/result", TaskIdParams => GetTaskPayloadResult;
    /// `tasks/cancel` (2025-11-25 core; 2026-07-28 tasks extension).
    CancelTask = "tasks/cancel", TaskIdParams => CancelTaskResult;
    /// `tasks/list` (2025-11-25 only).
    ListTasks = "tasks/list", PaginatedParams => ListTasksResult;
    /// `tasks/update` (2026-07-28 tasks extension).
    UpdateTask = "tasks/update", UpdateTaskParams => EmptyResult;
}

methods! { ServerMethod:
    /// `sampling/createMessage`.
    CreateMessage = "sampling/createMessage", CreateMessageParams => CreateMessageResult;
    /// `elicitation/create` (2025-06-18+).
    Elicit = "elicitation/create", ElicitParams => ElicitResult;
    /// `roots/list`.
    ListRoots = "roots/list", ListRootsParams => ListRootsResult;
    /// `ping` sent by the server (legacy era).
    ServerPing = "ping", PingParams => EmptyResult;
}

notifications! {
    /// `notifications/initialized` (client → server, legacy era).
    Initialized = "notifications/initialized", NotificationParams;
    /// `notifications/cancelled` (either direction).
    Cancelled = "notifications/cancelled", CancelledParams;
    /// `notifications/progress` (either direction).
    Progress = "notifications/progress", ProgressParams;
    /// `notifications/message` (server → client).
    LoggingMessage = "notifications/message", LoggingMessageParams;
    /// `notifications/resources/updated` (server → client).
    ResourceUpdated = "notifications/resources/updated", ResourceUpdatedParams;
    /// `notifications/resources/list_changed` (server → client).
    ResourceListChanged = "notifications/resources/list_changed", NotificationParams;
    /// `notifications/tools/list_changed` (server → client).
    ToolListChanged = "notifications/tools/list_changed", NotificationParams;
    /// `notifications/prompts/list_changed` (server → client).
    PromptListChanged = "notifications/prompts/list_changed", NotificationParams;
    /// `notifications/roots/list_changed` (client → server, legacy era).
    RootsListChanged = "notifications/roots/list_changed", NotificationParams;
    /// `notifications/elicitation/complete` (server → client, 2025-11-25).
    ElicitationComplete = "notifications/elicitation/complete", ElicitationCompleteParams;
    /// `notifications/subscriptions/acknowledged` (server → client, 2026-07-28).
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams;
    /// `notifications/tasks/status` (either direction, 2025-11-25).
    TaskStatus = "notifications/tasks/status", TaskStatusParams;
    /// `notifications/tasks` (server → client, 2026-07-28 tasks extension).
    Tasks = "notifications/tasks", TaskStatusParams;
}
