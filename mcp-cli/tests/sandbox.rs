//! `"sandboxEnabled": true` in a VS Code config, through `mcp` (issue 43,
//! item 1): `mcp` is its own sandbox launcher, the hostile server of
//! mcp-sandbox's tests is held to the sandbox, `mcp trust` shows what it
//! allows, and where no sandbox can be had the server does not start.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::json;

/// A project with `.vscode/mcp.json` naming the hostile server (sandboxed
/// when `sandboxed`), a `secret.txt` it denies and a `work/` it allows.
fn project(name: &str, sandboxed: bool) -> Option<PathBuf> {
    let python = test_support::python()?;
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-sandbox/tests/hostile_server.py");
    let dir = temp_path(name);
    std::fs::create_dir_all(dir.join(".vscode")).unwrap();
    std::fs::create_dir_all(dir.join("work")).unwrap();
    std::fs::write(dir.join("secret.txt"), "the-secret").unwrap();
    let config = json!({"servers": {"box": {
        "type": "stdio",
        "command": python,
        "args": [script],
        "env": {"HOSTILE_RAN": dir.join("work/ran")},
        "sandboxEnabled": sandboxed,
        "sandbox": {
            "filesystem": {"allowWrite": ["${workspaceFolder}/work"], "denyRead": ["${workspaceFolder}/secret.txt"]},
            "network": {"allowedDomains": ["localhost"]}
        }
    }}});
    std::fs::write(
        dir.join(".vscode/mcp.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    Some(dir)
}

fn config(dir: &Path) -> String {
    dir.join(".vscode/mcp.json").display().to_string()
}

fn read_secret(dir: &Path, env: &[(&str, &str)]) -> Run {
    let args = json!({"path": dir.join("secret.txt")}).to_string();
    mcp_in(
        dir,
        &["--config", &config(dir), "call", "box/read", &args],
        env,
    )
}

#[test]
fn a_sandboxed_server_cannot_read_what_is_denied() {
    for sandboxed in [false, true] {
        let Some(dir) = project(&format!("sandbox-read-{sandboxed}"), sandboxed) else {
            return;
        };
        let r = read_secret(&dir, &[]);
        assert_code(&r, 0);
        let want = if sandboxed {
            "denied:"
        } else {
            "ok: the-secret"
        };
        assert!(
            r.stdout.contains(want),
            "sandboxed {sandboxed}: {}",
            r.stdout
        );
        // Allowed: writing under allowWrite.
        let args = json!({"path": dir.join("work/out.txt"), "text": "x"}).to_string();
        let r = mcp_in(
            &dir,
            &["--config", &config(&dir), "call", "box/write", &args],
            &[],
        );
        assert!(r.stdout.contains("ok: wrote"), "{}", r.stdout);
    }
}

#[test]
fn where_no_sandbox_can_be_had_the_server_does_not_start() {
    let Some(dir) = project("sandbox-unavailable", true) else {
        return;
    };
    for knob in ["landlock", "userns"] {
        let r = read_secret(&dir, &[(mcp_sandbox_var(), knob)]);
        assert_code(&r, 3);
        assert!(!dir.join("work/ran").exists(), "the server ran");
        assert!(r.stderr.contains("sandboxed"), "{}", r.stderr);
        assert!(
            r.stderr.contains("sandboxEnabled"),
            "the error says how to opt out: {}",
            r.stderr
        );
        assert!(!r.stdout.contains("the-secret"));
    }
}

fn mcp_sandbox_var() -> &'static str {
    "MCP_SANDBOX_PRETEND_UNAVAILABLE"
}

#[test]
fn trust_shows_what_the_sandbox_allows() {
    let Some(dir) = project("sandbox-trust", true) else {
        return;
    };
    let store = dir.join("trust.json").display().to_string();
    let r = mcp_in(
        &dir,
        &["trust", &config(&dir)],
        &[("MCP_TRUST_FILE", store.as_str())],
    );
    assert_code(&r, 0);
    let text = format!("{}{}", r.stdout, r.stderr);
    for shown in [
        "sandboxed (reads everything but what is denied):",
        "writes: \"${workspaceFolder}/work\"",
        "no reads of: \"${workspaceFolder}/secret.txt\"",
        "network: localhost",
    ] {
        assert!(text.contains(shown), "{shown:?} missing from\n{text}");
    }
}

#[test]
fn the_host_starts_a_sandboxed_server_or_says_why_not() {
    // `mcp servers` goes through mcp-host (ServerSpec::from_config).
    let Some(dir) = project("sandbox-host", true) else {
        return;
    };
    let r = mcp_in(&dir, &["--config", &config(&dir), "servers", "--json"], &[]);
    assert_code(&r, 0);
    let list = r.json();
    let s = &list[0];
    assert_eq!(s["status"], "ready", "{s}");
    assert!(s["tools"].as_u64().unwrap() >= 5, "{s}");
    std::fs::remove_file(dir.join("work/ran")).unwrap();
    let r = mcp_in(
        &dir,
        &["--config", &config(&dir), "servers", "--json"],
        &[(mcp_sandbox_var(), "userns")],
    );
    let list = r.json();
    let s = &list[0];
    assert_eq!(s["status"], "failed", "{s}");
    let why = s["error"].as_str().unwrap();
    assert!(
        why.contains("user namespaces") && why.contains("sandboxEnabled"),
        "{why}"
    );
    assert!(!dir.join("work/ran").exists(), "the server ran");
}
