//! A host's server layer (`mcp-host`) driven by a config file: every server
//! of the file started at once, each status printed as it changes (from
//! "is starting" on), and the file watched: an edit is applied while the host runs (new servers start,
//! deleted ones stop, changed ones restart, the rest keep running). Ctrl-C
//! shuts every server down.
//!
//! ```text
//! cargo run --bin host -- .mcp.json
//! ```
//!
//! The file is named on the command line, so it is trusted by being named,
//! edits included, as `mcp --config FILE` trusts it: the example starts what
//! the file says. A host that finds project files by itself (a `.mcp.json`
//! in the folder it opens) must have the user trust each one first, and
//! each edit again: mcp-config's `ConfigFile::summary` and `TrustStore`
//! (the `mcp` CLI's `trust` module does it, on the terminal).
//!
//! `host --server` is the workspace's demo server on stdin/stdout, to try
//! it offline with `{"mcpServers": {"demo": {"command": "target/debug/host",
//! "args": ["--server"]}}}`.
//!
//! One workspace dependency: `mcp-host` with its `config` feature, which
//! re-exports the client (`mcp_host::client`) and the config reader
//! (`mcp_host::config`); tokio runs it. (`examples::demo_server` is this
//! crate's own, only for `--server`.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_host::client::Client;
use mcp_host::config::{ConfigFile, Resolver, ServerConfig};
use mcp_host::{ClientFactory, Host, ServerReport, ServerSpec};
use mcp_proto::error::chain;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let Some(arg) = std::env::args().nth(1) else {
        return Err("usage: host <config file>   (or: host --server)".into());
    };
    if arg == "--server" {
        examples::demo_server::run().await?;
        return Ok(());
    }
    let path = PathBuf::from(arg);
    let client: ClientFactory =
        Arc::new(|| Client::builder("host-example", env!("CARGO_PKG_VERSION")));
    let spec = |s: &ServerConfig| ServerSpec::from_config(s, client.clone());

    let mut text = std::fs::read(&path)?;
    let servers = read(&path)?;
    // `spawn`, not `start`: the host comes back at once, so the statuses
    // are printed while the servers come up.
    let host = Host::builder()
        .config_servers(&servers, client.clone())
        .spawn()?;
    let mut status = host.watch();
    let mut shown = HashMap::new();
    print_changes(&status.borrow_and_update(), &mut shown);

    // Polling the file keeps the example free of a watcher crate; a host
    // would use its editor's or the OS's change events.
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            _ = &mut interrupt => break,
            Ok(()) = status.changed() => print_changes(&status.borrow_and_update(), &mut shown),
            _ = tick.tick() => {
                let Ok(now) = std::fs::read(&path) else { continue };
                if now == text {
                    continue;
                }
                text = now;
                match read(&path) {
                    Ok(servers) => {
                        let c = host.apply_config(&servers, spec).await?;
                        println!("applied: added {:?}, removed {:?}, restarted {:?}", c.added, c.removed, c.replaced);
                    }
                    Err(e) => println!("{}; keeping the servers as they are", chain(&*e)),
                }
            }
        }
    }
    host.close().await;
    print_changes(&host.status(), &mut shown);
    println!("closed");
    Ok(())
}

fn read(path: &Path) -> Result<Vec<ServerConfig>, Error> {
    Ok(ConfigFile::load(path)?.resolve(&Resolver::new())?)
}

/// Prints each server whose status reads differently than last time.
fn print_changes(reports: &[ServerReport], shown: &mut HashMap<String, String>) {
    for r in reports {
        let now = r.status.to_string();
        if shown.get(&r.name) != Some(&now) {
            println!("{}: {now}", r.name);
            shown.insert(r.name.clone(), now);
        }
    }
}
