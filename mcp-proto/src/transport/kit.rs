//! A test kit that checks a [`Transport`] against the contract in the
//! [module docs](super) (feature `test-kit`). A transport crate runs it
//! from its own tests.
//!
//! The transport's test provides a [`Harness`]: a factory that connects a
//! fresh transport under test to a fresh [`Peer`], the other end of the
//! connection as a test controls it (send a frame, receive one, kill the
//! connection). The kit then runs each [`Check`] on its own connection:
//!
//! | check | what it proves |
//! |---|---|
//! | [`OrderToPeer`](Check::OrderToPeer) | messages sent (batched: several `start_send`, one flush) reach the peer in order, intact |
//! | [`OrderFromPeer`](Check::OrderFromPeer) | messages the peer sends (requests, notifications, responses) come out of `poll_recv` in order, intact |
//! | [`GarbageIsScoped`](Check::GarbageIsScoped) | a frame that is not JSON, or JSON but not JSON-RPC, is skipped or reported as a scoped error; the next frame is read |
//! | [`OversizedIsScoped`](Check::OversizedIsScoped) | a frame over the declared size limit is one scoped `Decode` error; the next frame is read |
//! | [`DeadPeerIsTerminal`](Check::DeadPeerIsTerminal) | after the peer dies, `poll_recv` gives at most one terminal error, then `None`, and keeps saying `None`; sending fails with `Closed` or `Io` (per-request transports: the next request fails, scoped to it) |
//! | [`CloseOnDeadConnection`](Check::CloseOnDeadConnection) | `poll_close` on a dead connection returns `Ok` within the close bound, again when repeated |
//! | [`CloseFlushesAndIsIdempotent`](Check::CloseFlushesAndIsIdempotent) | a message queued (not flushed) before `poll_close` reaches the peer, then the peer sees the end; close is bounded and returns `Ok` again; afterwards `poll_recv` is `None` at once and sending fails with `Closed` |
//! | [`CloseBoundedWhenPeerStalls`](Check::CloseBoundedWhenPeerStalls) | with a peer that reads and answers nothing and unsent data queued, `poll_close` still returns within the close bound |
//! | [`RecvWakesLatestWaker`](Check::RecvWakesLatestWaker) | a pending `poll_recv` is woken when a message arrives, through the waker of its *latest* call |
//! | [`SendBackpressure`](Check::SendBackpressure) | while the peer reads nothing, sending stops being ready within the declared bound; once the peer reads, the flush's waker is woken and every message arrives in order |
//! | [`RecvBackpressure`](Check::RecvBackpressure) | while nobody polls `poll_recv`, the peer can get at most the declared number of bytes in before its sends wait; then everything arrives in order |
//!
//! What a check cannot apply to (HTTP has no connection to fill, an
//! in-memory channel has no size limit) is declared with a reason, and the
//! kit reports it as skipped, never as passed: in
//! [`transport_kit_tests!`](crate::transport_kit_tests)'s `skip` list (an
//! ignored test, with the reason), or with [`Profile::skip`] for
//! [`run_all`] (a `skip` line in the [`Report`]). A
//! check that needs a number (a buffer bound, a size limit) and finds none
//! fails and says which [`Profile`] method declares it. Every wait is
//! bounded ([`Profile::patience`]): a transport that hangs fails the check
//! instead of hanging the test.
//!
//! # Running it
//!
//! [`transport_kit_tests!`](crate::transport_kit_tests) generates one
//! `#[test]` per check, so a failure names its check, and a skipped check
//! is an ignored test; it takes the harness and a function that runs a
//! future to completion (the caller's runtime: the kit brings no runtime,
//! only a timer thread). [`run_all`] runs every check in one future and
//! returns a [`Report`].
//!
//! # Example
//!
//! The in-memory [`channel`](super::channel) checked against itself: the
//! transport under test is one end, the peer drives the other. Its queues
//! are unbounded and it carries messages, not bytes, so the backpressure
//! and size checks do not apply.
//!
//! ```
//! use mcp_proto::jsonrpc::Message;
//! use mcp_proto::transport::channel::{self, ChannelTransport};
//! use mcp_proto::transport::kit::{self, Check, Harness, Peer, Profile};
//! use mcp_proto::transport::{TransportError, TransportErrorKind, TransportExt};
//!
//! struct ChannelPeer(Option<ChannelTransport>);
//!
//! impl Peer for ChannelPeer {
//!     async fn send(&mut self, text: String) {
//!         let Some(end) = self.0.as_mut() else { return };
//!         let _ = match text.parse::<Message>() {
//!             Ok(msg) => end.send(msg).await,
//!             // No bytes to garble: a bad frame is what a decoder reports.
//!             Err(e) => end.inject_error(e.into()),
//!         };
//!     }
//!     async fn recv(&mut self) -> Option<String> {
//!         let msg = self.0.as_mut()?.recv().await?;
//!         Some(msg.map_or_else(|e| e.to_string(), |m| m.to_text()))
//!     }
//!     async fn kill(&mut self) {
//!         self.0 = None; // dropping an end closes both directions
//!     }
//! }
//!
//! struct Channels;
//!
//! impl Harness for Channels {
//!     type Transport = ChannelTransport;
//!     type Peer = ChannelPeer;
//!     async fn connect(&self) -> (ChannelTransport, ChannelPeer) {
//!         let (ours, theirs) = channel::pair();
//!         (ours, ChannelPeer(Some(theirs)))
//!     }
//!     fn profile(&self) -> Profile {
//!         Profile::new()
//!             .skip(Check::OversizedIsScoped, "messages, not bytes: no size limit")
//!             .skip(Check::SendBackpressure, "unbounded in-memory queue")
//!             .skip(Check::RecvBackpressure, "unbounded in-memory queue")
//!     }
//! }
//!
//! // In a test file: one #[test] per check, run by the kit's std executor,
//! // the checks that do not apply ignored with their reasons:
//! // mcp_proto::transport_kit_tests!(Channels, mcp_proto::transport::kit::block_on, skip {
//! //     OversizedIsScoped: "messages, not bytes: no size limit",
//! //     SendBackpressure: "unbounded in-memory queue",
//! //     RecvBackpressure: "unbounded in-memory queue",
//! // });
//!
//! let report = kit::block_on(kit::run_all(&Channels));
//! assert!(report.passed(), "{report}");
//! println!("{report}");
//! ```
//!
//! A transport on tokio passes tokio's `block_on`:
//!
//! ```ignore
//! mcp_proto::transport_kit_tests!(MyHarness, |check| {
//!     tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(check)
//! });
//! ```
//!
//! # Writing a peer
//!
//! - [`send`](Peer::send) writes one frame (a line, a WebSocket text frame,
//!   an SSE event) with exactly the text given, which may be garbage, and
//!   waits while the connection pushes back: the backpressure check
//!   measures when it starts waiting.
//! - [`recv`](Peer::recv) returns the text of the next message the
//!   transport sent, and `None` once the transport closed its side (end of
//!   input, a close frame, the session's `DELETE`).
//! - [`kill`](Peer::kill) makes the connection die as a crashed peer's
//!   would: kill the process, drop the socket, stop the server.
//! - [`stall`](Peer::stall) makes the peer stop reading and answering (a
//!   hung server). The default does nothing, which is right for a peer that
//!   reads only when `recv` is called.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::Transport;

