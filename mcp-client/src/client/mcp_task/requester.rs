//! The requester side of MCP tasks: call a tool now, fetch its result
//! later. One API over both wire forms: the 2025-11-25 core tasks
//! (experimental) and the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks` (SEP-2663).
//!
//! [`Client::call_tool_as_task`] returns a [`TaskHandle`] when the server
//! runs the call as a task, and the result when it answered at once.
//! [`TaskHandle::wait`] polls `tasks/get` at the server's poll interval
//! (never faster, backing off while nothing changes; see [`TaskTracker`])
//! and takes status notifications as they come; [`TaskHandle::result`]
//! gives the result. The caller's deadline ([`TaskOptions::deadline`]) and
//! the task's ttl bound the wait; past either the task is cancelled on the
//! server (`tasks/cancel`). [`TaskHandle::era`] says which form a task
//! speaks.
//!
//! | | 2025-11-25 | 2026-07-28 extension |
//! |---|---|---|
//! | who decides | the client asks (`task` member in `tools/call`) | the server, per request, when the client declares the extension ([`ClientBuilder::tasks_extension`](crate::ClientBuilder::tasks_extension), on by default) |
//! | timing fields | `ttl`, `pollInterval` | `ttlMs`, `pollIntervalMs` |
//! | the result | `tasks/result` | inline in `tasks/get` (`result`, or `error` when `failed`) |
//! | the server's requests (`input_required`) | delivered while `tasks/result` waits | `inputRequests` in `tasks/get`; answered with `tasks/update` |
//! | status notifications | `notifications/tasks/status` | `notifications/tasks` on a `subscriptions/listen` stream |
//!
//! Either way, the server's requests reach the
//! [`ClientHandler`](crate::ClientHandler) (elicitation, sampling, roots)
//! like any other. In 2026-07-28 each `inputRequests` key is answered once
//! over the task's life (a server repeats outstanding ones on each poll).
//!
//! A 2026-07-28 handle polls only: it opens no `subscriptions/listen`
//! stream of its own (one long-lived request per task would cost the server
//! more than polling at its own interval). A stream the application opens
//! with [`Client::listen`] naming the task's id feeds the handle's status
//! like the 2025-11-25 notifications do.
//!
//! Dropping a handle does not cancel the task (call now, fetch later):
//! [`TaskHandle::cancel`] does. A handle written down as a
//! [`TaskTicket`](crate::TaskTicket) ([`TaskHandle::ticket`]) is followed
//! again, after a restart too, with [`Client::resume_task`]: the one way
//! back to a task; [`TaskHandle::result`] is the one way to its result.
//! The typed `tasks/*` calls for callers that drive tasks themselves are
//! [`Client::get_task`], [`Client::cancel_task`], [`Client::update_task`]
//! and `client.list_page::<Task>(cursor)` / `list_all::<Task>()`.
//!
//! Plain calls do no work for tasks: a status notification is looked at
//! only while a handle watches, and a handle watches through one
//! [`watch`] slot (the latest status), so a flood of notifications costs no
//! memory. At most [`MAX_WATCHED_TASKS`] handles per connection watch
//! notifications; more handles poll only.

use std::borrow::Cow;
use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use mcp_proto::method::{CallTool, Method};
use mcp_proto::schema::{
    CallToolResult, CancelTaskResult, GetTaskResult, InputResponses, Task, TaskIdParams,
    TaskMetadata, TaskStatus, TaskStatusParams, TaskSupport, UpdateTaskParams,
};
use mcp_proto::{Era, RawJson};
use serde::Serialize;
use tokio::sync::watch;

use super::follow::{CANCEL_ON_DROP_WAIT, created};
use crate::client::request::{decode_tool_result, encode_error, keep_raw};
use crate::client::{Client, RequestBuilder, State, now};
use crate::error::ClientError;
use crate::session::{TaskNext, TaskTracker};

/// How many task handles per connection take status notifications (the
/// others poll only).
pub const MAX_WATCHED_TASKS: usize = 256;

/// The notification that reports a task's status (2025-11-25).
pub(in crate::client) const TASK_STATUS: &str = "notifications/tasks/status";
/// The notification that reports a task's status (2026-07-28 extension).
pub(in crate::client) const TASK_STATUS_MODERN: &str = "notifications/tasks";

