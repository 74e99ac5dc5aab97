//! The real driver and `Client` over an in-memory transport, against a fake
//! server scripted in the test (no processes, no sockets).
//!
//! - [`connection`]: the handshake in both eras, remembered eras, closing.
//! - [`calls`]: correlation, cancellation, timeouts, lists, progress tokens,
//!   callers on many threads.
//! - [`handler`]: server requests, notifications and `input_required`
//!   reaching the handler; backpressure and the concurrency cap.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientError, ClientHandler, CloseReason, VersionChoice};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, Response};
use mcp_proto::schema::ClientCapabilities;
use mcp_proto::transport::channel::{self, ChannelTransport};
use mcp_proto::transport::{TransportError, TransportErrorKind, TransportExt};
use mcp_proto::{Era, ErrorCode, ErrorObject, ProtocolVersion, RequestId};
use serde_json::{Value, json};

mod calls;
mod connection;
mod handler;

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

use test_support::params;

async fn respond(t: &mut ChannelTransport, id: RequestId, v: Value) {
    t.send(Response::new(id, raw(v)).into()).await.unwrap();
}

/// Plays the legacy handshake: rejects `server/discover`, answers `initialize`,
/// swallows `notifications/initialized`.
async fn legacy_handshake(t: &mut ChannelTransport) {
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
                        "capabilities": {"tools": {"listChanged": true}},
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

async fn next_request(t: &mut ChannelTransport) -> Request {
    loop {
        match t.recv().await {
            Some(Ok(Message::Request(r))) => return r,
            Some(Ok(_)) => continue,
            other => panic!("expected a request, got {other:?}"),
        }
    }
}
