//! The [`Driver`] task: transport I/O, timers and shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcp_proto::jsonrpc::{Message, Notification};
use mcp_proto::schema::{ClientCapabilities, ProgressParams};
use mcp_proto::transport::BoxTransport;
use tokio::sync::{mpsc, oneshot};

use super::notifications::Backlog;
use super::{Command, ProgressFn, Reply, Shared};
use crate::era_cache::EraCache;
use crate::error::{ClientError, CloseReason};
use crate::handler::DynHandler;
use crate::session::{CallId, Session, Transmit};

pub(super) struct Waiter {
    pub(super) reply: Reply,
    pub(super) progress: Option<ProgressFn>,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum DriverState {
    Running,
    /// Session closed; closing the transport.
    Closing,
    Done,
}

/// The task that runs the connection: it reads from the server, writes
/// what callers queued, runs timers and closes. Spawn it (or `.await` it); it
/// finishes when the connection is closed.
///
/// The session and the transport live in one state behind a mutex
/// that callers share: a request is handed to the session by the caller
/// itself, and when it is the only one in flight (the sequential case) the
/// caller also writes it, so a call costs no task hand-off on the way out.
/// Concurrent requests leave the writing to the driver, which batches them
/// into one write. The lock is never held across an `.await` or while user
/// code (handlers, progress callbacks) runs.
#[must_use = "the driver does nothing unless spawned or polled"]
pub struct Driver {
    pub(super) core: Arc<Mutex<DriverCore>>,
}

/// Everything the connection owns; see [`Driver`].
pub(super) struct DriverCore {
    /// Wakes the driver task (its last poll's waker).
    pub(super) driver_waker: Option<std::task::Waker>,
    /// Progress callbacks to run once the lock is released.
    pub(super) deferred: Vec<(ProgressFn, ProgressParams)>,
    pub(super) session: Session,
    pub(super) transport: BoxTransport,
    pub(super) commands: mpsc::UnboundedReceiver<super::Queued>,
    pub(super) shared: std::sync::Weak<Shared>,
    pub(super) waiters: HashMap<CallId, Waiter, crate::session::IdHash>,
    pub(super) stash: Option<Message>,
    /// The timer, made when first armed (a `Sleep` needs the runtime).
    pub(super) sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    pub(super) armed: Option<std::time::Instant>,
    /// The handler's notification queue and task, made when the first
    /// notification arrives (most connections idle without any: the channel
    /// and the task are ~1 KiB). Boxed for the same reason as the command
    /// channel's items.
    pub(super) notifications: Option<mpsc::UnboundedSender<Box<Notification>>>,
    pub(super) backlog: Arc<Backlog>,
    pub(super) server_requests: Arc<AtomicUsize>,
    pub(super) handler: Arc<dyn DynHandler>,
    /// What the client advertised (requests outside it are not handed to the handler).
    pub(super) capabilities: Arc<ClientCapabilities>,
    pub(super) state: DriverState,
    pub(super) ready_waiters: Vec<Reply>,
    /// [`Client::wait_ready`](super::Client::wait_ready) answers at once.
    pub(super) ready: bool,
    /// The handshake is done; `ready` waits until the transport has flushed
    /// what the session queued with it (`notifications/initialized`: over
    /// HTTP, until the server accepted it).
    pub(super) ready_after_flush: bool,
    pub(super) started: bool,
    /// Where to remember the server's era, and under which key.
    pub(super) era_cache: Option<(EraCache, String)>,
    /// The session started from a remembered era.
    pub(super) used_hint: bool,
    pub(super) close_waiters: Vec<oneshot::Sender<()>>,
    pub(super) dirty: bool,
    /// The command channel may not hold the driver's current waker, so the
    /// next poll must poll it (see [`DriverCore::poll_commands`]).
    pub(super) commands_unwatched: bool,
    /// Callers this poll of the driver answered that have not sent their
    /// next request yet. While more than one has yet to, a caller's request
    /// is left to the driver, which writes them all at once (see
    /// [`Client::submit`](super::Client)).
    pub(super) answered: usize,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

impl Drop for DriverCore {
    /// A driver dropped before the connection closed (its task was aborted,
    /// the runtime shut down) still wakes [`Client::closed`](super::Client::closed).
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.closed.send_if_modified(|reason| {
                let unset = reason.is_none();
                if unset {
                    *reason = Some(CloseReason::DriverGone);
                }
                unset
            });
        }
    }
}

