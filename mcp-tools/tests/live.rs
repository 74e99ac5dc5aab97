//! One toolbox whose servers change in place (`Toolbox::set_servers`) and
//! its [`Keeper`], against real servers nobody here wrote, over stdio:
//! `@modelcontextprotocol/server-everything` and the Python SDK test server
//! (`peers/python_server.py`); and a scripted server for the one answer no
//! real server gives on demand ("tool set changed").
//!
//! - every handle of the toolbox (clones, a `Deferred` conversation, an
//!   `McpTool` handed out) sees a new server set at once, and a
//!   `read_result` id from before reads on after;
//! - the keeper answers for names no tool has and sees every fatal error
//!   (a killed server), on every path; successful calls never reach it;
//! - a server whose tools a keeper gave is never listed by the toolbox.
//!
//! The peers are installed by `cargo xtask peers` into `.peers/`. Without
//! them these tests skip with a message, unless `MCP_REQUIRE_PEERS=1`.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::Client;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Response};
use mcp_proto::transport::{TransportExt, channel};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use mcp_tools::{
    DeferredOptions, Keeper, McpTool, ModelApi, Server, Tool, ToolError, Toolbox, ToolboxError,
};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::{Value, json};

fn stdio(peer: test_support::PeerCommand) -> ServerCommand {
    ServerCommand::new(peer.program)
        .args(peer.args)
        .stderr(Stderr::discard())
}

/// A connected client of `cmd`, and its process id.
async fn connect(cmd: ServerCommand) -> (Client, u32) {
    let transport = StdioTransport::spawn(cmd).unwrap();
    let pid = transport.pid().unwrap();
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        Client::builder("mcp-tools-tests", "0.1.0").connect(transport),
    )
    .await
    .expect("connect timed out")
    .unwrap();
    (client, pid)
}

/// A text of many lines, far past a budget of a few hundred tokens.
fn build_log() -> String {
    (0..400)
        .map(|i| format!("line {i} of the build log: compiling crate {i}\n"))
        .collect()
}

fn names(defs: &[mcp_tools::ModelTool]) -> Vec<String> {
    defs.iter().map(|d| d.name().to_owned()).collect()
}

#[tokio::test]
async fn set_servers_changes_every_handle_in_place_and_cut_results_stay_readable() {
    let (Some(ev), Some(py)) = (test_support::everything(), test_support::python_server()) else {
        return;
    };
    let ((ev, _), (py, _)) = (
        connect(stdio(ev.arg("stdio"))).await,
        connect(stdio(py.arg("stdio"))).await,
    );
    let python = || Server::new("py", py.clone()).tool_result_budget("echo", 200);
    let everything = || Server::new("ev", ev.clone()).prefix("ev_");
    let toolbox = Toolbox::builder().server(python()).build().await.unwrap();
    let kept = toolbox.clone();
    let conversation = toolbox.deferred(DeferredOptions::new());
    let echo = toolbox.get("echo").unwrap();

    // A result cut to its budget, its id in the note.
    let log = build_log();
    let out = conversation
        .call("echo", json!({"text": log}))
        .await
        .unwrap();
    let cut = out.cut.clone().unwrap();
    let id = cut.id.clone().unwrap();
    assert!(out.text.contains(&id), "{}", out.text);

    // A second server, given with the first: every handle sees it.
    toolbox.set_servers([python(), everything()]).await.unwrap();
    assert!(kept.get("ev_echo").is_some());
    let found = conversation
        .call(
            "search_tools",
            json!({"query": "sum of two numbers", "limit": 3}),
        )
        .await
        .unwrap();
    assert!(
        conversation
            .loaded_names()
            .contains(&"ev_get-sum".to_owned()),
        "{}",
        found.text
    );
    let sum = conversation
        .call("ev_get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(sum.text.contains('5'), "{}", sum.text);
    assert_eq!(
        echo.call(json!({"text": "an old handle"}))
            .await
            .unwrap()
            .text,
        "an old handle"
    );
    let page = conversation
        .call("read_result", json!({"id": id, "offset": cut.shown_bytes}))
        .await
        .unwrap();
    assert!(
        page.text
            .starts_with(&log[cut.shown_bytes..cut.shown_bytes + 40]),
        "{}",
        page.text
    );

    // The first server gone: its tools leave every handle; no budget is
    // left, but the kept result still reads and `read_result` is offered.
    toolbox.set_servers([everything()]).await.unwrap();
    assert!(kept.get("echo").is_none());
    let gone = echo.call(json!({"text": "x"})).await.unwrap_err();
    assert!(matches!(gone, ToolError::NotFound { .. }), "{gone:?}");
    let offered = names(&conversation.definitions(ModelApi::Anthropic).await);
    assert!(
        offered.contains(&"read_result".to_owned()) && offered.contains(&"ev_get-sum".to_owned()),
        "{offered:?}"
    );
    assert!(
        conversation
            .call("read_result", json!({"id": id, "offset": 0}))
            .await
            .unwrap()
            .text
            .starts_with("line 0 of the build log")
    );

    // Names given twice change nothing.
    let e = toolbox
        .set_servers([Server::new("a", ev.clone()), Server::new("a", py.clone())])
        .await
        .unwrap_err();
    assert!(matches!(e, ToolboxError::DuplicateServer(n) if n == "a"));
    assert!(kept.get("ev_echo").is_some());
}

/// A keeper that says `gone` is unavailable and records what it is shown.
#[derive(Debug, Default, Clone)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Keeper for Recorder {
    fn missing(&self, name: &str) -> Option<ToolError> {
        (name == "gone").then(|| ToolError::Unavailable {
            tool: name.to_owned(),
            server: "elsewhere".to_owned(),
            reason: "is restarting".to_owned(),
        })
    }

    fn failed(&self, tool: &McpTool, error: ToolError) -> ToolError {
        // The whole chain: a fatal error's cause is its source.
        self.0
            .lock()
            .unwrap()
            .push(mcp_proto::error::chain(&error).to_string());
        ToolError::Unavailable {
            tool: tool.name().to_owned(),
            server: tool.server().unwrap_or_default().to_owned(),
            reason: "went away".to_owned(),
        }
    }
}

