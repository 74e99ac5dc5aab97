//! The client's spans over Streamable HTTP, against the Python SDK's
//! server in both eras: the HTTP attributes (`network.transport` `tcp`,
//! `network.protocol.name`, `server.address`, `server.port`, the session
//! id of the handshake era), and the server's own span (OpenTelemetry's
//! Python SDK) as the child of ours, carried in `_meta`.
//!
//! Current-thread runtime: the capturing subscriber is the thread's
//! default, and the driver and the POSTs run on that thread.
#![allow(missing_docs, clippy::unwrap_used, clippy::await_holding_lock)]

#[path = "support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::time::Duration;

use mcp_client::{Client, VersionChoice};
use mcp_proto::Era;
use mcp_transport_http::HttpTransport;
use serde_json::json;
use test_support::otel::{Capture, SpanKind, attr, parent};
use tracing::Instrument;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::StatusCode;
use mcp_proto::ProtocolVersion;
use support::{Rec, Reply, Reply2, result, serve};
use test_support::otel::{events, find};

/// Held for a whole test: tracing's callsite interest cache is shared by
/// the threads' scoped subscribers (see mcp-client's tests/telemetry.rs).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn spans_file(era: Era) -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcp-http-otel-{}-{era:?}.jsonl",
        std::process::id()
    ))
}

fn server_span(file: &PathBuf, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("the server recorded no span {name:?}:\n{text}"))
}

#[tokio::test(flavor = "current_thread")]
async fn http_spans_and_the_server_span_as_our_child() {
    let _serial = one_at_a_time();
    for era in [Era::Legacy, Era::Modern] {
        let Some(peer) = test_support::python_server() else {
            return;
        };
        let file = spans_file(era);
        let _ = std::fs::remove_file(&file);
        let port = test_support::free_port();
        let mut cmd = peer.arg("http").arg(port.to_string()).to_tokio();
        cmd.env("MCP_TEST_OTEL_SPANS", &file);
        let _server = test_support::listening(cmd, port).await;
        let cap = Capture::install();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let client = tokio::time::timeout(
            Duration::from_secs(60),
            Client::builder("mcp-rs-tests", "0.1.0")
                .protocol(VersionChoice::Era(era))
                .connect(HttpTransport::new(&url).unwrap()),
        )
        .await
        .expect("connect timed out")
        .unwrap();
        async {
            client
                .call_tool("echo", json!({"text": "hi"}))
                .await
                .unwrap();
        }
        .instrument(tracing::info_span!("agent"))
        .await;
        client.close().await;

        let ours = cap.span("tools/call echo");
        assert_eq!(ours.span_kind, SpanKind::Client);
        assert_eq!(
            parent(&ours),
            cap.span("agent").span_context.span_id().to_string()
        );
        assert_eq!(attr(&ours, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(
            attr(&ours, "network.protocol.name").as_deref(),
            Some("http")
        );
        assert_eq!(attr(&ours, "server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(attr(&ours, "server.port"), Some(port.to_string()));
        // The Streamable HTTP session of the handshake era; 2026-07-28 has none.
        let session = attr(&ours, "mcp.session.id");
        match era {
            Era::Legacy => assert!(session.is_some_and(|s| !s.is_empty())),
            _ => assert_eq!(session, None),
        }
        let theirs = server_span(&file, "tools/call echo");
        assert_eq!(theirs["kind"], "SERVER");
        assert_eq!(
            theirs["trace_id"],
            ours.span_context.trace_id().to_string(),
            "{era:?}"
        );
        assert_eq!(
            theirs["parent_span_id"],
            ours.span_context.span_id().to_string(),
            "{era:?}"
        );
        let _ = std::fs::remove_file(&file);
    }
}

/// A legacy server whose first session ends at the first call (404): the
/// session span has a `session renewed` event, the handshake's span is
/// there once per session, and the call's span a `sent again` event whose
/// reason is the expired session.
#[tokio::test(flavor = "current_thread")]
async fn a_renewed_session_and_the_resent_call_are_events() {
    let _serial = one_at_a_time();
    let started = Arc::new(AtomicUsize::new(0));
    let server = serve(move |r: &Rec| -> Reply2 {
        match (r.rpc_method(), r.header("mcp-session-id")) {
            (Some("initialize"), None) => {
                let n = started.fetch_add(1, Ordering::SeqCst) + 1;
                let init = json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "ends-s1", "version": "1"}
                });
                Reply2 {
                    reply: Reply::Json(StatusCode::OK, result(&r.id(), init)),
                    headers: vec![("mcp-session-id", format!("s{n}"))],
                }
            }
            (Some(m), Some(_)) if m.starts_with("notifications/") => Reply::Accepted.into(),
            (Some(_), Some("s1")) => Reply::Raw(
                StatusCode::NOT_FOUND,
                "text/plain",
                "Session not found".into(),
            )
            .into(),
            (Some(_), Some(_)) => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
            _ => Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "", String::new()).into(),
        }
    })
    .await;
    let cap = Capture::install();
    let client = Client::builder("mcp-rs-tests", "0.1.0")
        .protocol(VersionChoice::Pinned(ProtocolVersion::V2025_11_25))
        .resend_on_session_expiry(true)
        .connect(HttpTransport::new(&server.url).unwrap())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), client.ping())
        .await
        .unwrap()
        .unwrap();
    client.close().await;

    let session = cap.span("mcp.session");
    let renewed = events(&session, "session renewed");
    assert_eq!(renewed.len(), 1, "{:?}", session.events);
    let initialize: Vec<_> = cap
        .spans()
        .into_iter()
        .filter(|s| s.name == "initialize")
        .collect();
    assert_eq!(initialize.len(), 2);
    assert!(
        initialize
            .iter()
            .all(|s| parent(s) == session.span_context.span_id().to_string())
    );
    let ping = cap.span("ping");
    assert_eq!(attr(&ping, "error.type"), None);
    let again = events(&ping, "sent again");
    assert_eq!(again.len(), 1, "{:?}", ping.events);
    assert_eq!(
        find(&again[0], "reason").map(|v| v.to_string()).as_deref(),
        Some("session expired")
    );
    // The id it went out with first, then the new one.
    assert_ne!(
        attr(&ping, "jsonrpc.request.id"),
        find(&again[0], "jsonrpc.request.id").map(|v| v.to_string())
    );
}
