//! Two MCP servers as one tool set for a model: the workspace's demo server
//! and `@modelcontextprotocol/server-everything`. Prints the OpenAI tool
//! definitions, then calls tools through the bridge the way an agent would
//! after the model asked for them.
//!
//! ```text
//! cargo xtask peers                 # installs server-everything into .peers/
//! cargo run --bin toolbox
//! ```
//!
//! The demo server is this same binary run as `toolbox --server`.
//! `MCP_PEERS_DIR` overrides the peers directory; without server-everything
//! the example runs with the demo server alone.

use std::path::PathBuf;

use mcp_client::Client;
use mcp_tools::{Filter, Server, Toolbox};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

fn demo_server() -> std::io::Result<ServerCommand> {
    Ok(ServerCommand::new(std::env::current_exe()?)
        .arg("--server")
        .stderr(Stderr::discard()))
}

fn server_everything() -> Option<ServerCommand> {
    let peers = std::env::var_os("MCP_PEERS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"),
        PathBuf::from,
    );
    let js = peers.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.exists() {
        eprintln!(
            "skipping server-everything: {} not found (cargo xtask peers)",
            js.display()
        );
        return None;
    }
    Some(
        ServerCommand::new("node")
            .arg(js)
            .arg("stdio")
            .stderr(Stderr::discard()),
    )
}

async fn connect(cmd: ServerCommand) -> Result<Client, Box<dyn std::error::Error>> {
    Ok(
        Client::builder("toolbox-example", env!("CARGO_PKG_VERSION"))
            .connect(StdioTransport::spawn(cmd)?)
            .await?,
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--server") {
        // The child: be the demo server until the client closes stdin.
        examples::demo_server::run().await?;
        return Ok(());
    }

    let mut builder = Toolbox::builder();
    let mut clients = Vec::new();
    let demo = connect(demo_server()?).await?;
    builder = builder.server(Server::new("demo", demo.clone()).prefix("demo_"));
    clients.push(demo);
    if let Some(cmd) = server_everything() {
        let client = connect(cmd).await?;
        // The trigger-* tools ask the client for sampling/elicitation; this
        // agent has no model behind it, so leave them out.
        builder = builder.server(
            Server::new("everything", client.clone())
                .prefix("ev_")
                .filter(Filter::exclude(["trigger-*"])),
        );
        clients.push(client);
    }
    let toolbox = builder.build().await?;

    println!("// OpenAI tool definitions");
    println!(
        "{}",
        serde_json::to_string_pretty(&toolbox.openai_tools().await)?
    );
    for c in toolbox.collisions() {
        println!("// name collision: {c:?}");
    }

    // What a model might ask for, and what it would read back.
    let calls = [
        ("demo_echo", json!({"text": "hello through the bridge"})),
        ("demo_image", json!({})),
        ("demo_fail", json!({"reason": "the model asked for it"})),
        ("ev_get-sum", json!({"a": 2, "b": 40})),
        ("ev_echo", json!({"mesage": "typo in the argument name"})),
    ];
    for (name, args) in calls {
        if toolbox.get(name).is_none() {
            continue;
        }
        println!("\n> {name} {args}");
        match toolbox.call(name, args).await {
            Ok(out) => println!("{}", out.text),
            Err(e) if e.is_model_correctable() => {
                println!("(for the model to fix) {}", e.message_for_model())
            }
            Err(e) => return Err(e.into()),
        }
    }
    for c in clients {
        c.close().await;
    }
    Ok(())
}