mod checks;
mod rt;
#[cfg(test)]
mod tests;

pub use rt::block_on;

/// The other end of the connection to the transport under test, driven by
/// the kit. See [Writing a peer](self#writing-a-peer).
///
/// The methods are `async fn`s without a `Send` bound: the kit runs every
/// check in the task that calls it.
#[allow(async_fn_in_trait)]
pub trait Peer {
    /// Sends `text` to the transport as one frame, as is (it may be
    /// garbage). Waits while the connection applies backpressure.
    async fn send(&mut self, text: String);

    /// The text of the next message the transport sent; `None` once the
    /// transport has closed its side.
    async fn recv(&mut self) -> Option<String>;

    /// Makes the connection die abruptly, as a crashed peer's would.
    async fn kill(&mut self);

    /// Makes the peer stop reading and answering, as a hung peer does.
    /// The default does nothing: right for a peer that reads only in
    /// [`recv`](Peer::recv).
    async fn stall(&mut self) {}
}

/// Connects transports under test to peers, once per check.
#[allow(async_fn_in_trait)]
pub trait Harness {
    /// The transport under test.
    type Transport: Transport + Unpin;
    /// Its other end.
    type Peer: Peer;

    /// A fresh transport connected to a fresh peer, ready to send and
    /// receive (any handshake the transport needs is done).
    async fn connect(&self) -> (Self::Transport, Self::Peer);

