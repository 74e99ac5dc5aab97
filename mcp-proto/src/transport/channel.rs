//! An in-memory transport pair, for tests and in-process servers.
//!
//! [`pair`] returns two connected ends: what one sends, the other receives,
//! in order. Closing (or dropping) one end makes the other's `poll_recv`
//! return `None` once it has drained what was already sent; the closed
//! end's own `poll_recv` returns `None` at once.
//!
//! ```
//! # use std::task::{Context, Poll, Waker};
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = Context::from_waker(Waker::noop());
//! #     loop { if let Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! use mcp_proto::jsonrpc::Notification;
//! use mcp_proto::transport::{channel, TransportExt};
//! block_on(async {
//!     let (mut client, mut server) = channel::pair();
//!     client.send(Notification::new("notifications/initialized", None).into()).await.unwrap();
//!     let got = server.recv().await.unwrap().unwrap();
//!     assert_eq!(got.method(), Some("notifications/initialized"));
//!     drop(client);
//!     assert!(server.recv().await.is_none());
//! });
//! ```

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use super::{Transport, TransportError, TransportErrorKind};
use crate::jsonrpc::Message;

#[derive(Debug, Default)]
struct Queue {
    items: VecDeque<Result<Message, TransportError>>,
    closed: bool,
    waker: Option<Waker>,
}

#[derive(Debug, Default)]
struct Shared(Mutex<Queue>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A poisoned lock only means another thread panicked mid-push; the
        // queue itself is still consistent.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn push(&self, item: Result<Message, TransportError>) -> Result<(), TransportError> {
        let mut q = self.lock();
        if q.closed {
            return Err(TransportError::new(
                TransportErrorKind::Closed,
                "the other end of the channel is closed",
            ));
        }
        q.items.push_back(item);
        if let Some(w) = q.waker.take() {
            w.wake();
        }
        Ok(())
    }

    fn close(&self) {
        let mut q = self.lock();
        q.closed = true;
        if let Some(w) = q.waker.take() {
            w.wake();
        }
    }
}

/// One end of an in-memory transport.
#[derive(Debug)]
pub struct ChannelTransport {
    incoming: Arc<Shared>,
    outgoing: Arc<Shared>,
}

/// Two connected in-memory transports.
pub fn pair() -> (ChannelTransport, ChannelTransport) {
    let a = Arc::new(Shared::default());
    let b = Arc::new(Shared::default());
    (
        ChannelTransport {
            incoming: a.clone(),
            outgoing: b.clone(),
        },
        ChannelTransport {
            incoming: b,
            outgoing: a,
        },
    )
}

impl ChannelTransport {
    /// Delivers an error to the other end's `poll_recv`, as a failing
    /// transport would (e.g. a decode error, or a request-scoped failure).
    pub fn inject_error(&self, err: TransportError) -> Result<(), TransportError> {
        self.outgoing.push(Err(err))
    }
}

impl Drop for ChannelTransport {
    fn drop(&mut self) {
        self.outgoing.close();
        self.incoming.close();
    }
}

impl Transport for ChannelTransport {
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let mut q = self.incoming.lock();
        if let Some(item) = q.items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if q.closed {
            return Poll::Ready(None);
        }
        q.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn poll_ready(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        self.outgoing.push(Ok(msg))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.outgoing.close();
        // Closed locally: `poll_recv` says `None` at once (what was not yet
        // received is dropped), and the other end's sends fail.
        let mut incoming = self.incoming.lock();
        incoming.closed = true;
        incoming.items.clear();
        Poll::Ready(Ok(()))
    }
}
