//! The kit can fail: a transport with one fault planted fails exactly the
//! check for it (and the faultless one passes them all).

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::*;
use crate::jsonrpc::Message;
use crate::transport::channel::{self, ChannelTransport};
use crate::transport::{TransportError, TransportErrorKind, TransportExt};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Sends each pair of messages swapped.
    Reorders,
    /// Keeps the waker of the first pending `poll_recv`.
    FirstWaker,
    /// Reports a bad frame as a terminal error.
    TerminalDecode,
    /// `poll_close` fails once the peer is gone.
    CloseFailsWhenDead,
}

struct Faulty {
    inner: ChannelTransport,
    fault: Fault,
    held: Option<Message>,
    first_waker: Option<Waker>,
    peer_gone: bool,
    closed: bool,
}

impl Transport for Faulty {
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let this = self.get_mut();
        let waker = match this.fault {
            Fault::FirstWaker => this.first_waker.get_or_insert(cx.waker().clone()).clone(),
            _ => cx.waker().clone(),
        };
        let r = Pin::new(&mut this.inner).poll_recv(&mut Context::from_waker(&waker));
        match r {
            Poll::Ready(None) => this.peer_gone = true,
            Poll::Ready(Some(Err(e))) if this.fault == Fault::TerminalDecode => {
                return Poll::Ready(Some(Err(TransportError::new(
                    TransportErrorKind::Closed,
                    e,
                ))));
            }
            _ => {}
        }
        r
    }
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.get_mut().inner).poll_ready(cx)
    }
    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        let this = self.get_mut();
        if this.fault == Fault::Reorders && !this.closed {
            match this.held.take() {
                None => {
                    this.held = Some(msg);
                    return Ok(());
                }
                Some(first) => {
                    Pin::new(&mut this.inner).start_send(msg)?;
                    return Pin::new(&mut this.inner).start_send(first);
                }
            }
        }
        Pin::new(&mut this.inner).start_send(msg)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        if this.fault == Fault::CloseFailsWhenDead && this.peer_gone {
            return Poll::Ready(Err(TransportError::from_kind(TransportErrorKind::Io)));
        }
        this.closed = true;
        if let Some(m) = this.held.take() {
            let _ = Pin::new(&mut this.inner).start_send(m);
        }
        Pin::new(&mut this.inner).poll_close(cx)
    }
}

struct ChannelPeer(Option<ChannelTransport>);

impl Peer for ChannelPeer {
    async fn send(&mut self, text: String) {
        let Some(end) = self.0.as_mut() else { return };
        let _ = match text.parse::<Message>() {
            Ok(msg) => end.send(msg).await,
            Err(e) => end.inject_error(e.into()),
        };
    }
    async fn recv(&mut self) -> Option<String> {
        let msg = self.0.as_mut()?.recv().await?;
        Some(msg.map_or_else(|e| e.to_string(), |m| m.to_text()))
    }
    async fn kill(&mut self) {
        self.0 = None;
    }
}

struct Planted {
    fault: Fault,
    profile: Profile,
}

impl Harness for Planted {
    type Transport = Faulty;
    type Peer = ChannelPeer;
    async fn connect(&self) -> (Faulty, ChannelPeer) {
        let (ours, theirs) = channel::pair();
        let t = Faulty {
            inner: ours,
            fault: self.fault,
            held: None,
            first_waker: None,
            peer_gone: false,
            closed: false,
        };
        (t, ChannelPeer(Some(theirs)))
    }
    fn profile(&self) -> Profile {
        self.profile.clone()
    }
}

fn unbounded() -> Profile {
    Profile::new()
        .patience(std::time::Duration::from_secs(2))
        .skip(Check::OversizedIsScoped, "no size limit")
        .skip(Check::SendBackpressure, "unbounded")
        .skip(Check::RecvBackpressure, "unbounded")
}

/// The checks `fault` fails.
fn failed(fault: Fault, profile: Profile) -> Vec<Check> {
    let report = block_on(run_all(&Planted { fault, profile }));
    eprintln!("{fault:?}:\n{report}");
    report
        .results
        .into_iter()
        .filter(|(_, r)| r.is_err())
        .map(|(c, _)| c)
        .collect()
}

#[test]
fn each_planted_fault_fails_its_check() {
    assert_eq!(failed(Fault::None, unbounded()), []);
    assert_eq!(failed(Fault::Reorders, unbounded()), [Check::OrderToPeer]);
    assert_eq!(
        failed(Fault::FirstWaker, unbounded()),
        [Check::RecvWakesLatestWaker]
    );
    assert_eq!(
        failed(Fault::TerminalDecode, unbounded()),
        [Check::GarbageIsScoped]
    );
    assert_eq!(
        failed(Fault::CloseFailsWhenDead, unbounded()),
        [Check::CloseOnDeadConnection]
    );
}

#[test]
fn unbounded_buffers_fail_the_backpressure_checks() {
    let declared = Profile::new()
        .send_buffer_bound(64 * 1024)
        .recv_buffer_bound(64 * 1024);
    let h = Planted {
        fault: Fault::None,
        profile: declared,
    };
    for c in [Check::SendBackpressure, Check::RecvBackpressure] {
        let err = block_on(check(&h, c)).unwrap_err();
        assert!(err.message.contains("without bound"), "{err}");
    }
    // Undeclared: the check says what to declare.
    let h = Planted {
        fault: Fault::None,
        profile: Profile::new(),
    };
    let err = block_on(check(&h, Check::OversizedIsScoped)).unwrap_err();
    assert!(err.message.contains("Profile::max_message_size"), "{err}");
}

/// A generated test never passes a check the profile skips: it fails and
/// names the `skip` entry that makes it an ignored test. Run anyway (the
/// entry given, `--include-ignored`), the skip is printed, not failed.
#[test]
fn a_check_the_profile_skips_is_no_passing_test() {
    let h = Planted {
        fault: Fault::None,
        profile: unbounded(),
    };
    let run = || run_test(&h, Check::SendBackpressure, None, block_on);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_err();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(msg.contains(r#"`SendBackpressure: "unbounded"`"#), "{msg}");
    run_test(&h, Check::SendBackpressure, Some("unbounded"), block_on);
}
