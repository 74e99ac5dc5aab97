//! The [`Driver`] task: transport IO, the timer and shutdown.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use mcp_proto::jsonrpc::Message;
use mcp_proto::schema::{ClientCapabilities, ProgressParams};
use mcp_proto::transport::BoxTransport;

use super::handler_tasks::{Done, HandlerTasks, run_guarded};
use super::mcp_task::receiver::{Receiver, ReceiverLimits};
use super::mcp_task::requester::TASK_STATUS;
use super::{Inner, ProgressFn, State, now};
use crate::era_cache::EraCache;
use crate::error::CloseReason;
use crate::handler::DynHandler;
use crate::session::Transmit;

/// The task that runs the connection: it alone reads from and writes to the
/// transport, runs the timer, hands the server's requests and notifications
/// to the handler, and closes. Spawn it (or `.await` it); it finishes when
/// the connection is closed and the transport shut down.
///
/// Callers never do IO: a call hands its request to the session under a
/// lock and wakes this task, which writes everything queued since it last
/// ran in one batch. Dropping the driver (an aborted task, a runtime shut
/// down) closes the connection: every pending call fails with
/// [`CloseReason::DriverGone`].
#[must_use = "the driver does nothing unless spawned or polled"]
pub struct Driver {
    pub(super) inner: Arc<Inner>,
    io: Io,
}

/// What the driver owns besides the shared state: the transport and
/// everything about its IO.
pub(super) struct Io {
    transport: BoxTransport,
    /// Whether the transport's receive side has woken the driver since it
    /// last returned `Pending`, and the waker it is polled with.
    recv: Arc<RecvReady>,
    recv_waker: Waker,
    /// A message the transport was not ready for; it goes before any other.
    stash: Option<Message>,
    /// Written and not yet flushed.
    unflushed: bool,
    /// Messages handed to the session since the transport last returned
    /// `Pending`.
    handed: usize,
    /// Two or more were, before the last `Pending`: the next pass reads once
    /// more after writing (see [`Io::pass`]).
    recheck: bool,
    /// The timer, made when first armed (a `Sleep` needs the runtime).
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    armed: Option<Instant>,
    pub(super) handler_tasks: HandlerTasks,
    /// The MCP tasks the server asked the client to run.
    pub(super) task_receiver: Receiver,
    /// Progress callbacks to run once the lock is released.
    pub(super) deferred: Vec<(ProgressFn, ProgressParams)>,
    /// Callers whose calls this pass answered, woken once the lock is
    /// released (so a caller on another thread never wakes into a held
    /// lock). At most one per call in flight.
    pub(super) wakes: Vec<Waker>,
    /// Where to remember the server's era, under which key, and whether this
    /// connection started from what was remembered.
    pub(super) era_cache: Option<(EraCache, String, bool)>,
    /// The transport is closed and everyone told: the future is done.
    finished: bool,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

/// How many inbound messages one poll handles before yielding (fairness);
/// it also bounds the progress callbacks one pass defers (the crate docs'
/// bounds table states it, checked by the test below).
const MAX_INBOUND_PER_POLL: usize = 256;

/// How a read of the transport stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ReadEnd {
    /// At `Pending`, or the session closed.
    Waiting,
    /// At [`MAX_INBOUND_PER_POLL`] messages.
    Exhausted,
    /// Input is paused (see [`Io::read`]).
    Paused,
}

/// What one pass over the connection left to do.
enum Next {
    /// Run another pass now: a pass made room for more input, or the timer fired.
    Again,
    /// Every source of work holds this task's waker.
    Wait,
    /// Yield to the runtime (the tasks this pass woke run first), then go
    /// on: inbound never let up, or a read is to be repeated after them.
    Yield,
    /// The transport is closed.
    Finished,
}

