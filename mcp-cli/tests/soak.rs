//! The chaos soak (`cargo xtask soak --seconds N`, issue 14 item 3): the
//! demo server in chaos mode (`MCP_DEMO_CHAOS`, see `src/chaos.rs`: delays,
//! reorders, drops, duplicates, errors, garbage, JSON that is not JSON-RPC,
//! lines over the limit, crashes, disconnects) over stdio, in both eras
//! (alternating connections), while 32 callers hammer one client and two
//! threads keep both cores busy. A crashed server is replaced by a new
//! connection. Checked throughout:
//!
//! - every call ends (an answer or a typed error) within its timeout plus
//!   [`SLACK`];
//! - every answer is the caller's own (the echo carries a unique payload);
//! - RSS and open fds are flat after warm-up;
//! - no server process outlives its client.
//!
//! Ignored by default; `MCP_SOAK_SECONDS` sets the length (default 60).
#![allow(missing_docs, clippy::unwrap_used)]
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{Client, ClientError, VersionChoice};
use mcp_proto::schema::ContentBlock;
use mcp_proto::{Era, ProtocolVersion};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const CALLERS: usize = 32;
const TIMEOUT: Duration = Duration::from_secs(2);
/// How late past its deadline a call may end (a loaded 2-core machine).
const SLACK: Duration = Duration::from_secs(1);
/// One connection's longest life before it is closed and replaced.
const EPOCH: Duration = Duration::from_secs(8);
const WARMUP_EPOCHS: usize = 4;
/// The client's message limit; the chaos server's oversized lines are 2x.
const LIMIT: usize = 64 * 1024;

#[derive(Default)]
struct Tally {
    calls: u64,
    outcomes: BTreeMap<&'static str, u64>,
    worst_late: Duration,
    violations: Vec<String>,
}

