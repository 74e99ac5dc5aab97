//! The client as the receiver of MCP tasks (2025-11-25): task-augmented
//! `sampling/createMessage` and `elicitation/create` from the server, and
//! the server's `tasks/*` requests about them.
//!
//! The [`Receiver`] lives in the driver, beside the
//! [`HandlerTasks`] that run the handler for it, not in the sans-IO
//! session: a kept task is a running handler future (an abort handle) and
//! a timer, both of which need the runtime. The session only sees ordinary
//! server requests and their answers.
//!
//! Invariants:
//! - At most [`ReceiverLimits::max_tasks`] tasks are kept at once, working
//!   or finished; a task-augmented request beyond that is refused with a
//!   JSON-RPC error and the handler is not called.
//! - Every kept task is dropped (its handler aborted if still running) at
//!   its `ttl` after creation, by a timer task of its own; the `ttl` is the
//!   server's request capped at [`ReceiverLimits::max_ttl`] (never
//!   unlimited).
//! - A `tasks/result` for a working task is answered when the task ends
//!   (finished, cancelled or expired); meanwhile it counts as one of the
//!   server's requests being answered (`max_server_requests`).
//! - `tasks/list` answers at most [`TASK_LIST_PAGE_SIZE`] tasks, in task id
//!   order; the `nextCursor` is the last id of the page, and the next page
//!   starts after it (a task dropped meanwhile does not break the cursor).
//!   A cursor that is not one of ours is -32602.
//! - A task that ends (finished, failed, cancelled) is reported with a
//!   `notifications/tasks/status` (the spec's optional status notification);
//!   a task dropped at its ttl has no status left to report, and is not.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_proto::jsonrpc::{Request, RequestId};
use mcp_proto::schema::{META_RELATED_TASK, TaskIdParams, TaskMetadata, TaskStatus};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use serde_json::{Value, json};
use tokio::task::AbortHandle;

use crate::client::handler_tasks::HandlerTasks;

/// Default [`ClientBuilder::max_kept_tasks`](crate::ClientBuilder::max_kept_tasks):
/// how many tasks the server asked the client to run may be kept at once.
pub const DEFAULT_MAX_KEPT_TASKS: usize = 32;

/// Default [`ClientBuilder::max_task_ttl`](crate::ClientBuilder::max_task_ttl):
/// the longest a task the server asked for is kept (its `ttl` is capped at
/// this; a request without a `ttl` gets it).
pub const DEFAULT_MAX_TASK_TTL: Duration = Duration::from_secs(10 * 60);

/// The `pollInterval` (ms) the client suggests for its tasks.
pub const TASK_POLL_INTERVAL_MS: u64 = 500;

/// How many tasks one `tasks/list` answer holds at most; more come in
/// later pages (`nextCursor`).
pub const TASK_LIST_PAGE_SIZE: usize = 10;

/// Bounds on the tasks the client keeps for the server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReceiverLimits {
    /// How many tasks may be kept at once (0: the client takes none and
    /// does not declare the `tasks` capability).
    pub(crate) max_tasks: usize,
    /// The longest a task is kept after its creation.
    pub(crate) max_ttl: Duration,
}

impl Default for ReceiverLimits {
    fn default() -> Self {
        ReceiverLimits {
            max_tasks: DEFAULT_MAX_KEPT_TASKS,
            max_ttl: DEFAULT_MAX_TASK_TTL,
        }
    }
}

/// Where a kept task stands.
enum State {
    /// The handler runs (abort it to cancel).
    Working(AbortHandle),
    /// The handler answered (a result, or its error).
    Done(Result<RawJson, ErrorObject>),
    /// `tasks/cancel`led before the handler answered.
    Cancelled,
}

struct Kept {
    created_at: String,
    last_updated_at: String,
    ttl_ms: u64,
    state: State,
    /// `tasks/result` requests waiting for the task to end.
    waiters: Vec<RequestId>,
    /// The timer that drops the task at its ttl.
    expiry: AbortHandle,
}

impl Kept {
    fn status(&self) -> TaskStatus {
        match &self.state {
            State::Working(_) => TaskStatus::Working,
            State::Done(Ok(_)) => TaskStatus::Completed,
            State::Done(Err(_)) => TaskStatus::Failed,
            State::Cancelled => TaskStatus::Cancelled,
        }
    }