    /// What the transport promises; the default is [`Profile::new`].
    fn profile(&self) -> Profile {
        Profile::new()
    }
}

/// One check of the contract. See the table in the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// Messages reach the peer in the order sent, intact.
    OrderToPeer,
    /// Messages from the peer come out of `poll_recv` in order, intact.
    OrderFromPeer,
    /// A frame that is not JSON-RPC is skipped or a scoped error.
    GarbageIsScoped,
    /// A frame over the size limit is one scoped `Decode` error.
    OversizedIsScoped,
    /// A dead peer is one terminal error at most, then `None` for good.
    DeadPeerIsTerminal,
    /// `poll_close` on a dead connection returns `Ok`, within the bound.
    CloseOnDeadConnection,
    /// Close flushes, the peer sees the end, and close is idempotent.
    CloseFlushesAndIsIdempotent,
    /// Close returns within its bound even when the peer hangs.
    CloseBoundedWhenPeerStalls,
    /// A pending `poll_recv` is woken through its latest waker.
    RecvWakesLatestWaker,
    /// Sending pushes back within the declared bound, and wakes after.
    SendBackpressure,
    /// Receiving pushes back on the peer within the declared bound.
    RecvBackpressure,
}

impl Check {
    /// Every check, in the order [`run_all`] runs them.
    pub const ALL: [Check; 11] = [
        Check::OrderToPeer,
        Check::OrderFromPeer,
        Check::GarbageIsScoped,
        Check::OversizedIsScoped,
        Check::DeadPeerIsTerminal,
        Check::CloseOnDeadConnection,
        Check::CloseFlushesAndIsIdempotent,
        Check::CloseBoundedWhenPeerStalls,
        Check::RecvWakesLatestWaker,
        Check::SendBackpressure,
        Check::RecvBackpressure,
    ];

