//! `cargo xtask soak [--seconds N]`: the chaos soak (issue 14), default 60 s.
//!
//! Runs the ignored test `mcp-cli/tests/soak/` (`chaos_soak`): four phases,
//! stdio and HTTP, each in both eras (legacy 2025-11-25, and 2026-07-28),
//! **N is split evenly** between them (N/4 each; a phase runs at least four
//! 4 s connections). Each phase hammers one client with 32 callers against
//! a misbehaving server (the demo server's chaos mode over stdio, an
//! in-process chaos HTTP server with sessions, SSE resumption, crashes and
//! restarts) while two threads keep both cores busy, checks the invariants
//! throughout and prints its numbers; the run fails on any violation.
//! `MCP_SOAK_ONLY=http` (or `stdio legacy`, ...) runs only the phases whose
//! name contains it.

use super::{Result, cargo, run};

pub(super) fn soak(args: &[String]) -> Result {
    let mut seconds = String::from("60");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = it
                    .next()
                    .filter(|s| s.parse::<u64>().is_ok())
                    .ok_or("--seconds needs a number")?
                    .clone();
            }
            other => {
                return Err(format!(
                    "soak: unknown argument {other:?} (try --seconds N)"
                ));
            }
        }
    }
    run(cargo()
        .args([
            "test",
            "-p",
            "mcpio-cli",
            // the demo server's fault injection, left out of the shipped `mcp`
            "--features",
            "chaos",
            "--test",
            "soak",
            "--",
            "--ignored",
            "--nocapture",
        ])
        .env("MCP_SOAK_SECONDS", seconds))
}
