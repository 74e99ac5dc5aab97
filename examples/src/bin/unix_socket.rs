//! MCP over a Unix-domain socket, through the transport in
//! `examples::unix_socket` (written with `mcp_proto::transport::halves`).
//!
//! Serves the workspace's demo server on a socket in a fresh temporary
//! directory, connects a client to it, lists the tools and calls one.
//!
//! ```text
//! cargo run --bin unix_socket
//! ```

#[cfg(unix)]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    use mcp_client::Client;
    use serde_json::json;

    let dir = std::env::temp_dir().join(format!("mcp-unix-socket-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("mcp.sock");
    let listener = tokio::net::UnixListener::bind(&path)?;
    // The server: the demo server on each connection.
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (r, w) = stream.into_split();
            tokio::spawn(examples::demo_server::serve(r, w));
        }
    });

    let transport = examples::unix_socket::connect(&path).await?;
    let client = Client::builder("unix-socket-example", env!("CARGO_PKG_VERSION"))
        .connect(transport)
        .await?;
    if let Some(server) = client.server() {
        let name = &server.implementation.name;
        println!(
            "connected to {name} over {} with protocol {}",
            path.display(),
            server.protocol_version
        );
    }
    for tool in client.list_all::<mcp_proto::schema::Tool>().await? {
        println!("tool {}", tool.name);
    }
    let echoed = client
        .call_tool("echo", json!({"text": "over a socket"}))
        .await?;
    let text = echoed
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>();
    println!("echo: {}", text.join(""));
    client.close().await;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

#[cfg(not(unix))]
fn main() {
    eprintln!("unix_socket: Unix-domain sockets need a Unix system");
}
