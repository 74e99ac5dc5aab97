//! The tokio tasks that run the application's handler: those that answer
//! the server's requests and `input_required` rounds (and the work of MCP
//! tasks the server asked the client to run, for [`mcp_task::receiver`](super::mcp_task::receiver)),
//! and the one that hands it notifications. The driver owns all of them.
//!
//! - A task answering a server request is aborted when the server cancels
//!   that request (`notifications/cancelled`) and when the connection
//!   closes; its answer then is never sent.
//! - A handler that panics is caught at the task's edge: the server's
//!   request gets an internal-error answer, an input request gets none
//!   (the call is retried without it, as when the handler refuses), and
//!   every count stays right because the session counts answers, not tasks.
//! - The notification task takes the handler one notification at a time,
//!   from a queue of at most [`MAX_QUEUED_NOTIFICATIONS`]; when it is full
//!   the driver stops reading from the server. The task ends by itself
//!   once it has handed over what was queued before the connection ended.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use mcp_proto::jsonrpc::{Notification, Request, RequestId};
use mcp_proto::schema::{ClientCapabilities, InputRequest, InputResponses};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use crate::handler::{BoxFuture, DynHandler};
use crate::session::{CallId, IdHash};

/// How many notifications may wait for the handler before the driver stops
/// reading from the server (backpressure: a server that floods
/// notifications faster than the handler takes them is slowed down, not
/// buffered without bound, and nothing is dropped).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 1024;

/// The notification channel's length: the driver stops reading at
/// [`MAX_QUEUED_NOTIFICATIONS`], and the message it read last may queue one
/// more.
const NOTIFICATION_CHANNEL: usize = MAX_QUEUED_NOTIFICATIONS + 1;

/// What a finished handler task hands back to the driver.
pub(super) enum Done {
    /// The answer to the server's request `id`.
    Answer {
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    },
    /// The answers to an `input_required` round of `call`.
    Input {
        call: CallId,
        responses: InputResponses,
    },
    /// The handler answered the request behind MCP task `task` (kept for
    /// the server by the driver's task receiver).
    TaskFinished {
        task: String,
        result: Result<RawJson, ErrorObject>,
    },
    /// MCP task `task` reached its ttl.
    TaskExpired { task: String },
}

/// The handler and the tokio tasks running it.
pub(super) struct HandlerTasks {
    handler: Arc<dyn DynHandler>,
    /// What the client advertised (requests outside it are refused without
    /// calling the handler).
    capabilities: Arc<ClientCapabilities>,
    /// Made with the first task (most connections never run one: a
    /// `JoinSet` allocates when made).
    running: Option<JoinSet<Done>>,
    /// The task answering each of the server's requests.
    answering: HashMap<RequestId, AbortHandle, IdHash>,
    /// The notification task's queue and its count, made with the first
    /// notification (most connections never get one).
    ///
    /// The driver reads the transport only while [`Backlog::has_room`] (fewer
    /// than [`MAX_QUEUED_NOTIFICATIONS`] queued), one message at a time, and
    /// one message queues at most one item (JSON-RPC batches are refused when
    /// decoded): so the channel, [`NOTIFICATION_CHANNEL`] long, always has
    /// room when an item is queued.
    notifications: Option<(mpsc::Sender<ToHandler>, Arc<Backlog>)>,
}

impl HandlerTasks {
    pub(super) fn new(handler: Arc<dyn DynHandler>, capabilities: Arc<ClientCapabilities>) -> Self {
        HandlerTasks {
            handler,
            capabilities,
            running: None,
            answering: HashMap::default(),
            notifications: None,
        }
    }

    /// What the client advertised.
    pub(super) fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// Starts answering the server's request `req`: the handler's answer
    /// goes out when its task is done (see [`poll_done`](Self::poll_done)).
    pub(super) fn answer(&mut self, req: Request) {
        let Some(runtime) = runtime() else {
            return;
        };
        let method = req.method.into_owned();
        let id = req.id;
        // The server's request is a SERVER span of the client's (the
        // conventions), a child of the server's span when it sent its
        // trace context; the handler runs inside it.
        let span = crate::telemetry::server_request_span(&method, &id, req.params.as_ref());
        let work =
            self.handler
                .clone()
                .answer(self.capabilities.clone(), method.clone(), req.params);
        let task_id = id.clone();
        let abort = self.running().spawn_on(
            tracing::Instrument::instrument(
                async move {
                    let result = handler_answer(work, &method).await;
                    Done::Answer {
                        id: task_id,
                        result,
                    }
                },
                span,
            ),
            &runtime,
        );
        self.answering.insert(id, abort);
    }

