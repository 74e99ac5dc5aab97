//! A [`Transport`] from any async send/receive pair: implement
//! [`SendHalf::send`] and [`RecvHalf::recv`] as `async fn`s over your
//! connection's two halves, and [`Halves`] gives the poll-based
//! `Transport` the client drives.
//!
//! ```text
//!   your SendHalf ── async fn send(msg) ──┐
//!                                          ├── Halves<S, R>: Transport
//!   your RecvHalf ── async fn recv() ─────┘
//! ```
//!
//! # What it does for you
//!
//! - **Both directions at once.** Each half lives inside its own in-flight
//!   future while it works, so a `recv` that waits for the server never
//!   blocks a `send`, and the other way round: the client's driver polls
//!   both from one task.
//! - **Nothing lost on cancellation.** A started `send` or `recv` is kept
//!   in the transport until it finishes, however many times it is polled;
//!   its halves come back when it does.
//! - **Backpressure.** One message is in flight at a time:
//!   [`poll_ready`](Transport::poll_ready) waits until the previous `send`
//!   finished, so the connection's own buffers are the only queue. Nothing
//!   is read unless [`poll_recv`](Transport::poll_recv) is polled.
//! - **Errors keep their kind.** Your halves return [`TransportError`]s;
//!   `?` on an [`std::io::Error`] maps it by kind (a broken pipe or reset is
//!   [`Closed`](TransportErrorKind::Closed), see the
//!   [module docs](super#which-kind-an-io-error-gets)) and `?` on a
//!   [`DecodeError`](crate::jsonrpc::DecodeError) is a scoped
//!   [`Decode`](TransportErrorKind::Decode) error: the frame is skipped and
//!   receiving goes on. A terminal error from `recv` ends receiving
//!   (`poll_recv` then returns `None`); a terminal error from `send` makes
//!   later sends fail with `Closed`.
//! - **A bounded close.** [`poll_close`](Transport::poll_close) stops
//!   receiving at once, waits for the message in flight, then calls
//!   [`SendHalf::close`] (shut the write side down, say goodbye). If that
//!   takes longer than [`DEFAULT_CLOSE_TIMEOUT`] (or
//!   [`with_close_timeout`](Halves::with_close_timeout)), both halves are
//!   dropped and `poll_close` returns a
//!   [`Timeout`](TransportErrorKind::Timeout) error (informational: the
//!   transport is closed). An error while closing a connection that is
//!   already dead is not reported: there was nothing left to shut down.
//!
//! This module has no runtime: the halves' futures run on whatever runtime
//! their IO needs. The close bound is kept by a short-lived std thread,
//! started only when a close has to wait.
//!
//! # What it costs
//!
//! One boxed future per message sent and per message received, and no
//! batching: each message is its own `send`. A hand-written transport
//! (stdio, HTTP) queues many messages with `start_send` and writes them
//! with one flush. For most connections the difference does not show; see
//! [which way to write a transport](super#which-way-to-write-a-transport).
//!
//! # Example
//!
//! A transport over an in-memory "connection" (a peer that answers every
//! request at once). A real one reads and writes a socket the same way;
//! `examples/src/unix_socket.rs` in the repository is newline-delimited
//! JSON-RPC over a Unix socket in 80 lines, docs included, run against the
//! transport test kit.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use std::collections::VecDeque;
//! use mcp_proto::jsonrpc::{Message, Request, Response};
//! use mcp_proto::transport::halves::{Halves, RecvHalf, SendHalf};
//! use mcp_proto::transport::{TransportError, TransportErrorKind, TransportExt};
//!
//! type Wire = Arc<Mutex<VecDeque<String>>>;
//!
//! struct Writer(Wire);
//! struct Reader(Wire);
//!
//! impl SendHalf for Writer {
//!     async fn send(&mut self, msg: Message) -> Result<(), TransportError> {
//!         // The peer: answers each request with an empty result.
//!         if let Message::Request(req) = msg {
//!             let answer: Message = Response::new(req.id, mcp_proto::RawJson::empty_object()).into();
//!             self.0.lock().unwrap().push_back(answer.to_text());
//!         }
//!         Ok(())
//!     }
//! }
//!
//! impl RecvHalf for Reader {
//!     async fn recv(&mut self) -> Result<Option<Message>, TransportError> {
//!         let Some(text) = self.0.lock().unwrap().pop_front() else {
//!             return Ok(None); // the connection ended
//!         };
//!         Ok(Some(text.parse()?)) // a bad frame is a scoped Decode error
//!     }
//! }
//!
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! block_on(async {
//!     let wire = Wire::default();
//!     let mut t = Halves::new(Writer(wire.clone()), Reader(wire));
//!     t.send(Request::new(1.into(), "ping", None).into()).await?;
//!     let answer = t.recv().await.expect("an answer")?;
//!     assert_eq!(answer.id(), Some(&1.into()));
//!     assert!(t.recv().await.is_none()); // nothing more: the end
//!     t.close().await?;
//!     let e = t.send(Request::new(2.into(), "ping", None).into()).await.unwrap_err();
//!     assert_eq!(e.kind(), TransportErrorKind::Closed);
//!     Ok::<(), TransportError>(())
//! })?;
//! # Ok::<(), TransportError>(())
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use super::{Transport, TransportError, TransportErrorKind};
use crate::jsonrpc::Message;

/// How long [`Halves`]' `poll_close` waits, by default, for the message in
/// flight and [`SendHalf::close`] before it drops the connection: 2 s.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The sending half of a connection, for [`Halves`]. Implement it with
/// `async fn`s.
pub trait SendHalf: Send + 'static {
    /// Sends one message as one frame (a line, a datagram, a WebSocket
    /// text frame: [`Message::to_text`] is its compact JSON), waiting while
    /// the connection pushes back. `Ok` once it is handed to the connection.
    fn send(&mut self, msg: Message) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Ends the sending direction as the connection's protocol says (shut
    /// a socket's write side down, send a close frame), so the peer sees
    /// the end. Called once, by `poll_close`, after the last send. The
    /// default does nothing: dropping the half is the end.
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        std::future::ready(Ok(()))
    }
}