/// Called with each new status of a task (on the caller's task, from
/// [`TaskHandle::wait`]).
pub type StatusFn = Arc<dyn Fn(&Task) + Send + Sync>;

/// How to run a call as a task.
#[derive(Clone, Default)]
pub struct TaskOptions {
    ttl: Option<Duration>,
    deadline: Option<Duration>,
    on_status: Option<StatusFn>,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("ttl", &self.ttl)
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl TaskOptions {
    /// Default options: the server's ttl, no deadline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the server to keep the task (and its result) this long after
    /// it is created (the `task.ttl` member, in ms; the server may choose
    /// another). The ttl it chose bounds [`TaskHandle::wait`]. 2025-11-25
    /// only: in 2026-07-28 the server alone sets `ttlMs`.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Gives up on the task this long after the handle learned of it:
    /// `tasks/cancel` is sent and the wait ends with [`ClientError::TaskDeadline`].
    #[must_use]
    pub fn deadline(mut self, after: Duration) -> Self {
        self.deadline = Some(after);
        self
    }

    /// Calls `f` with each new status (status or message changed).
    #[must_use]
    pub fn on_status(mut self, f: impl Fn(&Task) + Send + Sync + 'static) -> Self {
        self.on_status = Some(Arc::new(f));
        self
    }
}

/// What a call made as a task gave back.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskCall {
    /// The server runs the call as a task.
    Started(Box<TaskHandle>),
    /// The server ran the call at once and answered with its result (a
    /// server that does not take this call as a task may).
    Done(CallToolResult),
}

impl TaskCall {
    /// The tool's result: waits for the task if there is one.
    pub async fn result(self) -> Result<CallToolResult, ClientError> {
        match self {
            TaskCall::Started(handle) => (*handle).result().await,
            TaskCall::Done(r) => Ok(r),
        }
    }
}

/// A task the server runs for this client, in either wire form ([`era`](Self::era)),
/// from [`Client::call_tool_as_task`] or [`Client::resume_task`] (its
/// [ticket](Self::ticket)).
///
/// [`wait`](Self::wait) polls `tasks/get` at the server's poll interval
/// (never faster, backing off while nothing changes; see
/// [`TaskTracker`]) and takes status notifications as they come;
/// [`result`](Self::result) then gives the result (2025-11-25: fetched
/// with `tasks/result`; 2026-07-28: inline in the last `tasks/get`).
/// The deadline ([`TaskOptions::deadline`]) and the task's ttl bound the
/// wait; past either the task is cancelled on the server. While the task
/// is `input_required` its requests (elicitation, sampling, roots) reach
/// the [`ClientHandler`](crate::ClientHandler): in 2025-11-25 the handle
/// asks for the result, which is how the server delivers them; in
/// 2026-07-28 it answers the `inputRequests` of `tasks/get` with
/// `tasks/update`, each key once.
///
/// Dropping a handle does not cancel the task (call now, fetch later):
/// [`cancel`](Self::cancel) does. At most [`MAX_WATCHED_TASKS`] handles
/// per connection take status notifications (one slot each, holding the
/// latest: a flood costs no memory); more poll only.
///
/// Calling tools as tasks needs no capability of the client's: the
/// `tasks` capability it declares (2025-11-25; see
/// [`ClientBuilder::max_kept_tasks`](crate::ClientBuilder::max_kept_tasks))
/// is about the other side, the server's requests it runs as tasks.
pub struct TaskHandle {
    pub(in crate::client) client: Client,
    pub(in crate::client) tracker: TaskTracker,
    era: Era,
    /// The deadline the caller set (for [`ClientError::TaskDeadline`]).
    pub(in crate::client) deadline: Option<Duration>,
    status: Option<watch::Receiver<Task>>,
    on_status: Option<StatusFn>,
}

impl std::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle")
            .field("era", &self.era)
            .field("task", self.tracker.task())
            .finish()
    }
}