    /// The check's name, as its generated test is named.
    pub fn name(self) -> &'static str {
        match self {
            Check::OrderToPeer => "order_to_peer",
            Check::OrderFromPeer => "order_from_peer",
            Check::GarbageIsScoped => "garbage_is_scoped",
            Check::OversizedIsScoped => "oversized_is_scoped",
            Check::DeadPeerIsTerminal => "dead_peer_is_terminal",
            Check::CloseOnDeadConnection => "close_on_dead_connection",
            Check::CloseFlushesAndIsIdempotent => "close_flushes_and_is_idempotent",
            Check::CloseBoundedWhenPeerStalls => "close_bounded_when_peer_stalls",
            Check::RecvWakesLatestWaker => "recv_wakes_latest_waker",
            Check::SendBackpressure => "send_backpressure",
            Check::RecvBackpressure => "recv_backpressure",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a transport reports a peer that died.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeadPeer {
    /// A connection: `poll_recv` gives at most one terminal error, then
    /// `None` for good, and sending fails (stdio, sockets, WebSocket).
    Terminal,
    /// No connection to lose: each request is its own exchange, and the
    /// next request fails with an error scoped to it (HTTP).
    PerRequest,
}

/// What the transport under test promises: its bounds, and the checks that
/// do not apply to it.
#[derive(Debug, Clone)]
pub struct Profile {
    patience: Duration,
    close_bound: Duration,
    max_message_size: Option<usize>,
    send_buffer_bound: Option<usize>,
    recv_buffer_bound: Option<usize>,
    dead_peer: DeadPeer,
    skipped: Vec<(Check, &'static str)>,
}

impl Default for Profile {
    fn default() -> Self {
        Profile::new()
    }
}

impl Profile {
    /// Every check applies; patience 10 s, close bound 5 s, no size limit
    /// or buffer bounds declared (the checks that need one fail until they
    /// are declared or skipped), a dead peer is [`DeadPeer::Terminal`].
    pub fn new() -> Self {
        Profile {
            patience: Duration::from_secs(10),
            close_bound: Duration::from_secs(5),
            max_message_size: None,
            send_buffer_bound: None,
            recv_buffer_bound: None,
            dead_peer: DeadPeer::Terminal,
            skipped: Vec::new(),
        }
    }

    /// How long the kit waits for what must happen (a message arriving, an
    /// error after the peer died) before failing the check.
    #[must_use]
    pub fn patience(mut self, d: Duration) -> Self {
        self.patience = d;
        self
    }

    /// The transport's documented bound for `poll_close`.
    #[must_use]
    pub fn close_bound(mut self, d: Duration) -> Self {
        self.close_bound = d;
        self
    }

    /// The largest incoming message the transport accepts, in bytes (as the
    /// harness configured it; a small one keeps the check fast).
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = Some(bytes);
        self
    }

    /// The most bytes of messages sending accepts while the peer reads
    /// nothing: the transport's own buffer plus what the connection itself
    /// holds (a pipe's or socket's buffers). A TCP socket's buffers grow
    /// while the connection runs: count each as large as the kernel lets it
    /// grow (on Linux the last of the three numbers in
    /// `/proc/sys/net/ipv4/tcp_wmem` and `tcp_rmem`), as the repository's
    /// `examples/tests/tcp.rs` does.
    #[must_use]
    pub fn send_buffer_bound(mut self, bytes: usize) -> Self {
        self.send_buffer_bound = Some(bytes);
        self
    }

    /// The most bytes of frames the peer can send while nobody polls
    /// `poll_recv` before its sends wait: the transport's queue plus the
    /// connection's buffers.
    #[must_use]
    pub fn recv_buffer_bound(mut self, bytes: usize) -> Self {
        self.recv_buffer_bound = Some(bytes);
        self
    }

    /// How the transport reports a dead peer (default [`DeadPeer::Terminal`]).
    #[must_use]
    pub fn dead_peer(mut self, how: DeadPeer) -> Self {
        self.dead_peer = how;
        self
    }

    /// Declares that `check` does not apply to this transport, and why:
    /// [`run_all`] reports it as skipped. Tests generated by
    /// [`transport_kit_tests!`](crate::transport_kit_tests) take their
    /// skips from the macro's `skip` list instead (ignored tests), and fail
    /// a check the profile skips but the list does not name.
    #[must_use]
    pub fn skip(mut self, check: Check, why: &'static str) -> Self {
        self.skipped.push((check, why));
        self
    }

    /// Why `check` is skipped, if it is.
    pub fn skipped(&self, check: Check) -> Option<&'static str> {
        self.skipped
            .iter()
            .find(|(c, _)| *c == check)
            .map(|(_, why)| *why)
    }
}

/// How a check ended, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The transport kept the contract.
    Passed,
    /// The profile declared that the check does not apply, for this reason.
    Skipped(&'static str),
}

/// A check the transport failed: what was expected and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The check.
    pub check: Check,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "transport kit check `{}` failed: {}",
            self.check, self.message
        )
    }
}

impl std::error::Error for Failure {}

/// A boxed check, as [`check`] returns it.
pub type CheckFuture<'a> = Pin<Box<dyn Future<Output = Result<Outcome, Failure>> + 'a>>;

/// Runs one check on a fresh connection from `harness`. Drive the future
/// with the runtime the transport needs.
pub fn check<H: Harness>(harness: &H, check: Check) -> CheckFuture<'_> {
    Box::pin(async move {
        let profile = harness.profile();
        if let Some(why) = profile.skipped(check) {
            return Ok(Outcome::Skipped(why));
        }
        checks::run(harness, &profile, check)
            .await
            .map(|()| Outcome::Passed)
            .map_err(|message| Failure { check, message })
    })
}

