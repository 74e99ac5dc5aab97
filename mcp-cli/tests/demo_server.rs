//! The demo server in-process: `mcp-client` over `LineTransport` over a
//! `tokio::io::duplex` pipe pair, no processes. Both eras, pagination,
//! progress, tool errors, and the server's clean exit on EOF.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, VersionChoice};
use mcp_proto::ProtocolVersion;
use mcp_proto::schema::Tool;
use mcp_transport_stdio::LineTransport;
use serde_json::json;
use tokio::task::JoinHandle;

fn start(choice: VersionChoice) -> (Client, JoinHandle<std::io::Result<()>>) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = tokio::spawn(mcp_cli::demo_server::serve(server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_io);
    let transport = LineTransport::new(client_read, client_write);
    let (client, driver) = Client::builder("demo-test", "0")
        .protocol(choice)
        .request_timeout(Duration::from_secs(10))
        .build(transport);
    tokio::spawn(driver);
    (client, server)
}

#[tokio::test]
async fn both_eras_list_every_tool_page_and_call() {
    for (choice, version) in [
        (VersionChoice::Auto, ProtocolVersion::V2026_07_28),
        (
            VersionChoice::Pinned(ProtocolVersion::V2025_11_25),
            ProtocolVersion::V2025_11_25,
        ),
        (
            VersionChoice::Pinned(ProtocolVersion::V2024_11_05),
            ProtocolVersion::V2024_11_05,
        ),
    ] {
        let (client, server) = start(choice);
        client.wait_ready().await.unwrap();
        assert_eq!(client.protocol_version(), Some(version));
        let info = client.server().unwrap();
        assert_eq!(info.implementation.name, mcp_cli::demo_server::SERVER_NAME);

        // 5 tools over 2 pages of TOOLS_PAGE_SIZE.
        let first = client.list_page::<Tool>(None).await.unwrap();
        assert!(first.next_cursor.is_some());
        let last = client.list_page::<Tool>(first.next_cursor).await.unwrap();
        assert!(last.next_cursor.is_none(), "two pages");
        let names: Vec<String> = client
            .list_all::<Tool>()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["echo", "slow_sum", "add", "fail", "image"]);

        // Progress: one notification per step, in order.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let r = client
            .call_tool(
                "slow_sum",
                json!({"a": 40, "b": 2, "steps": 3, "delay_ms": 1}),
            )
            .on_progress(move |p| sink.lock().unwrap().push(p.progress))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("42"));
        assert_eq!(r.structured_value().unwrap().unwrap(), json!({"sum": 42}));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);

        let failed = client.call_tool("fail", json!({})).await.unwrap();
        assert!(failed.is_error());
        let bad = client
            .call_tool("slow_sum", json!({"a": "x"}))
            .await
            .unwrap();
        assert!(bad.is_error(), "invalid arguments are a tool error");
        let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(unknown.rpc().unwrap().code.0, -32602);

        // Modern results say resultType; legacy ones do not.
        let raw = client
            .request_raw("resources/templates/list", None)
            .send()
            .await
            .unwrap();
        assert_eq!(
            raw.get().contains("\"resultType\""),
            version == ProtocolVersion::V2026_07_28,
            "{}",
            raw.get()
        );

        // Closing the client closes the pipe: the server finishes.
        client.close().await;
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("the server stops after EOF")
            .unwrap()
            .unwrap();
    }
}

#[tokio::test]
async fn unknown_methods_and_versions_are_errors() {
    let (client, server) = start(VersionChoice::Auto);
    client.wait_ready().await.unwrap();
    let err = client
        .request_raw("frobnicate", None)
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.rpc().unwrap().code.0, -32601);

    // A 2026-07-28 request naming a revision the server does not speak.
    let params = serde_json::value::RawValue::from_string(
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}"#.into(),
    )
    .unwrap();
    let err = client
        .request_raw("tools/list", Some(params.into()))
        .send()
        .await
        .unwrap_err();
    let rpc = err.rpc().unwrap();
    assert_eq!(rpc.code.0, -32022);
    let data = rpc.unsupported_protocol_version().unwrap();
    assert_eq!(data.requested, "2099-01-01");
    assert!(data.supported.iter().any(|v| v == "2026-07-28"));
    client.close().await;
    let _ = server.await;
}
