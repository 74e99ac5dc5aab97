//! The real driver and `Client` over an in-memory transport, against a fake
//! server scripted in the test (no processes, no sockets).
//!
//! - [`connection`]: the handshake in both eras, remembered eras, closing.
//! - [`calls`]: correlation, cancellation, timeouts, lists, progress tokens,
//!   callers on many threads.
//! - [`handler`]: server requests, notifications and `input_required`
//!   reaching the handler; backpressure and the concurrency cap.
//! - [`tasks`]: tools called as tasks (2025-11-25).
//! - [`tickets`]: durable tasks: a ticket resumed with its deadline and expiry.
//! - [`receiver`]: the server's requests run as tasks by the client (2025-11-25).

#![allow(clippy::unwrap_used)]

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_client::{Client, ClientError, ClientHandler, CloseReason, VersionChoice};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, Response};
use mcp_proto::schema::ClientCapabilities;
use mcp_proto::transport::channel::{self, ChannelTransport};
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind, TransportExt};
use mcp_proto::{Era, ErrorCode, ErrorObject, ProtocolVersion, RequestId};
use serde_json::{Value, json};

mod calls;
mod connection;
mod handler;
mod limits;
mod receiver;
mod tasks;
mod tasks_modern;
mod tickets;

/// A connected pair: the client's end panics if anything but the driver
/// task touches it ([`DriverOnly`]), the server's end is the test's.
fn pair() -> (DriverOnly<ChannelTransport>, ChannelTransport) {
    let (client, server) = channel::pair();
    (DriverOnly::new(client), server)
}

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

use test_support::{DriverOnly, params};

async fn respond(t: &mut ChannelTransport, id: RequestId, v: Value) {
    t.send(Response::new(id, raw(v)).into()).await.unwrap();
}

/// Plays the legacy handshake: rejects `server/discover`, answers `initialize`,
/// swallows `notifications/initialized`.
/// The 2025-11-25 handshake of a server that lists tools and takes tool
/// calls as tasks.
async fn legacy_handshake(t: &mut ChannelTransport) {
    legacy_handshake_with(
        t,
        json!({"tools": {"listChanged": true}, "tasks": {"requests": {"tools": {"call": {}}}}}),
    )
    .await
}

/// The 2025-11-25 handshake of a server declaring `capabilities`.
async fn legacy_handshake_with(t: &mut ChannelTransport, capabilities: Value) {
    loop {
        let Some(Ok(m)) = t.recv().await else {
            panic!("client went away during handshake")
        };
        match m {
            Message::Request(r) if r.method == "server/discover" => {
                t.send(
                    ErrorResponse::new(
                        Some(r.id),
                        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope"),
                    )
                    .into(),
                )
                .await
                .unwrap();
            }
            Message::Request(r) if r.method == "initialize" => {
                respond(
                    t,
                    r.id,
                    json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": capabilities,
                        "serverInfo": {"name": "fake", "version": "1"},
                        "instructions": "hello"
                    }),
                )
                .await;
            }
            Message::Notification(n) if n.method == "notifications/initialized" => return,
            other => panic!("unexpected during handshake: {other:?}"),
        }
    }
}

async fn modern_handshake(t: &mut ChannelTransport) {
    let Some(Ok(Message::Request(r))) = t.recv().await else {
        panic!()
    };
    assert_eq!(r.method, "server/discover");
    respond(
        t,
        r.id,
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake", "version": "2"}}
        }),
    )
    .await;
}

/// What a test does around the channel transport: each method is the
/// channel's unless the test overrides it (to watch, hold back or inject).
trait Hooks: Send + Unpin + 'static {
    fn poll_recv(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        inner.poll_recv(cx)
    }
    fn poll_ready(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        inner.poll_ready(cx)
    }
    fn start_send(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        msg: Message,
    ) -> Result<(), TransportError> {
        inner.start_send(msg)
    }
    fn poll_flush(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        inner.poll_flush(cx)
    }
}

/// The channel transport with a test's [`Hooks`] around it.
struct Hooked<H> {
    inner: DriverOnly<ChannelTransport>,
    hooks: H,
}

impl<H: Hooks> Transport for Hooked<H> {
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let this = self.get_mut();
        this.hooks.poll_recv(Pin::new(&mut this.inner), cx)
    }
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        this.hooks.poll_ready(Pin::new(&mut this.inner), cx)
    }
    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        let this = self.get_mut();
        this.hooks.start_send(Pin::new(&mut this.inner), msg)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        this.hooks.poll_flush(Pin::new(&mut this.inner), cx)
    }
    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// `recv()` may hand the client a message of its own before the channel's.
struct OnRecv<R>(R);

impl<R: FnMut() -> Option<Message> + Send + Unpin + 'static> Hooks for OnRecv<R> {
    fn poll_recv(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        match (self.0)() {
            Some(m) => Poll::Ready(Some(Ok(m))),
            None => inner.poll_recv(cx),
        }
    }
}

/// `flush(sent, cx)`, told whether a message was sent since the last
/// flush, lets a flush go through only once it returns `Ready(Ok)`
/// (`Ready(Err)` fails it).
struct OnFlush<F> {
    flush: F,
    sent: bool,
}

impl<F> Hooks for OnFlush<F>
where
    F: FnMut(bool, &mut Context<'_>) -> Poll<Result<(), TransportError>> + Send + Unpin + 'static,
{
    fn start_send(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        msg: Message,
    ) -> Result<(), TransportError> {
        self.sent = true;
        inner.start_send(msg)
    }
    fn poll_flush(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        std::task::ready!((self.flush)(self.sent, cx))?;
        self.sent = false;
        inner.poll_flush(cx)
    }
}

impl<R> Hooked<OnRecv<R>> {
    fn on_recv(inner: DriverOnly<ChannelTransport>, recv: R) -> Self {
        Hooked {
            inner,
            hooks: OnRecv(recv),
        }
    }
}

impl<F> Hooked<OnFlush<F>> {
    fn on_flush(inner: DriverOnly<ChannelTransport>, flush: F) -> Self {
        Hooked {
            inner,
            hooks: OnFlush { flush, sent: false },
        }
    }
}

async fn next_request(t: &mut ChannelTransport) -> Request {
    loop {
        match t.recv().await {
            Some(Ok(Message::Request(r))) => return r,
            Some(Ok(_)) => continue,
            other => panic!("expected a request, got {other:?}"),
        }
    }
}
