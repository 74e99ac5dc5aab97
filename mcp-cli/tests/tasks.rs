//! `mcp call` of a task-required tool against server-everything over stdio
//! (its `simulate-research-query`, `taskSupport: "required"`): run as a
//! task with status lines on stderr and exit 0 with the report; Ctrl-C
//! cancels the task on the server and exits 130.

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
    let mut child = Command::new(MCP)
        .args([
            "--stdio",
            &server,
            "call",
            "simulate-research-query",
            r#"{"topic":"x"}"#,
        ])
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
    wait_line(&rx, Duration::from_secs(30), |l| {
        l.starts_with("mcp: task ") && l.contains("started")
    });
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = wait_exit(&mut child, Duration::from_secs(15));
    assert_eq!(status.code(), Some(130));
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