/// Locks the core; a panic while it was held (a bug) does not wedge the
/// connection for everyone else.
pub(super) fn lock_core(core: &Mutex<DriverCore>) -> std::sync::MutexGuard<'_, DriverCore> {
    core.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many inbound messages one poll handles before yielding (fairness).
const MAX_INBOUND_PER_POLL: usize = 256;

pub(super) fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

impl DriverCore {
    /// Applies the commands queued on the channel, oldest first.
    pub(super) fn take_commands(&mut self) {
        while let Ok(cmd) = self.commands.try_recv() {
            // Its send woke the driver, which used up the channel's waker.
            self.commands_unwatched = true;
            self.on_command(*cmd);
        }
    }

    /// Applies what callers queued on the channel, and closes the session
    /// once every sender is gone.
    ///
    /// Most wake-ups are the transport's (an answer arrived): then the
    /// channel is empty and still holds the driver's waker from the poll
    /// that last saw it empty, so polling it again (the cooperative budget,
    /// two list reads, the waker's registration) is skipped. A send wakes
    /// that waker and leaves the channel non-empty; callers that take
    /// commands themselves ([`take_commands`](Self::take_commands)) and a
    /// new driver waker set `commands_unwatched`.
    fn poll_commands(&mut self, cx: &mut Context<'_>) {
        if !self.commands_unwatched && self.commands.is_empty() && !self.commands.is_closed() {
            return;
        }
        loop {
            match self.commands.poll_recv(cx) {
                Poll::Ready(Some(cmd)) => self.on_command(*cmd),
                Poll::Ready(None) => {
                    // Every Client is gone: close.
                    self.session.close();
                    return;
                }
                Poll::Pending => {
                    // Pending with the task's budget used up registered no
                    // waker (the task is woken to run again instead).
                    self.commands_unwatched = !tokio::task::coop::has_budget_remaining();
                    return;
                }
            }
        }
    }

    /// After a caller handed over a request: writes it right away when the
    /// transport takes it without waiting, and wakes the driver only for
    /// what the caller cannot finish (a write that would block, session
    /// events, a timer to move earlier, requests already in flight whose
    /// writes are better batched by the driver).
    pub(super) fn transmit_inline(&mut self, alone: bool) {
        // A transport may spawn tasks while writing (HTTP): only inside the
        // runtime. Elsewhere the driver writes.
        // (Inside a task, one thread-local read; `Handle::try_current` also
        // clones the handle.)
        let inline = alone
            && (tokio::task::try_id().is_some() || tokio::runtime::Handle::try_current().is_ok());
        let mut wake = !inline;
        if inline {
            let mut cx = Context::from_waker(std::task::Waker::noop());
            self.poll_transmit(&mut cx);
            wake = self.stash.is_some() || self.dirty;
        }
        if let Some(deadline) = self.session.take_new_deadline() {
            wake |= self.armed.is_none_or(|armed| deadline < armed);
        }
        if wake || self.session.has_events() || self.state != DriverState::Running {
            if let Some(w) = &self.driver_waker {
                w.wake_by_ref();
            }
        }
    }

    /// Moves the session's output into the transport, then makes the client
    /// ready if the handshake is done and all it queued is flushed (even
    /// when a write failed: the session has that error).
    fn poll_transmit(&mut self, cx: &mut Context<'_>) {
        self.write_and_flush(cx);
        if self.ready_after_flush && self.stash.is_none() && !self.dirty {
            self.ready_after_flush = false;
            self.ready = true;
            for r in self.ready_waiters.drain(..) {
                let _ = r.send(Ok(crate::session::empty_object()));
            }
        }
    }

    /// Writes what the session queued and flushes; stops at a write error.
    fn write_and_flush(&mut self, cx: &mut Context<'_>) {
        let mut wrote = false;
        loop {
            let msg = match self.stash.take() {
                Some(m) => m,
                None => match self.session.poll_transmit() {
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
                    self.session.handle_transport_error(e, now());
                    return;
                }
                Poll::Pending => {
                    self.stash = Some(msg);
                    break;
                }
            }
            if let Err(e) = self.transport.as_mut().start_send(msg) {
                self.session.handle_transport_error(e, now());
                return;
            }
            wrote = true;
        }
        if wrote || self.stash.is_some() || self.dirty {
            match self.transport.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => self.dirty = false,
                Poll::Ready(Err(e)) => {
                    self.dirty = false;
                    self.session.handle_transport_error(e, now());
                }
                Poll::Pending => self.dirty = true,
            }
        }
    }

    fn drain_events(&mut self) {
        while let Some(ev) = self.session.poll_event() {
            self.on_event(ev);
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut core = lock_core(&self.core);
        if !core
            .driver_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            core.driver_waker = Some(cx.waker().clone());
            core.commands_unwatched = true;
        }
        let done = core.poll_core(cx);
        let deferred = std::mem::take(&mut core.deferred);
        drop(core);
        for (cb, progress) in deferred {
            cb(progress);
        }
        done
    }
}

