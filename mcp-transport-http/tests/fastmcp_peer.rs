//! FastMCP (PyPI `fastmcp[tasks]` 4.1.4, `peers/fastmcp_server.py`) as a
//! real peer over stdio and Streamable HTTP: tools listed and called, and
//! its background tasks (the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks`, SEP-2663, from `fastmcp-tasks`) run
//! through `Client::call_tool` (result returned, status as progress) and
//! `Client::call_tool_as_task` (a handle), including a task that asks for
//! input mid-run and one whose tool fails.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientHandler, TaskCall, TaskOptions, VersionChoice};
use mcp_proto::schema::{
    CallToolResult, ClientCapabilities, ElicitParams, ElicitResult, TaskStatus, Tool,
};
use mcp_proto::{Era, ErrorObject, ProtocolVersion};
use mcp_transport_http::HttpTransport;
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

/// Answers every elicitation with `confirm: <answer>` and records its
/// message.
#[derive(Clone)]
struct Confirm {
    answer: bool,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Confirm {
    fn new(answer: bool) -> Self {
        Self {
            answer,
            asked: Arc::default(),
        }
    }
}

impl ClientHandler for Confirm {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_elicitation_form()
    }
    async fn elicit(&self, p: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        self.asked
            .lock()
            .unwrap()
            .push(p.message().unwrap_or_default().to_owned());
        let mut content = serde_json::Map::new();
        content.insert("confirm".into(), json!(self.answer));
        Ok(ElicitResult::accept(content))
    }
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

/// Tools listed and called: what every client of FastMCP does first.
async fn plain(client: &Client) {
    let tools = client.list_all::<Tool>().await.unwrap();
    let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "add",
            "confirm_delete",
            "echo",
            "failing_task",
            "sleepy",
            "slow_report"
        ]
    );
    let r = client
        .call_tool("echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "hello");
    let r = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(text(&r), "42");
    let structured: serde_json::Value = r.structured_content.as_ref().unwrap().decode().unwrap();
    assert_eq!(structured, json!({"result": 42}));
    // A FastMCP argument check: a tool error, not a protocol error.
    let r = client.call_tool("add", json!({"a": "x"})).await;
    match r {
        Ok(r) => assert_eq!(r.is_error, Some(true), "{r:?}"),
        Err(e) => assert!(e.rpc().is_some(), "{e:?}"),
    }
}

/// FastMCP's tasks, on a 2026-07-28 connection that declares the
/// extension (the client's default).
async fn tasks(client: &Client, handler: &Confirm) {
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2026_07_28)
    );
    // A task-only tool through `call_tool`: the task is followed to its
    // result, and the status messages FastMCP reports arrive as progress.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let r = client
        .call_tool(
            "slow_report",
            json!({"topic": "rust", "steps": 4, "step_ms": 400}),
        )
        .on_progress(move |p| seen.lock().unwrap().push(p.message.unwrap_or_default()))
        .await
        .unwrap();
    assert_eq!(text(&r), "report on rust");
    let progress = progress.lock().unwrap().clone();
    assert!(
        progress.iter().any(|m| m.contains("step ")),
        "no status message arrived as progress: {progress:?}"
    );

    // The same through a handle: its era, its status while it runs, the
    // server's poll interval and ttl, then its result.
    let call = client
        .call_tool_as_task(
            "slow_report",
            json!({"topic": "handles", "steps": 3, "step_ms": 300}),
            TaskOptions::new(),
        )
        .await
        .unwrap();
    let TaskCall::Started(handle) = call else {
        panic!("{call:?}")
    };
    assert_eq!(handle.era(), Era::Modern);
    assert!(!handle.id().is_empty());
    // The server's pollIntervalMs (peers/fastmcp_server.py: 200 ms).
    assert_eq!(handle.poll_interval(), Duration::from_millis(200));
    let id = handle.id().to_owned();
    let got = client.get_task(&id).await.unwrap();
    assert!(
        matches!(got.task.status, TaskStatus::Working | TaskStatus::Completed),
        "{got:?}"
    );
    let r = handle.result().await.unwrap();
    assert_eq!(text(&r), "report on handles");

    // An optional task tool runs as a task when asked for one ...
    let call = client
        .call_tool_as_task("sleepy", json!({"ms": 50}), TaskOptions::new())
        .await
        .unwrap();
    let r = match call {
        TaskCall::Started(h) => h.result().await.unwrap(),
        other => panic!("FastMCP did not run an optional task tool as a task: {other:?}"),
    };
    assert_eq!(text(&r), "slept 50 ms");
    // ... and at once through a plain call.
    let r = client.call_tool("sleepy", json!({"ms": 10})).await.unwrap();
    assert_eq!(text(&r), "slept 10 ms");

    // Input mid-task: the task goes input_required, the elicitation reaches
    // the handler once, its answer goes back with tasks/update, and the
    // task completes with it.
    let r = client
        .call_tool("confirm_delete", json!({"filename": "a.txt"}))
        .await
        .unwrap();
    let expected = if handler.answer {
        "deleted a.txt"
    } else {
        "kept a.txt"
    };
    assert_eq!(text(&r), expected);
    assert_eq!(*handler.asked.lock().unwrap(), ["Delete a.txt?"]);
    handler.asked.lock().unwrap().clear();

    // A task whose tool fails: completed with isError, FastMCP's message.
    let r = client.call_tool("failing_task", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).contains("job failed: bad input"), "{r:?}");

    // A handle cancelled while it runs.
    let call = client
        .call_tool_as_task(
            "slow_report",
            json!({"topic": "never", "steps": 100, "step_ms": 500}),
            TaskOptions::new(),
        )
        .await
        .unwrap();
    let TaskCall::Started(handle) = call else {
        panic!("{call:?}")
    };
    let id = handle.id().to_owned();
    handle.cancel().await.unwrap();
    let got = client.get_task(&id).await.unwrap();
    assert_eq!(got.task.status, TaskStatus::Cancelled, "{got:?}");

    // An unknown task: the server's error, typed.
    let err = client.get_task("no-such-task").await.unwrap_err();
    assert!(err.rpc().is_some(), "{err:?}");
}

