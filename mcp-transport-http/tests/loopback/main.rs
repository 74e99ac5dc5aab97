//! The transport against a loopback hyper server with fault modes.
//!
//! - [`session`]: legacy sessions, the connection pool, session expiry,
//!   closing, URLs refused at build.
//! - [`streams`]: SSE answers (priming, keepalives, resumption, oversized
//!   events), server requests on streams, the standalone `GET` stream.
//! - [`failures`]: bad answers, body limits, redirects, timeouts, refused
//!   connections.
//! - [`modern`]: the 2026-07-28 era (headers, era detection, cancellation,
//!   re-issue, subscriptions).
//! - [`fallback`]: the 2024-11-05 HTTP+SSE fallback.
//! - [`reconnect`]: SSE reconnection loops under `retry: 0` and `Retry-After`.
//! - [`dropped`]: answers dropped (over a limit, undecodable) fail their call at once.
//! - [`auth`]: the auth hook after a 401.
//! - [`inline`]: request POSTs run on the transport's own polls.
//! - [`throttle`]: 429 and 503 with `Retry-After`.
//! - [`socket`]: what only a local socket does (the scenarios that run
//!   over both TCP and a Unix socket are marked `over_tcp_and_unix!`).
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../support/mod.rs"]
mod support;

use std::pin::Pin;
use std::time::{Duration, Instant};

use http::StatusCode;
use mcp_proto::RawJson;
use mcp_proto::error::chain;
use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId, Response};
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::{HttpError, HttpTransport, UrlProblem};
use serde_json::{Value, json};
use support::*;

/// Two tests of one scenario, `async fn $scenario(on: On)`: over TCP
/// (`$tcp`) and over a Unix socket (`$unix`, on Unix).
macro_rules! over_tcp_and_unix {
    ($scenario:ident: $tcp:ident, $unix:ident) => {
        #[tokio::test]
        async fn $tcp() {
            $scenario(On::Tcp).await
        }
        #[cfg(unix)]
        #[tokio::test]
        async fn $unix() {
            $scenario(On::Unix).await
        }
    };
}

mod auth;
mod dropped;
mod failures;
mod fallback;
mod inline;
mod modern;
mod reconnect;
mod session;
mod socket;
mod streams;
mod throttle;

fn raw(v: Value) -> Option<RawJson> {
    Some(RawJson::from_string(v.to_string()).unwrap())
}

fn req(id: i64, method: &'static str, params: Value) -> Message {
    Request::new(id.into(), method, raw(params)).into()
}

fn notif(method: &'static str, params: Value) -> Message {
    Notification::new(method, raw(params)).into()
}

async fn recv(t: &mut HttpTransport) -> Result<Message, TransportError> {
    tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .expect("no message within 10 s")
        .expect("transport ended")
}

async fn recv_ok(t: &mut HttpTransport) -> Message {
    match recv(t).await {
        Ok(m) => m,
        Err(e) => panic!("expected a message, got error {e}"),
    }
}

async fn recv_err(t: &mut HttpTransport) -> TransportError {
    match recv(t).await {
        Ok(m) => panic!("expected an error, got {m:?}"),
        Err(e) => e,
    }
}

fn result_of(m: &Message) -> Value {
    match m {
        Message::Response(r) => serde_json::from_str(r.result.get()).unwrap(),
        other => panic!("not a response: {other:?}"),
    }
}

fn set_version(t: &mut HttpTransport, v: ProtocolVersion) {
    Pin::new(t).set_protocol_version(v);
}

fn http_cause(e: &TransportError) -> &HttpError {
    e.cause()
        .and_then(|c| c.downcast_ref::<HttpError>())
        .unwrap_or_else(|| panic!("cause is not an HttpError: {e:?}"))
}

/// The legacy handshake: `initialize` (its answer taken), the revision
/// 2025-11-25, `notifications/initialized` (accepted, or refused).
async fn handshake(t: &mut HttpTransport) {
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(t).await;
    set_version(t, ProtocolVersion::V2025_11_25);
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
}

/// `initialize` answered with the session `s`; every other message 202.
fn session_s_then_accepted(r: &Rec) -> Reply2 {
    match r.rpc_method() {
        Some("initialize") => Reply2 {
            reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
            headers: vec![("mcp-session-id", "s".into())],
        },
        _ => Reply::Accepted.into(),
    }
}

/// A legacy server: JSON for initialize (with a session id), 202 for
/// notifications, SSE with a priming event for everything else.
fn legacy_handler(r: &Rec) -> Reply2 {
    match r.rpc_method() {
        Some("initialize") => Reply2 {
            reply: Reply::Json(
                StatusCode::OK,
                result(&r.id(), json!({"protocolVersion":"2025-11-25"})),
            ),
            headers: vec![("mcp-session-id", "sess-1".into())],
        },
        None if r.method == http::Method::DELETE => {
            Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "", String::new()).into()
        }
        Some(m) if m.starts_with("notifications/") => Reply::Accepted.into(),
        Some(_) => Reply::Sse(vec![
            Piece::Data("id: p1\nretry: 5\ndata:\n\n".into()),
            event(
                &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})
                    .to_string(),
            ),
            event(&result(&r.id(), json!({"ok": r.rpc_method()}))),
        ])
        .into(),
        None => Reply::Raw(StatusCode::BAD_REQUEST, "text/plain", "no".into()).into(),
    }
}
