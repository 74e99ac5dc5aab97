//! Long-running tools (MCP tasks) as agent tools, against server-everything
//! 2026.8.31 over stdio: `simulate-research-query` (taskSupport
//! "required") called through a toolbox waits for its result with its
//! status changes as progress; started instead, it returns a ticket at once
//! and is polled to its output; a tool the server runs at once gives its
//! output from `start`.
//!
//! The same against FastMCP (`peers/fastmcp_server.py`, 2026-07-28 and
//! the tasks extension), whose tools say nothing of tasks on that revision
//! (its `Tool` has no `execution`): `start` still gets a task, as the
//! server decides.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::{Client, TaskOptions};
use mcp_tools::{Server, TaskPoll, ToolOptions, ToolTask, Toolbox};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_tool_is_an_agent_tool_and_can_be_started_and_polled() {
    let Some(peer) = test_support::everything() else {
        return;
    };
    let cmd = ServerCommand::new(peer.program)
        .args(peer.args)
        .arg("stdio")
        .stderr(Stderr::discard());
    let client = Client::builder("mcp-tools-tests", "0.1.0")
        .connect(StdioTransport::spawn(cmd).unwrap())
        .await
        .unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let toolbox = Toolbox::builder()
        .server(Server::new("everything", client.clone()).prefix("ev_"))
        .tool_options(ToolOptions::new().on_progress(move |tool, p| {
            seen.lock()
                .unwrap()
                .push((tool.to_owned(), p.message.unwrap_or_default()))
        }))
        .build()
        .await
        .unwrap();

    let out = tokio::time::timeout(
        Duration::from_secs(60),
        toolbox.call("ev_simulate-research-query", json!({"topic": "agents"})),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(out.text.contains("Research Report: agents"), "{}", out.text);
    let progress = progress.lock().unwrap().clone();
    assert!(
        progress
            .iter()
            .any(|(t, m)| t == "ev_simulate-research-query" && m.starts_with("working: ")),
        "no status as progress: {progress:?}"
    );

    let started = toolbox
        .start(
            "ev_simulate-research-query",
            json!({"topic": "polled"}),
            TaskOptions::new(),
        )
        .await
        .unwrap();
    let ToolTask::Started(ticket) = started else {
        panic!("not started as a task: {started:?}")
    };
    assert_eq!(ticket.server.name, "everything");
    // Written down and read back, as an agent that restarts would.
    let ticket: mcp_client::TaskTicket =
        serde_json::from_str(&serde_json::to_string(&ticket).unwrap()).unwrap();
    let t0 = Instant::now();
    let mut running = 0;
    let out = loop {
        assert!(t0.elapsed() < Duration::from_secs(60), "never done");
        match toolbox.poll(&ticket).await.unwrap() {
            TaskPoll::Done(out) => break out,
            TaskPoll::Running { .. } => running += 1,
            other => panic!("{other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(out.text.contains("Research Report: polled"), "{}", out.text);
    assert!(running > 0, "start waited for the task");

    // A tool the server runs at once: its output from start.
    let done = toolbox
        .start("ev_echo", json!({"message": "now"}), TaskOptions::new())
        .await
        .unwrap();
    let ToolTask::Done(out) = done else {
        panic!("{done:?}")
    };
    assert!(out.text.contains("now"), "{}", out.text);
    // Arguments are checked before anything is sent.
    let err = toolbox
        .start(
            "ev_simulate-research-query",
            json!({"topic": 7}),
            TaskOptions::new(),
        )
        .await
        .unwrap_err();
    assert!(err.is_model_correctable(), "{err:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fastmcp_task_tool_started_on_2026_07_28_is_a_task() {
    let Some(peer) = test_support::fastmcp_server() else {
        return;
    };
    let cmd = ServerCommand::new(peer.program)
        .args(peer.args)
        .arg("stdio")
        .stderr(Stderr::discard());
    let client = Client::builder("mcp-tools-tests", "0.1.0")
        .connect(StdioTransport::spawn(cmd).unwrap())
        .await
        .unwrap();
    let toolbox = Toolbox::builder()
        .server(Server::new("fastmcp", client.clone()))
        .build()
        .await
        .unwrap();
    let started = toolbox
        .start(
            "slow_report",
            json!({"topic": "agents", "steps": 4, "step_ms": 300}),
            TaskOptions::new(),
        )
        .await
        .unwrap();
    let ToolTask::Started(ticket) = started else {
        panic!("not started as a task: {started:?}")
    };
    let t0 = Instant::now();
    let out = loop {
        assert!(t0.elapsed() < Duration::from_secs(60), "never done");
        match toolbox.poll(&ticket).await.unwrap() {
            TaskPoll::Done(out) => break out,
            TaskPoll::Running { .. } => {}
            other => panic!("{other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(out.text, "report on agents");
    // Or waited for: the deadline it started with bounds the wait.
    let started = toolbox
        .start(
            "slow_report",
            json!({"topic": "waiting", "steps": 3, "step_ms": 200}),
            TaskOptions::new().deadline(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    let ToolTask::Started(ticket) = started else {
        panic!("not started as a task: {started:?}")
    };
    assert!(ticket.deadline_at_ms.is_some(), "{ticket:?}");
    let out = toolbox.task_result(&ticket).await.unwrap();
    assert_eq!(out.text, "report on waiting");
    // A tool the server runs at once: its output from start.
    let done = toolbox
        .start("echo", json!({"text": "now"}), TaskOptions::new())
        .await
        .unwrap();
    let ToolTask::Done(out) = done else {
        panic!("{done:?}")
    };
    assert_eq!(out.text, "now");
    client.close().await;
}
