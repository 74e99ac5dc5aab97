//! Tools run as tasks in 2026-07-28 (the `io.modelcontextprotocol/tasks`
//! extension, SEP-2663) against a real server: `peers/tasks_server.mjs`,
//! built on the official TypeScript SDK (`@modelcontextprotocol/server`
//! 2.4.0) and the extension's own schemas (`@modelcontextprotocol/ext-tasks`
//! 0.2.2), over Streamable HTTP (where `tasks/*` must carry `Mcp-Name`: the
//! SDK rejects them without it) and over stdio.
//!
//! The same scenario runs on both: a task that completes (status as
//! progress), one that fails (its JSON-RPC error), one that goes
//! `input_required` (an elicitation answered by the handler, sent back with
//! `tasks/update`) and completes, one that never finishes (ended by the
//! caller's deadline, `tasks/cancel` seen by the server), a handle that is
//! cancelled, a synchronous answer, and the -32021 a client gets when it
//! turns the extension off.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientError, ClientHandler, TaskCall, TaskEra, TaskOptions, TaskTicket};
use mcp_proto::schema::{ClientCapabilities, ElicitParams, ElicitResult, TaskStatus};
use mcp_proto::{Era, ErrorObject, ProtocolVersion};
use mcp_transport_http::HttpTransport;
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

/// Confirms every elicitation (`confirm: true`) and records its message.
#[derive(Default, Clone)]
struct Confirm {
    asked: Arc<Mutex<Vec<String>>>,
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
        content.insert("confirm".into(), json!(true));
        Ok(ElicitResult::accept(content))
    }
}

fn text(r: &mcp_proto::schema::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

async fn state(client: &Client, task_id: &str) -> String {
    text(
        &client
            .call_tool("task_state", json!({"taskId": task_id}))
            .await
            .unwrap(),
    )
}

async fn scenario(client: Client, handler: Confirm) {
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2026_07_28)
    );
    // Completes: `call_tool` follows the task to its result; status
    // messages arrive as progress.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let r = client
        .call_tool("slow_task", json!({"topic": "rust", "ms": 400}))
        .on_progress(move |p| seen.lock().unwrap().push(p.message.unwrap_or_default()))
        .await
        .unwrap();
    assert_eq!(text(&r), "done: rust");
    let progress = progress.lock().unwrap().clone();
    assert_eq!(
        progress.last().map(String::as_str),
        Some("completed: finished"),
        "{progress:?}"
    );

    // Fails: the task's JSON-RPC error ("failed").
    let err = client
        .call_tool("protocol_error_job", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(err.rpc(), Some(e) if e.message == "job failed"),
        "{err:?}"
    );
    // A tool error is "completed" with `isError`, a result like any other.
    let r = client.call_tool("failing_job", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "job failed: bad input");

    // An MRTR round before the task (the SDK's input_required), then the
    // task: both through the same call.
    let r = client
        .call_tool("test_tool_with_task", json!({}))
        .await
        .unwrap();
    assert!(text(&r).starts_with("Hello, "), "{r:?}");
    assert_eq!(handler.asked.lock().unwrap().len(), 1);
    handler.asked.lock().unwrap().clear();

    // Two input requests at once: both answered in one tasks/update.
    let r = client.call_tool("multi_input", json!({})).await.unwrap();
    assert_eq!(text(&r), "both answered");
    assert_eq!(handler.asked.lock().unwrap().len(), 2);
    handler.asked.lock().unwrap().clear();

    // input_required: the elicitation reaches the handler once, its answer
    // goes back with tasks/update, and the task completes.
    let r = client
        .call_tool("confirm_delete", json!({"filename": "a.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "deleted a.txt");
    assert_eq!(*handler.asked.lock().unwrap(), ["Delete a.txt?"]);

    // Never finishes: the caller's deadline ends it, and the server sees
    // the tasks/cancel.
    let err = client
        .call_tool("never_finishes", json!({}))
        .max_time(Duration::from_millis(700))
        .await
        .unwrap_err();
    let ClientError::TaskDeadline { task_id, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(state(&client, task_id).await, "cancelled");

    // A handle: its era, its status, and cancel().
    let call = client
        .call_tool_as_task("never_finishes", json!({}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Started(handle) = call else {
        panic!("{call:?}")
    };
    assert_eq!(handle.era(), Era::Modern);
    assert_eq!(handle.status(), TaskStatus::Working);
    assert_eq!(handle.poll_interval(), Duration::from_millis(100));
    assert_eq!(handle.ttl(), Some(Duration::from_secs(60)));
    let id = handle.id().to_owned();
    let ticket = TaskTicket::new("tasks-peer", id.as_str(), TaskEra::Extension);
    let mut resumed = client
        .resume_task(&ticket, TaskOptions::new())
        .await
        .unwrap();
    assert_eq!(resumed.refresh().await.unwrap().status, TaskStatus::Working);
    handle.cancel().await.unwrap();
    assert_eq!(state(&client, &id).await, "cancelled");
    let err = resumed.wait().await;
    assert_eq!(err.unwrap(), TaskStatus::Cancelled);

    // A server that answers at once: the result, not a handle.
    let call = client
        .call_tool_as_task("echo", json!({"text": "now"}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Done(r) = call else {
        panic!("{call:?}")
    };
    assert_eq!(text(&r), "now");

    // An unknown task: the server's -32602, typed.
    let err = client.get_task("no-such-task").await.unwrap_err();
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32602), "{err:?}");
    client.close().await;
}

fn stdio_command() -> Option<ServerCommand> {
    let peer = test_support::tasks_server()?;
    Some(
        ServerCommand::new(peer.program)
            .args(peer.args)
            .stderr(Stderr::discard()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_extension_against_the_typescript_sdk_over_stdio() {
    let Some(cmd) = stdio_command() else { return };
    let handler = Confirm::default();
    let client = Client::builder("tasks-peer-test", "1")
        .handler(handler.clone())
        .connect(StdioTransport::spawn(cmd).unwrap())
        .await
        .unwrap();
    scenario(client, handler).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_extension_against_the_typescript_sdk_over_http() {
    let Some(peer) = test_support::tasks_server() else {
        return;
    };
    let port = test_support::free_port();
    let cmd = peer.arg("--http").arg(port.to_string()).to_tokio();
    let _server = test_support::listening(cmd, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let handler = Confirm::default();
    let client = Client::builder("tasks-peer-test", "1")
        .handler(handler.clone())
        .connect(HttpTransport::new(&url).unwrap())
        .await
        .unwrap();
    scenario(client, handler).await;

    // Without the extension declared, a tool that may run as a task runs
    // at once, and a task-only tool is refused with -32021 naming the
    // extension.
    let client = Client::builder("tasks-peer-test", "1")
        .tasks_extension(false)
        .connect(HttpTransport::new(&url).unwrap())
        .await
        .unwrap();
    let r = client
        .call_tool("slow_task", json!({"topic": "x"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "done: x");
    let err = client
        .call_tool("failing_job", json!({}))
        .await
        .unwrap_err();
    let e = err.rpc().unwrap();
    assert_eq!(e.code.0, -32021, "{err:?}");
    let data: serde_json::Value = e.data.as_ref().unwrap().decode().unwrap();
    assert_eq!(
        data["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
}