impl Driver {
    pub(super) fn new(
        inner: Arc<Inner>,
        transport: BoxTransport,
        handler: Arc<dyn DynHandler>,
        capabilities: Arc<ClientCapabilities>,
        era_cache: Option<(EraCache, String, bool)>,
        receiver: ReceiverLimits,
    ) -> Self {
        let recv = Arc::new(RecvReady::default());
        Driver {
            io: Io {
                recv_waker: Waker::from(Arc::clone(&recv)),
                recv,
                transport,
                stash: None,
                unflushed: false,
                handed: 0,
                recheck: false,
                timer: None,
                armed: None,
                handler_tasks: HandlerTasks::new(handler, capabilities),
                task_receiver: Receiver::new(receiver),
                deferred: Vec::new(),
                wakes: Vec::new(),
                era_cache,
                finished: false,
            },
            inner,
        }
    }
}

impl Io {
    /// One pass: what callers changed, inbound, outbound, the timer, the
    /// handler's answers and, once the session is closed, the transport's
    /// shutdown. `fresh`: this task's waker is not the one every source of
    /// work holds (the first poll, or the driver moved to another task).
    fn pass(&mut self, inner: &Inner, st: &mut State, cx: &mut Context<'_>, fresh: bool) -> Next {
        // What callers changed (cancellations, a close).
        self.drain_events(inner, st);

        let mut read = None;
        if !st.session.is_closed() && self.recv.take(fresh) {
            read = Some(self.read(inner, st, cx));
        }

        self.write(st, cx);
        self.drain_events(inner, st);

        // The last read handed over two or more messages before it found
        // nothing: read once more now, after they were acted on (the callers
        // they answered have asked again, if they will). A transport learns
        // from what was written between the two whether answers are still
        // due (the stdio transport keeps its read buffer while they are, and
        // releases it at this read when they are not).
        if read.is_none() && self.recheck && !st.session.is_closed() {
            read = Some(self.read(inner, st, cx));
        }
        let exhausted = read == Some(ReadEnd::Exhausted);
        let paused = read == Some(ReadEnd::Paused);

        if st.session.is_closed() {
            // What the session queued last (cancellations) goes out if the
            // transport takes it; then the transport shuts down, within its
            // own documented bound.
            return match self.transport.as_mut().poll_close(cx) {
                Poll::Ready(result) => {
                    if let Err(e) = result {
                        tracing::debug!(error = %mcp_proto::error::chain(&e), "error while closing the transport");
                    }
                    Next::Finished
                }
                Poll::Pending => Next::Wait,
            };
        }
        if self.poll_timer(inner, st, cx, fresh) {
            return Next::Again;
        }
        // Last, so that tasks started by this pass hold the waker too.
        if self.collect_answers(st, cx) {
            return Next::Again;
        }
        if exhausted || self.recheck {
            return Next::Yield;
        }
        // Writing may have drained the backlog that paused reading.
        if paused && st.session.accepts_input() && self.handler_tasks.has_room(cx) {
            return Next::Again;
        }
        Next::Wait
    }

    /// Reads what the transport has into the session, up to
    /// [`MAX_INBOUND_PER_POLL`] messages, and says how it stopped.
    fn read(&mut self, inner: &Inner, st: &mut State, cx: &mut Context<'_>) -> ReadEnd {
        let mut budget = MAX_INBOUND_PER_POLL;
        let mut end = ReadEnd::Waiting;
        self.recheck = false;
        loop {
            if budget == 0 {
                end = ReadEnd::Exhausted;
                break;
            }
            // The server is not reading our answers, or the handler is
            // behind on notifications: stop reading until they catch up.
            if !st.session.accepts_input() || !self.handler_tasks.has_room(cx) {
                end = ReadEnd::Paused;
                break;
            }
            budget -= 1;
            let received = self
                .transport
                .as_mut()
                .poll_recv(&mut Context::from_waker(&self.recv_waker));
            match received {
                Poll::Ready(Some(Ok(m))) => st.session.handle_message(m, now),
                Poll::Ready(Some(Err(e))) => st.session.handle_transport_error(e, now()),
                Poll::Ready(None) => st.session.handle_closed(CloseReason::ServerClosed),
                Poll::Pending => {
                    self.recheck = self.handed >= 2;
                    self.handed = 0;
                    break;
                }
            }
            self.handed += 1;
            self.drain_events(inner, st);
            if st.session.is_closed() {
                break;
            }
        }
        if matches!(end, ReadEnd::Exhausted | ReadEnd::Paused) {
            // Stopped before `Pending`: the transport has not taken the
            // waker, so its readiness stays set.
            self.recv.set();
        }
        end
    }