    /// Runs the server's request `method` as the work of MCP task `task`:
    /// the handler runs as for a plain request, and its outcome comes back
    /// as [`Done::TaskFinished`]; after `ttl`, [`Done::TaskExpired`]. The
    /// abort handles of the work and of its timer; `None` without a runtime
    /// (the client is shutting down).
    pub(super) fn start_task_work(
        &mut self,
        task: &str,
        method: String,
        params: Option<RawJson>,
        ttl: std::time::Duration,
    ) -> Option<(AbortHandle, AbortHandle)> {
        let runtime = runtime()?;
        let span = crate::telemetry::server_request_span(
            &method,
            &RequestId::String(task.to_owned().into()),
            params.as_ref(),
        );
        let work = self
            .handler
            .clone()
            .answer(self.capabilities.clone(), method.clone(), params);
        let task_id = task.to_owned();
        let work = self.running().spawn_on(
            tracing::Instrument::instrument(
                async move {
                    let result = handler_answer(work, &method).await;
                    Done::TaskFinished {
                        task: task_id,
                        result,
                    }
                },
                span,
            ),
            &runtime,
        );
        let task_id = task.to_owned();
        let expiry = self.running().spawn_on(
            async move {
                tokio::time::sleep(ttl).await;
                Done::TaskExpired { task: task_id }
            },
            &runtime,
        );
        Some((work, expiry))
    }

    /// The server cancelled its request `id`: its task stops. Whether a
    /// task was answering it.
    pub(super) fn cancel(&mut self, id: &RequestId) -> bool {
        match self.answering.remove(id) {
            Some(task) => {
                task.abort();
                true
            }
            None => false,
        }
    }

    /// Starts answering the input requests of an `input_required` round.
    pub(super) fn input(&mut self, call: CallId, requests: Vec<(String, InputRequest)>) {
        let Some(runtime) = runtime() else {
            return;
        };
        let work = answer_inputs(self.handler.clone(), self.capabilities.clone(), requests);
        self.running().spawn_on(
            async move {
                let responses = work.await;
                Done::Input { call, responses }
            },
            &runtime,
        );
    }

