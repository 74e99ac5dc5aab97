//! The client against real servers nobody here wrote, over stdio:
//! the Python SDK (`mcp` on PyPI) in both eras, and
//! `@modelcontextprotocol/server-everything`.
//!
//! The peers are installed by `cargo xtask peers` into `.peers/`. Without
//! them these tests skip with a message, unless `MCP_REQUIRE_PEERS=1` (set by
//! `cargo xtask test` and CI), which turns a missing peer into a failure.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientHandler, EraCache, EraHint, VersionChoice};
use mcp_proto::schema::{
    ClientCapabilities, ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams,
    ElicitResult, ListRootsParams, ListRootsResult, PrimitiveSchema, Prompt, Resource,
    ResourceTemplate, Role, Root, StopReason, Tool,
};
use mcp_proto::{Era, ErrorObject, ProtocolVersion};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

use test_support::{DriverOnly, PeerCommand};

/// A real peer as a stdio server command, its stderr discarded.
fn stdio(peer: PeerCommand) -> ServerCommand {
    ServerCommand::new(peer.program)
        .args(peer.args)
        .stderr(Stderr::discard())
}

fn python_server() -> Option<ServerCommand> {
    Some(stdio(test_support::python_server()?.arg("stdio")))
}

fn everything() -> Option<ServerCommand> {
    Some(stdio(test_support::everything()?.arg("stdio")))
}

/// Answers elicitation with a fixed name (form) or accepts (URL), sampling
/// with a fixed text, roots with one root; records what it was asked.
#[derive(Default)]
struct TestHandler {
    asked: Arc<Mutex<Vec<String>>>,
}

impl TestHandler {
    fn ask(&self, what: &str) {
        self.asked.lock().unwrap().push(what.to_owned());
    }
}

impl ClientHandler for TestHandler {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
            .with_sampling()
            .with_elicitation_form()
            .with_elicitation_url()
            .with_roots()
    }
    async fn create_message(
        &self,
        _: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        self.ask("sampling/createMessage");
        Ok(CreateMessageResult::new(
            Role::Assistant,
            ContentBlock::text("sampled by the test handler"),
            "test-model",
        )
        .with_stop_reason(StopReason::EndTurn))
    }
    async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        self.ask("elicitation/create");
        let ElicitParams::Form(form) = params else {
            self.ask("elicitation/create url");
            return Ok(ElicitResult::accept(Default::default()));
        };
        // Fill every property of the requested schema.
        let mut content = serde_json::Map::new();
        for (k, v) in &form.requested_schema.properties {
            let value = match v {
                PrimitiveSchema::Boolean(_) => json!(true),
                PrimitiveSchema::Number(_) => json!(1),
                _ => json!("octocat"),
            };
            content.insert(k.clone(), value);
        }
        Ok(ElicitResult::accept(content))
    }
    async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
        self.ask("roots/list");
        Ok(ListRootsResult::new(vec![
            Root::new("file:///tmp").with_name("tmp"),
        ]))
    }
}

async fn connect(cmd: ServerCommand, choice: VersionChoice, handler: TestHandler) -> Client {
    let transport = DriverOnly::new(StdioTransport::spawn(cmd).unwrap());
    tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder("mcp-rs-tests", "0.1.0")
            .handler(handler)
            .protocol(choice)
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .unwrap()
}

fn text(r: &mcp_proto::schema::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn python_sdk_auto_negotiates_2026_07_28() {
    let Some(cmd) = python_server() else { return };
    let handler = TestHandler::default();
    let asked = handler.asked.clone();
    let client = connect(cmd, VersionChoice::Auto, handler).await;
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2026_07_28)
    );
    let info = client.server().unwrap();
    assert_eq!(info.implementation.name, "python-test-server");
    assert_eq!(
        info.instructions.as_deref(),
        Some("A test server for mcp-rs.")
    );

    let tools: Vec<String> = client
        .list_all::<Tool>()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for t in ["echo", "add", "slow_count", "fail", "greet"] {
        assert!(tools.contains(&t.to_owned()), "{t} missing from {tools:?}");
    }
    let r = client
        .call_tool("echo", json!({"text": "héllo\nworld"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "héllo\nworld");
    let r = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(
        r.structured_value().unwrap().unwrap(),
        json!({"result": 42})
    );

    let progress = Arc::new(Mutex::new(Vec::new()));
    let p2 = progress.clone();
    let r = client
        .call_tool("slow_count", json!({"steps": 4}))
        .on_progress(move |p| p2.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&r), "counted to 4");
    assert_eq!(*progress.lock().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);

    let r = client
        .call_tool("fail", json!({"reason": "nope"}))
        .await
        .unwrap();
    assert!(r.is_error());
    assert!(text(&r).contains("nope"), "{r:?}");

    // MRTR: the server answers input_required, the handler elicits, the client retries.
    let r = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(text(&r), "Hello, octocat!", "{r:?}");
    assert_eq!(*asked.lock().unwrap(), ["elicitation/create"]);

    let read = client.read_resource("test://static/hello").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read).unwrap()["contents"][0]["text"],
        "hello from python"
    );
    let prompt = client
        .get_prompt("review", [("code", "fn main() {}")])
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&prompt)
            .unwrap()
            .contains("fn main() {}")
    );
    client.close().await;
}

