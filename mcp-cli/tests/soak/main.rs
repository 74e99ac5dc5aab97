//! The chaos soak (`cargo xtask soak --seconds N`, issue 14 item 3): 32
//! callers hammer one client while two threads keep both cores busy, in
//! four phases, each a quarter of the time:
//!
//! | phase | server | client |
//! |---|---|---|
//! | stdio legacy | the demo server in chaos mode (`MCP_DEMO_CHAOS`, `src/chaos.rs`) | pinned 2025-11-25 |
//! | stdio 2026-07-28 | the same | `auto` (a dropped probe answer makes it legacy; counted) |
//! | http legacy | the in-process chaos HTTP server (`tests/support/chaos_http.rs`), with sessions | pinned 2025-11-25 |
//! | http 2026-07-28 | the same, stateless | `auto` (the handshake is not disturbed, so always 2026-07-28) |
//!
//! The servers delay, reorder, drop, duplicate and misroute answers, write
//! garbage, JSON that is not JSON-RPC, broken SSE events and answers over
//! the client's limit, cut connections mid-answer, answer with errors and
//! 5xx, expire sessions (HTTP legacy: 404), and crash (stdio: the process
//! exits and a new connection replaces it; HTTP: every connection and
//! session dropped, the port closed for up to 300 ms, then back). Each
//! connection lives [`EPOCH`] and is then closed and replaced.
//!
//! Checked throughout, per phase:
//!
//! - every call ends (an answer or a typed error) within its timeout plus
//!   [`SLACK`];
//! - every answer is the caller's own (the echo carries a unique payload);
//! - RSS and open fds are flat after warm-up;
//! - no server process outlives its client (stdio), no TCP connection
//!   outlives its client (HTTP);
//! - HTTP re-issues stay within their budget: the POSTs per call the server
//!   saw (legacy: 1, plus 1 re-sent after a session expiry; 2026-07-28: 1,
//!   plus 1 if `tools/call` is in the transport's re-issue list), and the
//!   resumption GETs per broken stream (`DEFAULT_MAX_RESUME_ATTEMPTS`).
//!
//! Ignored by default; `MCP_SOAK_SECONDS` sets the total length (default
//! 60), `MCP_SOAK_ONLY` picks phases whose name contains it (`http`,
//! `stdio legacy`, ...).
#![allow(
    missing_docs,
    unreachable_pub,
    missing_debug_implementations,
    clippy::unwrap_used
)]
#![cfg(target_os = "linux")]

#[path = "../support/chaos_http.rs"]
mod chaos_http;
mod http;
mod stdio;
mod tally;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{Client, VersionChoice};
use mcp_proto::{Era, ProtocolVersion};
use serde_json::json;
use tally::{SLACK, Tally};

pub const CALLERS: usize = 32;
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// One connection's longest life before it is closed and replaced.
pub const EPOCH: Duration = Duration::from_secs(4);
/// Connections per phase before RSS and fds are taken as the baseline.
const WARMUP_EPOCHS: usize = 2;
/// The client's message limit; the chaos servers' oversized answers are 2x.
pub const LIMIT: usize = 64 * 1024;

/// The era a phase asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Legacy,
    Modern,
}

impl Pick {
    pub fn choice(self) -> VersionChoice {
        match self {
            Pick::Legacy => VersionChoice::Pinned(ProtocolVersion::V2025_11_25),
            Pick::Modern => VersionChoice::Auto,
        }
    }
}

/// Counts the era a connection got.
pub fn count_era(client: &Client, tally: &mut Tally) {
    tally.count(match client.era() {
        Some(Era::Modern) => "connected, 2026-07-28",
        Some(Era::Legacy) => "connected, legacy",
        _ => "connected, no era",
    });
}

/// 32 callers on `client` until `stop` (or the connection closes), each
/// call checked.
pub async fn hammer(client: Arc<Client>, n: usize, stop: Instant) -> Tally {
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
                if mine.call(&payload, t, TIMEOUT, r) == "closed" {
                    break;
                }
            }
            mine
        }));
    }
    let mut tally = Tally::default();
    for t in tasks {
        tally.merge(t.await.unwrap());
    }
    if tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .is_err()
    {
        tally
            .violations
            .push(format!("epoch {n}: close took over 10 s"));
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with `cargo xtask soak --seconds N`"]
async fn chaos_soak() {
    let seconds: u64 = std::env::var("MCP_SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let only = std::env::var("MCP_SOAK_ONLY").unwrap_or_default();
    let phases: Vec<(&str, Pick)> = [
        ("stdio legacy", Pick::Legacy),
        ("stdio 2026-07-28", Pick::Modern),
        ("http legacy", Pick::Legacy),
        ("http 2026-07-28", Pick::Modern),
    ]
    .into_iter()
    .filter(|(name, _)| name.contains(only.as_str()))
    .collect();
    assert!(
        !phases.is_empty(),
        "MCP_SOAK_ONLY={only:?} matches no phase"
    );
    let each = Duration::from_secs(seconds) / phases.len() as u32;
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
    let mut failed = Vec::new();
    for (name, pick) in phases {
        let started = Instant::now();
        let end = started + each;
        let mut tally = Tally::default();
        let mut samples = Vec::new();
        let mut http = if name.starts_with("http") {
            Some(http::Phase::start(pick).await)
        } else {
            None
        };
        let mut n = 0;
        while Instant::now() < end || n < WARMUP_EPOCHS + 2 {
            match &mut http {
                Some(h) => h.epoch(n, &mut tally).await,
                None => stdio::epoch(n, pick, &mut tally).await,
            }
            samples.push((tally::rss_kib(), tally::open_fds()));
            n += 1;
        }
        let extra = http.map(http::Phase::finish).unwrap_or_default();
        tally::report(
            name,
            started.elapsed().as_secs_f64(),
            n,
            &samples,
            WARMUP_EPOCHS,
            &extra,
            &mut tally,
        );
        if !tally.violations.is_empty() {
            // The first few in the panic message too: CI may keep only a
            // log's tail.
            let first: Vec<_> = tally.violations.iter().take(3).collect();
            failed.push(format!(
                "{name}: {} (first: {first:?})",
                tally.violations.len()
            ));
        }
    }
    done.store(true, Ordering::Relaxed);
    for b in busy {
        b.join().unwrap();
    }
    assert!(failed.is_empty(), "invariant violations: {failed:?}");
}
