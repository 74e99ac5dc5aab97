//! A server that stops reading its stdin while it floods the client with
//! pings, requests and notifications, for a minute (`MCP_FLOOD_SECS`
//! shortens it): the client's memory stays within 64 MiB of where it
//! started, its calls time out cleanly, and it closes in bounded time.
//!
//! Its own test binary, so that the process's memory is this test's alone.
//! The server is a small Python program (the machine's `python3`), a
//! hostile peer written for this test.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use mcp_client::{Client, ClientHandler};
use mcp_proto::ErrorObject;
use mcp_proto::schema::{ClientCapabilities, ListRootsParams, ListRootsResult, Root};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;
use test_support::DriverOnly;

const FLOOD_SERVER: &str = r#"
import json, sys
out, inp = sys.stdout.buffer, sys.stdin.buffer
def send(m):
    out.write((json.dumps(m) + "\n").encode()); out.flush()
while True:
    line = inp.readline()
    if not line:
        sys.exit(0)
    m = json.loads(line)
    method = m.get("method")
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}})
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-11-25",
              "capabilities": {}, "serverInfo": {"name": "flood", "version": "0"}}})
    elif method == "notifications/initialized":
        break
# From here on stdin is never read again.
n = 0
while True:
    batch = []
    for _ in range(300):
        n += 1
        if n % 3 == 0:
            batch.append({"jsonrpc": "2.0", "id": n, "method": "ping"})
        elif n % 3 == 1:
            batch.append({"jsonrpc": "2.0", "id": n, "method": "roots/list"})
        else:
            batch.append({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "x" * 200}})
    out.write(("\n".join(json.dumps(b) for b in batch) + "\n").encode())
    out.flush()
"#;

struct Roots;

impl ClientHandler for Roots {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_roots()
    }
    async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
        Ok(ListRootsResult::new(vec![Root::new("file:///tmp")]))
    }
}

/// This process's resident memory, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_floods_without_reading_cannot_grow_the_clients_memory() {
    let secs: u64 = std::env::var("MCP_FLOOD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let dir = std::env::temp_dir().join(format!("mcp-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("flood.py");
    std::fs::write(&script, FLOOD_SERVER).unwrap();
    let cmd = ServerCommand::new("python3")
        .arg(&script)
        .stderr(Stderr::discard());
    let transport = DriverOnly::new(StdioTransport::spawn(cmd).unwrap());
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder("flood-test", "0")
            .handler(Roots)
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .unwrap();
    let baseline = rss();
    let mut peak = baseline;
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < Duration::from_secs(secs) {
        let asked = Instant::now();
        let err = client
            .call_tool("echo", json!({"text": "hi"}))
            .timeout(Duration::from_millis(500))
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(
            asked.elapsed() < Duration::from_millis(1500),
            "a 500 ms call took {:?}",
            asked.elapsed()
        );
        calls += 1;
        peak = peak.max(rss());
        tokio::time::sleep(Duration::from_millis(250)).await;
        peak = peak.max(rss());
    }
    let grew = peak.saturating_sub(baseline);
    eprintln!(
        "flood for {secs} s: {calls} calls timed out cleanly; RSS {} KiB at the start, peak {} KiB (+{} KiB)",
        baseline / 1024,
        peak / 1024,
        grew / 1024
    );
    assert!(
        grew <= 64 * 1024 * 1024,
        "RSS grew by {} MiB under the flood",
        grew / (1024 * 1024)
    );
    let closing = Instant::now();
    tokio::time::timeout(Duration::from_secs(15), client.close())
        .await
        .expect("close is bounded");
    eprintln!("closed in {:?}", closing.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}