#[tokio::test]
async fn a_keeper_answers_for_missing_tools_and_sees_every_fatal_error() {
    let Some(py) = test_support::python_server() else {
        return;
    };
    let (client, pid) = connect(stdio(py.arg("stdio"))).await;
    let tools: Vec<mcp_proto::schema::Tool> = client.list_all().await.unwrap();
    let keeper = Recorder::default();
    let toolbox = Toolbox::builder()
        .keeper(keeper.clone())
        .build_now()
        .unwrap();
    assert!(toolbox.tools().await.is_empty());
    toolbox
        .set_servers([Server::new("py", client).listed(tools)])
        .await
        .unwrap();
    let conversation = toolbox.deferred(DeferredOptions::new());
    let echo = toolbox.get("echo").unwrap();

    // Names no tool has.
    for e in [
        toolbox.call("gone", json!({})).await.unwrap_err(),
        conversation.call("gone", json!({})).await.unwrap_err(),
        toolbox
            .start("gone", json!({}), mcp_client::TaskOptions::new())
            .await
            .unwrap_err(),
    ] {
        assert!(
            e.message_for_model()
                .contains("its server `elsewhere` is restarting"),
            "{e:?}"
        );
    }
    let e = toolbox.call("nope", json!({})).await.unwrap_err();
    assert!(matches!(e, ToolError::NotFound { .. }), "{e:?}");
    // Successful and model-correctable calls never reach it.
    assert_eq!(
        conversation
            .call("echo", json!({"text": "hi"}))
            .await
            .unwrap()
            .text,
        "hi"
    );
    let e = toolbox.call("echo", json!({"txt": 1})).await.unwrap_err();
    assert!(e.is_model_correctable(), "{e:?}");
    assert!(keeper.0.lock().unwrap().is_empty());

    // The server killed: each path's fatal error goes through the keeper.
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    for e in [
        toolbox
            .call("echo", json!({"text": "a"}))
            .await
            .unwrap_err(),
        conversation
            .call("echo", json!({"text": "b"}))
            .await
            .unwrap_err(),
        echo.call(json!({"text": "c"})).await.unwrap_err(),
    ] {
        assert!(
            matches!(&e, ToolError::Unavailable { reason, server, .. } if reason == "went away" && server == "py"),
            "{e:?}"
        );
    }
    let seen = keeper.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|e| e.contains("echo")), "{seen:?}");
}

/// A server whose every call answers "tool set changed"; it counts its
/// listings.
async fn changing_tools() -> (Client, Arc<Mutex<usize>>) {
    let (client_end, mut server) = channel::pair();
    let lists = Arc::new(Mutex::new(0));
    let counted = lists.clone();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = server.recv().await {
            let Message::Request(req) = msg else { continue };
            let params = test_support::params(&req);
            let reply: Message = match &*req.method {
                "initialize" => Response::new(
                    req.id,
                    RawJson::from_value(&json!({
                        "protocolVersion": params["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "changing", "version": "1"},
                    }))
                    .unwrap(),
                )
                .into(),
                "tools/list" => {
                    *counted.lock().unwrap() += 1;
                    Response::new(
                        req.id,
                        RawJson::from_value(&json!({"tools": [
                            {"name": "bump", "inputSchema": {"type": "object"}},
                        ]}))
                        .unwrap(),
                    )
                    .into()
                }
                _ => ErrorResponse::new(
                    Some(req.id),
                    ErrorObject::new(
                        ErrorCode::INVALID_PARAMS,
                        "tool set changed; list tools again",
                    ),
                )
                .into(),
            };
            if server.send(reply).await.is_err() {
                return;
            }
        }
    });
    (Client::connect(client_end).await.unwrap(), lists)
}

#[tokio::test]
async fn a_server_a_keeper_gave_is_listed_by_the_keeper_only() {
    let (client, lists) = changing_tools().await;
    let given: Vec<mcp_proto::schema::Tool> =
        serde_json::from_value(json!([{"name": "bump", "inputSchema": {"type": "object"}}]))
            .unwrap();
    let keeper = Recorder::default();
    let toolbox = Toolbox::builder()
        .server(Server::new("ch", client).listed(given))
        .keeper(keeper.clone())
        .build()
        .await
        .unwrap();
    let e = toolbox.call("bump", Value::Null).await.unwrap_err();
    assert!(matches!(e, ToolError::Unavailable { .. }), "{e:?}");
    let seen = keeper.0.lock().unwrap().clone();
    assert!(
        seen.len() == 1 && seen[0].contains("tool set changed"),
        "{seen:?}"
    );
    toolbox.refresh().await.unwrap();
    assert!(!toolbox.is_stale());
    assert_eq!(*lists.lock().unwrap(), 0, "the toolbox listed the server");
}
