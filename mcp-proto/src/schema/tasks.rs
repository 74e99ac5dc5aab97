//! Tasks: durable, pollable requests.
//!
//! See [`Task`] for the two wire forms (2025-11-25 core, 2026-07-28 extension).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::{InputRequest, InputResponses, JsonObject, Page, ResultType};
use crate::error::ErrorObject;

/// Extension identifier of the 2026-07-28 tasks extension (a key of `capabilities.extensions`).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key tying a message to a task (2025-11-25): a [`RelatedTaskMetadata`].
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

string_enum! {
    /// The state of a task.
    TaskStatus {
        /// `"working"`: in progress.
        Working = "working",
        /// `"input_required"`: waiting for the requester.
        InputRequired = "input_required",
        /// `"completed"`: finished; the result is available.
        Completed = "completed",
        /// `"failed"`: finished with an error.
        Failed = "failed",
        /// `"cancelled"`: cancelled before completion.
        Cancelled = "cancelled",
    }
}

impl TaskStatus {
    /// Whether the task can no longer change (`completed`, `failed`, `cancelled`).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// Absent → `None`; `null` → `Some(None)`; a value → `Some(Some(v))`.
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

/// The state of a task. It carries the fields of both wire forms.
///
/// Two wire forms exist:
/// - **2025-11-25 core (experimental)**: the requester adds `task` to
///   `tools/call` / `sampling/createMessage` / `elicitation/create` params,
///   the receiver answers with a [`CreateTaskResult`] (`{"task": {...}}`), and
///   `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` plus
///   `notifications/tasks/status` follow. Both sides can be the receiver.
///   `ttl` and `pollInterval` are the timing fields.
/// - **2026-07-28 extension `io.modelcontextprotocol/tasks`**: a server may
///   answer any request with a flat task handle (`resultType: "task"`, see
///   [`GetTaskResult`]); the client polls `tasks/get` (which inlines
///   `inputRequests`, `result` or `error`), answers input with
///   `tasks/update`, and cancels with `tasks/cancel`. `notifications/tasks`
///   arrive on a `subscriptions/listen` stream. `ttlMs` and
///   `pollIntervalMs` are the timing fields; there is no `tasks/list`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task id.
    pub task_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Human-readable status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last update.
    pub last_updated_at: String,
    /// Retention from creation in ms; `Some(None)` is `null` (unlimited). 2025-11-25 name.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl: Option<Option<u64>>,
    /// Suggested polling interval in ms (2025-11-25 name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Retention from creation in ms; `Some(None)` is `null` (unlimited). 2026-07-28 extension name.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl_ms: Option<Option<u64>>,
    /// Suggested polling interval in ms (2026-07-28 extension name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Outstanding requests for the client when `input_required` (2026-07-28 extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// The final result when `completed` (2026-07-28 extension): the original
    /// request's result shape, e.g. a `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The error when `failed` (2026-07-28 extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Task {
    /// Retention in ms from either wire name; `None` when absent or unlimited.
    pub fn ttl_millis(&self) -> Option<u64> {
        self.ttl_ms.flatten().or(self.ttl.flatten())
    }

    /// Suggested polling interval in ms from either wire name.
    pub fn poll_interval_millis(&self) -> Option<u64> {
        self.poll_interval_ms.or(self.poll_interval)
    }
}

/// The `task` member of a task-augmented request (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskMetadata {
    /// Requested retention in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TaskMetadata {
    /// Asks for a task, with an optional retention in ms.
    pub fn new(ttl: Option<u64>) -> Self {
        TaskMetadata {
            ttl,
            extra: JsonObject::new(),
        }
    }
}

/// The value of `_meta["io.modelcontextprotocol/related-task"]` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RelatedTaskMetadata {
    /// The task this message belongs to.
    pub task_id: String,
}

/// Result of a task-augmented request (2025-11-25): `{"task": {...}}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// The new task.
    pub task: Task,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            task_id: task_id.into(),
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

/// Result of `tasks/get` (both forms, flat: result fields plus the task),
/// and the 2026-07-28 task handle (`resultType: "task"`) a server may return
/// in place of any result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskResult {
    /// `resultType`: `complete` for `tasks/get`, `task` for a handle (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task.
    #[serde(flatten)]
    pub task: Task,
}

/// A 2026-07-28 task handle: the flat result with `resultType: "task"`.
pub type TaskHandle = GetTaskResult;

/// Result of `tasks/cancel`. In 2025-11-25 it carries the task (read it with
/// [`CancelTaskResult::task`]); in the 2026-07-28 extension it is empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelTaskResult {
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task fields (2025-11-25) and unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CancelTaskResult {
    /// The cancelled task, if the server sent it (2025-11-25).
    pub fn task(&self) -> Option<Task> {
        Task::deserialize(serde_json::Value::Object(self.extra.clone())).ok()
    }
}

/// Result of `tasks/result` (2025-11-25): the original request's result, as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetTaskPayloadResult {
    /// `_meta` (holds `io.modelcontextprotocol/related-task`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result's members (decode them as the original method's result type).
    #[serde(flatten)]
    pub result: JsonObject,
}

/// Result of `tasks/list` (2025-11-25 only): a [`Page`] of tasks.
pub type ListTasksResult = Page<Task>;

/// Params of `tasks/update` (2026-07-28 extension): answers to an
/// `input_required` task's `inputRequests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Key → result, the keys of the task's `inputRequests`.
    pub input_responses: InputResponses,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl UpdateTaskParams {
    /// Answers `task_id`'s input requests.
    pub fn new(task_id: impl Into<String>, input_responses: InputResponses) -> Self {
        UpdateTaskParams {
            task_id: task_id.into(),
            input_responses,
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

/// Params of `notifications/tasks/status` (2025-11-25) and
/// `notifications/tasks` (2026-07-28 extension): the task, flat.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskStatusParams {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task.
    #[serde(flatten)]
    pub task: Task,
}
