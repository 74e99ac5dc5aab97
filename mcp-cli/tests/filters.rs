//! A configured server's `includeTools` / `excludeTools` pattern that
//! matches none of its tools is reported on stderr (issue 36), with what is
//! literal when it looks like another glob dialect (`t[0-9]*`: only `*` and
//! `**` are special).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use common::*;
use serde_json::json;

#[test]
fn a_tool_pattern_matching_nothing_gets_a_line() {
    let dir = temp_path("filters");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"demo": {
            "type": "stdio",
            "command": MCP,
            "args": ["demo-server"],
            "includeTools": ["t[0-9]*", "echo", "slow_*"],
            "excludeTools": ["admin.*", "slow_sum"],
        }}})
        .to_string(),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    for args in [
        &["--config", file, "--server", "demo", "tools"][..],
        &["--config", file, "tools"],
    ] {
        let r = mcp(args);
        assert_code(&r, 0);
        assert!(r.stdout.contains("echo("), "{}", r.stdout);
        assert!(!r.stdout.contains("slow_sum"), "{}", r.stdout);
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {}", r.stderr);
        assert_eq!(
            lines[0],
            "mcp: server demo: includeTools pattern \"t[0-9]*\" matches none of its tools \
             (only `*` and `**` are special in tool patterns; `[`, `]` are matched literally)"
        );
        assert_eq!(
            lines[1],
            "mcp: server demo: excludeTools pattern \"admin.*\" matches none of its tools"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
