//! Tasks (2025-11-25) over Streamable HTTP, against server-everything
//! 2026.8.31 in its `streamableHttp` mode: a tool called as a task (its
//! status from polls and notifications, its mid-task elicitation delivered
//! through `tasks/result`), a task written down as a ticket and resumed on
//! the same session, `call_tool` on a task-required tool, and the
//! server's own requests run as tasks on the client (`tasks.requests`).
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientHandler, TaskCall, TaskOptions, TaskTicket};
use mcp_proto::ErrorObject;
use mcp_proto::schema::{
    ClientCapabilities, ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams,
    ElicitResult, Role, StopReason, TaskStatus, Tool,
};
use mcp_transport_http::HttpTransport;
use serde_json::json;
use test_support::{free_port, listening};

/// Answers the server's sampling and elicitation, counting them.
#[derive(Default, Clone)]
struct Handler {
    asked: Arc<Mutex<Vec<&'static str>>>,
}

impl ClientHandler for Handler {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
            .with_sampling()
            .with_elicitation_form()
    }
    async fn create_message(
        &self,
        _: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        self.asked.lock().unwrap().push("sampling/createMessage");
        Ok(CreateMessageResult::new(
            Role::Assistant,
            ContentBlock::text("sampled over http"),
            "test-model",
        )
        .with_stop_reason(StopReason::EndTurn))
    }
    async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        self.asked.lock().unwrap().push("elicitation/create");
        let ElicitParams::Form(form) = params else {
            return Ok(ElicitResult::accept(Default::default()));
        };
        let mut content = serde_json::Map::new();
        for (k, _) in &form.requested_schema.properties {
            content.insert(k.clone(), json!("octocat"));
        }
        Ok(ElicitResult::accept(content))
    }
}

fn text(r: &mcp_proto::schema::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_tasks_over_streamable_http() {
    let port = free_port();
    let Some(peer) = test_support::everything() else {
        return;
    };
    let mut cmd = peer.arg("streamableHttp").to_tokio();
    cmd.env("PORT", port.to_string());
    let _server = listening(cmd, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let handler = Handler::default();
    let asked = handler.asked.clone();
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder("mcp-rs-tests", "0.1.0")
            .handler(handler)
            .connect(HttpTransport::new(&url).unwrap()),
    )
    .await
    .unwrap()
    .unwrap();
    let caps = &client.server().unwrap().capabilities;
    assert!(caps.tool_tasks(), "no tasks.requests.tools.call: {caps:?}");
    // The `-async` tools come once the server has seen the client's
    // capabilities (after `notifications/initialized`).
    let mut tools = Vec::new();
    for _ in 0..50 {
        tools = client.list_all::<Tool>().await.unwrap();
        if tools.iter().any(|t| t.name.ends_with("-async")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(tools.iter().any(|t| t.name == "simulate-research-query"));

    // Called as a task, ambiguous: working → input_required (the
    // elicitation reaches the handler through tasks/result) → completed.
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let seen = statuses.clone();
    let options = TaskOptions::new()
        .deadline(Duration::from_secs(60))
        .on_status(move |t| seen.lock().unwrap().push(t.status.clone()));
    let call = client
        .call_tool_as_task(
            "simulate-research-query",
            json!({"topic": "http", "ambiguous": true}),
            options,
        )
        .await
        .unwrap();
    let TaskCall::Started(handle) = call else {
        panic!("not a task: {call:?}")
    };
    let report = text(&handle.result().await.unwrap());
    assert!(report.contains("Research Report: http"), "{report}");
    assert!(report.contains("Clarification"), "{report}");
    // `input_required` is always seen: the handle asks for the elicitation
    // only once it has seen it. (`working` is seen only if a poll lands in
    // the 2 s before the server asks, which a loaded machine may miss.)
    let statuses = statuses.lock().unwrap().clone();
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    assert!(
        asked.lock().unwrap().contains(&"elicitation/create"),
        "the elicitation did not reach the handler"
    );

    // Written down mid-task, read back, resumed on the same session.
    let call = client
        .call_tool_as_task(
            "simulate-research-query",
            json!({"topic": "ticket"}),
            TaskOptions::new().deadline(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    let TaskCall::Started(handle) = call else {
        panic!("not a task: {call:?}")
    };
    let written = serde_json::to_string(&handle.ticket("everything")).unwrap();
    drop(handle);
    let ticket: TaskTicket = serde_json::from_str(&written).unwrap();
    assert_eq!(
        ticket.server.implementation.as_deref(),
        Some("mcp-servers/everything")
    );
    assert_eq!(ticket.ttl_ms, Some(300_000));
    let resumed = client
        .resume_task(&ticket, TaskOptions::new())
        .await
        .unwrap();
    let report = text(&resumed.result().await.unwrap());
    assert!(report.contains("Research Report: ticket"), "{report}");

    // call_tool told what the listing says runs a task-required tool as a
    // task, with the status as progress.
    let progress = Arc::new(Mutex::new(0usize));
    let seen = progress.clone();
    let research = tools
        .iter()
        .find(|t| t.name == "simulate-research-query")
        .unwrap();
    let r = client
        .call_tool("simulate-research-query", json!({"topic": "plain"}))
        .task_support(research.task_support())
        .on_progress(move |_| *seen.lock().unwrap() += 1)
        .await
        .unwrap();
    assert!(text(&r).contains("Research Report: plain"), "{r:?}");
    assert!(*progress.lock().unwrap() > 0);

    // The server's requests run as tasks on the client, over HTTP.
    let r = client
        .call_tool(
            "trigger-sampling-request-async",
            json!({"prompt": "hi", "maxTokens": 10}),
        )
        .await
        .unwrap();
    let out = text(&r);
    assert!(
        out.contains("[COMPLETED] Async sampling completed!"),
        "{out}"
    );
    assert!(out.contains("sampled over http"), "{out}");
    let r = client
        .call_tool("trigger-elicitation-request-async", json!({}))
        .await
        .unwrap();
    let out = text(&r);
    assert!(
        out.contains("[COMPLETED] User provided the requested information!"),
        "{out}"
    );
    client.close().await;
}
