//! The stdio phases: the demo server in chaos mode (`MCP_DEMO_CHAOS`,
//! `src/chaos.rs`), one process per connection; a crashed server ends its
//! connection early.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};

use crate::tally::{SLACK, Tally};
use crate::{EPOCH, LIMIT, Pick, TIMEOUT, count_era, hammer};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// Whether `pid` is still a live process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim().starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

pub async fn epoch(n: usize, pick: Pick, tally: &mut Tally) {
    // `MCP_SOAK_MCP`: a copy of the binary, so rebuilding does not disturb a long run.
    let mcp = std::env::var("MCP_SOAK_MCP").unwrap_or_else(|_| MCP.to_owned());
    let cmd = ServerCommand::new(mcp)
        .arg("demo-server")
        .env("MCP_DEMO_CHAOS", (n as u64 + 1).to_string())
        .env("MCP_DEMO_CHAOS_BIG", (2 * LIMIT).to_string())
        .max_message_size(LIMIT)
        .stderr(Stderr::discard());
    let transport = StdioTransport::spawn(cmd).unwrap();
    let pid = transport.pid().unwrap();
    let connect = Client::builder("soak", "0.1.0")
        .protocol(pick.choice())
        .request_timeout(TIMEOUT)
        .probe_timeout(TIMEOUT)
        .handshake_timeout(TIMEOUT)
        .connect(transport);
    let started = Instant::now();
    let connected = tokio::time::timeout(3 * TIMEOUT + SLACK, connect).await;
    tally.worst_connect = tally.worst_connect.max(started.elapsed());
    match connected {
        Err(_) => tally
            .violations
            .push(format!("epoch {n}: connect did not end in time")),
        Ok(Err(_)) => tally.count("connect failed (typed error)"),
        Ok(Ok(client)) => {
            // A probe answer the chaos dropped or refused is a legacy server
            // as far as the client can tell: both are fine, counted.
            count_era(&client, tally);
            let mine = hammer(Arc::new(client), n, Instant::now() + EPOCH).await;
            tally.merge(mine);
        }
    }
    // The server is gone with its client (reaped, not a zombie).
    let closed = Instant::now();
    let deadline = closed + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tally.worst_exit = tally.worst_exit.max(closed.elapsed());
    if alive(pid) {
        tally
            .violations
            .push(format!("epoch {n}: server {pid} outlived its client"));
    }
}
