//! The client over this transport, end to end, where what the transport
//! reports decides what the client does: a session the server ended is
//! renewed (a hostile server and the Python SDK's idle timeout), a server
//! that ends every session is given up on, and a refusal's `Retry-After`
//! never stretches a call past its deadline.
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::StatusCode;
use mcp_client::{Client, ClientError, CloseReason, VersionChoice};
use mcp_proto::ProtocolVersion;
use mcp_proto::transport::TransportErrorKind;
use mcp_transport_http::HttpTransport;
use serde_json::json;
use support::*;
use tokio::process::Child;

fn init_result(id: &serde_json::Value) -> String {
    result(
        id,
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}
        }),
    )
}

/// A legacy server with sessions `s1`, `s2`, … (one per `initialize`):
/// those for which `forget(n)` holds end at their `notifications/initialized`
/// (404 to it and to everything after); 400 to a message without a session
/// id; `{}` to every request of a live session.
fn sessions(
    forget: impl Fn(usize) -> bool + Send + Sync + 'static,
) -> impl Fn(&Rec) -> Reply2 + Send + Sync + 'static {
    let started = Arc::new(AtomicUsize::new(0));
    move |r: &Rec| {
        let session = r.header("mcp-session-id").map(str::to_owned);
        let number = session
            .as_deref()
            .and_then(|s| s.strip_prefix('s'))
            .and_then(|n| n.parse::<usize>().ok());
        match (r.rpc_method(), number) {
            (Some("initialize"), None) if session.is_none() => {
                let n = started.fetch_add(1, Ordering::SeqCst) + 1;
                Reply2 {
                    reply: Reply::Json(StatusCode::OK, init_result(&r.id())),
                    headers: vec![("mcp-session-id", format!("s{n}"))],
                }
            }
            (_, None) if r.method == http::Method::POST => Reply::Raw(
                StatusCode::BAD_REQUEST,
                "text/plain",
                "Bad Request: no session id".into(),
            )
            .into(),
            (_, None) => Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "", String::new()).into(),
            (_, Some(n)) if forget(n) => Reply::Raw(
                StatusCode::NOT_FOUND,
                "text/plain",
                "Session not found".into(),
            )
            .into(),
            (Some(m), Some(_)) if m.starts_with("notifications/") => Reply::Accepted.into(),
            (Some(_), Some(_)) => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
            (None, Some(_)) => Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "", String::new()).into(),
        }
    }
}

fn client_builder() -> mcp_client::ClientBuilder {
    Client::builder("net-test", "0.1.0")
        .protocol(VersionChoice::Pinned(ProtocolVersion::V2025_11_25))
        .resend_on_session_expiry(true)
        .request_timeout(Duration::from_secs(5))
}

/// The shape that made `mcp` exit 4: the server forgets the session at its
/// `notifications/initialized`. The client starts a new session before it
/// sends anything else; the call succeeds; no request ever goes out without
/// a session id.
#[tokio::test]
async fn a_session_ended_at_initialized_is_renewed_before_anything_else() {
    let server = serve(sessions(|n| n == 1)).await;
    let client = client_builder()
        .connect(HttpTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), client.ping())
        .await
        .expect("the call was left pending")
        .unwrap();
    let reqs = server.requests();
    let trace: Vec<String> = reqs
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r.method,
                r.rpc_method().unwrap_or("-"),
                r.header("mcp-session-id").unwrap_or("-")
            )
        })
        .collect();
    eprintln!("{trace:#?}");
    let bare: Vec<_> = reqs
        .iter()
        .filter(|r| r.header("mcp-session-id").is_none() && r.method == http::Method::POST)
        .filter_map(|r| r.rpc_method())
        .collect();
    assert_eq!(bare, ["initialize", "initialize"], "{trace:#?}");
    let ping = reqs
        .iter()
        .find(|r| r.rpc_method() == Some("ping"))
        .unwrap();
    assert_eq!(ping.header("mcp-session-id"), Some("s2"));
    client.close().await;
}