/// The receiving half of a connection, for [`Halves`]. Implement it with
/// an `async fn`.
pub trait RecvHalf: Send + 'static {
    /// The next message: `Ok(Some(message))`; `Ok(None)` once the peer has
    /// ended the connection cleanly; or an error. A scoped error (a
    /// [`Decode`](TransportErrorKind::Decode) error for one bad or
    /// oversized frame, what `?` on a
    /// [`DecodeError`](crate::jsonrpc::DecodeError) gives) is reported and
    /// receiving goes on; a terminal one ends it.
    ///
    /// Bound what one frame may cost: read at most a message's size limit
    /// before you give up on a frame (report it as a `Decode` error and
    /// skip to the next), so a hostile peer cannot grow memory.
    fn recv(&mut self) -> impl Future<Output = Result<Option<Message>, TransportError>> + Send;
}

/// A half at rest, or moved into the future that is using it.
enum Slot<H, T> {
    Idle(H),
    Busy(Pin<Box<dyn Future<Output = (H, T)> + Send>>),
    /// Dropped: the direction has ended.
    Gone,
}

/// Where `poll_close` is. Each stage is entered once, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    Open,
    /// Waiting for the message in flight.
    Flushing,
    /// [`SendHalf::close`] is running in the send slot.
    ShuttingDown,
    Done,
}

type Sent = Result<(), TransportError>;
type Received = Result<Option<Message>, TransportError>;

/// A [`Transport`] made of a [`SendHalf`] and a [`RecvHalf`]. See the
/// [module docs](self).
pub struct Halves<S, R> {
    send: Slot<S, Sent>,
    recv: Slot<R, Received>,
    /// A send failed with a terminal error: later sends fail with `Closed`.
    send_failed: bool,
    closing: Closing,
    close_timeout: Duration,
    /// Started when a close first has to wait.
    deadline: Option<Deadline>,
}

/// The halves are never pinned: each is moved whole into its boxed future
/// and back, so `Halves` can be moved freely whatever `S` and `R` are.
impl<S, R> Unpin for Halves<S, R> {}

impl<S, R> fmt::Debug for Halves<S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = |busy: bool, gone: bool| match (busy, gone) {
            (true, _) => "in flight",
            (_, true) => "ended",
            _ => "idle",
        };
        f.debug_struct("Halves")
            .field(
                "send",
                &state(
                    matches!(self.send, Slot::Busy(_)),
                    matches!(self.send, Slot::Gone),
                ),
            )
            .field(
                "recv",
                &state(
                    matches!(self.recv, Slot::Busy(_)),
                    matches!(self.recv, Slot::Gone),
                ),
            )
            .field("send_failed", &self.send_failed)
            .field("closing", &self.closing)
            .finish_non_exhaustive()
    }
}

impl<S: SendHalf, R: RecvHalf> Halves<S, R> {
    /// A transport that sends with `send` and receives with `recv`.
    pub fn new(send: S, recv: R) -> Self {
        Halves {
            send: Slot::Idle(send),
            recv: Slot::Idle(recv),
            send_failed: false,
            closing: Closing::Open,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            deadline: None,
        }
    }

    /// How long `poll_close` waits for the message in flight and
    /// [`SendHalf::close`] before it drops the connection (default
    /// [`DEFAULT_CLOSE_TIMEOUT`]).
    #[must_use]
    pub fn with_close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Drives the send slot's future, if one is running; its half comes back.
    fn poll_sent(&mut self, cx: &mut Context<'_>) -> Poll<Sent> {
        let Slot::Busy(fut) = &mut self.send else {
            return Poll::Ready(Ok(()));
        };
        let (half, result) = ready!(fut.as_mut().poll(cx));
        self.send = Slot::Idle(half);
        if let Err(e) = &result
            && e.is_terminal()
        {
            self.send_failed = true;
        }
        Poll::Ready(result)
    }

