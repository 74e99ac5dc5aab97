//! The client's spans over Streamable HTTP, against the Python SDK's
//! server in both eras: the HTTP attributes (`network.transport` `tcp`,
//! `network.protocol.name`, `server.address`, `server.port`, the session
//! id of the handshake era), and the server's own span (OpenTelemetry's
//! Python SDK) as the child of ours, carried in `_meta`.
//!
//! Current-thread runtime: the capturing subscriber is the thread's
//! default, and the driver and the POSTs run on that thread.
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use mcp_client::{Client, VersionChoice};
use mcp_proto::Era;
use mcp_transport_http::HttpTransport;
use serde_json::json;
use test_support::otel::{Capture, SpanKind, attr, parent};
use tracing::Instrument;

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
