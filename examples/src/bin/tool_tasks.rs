//! A long-running tool (an MCP task) as an agent tool: server-everything's
//! `simulate-research-query` called through a toolbox, its status changes
//! printed as progress; then started and polled, the way an agent that
//! does not wait would.
//!
//! ```text
//! cargo xtask peers                 # installs server-everything into .peers/
//! cargo run -p examples --bin tool_tasks
//! ```
//!
//! `MCP_PEERS_DIR` overrides the peers directory.

use std::path::PathBuf;
use std::time::Duration;

use mcp_client::{Client, TaskOptions};
use mcp_tools::{Server, TaskPoll, ToolOptions, ToolTask, Toolbox};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let peers = std::env::var_os("MCP_PEERS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"),
        PathBuf::from,
    );
    let js = peers.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.exists() {
        return Err(format!("{} not found: run `cargo xtask peers`", js.display()).into());
    }
    let cmd = ServerCommand::new("node")
        .arg(js)
        .arg("stdio")
        .stderr(Stderr::discard());
    let client = Client::builder("tool-tasks-example", env!("CARGO_PKG_VERSION"))
        .connect(StdioTransport::spawn(cmd)?)
        .await?;
    let toolbox = Toolbox::builder()
        .server(Server::new("everything", client.clone()))
        .tool_options(ToolOptions::new().on_progress(|tool, p| {
            eprintln!("  {tool}: {}", p.message.as_deref().unwrap_or(""));
        }))
        .build()
        .await?;

    println!("calling simulate-research-query (waits for the task):");
    let out = toolbox
        .call("simulate-research-query", json!({"topic": "rust"}))
        .await?;
    println!("{}\n", out.text.lines().next().unwrap_or_default());

    println!("starting it and polling:");
    let started = toolbox
        .start(
            "simulate-research-query",
            json!({"topic": "tokio"}),
            TaskOptions::new(),
        )
        .await?;
    let ToolTask::Started(ticket) = started else {
        return Err("the server ran the tool at once".into());
    };
    println!("  ticket: {}", serde_json::to_string(&ticket)?);
    let every = Duration::from_millis(ticket.poll_interval_ms.unwrap_or(1000));
    for _ in 0..120 {
        match toolbox.poll(&ticket).await? {
            TaskPoll::Done(out) => {
                println!("{}", out.text.lines().next().unwrap_or_default());
                client.close().await;
                return Ok(());
            }
            TaskPoll::Running { status, message } => {
                eprintln!("  {status}: {}", message.unwrap_or_default());
            }
            _ => {}
        }
        tokio::time::sleep(every).await;
    }
    Err("the task did not end within 120 polls".into())
}
