//! Answers a stdio server sends that the transport must drop, through the
//! client: the head of a valid answer followed by bytes forever, and an
//! answer with an invalid UTF-8 byte. The call fails at once with
//! [`ClientError::AnswerDropped`], naming the limit and the size seen,
//! instead of waiting for its timeout; the connection goes on.
//!
//! The server is a few lines of Python written here (a hostile server
//! nobody ships): it speaks just enough MCP (2025-11-25) for a handshake.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use mcp_client::{Client, ClientError, VersionChoice};
use mcp_proto::ProtocolVersion;
use mcp_transport_stdio::{ServerCommand, StdioTransport};
use serde_json::json;

const SERVER: &str = r#"
import json, sys
out = sys.stdout.buffer
def send(b):
    out.write(b + b"\n"); out.flush()
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    rid = json.dumps(msg["id"]).encode()
    method = msg.get("method")
    if method == "initialize":
        send(b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}')
    elif method == "tools/call" and msg["params"]["name"] == "endless":
        out.write(b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"content":[{"type":"text","text":"')
        chunk = b"x" * 65536
        while True:
            out.write(chunk); out.flush()
    elif method == "tools/call" and msg["params"]["name"] == "not_utf8":
        send(b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"content":[{"type":"text","text":"caf\xe9"}]}}')
    else:
        send(b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"content":[{"type":"text","text":"fine"}]}}')
"#;

/// The system Python: the script needs nothing else.
fn python() -> &'static str {
    if std::path::Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

async fn client(max_message_size: usize) -> Client {
    let cmd = ServerCommand::new(python())
        .args(["-c", SERVER])
        .max_message_size(max_message_size);
    Client::builder("dropped-answer", "0.1.0")
        .protocol(VersionChoice::Pinned(ProtocolVersion::V2025_11_25))
        .request_timeout(Duration::from_secs(30))
        .connect(StdioTransport::spawn(cmd).unwrap())
        .await
        .unwrap()
}

/// Fails `name`'s call with `AnswerDropped` well before its 30 s timeout.
async fn dropped(client: &Client, name: &str) -> String {
    let started = Instant::now();
    let e = tokio::time::timeout(Duration::from_secs(10), client.call_tool(name, json!({})))
        .await
        .expect("the call waited for its timeout")
        .unwrap_err();
    eprintln!("{name}: failed after {:?}: {e}", started.elapsed());
    assert!(matches!(e, ClientError::AnswerDropped { .. }), "{e:?}");
    mcp_proto::error::chain(&e).to_string()
}

#[tokio::test]
async fn an_endless_answer_fails_its_call_at_once_naming_the_limit() {
    let client = client(1 << 20).await;
    let text = dropped(&client, "endless").await;
    assert!(text.contains("tools/call"), "{text}");
    assert!(
        text.contains("at least") && text.contains("1 MiB limit"),
        "{text}"
    );
    assert!(text.contains("max_message_size"), "{text}");
    client.close().await;
}

#[tokio::test]
async fn an_answer_with_invalid_utf8_fails_its_call_and_the_next_works() {
    let client = client(1 << 20).await;
    let text = dropped(&client, "not_utf8").await;
    assert!(text.contains("invalid unicode"), "{text}");
    let fine = client.call_tool("other", json!({})).await.unwrap();
    assert!(format!("{fine:?}").contains("fine"), "{fine:?}");
    client.close().await;
}