fn stdio_client_command() -> Option<ServerCommand> {
    let peer = test_support::fastmcp_server()?.arg("stdio");
    Some(
        ServerCommand::new(peer.program)
            .args(peer.args)
            .stderr(Stderr::discard()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_stdio() {
    let Some(cmd) = stdio_client_command() else {
        return;
    };
    let handler = Confirm::new(true);
    let client = Client::builder("fastmcp-peer-test", "1")
        .handler(handler.clone())
        .connect(StdioTransport::spawn(cmd).unwrap())
        .await
        .unwrap();
    plain(&client).await;
    tasks(&client, &handler).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_http() {
    let Some(peer) = test_support::fastmcp_server() else {
        return;
    };
    let port = test_support::free_port();
    let cmd = peer.arg("http").arg(port.to_string()).to_tokio();
    let _server = test_support::listening(cmd, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Declined this time: the task sees the answer.
    let handler = Confirm::new(false);
    let client = Client::builder("fastmcp-peer-test", "1")
        .handler(handler.clone())
        .connect(HttpTransport::new(&url).unwrap())
        .await
        .unwrap();
    plain(&client).await;
    tasks(&client, &handler).await;
    client.close().await;

    // Without the extension declared: the optional task tool runs at once,
    // and the task-only one is refused with -32021.
    let client = Client::builder("fastmcp-peer-test", "1")
        .tasks_extension(false)
        .connect(HttpTransport::new(&url).unwrap())
        .await
        .unwrap();
    let r = client.call_tool("sleepy", json!({"ms": 10})).await.unwrap();
    assert_eq!(text(&r), "slept 10 ms");
    let err = client
        .call_tool("slow_report", json!({"topic": "x"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32021), "{err:?}");
    client.close().await;

    // On 2025-11-25 FastMCP 4 serves no tasks (no `tasks` capability; its
    // extension exists on 2026-07-28 only), yet lists `execution.taskSupport`:
    // plain tools work, an optional task tool asked as a task runs at once,
    // and a task-only tool is refused with -32021, typed.
    let client = Client::builder("fastmcp-peer-test", "1")
        .protocol(VersionChoice::Era(Era::Legacy))
        .connect(HttpTransport::new(&url).unwrap())
        .await
        .unwrap();
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2025_11_25)
    );
    plain(&client).await;
    let call = client
        .call_tool_as_task("sleepy", json!({"ms": 10}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Done(r) = call else {
        panic!("{call:?}")
    };
    assert_eq!(text(&r), "slept 10 ms");
    let err = client
        .call_tool("slow_report", json!({"topic": "x"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32021), "{err:?}");
    client.close().await;
}