#[tokio::test]
async fn python_sdk_pinned_legacy_uses_server_requests() {
    let Some(cmd) = python_server() else { return };
    let handler = TestHandler::default();
    let asked = handler.asked.clone();
    let client = connect(
        cmd,
        VersionChoice::Pinned(ProtocolVersion::V2025_11_25),
        handler,
    )
    .await;
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2025_11_25)
    );
    let r = client
        .call_tool("echo", json!({"text": "legacy"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "legacy");
    // Legacy: the server sends `elicitation/create` as a request mid-call.
    let r = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(text(&r), "Hello, octocat!", "{r:?}");
    assert_eq!(*asked.lock().unwrap(), ["elicitation/create"]);
    client.ping().await.unwrap();
    client.close().await;
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(cmd) = everything() else { return };
    let handler = TestHandler::default();
    let client = connect(cmd, VersionChoice::Auto, handler).await;
    assert_eq!(
        client.era(),
        Some(Era::Legacy),
        "server-everything 2026.8.31 is a legacy server"
    );
    let tools: Vec<String> = client
        .list_all::<Tool>()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");

    let r = client
        .call_tool("echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(text(&r).contains("hi"), "{r:?}");

    let r = client
        .call_tool("get-structured-content", json!({"location": "New York"}))
        .await
        .unwrap();
    assert!(
        r.structured_value()
            .and_then(Result::ok)
            .is_some_and(|v| v.is_object()),
        "{r:?}"
    );

    let r = client.call_tool("get-tiny-image", json!({})).await.unwrap();
    assert!(
        r.content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image(i) if i.mime_type == "image/png" && !i.data.is_empty())),
        "{r:?}"
    );

    let r = client
        .call_tool("get-resource-links", json!({"count": 2}))
        .await
        .unwrap();
    assert!(
        r.content
            .iter()
            .any(|b| matches!(b, ContentBlock::ResourceLink(_))),
        "{r:?}"
    );

    let seen = Arc::new(Mutex::new(0));
    let s2 = seen.clone();
    let r = client
        .call_tool(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
        )
        .on_progress(move |_| *s2.lock().unwrap() += 1)
        .await
        .unwrap();
    assert!(!r.is_error());
    assert_eq!(
        *seen.lock().unwrap(),
        3,
        "one progress notification per step"
    );

    let resources = client.list_all::<Resource>().await.unwrap();
    assert!(!resources.is_empty());
    let read = client
        .read_resource(resources[0].uri.clone())
        .await
        .unwrap();
    assert!(
        !serde_json::to_value(&read).unwrap()["contents"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let templates = client.list_all::<ResourceTemplate>().await.unwrap();
    assert!(!templates.is_empty());
    let prompts = client.list_all::<Prompt>().await.unwrap();
    assert!(!prompts.is_empty());
    let simple = prompts
        .iter()
        .find(|p| p.arguments.as_ref().is_none_or(Vec::is_empty))
        .unwrap();
    let got = client
        .get_prompt(simple.name.clone(), Vec::<(String, String)>::new())
        .await
        .unwrap();
    assert!(!got.messages.is_empty());
    client.close().await;
}

#[tokio::test]
async fn server_everything_sampling_and_elicitation_reach_the_handler() {
    let Some(cmd) = everything() else { return };
    let handler = TestHandler::default();
    let asked = handler.asked.clone();
    let client = connect(cmd, VersionChoice::Auto, handler).await;
    // Tools that need client capabilities are registered once the server knows them.
    let mut tools = Vec::new();
    for _ in 0..50 {
        tools = client
            .list_all::<Tool>()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>();
        if tools.iter().any(|t| t.contains("sampling")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sampling = tools.iter().find(|t| t.contains("sampling")).cloned();
    let elicitation = tools.iter().find(|t| t.contains("elicitation")).cloned();
    let (Some(sampling), Some(elicitation)) = (sampling, elicitation) else {
        panic!("server-everything offers no sampling/elicitation tools: {tools:?}")
    };
    let r = client
        .call_tool(&sampling, json!({"prompt": "hi", "maxTokens": 10}))
        .await
        .unwrap();
    assert!(text(&r).contains("sampled by the test handler"), "{r:?}");
    let r = client.call_tool(&elicitation, json!({})).await.unwrap();
    assert!(!r.is_error(), "{r:?}");
    // Roots and URL-mode elicitation: their tools are registered because
    // the handler's capabilities advertise them.
    for t in ["get-roots-list", "trigger-url-elicitation"] {
        assert!(tools.iter().any(|n| n == t), "{t} missing from {tools:?}");
    }
    let r = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(text(&r).contains("file:///tmp"), "{r:?}");
    let r = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/login", "elicitationId": "e-1"}),
        )
        .await
        .unwrap();
    assert!(text(&r).contains("completed the URL elicitation"), "{r:?}");
    let asked = asked.lock().unwrap().clone();
    for m in ["roots/list", "elicitation/create url"] {
        assert!(asked.contains(&m.to_owned()), "{m}: {asked:?}");
    }
    assert!(
        asked.contains(&"sampling/createMessage".to_owned()),
        "{asked:?}"
    );
    assert!(
        asked.contains(&"elicitation/create".to_owned()),
        "{asked:?}"
    );
    client.close().await;
}

/// server-everything's `trigger-*-request-async` tools send
/// `sampling/createMessage` / `elicitation/create` with a `task`: the
/// client answers with a task, runs the handler, and answers the server's
/// `tasks/get` polls and its `tasks/result` with the handler's result.
/// The tools exist only because the client declares `tasks.requests`.
#[tokio::test]
async fn server_everything_runs_its_requests_as_tasks_on_the_client() {
    let Some(cmd) = everything() else { return };
    let handler = TestHandler::default();
    let asked = handler.asked.clone();
    let client = connect(cmd, VersionChoice::Auto, handler).await;
    let mut tools = Vec::new();
    for _ in 0..50 {
        tools = client
            .list_all::<Tool>()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>();
        if tools.iter().any(|t| t.ends_with("-async")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for t in [
        "trigger-sampling-request-async",
        "trigger-elicitation-request-async",
    ] {
        assert!(tools.iter().any(|n| n == t), "{t} missing from {tools:?}");
    }
    let r = client
        .call_tool(
            "trigger-sampling-request-async",
            json!({"prompt": "hi", "maxTokens": 10}),
        )
        .await
        .unwrap();
    let out = text(&r);
    // Not "[SYNC]": the client made a task, the server polled it, then
    // fetched the handler's result with tasks/result.
    assert!(
        out.contains("[COMPLETED] Async sampling completed!"),
        "{out}"
    );
    assert!(out.contains("Task created: "), "{out}");
    assert!(out.contains("completed"), "{out}");
    assert!(out.contains("sampled by the test handler"), "{out}");
    assert!(
        out.contains("io.modelcontextprotocol/related-task"),
        "{out}"
    );

    let r = client
        .call_tool("trigger-elicitation-request-async", json!({}))
        .await
        .unwrap();
    let out = text(&r);
    assert!(
        out.contains("[COMPLETED] User provided the requested information!"),
        "{out}"
    );
    assert!(out.contains("Name: octocat"), "{out}");
    let asked = asked.lock().unwrap().clone();
    // (The server also asks for roots on its own.)
    for m in ["sampling/createMessage", "elicitation/create"] {
        let n = asked.iter().filter(|a| *a == m).count();
        assert_eq!(n, 1, "the handler runs once per task: {asked:?}");
    }
    client.close().await;
}

/// A transport that records the method of every request the client sends.
struct Recording {
    inner: mcp_proto::transport::BoxTransport,
    methods: Arc<Mutex<Vec<String>>>,
}

impl mcp_proto::transport::Transport for Recording {
    fn poll_recv(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<mcp_proto::Message, mcp_proto::transport::TransportError>>>
    {
        self.inner.as_mut().poll_recv(cx)
    }
    fn poll_ready(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), mcp_proto::transport::TransportError>> {
        self.inner.as_mut().poll_ready(cx)
    }
    fn start_send(
        mut self: std::pin::Pin<&mut Self>,
        msg: mcp_proto::Message,
    ) -> Result<(), mcp_proto::transport::TransportError> {
        if let mcp_proto::Message::Request(r) = &msg {
            self.methods.lock().unwrap().push(r.method.to_string());
        }
        self.inner.as_mut().start_send(msg)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), mcp_proto::transport::TransportError>> {
        self.inner.as_mut().poll_flush(cx)
    }
    fn poll_close(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), mcp_proto::transport::TransportError>> {
        self.inner.as_mut().poll_close(cx)
    }
    fn set_protocol_version(mut self: std::pin::Pin<&mut Self>, version: ProtocolVersion) {
        self.inner.as_mut().set_protocol_version(version);
    }
}

/// Connects with an era cache; returns the client and the methods of the
/// requests it sent so far (the handshake).
async fn connect_remembering(
    cmd: ServerCommand,
    eras: &EraCache,
    key: &str,
) -> (Client, Arc<Mutex<Vec<String>>>) {
    let methods = Arc::new(Mutex::new(Vec::new()));
    let transport = Recording {
        inner: Box::pin(DriverOnly::new(StdioTransport::spawn(cmd).unwrap())),
        methods: methods.clone(),
    };
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder("mcp-rs-tests", "0.1.0")
            .era_cache(eras.clone(), key)
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .unwrap();
    (client, methods)
}

/// The server was probed: `server/discover` alone, or, when a loaded
/// machine made the server answer after the 5 s probe timeout, followed by
/// the fallback `initialize` (whose refusal is then dropped: the late
/// answer counts).
fn assert_probed(methods: &Mutex<Vec<String>>) {
    let got = sent(methods);
    assert!(
        got == ["server/discover"] || got == ["server/discover", "initialize"],
        "{got:?}"
    );
}

fn sent(methods: &Mutex<Vec<String>>) -> Vec<String> {
    methods.lock().unwrap().clone()
}

#[tokio::test]
async fn server_everything_is_remembered_as_legacy_and_not_probed_again() {
    let Some(cmd) = everything() else { return };
    let key = format!("{cmd:?}");
    let eras = EraCache::new();

    let (client, methods) = connect_remembering(cmd.clone(), &eras, &key).await;
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(sent(&methods), ["server/discover", "initialize"]);
    let version = client.protocol_version().unwrap();
    client.close().await;
    assert!(matches!(eras.get(&key), Some(EraHint::Legacy(v)) if v == version));

    let (client, methods) = connect_remembering(cmd, &eras, &key).await;
    assert_eq!(sent(&methods), ["initialize"], "no server/discover probe");
    assert_eq!(client.protocol_version(), Some(version));
    assert!(!client.list_all::<Tool>().await.unwrap().is_empty());
    client.close().await;
}

#[tokio::test]
async fn python_sdk_with_a_remembered_era() {
    let Some(cmd) = python_server() else { return };
    let key = format!("{cmd:?}");
    let eras = EraCache::new();

    // Modern: remembered, but its server/discover answer has `ttlMs: 0`
    // (stale at once), so the next connection probes again for fresh
    // capabilities, with the remembered revision.
    let (client, methods) = connect_remembering(cmd.clone(), &eras, &key).await;
    assert_probed(&methods);
    client.close().await;
    let hint = eras.get(&key).unwrap();
    assert_eq!(hint.protocol_version(), ProtocolVersion::V2026_07_28);
    assert!(!hint.is_fresh(std::time::Instant::now()));
    let (client, methods) = connect_remembering(cmd.clone(), &eras, &key).await;
    assert_probed(&methods);
    assert_eq!(client.era(), Some(Era::Modern));
    client.close().await;

    // A legacy entry (e.g. persisted from an earlier run against this
    // dual-era server): straight to initialize, no probe, and it holds.
    eras.insert(&key, EraHint::Legacy(ProtocolVersion::V2025_06_18));
    let (client, methods) = connect_remembering(cmd, &eras, &key).await;
    assert_eq!(sent(&methods), ["initialize"], "no server/discover probe");
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
    let r = client
        .call_tool("echo", json!({"text": "remembered"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "remembered");
    client.close().await;
    assert!(matches!(
        eras.get(&key),
        Some(EraHint::Legacy(ProtocolVersion::V2025_06_18))
    ));
}

/// The race found under load, made certain: the Python SDK server answers
/// `server/discover` long after a 1 ms probe timeout, when the fallback
/// `initialize` is already on the pipe, and then refuses `initialize` with
/// -32022 (the connection serves 2026-07-28). The late answer counts: the
/// client is modern, not failed. (Before the fix: "handshake failed: the
/// server rejected initialize: -32022 … connection is serving the
/// 2026-07-28 protocol".)
#[tokio::test]
async fn python_sdk_answering_the_probe_after_its_timeout_is_modern() {
    let Some(cmd) = python_server() else { return };
    let methods = Arc::new(Mutex::new(Vec::new()));
    let transport = Recording {
        inner: Box::pin(DriverOnly::new(StdioTransport::spawn(cmd).unwrap())),
        methods: methods.clone(),
    };
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        Client::builder("mcp-rs-tests", "0.1.0")
            .probe_timeout(Duration::from_millis(1))
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .expect("connected");
    assert_eq!(sent(&methods), ["server/discover", "initialize"]);
    assert_eq!(client.era(), Some(Era::Modern));
    let r = client
        .call_tool("echo", json!({"text": "late"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "late");
    client.close().await;
}

/// server-everything's `simulate-research-query` requires a task
/// (`execution.taskSupport: "required"`): called as one, it goes through
/// its stages (status messages), and its report is the result. With
/// `ambiguous`, the task moves to `input_required` and its elicitation
/// reaches the handler through `tasks/result`.
#[tokio::test]
async fn server_everything_research_runs_as_a_task() {
    use mcp_client::{TaskCall, TaskOptions};
    use mcp_proto::schema::{TaskStatus, TaskSupport};
    let Some(cmd) = everything() else { return };
    let handler = TestHandler::default();
    let asked = handler.asked.clone();
    let client = connect(cmd, VersionChoice::Auto, handler).await;
    let tools = client.list_all::<Tool>().await.unwrap();
    let research = tools
        .iter()
        .find(|t| t.name == "simulate-research-query")
        .expect("server-everything has simulate-research-query");
    assert_eq!(research.task_support(), TaskSupport::Required);
    let caps = &client.server().unwrap().capabilities;
    assert!(caps.tool_tasks(), "no tasks.requests.tools.call: {caps:?}");

    for ambiguous in [false, true] {
        let statuses = Arc::new(Mutex::new(Vec::new()));
        let seen = statuses.clone();
        let options = TaskOptions::new()
            .deadline(Duration::from_secs(60))
            .on_status(move |t| {
                seen.lock()
                    .unwrap()
                    .push((t.status.clone(), t.status_message.clone()))
            });
        let call = client
            .call_tool_as_task(
                "simulate-research-query",
                json!({"topic": "rust", "ambiguous": ambiguous}),
                options,
            )
            .await
            .unwrap();
        let TaskCall::Started(handle) = call else {
            panic!("the server ran a task-required tool at once: {call:?}")
        };
        assert!(!handle.id().is_empty());
        let result = handle.result().await.unwrap();
        let report = text(&result);
        assert!(report.contains("Research Report: rust"), "{report}");
        let statuses = statuses.lock().unwrap().clone();
        assert!(
            statuses
                .iter()
                .any(|(s, m)| *s == TaskStatus::Working && m.is_some()),
            "{statuses:?}"
        );
        if ambiguous {
            assert!(report.contains("Clarification"), "{report}");
            assert!(
                asked
                    .lock()
                    .unwrap()
                    .contains(&"elicitation/create".to_owned()),
                "the elicitation did not reach the handler"
            );
        }
    }
    // `call_tool` told what the listing says runs it as a task.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let result = client
        .call_tool("simulate-research-query", json!({"topic": "tasks"}))
        .task_support(research.task_support())
        .on_progress(move |p| seen.lock().unwrap().push(p.message))
        .await
        .unwrap();
    assert!(
        text(&result).contains("Research Report: tasks"),
        "{result:?}"
    );
    assert!(!progress.lock().unwrap().is_empty());
    client.close().await;
}
