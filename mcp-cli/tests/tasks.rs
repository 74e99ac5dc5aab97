//! `mcp call` of a task-required tool against server-everything over stdio
//! (its `simulate-research-query`, `taskSupport: "required"`): run as a
//! task with status lines on stderr and exit 0 with the report; Ctrl-C
//! cancels the task on the server and exits 130. The same in 2026-07-28
//! (the `io.modelcontextprotocol/tasks` extension) against
//! `peers/tasks_server.mjs` (the TypeScript SDK) over Streamable HTTP, where
//! tasks outlive one `mcp` run: `mcp tasks get | result | cancel ID`.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod common;

use common::*;

#[test]
fn a_task_required_tool_runs_as_a_task_and_exits_0_with_its_result() {
    let Some(server) = everything_stdio() else {
        return;
    };
    let r = mcp(&[
        "--stdio",
        &server,
        "call",
        "simulate-research-query",
        r#"{"topic":"rust"}"#,
    ]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("Research Report: rust"), "{}", r.stdout);
    let status: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("mcp: task "))
        .collect();
    assert!(
        status.iter().any(|l| l.contains("started: working")),
        "{}",
        r.stderr
    );
    assert!(
        status.iter().any(|l| l.contains(": completed")),
        "{}",
        r.stderr
    );

    let r = mcp(&[
        "--stdio",
        &server,
        "call",
        "simulate-research-query",
        r#"{"topic":"json"}"#,
        "--json",
    ]);
    assert_code(&r, 0);
    let v = r.json();
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Research Report: json"),
        "{v}"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_a_task_cancels_it_on_the_server_and_exits_130() {
    let Some(server) = everything_stdio() else {
        return;
    };
    let (mut child, rx) = spawn_mcp(&[
        "--stdio",
        &server,
        "call",
        "simulate-research-query",
        r#"{"topic":"x"}"#,
    ]);
    wait_line(&rx, Duration::from_secs(30), |l| {
        l.starts_with("mcp: task ") && l.contains("started")
    });
    interrupt(&mut child);
    // The line mcp writes once the server answered tasks/cancel.
    wait_line(&rx, Duration::from_secs(5), |l| {
        l.starts_with("mcp: task ") && l.ends_with(" cancelled")
    });
}