fn kind(e: &ClientError) -> &'static str {
    match e {
        ClientError::Timeout { .. } => "timeout",
        ClientError::AnswerDropped { .. } => "answer dropped",
        ClientError::Rpc(_) => "rpc error",
        ClientError::Closed(_) => "closed",
        ClientError::Transport(_) => "transport",
        ClientError::Decode { .. } => "decode",
        _ => "other",
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Whether `pid` is still a live process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim().starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

fn text(r: &mcp_proto::schema::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

async fn epoch(n: usize, tally: &mut Tally) {
    let era = if n.is_multiple_of(2) {
        VersionChoice::Auto
    } else {
        VersionChoice::Pinned(ProtocolVersion::V2025_06_18)
    };
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
        .protocol(era)
        .request_timeout(TIMEOUT)
        .probe_timeout(TIMEOUT)
        .handshake_timeout(TIMEOUT)
        .connect(transport);
    match tokio::time::timeout(3 * TIMEOUT + SLACK, connect).await {
        Err(_) => tally
            .violations
            .push(format!("epoch {n}: connect did not end in time")),
        Ok(Err(_)) => {
            *tally
                .outcomes
                .entry("connect failed (typed error)")
                .or_default() += 1
        }
        Ok(Ok(client)) => {
            let client = Arc::new(client);
            // A probe answer the chaos dropped or refused is a legacy server
            // as far as the client can tell: both are fine, counted.
            let era = match client.era() {
                Some(Era::Modern) => "connected, 2026-07-28",
                Some(Era::Legacy) => "connected, legacy",
                _ => "connected, no era",
            };
            *tally.outcomes.entry(era).or_default() += 1;
            let stop = Instant::now() + EPOCH;
            let mut tasks = Vec::new();
            for c in 0..CALLERS {
                let client = client.clone();
                tasks.push(tokio::spawn(async move {
                    let mut mine = Tally::default();
                    let mut i = 0u64;
                    while Instant::now() < stop {
                        i += 1;
                        let payload = format!("e{n}-c{c}-{i}");
                        let t = Instant::now();
                        let r = tokio::time::timeout(
                            TIMEOUT + SLACK * 5,
                            client.call_tool("echo", json!({"text": payload})),
                        )
                        .await;
                        let took = t.elapsed();
                        mine.calls += 1;
                        mine.worst_late = mine.worst_late.max(took.saturating_sub(TIMEOUT));
                        if took > TIMEOUT + SLACK {
                            mine.violations
                                .push(format!("call {payload} took {took:?}"));
                        }
                        let k = match r {
                            Err(_) => {
                                mine.violations.push(format!("call {payload} never ended"));
                                "hung"
                            }
                            Ok(Ok(res)) => {
                                if text(&res) != payload {
                                    mine.violations
                                        .push(format!("call {payload} got {:?}", text(&res)));
                                }
                                "ok"
                            }
                            Ok(Err(e)) => kind(&e),
                        };
                        *mine.outcomes.entry(k).or_default() += 1;
                        if k == "closed" {
                            break;
                        }
                    }
                    mine
                }));
            }
            for t in tasks {
                let mine = t.await.unwrap();
                tally.calls += mine.calls;
                tally.worst_late = tally.worst_late.max(mine.worst_late);
                tally.violations.extend(mine.violations);
                for (k, v) in mine.outcomes {
                    *tally.outcomes.entry(k).or_default() += v;
                }
            }
            if tokio::time::timeout(Duration::from_secs(10), client.close())
                .await
                .is_err()
            {
                tally
                    .violations
                    .push(format!("epoch {n}: close took over 10 s"));
            }
        }
    }
    // The server is gone with its client (reaped, not a zombie).
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if alive(pid) {
        tally
            .violations
            .push(format!("epoch {n}: server {pid} outlived its client"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with `cargo xtask soak --seconds N`"]
async fn chaos_soak() {
    let seconds: u64 = std::env::var("MCP_SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let end = Instant::now() + Duration::from_secs(seconds);
    // Both cores busy the whole time.
    let done = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let done = done.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !done.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            })
        })
        .collect();
    let mut tally = Tally::default();
    let mut samples: Vec<(u64, usize)> = Vec::new();
    let mut n = 0;
    while Instant::now() < end || n < WARMUP_EPOCHS + 2 {
        epoch(n, &mut tally).await;
        samples.push((rss_kib(), open_fds()));
        n += 1;
    }
    done.store(true, Ordering::Relaxed);
    for b in busy {
        b.join().unwrap();
    }
    let after: &[(u64, usize)] = &samples[WARMUP_EPOCHS..];
    let (rss0, fd0) = after[0];
    let (rss1, fd1) = after[after.len() - 1];
    let rss_max = after.iter().map(|s| s.0).max().unwrap_or(0);
    let rss_drift = rss1 as i64 - rss0 as i64;
    let fd_drift = fd1 as i64 - fd0 as i64;
    println!(
        "soak: {seconds} s, {n} connections (both eras, alternating), {} calls",
        tally.calls
    );
    for (k, v) in &tally.outcomes {
        println!("  {k}: {v}");
    }
    println!("  worst time past the deadline: {:?}", tally.worst_late);
    println!(
        "  RSS after warm-up: {rss0} KiB -> {rss1} KiB (drift {rss_drift} KiB, max {rss_max} KiB)"
    );
    println!("  open fds after warm-up: {fd0} -> {fd1} (drift {fd_drift})");
    if rss_drift > 32 * 1024 {
        tally
            .violations
            .push(format!("RSS grew by {rss_drift} KiB after warm-up"));
    }
    if fd_drift > 4 {
        tally
            .violations
            .push(format!("open fds grew by {fd_drift} after warm-up"));
    }
    println!("  violations: {}", tally.violations.len());
    for v in tally.violations.iter().take(20) {
        println!("    {v}");
    }
    assert!(
        tally.violations.is_empty(),
        "{} invariant violations",
        tally.violations.len()
    );
}
