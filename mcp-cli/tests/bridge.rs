//! `mcp bridge` under a stdio-only host: the Python SDK's client
//! (`tests/peers/bridge_host.py`), whose server command is `mcp bridge`,
//! against real Streamable HTTP servers: the Python SDK's (over TCP and a
//! Unix socket, both eras, progress and elicitation), server-everything's
//! (progress, elicitation, a 2025-11-25 task), the TypeScript SDK's tasks
//! peer (a 2026-07-28 task), an OAuth-protected one (login, then the
//! cached token), and across the era line (refused, naming both).

#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
#[path = "support/oauth_mock.rs"]
mod oauth_mock;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::bridge::Bridge;
use common::*;
use serde_json::{Value, json};

/// Runs the Python host: `bridge_host.py MODE SCENARIO mcp bridge ARGS...`,
/// returns what it printed (one JSON object).
fn host(mode: &str, scenario: &str, bridge_args: &[&str], env: &[(&str, &str)]) -> Option<Value> {
    let py = python_peer("bridge_host.py")?;
    let mut cmd = py.to_std();
    cmd.args([mode, scenario, MCP, "bridge"]).args(bridge_args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_with_deadline(cmd);
    let text = String::from_utf8_lossy(&out.stdout);
    Some(serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "the host printed no JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    }))
}

fn run_with_deadline(mut cmd: Command) -> std::process::Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("the host did not finish within 120 s: {cmd:?}");
        }
    }
}

/// The Python SDK's server over Streamable HTTP on a free port.
fn python_http() -> Option<(String, KillOnDrop)> {
    let port = free_port();
    let cmd = test_support::python_server()?
        .arg("http")
        .arg(port.to_string())
        .to_std();
    let server = listening_blocking(cmd, port);
    Some((format!("http://127.0.0.1:{port}/mcp"), server))
}

fn assert_python_scenario(got: &Value, era: &str) {
    assert_eq!(got["protocolVersion"], era, "{got}");
    assert_eq!(got["echo"], "through the bridge", "{got}");
    assert_eq!(got["add"], "5", "{got}");
    assert_eq!(got["count"], "counted to 3", "{got}");
    assert_eq!(got["progress"], json!([1.0, 2.0, 3.0]), "progress: {got}");
    assert_eq!(got["greet"], "Hello, Ann!", "elicitation: {got}");
}

#[test]
fn the_python_sdk_client_uses_the_python_sdk_http_server_through_the_bridge_in_both_eras() {
    let Some((url, _server)) = python_http() else {
        return;
    };
    for (mode, era) in [
        ("legacy", "2025-11-25"),
        ("auto", "2026-07-28"),
        ("2026-07-28", "2026-07-28"),
    ] {
        let got = host(mode, "python", &["--http", &url], &[]).unwrap();
        assert_python_scenario(&got, era);
    }
}

#[test]
fn the_bridge_reaches_a_server_on_a_unix_socket_in_both_eras() {
    let dir = test_support::SocketDir::new();
    let Some(cmd) = test_support::python_socket_server(&dir.path()) else {
        return;
    };
    let _server = test_support::listening_on_socket_blocking(cmd.to_std(), &dir.path());
    for (mode, era) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let got = host(mode, "python", &["--http", &dir.url()], &[]).unwrap();
        assert_python_scenario(&got, era);
    }
}