impl DriverCore {
    fn poll_core(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let this = self;
        if !this.started {
            this.started = true;
            if tokio::runtime::Handle::try_current().is_err() {
                this.session.handle_closed(CloseReason::NoRuntime);
                this.drain_events();
                return this.finish();
            }
            let hint = this.era_cache.as_ref().and_then(|(c, k)| c.get(k));
            this.used_hint = hint.is_some();
            this.session.start_with_hint(now(), hint);
        }
        loop {
            if this.state == DriverState::Running {
                this.poll_commands(cx);
                this.drain_events();
            }

            if this.state == DriverState::Running {
                // Inbound messages.
                this.answered = 0;
                let mut budget = MAX_INBOUND_PER_POLL;
                let mut exhausted = false;
                while this.state == DriverState::Running {
                    if budget == 0 {
                        exhausted = true;
                        break;
                    }
                    budget -= 1;
                    if !this.backlog.has_room(cx) {
                        // The handler is behind: stop reading until it catches up.
                        break;
                    }
                    match this.transport.as_mut().poll_recv(cx) {
                        Poll::Ready(Some(Ok(m))) => this.session.handle_message(m, now),
                        Poll::Ready(Some(Err(e))) => this.session.handle_transport_error(e, now()),
                        Poll::Ready(None) => this.session.handle_closed(CloseReason::ServerClosed),
                        Poll::Pending => break,
                    }
                    this.drain_events();
                }
                // Outbound.
                this.poll_transmit(cx);
                this.drain_events();
                if exhausted && this.state == DriverState::Running {
                    // Inbound that never lets up must not starve the timer
                    // (a transport with no channel in between is never cut
                    // short by tokio's cooperative budget).
                    this.poll_timer(cx);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }

            match this.state {
                DriverState::Running => {
                    if this.poll_timer(cx) {
                        continue;
                    }
                    return Poll::Pending;
                }
                DriverState::Closing => {
                    // Flush what the session queued (e.g. cancellations), then close.
                    this.poll_transmit(cx);
                    match this.transport.as_mut().poll_close(cx) {
                        Poll::Ready(r) => {
                            if let Err(e) = r {
                                tracing::debug!(error = %mcp_proto::error::chain(&e), "error while closing the transport");
                            }
                            this.state = DriverState::Done;
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }
                DriverState::Done => return this.finish(),
            }
        }
    }

    /// The session's next deadline: arms the timer, and when it has fired
    /// lets the session time out what is due. Whether it fired.
    ///
    /// The timer only ever moves earlier: every new request has a later
    /// deadline than those in flight, and moving the timer for each would
    /// cost a timer-wheel update per call. A timer that fires before the
    /// session's next deadline (or with nothing left to time) costs one idle
    /// wake-up and is re-armed.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = self.session.poll_timeout() else {
            return false;
        };
        let at = tokio::time::Instant::from_std(deadline);
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        if self.armed.is_none_or(|armed| deadline < armed) {
            self.armed = Some(deadline);
            sleep.as_mut().reset(at);
        }
        if sleep.as_mut().poll(cx).is_ready() {
            self.armed = None;
            self.session.handle_timeout(now());
            self.drain_events();
            return true;
        }
        false
    }

    /// The transport is closed: tells everyone still waiting.
    fn finish(&mut self) -> Poll<()> {
        let this = self;
        this.state = DriverState::Done;
        for tx in this.close_waiters.drain(..) {
            let _ = tx.send(());
        }
        // Late commands get a closed error.
        this.commands.close();
        while let Ok(cmd) = this.commands.try_recv() {
            match *cmd {
                Command::Request { reply, .. } | Command::WaitReady(reply) => {
                    let err = this
                        .shared
                        .upgrade()
                        .map_or(ClientError::Closed(CloseReason::DriverGone), |s| {
                            s.closed_error()
                        });
                    let _ = reply.send(Err(err));
                }
                Command::Close(tx) => {
                    let _ = tx.send(());
                }
                _ => {}
            }
        }
        Poll::Ready(())
    }
}
