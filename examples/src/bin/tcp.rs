//! MCP over TCP, through the transport in `examples::tcp`
//! (`mcp_transport_stdio::LineTransport` over a socket's halves).
//!
//! Serves the workspace's demo server on a loopback port, connects a
//! client to it, lists the tools and calls one.
//!
//! ```text
//! cargo run --bin tcp
//! ```

use mcp_client::Client;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // The server: the demo server on each connection.
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (r, w) = stream.into_split();
            tokio::spawn(examples::demo_server::serve(r, w));
        }
    });

    let transport = examples::tcp::connect(addr).await?;
    let client = Client::builder("tcp-example", env!("CARGO_PKG_VERSION"))
        .connect(transport)
        .await?;
    if let Some(server) = client.server() {
        let name = &server.implementation.name;
        println!(
            "connected to {name} on {addr} with protocol {}",
            server.protocol_version
        );
    }
    for tool in client.list_all::<mcp_proto::schema::Tool>().await? {
        println!("tool {}", tool.name);
    }
    let echoed = client
        .call_tool("echo", json!({"text": "over TCP"}))
        .await?;
    let text = echoed
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>();
    println!("echo: {}", text.join(""));
    client.close().await;
    Ok(())
}
