//! [`RelayDriver`]: the one future that does a relay's IO.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_proto::error::chain;
use mcp_proto::jsonrpc::Message;
use mcp_proto::transport::{BoxTransport, TransportError};

use super::{Relay, RelayConfig, RelayEnd, ToServer};

/// Rounds of work per `poll` before the driver yields to the runtime, so
/// a side that never stops sending cannot starve the tasks the transports
/// themselves run (HTTP's requests) on a single-threaded runtime.
const ROUNDS_PER_POLL: usize = 64;

/// Moves messages between a host's transport and a server's through a
/// [`Relay`], until one side ends; resolves to why it ended, after closing
/// the other side (each transport bounds its own close).
///
/// One future, polled by one task, does all the IO (as `mcp-client`'s
/// driver does): it reads a side only while the relay
/// [wants](Relay::wants_host) it, hands a side a message only when that
/// side's transport is [ready](mcp_proto::transport::Transport::poll_ready),
/// and flushes after each batch. It needs no runtime of its own; the
/// transports may (HTTP spawns tokio tasks).
///
/// ```no_run
/// # async fn run(host: mcp_proto::transport::BoxTransport, server: mcp_proto::transport::BoxTransport) {
/// use mcp_client::relay::{RelayConfig, RelayDriver, RelayEnd};
///
/// match RelayDriver::new(host, server, RelayConfig::default()).await {
///     RelayEnd::HostClosed => {}
///     other => eprintln!("the server's side ended: {other:?}"),
/// }
/// # }
/// ```
#[must_use = "a relay moves nothing unless it is awaited"]
pub struct RelayDriver {
    relay: Relay,
    host: Side,
    server: Side,
}

impl fmt::Debug for RelayDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RelayDriver")
            .field("relay", &self.relay)
            .finish_non_exhaustive()
    }
}

/// One side's transport and what the driver holds for it.
struct Side {
    transport: BoxTransport,
    /// A message taken from the relay that the transport was not ready for.
    held: Option<Message>,
    /// Something was sent since the last completed flush.
    unflushed: bool,
    /// `poll_close` finished.
    closed: bool,
}

impl Side {
    fn new(transport: BoxTransport) -> Self {
        Side {
            transport,
            held: None,
            unflushed: false,
            closed: false,
        }
    }

    /// Sends `held` when the transport is ready: `Ok(true)` if it went.
    fn send_held(&mut self, cx: &mut Context<'_>) -> Result<bool, TransportError> {
        if self.held.is_none() {
            return Ok(false);
        }
        match self.transport.as_mut().poll_ready(cx) {
            Poll::Pending => Ok(false),
            Poll::Ready(Err(e)) => {
                self.held = None;
                Err(e)
            }
            Poll::Ready(Ok(())) => {
                let Some(msg) = self.held.take() else {
                    return Ok(false);
                };
                self.unflushed = true;
                self.transport.as_mut().start_send(msg).map(|()| true)
            }
        }
    }

    /// Flushes what was sent; `Ok(true)` once nothing is left unflushed.
    fn flush(&mut self, cx: &mut Context<'_>) -> Result<bool, TransportError> {
        if !self.unflushed {
            return Ok(true);
        }
        match self.transport.as_mut().poll_flush(cx) {
            Poll::Pending => Ok(false),
            Poll::Ready(r) => {
                self.unflushed = false;
                r.map(|()| true)
            }
        }
    }

    /// Whether everything handed to this side was sent and flushed.
    fn idle(&self) -> bool {
        self.held.is_none() && !self.unflushed
    }

    /// Polls the close; `true` once it finished (its error is only logged:
    /// the transport is closed either way).
    fn close(&mut self, cx: &mut Context<'_>, name: &str) -> bool {
        if self.closed {
            return true;
        }
        match self.transport.as_mut().poll_close(cx) {
            Poll::Pending => false,
            Poll::Ready(r) => {
                if let Err(e) = r {
                    tracing::debug!(error = %chain(&e), "closing the {name}'s side");
                }
                self.closed = true;
                true
            }
        }
    }
}