/// `mcp tasks`: server-everything keeps tasks per session, so a new `mcp`
/// finds none: `list` is empty, `get`/`result`/`cancel` of an unknown id
/// exit 4 with the server's error.
#[test]
fn tasks_subcommands_ask_the_server() {
    let Some(server) = everything_stdio() else {
        return;
    };
    let r = mcp(&["--stdio", &server, "tasks", "list", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json(), serde_json::json!([]));
    for action in ["get", "result", "cancel"] {
        let r = mcp(&["--stdio", &server, "tasks", action, "nope"]);
        assert_code(&r, 4);
        assert!(
            r.stderr.contains(&format!("tasks/{action}")) && r.stderr.contains("not found"),
            "{action}: {}",
            r.stderr
        );
    }
}

/// The 2026-07-28 tasks peer over Streamable HTTP, and its URL.
fn tasks_peer() -> Option<(test_support::KillOnDrop, String)> {
    let port = test_support::free_port();
    let cmd = test_support::tasks_server()?
        .arg("--http")
        .arg(port.to_string())
        .to_std();
    let server = test_support::listening_blocking(cmd, port);
    Some((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// `mcp ARGS` running, and its stderr's lines as they come.
fn spawn_mcp(args: &[&str]) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = Command::new(MCP)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Ctrl-C to a running `mcp`: it exits 130.
#[cfg(unix)]
fn interrupt(child: &mut std::process::Child) {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = wait_exit(child, Duration::from_secs(15));
    assert_eq!(status.code(), Some(130));
}

/// A finished task, asked about by a later run: `mcp tasks get ID` says
/// `completed`, `mcp tasks result ID` prints `result`.
fn assert_completed_later(url: &str, id: &str, result: &str) {
    let r = mcp(&["--http", url, "tasks", "get", id]);
    assert_code(&r, 0);
    assert!(
        r.stdout.starts_with(&format!("{id}  completed")),
        "{}",
        r.stdout
    );
    let r = mcp(&["--http", url, "tasks", "result", id]);
    assert_code(&r, 0);
    assert_eq!(r.stdout.trim(), result);
}

/// The id in `mcp: task ID started: …`.
fn started_id(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp: task ")?
                .split_once(" started")?
                .0
                .into()
        })
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no task started in\n{stderr}"))
}

#[test]
fn modern_a_tool_the_server_runs_as_a_task_exits_0_with_its_result() {
    let Some((_server, url)) = tasks_peer() else {
        return;
    };
    let r = mcp(&["--http", &url, "call", "slow_task", r#"{"topic":"rust"}"#]);
    assert_code(&r, 0);
    assert_eq!(r.stdout.trim(), "done: rust");
    assert!(r.stderr.contains(": completed: finished"), "{}", r.stderr);
    let id = started_id(&r.stderr);
    // The task outlives the run: its status and result, by id.
    assert_completed_later(&url, &id, "done: rust");
    // A task that fails: its JSON-RPC error, exit 4.
    let r = mcp(&["--http", &url, "call", "protocol_error_job"]);
    assert_code(&r, 4);
    assert!(
        r.stderr.contains("job failed (code -32603)"),
        "{}",
        r.stderr
    );
    // No tasks/list in the extension: a usage error that says so.
    let r = mcp(&["--http", &url, "tasks", "list"]);
    assert_code(&r, 2);
    assert!(r.stderr.contains("no tasks/list"), "{}", r.stderr);
    let r = mcp(&["--http", &url, "tasks", "get", "nope"]);
    assert_code(&r, 4);
    assert!(r.stderr.contains("Task not found"), "{}", r.stderr);
}

#[test]
fn modern_tasks_cancel_and_result_of_a_running_task() {
    let Some((_server, url)) = tasks_peer() else {
        return;
    };
    // Started by one run, waited for by another.
    let (mut child, rx) = spawn_mcp(&[
        "--http",
        &url,
        "call",
        "slow_task",
        r#"{"topic":"later","ms":1500}"#,
    ]);
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a status line");
    let id = started_id(&first);
    let r = mcp(&["--http", &url, "tasks", "result", &id]);
    assert_code(&r, 0);
    assert_eq!(r.stdout.trim(), "done: later");
    assert!(wait_exit(&mut child, Duration::from_secs(15)).success());
    // Cancelled by id while it runs: the server says so on the next get.
    let r = mcp(&["--http", &url, "call", "never_finishes", "--timeout", "0.2"]);
    assert_code(&r, 3);
    let id = started_id(&r.stderr);
    let r = mcp(&["--http", &url, "tasks", "get", &id]);
    assert!(
        r.stdout.contains("  cancelled"),
        "the deadline cancels: {}",
        r.stdout
    );
}

#[cfg(unix)]
#[test]
fn modern_ctrl_c_during_a_task_cancels_it_on_the_server_and_exits_130() {
    let Some((_server, url)) = tasks_peer() else {
        return;
    };
    let (mut child, rx) = spawn_mcp(&["--http", &url, "call", "never_finishes"]);
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a status line");
    let id = started_id(&first);
    interrupt(&mut child);
    wait_line(&rx, Duration::from_secs(5), |l| {
        l == format!("mcp: task {id} cancelled")
    });
    let r = mcp(&[
        "--http",
        &url,
        "call",
        "task_state",
        &format!(r#"{{"taskId":"{id}"}}"#),
    ]);
    assert_code(&r, 0);
    assert_eq!(r.stdout.trim(), "cancelled");
}

/// FastMCP (`peers/fastmcp_server.py`, the tasks extension) over
/// Streamable HTTP, and its URL.
fn fastmcp_peer() -> Option<(test_support::KillOnDrop, String)> {
    let port = test_support::free_port();
    let mut cmd = test_support::fastmcp_server()?
        .arg("http")
        .arg(port.to_string())
        .to_std();
    cmd.stderr(Stdio::null());
    let server = test_support::listening_blocking(cmd, port);
    Some((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// `mcp call` of FastMCP's task tool: its status lines (FastMCP's progress
/// messages), exit 0 with the result; the task by id afterwards; Ctrl-C
/// during another cancels it on the server and exits 130.
#[cfg(unix)]
#[test]
fn modern_fastmcp_task_tool_through_the_cli() {
    let Some((_server, url)) = fastmcp_peer() else {
        return;
    };
    let r = mcp(&[
        "--http",
        &url,
        "call",
        "slow_report",
        r#"{"topic":"cli","steps":4,"step_ms":400}"#,
    ]);
    assert_code(&r, 0);
    assert_eq!(r.stdout.trim(), "report on cli");
    assert!(r.stderr.contains("step "), "{}", r.stderr);
    let id = started_id(&r.stderr);
    assert_completed_later(&url, &id, "report on cli");

    let (mut child, rx) = spawn_mcp(&[
        "--http",
        &url,
        "call",
        "slow_report",
        r#"{"topic":"never","steps":100,"step_ms":500}"#,
    ]);
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a status line");
    let id = started_id(&first);
    interrupt(&mut child);
    wait_line(&rx, Duration::from_secs(5), |l| {
        l == format!("mcp: task {id} cancelled")
    });
    let r = mcp(&["--http", &url, "tasks", "get", &id]);
    assert!(r.stdout.contains("  cancelled"), "{}", r.stdout);
}