    /// The task as the wire's `Task` object.
    fn to_json(&self, id: &str) -> Value {
        let mut t = json!({
            "taskId": id,
            "status": self.status(),
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": TASK_POLL_INTERVAL_MS,
        });
        if let (State::Done(Err(e)), Some(o)) = (&self.state, t.as_object_mut()) {
            o.insert("statusMessage".into(), Value::from(e.message.clone()));
        }
        t
    }
}

/// Answers to send: (the server's request id, the answer).
pub(crate) type Answers = Vec<(RequestId, Result<RawJson, ErrorObject>)>;

/// The tasks the client keeps for the server.
pub(crate) struct Receiver {
    limits: ReceiverLimits,
    kept: HashMap<String, Kept>,
    ids: std::collections::hash_map::RandomState,
    counter: u64,
}

/// What [`Receiver::serve`] did with a request of the server's.
pub(crate) enum Served {
    /// Not a task request: the handler answers it as a plain one.
    Plain(Request),
    /// Taken: the answers to send now, then (if any) the params of the
    /// `notifications/tasks/status` to send after them.
    Answered {
        answers: Answers,
        status: Option<RawJson>,
    },
}

/// What [`Receiver::answer`] did with a `tasks/*` request.
enum Reply {
    /// Answer now.
    Now(Result<RawJson, ErrorObject>),
    /// Answered when the task ends (`tasks/result` on a working task).
    Later,
}

/// The `task` member of a request's params, if it has one.
fn task_metadata(params: Option<&RawJson>) -> Option<TaskMetadata> {
    #[derive(serde::Deserialize)]
    struct Augmented {
        task: Option<TaskMetadata>,
    }
    params?.decode::<Augmented>().ok()?.task
}

/// The `taskId` of a `tasks/*` request's params, if it has one.
fn task_metadata_id(params: Option<&RawJson>) -> Option<String> {
    params?.decode::<TaskIdParams>().ok().map(|p| p.task_id)
}

impl Receiver {
    pub(crate) fn new(limits: ReceiverLimits) -> Self {
        Receiver {
            limits,
            kept: HashMap::new(),
            ids: Default::default(),
            counter: 0,
        }
    }

    /// Takes the server's request `req` if it is about tasks: a `tasks/*`
    /// request, or a task-augmented one the client declared (whose handler
    /// work `handlers` starts). `tasks_era`: the connection speaks
    /// 2025-11-25, the one revision where the server may ask the client to
    /// run a request as a task.
    pub(crate) fn serve(
        &mut self,
        req: Request,
        tasks_era: bool,
        handlers: &mut HandlerTasks,
    ) -> Served {
        if !tasks_era || handlers.capabilities().tasks.is_none() {
            return Served::Plain(req);
        }
        match &*req.method {
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => {
                self.answer_task_request(req)
            }
            m if handlers.capabilities().takes_task_request(m) => {
                match task_metadata(req.params.as_ref()) {
                    Some(meta) => {
                        let answer =
                            self.start(req.method.into_owned(), req.params, &meta, handlers);
                        Served::Answered {
                            answers: vec![(req.id, answer)],
                            status: None,
                        }
                    }
                    None => Served::Plain(req),
                }
            }
            _ => Served::Plain(req),
        }
    }

    /// Answers the server's `tasks/*` request about a task it asked for.
    fn answer_task_request(&mut self, req: Request) -> Served {
        let cancel = req.method == "tasks/cancel";
        match self.answer(req.id.clone(), &req.method, req.params.as_ref()) {
            Reply::Later => Served::Answered {
                answers: Vec::new(),
                status: None,
            },
            Reply::Now(answer) => {
                let task = cancel
                    .then(|| task_metadata_id(req.params.as_ref()))
                    .flatten();
                let ok = answer.is_ok();
                let mut answers = vec![(req.id, answer)];
                let mut status = None;
                if let (true, Some(task)) = (ok, task) {
                    // A `tasks/result` waiting on it gets the cancellation.
                    answers.extend(self.take_waiters(&task));
                    status = self.status_params(&task);
                }
                Served::Answered { answers, status }
            }
        }
    }