/// Every check's result, from [`run_all`].
#[derive(Debug, Clone)]
pub struct Report {
    /// Each check with its result, in [`Check::ALL`] order.
    pub results: Vec<(Check, Result<Outcome, Failure>)>,
}

impl Report {
    /// Whether no check failed.
    pub fn passed(&self) -> bool {
        self.results.iter().all(|(_, r)| r.is_ok())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (check, result) in &self.results {
            match result {
                Ok(Outcome::Passed) => writeln!(f, "pass  {check}")?,
                Ok(Outcome::Skipped(why)) => writeln!(f, "skip  {check}: {why}")?,
                Err(e) => writeln!(f, "FAIL  {check}: {}", e.message)?,
            }
        }
        Ok(())
    }
}

/// Runs every check, one after the other, each on its own connection.
pub async fn run_all<H: Harness>(harness: &H) -> Report {
    let mut results = Vec::new();
    for c in Check::ALL {
        results.push((c, check(harness, c).await));
    }
    Report { results }
}

/// The body of one generated test: runs `c` with `block_on` and panics
/// with the failure. A check the profile skips panics too, naming the
/// line to add to [`transport_kit_tests!`](crate::transport_kit_tests)'s
/// `skip` list: a skipped check is reported as an ignored test, never as
/// one that passed. `ignored` is the reason the macro's list gives, when the
/// test runs anyway (`cargo test -- --include-ignored`).
#[doc(hidden)]
pub fn run_test<'a, H: Harness>(
    harness: &'a H,
    c: Check,
    ignored: Option<&str>,
    block_on: impl FnOnce(CheckFuture<'a>) -> Result<Outcome, Failure>,
) {
    match (block_on(check(harness, c)), ignored) {
        (Ok(Outcome::Passed), _) => {}
        (Ok(Outcome::Skipped(why)), Some(_)) => eprintln!("skipped `{c}`: {why}"),
        (Ok(Outcome::Skipped(why)), None) => panic!(
            "the harness's profile skips transport kit check `{c}` ({why}), but \
             transport_kit_tests! runs it as a test: add `{c:?}: {why:?}` to the macro's \
             `skip {{ ... }}` list, so that the test is reported as ignored with its reason"
        ),
        (Err(e), Some(why)) => panic!("{e} (ignored by default: {why})"),
        (Err(e), None) => panic!("{e}"),
    }
}