impl Client {
    /// Whether a call of a tool whose listing says `support` must go as a
    /// task on this connection: `taskSupport: required` on a 2025-11-25
    /// server that takes tool calls as tasks (`tasks.requests.tools.call`).
    /// In 2026-07-28 no call must (tools say nothing of tasks; the server
    /// decides per call, and [`call_tool`](Self::call_tool) follows a task
    /// it answers with). False before the handshake ends.
    ///
    /// [`call_tool`](Self::call_tool)`(..).`[`task_support`](RequestBuilder::task_support)
    /// applies this rule by itself; ask it to choose another path, e.g. a
    /// [`call_tool_as_task`](Self::call_tool_as_task) whose status is shown.
    pub fn must_call_as_task(&self, support: TaskSupport) -> bool {
        support == TaskSupport::Required && self.asks_tool_tasks()
    }

    /// Whether a `tools/call` on this connection carries a task request
    /// (2025-11-25's `task` member): only when the server declared
    /// `tasks.requests.tools.call`. The spec forbids asking a server that
    /// did not, whatever a tool's `taskSupport` says; such a call goes plain.
    pub(in crate::client) fn asks_tool_tasks(&self) -> bool {
        self.server()
            .is_some_and(|s| s.protocol_version.era() == Era::Legacy && s.capabilities.tool_tasks())
    }

    /// `tools/call` as a task: the server answers at once with a task
    /// ([`TaskCall::Started`]), or, if it does not run this call as a task,
    /// with the result ([`TaskCall::Done`]). In 2025-11-25 the request
    /// carries the `task` member (with [`TaskOptions::ttl`]) when the server
    /// takes tool calls as tasks (`tasks.requests.tools.call`; without it
    /// the call goes plain, as the spec asks, and ends `Done`); in 2026-07-28
    /// the server decides (the client declares the tasks extension unless
    /// [`ClientBuilder::tasks_extension`](crate::ClientBuilder::tasks_extension)
    /// turned it off, and then never gets a task).
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use std::time::Duration;
    /// use mcp_client::TaskOptions;
    ///
    /// let options = TaskOptions::new()
    ///     .deadline(Duration::from_secs(600))
    ///     .on_status(|t| eprintln!("{:?} {}", t.status, t.status_message.as_deref().unwrap_or("")));
    /// let call = client
    ///     .call_tool_as_task("simulate-research-query", serde_json::json!({"topic": "rust"}), options)
    ///     .await?;
    /// let result = call.result().await?;
    /// # let _ = result; Ok(()) }
    /// ```
    pub async fn call_tool_as_task<A: Serialize + Send>(
        &self,
        name: impl Into<Cow<'_, str>>,
        arguments: A,
        options: TaskOptions,
    ) -> Result<TaskCall, ClientError> {
        #[derive(Serialize)]
        struct CallParams<'a, A> {
            name: Cow<'a, str>,
            arguments: A,
            #[serde(skip_serializing_if = "Option::is_none")]
            task: Option<TaskMetadata>,
        }
        // The era decides the request's shape: wait for the handshake.
        self.wait_ready().await?;
        let modern = self.era() == Some(Era::Modern);
        let ask = self.asks_tool_tasks();
        let ttl = options
            .ttl
            .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        let params = CallParams {
            name: name.into(),
            arguments,
            task: ask.then(|| TaskMetadata::new(ttl)),
        };
        let mut builder: RequestBuilder<'_, RawJson> = self.request_sized(CallTool::NAME, params);
        builder.decode = keep_raw;
        let raw = builder.await?;
        let era = if modern { Era::Modern } else { Era::Legacy };
        let (task, era) = match created(&raw, era)? {
            None => return decode_tool_result(CallTool::NAME, raw).map(TaskCall::Done),
            Some(created) => created,
        };
        TaskHandle::new(self.clone(), task, era, options).map(|h| TaskCall::Started(Box::new(h)))
    }

    /// `tasks/get`: a task's current state.
    pub fn get_task(&self, task_id: impl Into<String>) -> RequestBuilder<'_, GetTaskResult> {
        self.request_typed("tasks/get", &TaskIdParams::new(task_id))
    }

    /// `tasks/cancel`.
    pub fn cancel_task(&self, task_id: impl Into<String>) -> RequestBuilder<'_, CancelTaskResult> {
        self.request_typed("tasks/cancel", &TaskIdParams::new(task_id))
    }

    /// `tasks/update` (2026-07-28 extension): answers to an `input_required`
    /// task's `inputRequests`, by key. The server acknowledges with an empty
    /// result and takes the answers eventually (poll `tasks/get` to see it).
    /// A [`TaskHandle`] sends this itself with the handler's answers.
    pub fn update_task(
        &self,
        task_id: impl Into<String>,
        responses: InputResponses,
    ) -> RequestBuilder<'_, mcp_proto::schema::EmptyResult> {
        self.request_typed("tasks/update", &UpdateTaskParams::new(task_id, responses))
    }
}

