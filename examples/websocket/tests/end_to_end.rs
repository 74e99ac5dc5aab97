//! mcp-client over the WebSocket transport against a real tokio-tungstenite
//! server fronting the `mcp` CLI's demo server (one JSON-RPC message per
//! text frame on the socket, one per line to the server).
#![allow(clippy::unwrap_used)]

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message as Ws;

/// Serves one WebSocket connection; returns its `ws://` URL.
async fn demo_server_over_websocket() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let (mut to_client, mut from_client) = ws.split();
        let (server_end, bridge_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(mcp_cli::demo_server::serve(server_read, server_write));
        let (bridge_read, mut bridge_write) = tokio::io::split(bridge_end);
        tokio::spawn(async move {
            let mut lines = BufReader::new(bridge_read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if to_client.send(Ws::text(line)).await.is_err() {
                    break;
                }
            }
        });
        while let Some(Ok(frame)) = from_client.next().await {
            if let Ws::Text(t) = frame {
                bridge_write.write_all(t.as_bytes()).await.unwrap();
                bridge_write.write_all(b"\n").await.unwrap();
            }
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_calls_a_tool_over_websocket() {
    let url = demo_server_over_websocket().await;
    let transport = mcp_websocket_example::connect(&url).await.unwrap();
    let client = mcp_client::Client::builder("ws-test", "1.0")
        .connect(transport)
        .await
        .unwrap();
    let tools = client.list_all::<mcp_proto::schema::Tool>().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let result = client
        .call_tool("echo", json!({"message": "over a socket"}))
        .await
        .unwrap();
    assert!(
        format!("{result:?}").contains("over a socket"),
        "{result:?}"
    );
    client.close().await;
}