    /// Hands the session what the handler's finished tasks answered.
    /// Whether there was any.
    fn collect_answers(&mut self, st: &mut State, cx: &mut Context<'_>) -> bool {
        if self.handler_tasks.is_idle() {
            return false;
        }
        let mut any = false;
        while let Poll::Ready(Some(done)) = self.handler_tasks.poll_done(cx) {
            any = true;
            match done {
                Done::Answer { id, result } => st.session.respond(id, result),
                Done::Input { call, responses } => st.session.provide_input(call, responses, now()),
                Done::TaskFinished { task, result } => {
                    let (answers, status) = self.task_receiver.finished(&task, result);
                    for (id, answer) in answers {
                        st.session.respond(id, answer);
                    }
                    if let Some(status) = status {
                        // Optional in the spec: dropped if the outbound backlog is full.
                        let _ = st.session.notify(TASK_STATUS, Some(status));
                    }
                }
                Done::TaskExpired { task } => {
                    for (id, answer) in self.task_receiver.expired(&task) {
                        st.session.respond(id, answer);
                    }
                }
            }
        }
        any
    }

    /// Hands what the session queued to the transport, then flushes; tells
    /// the session when all it queued is flushed. Stops at the first
    /// message the transport is not ready for.
    fn write(&mut self, st: &mut State, cx: &mut Context<'_>) {
        loop {
            let msg = match self.stash.take() {
                Some(m) => m,
                None => match st.session.poll_transmit() {
                    Some(Transmit::Message(m)) => m,
                    Some(Transmit::ProtocolVersion(v)) => {
                        self.transport.as_mut().set_protocol_version(v);
                        continue;
                    }
                    None => break,
                },
            };
            match self.transport.as_mut().poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => {
                    st.session.handle_transport_error(e, now());
                    return;
                }
                Poll::Pending => {
                    self.stash = Some(msg);
                    break;
                }
            }
            // The transport takes a request inside its span (when one is
            // recorded): what it logs meanwhile, and the work it carries
            // on in tasks of its own, belong to the request.
            let mut trace = None;
            if let Message::Request(r) = &msg {
                let (deadline, t) = st.session.sending(&r.id);
                if let Some(deadline) = deadline {
                    self.transport
                        .as_mut()
                        .set_request_deadline(&r.id, deadline);
                }
                trace = t;
            }
            let sent = {
                let _entered = trace.and_then(crate::telemetry::Call::enter);
                self.transport.as_mut().start_send(msg)
            };
            if let Err(e) = sent {
                st.session.handle_transport_error(e, now());
                return;
            }
            self.unflushed = true;
        }
        if !self.unflushed && self.stash.is_none() {
            return;
        }
        match self.transport.as_mut().poll_flush(cx) {
            Poll::Ready(result) => {
                self.unflushed = false;
                if let Err(e) = result {
                    st.session.handle_transport_error(e, now());
                }
                if self.stash.is_none() {
                    st.session.handle_flushed();
                }
            }
            Poll::Pending => {}
        }
    }

    /// Arms the timer for the session's next deadline and, when it has
    /// fired, lets the session time out what is due. Whether it fired.
    ///
    /// The timer only ever moves earlier: a new call's deadline is nearly
    /// always later than those in flight, and moving the timer for each
    /// would cost a timer-wheel update per call. A timer that fires before
    /// the session's next deadline costs one idle wake-up and is re-armed.
    ///
    /// The timer is polled (which registers the waker) only when it was
    /// armed anew, when this task's waker changed, or once it has elapsed.
    fn poll_timer(
        &mut self,
        inner: &Inner,
        st: &mut State,
        cx: &mut Context<'_>,
        fresh: bool,
    ) -> bool {
        let Some(deadline) = st.session.poll_timeout() else {
            return false;
        };
        let at = tokio::time::Instant::from_std(deadline);
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        let mut poll = fresh;
        if self.armed.is_none_or(|armed| deadline < armed) {
            self.armed = Some(deadline);
            timer.as_mut().reset(at);
            poll = true;
        }
        if (poll || timer.is_elapsed()) && timer.as_mut().poll(cx).is_ready() {
            self.armed = None;
            st.session.handle_timeout(now());
            self.drain_events(inner, st);
            return true;
        }
        false
    }

    /// The transport is closed: callers of [`Client::close`](super::Client::close)
    /// are told, and the handler's tasks end.
    fn finish(&mut self, st: &mut State) {
        self.finished = true;
        for tx in st.close_waiters.take().into_iter().flatten() {
            let _ = tx.send(());
        }
        self.handler_tasks.shutdown();
        self.task_receiver.clear();
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Driver { inner, io } = self.get_mut();
        if io.finished {
            return Poll::Ready(());
        }
        loop {
            let mut st = inner.lock();
            // Before anything is looked at: a caller that changes the state
            // after this pass finds this waker, not yet woken, and wakes
            // this task.
            st.driver_woken = false;
            let fresh = st.driver.as_ref().is_none_or(|w| !w.will_wake(cx.waker()));
            if fresh {
                st.driver = Some(cx.waker().clone());
                io.recv.wake_task(cx.waker());
            }
            let next = if in_runtime() {
                io.pass(inner, &mut st, cx, fresh)
            } else {
                st.session.handle_closed(CloseReason::NoRuntime);
                io.drain_events(inner, &mut st);
                Next::Finished
            };
            if let Next::Finished = next {
                io.finish(&mut st);
            }
            drop(st);
            for waker in io.wakes.drain(..) {
                waker.wake();
            }
            if !io.deferred.is_empty() {
                for (cb, progress) in io.deferred.drain(..) {
                    run_guarded("a progress callback", || cb(progress));
                }
            }
            match next {
                Next::Again => continue,
                Next::Wait => return Poll::Pending,
                Next::Yield => {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Next::Finished => return Poll::Ready(()),
            }
        }
    }
}