impl TaskHandle {
    pub(super) fn new(
        client: Client,
        task: Task,
        era: Era,
        options: TaskOptions,
    ) -> Result<Self, ClientError> {
        let start = now();
        let deadline = options.deadline.and_then(|d| start.checked_add(d));
        let tracker =
            TaskTracker::for_era(task, era, start, deadline).map_err(ClientError::TaskReport)?;
        let status = client
            .inner()
            .update(|st| (watch_task(st, tracker.task()), false));
        Ok(TaskHandle {
            client,
            tracker,
            era,
            deadline: options.deadline,
            status,
            on_status: options.on_status,
        })
    }

    /// The task id.
    pub fn id(&self) -> &str {
        self.tracker.id()
    }

    /// The wire form the task speaks: [`Era::Legacy`] for the 2025-11-25
    /// core tasks, [`Era::Modern`] for the 2026-07-28 extension. A task is
    /// followed only on a connection of its era.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The latest state the server reported (from a poll or a notification).
    pub fn task(&self) -> &Task {
        self.tracker.task()
    }

    /// The latest status.
    pub fn status(&self) -> TaskStatus {
        self.tracker.task().status.clone()
    }

    /// The interval the next poll waits (the server's `pollInterval`, or
    /// longer after polls without change).
    pub fn poll_interval(&self) -> Duration {
        self.tracker.interval()
    }

    /// The task's ttl, as the server set it (`None`: unlimited or not said).
    pub fn ttl(&self) -> Option<Duration> {
        self.tracker.task().ttl_millis().map(Duration::from_millis)
    }

    /// Asks the server for the task's state now (`tasks/get`), whatever the
    /// poll interval (for callers that poll themselves).
    pub async fn refresh(&mut self) -> Result<&Task, ClientError> {
        let got = self.client.get_task(self.id()).await?;
        let changed = self
            .tracker
            .polled(got.task, now())
            .map_err(ClientError::TaskReport)?;
        if changed {
            self.tell();
        }
        Ok(self.tracker.task())
    }

    /// Waits until the task finishes; returns its final status. While it
    /// is `input_required`, the server's requests reach the handler (see
    /// the [type docs](Self)). Past the deadline the task is cancelled on
    /// the server ([`ClientError::TaskDeadline`]); past its ttl too
    /// ([`ClientError::TaskExpired`]).
    pub async fn wait(&mut self) -> Result<TaskStatus, ClientError> {
        match self.run(false).await? {
            Finished::Status(s) => Ok(s),
            Finished::Result(_) => Ok(self.status()),
        }
    }

    /// Waits for the task and gives its result (2025-11-25: fetched with
    /// `tasks/result`; 2026-07-28: the `result` of the last `tasks/get`). A
    /// task that ended `failed` gives the JSON-RPC error as
    /// [`ClientError::Rpc`] (2025-11-25: or the `CallToolResult` with
    /// `is_error` the server holds for it); one that ended `cancelled`,
    /// [`ClientError::TaskCancelled`]; a 2026-07-28 task that reported its
    /// end without the outcome, [`ClientError::TaskReport`].
    pub async fn result(self) -> Result<CallToolResult, ClientError> {
        let raw = self.result_raw().await?;
        decode_tool_result("tasks/result", raw)
    }

    /// [`result`](Self::result), undecoded.
    pub(super) async fn result_raw(mut self) -> Result<RawJson, ClientError> {
        let raw = match self.run(true).await? {
            Finished::Result(raw) => raw,
            Finished::Status(TaskStatus::Cancelled) => {
                return Err(ClientError::TaskCancelled {
                    task_id: self.id().to_owned(),
                });
            }
            Finished::Status(_) if self.era == Era::Modern => self.outcome()?,
            Finished::Status(_) => self.fetch_result().await?,
        };
        Ok(raw)
    }