/// Generates one `#[test]` per [`Check`] (named as [`Check::name`]) that
/// runs the check against a [`Harness`].
///
/// Needs the `test-kit` feature.
///
/// `transport_kit_tests!(harness, block_on)`: `harness` is an expression
/// making the harness (evaluated in each test), `block_on` a function or
/// closure that runs a [`CheckFuture`] to completion and returns its
/// output. See the [kit's docs](crate::transport::kit) for an example.
///
/// Checks that do not apply to the transport go in a `skip` list, each
/// with its reason: their tests are `#[ignore]`d with it, so the test
/// run counts them as ignored and prints why (`cargo test -- --ignored`
/// runs them all the same). A check the harness's [`Profile`] skips that
/// the list does not name fails its test and says what to add.
///
/// ```ignore
/// mcp_proto::transport_kit_tests!(MyHarness, block_on, skip {
///     SendBackpressure: "each message is its own request: no connection to fill",
/// });
/// ```
#[macro_export]
#[cfg_attr(docsrs, doc(cfg(feature = "test-kit")))]
macro_rules! transport_kit_tests {
    ($harness:expr, $block_on:expr $(,)?) => {
        $crate::transport_kit_tests!($harness, $block_on, skip {});
    };
    ($harness:expr, $block_on:expr, skip { $($skip:ident : $why:literal),* $(,)? } $(,)?) => {
        // A name in the list that is no check does not compile.
        $(const _: $crate::transport::kit::Check = $crate::transport::kit::Check::$skip;)*
        $crate::__transport_kit_test!(OrderToPeer, order_to_peer, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(OrderFromPeer, order_from_peer, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(GarbageIsScoped, garbage_is_scoped, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(OversizedIsScoped, oversized_is_scoped, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(DeadPeerIsTerminal, dead_peer_is_terminal, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(CloseOnDeadConnection, close_on_dead_connection, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(CloseFlushesAndIsIdempotent, close_flushes_and_is_idempotent, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(CloseBoundedWhenPeerStalls, close_bounded_when_peer_stalls, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(RecvWakesLatestWaker, recv_wakes_latest_waker, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(SendBackpressure, send_backpressure, $harness, $block_on, [$($skip: $why),*]);
        $crate::__transport_kit_test!(RecvBackpressure, recv_backpressure, $harness, $block_on, [$($skip: $why),*]);
    };
}

/// One check's test: `#[ignore]`d with its reason when the skip list (the
/// brackets) names it, which the arms below find by matching the check's
/// name as a literal, one list entry at a time.
#[doc(hidden)]
#[macro_export]
macro_rules! __transport_kit_test {
    (@test $check:ident, $name:ident, $harness:expr, $block_on:expr, $ignored:expr) => {
        #[test]
        fn $name() {
            let harness = $harness;
            $crate::transport::kit::run_test(
                &harness,
                $crate::transport::kit::Check::$check,
                $ignored,
                $block_on,
            );
        }
    };
    (@skip $check:ident, $name:ident, $harness:expr, $block_on:expr, $why:literal) => {
        #[test]
        #[ignore = $why]
        fn $name() {
            let harness = $harness;
            $crate::transport::kit::run_test(
                &harness,
                $crate::transport::kit::Check::$check,
                Some($why),
                $block_on,
            );
        }
    };
    (OrderToPeer, $n:ident, $h:expr, $b:expr, [OrderToPeer: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip OrderToPeer, $n, $h, $b, $why);
    };
    (OrderFromPeer, $n:ident, $h:expr, $b:expr, [OrderFromPeer: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip OrderFromPeer, $n, $h, $b, $why);
    };
    (GarbageIsScoped, $n:ident, $h:expr, $b:expr, [GarbageIsScoped: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip GarbageIsScoped, $n, $h, $b, $why);
    };
    (OversizedIsScoped, $n:ident, $h:expr, $b:expr, [OversizedIsScoped: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip OversizedIsScoped, $n, $h, $b, $why);
    };
    (DeadPeerIsTerminal, $n:ident, $h:expr, $b:expr, [DeadPeerIsTerminal: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip DeadPeerIsTerminal, $n, $h, $b, $why);
    };
    (CloseOnDeadConnection, $n:ident, $h:expr, $b:expr, [CloseOnDeadConnection: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip CloseOnDeadConnection, $n, $h, $b, $why);
    };
    (CloseFlushesAndIsIdempotent, $n:ident, $h:expr, $b:expr, [CloseFlushesAndIsIdempotent: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip CloseFlushesAndIsIdempotent, $n, $h, $b, $why);
    };
    (CloseBoundedWhenPeerStalls, $n:ident, $h:expr, $b:expr, [CloseBoundedWhenPeerStalls: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip CloseBoundedWhenPeerStalls, $n, $h, $b, $why);
    };
    (RecvWakesLatestWaker, $n:ident, $h:expr, $b:expr, [RecvWakesLatestWaker: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip RecvWakesLatestWaker, $n, $h, $b, $why);
    };
    (SendBackpressure, $n:ident, $h:expr, $b:expr, [SendBackpressure: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip SendBackpressure, $n, $h, $b, $why);
    };
    (RecvBackpressure, $n:ident, $h:expr, $b:expr, [RecvBackpressure: $why:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!(@skip RecvBackpressure, $n, $h, $b, $why);
    };
    // The list's first entry names another check: look on.
    ($check:ident, $n:ident, $h:expr, $b:expr, [$other:ident: $w:literal $(, $($rest:tt)*)?]) => {
        $crate::__transport_kit_test!($check, $n, $h, $b, [$($($rest)*)?]);
    };
    // Not in the list: the check runs.
    ($check:ident, $n:ident, $h:expr, $b:expr, []) => {
        $crate::__transport_kit_test!(@test $check, $n, $h, $b, None);
    };
}