#[test]
fn server_everything_over_http_with_progress_elicitation_and_a_task() {
    let Some(everything) = test_support::everything() else {
        return;
    };
    let port = free_port();
    let mut cmd = everything.arg("streamableHttp").to_std();
    cmd.env("PORT", port.to_string());
    let _server = listening_blocking(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    // A legacy server: the auto host's probe is refused and it falls back.
    for mode in ["legacy", "auto"] {
        let got = host(mode, "everything", &["--http", &url], &[]).unwrap();
        assert_eq!(got["protocolVersion"], "2025-11-25", "{got}");
        assert_eq!(got["echo"], "Echo: hi", "{got}");
        assert_eq!(got["progress"], json!([1.0, 2.0, 3.0]), "{got}");
        assert!(
            got["elicit"].as_str().unwrap().contains("Name: Ann"),
            "{got}"
        );
        let statuses = got["taskStatuses"].as_array().unwrap();
        assert_eq!(statuses.last().unwrap(), "completed", "{got}");
        assert!(
            got["taskResult"]
                .as_str()
                .unwrap()
                .contains("Research Report: bridges"),
            "{got}"
        );
    }
}

/// The TypeScript SDK's 2026-07-28 tasks peer over HTTP, and its URL.
fn tasks_http() -> Option<(String, KillOnDrop)> {
    let port = free_port();
    let cmd = test_support::tasks_server()?
        .arg("--http")
        .arg(port.to_string())
        .to_std();
    let server = listening_blocking(cmd, port);
    Some((format!("http://127.0.0.1:{port}/mcp"), server))
}

#[test]
fn a_2026_07_28_task_passes_through_the_bridge() {
    let Some((url, _server)) = tasks_http() else {
        return;
    };
    for mode in ["auto", "2026-07-28"] {
        let got = host(mode, "tasks", &["--http", &url], &[]).unwrap();
        assert_eq!(got["protocolVersion"], "2026-07-28", "{got}");
        assert_eq!(
            got["created"], "task",
            "the call was answered with a task: {got}"
        );
        assert_eq!(got["final"]["status"], "completed", "{got}");
        assert_eq!(
            got["final"]["result"]["content"][0]["text"], "done: bridges",
            "{got}"
        );
    }
}

#[test]
fn across_the_era_line_the_host_is_told_both_revisions() {
    // A host that speaks only initialize, a server that speaks only 2026-07-28.
    let Some((url, _server)) = tasks_http() else {
        return;
    };
    let got = host("legacy", "echo", &["--http", &url], &[]).unwrap();
    assert_eq!(got["code"], -32022, "{got}");
    let msg = got["error"].as_str().unwrap();
    assert!(
        msg.contains("the host offered 2025-11-25 (initialize)")
            && msg.contains("speaks only the 2026-07-28 protocol"),
        "{msg}"
    );
}

#[test]
fn an_oauth_login_through_the_bridge_then_the_cached_token() {
    let (base, log) = oauth_mock::start_mock();
    let dir = temp_path("bridge-oauth");
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("tokens.json");
    let token_env = token_file.display().to_string();
    let url = format!("{base}/mcp");
    let Some(py) = python_peer("bridge_host.py") else {
        return;
    };
    // The host's stderr is the bridge's: the authorization URL is there.
    let mut child = py
        .to_std()
        .args([
            "legacy",
            "echo",
            MCP,
            "bridge",
            "--no-browser",
            "--http",
            &url,
        ])
        .env("MCP_TOKEN_FILE", &token_env)
        // Nothing of this test's may reach the real home's token cache.
        .env("HOME", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let rx = oauth_mock::log_in_from(stderr, Duration::ZERO);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child.wait().unwrap();
    let stderr = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    let got: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\nstderr: {stderr}"));
    assert_eq!(got["echo"], "hi", "{got}\nstderr: {stderr}");
    assert!(stderr.contains("open this URL"), "{stderr}");
    assert!(log.lock().unwrap().contains(&"GET /authorize".to_owned()));
    let cached = std::fs::read_to_string(&token_file).unwrap();
    assert!(cached.contains(oauth_mock::TOKEN));
    assert!(!stderr.contains(oauth_mock::TOKEN) && !stdout.contains(oauth_mock::TOKEN));

    // The next host gets through on the cached token: no login.
    log.lock().unwrap().clear();
    let got = host(
        "legacy",
        "echo",
        &["--no-browser", "--http", &url],
        &[
            ("MCP_TOKEN_FILE", &token_env),
            ("HOME", &dir.display().to_string()),
        ],
    )
    .unwrap();
    assert_eq!(got["echo"], "hi", "{got}");
    let log = log.lock().unwrap().clone();
    assert!(
        !log.iter()
            .any(|l| l.contains("authorize") || l.contains("token")),
        "{log:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The ids of `pid`'s child processes (Linux: from `/proc`).
fn children(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let list =
            std::fs::read_to_string(task.unwrap().path().join("children")).unwrap_or_default();
        out.extend(list.split_whitespace().map(str::to_owned));
    }
    assert!(!out.is_empty(), "the bridge has no child process");
    out
}

#[test]
fn the_bridge_exits_0_when_the_host_closes_stdin_and_3_when_a_stdio_server_dies() {
    let Some((url, _server)) = python_http() else {
        return;
    };
    let mut b = Bridge::spawn(&["bridge", "--http", &url], &[]);
    b.send(json!({"jsonrpc": "2.0", "id": "x", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    let init = b.recv();
    assert_eq!(init["id"], "x", "the host's own id comes back: {init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    drop(b.child.stdin.take());
    let status = wait_exit(&mut b.child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0));

    // A stdio server that exits mid-call: the call is answered with the
    // reason, and the bridge exits 3.
    let Some(py) = test_support::python_server() else {
        return;
    };
    let line = py.arg("stdio").shell_line();
    let mut b = Bridge::spawn(&["bridge", "--stdio", &line], &[]);
    b.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    assert_eq!(b.recv()["id"], 1);
    b.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow_count", "arguments": {"steps": 100}}}));
    // Kill the server (the bridge's child) out from under the bridge.
    for pid in children(b.child.id()) {
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
    }
    let answer = loop {
        let m = b.recv();
        if m.get("id") == Some(&json!(2)) {
            break m;
        }
    };
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("connection to the server was lost"),
        "{answer}"
    );
    let status = wait_exit(&mut b.child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(3));
}

/// `/proc/PID/io`'s `rchar`: the bytes the process has read so far.
fn bytes_read(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .unwrap()
        .parse()
        .unwrap()
}

/// `/proc/PID/status`'s `VmRSS`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

#[test]
fn a_host_that_stops_reading_stops_the_bridge_reading_the_server() {
    // A server that never stops sending (1 KiB notifications as fast as
    // `yes` writes them) and a host that never reads: once the pipes and
    // the bounded queues between them are full the bridge reads nothing
    // more, and its memory stays where it was.
    let data = "x".repeat(1024);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": data}});
    let mut b = Bridge::spawn(&["bridge", "--stdio", &format!("yes '{note}'")], &[]);
    let pid = b.child.id();
    // Full within well under a second unloaded; a loaded machine gets time.
    let mut before = bytes_read(pid);
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(200));
        let now = bytes_read(pid);
        if now == before {
            break;
        }
        before = now;
    }
    let rss_before = rss_kib(pid);
    std::thread::sleep(Duration::from_secs(2));
    let read = bytes_read(pid) - before;
    let rss = rss_kib(pid);
    assert_eq!(
        read, 0,
        "the bridge read {read} bytes while its host read nothing"
    );
    assert!(
        before < 64 << 20,
        "the bridge read {before} bytes before it stopped"
    );
    assert!(
        rss < 96 * 1024,
        "the bridge's resident set grew to {rss} KiB"
    );
    assert!(rss <= rss_before + 1024, "{rss_before} KiB, then {rss} KiB");
    // The host reads again: the messages flow.
    let m = b.recv();
    assert_eq!(m["method"], "notifications/message", "{m}");
    let _ = b.child.kill();
    let _ = b.child.wait();
}