    /// Runs the server's `method` as a task: the handler runs as for a
    /// plain request, its outcome kept for `tasks/result`. The
    /// `CreateTaskResult` (or the refusal) to answer at once.
    fn start(
        &mut self,
        method: String,
        params: Option<RawJson>,
        meta: &TaskMetadata,
        handlers: &mut HandlerTasks,
    ) -> Result<RawJson, ErrorObject> {
        self.check_room()?;
        let task = self.fresh_id();
        let ttl = self.ttl(meta);
        let Some((work, expiry)) = handlers.start_task_work(&task, method, params, ttl) else {
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "the client is shutting down",
            ));
        };
        self.insert(task, ttl, work, expiry)
    }

    /// Whether another task may be kept; if not, the error to answer.
    fn check_room(&self) -> Result<(), ErrorObject> {
        if self.kept.len() < self.limits.max_tasks {
            return Ok(());
        }
        tracing::warn!(
            limit = self.limits.max_tasks,
            "too many tasks kept for the server; refusing a task-augmented request"
        );
        Err(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "client busy: {} tasks are kept for the server (limit: max_kept_tasks); \
                 retry once some expire or send the request without a task",
                self.limits.max_tasks
            ),
        ))
    }

    /// A fresh task id: 128 bits from the process's random hasher keys and
    /// a counter, so the server cannot guess another task's id.
    fn fresh_id(&mut self) -> String {
        self.counter += 1;
        let mut a = self.ids.build_hasher();
        a.write_u64(self.counter);
        let mut b = std::collections::hash_map::RandomState::new().build_hasher();
        b.write_u64(self.counter);
        format!("{:016x}{:016x}", a.finish(), b.finish())
    }

    /// The ttl granted for a requested one.
    fn ttl(&self, meta: &TaskMetadata) -> Duration {
        let max = self.limits.max_ttl;
        meta.ttl
            .map_or(max, |ms| Duration::from_millis(ms).min(max))
    }

    /// Keeps a new working task; the `CreateTaskResult` to answer.
    fn insert(
        &mut self,
        id: String,
        ttl: Duration,
        work: AbortHandle,
        expiry: AbortHandle,
    ) -> Result<RawJson, ErrorObject> {
        let now = iso8601(SystemTime::now());
        let kept = Kept {
            created_at: now.clone(),
            last_updated_at: now,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            state: State::Working(work),
            waiters: Vec::new(),
            expiry,
        };
        let answer = encode(&json!({ "task": kept.to_json(&id) }));
        self.kept.insert(id, kept);
        answer
    }

    /// Answers `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel`
    /// (the server's request `req`).
    fn answer(&mut self, req: RequestId, method: &str, params: Option<&RawJson>) -> Reply {
        if method == "tasks/list" {
            return Reply::Now(self.list_page(params));
        }
        let id = match params.map(RawJson::decode::<TaskIdParams>) {
            Some(Ok(p)) => p.task_id,
            _ => {
                return Reply::Now(Err(ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("{method} needs params with a taskId"),
                )));
            }
        };
        let Some(kept) = self.kept.get_mut(&id) else {
            return Reply::Now(Err(unknown(&id)));
        };
        match method {
            "tasks/get" => Reply::Now(encode(&kept.to_json(&id))),
            "tasks/result" => match &kept.state {
                State::Working(_) => {
                    kept.waiters.push(req);
                    Reply::Later
                }
                _ => Reply::Now(payload(&id, kept)),
            },
            _ => {
                // tasks/cancel
                let State::Working(work) = &kept.state else {
                    return Reply::Now(Err(ErrorObject::new(
                        ErrorCode::INVALID_PARAMS,
                        format!(
                            "task {id} has already ended ({}); it cannot be cancelled",
                            kept.status()
                        ),
                    )));
                };
                work.abort();
                kept.state = State::Cancelled;
                kept.last_updated_at = iso8601(SystemTime::now());
                Reply::Now(encode(&kept.to_json(&id)))
            }
        }
    }

    /// One page of `tasks/list`: the tasks after the cursor, in id order.
    fn list_page(&self, params: Option<&RawJson>) -> Result<RawJson, ErrorObject> {
        #[derive(serde::Deserialize)]
        struct ListParams {
            cursor: Option<String>,
        }
        let cursor = match params.map(RawJson::decode::<ListParams>) {
            None => None,
            Some(Ok(p)) => p.cursor,
            Some(Err(_)) => {
                return Err(ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    "tasks/list params must be an object with an optional string cursor",
                ));
            }
        };
        // Our cursors are task ids: 32 hex digits (see `fresh_id`).
        if let Some(c) = &cursor
            && !(c.len() == 32 && c.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "invalid tasks/list cursor (not one this client gave)",
            ));
        }
        let mut ids: Vec<&String> = self
            .kept
            .keys()
            .filter(|id| cursor.as_ref().is_none_or(|c| *id > c))
            .collect();
        ids.sort_unstable();
        let more = ids.len() > TASK_LIST_PAGE_SIZE;
        ids.truncate(TASK_LIST_PAGE_SIZE);
        let tasks: Vec<Value> = ids
            .iter()
            .filter_map(|id| self.kept.get(*id).map(|k| k.to_json(id)))
            .collect();
        let mut page = json!({ "tasks": tasks });
        if let (true, Some(last), Some(o)) = (more, ids.last(), page.as_object_mut()) {
            o.insert("nextCursor".into(), Value::from(last.as_str()));
        }
        encode(&page)
    }

    /// What waiting `tasks/result` requests get now that `id` ended (by
    /// cancellation): taken from the task.
    fn take_waiters(&mut self, id: &str) -> Answers {
        let Some(kept) = self.kept.get_mut(id) else {
            return Vec::new();
        };
        let waiters = std::mem::take(&mut kept.waiters);
        waiters
            .into_iter()
            .map(|w| (w, payload(id, kept)))
            .collect()
    }

    /// The handler answered task `id`: keeps the outcome (unless the task
    /// was cancelled or dropped meanwhile). The answers to its waiting
    /// `tasks/result`s, and the status notification's params.
    pub(crate) fn finished(
        &mut self,
        id: &str,
        result: Result<RawJson, ErrorObject>,
    ) -> (Answers, Option<RawJson>) {
        let Some(kept) = self.kept.get_mut(id) else {
            return (Vec::new(), None);
        };
        if !matches!(kept.state, State::Working(_)) {
            return (Vec::new(), None);
        }
        kept.state = State::Done(result);
        kept.last_updated_at = iso8601(SystemTime::now());
        (self.take_waiters(id), self.status_params(id))
    }

    /// The task's `notifications/tasks/status` params, if it is kept.
    fn status_params(&self, id: &str) -> Option<RawJson> {
        self.kept
            .get(id)
            .and_then(|k| RawJson::from_value(&k.to_json(id)).ok())
    }

    /// Task `id` reached its ttl: dropped (its handler aborted); waiters
    /// are told it expired.
    pub(crate) fn expired(&mut self, id: &str) -> Answers {
        let Some(kept) = self.kept.remove(id) else {
            return Vec::new();
        };
        if let State::Working(work) = &kept.state {
            work.abort();
        }
        tracing::debug!(
            task = id,
            "a task kept for the server reached its ttl; dropped"
        );
        kept.waiters
            .into_iter()
            .map(|w| (w, Err(unknown(id))))
            .collect()
    }

    /// A `tasks/result` request the server cancelled waits no more.
    pub(crate) fn forget_waiter(&mut self, req: &RequestId) {
        for kept in self.kept.values_mut() {
            kept.waiters.retain(|w| w != req);
        }
    }

    /// The connection ended: every handler and timer stops.
    pub(crate) fn clear(&mut self) {
        for (_, kept) in self.kept.drain() {
            if let State::Working(work) = &kept.state {
                work.abort();
            }
            kept.expiry.abort();
        }
    }
}

/// What `tasks/result` answers for an ended task: the handler's result
/// (with the related-task `_meta`), its error, or a cancellation error.
fn payload(id: &str, kept: &Kept) -> Result<RawJson, ErrorObject> {
    match &kept.state {
        State::Done(Ok(result)) => {
            let mut v: Value = result.decode().map_err(|e| {
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("could not encode the result: {e}"),
                )
            })?;
            if let Some(o) = v.as_object_mut() {
                let meta = o.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(META_RELATED_TASK.into(), json!({ "taskId": id }));
                }
            }
            encode(&v)
        }
        State::Done(Err(e)) => Err(e.clone()),
        State::Cancelled | State::Working(_) => Err(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("task {id} was cancelled before it finished"),
        )),
    }
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("unknown task id {id:?} (never created, or dropped after its ttl)"),
    )
}

fn encode(v: &Value) -> Result<RawJson, ErrorObject> {
    RawJson::from_value(v).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("could not encode the answer: {e}"),
        )
    })
}

/// `t` as an ISO 8601 UTC timestamp with milliseconds.
fn iso8601(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_formats_known_instants() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_199_123); // 2024-02-29T23:59:59.123Z
        assert_eq!(iso8601(t), "2024-02-29T23:59:59.123Z");
    }
}
