//! The `mcp-http` example: a local Streamable HTTP endpoint and the client over HTTP.

#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn mcp_http_example_negotiates_modern_and_calls_a_tool() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-http"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("protocol 2026-07-28"), "{stdout}");
    assert!(stdout.contains("tool slow_sum"), "{stdout}");
    assert!(stdout.contains("echo -> hello over HTTP"), "{stdout}");
}
