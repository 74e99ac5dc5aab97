//! Against the real `@modelcontextprotocol/server-everything` (stdio),
//! installed by `cargo xtask peers`.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_proto::jsonrpc::Notification;
use mcp_proto::transport::TransportExt;
use mcp_transport_stdio::{Stderr, StdioTransport};
use serde_json::json;
use test_support::eventually;

async fn initialize(t: &mut StdioTransport) -> serde_json::Value {
    let init = call(
        t,
        1,
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp-transport-stdio-tests", "version": "0"}
        }),
    )
    .await;
    t.send(Notification::new("notifications/initialized", None).into())
        .await
        .unwrap();
    init
}

#[tokio::test]
async fn round_trip_with_server_everything() {
    let Some(cmd) = server_everything() else {
        return;
    };
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = stderr.clone();
    let cmd = cmd
        .env_clear_to_allowlist()
        .stderr(Stderr::forward_to(move |l| {
            seen.lock().unwrap().push(l.to_owned())
        }));
    let mut t = StdioTransport::spawn(cmd).unwrap();

    let init = initialize(&mut t).await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert!(init["serverInfo"]["name"].is_string(), "{init}");

    let tools = call(&mut t, 2, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    // A message with newlines and non-ASCII text inside a string survives.
    let text = "héllo\nwörld \u{1F600} \"quoted\"";
    let echoed = call(
        &mut t,
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": text}}),
    )
    .await;
    let out = echoed["content"][0]["text"].as_str().unwrap();
    assert!(out.contains(text), "{out}");

    assert_eq!(call(&mut t, 4, "ping", json!({})).await, json!({}));
    assert_eq!(t.skipped_lines(), 0);

    let start = Instant::now();
    t.close().await.unwrap();
    // server-everything exits on stdin EOF: no signal needed.
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(t.exit_status().is_some_and(|s| s.success()));
    // It announces itself on stderr (not stdout), which we captured.
    assert!(!stderr.lock().unwrap().is_empty());
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn server_everything_is_killed_and_reaped_on_drop() {
    let Some(cmd) = server_everything() else {
        return;
    };
    let mut t = StdioTransport::spawn(cmd.stderr(Stderr::discard())).unwrap();
    initialize(&mut t).await;
    let pid = t.pid().unwrap();
    drop(t);
    assert!(
        eventually(Duration::from_secs(3), || process_reaped(pid)).await,
        "server-everything {pid} still exists after drop"
    );
}
