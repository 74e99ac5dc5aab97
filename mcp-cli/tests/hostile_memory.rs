//! `mcp` against hostile servers (issue 33 #2, #3, raw depth): its peak
//! memory stays below 4 × the largest message it was sent + 64 MiB, and
//! every list ends with the reason named.
//!
//! The server is `test-support/hostile/memory_server.py` over stdio (it
//! writes its large members in chunks and stays small). `mcp`'s peak RSS is
//! what the kernel recorded for it (`ru_maxrss` of the process tree, read by
//! a Python wrapper: std has no `getrusage`, and `unsafe` is not ours to
//! use); it does not depend on how busy the machine is.
#![allow(missing_docs, unreachable_pub, clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::MCP;

const MIB: u64 = 1 << 20;
/// `{}` × 5.2 million: a 15 MiB message (the issue's case).
const EMPTIES: &str = "5200000";
const EMPTIES_MESSAGE: u64 = 3 * 5_200_000 + 200;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../test-support/hostile/memory_server.py"
);

/// Runs `mcp --stdio "<server> <server_args>" <mcp_args>`: its exit code,
/// stdout, stderr and peak RSS in bytes.
fn run(server_args: &str, mcp_args: &[&str]) -> (Option<i32>, String, String, u64) {
    let server = format!("python3 {SCRIPT} {server_args}");
    let mut args = vec!["--stdio", server.as_str()];
    args.extend(mcp_args);
    run_mcp(&args, &[])
}

/// Runs `mcp <args>` with `env`: its exit code, stdout, stderr and peak
/// RSS in bytes.
fn run_mcp(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String, u64) {
    // Runs argv, passes its output through, and reports the largest peak
    // RSS of the processes it waited for (mcp, and the server mcp reaped).
    const WRAPPER: &str = r#"
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, timeout=120)
sys.stdout.buffer.write(r.stdout)
sys.stderr.buffer.write(r.stderr)
sys.stderr.write("\npeak_kib: %d\nexit: %d\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode))
"#;
    let out = Command::new("python3")
        .args(["-c", WRAPPER, MCP, "--timeout", "100"])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let field = |name: &str| -> i64 {
        stderr
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in: {stderr}"))
            .trim()
            .parse()
            .unwrap()
    };
    let peak = field("peak_kib:") as u64 * 1024;
    let code = i32::try_from(field("exit:")).ok();
    eprintln!("mcp {args:?}: exit {code:?}, peak RSS {} MiB", peak / MIB);
    (code, stdout, stderr, peak)
}

fn assert_bounded(peak: u64, message: u64) {
    assert!(
        peak <= 4 * message + 64 * MIB,
        "peak RSS {} MiB over 4 × {} MiB + 64 MiB",
        peak / MIB,
        message / MIB
    );
}

/// The issue's case: `mcp call` on a 15 MiB answer whose
/// `structuredContent` holds 5.2 million `{}` (468 MiB RSS when it was
/// decoded into a `serde_json::Value`), only the text printed.
#[test]
fn call_with_millions_of_empty_objects_in_structured_content() {
    let (code, stdout, stderr, peak) = run(&format!("structured {EMPTIES}"), &["call", "x"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "hi\n");
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// 600,000 empty text blocks (15 MiB): decoded, each costs its struct.
#[test]
fn call_with_six_hundred_thousand_empty_text_blocks() {
    let (code, stdout, stderr, peak) = run("blocks 600000", &["call", "x"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.len() <= 600_000 + 1,
        "output no larger than the blocks"
    );
    assert_bounded(peak, 26 * 600_000 + 200);
}

/// The same flood in the listed tool's `inputSchema`.
#[test]
fn tools_with_millions_of_empty_objects_in_a_schema() {
    let (code, stdout, stderr, peak) = run(&format!("schema {EMPTIES}"), &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("big"), "{stdout}");
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// The same flood from a configured server, whose tools are pinned (their
/// digests read from the schemas' text) and scanned for hidden text.
#[test]
fn pinning_a_tool_with_millions_of_empty_objects_in_a_schema() {
    let dir = std::env::temp_dir().join(format!("mcp-hostile-pins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join(".mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"big": {"command": "python3", "args": [SCRIPT, "schema", EMPTIES]}}})
            .to_string(),
    )
    .unwrap();
    let pins = dir.join("pins.json").display().to_string();
    let config = config.display().to_string();
    let args = ["--config", config.as_str(), "--server", "big", "tools"];
    for run in ["first use", "checked against the pins"] {
        let (code, stdout, stderr, peak) = run_mcp(&args, &[("MCP_PINS_FILE", &pins)]);
        assert_eq!(code, Some(0), "{run}: {stderr}");
        assert!(stdout.starts_with("big"), "{run}: {stdout}");
        assert_bounded(peak, EMPTIES_MESSAGE);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// 400 pages, each with 1 MiB of a member nobody reads (and a 60 KiB
/// cursor): all pages were held until the last (over 400 MiB).
#[test]
fn tools_over_400_pages_keeps_the_tools_not_the_pages() {
    let (code, stdout, stderr, peak) = run("pages 400 60000 1048576", &["tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 400, "{stdout}");
    assert_bounded(peak, MIB + 60_000 + 200);
}

/// 1 MiB cursors (the issue's case: 409 MiB): the list ends at the first,
/// naming the limit.
#[test]
fn tools_with_a_one_mib_cursor_ends_naming_the_limit() {
    let (code, _, stderr, peak) = run("pages 400 1048576 0", &["tools"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("a nextCursor of 1048576 bytes") && stderr.contains("65536"),
        "{stderr}"
    );
    assert_bounded(peak, MIB + 200);
}

/// The same cursor again: the list ends at the second page, naming it.
#[test]
fn tools_with_a_repeated_cursor_ends_naming_it() {
    let (code, _, stderr, _) = run("repeat", &["tools"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains(r#"page 2 of tools/list repeats an earlier cursor ("again")"#),
        "{stderr}"
    );
}

/// A result nested 100,000 arrays deep: the call fails naming the depth
/// limit (no stack overflow anywhere, little memory).
#[test]
fn call_with_a_result_nested_100_000_deep_fails_naming_the_limit() {
    let (code, stdout, stderr, peak) = run("deep 100000", &["call", "x"]);
    assert_ne!(code, Some(0), "{stdout}");
    assert!(code.is_some(), "killed by a signal: {stderr}");
    assert!(stderr.contains("deeper than 128 levels"), "{stderr}");
    assert_bounded(peak, 200_100);
}
