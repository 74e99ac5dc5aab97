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
//! kept alive and again past the transport's idle timeout. The server is the
//! per-call benchmark's `bench-server` (built here in release); `REFSERVER`
//! names another one that speaks its command line (`--stdio`, `--http 0`,
//! `--modern`).

use std::env;

use crate::{Result, cargo, root, run};

/// Builds and runs `scale-bench` with `args`.
pub(crate) fn scale(args: &[String]) -> Result {
    let server = match env::var("REFSERVER") {
        Ok(s) => s,
        Err(_) => {
            run(cargo().args([
                "build",
                "--release",
                "-p",
                "examples",
                "--bin",
                "bench-server",
            ]))?;
            root()
                .join("target/release/bench-server")
                .display()
                .to_string()
        }
    };
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
    cmd.args(["--server", &server]);
    cmd.args(args);
    run(&mut cmd)
}
