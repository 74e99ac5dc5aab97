//! Helpers shared by the process tests.
#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used)]

use std::time::Duration;

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::Request;
use mcp_proto::transport::{TransportError, TransportExt};
use mcp_proto::{Message, RequestId};
use mcp_transport_stdio::{ServerCommand, StdioTransport};
use serde_json::Value;

/// The python interpreter: the system one when present (a pyenv shim is a
/// shell script that changes the environment the tests inspect).
pub fn python() -> &'static str {
    if std::path::Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// The scriptable fake server (`tests/fake_server.py`), run with python3.
pub fn fake(args: &[&str]) -> ServerCommand {
    ServerCommand::new(python())
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_server.py"))
        .args(args)
}

pub fn request(id: i64, method: &str, params: Value) -> Message {
    let raw = RawJson::from_string(params.to_string()).unwrap();
    Request::new(id.into(), method.to_owned(), Some(raw)).into()
}

/// Sends a request and waits (bounded) for the response with its id,
/// skipping notifications. Returns the result as JSON.
pub async fn call(t: &mut StdioTransport, id: i64, method: &str, params: Value) -> Value {
    t.send(request(id, method, params)).await.unwrap();
    loop {
        let msg = recv(t)
            .await
            .expect("server closed before replying")
            .unwrap();
        if msg.id() == Some(&RequestId::Number(id)) {
            return match msg {
                Message::Response(r) => serde_json::from_str(r.result.get()).unwrap(),
                other => panic!("error reply: {other:?}"),
            };
        }
    }
}

/// `recv` with a 20 s safety bound so a broken transport fails instead of hanging.
pub async fn recv(t: &mut StdioTransport) -> Option<Result<Message, TransportError>> {
    tokio::time::timeout(Duration::from_secs(20), t.recv())
        .await
        .expect("recv timed out")
}

/// Whether `pid` no longer runs: no /proc entry, or a zombie (an orphan
/// whose reaper, PID 1 here, does not reap).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Whether `pid` has no /proc entry at all (exited *and* reaped).
pub fn process_reaped(pid: u32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Peak resident memory of this process (Linux `VmHWM`), in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `node <server-everything>/dist/index.js stdio`, or `None` (after printing
/// why) when the peer is not installed. Panics instead when
/// `MCP_REQUIRE_PEERS=1`.
pub fn server_everything() -> Option<ServerCommand> {
    let peer = test_support::everything()?.arg("stdio");
    Some(ServerCommand::new(peer.program).args(peer.args))
}