    /// The next finished task's result; `Pending` (with the waker kept)
    /// while tasks run, `Ready(None)` when none is running.
    pub(super) fn poll_done(&mut self, cx: &mut Context<'_>) -> Poll<Option<Done>> {
        let Some(running) = self.running.as_mut().filter(|r| !r.is_empty()) else {
            return Poll::Ready(None);
        };
        loop {
            match running.poll_join_next(cx) {
                Poll::Ready(Some(Ok(done))) => {
                    if let Done::Answer { id, .. } = &done {
                        self.answering.remove(id);
                    }
                    return Poll::Ready(Some(done));
                }
                // Aborted (the server cancelled it): nothing to hand back.
                // Panics are caught inside the task, so this is the only error.
                Poll::Ready(Some(Err(_))) => continue,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Queues a notification for the handler (starting its task with the first).
    pub(super) fn notify(&mut self, n: Notification) {
        self.queue_for_handler(ToHandler::Notification(n));
    }

    /// Tells the handler of a request of the server's the session refused
    /// (it could not be read), in order with the notifications.
    pub(super) fn refused(&mut self, error: ErrorObject) {
        self.queue_for_handler(ToHandler::Refused(error));
    }

    fn queue_for_handler(&mut self, n: ToHandler) {
        let (tx, backlog) = match &self.notifications {
            Some(queue) => queue,
            None => {
                let Some(runtime) = runtime() else {
                    return;
                };
                let (tx, rx) = mpsc::channel(NOTIFICATION_CHANNEL);
                let backlog = Arc::new(Backlog::default());
                runtime.spawn(notification_loop(rx, self.handler.clone(), backlog.clone()));
                self.notifications.insert((tx, backlog))
            }
        };
        match tx.try_send(n) {
            Ok(()) => backlog.push(),
            // The handler's task has ended (the runtime is shutting down).
            Err(mpsc::error::TrySendError::Closed(_)) => {}
            // Not while the invariant above holds.
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::error!(
                    "the handler's notification queue was full; a notification was dropped (a bug: please report it)"
                );
            }
        }
    }

    /// Whether the handler takes more notifications now; if not, the task is
    /// woken when it does.
    #[inline(always)]
    pub(super) fn has_room(&self, cx: &Context<'_>) -> bool {
        match &self.notifications {
            None => true,
            Some((_, backlog)) => backlog.has_room(cx),
        }
    }

    /// Whether no task is running (nothing to collect).
    #[inline]
    pub(super) fn is_idle(&self) -> bool {
        self.running.as_ref().is_none_or(JoinSet::is_empty)
    }

    /// The set the handler's tasks run in, made on first use.
    fn running(&mut self) -> &mut JoinSet<Done> {
        self.running.get_or_insert_with(JoinSet::new)
    }

    /// Ends every task answering the server (their answers are not sent)
    /// and lets the notification task end once it has handed over what is
    /// queued.
    pub(super) fn shutdown(&mut self) {
        if let Some(running) = &mut self.running {
            running.abort_all();
        }
        self.answering.clear();
        self.notifications = None;
    }
}

/// The handler's answers to input requests (an `input_required` round of
/// a call, or of a 2026-07-28 task), one at a time in key order. A request
/// the handler refuses (or panics on) is left out, and the server sees it
/// unanswered. What the client did not declare is refused without calling
/// the handler.
pub(super) async fn answer_inputs(
    handler: Arc<dyn DynHandler>,
    caps: Arc<ClientCapabilities>,
    requests: Vec<(String, InputRequest)>,
) -> InputResponses {
    let mut responses = InputResponses::new();
    for (key, req) in requests {
        let method = req.method.clone();
        let work = handler.clone().answer(caps.clone(), req.method, req.params);
        let why = match CatchUnwind(work).await {
            Ok(Ok(v)) => {
                responses.insert(key, v);
                continue;
            }
            Ok(Err(e)) => e,
            Err(panic) => panicked(&method, &*panic),
        };
        tracing::warn!(%method, error = %why, "could not answer an input request; leaving it unanswered");
    }
    responses
}

/// The runtime to spawn on: the driver's (it runs inside one; a driver
/// dropped outside one spawns nothing).
fn runtime() -> Option<tokio::runtime::Handle> {
    tokio::runtime::Handle::try_current().ok()
}

/// Counts notifications queued for the handler and wakes the driver when
/// the queue drains below [`MAX_QUEUED_NOTIFICATIONS`].
#[derive(Default)]
struct Backlog {
    queued: AtomicUsize,
    waker: std::sync::Mutex<Option<std::task::Waker>>,
}

impl Backlog {
    fn push(&self) {
        self.queued.fetch_add(1, Ordering::AcqRel);
    }

    fn pop(&self) {
        if self.queued.fetch_sub(1, Ordering::AcqRel) == MAX_QUEUED_NOTIFICATIONS {
            if let Some(w) = self.waker.lock().ok().and_then(|mut g| g.take()) {
                w.wake();
            }
        }
    }

    #[inline]
    fn has_room(&self, cx: &Context<'_>) -> bool {
        if self.queued.load(Ordering::Acquire) < MAX_QUEUED_NOTIFICATIONS {
            return true;
        }
        if let Ok(mut g) = self.waker.lock() {
            *g = Some(cx.waker().clone());
        }
        // Re-checked: the handler may have drained in between.
        self.queued.load(Ordering::Acquire) < MAX_QUEUED_NOTIFICATIONS
    }
}

/// What the notification task hands the handler, in the order it arrived.
enum ToHandler {
    Notification(Notification),
    /// A request of the server's the session refused ([`ClientHandler::on_refused_request`](crate::ClientHandler::on_refused_request)).
    Refused(ErrorObject),
}

async fn notification_loop(
    mut rx: mpsc::Receiver<ToHandler>,
    handler: Arc<dyn DynHandler>,
    backlog: Arc<Backlog>,
) {
    while let Some(n) = rx.recv().await {
        let (method, result) = match n {
            ToHandler::Notification(n) => {
                let method = n.method.clone();
                let h = &handler;
                (
                    method,
                    std::panic::catch_unwind(AssertUnwindSafe(|| h.notify(n))),
                )
            }
            ToHandler::Refused(e) => {
                let h = &handler;
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| h.refused(None, &e)));
                ("(a refused request)".into(), r)
            }
        };
        if let Err(panic) = result {
            tracing::error!(%method, panic = panic_text(&*panic), "the client handler panicked on a notification");
        }
        backlog.pop();
    }
}

/// Runs `f` (application code), logging a panic instead of unwinding into
/// the driver.
pub(super) fn run_guarded(what: &str, f: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(f)) {
        tracing::error!(
            what,
            panic = panic_text(&*panic),
            "application code panicked"
        );
    }
}

/// The handler's answer to the server's `method` (a plain request or a
/// task), as the JSON to send: a panic or an answer that does not encode
/// is an internal error, and a failure is recorded on the current span.
async fn handler_answer(
    work: BoxFuture<Result<serde_json::Value, ErrorObject>>,
    method: &str,
) -> Result<RawJson, ErrorObject> {
    let result = match CatchUnwind(work).await {
        Ok(answer) => answer.and_then(|v| {
            RawJson::from_value(&v).map_err(|e| {
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("could not encode the answer: {e}"),
                )
            })
        }),
        Err(panic) => Err(panicked(method, &*panic)),
    };
    if let Err(e) = &result {
        crate::telemetry::server_request_failed(e);
    }
    result
}

/// A handler's future, with a panic turned into a value.
struct CatchUnwind<T>(BoxFuture<T>);

impl<T> Future for CatchUnwind<T> {
    type Output = Result<T, Box<dyn Any + Send>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn panicked(method: &str, panic: &(dyn Any + Send)) -> ErrorObject {
    tracing::error!(%method, panic = panic_text(panic), "the client handler panicked");
    ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!("the client failed while answering {method}"),
    )
}

fn panic_text(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)")
}
