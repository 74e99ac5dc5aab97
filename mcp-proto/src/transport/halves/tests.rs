//! Tests of [`Halves`]: the contract through the transport kit (over two
//! in-memory channels, one per direction), and what the kit cannot see:
//! both directions in flight at once, a close that cannot finish, errors.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Wake;
use std::time::Instant;

use super::*;
use crate::jsonrpc::{Notification, Request};
use crate::transport::TransportExt;

/// Runs `f` on this thread, parking between wake-ups.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// `f`'s output, run on its own thread; fails the test after 10 s instead
/// of hanging it.
fn within_10s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("still running after 10 s")
}

/// A future that is pending until the gate is opened (from any thread).
#[derive(Clone, Default)]
struct Gate(Arc<Mutex<(bool, Option<Waker>)>>);

impl Gate {
    fn open(&self) {
        let mut g = lock(&self.0);
        g.0 = true;
        if let Some(w) = g.1.take() {
            w.wake();
        }
    }

    async fn wait(&self) {
        poll_fn(|cx| {
            let mut g = lock(&self.0);
            if g.0 {
                return Poll::Ready(());
            }
            g.1 = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
    }
}

fn note(n: u64) -> Message {
    Notification::new(format!("n/{n}"), None).into()
}

/// Sends wait for `gate` (when given), then are recorded or fail as told.
struct Sender {
    gate: Option<Gate>,
    sent: Arc<Mutex<Vec<Message>>>,
    fail: Option<TransportError>,
    closed: Arc<AtomicUsize>,
}

impl Sender {
    fn new() -> Self {
        Sender {
            gate: None,
            sent: Arc::default(),
            fail: None,
            closed: Arc::default(),
        }
    }
}

impl SendHalf for Sender {
    async fn send(&mut self, msg: Message) -> Result<(), TransportError> {
        if let Some(g) = &self.gate {
            g.wait().await;
        }
        if let Some(e) = self.fail.clone() {
            return Err(e);
        }
        lock(&self.sent).push(msg);
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.closed.fetch_add(1, Ordering::SeqCst);
        if let Some(g) = &self.gate {
            g.wait().await;
        }
        Ok(())
    }
}

/// Each `recv` waits for `gate` (when given), then takes the next scripted item;
/// `Ok(None)` after the script.
struct Receiver {
    gate: Option<Gate>,
    script: VecDeque<Result<Message, TransportError>>,
}

impl RecvHalf for Receiver {
    async fn recv(&mut self) -> Result<Option<Message>, TransportError> {
        if let Some(g) = &self.gate {
            g.wait().await;
        }
        self.script.pop_front().transpose()
    }
}

fn receiver(script: impl IntoIterator<Item = Result<Message, TransportError>>) -> Receiver {
    Receiver {
        gate: None,
        script: script.into_iter().collect(),
    }
}

fn noop_poll<T>(f: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
    f(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_send_in_flight_does_not_stop_receiving_nor_the_other_way_round() {
    let gate = Gate::default();
    let mut sender = Sender::new();
    sender.gate = Some(gate.clone());
    let sent = sender.sent.clone();
    let recv_gate = Gate::default();
    let mut rx = receiver([Ok(note(1))]);
    rx.gate = Some(recv_gate.clone());
    let mut t = Halves::new(sender, rx);

    // A send that cannot finish (the peer is not reading) ...
    Pin::new(&mut t).start_send(note(0)).unwrap();
    assert!(noop_poll(|cx| Pin::new(&mut t).poll_flush(cx)).is_pending());
    assert!(noop_poll(|cx| Pin::new(&mut t).poll_ready(cx)).is_pending());
    // ... and a receive that waits for the peer, both in flight.
    assert!(noop_poll(|cx| Pin::new(&mut t).poll_recv(cx)).is_pending());
    recv_gate.open();
    // Ready at once: no wait for the send (a poll, so a regression fails, not hangs).
    let Poll::Ready(Some(Ok(got))) = noop_poll(|cx| Pin::new(&mut t).poll_recv(cx)) else {
        panic!("the receive waited for the send in flight");
    };
    assert_eq!(got.method(), Some("n/1"));
    assert!(lock(&sent).is_empty(), "the send is still in flight");
    // The peer reads again: the send completes, then the next one.
    gate.open();
    block_on(poll_fn(|cx| Pin::new(&mut t).poll_flush(cx))).unwrap();
    block_on(t.send(note(2))).unwrap();
    let names: Vec<_> = lock(&sent)
        .iter()
        .map(|m| m.method().map(str::to_owned))
        .collect();
    assert_eq!(names, [Some("n/0".into()), Some("n/2".into())]);
}

#[test]
fn start_send_with_a_message_in_flight_is_refused_and_keeps_it() {
    let gate = Gate::default();
    let mut sender = Sender::new();
    sender.gate = Some(gate.clone());
    let sent = sender.sent.clone();
    let mut t = Halves::new(sender, receiver([]));
    Pin::new(&mut t).start_send(note(0)).unwrap();
    let e = Pin::new(&mut t).start_send(note(1)).unwrap_err();
    assert_eq!(e.kind(), TransportErrorKind::Other);
    gate.open();
    block_on(poll_fn(|cx| Pin::new(&mut t).poll_flush(cx))).unwrap();
    assert_eq!(lock(&sent).len(), 1);
    assert_eq!(lock(&sent)[0].method(), Some("n/0"));
}

#[test]
fn scoped_receive_errors_go_on_and_a_terminal_one_ends_receiving() {
    let bad = TransportError::from("{".parse::<Message>().unwrap_err());
    let gone = TransportError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
    let rx = receiver([Ok(note(0)), Err(bad), Ok(note(1)), Err(gone), Ok(note(2))]);
    let mut t = Halves::new(Sender::new(), rx);
    block_on(async {
        assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("n/0"));
        let e = t.recv().await.unwrap().unwrap_err();
        assert!(!e.is_terminal() && e.kind() == TransportErrorKind::Decode);
        assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("n/1"));
        let e = t.recv().await.unwrap().unwrap_err();
        assert!(e.is_terminal() && e.kind() == TransportErrorKind::Closed);
        // Nothing after a terminal error, ever.
        assert!(t.recv().await.is_none());
        assert!(t.recv().await.is_none());
    });
}

#[test]
fn a_terminal_send_error_fails_later_sends_with_closed() {
    let mut sender = Sender::new();
    sender.fail = Some(TransportError::from(std::io::Error::from(
        std::io::ErrorKind::BrokenPipe,
    )));
    let mut t = Halves::new(sender, receiver([]));
    let e = block_on(t.send(note(0))).unwrap_err();
    assert_eq!(e.kind(), TransportErrorKind::Closed);
    let e = block_on(t.send(note(1))).unwrap_err();
    assert_eq!(e.kind(), TransportErrorKind::Closed);
    assert!(
        crate::error::chain(&e)
            .to_string()
            .contains("earlier send failed")
    );

    // A send error scoped to a request fails that send only.
    let mut sender = Sender::new();
    sender.fail =
        Some(TransportError::new(TransportErrorKind::Protocol, "refused").with_request(1.into()));
    let mut t = Halves::new(sender, receiver([]));
    let ping: Message = Request::new(1.into(), "ping", None).into();
    assert!(block_on(t.send(ping.clone())).is_err());
    assert!(block_on(t.send(ping)).is_err_and(|e| e.kind() == TransportErrorKind::Protocol));
}

#[test]
fn close_flushes_shuts_down_and_is_idempotent() {
    let sender = Sender::new();
    let (sent, closed) = (sender.sent.clone(), sender.closed.clone());
    let mut t = Halves::new(sender, receiver([Ok(note(9))]));
    Pin::new(&mut t).start_send(note(0)).unwrap();
    block_on(t.close()).unwrap();
    assert_eq!(lock(&sent).len(), 1, "the queued message went out first");
    assert_eq!(closed.load(Ordering::SeqCst), 1);
    block_on(t.close()).unwrap();
    assert_eq!(closed.load(Ordering::SeqCst), 1, "closed once");
    // Nothing is received after a local close, even what was there.
    assert!(matches!(
        noop_poll(|cx| Pin::new(&mut t).poll_recv(cx)),
        Poll::Ready(None)
    ));
    let e = noop_poll(|cx| Pin::new(&mut t).poll_ready(cx));
    assert!(matches!(e, Poll::Ready(Err(e)) if e.kind() == TransportErrorKind::Closed));
    let e = Pin::new(&mut t).start_send(note(1)).unwrap_err();
    assert_eq!(e.kind(), TransportErrorKind::Closed);
}

#[test]
fn a_close_that_cannot_finish_gives_up_after_its_timeout() {
    // The peer never reads: the message in flight never goes out.
    let gate = Gate::default();
    let mut sender = Sender::new();
    sender.gate = Some(gate.clone());
    let mut t = Halves::new(sender, receiver([])).with_close_timeout(Duration::from_millis(100));
    Pin::new(&mut t).start_send(note(0)).unwrap();
    let started = Instant::now();
    let (e, mut t) = within_10s(move || (block_on(t.close()).unwrap_err(), t));
    assert_eq!(e.kind(), TransportErrorKind::Timeout);
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Closed for good: again is Ok at once.
    block_on(t.close()).unwrap();
    // A close that hangs in SendHalf::close is bounded the same way.
    let gate = Gate::default();
    let mut sender = Sender::new();
    sender.gate = Some(gate.clone());
    gate.open();
    let mut t = Halves::new(sender, receiver([])).with_close_timeout(Duration::from_millis(100));
    block_on(t.send(note(0))).unwrap();
    let stuck = Gate::default();
    if let Slot::Idle(s) = &mut t.send {
        s.gate = Some(stuck);
    }
    let e = within_10s(move || block_on(t.close()).unwrap_err());
    assert_eq!(e.kind(), TransportErrorKind::Timeout);
}

/// The kit, over two in-memory channels: one carries what the transport
/// sends, the other what the peer sends.
#[cfg(feature = "test-kit")]
mod kit {
    use super::*;
    use crate::transport::channel::{self, ChannelTransport};
    use crate::transport::kit::{Harness, Peer};

    struct Out(ChannelTransport);
    struct In(ChannelTransport);

    impl SendHalf for Out {
        async fn send(&mut self, msg: Message) -> Result<(), TransportError> {
            self.0.send(msg).await
        }
        async fn close(&mut self) -> Result<(), TransportError> {
            self.0.close().await
        }
    }

    impl RecvHalf for In {
        async fn recv(&mut self) -> Result<Option<Message>, TransportError> {
            self.0.recv().await.transpose()
        }
    }

    struct ChannelsPeer {
        to_us: Option<ChannelTransport>,
        from_us: Option<ChannelTransport>,
    }

    impl Peer for ChannelsPeer {
        async fn send(&mut self, text: String) {
            let Some(end) = self.to_us.as_mut() else {
                return;
            };
            let _ = match text.parse::<Message>() {
                Ok(msg) => end.send(msg).await,
                Err(e) => end.inject_error(e.into()),
            };
        }
        async fn recv(&mut self) -> Option<String> {
            let msg = self.from_us.as_mut()?.recv().await?;
            Some(msg.map_or_else(|e| e.to_string(), |m| m.to_text()))
        }
        async fn kill(&mut self) {
            self.to_us = None;
            self.from_us = None;
        }
    }

    struct Channels;

    impl Harness for Channels {
        type Transport = Halves<Out, In>;
        type Peer = ChannelsPeer;
        async fn connect(&self) -> (Self::Transport, ChannelsPeer) {
            let (ours_out, theirs_in) = channel::pair();
            let (theirs_out, ours_in) = channel::pair();
            let t = Halves::new(Out(ours_out), In(ours_in));
            let peer = ChannelsPeer {
                to_us: Some(theirs_out),
                from_us: Some(theirs_in),
            };
            (t, peer)
        }
    }

    crate::transport_kit_tests!(
        Channels,
        crate::transport::kit::block_on,
        skip {
            OversizedIsScoped: "messages, not bytes: no size limit",
            SendBackpressure: "unbounded in-memory queue",
            RecvBackpressure: "unbounded in-memory queue",
        }
    );
}
