//! `cargo xtask scale [ARGS]`: the scale benchmark. Builds `examples`'
//! `scale-bench` in release (the profile the project ships) and runs it:
//! one process holding 100 stdio servers and 1,000 HTTP clients of one
//! loopback server, reporting private memory, fds and threads per idle
//! connection, the time to connect all of them, one concurrent call on each,
//! and memory after closing them all (see `examples/src/bin/scale-bench.rs`).
//!
//! ARGS go to `scale-bench` unchanged (`--stdio N`, `--http N`, `--idle-ms MS`,
//! `--idle-timeout-ms MS|none`, `--max-at-once N`, `--shared-pool yes|no`,
//! `--era legacy|auto|modern`,
//! `--server PATH`; the legacy era is pinned by default, as a host that
//! knows its server does). HTTP memory is read while the connections are
//! kept alive and again past the transport's idle timeout. The server defaults to the shared
//! benchmark's refserver (`/tmp/mcp-bench/target/release/refserver`, built by
//! `../shared/bench/run.sh`); `REFSERVER` names another one.

use std::env;

use crate::{Result, cargo, run};

/// Builds and runs `scale-bench` with `args`.
pub(crate) fn scale(args: &[String]) -> Result {
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--release",
        "--package",
        "examples",
        "--bin",
        "scale-bench",
        "--",
    ]);
    if let Ok(server) = env::var("REFSERVER") {
        cmd.args(["--server", &server]);
    }
    cmd.args(args);
    run(&mut cmd)
}