    /// A finished 2026-07-28 task's outcome, inline in its last report (the
    /// tracker refused a terminal report without it).
    fn outcome(&self) -> Result<RawJson, ClientError> {
        let task = self.tracker.task();
        if let Some(error) = &task.error {
            return Err(ClientError::Rpc(error.clone()));
        }
        match &task.result {
            Some(result) => RawJson::from_value(result).map_err(|e| encode_error("tasks/get", e)),
            None => Err(ClientError::TaskReport(
                crate::session::TaskReportError::NoOutcome {
                    task_id: self.id().to_owned(),
                    status: task.status.clone(),
                },
            )),
        }
    }

    /// Cancels the task on the server (`tasks/cancel`).
    pub async fn cancel(self) -> Result<CancelTaskResult, ClientError> {
        self.client.cancel_task(self.id()).await
    }

    /// The wait loop. With `want_result`, a `tasks/result` made for an
    /// `input_required` spell that returns the final result ends it.
    async fn run(&mut self, want_result: bool) -> Result<Finished, ClientError> {
        loop {
            self.take_notified()?;
            match self.tracker.next(now()) {
                TaskNext::Finished(s) => return Ok(Finished::Status(s)),
                TaskNext::DeadlinePassed => {
                    self.send_cancel("the deadline").await;
                    return Err(ClientError::TaskDeadline {
                        task_id: self.id().to_owned(),
                        after: self.deadline.unwrap_or_default(),
                    });
                }
                TaskNext::Expired => {
                    // The server may have dropped it already; if not, it
                    // stops working for a client that no longer waits.
                    self.send_cancel("the ttl").await;
                    return Err(ClientError::TaskExpired {
                        task_id: self.id().to_owned(),
                        ttl: self.ttl().unwrap_or_default(),
                    });
                }
                TaskNext::AnswerInput => self.answer_input().await?,
                TaskNext::WaitUntil(at) => self.sleep_or_status(at).await?,
                TaskNext::Poll => {
                    let timeout = self.bound();
                    let mut get = self.client.get_task(self.id());
                    if let Some(t) = timeout {
                        get = get.timeout(t).max_time(t);
                    }
                    let got = match get.await {
                        Ok(got) => got,
                        // The deadline ran out during the poll.
                        Err(e) if e.is_timeout() && self.tracker.deadline().is_some() => continue,
                        Err(e) => return Err(e),
                    };
                    if self
                        .tracker
                        .polled(got.task, now())
                        .map_err(ClientError::TaskReport)?
                    {
                        self.tell();
                    }
                }
                TaskNext::FetchInput => {
                    // The server delivers its requests for the task as
                    // answers to this call, and answers it when the task ends.
                    match self.fetch_result().await {
                        Ok(raw) => {
                            if want_result {
                                return Ok(Finished::Result(raw));
                            }
                            self.tracker.input_fetched(now());
                        }
                        Err(e) if e.rpc().is_some() => {
                            // Answered before the task ended: poll on.
                            tracing::debug!(task = self.id(), error = %e, "tasks/result before the task ended");
                            self.tracker.input_fetched(now());
                        }
                        Err(e) if e.is_timeout() => self.tracker.input_fetched(now()),
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// `tasks/result` (2025-11-25), bounded by the deadline or the ttl.
    async fn fetch_result(&self) -> Result<RawJson, ClientError> {
        let mut req: RequestBuilder<'_, RawJson> = self
            .client
            .request_typed("tasks/result", &TaskIdParams::new(self.id()));
        req.decode = keep_raw;
        req = match self.bound() {
            Some(t) => req.timeout(t).max_time(t),
            None => req.no_timeout(),
        };
        req.await
    }

    /// The time left before the deadline or the expiry, whichever is first.
    fn bound(&self) -> Option<Duration> {
        let t = now();
        [self.tracker.deadline(), self.tracker.expires()]
            .into_iter()
            .flatten()
            .min()
            .map(|end| {
                end.saturating_duration_since(t)
                    .max(Duration::from_millis(1))
            })
    }

    /// The deadline or the ttl passed: cancels the task on the server
    /// (bounded by [`CANCEL_ON_DROP_WAIT`]).
    async fn send_cancel(&self, why: &str) {
        let cancel = self
            .client
            .cancel_task(self.id())
            .timeout(CANCEL_ON_DROP_WAIT)
            .max_time(CANCEL_ON_DROP_WAIT);
        if let Err(e) = cancel.await {
            tracing::warn!(task = self.id(), error = %e, "tasks/cancel after {why} failed");
        }
    }

    /// Answers the task's input requests not answered before (2026-07-28):
    /// the handler answers them (bounded by the deadline and the ttl), and
    /// `tasks/update` carries the answers. A request the handler refuses is
    /// left unanswered (and not asked again): the task stays
    /// `input_required` until the deadline or the ttl ends the wait.
    async fn answer_input(&mut self) -> Result<(), ClientError> {
        let requests = self
            .tracker
            .take_input_requests()
            .map_err(ClientError::TaskReport)?;
        // The next poll comes an interval after this round.
        self.tracker.input_fetched(now());
        if requests.is_empty() {
            return Ok(());
        }
        let inner = self.client.inner();
        let work = crate::client::handler_tasks::answer_inputs(
            inner.handler.clone(),
            inner.capabilities.clone(),
            requests,
        );
        let responses = match self.bound() {
            Some(t) => match tokio::time::timeout(t, work).await {
                Ok(r) => r,
                // The loop finds the deadline (or the ttl) passed.
                Err(_) => return Ok(()),
            },
            None => work.await,
        };
        if responses.is_empty() {
            return Ok(());
        }
        let mut update = self.client.update_task(self.id(), responses);
        if let Some(t) = self.bound() {
            update = update.timeout(t).max_time(t);
        }
        match update.await {
            Ok(_) => {}
            Err(e) if e.is_timeout() => {}
            Err(e) => return Err(e),
        }
        self.tracker.input_fetched(now());
        Ok(())
    }

    /// Takes the latest status notification, if one came since the last look.
    fn take_notified(&mut self) -> Result<(), ClientError> {
        let Some(rx) = &mut self.status else {
            return Ok(());
        };
        if !rx.has_changed().unwrap_or(false) {
            return Ok(());
        }
        let task = rx.borrow_and_update().clone();
        self.notified(task)
    }

    fn notified(&mut self, task: Task) -> Result<(), ClientError> {
        if self.tracker.report(task).map_err(ClientError::TaskReport)? {
            self.tell();
        }
        Ok(())
    }

    fn tell(&self) {
        if let Some(f) = &self.on_status {
            crate::client::handler_tasks::run_guarded("a task status callback", || {
                f(self.tracker.task())
            });
        }
    }

    /// Sleeps until `at`, or until a status notification arrives (which it
    /// takes: `changed()` marks it seen).
    async fn sleep_or_status(&mut self, at: std::time::Instant) -> Result<(), ClientError> {
        let mut sleep = pin!(tokio::time::sleep_until(tokio::time::Instant::from_std(at)));
        let woke = match &mut self.status {
            None => {
                sleep.await;
                return Ok(());
            }
            Some(rx) => {
                let woke = {
                    let mut changed = pin!(rx.changed());
                    poll_fn(|cx| {
                        if sleep.as_mut().poll(cx).is_ready() {
                            return Poll::Ready(Wake::Timer);
                        }
                        match changed.as_mut().poll(cx) {
                            Poll::Ready(Ok(())) => Poll::Ready(Wake::Status),
                            Poll::Ready(Err(_)) => Poll::Ready(Wake::Gone),
                            Poll::Pending => Poll::Pending,
                        }
                    })
                    .await
                };
                match woke {
                    Wake::Status => Some(rx.borrow_and_update().clone()),
                    Wake::Gone => {
                        // The connection stopped watching (it closed): poll only.
                        self.status = None;
                        None
                    }
                    Wake::Timer => None,
                }
            }
        };
        match woke {
            Some(task) => self.notified(task),
            None => Ok(()),
        }
    }
}

enum Wake {
    Timer,
    Status,
    Gone,
}

enum Finished {
    Status(TaskStatus),
    /// `tasks/result` answered during `input_required`: the final result.
    Result(RawJson),
}

impl Drop for TaskHandle {
    fn drop(&mut self) {
        if self.status.take().is_none() {
            return;
        }
        let id = self.tracker.id();
        self.client.inner().update(|st| {
            if st
                .task_watch
                .get(id)
                .is_some_and(|tx| tx.receiver_count() == 0)
            {
                st.task_watch.remove(id);
            }
            ((), false)
        });
    }
}

/// A receiver of `task`'s status notifications, if fewer than
/// [`MAX_WATCHED_TASKS`] are watched (or this one is already).
fn watch_task(st: &mut State, task: &Task) -> Option<watch::Receiver<Task>> {
    if let Some(tx) = st.task_watch.get(&task.task_id) {
        return Some(tx.subscribe());
    }
    if st.task_watch.len() >= MAX_WATCHED_TASKS {
        // Slots no receiver holds any more (handles drop theirs, but a
        // receiver may outlive its handle's bookkeeping) make room first.
        st.task_watch.retain(|_, tx| tx.receiver_count() > 0);
        if st.task_watch.len() >= MAX_WATCHED_TASKS {
            return None;
        }
    }
    let (tx, rx) = watch::channel(task.clone());
    st.task_watch.insert(task.task_id.clone(), tx);
    Some(rx)
}

/// A `notifications/tasks/status` for a watched task: replaces its slot.
pub(in crate::client) fn on_status_notification(st: &mut State, params: Option<&RawJson>) {
    let Some(p) = params.and_then(|p| p.decode::<TaskStatusParams>().ok()) else {
        return;
    };
    if let Some(tx) = st.task_watch.get(&p.task.task_id) {
        tx.send_replace(p.task);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn task(id: &str, status: &str) -> Task {
        serde_json::from_value(serde_json::json!({
            "taskId": id, "status": status,
            "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z",
        }))
        .unwrap()
    }

    /// Status notifications never grow the connection's memory: only
    /// watched tasks have a slot, at most MAX_WATCHED_TASKS of them, each
    /// holding the latest status; a slot goes with its last handle.
    #[tokio::test]
    async fn watched_tasks_are_bounded_and_notifications_for_others_keep_nothing() {
        let (transport, _server) = mcp_proto::transport::channel::pair();
        let (client, _driver) = Client::builder("t", "1").build(transport);
        let inner = client.inner();
        let mut st = inner.lock();
        let mut receivers = Vec::new();
        for i in 0..MAX_WATCHED_TASKS + 10 {
            receivers.push(watch_task(&mut st, &task(&format!("t{i}"), "working")));
        }
        assert_eq!(st.task_watch.len(), MAX_WATCHED_TASKS);
        assert!(receivers[MAX_WATCHED_TASKS].is_none());
        // A second handle on a watched task shares its slot.
        let again = watch_task(&mut st, &task("t0", "working")).unwrap();
        assert_eq!(st.task_watch.len(), MAX_WATCHED_TASKS);
        for i in 0..10_000 {
            let p = RawJson::from_value(&task(&format!("other-{i}"), "working")).unwrap();
            on_status_notification(&mut st, Some(&p));
        }
        assert_eq!(st.task_watch.len(), MAX_WATCHED_TASKS);
        for m in ["a", "b", "c"] {
            let mut t = task("t0", "working");
            t.status_message = Some(m.into());
            on_status_notification(&mut st, Some(&RawJson::from_value(&t).unwrap()));
        }
        assert_eq!(again.borrow().status_message.as_deref(), Some("c"));
        // Garbage is ignored.
        on_status_notification(&mut st, Some(&RawJson::from_value(&"x").unwrap()));
        on_status_notification(&mut st, None);
        drop(st);
        // The slot goes with its last handle.
        let handle = TaskHandle::new(
            client.clone(),
            task("solo", "working"),
            Era::Legacy,
            TaskOptions::new(),
        );
        // At the cap: this one polls only.
        assert!(handle.unwrap().status.is_none());
        receivers.clear();
        drop(again);
        let handle = TaskHandle::new(
            client.clone(),
            task("solo", "working"),
            Era::Legacy,
            TaskOptions::new(),
        )
        .unwrap();
        assert!(handle.status.is_some());
        assert!(inner.lock().task_watch.contains_key("solo"));
        drop(handle);
        assert!(!inner.lock().task_watch.contains_key("solo"));
    }
}
