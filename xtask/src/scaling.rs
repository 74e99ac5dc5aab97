//! `cargo xtask scaling`: every decode and check over a collection a
//! server controls costs O(n) (issue 42). Each shape (a table line: how to
//! build n elements, what to run on them) is measured at 1,000 and 100,000
//! elements by `test_support::scaling`, in thread CPU time, the least of
//! several runs; the run fails naming every shape whose cost per element
//! grew more than `MAX_GROWTH` (4×). A quadratic shape fails at 10,000
//! elements already, in a second or two.
//!
//! The tables: `mcp-cli/tests/scaling.rs` (what the libraries decode: the
//! server's requests, results, the envelope, stdio, SSE, `WWW-Authenticate`,
//! cursors, mcp-tools' argument checker), and the `scaling_of_*` tests of
//! the code that is not public (the CLI's form and listing, mcp-tools'
//! tool names, mcp-transport-http's `x-mcp-header` annotations). A new type
//! a server sends adds a line to one of them. One test thread: the shapes
//! are measured one after the other.
//!
//! `MCP_SCALING_ONLY=<text>` measures only the shapes whose name contains
//! it; `MCP_SCALING_MAX=<factor>` changes the limit.

use super::{Result, cargo, run};

pub(super) fn scaling(args: &[String]) -> Result {
    if let Some(a) = args.first() {
        return Err(format!("scaling: unknown argument {a:?} (it takes none)"));
    }
    let ignored = ["--", "--ignored", "--nocapture", "--test-threads", "1"];
    run(cargo()
        .args(["test", "-p", "mcp-cli", "--test", "scaling"])
        .args(ignored))?;
    run(cargo()
        .args([
            "test",
            "-p",
            "mcp-cli",
            "-p",
            "mcp-tools",
            "-p",
            "mcp-transport-http",
            "--lib",
            "--bins",
            "scaling_of_",
        ])
        .args(ignored))
}
