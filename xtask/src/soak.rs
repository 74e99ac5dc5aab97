//! `cargo xtask soak [--seconds N]`: the chaos soak (issue 14), default 60 s.
//!
//! Runs the ignored test `mcp-cli/tests/soak.rs` (`chaos_soak`), which
//! starts the demo server in chaos mode, hammers one client with 32
//! callers while two threads keep both cores busy, checks the invariants
//! throughout and prints the numbers; it fails on any violation.

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
            "mcp-cli",
            "--test",
            "soak",
            "--",
            "--ignored",
            "--nocapture",
        ])
        .env("MCP_SOAK_SECONDS", seconds))
}
