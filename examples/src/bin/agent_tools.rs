//! An agent loop's tool handling with deferred loading and result budgets,
//! against server-everything, the model scripted (no model needed): what
//! the model is offered each turn, its calls, and what it reads back.
//!
//! 1. The model starts with `echo` (always loaded) and `search_tools`.
//! 2. It searches for "print the environment variables"; `get-env` is
//!    loaded and offered from the next turn on.
//! 3. It calls `get-env`, whose result is cut to the tool's budget (150
//!    tokens) with a note; it reads on with `read_result`.
//! 4. It searches for "add two numbers" and calls `get-sum`.
//!
//! ```text
//! cargo xtask peers                 # installs server-everything into .peers/
//! cargo run -p examples --bin agent_tools
//! ```
//!
//! `MCP_PEERS_DIR` overrides the peers directory.

use std::path::PathBuf;

use mcp_client::Client;
use mcp_tools::{
    Deferred, DeferredOptions, ModelApi, Server, ToolError, ToolOutput, Toolbox, estimate_tokens,
};
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
    let node = peers.join("npm/node_modules/.bin/node");
    let node = if node.exists() { node } else { "node".into() };
    let cmd = ServerCommand::new(node)
        .arg(js)
        .arg("stdio")
        .stderr(Stderr::discard());
    let client = Client::builder("agent-tools-example", env!("CARGO_PKG_VERSION"))
        .connect(StdioTransport::spawn(cmd)?)
        .await?;
    // Results: 150 tokens for `get-env`, 4,000 for the rest.
    let toolbox = Toolbox::builder()
        .server(Server::new("everything", client).tool_result_budget("get-env", 150))
        .result_budget(4_000)
        .build()
        .await?;
    let all = toolbox.definitions(ModelApi::Anthropic).await;
    println!(
        "the toolbox: {} tools, {} tokens of definitions\n",
        all.len(),
        estimate_tokens(&serde_json::to_string(&all)?)
    );

    // One conversation: what it loads is its own.
    let conversation = toolbox.deferred(DeferredOptions::new().always(["echo"]).max_loaded(8));

    // The scripted model: each turn's calls, from what it read before.
    let mut last: Option<ToolOutput> = None;
    for turn in 1..=6 {
        offered(&conversation, turn).await?;
        let (name, arguments) = match turn {
            1 => (
                "search_tools",
                json!({"query": "print the environment variables", "limit": 2}),
            ),
            2 => ("get-env", json!({})),
            3 => {
                // The note at the end of the cut result gives these.
                let cut = last.as_ref().and_then(|o| o.cut.clone()).ok_or("not cut")?;
                let id = cut.id.ok_or("not kept")?;
                ("read_result", json!({"id": id, "offset": cut.shown_bytes}))
            }
            4 => ("search_tools", json!({"query": "add two numbers"})),
            5 => ("get-sum", json!({"a": 2, "b": 40})),
            _ => ("echo", json!({"message": "done"})),
        };
        println!("  model calls {name} {arguments}");
        match conversation.call(name, arguments).await {
            Ok(out) => {
                show(&out.text);
                last = Some(out);
            }
            Err(e) if e.is_model_correctable() => show(&e.message_for_model()),
            Err(e) => return Err(e.into()),
        }
    }
    println!("loaded at the end: {:?}", conversation.loaded_names());
    Ok(())
}

/// Prints what the model is offered at the start of `turn`.
async fn offered(conversation: &Deferred, turn: u32) -> Result<(), ToolError> {
    let defs = conversation.definitions(ModelApi::Anthropic).await;
    let names: Vec<&str> = defs.iter().map(|d| d.name()).collect();
    let tokens: usize = defs.iter().map(|d| d.estimated_tokens()).sum();
    println!("turn {turn}: offered {names:?} ({tokens} tokens)");
    Ok(())
}

/// The first lines of what the model reads, and the note if there is one.
fn show(text: &str) {
    let (body, note) = match text.split_once("\n\n[Result cut") {
        Some((b, n)) => (b, Some(format!("[Result cut{n}"))),
        None => (text, None),
    };
    for line in body.lines().take(4) {
        println!("    | {}", line.chars().take(100).collect::<String>());
    }
    if body.lines().count() > 4 {
        println!("    | ... ({} lines)", body.lines().count());
    }
    if let Some(n) = note {
        println!("    | {n}");
    }
    println!();
}