    /// Starts `op` on the idle send half. `false` if the half is not idle.
    fn start<F>(&mut self, op: impl FnOnce(S) -> F) -> bool
    where
        F: Future<Output = (S, Sent)> + Send + 'static,
    {
        match std::mem::replace(&mut self.send, Slot::Gone) {
            Slot::Idle(half) => {
                self.send = Slot::Busy(Box::pin(op(half)));
                true
            }
            other => {
                self.send = other;
                false
            }
        }
    }

    /// Waits for the close deadline; once it passes, drops both halves.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let timeout = self.close_timeout;
        ready!(
            self.deadline
                .get_or_insert_with(|| Deadline::after(timeout))
                .poll(cx)
        );
        self.send = Slot::Gone;
        self.closing = Closing::Done;
        self.deadline = None;
        Poll::Ready(Err(TransportError::new(
            TransportErrorKind::Timeout,
            format!(
                "the connection did not finish closing within {timeout:?} (close_timeout); it is dropped"
            ),
        )))
    }
}

fn closed() -> TransportError {
    TransportError::new(TransportErrorKind::Closed, "the transport was closed")
}

fn failed_before() -> TransportError {
    TransportError::new(
        TransportErrorKind::Closed,
        "an earlier send failed; the connection is gone",
    )
}

impl<S: SendHalf, R: RecvHalf> Transport for Halves<S, R> {
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let this = self.get_mut();
        if let Slot::Idle(_) = this.recv
            && let Slot::Idle(mut half) = std::mem::replace(&mut this.recv, Slot::Gone)
        {
            this.recv = Slot::Busy(Box::pin(async move {
                let r = half.recv().await;
                (half, r)
            }));
        }
        let Slot::Busy(fut) = &mut this.recv else {
            return Poll::Ready(None);
        };
        let (half, result) = ready!(fut.as_mut().poll(cx));
        Poll::Ready(match result {
            Ok(Some(msg)) => {
                this.recv = Slot::Idle(half);
                Some(Ok(msg))
            }
            // The end: the half is dropped, and `None` is said from now on.
            Ok(None) => {
                this.recv = Slot::Gone;
                None
            }
            Err(e) if e.is_terminal() => {
                this.recv = Slot::Gone;
                Some(Err(e))
            }
            Err(e) => {
                this.recv = Slot::Idle(half);
                Some(Err(e))
            }
        })
    }

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        if this.closing != Closing::Open {
            return Poll::Ready(Err(closed()));
        }
        if this.send_failed {
            return Poll::Ready(Err(failed_before()));
        }
        // The previous message must be out: one in flight at a time.
        this.poll_sent(cx)
    }

    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        let this = self.get_mut();
        if this.closing != Closing::Open {
            return Err(closed());
        }
        if this.send_failed {
            return Err(failed_before());
        }
        let started = this.start(|mut half| async move {
            let r = half.send(msg).await;
            (half, r)
        });
        if started {
            Ok(())
        } else {
            Err(TransportError::new(
                TransportErrorKind::Other,
                "start_send before poll_ready was ready: a message is still in flight",
            ))
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().poll_sent(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        // Closed locally: nothing more is received, whatever was unread.
        this.recv = Slot::Gone;
        loop {
            match this.closing {
                Closing::Open => this.closing = Closing::Flushing,
                Closing::Flushing => {
                    if this.poll_sent(cx).is_pending() {
                        return this.poll_deadline(cx);
                    }
                    // Sent, or failed: either way nothing is left to flush.
                    this.start(|mut half| async move {
                        let r = half.close().await;
                        (half, r)
                    });
                    this.closing = Closing::ShuttingDown;
                }
                Closing::ShuttingDown => {
                    if this.poll_sent(cx).is_pending() {
                        return this.poll_deadline(cx);
                    }
                    // An error here is a connection that was already gone.
                    this.send = Slot::Gone;
                    this.closing = Closing::Done;
                }
                Closing::Done => {
                    this.deadline = None;
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Only flags and a waker are behind it: a panic elsewhere leaves them usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Default)]
struct DeadlineState {
    passed: bool,
    waker: Option<Waker>,
}

/// Ready once a duration has passed, measured by a thread that sleeps it
/// (this crate has no runtime timer). The thread ends when it has woken
/// the latest waker, whether or not the close still waits.
struct Deadline(Arc<Mutex<DeadlineState>>);

impl Deadline {
    fn after(d: Duration) -> Self {
        let state = Arc::new(Mutex::new(DeadlineState::default()));
        let shared = state.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp-close-timer".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                std::thread::sleep(d);
                let mut s = lock(&shared);
                s.passed = true;
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            });
        if spawned.is_err() {
            // No thread, no timer: give up at once rather than wait unbounded.
            lock(&state).passed = true;
        }
        Deadline(state)
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = lock(&self.0);
        if s.passed {
            return Poll::Ready(());
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests;