impl Drop for Driver {
    /// A driver dropped before it finished (its task aborted, the runtime
    /// shut down) closes the session, so every waiting caller is told.
    fn drop(&mut self) {
        if self.io.finished {
            return;
        }
        let mut st = self.inner.lock();
        st.session.handle_closed(CloseReason::DriverGone);
        self.io.drain_events(&self.inner, &mut st);
        self.io.finish(&mut st);
        drop(st);
        for waker in self.io.wakes.drain(..) {
            waker.wake();
        }
    }
}

/// Readiness of the transport's receive side: the waker the transport gets
/// from `poll_recv` notes that it fired, then wakes the driver's task. The
/// driver calls `poll_recv` only after such a wake (or with a new task
/// waker), so a wake-up a caller caused (a request to write) costs no read
/// attempt; the transport still sees one waker per direction, as the
/// transport contract promises.
#[derive(Default)]
struct RecvReady {
    /// Set by the transport's wake; taken by the driver before it reads.
    ready: AtomicBool,
    /// The driver task's waker.
    task: Mutex<Option<Waker>>,
}

impl RecvReady {
    /// Whether to read now (the transport woke us, or `fresh`), clearing
    /// the mark first, so a wake during the read is not lost.
    fn take(&self, fresh: bool) -> bool {
        self.ready.swap(false, Ordering::AcqRel) || fresh
    }

    fn set(&self) {
        self.ready.store(true, Ordering::Release);
    }

    fn wake_task(&self, waker: &Waker) {
        let mut task = self
            .task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *task = Some(waker.clone());
    }
}

impl Wake for RecvReady {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.set();
        let task = self
            .task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(w) = task.as_ref() {
            w.wake_by_ref();
        }
    }
}

/// Whether a tokio runtime is current (inside a task: one thread-local read).
fn in_runtime() -> bool {
    tokio::task::try_id().is_some() || tokio::runtime::Handle::try_current().is_ok()
}

#[cfg(test)]
mod tests {
    /// The crate docs' bounds table states this limit; they move together.
    #[test]
    fn the_bounds_table_states_the_per_pass_limit() {
        let docs = include_str!("../lib.rs");
        let said = format!("at most {} messages per pass", super::MAX_INBOUND_PER_POLL);
        assert!(
            docs.contains(&said),
            "lib.rs's bounds table should say {said:?}"
        );
    }
}
