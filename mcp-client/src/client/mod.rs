//! The async side: a cloneable [`Client`] handle and the [`Driver`] task
//! that alone does the connection's IO.
//!
//! # Who does what
//!
//! The shape is quinn's: handles change state and wake the driver; the
//! driver alone touches the transport.
//!
//! - A **caller** locks the connection's [`State`], hands its request to the
//!   [`Session`] (which queues the message), registers a waiter for the
//!   answer, takes the driver's waker, unlocks and wakes it. It never polls
//!   the transport.
//! - The **driver** ([`Driver`], one task per connection) locks the same
//!   state, reads what the transport received into the session, writes what
//!   the session queued, runs the timer, completes waiters, and hands server
//!   requests and notifications to the application's handler on tasks it
//!   owns. The transport is a field of the driver, not of the shared state,
//!   so nothing else can reach it.
//!
//! The lock is never held across an `.await` or while application code
//! runs (handlers, progress callbacks).
//!
//! # Limits (every queue has one)
//!
//! The crate docs' [table of bounds](crate#bounds) is the one list: each
//! queue, its limit, and what happens when it is full.
//!
//! # Modules
//!
//! - [`builder`]: [`ClientBuilder`], which configures and splits into a
//!   [`Client`] and its [`Driver`].
//! - [`handle`]: the [`Client`] handle.
//! - [`methods`]: the typed MCP calls (tools, resources, prompts, lists).
//! - [`request`]: [`RequestBuilder`] and the [`ResponseFuture`] it sends.
//! - [`driver`]: the [`Driver`] task: transport IO, timer, shutdown.
//! - [`dispatch`]: what the driver does with the session's events.
//! - [`handler_tasks`]: the tokio tasks that run the application's
//!   handler, owned by the driver.
//! - [`mcp_task`]: MCP tasks, both sides: tools called as tasks
//!   ([`TaskHandle`], durable [tickets](crate::TaskTicket)) and the tasks the
//!   server asked the client to run, kept by the driver for its `tasks/*`
//!   requests.
//! - `skills` (feature `skills`): the Skills extension (SEP-2640).

mod builder;
mod dispatch;
mod driver;
mod handle;
mod handler_tasks;
mod mcp_task;
mod methods;
mod request;
#[cfg(feature = "skills")]
pub(crate) mod skills;

pub use builder::{ClientBuilder, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_LIST_PAGES};
pub use driver::Driver;
pub use handle::Client;
pub use handler_tasks::MAX_QUEUED_NOTIFICATIONS;
pub use mcp_task::receiver::{
    DEFAULT_MAX_KEPT_TASKS, DEFAULT_MAX_TASK_TTL, TASK_LIST_PAGE_SIZE, TASK_POLL_INTERVAL_MS,
};
pub use mcp_task::requester::{MAX_WATCHED_TASKS, StatusFn, TaskCall, TaskHandle, TaskOptions};
pub use request::{RequestBuilder, ResponseFuture};

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::Waker;

use mcp_proto::RawJson;
use mcp_proto::schema::ProgressParams;
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot, watch};

use crate::error::{ClientError, CloseReason};
use crate::handler::ListKind;
use crate::session::{CallId, IdHash, Session};

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(ProgressParams) + Send + Sync>;

/// What the driver hands a waiting call. No larger than a result: it is
/// written into the call's [`Waiter`] on the way of every call.
enum Answer {
    /// The call's result.
    Done(RawJson),
    /// Why the call failed (boxed: an error is larger than a result, and
    /// rarer).
    Failed(Box<ClientError>),
    /// A `tools/call` answered with a 2026-07-28 task handle: a
    /// [`Client::call_tool`] future follows the task (with the call's
    /// progress callback, taken with its waiter); any other request takes
    /// the handle as its result.
    Task(RawJson),
}

impl Answer {
    /// A call's result or error, as the session gives it.
    #[inline]
    fn of(result: Result<RawJson, ClientError>) -> Self {
        match result {
            Ok(raw) => Answer::Done(raw),
            Err(e) => Answer::Failed(Box::new(e)),
        }
    }
}

/// What a connection's callers and its driver share.
struct Inner {
    state: Mutex<State>,
    /// Calls in flight: a call holds a permit from when it is handed to the
    /// session until its waiter is gone (answered, failed or cancelled).
    slots: Arc<Semaphore>,
    max_in_flight: usize,
    /// Woken when the session closes (see [`Client::closed`]).
    closed: Notify,
    /// Made by the first subscriber or the first change, whichever comes
    /// first (most connections never use all three).
    changes: [OnceLock<watch::Sender<u64>>; 3],
    max_list_pages: usize,
    /// Length of the last params encoded: the next ones are encoded into a
    /// buffer of about this size, so equal calls never regrow their buffer.
    params_size_hint: AtomicUsize,
    /// The application's handler and what the client declares: a task
    /// handle (2026-07-28) answers its task's input requests with them, on
    /// the caller's task.
    handler: Arc<dyn crate::handler::DynHandler>,
    capabilities: Arc<mcp_proto::schema::ClientCapabilities>,
}