impl RelayDriver {
    /// A relay between `host` (the client's side: its requests come in
    /// through `poll_recv`) and `server`.
    pub fn new(host: BoxTransport, server: BoxTransport, config: RelayConfig) -> Self {
        RelayDriver {
            relay: Relay::new(config),
            host: Side::new(host),
            server: Side::new(server),
        }
    }

    /// One round: hand each side what the relay has for it, then read the
    /// sides the relay wants. `true` if anything moved.
    fn round(&mut self, cx: &mut Context<'_>) -> bool {
        let mut moved = false;
        // To the server.
        loop {
            if self.server.held.is_none() {
                match self.relay.poll_to_server() {
                    Some(ToServer::Message(m)) => self.server.held = Some(m),
                    Some(ToServer::ProtocolVersion(v)) => {
                        self.server.transport.as_mut().set_protocol_version(v);
                        moved = true;
                        continue;
                    }
                    // `ToServer` is non-exhaustive within the crate too.
                    #[allow(unreachable_patterns)]
                    Some(_) => continue,
                    None => break,
                }
            }
            match self.server.send_held(cx) {
                Ok(true) => moved = true,
                Ok(false) => break,
                Err(e) => {
                    moved = true;
                    self.relay.handle_server_error(e);
                }
            }
        }
        if let Err(e) = self.server.flush(cx) {
            moved = true;
            self.relay.handle_server_error(e);
        }
        // To the host.
        loop {
            if self.host.held.is_none() {
                match self.relay.poll_to_host() {
                    Some(m) => self.host.held = Some(m),
                    None => break,
                }
            }
            match self.host.send_held(cx) {
                Ok(true) => moved = true,
                Ok(false) => break,
                Err(e) => {
                    moved = true;
                    self.relay.handle_host_error(e);
                }
            }
        }
        if let Err(e) = self.host.flush(cx) {
            moved = true;
            self.relay.handle_host_error(e);
        }
        // From the host: only while its messages have somewhere to go (and
        // the server's transport took the last one).
        if self.relay.wants_host() && self.server.held.is_none() {
            match self.host.transport.as_mut().poll_recv(cx) {
                Poll::Ready(Some(Ok(m))) => {
                    moved = true;
                    self.relay.handle_host(m);
                }
                Poll::Ready(Some(Err(e))) => {
                    moved = true;
                    self.relay.handle_host_error(e);
                }
                Poll::Ready(None) => {
                    moved = true;
                    self.relay.handle_host_closed();
                }
                Poll::Pending => {}
            }
        }
        // From the server, likewise.
        if self.relay.wants_server() && self.host.held.is_none() {
            match self.server.transport.as_mut().poll_recv(cx) {
                Poll::Ready(Some(Ok(m))) => {
                    moved = true;
                    self.relay.handle_server(m);
                }
                Poll::Ready(Some(Err(e))) => {
                    moved = true;
                    self.relay.handle_server_error(e);
                }
                Poll::Ready(None) => {
                    moved = true;
                    self.relay.handle_server_closed(None);
                }
                Poll::Pending => {}
            }
        }
        moved
    }
}

impl Future for RelayDriver {
    type Output = RelayEnd;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<RelayEnd> {
        let this = self.get_mut();
        for _ in 0..ROUNDS_PER_POLL {
            let moved = this.round(cx);
            if let Some(end) = this.relay.ended() {
                // What is left for the side that is still there goes out,
                // then that side is closed.
                let (left, name) = match end {
                    RelayEnd::HostClosed => (&mut this.server, "server"),
                    _ => (&mut this.host, "host"),
                };
                if moved || !left.idle() {
                    if moved {
                        continue;
                    }
                    return Poll::Pending;
                }
                if !left.close(cx, name) {
                    return Poll::Pending;
                }
                let end = end.clone();
                return Poll::Ready(end);
            }
            if !moved {
                return Poll::Pending;
            }
        }
        // Still busy: let the runtime run its other tasks, then go on.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