/// A server that ends every session at its `notifications/initialized`:
/// the client starts three new sessions, then closes with a typed reason
/// instead of looping; a call fails with it, in bounded time.
#[tokio::test]
async fn a_server_that_ends_every_session_is_given_up_on() {
    let server = serve(sessions(|_| true)).await;
    let started = Instant::now();
    let last: Result<(), ClientError> = tokio::time::timeout(Duration::from_secs(10), async {
        // A call may fail on its own first (its re-send was ended too);
        // then the connection closes with the reason.
        let client = client_builder()
            .connect(HttpTransport::new(&server.url).unwrap())
            .await?;
        loop {
            match client.ping().await {
                Err(e @ ClientError::Closed(_)) => return Err(e),
                Err(e) => eprintln!("a call failed on its own: {e}"),
                Ok(()) => panic!("a session worked"),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the client looped or hung");
    let e = last.unwrap_err();
    eprintln!("after {:?}: {e}", started.elapsed());
    assert!(
        matches!(
            &e,
            ClientError::Closed(CloseReason::SessionsLost { renewals: 3, .. })
        ),
        "{e:?}"
    );
    let inits = server
        .requests()
        .iter()
        .filter(|r| r.rpc_method() == Some("initialize"))
        .count();
    assert_eq!(inits, 4);
}

/// A server refusing a call with `Retry-After: 30`, a call with a 2 s
/// timeout: it ends within its deadline (plus the 1 s slack), not after 30 s.
#[tokio::test]
async fn a_retry_after_never_stretches_a_call_past_its_deadline() {
    let server = serve(|r: &Rec| match r.rpc_method() {
        Some("initialize") => Reply::Json(StatusCode::OK, init_result(&r.id())).into(),
        Some("tools/call") => Reply2 {
            reply: Reply::Raw(
                StatusCode::TOO_MANY_REQUESTS,
                "text/plain",
                "slow down".into(),
            ),
            headers: vec![("retry-after", "30".into())],
        },
        _ => Reply::Accepted.into(),
    })
    .await;
    let client = client_builder()
        .request_timeout(Duration::from_secs(2))
        .connect(HttpTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    let started = Instant::now();
    let e = tokio::time::timeout(Duration::from_secs(10), client.call_tool("t", json!({})))
        .await
        .expect("the call outlived its deadline by far")
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("after {took:?}: {e}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // With the deadline passed to the transport, at once and typed; without,
    // the client's own timeout.
    match &e {
        ClientError::Transport(t) => assert_eq!(t.kind(), TransportErrorKind::Throttled, "{e:?}"),
        ClientError::Timeout { .. } => {}
        other => panic!("{other:?}"),
    }
    client.close().await;
}

async fn python_with_idle_timeout(seconds: f64) -> Option<(Child, String)> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/py_server.py");
    let port = test_support::free_port();
    let cmd = test_support::python_running(script)?
        .arg(port.to_string())
        .arg("streamable-http")
        .arg(seconds.to_string())
        .to_tokio();
    let child = test_support::listening(cmd, port).await;
    Some((child, format!("http://127.0.0.1:{port}/mcp")))
}

/// The Python SDK (`mcp`), a real peer, ends a session idle for a second
/// (`session_idle_timeout`): its id then answers 404. The next call starts
/// a new session and is re-sent in it (the server did not process it).
#[tokio::test]
async fn python_sdk_an_idle_session_it_ended_is_renewed() {
    python_session_ended_then(|_| Ok(())).await;
}

/// The same real peer, the loss found by a notification this time (the
/// client's `notifications/roots/list_changed` after the session ended):
/// the 404 to it starts a new session, so the next call carries one
/// (before, the session id was dropped and the call went out without it:
/// the Python SDK answers that 400 "Missing session ID").
#[tokio::test]
async fn python_sdk_a_session_lost_on_a_notification_is_renewed() {
    python_session_ended_then(|client| client.notify("notifications/roots/list_changed", None))
        .await;
}

/// A call, then an idle wait past the server's session timeout, then
/// `then` (500 ms for what it sends to be answered), then a call that must
/// succeed.
async fn python_session_ended_then(then: impl FnOnce(&Client) -> Result<(), ClientError>) {
    let Some((_child, url)) = python_with_idle_timeout(1.0).await else {
        return;
    };
    let client = client_builder()
        .connect(HttpTransport::new(&url).unwrap())
        .await
        .unwrap();
    let first = client
        .call_tool("echo", json!({"text": "one"}))
        .await
        .unwrap();
    assert!(format!("{first:?}").contains("echo: one"), "{first:?}");
    // Idle past the server's timeout: it ends the session.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    then(&client).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second = tokio::time::timeout(
        Duration::from_secs(20),
        client.call_tool("echo", json!({"text": "two"})),
    )
    .await
    .expect("the call was left pending")
    .unwrap();
    assert!(format!("{second:?}").contains("echo: two"), "{second:?}");
    client.close().await;
}
