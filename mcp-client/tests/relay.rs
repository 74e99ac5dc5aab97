//! The relay driver between two in-memory transports: a real `Client` as
//! the host on one side, a scripted server on the other; and a host that
//! stops reading, to see the relay stop reading the server.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_client::relay::{RelayConfig, RelayDriver, RelayEnd};
use mcp_client::{Client, VersionChoice};
use mcp_proto::jsonrpc::{Message, Notification, Response};
use mcp_proto::transport::{BoxTransport, Transport, TransportError, TransportExt, channel};
use mcp_proto::{ProtocolVersion, RawJson};
use serde_json::{Value, json};

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

/// A legacy server over `t` that answers `initialize`, `tools/call` (after
/// a progress notification and a question to the client, whose answer it
/// returns) and `ping`; it records the ids it saw.
async fn serve(mut t: channel::ChannelTransport, ids: Arc<std::sync::Mutex<Vec<Value>>>) {
    while let Some(Ok(msg)) = t.recv().await {
        let Message::Request(req) = msg else { continue };
        ids.lock().unwrap().push(req.id.to_value());
        let params: Value = req
            .params
            .as_ref()
            .map_or(Value::Null, |p| p.decode().unwrap());
        let result = match &*req.method {
            "initialize" => json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}
            }),
            "tools/call" => {
                let token = params["_meta"]["progressToken"].clone();
                let progress = json!({"progressToken": token, "progress": 1, "total": 1});
                t.send(Notification::new("notifications/progress", Some(raw(progress))).into())
                    .await
                    .unwrap();
                let ask = mcp_proto::jsonrpc::Request::new("q-1".into(), "roots/list", None);
                t.send(ask.into()).await.unwrap();
                let answer = loop {
                    match t.recv().await {
                        Some(Ok(Message::Response(r))) => break r,
                        Some(Ok(_)) => continue,
                        _ => return,
                    }
                };
                assert_eq!(
                    answer.id,
                    "q-1".into(),
                    "the answer carries the server's id"
                );
                json!({"content": [{"type": "text", "text": answer.result.get()}]})
            }
            _ => json!({}),
        };
        t.send(Response::new(req.id, raw(result)).into())
            .await
            .unwrap();
    }
}

/// The host's answer to `roots/list`.
struct Roots;

impl mcp_client::ClientHandler for Roots {
    fn capabilities(&self) -> mcp_proto::schema::ClientCapabilities {
        mcp_proto::schema::ClientCapabilities::default().with_roots()
    }
    async fn list_roots(
        &self,
        _: mcp_proto::schema::ListRootsParams,
    ) -> Result<mcp_proto::schema::ListRootsResult, mcp_proto::ErrorObject> {
        Ok(mcp_proto::schema::ListRootsResult::new(vec![
            mcp_proto::schema::Root::new("file:///tmp"),
        ]))
    }
}

#[tokio::test]
async fn a_client_calls_a_tool_through_the_relay_with_progress_and_a_server_request() {
    let (client_end, host_end) = channel::pair();
    let (relay_server_end, server_end) = channel::pair();
    let ids = Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = tokio::spawn(serve(server_end, ids.clone()));
    let relay = tokio::spawn(RelayDriver::new(
        Box::pin(host_end),
        Box::pin(relay_server_end),
        RelayConfig::default(),
    ));
    let client = Client::builder("host", "1")
        .protocol(VersionChoice::Pinned(ProtocolVersion::V2025_06_18))
        .handler(Roots)
        .connect(client_end)
        .await
        .unwrap();
    let progressed = Arc::new(AtomicUsize::new(0));
    let p = progressed.clone();
    let result = client
        .call_tool("echo", json!({}))
        .on_progress(move |_| {
            p.fetch_add(1, Ordering::Relaxed);
        })
        .await
        .unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(
        text.contains("file:///tmp"),
        "the host answered roots/list: {text}"
    );
    assert_eq!(progressed.load(Ordering::Relaxed), 1);
    // The server saw the relay's ids, 1 and up, whatever the client chose.
    assert_eq!(*ids.lock().unwrap(), [json!(1), json!(2)]);
    client.close().await;
    let end = tokio::time::timeout(Duration::from_secs(5), relay)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(end, RelayEnd::HostClosed), "{end:?}");
    // The relay closed the server's side after the host's.
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap();
}

/// A host that takes `room` messages and then never again (its output
/// pipe full), and never sends anything.
struct Stalled {
    room: usize,
}

impl Transport for Stalled {
    fn poll_recv(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        Poll::Pending
    }
    fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.room == 0 {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    }
    fn start_send(mut self: Pin<&mut Self>, _: Message) -> Result<(), TransportError> {
        self.room -= 1;
        Ok(())
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }
}

/// A server with an endless supply of notifications, counting how many
/// were taken from it.
struct Firehose {
    taken: Arc<AtomicUsize>,
}

impl Transport for Firehose {
    fn poll_recv(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        self.taken.fetch_add(1, Ordering::Relaxed);
        let n = Notification::new("notifications/message", Some(raw(json!({"data": "x"}))));
        Poll::Ready(Some(Ok(n.into())))
    }
    fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }
    fn start_send(self: Pin<&mut Self>, _: Message) -> Result<(), TransportError> {
        Ok(())
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn a_host_that_stops_reading_stops_the_relay_reading_the_server() {
    let taken = Arc::new(AtomicUsize::new(0));
    let host: BoxTransport = Box::pin(Stalled { room: 10 });
    let server: BoxTransport = Box::pin(Firehose {
        taken: taken.clone(),
    });
    let relay = tokio::spawn(RelayDriver::new(host, server, RelayConfig::default()));
    // Long enough for a relay without backpressure to take millions.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let n = taken.load(Ordering::Relaxed);
    // What the host took, one held for it, nothing more.
    assert_eq!(n, 11, "messages taken from the server");
    relay.abort();
}