/// The connection's state. Callers change it and wake the driver; the
/// driver acts on it. The session is the one record of the connection's
/// lifecycle: nothing here repeats its phase.
struct State {
    session: Session,
    next_call: u64,
    /// Where each call the session has is answered: the driver leaves the
    /// answer in its waiter and wakes the caller, who takes it (and the
    /// waiter) on its next poll.
    waiters: HashMap<CallId, Waiter, IdHash>,
    /// The driver's waker from its last poll, stored before it looks at the
    /// state: a change made after that look finds it, so no wake-up is lost.
    driver: Option<Waker>,
    /// Whether `driver` was woken since the driver's pass last began: it
    /// will look at the state again, so a change meanwhile need not wake it
    /// (32 callers submitting in one round wake it once).
    driver_woken: bool,
    /// Callers of [`Client::wait_ready`], answered when the session is ready
    /// or closed.
    ready_waiters: Vec<oneshot::Sender<Result<(), ClientError>>>,
    /// Callers of [`Client::close`], answered when the transport is closed;
    /// `None` once it is (later callers return at once).
    close_waiters: Option<Vec<oneshot::Sender<()>>>,
    /// The latest status notification of each task a [`TaskHandle`]
    /// watches (at most [`MAX_WATCHED_TASKS`]; a handle's entry goes with
    /// its last handle).
    task_watch: HashMap<String, watch::Sender<mcp_proto::schema::Task>>,
}

/// A call in flight, as its caller and the driver share it (under the
/// state's lock, so no channel of its own).
///
/// Invariant: `answer` is set at most once, by the driver, and the caller's
/// `waker` (if it was polled) is woken after that, outside the lock; the
/// call's slot is released when the answer is set or the waiter goes,
/// whichever comes first.
struct Waiter {
    answer: Option<Answer>,
    waker: Option<Waker>,
    progress: Option<ProgressFn>,
    slot: Option<OwnedSemaphorePermit>,
}

impl Waiter {
    fn new(waker: Option<Waker>, progress: Option<ProgressFn>, slot: OwnedSemaphorePermit) -> Self {
        Waiter {
            answer: None,
            waker,
            progress,
            slot: Some(slot),
        }
    }

    /// Leaves the call's answer and releases its slot; the caller's waker,
    /// to be woken once the lock is released.
    fn answer(&mut self, answer: Answer) -> Option<Waker> {
        self.answer = Some(answer);
        self.slot = None;
        self.waker.take()
    }
}

impl Inner {
    /// Locks the state; a panic while it was held (a bug) does not wedge the
    /// connection for everyone else.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `f` on the state, then wakes the driver if `f` says it must act
    /// (waking only schedules the driver's task: nothing runs under the lock).
    #[inline]
    fn update<T>(&self, f: impl FnOnce(&mut State) -> (T, bool)) -> T {
        let mut st = self.lock();
        let (out, wake) = f(&mut st);
        if wake && !st.driver_woken {
            if let Some(w) = &st.driver {
                w.wake_by_ref();
                st.driver_woken = true;
            }
        }
        out
    }

    fn changes(&self, kind: ListKind) -> &watch::Sender<u64> {
        self.changes[kind_index(kind)].get_or_init(|| watch::Sender::new(0))
    }

    /// The error for a call on a closed connection.
    fn closed_error(&self) -> ClientError {
        let reason = self.lock().session.close_reason().cloned();
        ClientError::Closed(reason.unwrap_or(CloseReason::DriverGone))
    }
}

fn kind_index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Resources => 1,
        ListKind::Prompts => 2,
    }
}

fn decode<R: DeserializeOwned>(method: &str, raw: &RawJson) -> Result<R, ClientError> {
    raw.decode().map_err(|e| ClientError::Decode {
        method: method.to_owned(),
        source: e.into(),
    })
}

/// The time, from tokio's clock (so tests with paused time control it).
fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Idle memory: the list-changed channels exist only once someone
    /// subscribes (or a change arrives), one kind at a time.
    #[test]
    fn list_changed_channels_are_made_on_first_use() {
        let (transport, _server) = mcp_proto::transport::channel::pair();
        let (client, _driver) = Client::builder("t", "1").build(transport);
        let inner = client.inner();
        assert!(inner.changes.iter().all(|c| c.get().is_none()));
        let rx = client.list_changed(ListKind::Resources);
        assert_eq!(*rx.borrow(), 0);
        let made: Vec<bool> = inner.changes.iter().map(|c| c.get().is_some()).collect();
        assert_eq!(made, [false, true, false]);
        // The change the driver publishes reaches the receiver made before.
        inner.changes(ListKind::Resources).send_modify(|v| *v += 1);
        assert_eq!(*client.list_changed(ListKind::Resources).borrow(), 1);
        assert!(rx.has_changed().unwrap());
    }
}
