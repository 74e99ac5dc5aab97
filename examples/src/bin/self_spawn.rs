//! Offline example: spawn a stdio MCP server, list its tools, call one.
//!
//! The server is this same binary run as `self_spawn --server`, which serves
//! the workspace's demo server on stdin/stdout; no network, no Node.
//!
//! ```text
//! cargo run --bin self_spawn
//! ```

use std::time::Duration;

use mcp_client::Client;
use mcp_transport_stdio::{ServerCommand, StdioTransport};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--server") {
        // The child: be the server until the client closes stdin.
        examples::demo_server::run().await?;
        return Ok(());
    }

    // The parent: spawn ourselves as the server and talk to it.
    let me = std::env::current_exe()?;
    let transport = StdioTransport::spawn(ServerCommand::new(me).arg("--server"))?;
    let client = Client::builder("self-spawn-example", env!("CARGO_PKG_VERSION"))
        .request_timeout(Duration::from_secs(10))
        .connect(transport)
        .await?;
    if let Some(server) = client.server() {
        println!(
            "connected to {} {} over protocol {}",
            server.implementation.name, server.implementation.version, server.protocol_version
        );
    }

    for tool in client.list_all::<mcp_proto::schema::Tool>().await? {
        println!(
            "tool {}: {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }

    let result = client
        .call_tool("slow_sum", json!({"a": 2, "b": 3}))
        .on_progress(|p| eprintln!("progress {}/{}", p.progress, p.total.unwrap_or(0.0)))
        .await?;
    for block in &result.content {
        if let Some(text) = block.as_text() {
            println!("slow_sum(2, 3) = {text}");
        }
    }

    let echoed = client.call_tool("echo", json!({"text": "hello"})).await?;
    println!(
        "echo: {}",
        echoed
            .content
            .first()
            .and_then(|b| b.as_text())
            .unwrap_or("")
    );

    // Close: stdin EOF, the server exits; SIGTERM/SIGKILL if it would not.
    client.close().await;
    Ok(())
}
