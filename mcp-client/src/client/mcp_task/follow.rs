//! A call that runs as a task by itself: [`Client::call_tool`] on a tool
//! whose `taskSupport` is `required` (2025-11-25), or one the server
//! answered with a task handle (2026-07-28). The task is followed to its
//! raw result through a [`TaskHandle`], its status changes reported as
//! progress, and dropping the call before the outcome is known cancels
//! the task on the server ([`CancelOnDrop`]).

use std::time::Duration;

use mcp_proto::method::{CallTool, Method};
use mcp_proto::schema::{CreateTaskResult, GetTaskResult, ProgressParams, Task};
use mcp_proto::{Era, RawJson};
use serde::Deserialize;

use super::requester::{TaskHandle, TaskOptions};
use crate::client::request::encode_error;
use crate::client::{Client, ProgressFn, decode};
use crate::error::ClientError;

/// Runs `tools/call` (its `params` without `task`) as a task, for
/// [`Client::call_tool`] on a tool whose `taskSupport` is `required`: the
/// raw result of the task (or of `tools/call`, if the server answered at
/// once). In 2025-11-25 the request asks for a task (`task: {}`) of a
/// server that takes tool tasks, and goes plain to one that does not; in
/// 2026-07-28 it goes as it is and the server decides. Status changes reach
/// `progress` as progress notifications (the count of changes so far, and
/// the status message).
pub(in crate::client) async fn run_required(
    client: Client,
    params: Option<RawJson>,
    meta: Option<mcp_proto::schema::JsonObject>,
    progress: Option<ProgressFn>,
    deadline: Option<Duration>,
) -> Result<RawJson, ClientError> {
    client.wait_ready().await?;
    let era = client.era().unwrap_or(Era::Legacy);
    let params = if !client.asks_tool_tasks() {
        params
    } else {
        let mut params: serde_json::Map<String, serde_json::Value> = match &params {
            Some(p) => decode(CallTool::NAME, p)?,
            None => serde_json::Map::new(),
        };
        params.insert("task".into(), serde_json::json!({}));
        Some(RawJson::from_value(&params).map_err(|e| encode_error(CallTool::NAME, e))?)
    };
    let mut request = client.request_raw(CallTool::NAME, params);
    for (k, v) in meta.into_iter().flatten() {
        request = request.meta(k, v);
    }
    let raw = request.await?;
    match created(&raw, era)? {
        None => Ok(raw),
        Some((task, era)) => follow(client, task, era, progress, deadline).await,
    }
}

/// Follows the task a `tools/call` of [`Client::call_tool`] was answered
/// with (2026-07-28, `resultType: "task"`) to its raw result.
pub(in crate::client) async fn follow_created(
    client: Client,
    handle: RawJson,
    progress: Option<ProgressFn>,
    deadline: Option<Duration>,
) -> Result<RawJson, ClientError> {
    let got: GetTaskResult = decode(CallTool::NAME, &handle)?;
    follow(client, got.task, Era::Modern, progress, deadline).await
}

/// Follows `task` to its raw result, with status changes as progress.
async fn follow(
    client: Client,
    task: Task,
    era: Era,
    progress: Option<ProgressFn>,
    deadline: Option<Duration>,
) -> Result<RawJson, ClientError> {
    let mut options = TaskOptions::new();
    if let Some(d) = deadline {
        options = options.deadline(d);
    }
    if let Some(progress) = progress {
        let token = mcp_proto::RequestId::from(task.task_id.clone());
        let changes = std::sync::atomic::AtomicU64::new(0);
        options = options.on_status(move |t| {
            let n = changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            let mut p = ProgressParams::new(token.clone(), n as f64, None);
            p.message = Some(match &t.status_message {
                Some(m) => format!("{}: {m}", t.status),
                None => t.status.to_string(),
            });
            progress(p);
        });
    }
    let handle = TaskHandle::new(client.clone(), task, era, options)?;
    // Until the outcome is known, dropping this future (a caller that gave
    // up on `call_tool`) cancels the task: nothing is left running on the
    // server that nobody follows.
    let guard = CancelOnDrop {
        client,
        task_id: Some(handle.id().to_owned()),
    };
    let result = handle.result_raw().await;
    guard.disarm();
    result
}

/// How long the `tasks/cancel` sent for a dropped task call may take.
pub(super) const CANCEL_ON_DROP_WAIT: Duration = Duration::from_secs(5);

/// Sends `tasks/cancel` for a task whose call was dropped before its
/// outcome was known. A `Drop` cannot wait, so the request goes from a task
/// of its own on the current runtime, bounded by [`CANCEL_ON_DROP_WAIT`]
/// (and ended at once by the client's close); without a runtime (the
/// runtime itself shutting down) nothing is sent and the task lives out its
/// ttl on the server.
struct CancelOnDrop {
    client: Client,
    task_id: Option<String>,
}

impl CancelOnDrop {
    /// The task's outcome is known (or it was cancelled already).
    fn disarm(mut self) {
        self.task_id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = self.client.clone();
        runtime.spawn(async move {
            let cancel = client
                .cancel_task(task_id)
                .timeout(CANCEL_ON_DROP_WAIT)
                .max_time(CANCEL_ON_DROP_WAIT);
            if let Err(e) = cancel.await {
                tracing::debug!(error = %mcp_proto::error::chain(&e), "tasks/cancel for a dropped task call failed");
            }
        });
    }
}

/// Whether a `tools/call` result is a task (`{"task": {...}}`), or a
/// 2026-07-28 task handle (`resultType: "task"`).
#[derive(Deserialize)]
struct Probe {
    task: Option<serde::de::IgnoredAny>,
    #[serde(rename = "resultType")]
    result_type: Option<String>,
}

/// The task a `tools/call` result created on a connection of `era`, and
/// its wire form; `None` when it is the result itself. A 2026-07-28 handle
/// on a legacy connection (where the extension cannot be in use) is
/// [`ClientError::TaskExtension`]; the 2025-11-25 shape counts only on a
/// legacy connection.
pub(super) fn created(raw: &RawJson, era: Era) -> Result<Option<(Task, Era)>, ClientError> {
    let probe: Probe = decode(CallTool::NAME, raw)?;
    if probe.result_type.as_deref() == Some("task") {
        if era != Era::Modern {
            return Err(ClientError::TaskExtension {
                method: CallTool::NAME.to_owned(),
            });
        }
        let got: GetTaskResult = decode(CallTool::NAME, raw)?;
        return Ok(Some((got.task, Era::Modern)));
    }
    if era == Era::Legacy && probe.task.is_some() {
        let created: CreateTaskResult = decode(CallTool::NAME, raw)?;
        return Ok(Some((created.task, Era::Legacy)));
    }
    Ok(None)
}
