//! An agent's conversation held over a host (`mcp-host`) for its whole
//! life, the model scripted (no model needed): one [`Deferred`] made from
//! the host's toolbox, kept while the host's servers change under it.
//!
//! 1. The model starts with `search_tools`; it searches for "print the
//!    environment variables" on server-everything and calls `get-env`,
//!    whose result is cut to the tool's budget (150 tokens) with a note.
//! 2. The server is restarted (a new process): the conversation's loaded
//!    tools come back with it, and the model reads on in the result cut
//!    before the restart with `read_result`.
//! 3. A second server is added while the conversation runs (this example's
//!    own demo server, `demo_` tools): `search_tools` finds its tools.
//!
//! ```text
//! cargo xtask peers                 # installs server-everything into .peers/
//! cargo run -p examples --bin agent_host
//! ```
//!
//! `MCP_PEERS_DIR` overrides the peers directory. `agent_host --server` is
//! the workspace's demo server on stdin/stdout (the server added in 3).

use std::path::PathBuf;
use std::time::Duration;

use mcp_host::client::Client;
use mcp_host::stdio::{ServerCommand, Stderr, StdioTransport};
use mcp_host::tools::{Deferred, DeferredOptions, ModelApi, ToolOutput};
use mcp_host::{Host, Launcher, ServerReport, ServerSpec, ServerStatus};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    if std::env::args().nth(1).as_deref() == Some("--server") {
        examples::demo_server::run().await?;
        return Ok(());
    }
    let peers = std::env::var_os("MCP_PEERS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"),
        PathBuf::from,
    );
    let js = peers.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.exists() {
        return Err(format!("{} not found: run `cargo xtask peers`", js.display()).into());
    }
    let node = peers.join("npm/node_modules/.bin/node");
    let node = if node.exists() { node } else { "node".into() };
    let everything = ServerCommand::new(node).arg(js).arg("stdio");
    let demo = ServerCommand::new(std::env::current_exe()?).arg("--server");

    let host = Host::builder()
        .server(
            ServerSpec::new("everything", launcher(everything)).tool_result_budget("get-env", 150),
        )
        .result_budget(4_000)
        .start()
        .await?;
    // One conversation, kept whatever happens to the servers.
    let conversation = host.toolbox().deferred(DeferredOptions::new());

    turn(
        &conversation,
        "search_tools",
        json!({"query": "print the environment variables", "limit": 1}),
    )
    .await?;
    let cut = turn(&conversation, "get-env", json!({}))
        .await?
        .cut
        .ok_or("not cut")?;

    println!("-- everything restarts (a new process)");
    let before = host.server_status("everything");
    host.restart("everything")?;
    ready_again(&host, "everything", before).await?;
    let id = cut.id.ok_or("not kept")?;
    turn(
        &conversation,
        "read_result",
        json!({"id": id, "offset": cut.shown_bytes}),
    )
    .await?;
    turn(&conversation, "get-env", json!({})).await?;

    println!("-- a server is added while the conversation runs");
    host.add(ServerSpec::new("demo", launcher(demo)).prefix("demo_"))
        .await?;
    turn(
        &conversation,
        "search_tools",
        json!({"query": "add two numbers slowly, reporting progress", "limit": 1}),
    )
    .await?;
    turn(
        &conversation,
        "demo_slow_sum",
        json!({"a": 2, "b": 40, "steps": 2}),
    )
    .await?;
    offered(&conversation).await;
    host.close().await;
    Ok(())
}

/// Spawns `cmd` on every (re)start and connects.
fn launcher(cmd: ServerCommand) -> Launcher {
    let cmd = cmd.stderr(Stderr::discard());
    Launcher::new(move || {
        let cmd = cmd.clone();
        async move {
            Ok(
                Client::builder("agent-host-example", env!("CARGO_PKG_VERSION"))
                    .connect(StdioTransport::spawn(cmd)?)
                    .await?,
            )
        }
    })
}

/// Waits until `server` is ready with a status other than `before` (a
/// new start).
async fn ready_again(host: &Host, server: &str, before: Option<ServerStatus>) -> Result<(), Error> {
    let mut status = host.watch();
    let again = |r: &ServerReport| {
        r.name == server && r.status.is_ready() && Some(&r.status) != before.as_ref()
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        status.wait_for(|all| all.iter().any(again)),
    )
    .await??;
    Ok(())
}

/// One turn: what the model is offered, its call, and what it reads back.
async fn turn(conversation: &Deferred, name: &str, arguments: Value) -> Result<ToolOutput, Error> {
    offered(conversation).await;
    println!("  model calls {name} {arguments}");
    let out = conversation.call(name, arguments).await?;
    for line in out.text.lines().take(3) {
        println!("    | {}", line.chars().take(100).collect::<String>());
    }
    if let Some(note) = out.text.rsplit_once("\n\n[Result cut").map(|(_, n)| n) {
        println!("    | [Result cut{note}");
    }
    Ok(out)
}

async fn offered(conversation: &Deferred) {
    let defs = conversation.definitions(ModelApi::Anthropic).await;
    let names: Vec<&str> = defs.iter().map(|d| d.name()).collect();
    println!("offered {names:?}");
}
