//! A toolbox over real servers nobody here wrote, over stdio:
//! `@modelcontextprotocol/server-everything` (legacy era) and the Python SDK
//! test server (`peers/python_server.py`, 2026-07-28 when negotiated).
//!
//! The peers are installed by `cargo xtask peers` into `.peers/`. Without
//! them these tests skip with a message, unless `MCP_REQUIRE_PEERS=1`, which
//! turns a missing peer into a failure.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mcp_client::{Client, VersionChoice};
use mcp_proto::{Era, ProtocolVersion};
use mcp_tools::{
    DeferredOptions, Filter, ModelApi, ModelTool, Server, Tool, ToolError, Toolbox,
    estimate_tokens, is_valid_model_name,
};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

use test_support::PeerCommand;

/// A real peer as a stdio server command, its stderr discarded.
fn stdio(peer: PeerCommand) -> ServerCommand {
    ServerCommand::new(peer.program)
        .args(peer.args)
        .stderr(Stderr::discard())
}

fn everything() -> Option<ServerCommand> {
    Some(stdio(test_support::everything()?.arg("stdio")))
}

fn python_server() -> Option<ServerCommand> {
    Some(stdio(test_support::python_server()?.arg("stdio")))
}

fn changing_server() -> Option<ServerCommand> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/changing_server.py");
    test_support::python_running(script).map(stdio)
}

async fn connect(cmd: ServerCommand) -> Client {
    connect_with(cmd, VersionChoice::Auto).await
}

async fn connect_with(cmd: ServerCommand, choice: VersionChoice) -> Client {
    let transport = StdioTransport::spawn(cmd).unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder("mcp-tools-tests", "0.1.0")
            .protocol(choice)
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .unwrap()
}

#[tokio::test]
async fn server_everything_and_the_python_sdk_as_one_toolbox() {
    let (Some(ev), Some(py)) = (everything(), python_server()) else {
        return;
    };
    let (ev, py) = (connect(ev).await, connect(py).await);
    let toolbox = Toolbox::builder()
        .server(
            Server::new("everything", ev.clone())
                .prefix("ev_")
                .filter(Filter::exclude(["trigger-*"])),
        )
        .server(Server::new("python", py.clone()).prefix("py_"))
        .build()
        .await
        .unwrap();

    let tools = toolbox.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert!(names.iter().all(|n| is_valid_model_name(n)), "{names:?}");
    for want in [
        "ev_echo",
        "ev_get-sum",
        "ev_get-tiny-image",
        "py_echo",
        "py_add",
        "py_fail",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert!(
        !names.iter().any(|n| n.starts_with("ev_trigger-")),
        "excluded: {names:?}"
    );
    assert_eq!(toolbox.resolve("ev_get-sum").unwrap().tool, "get-sum");

    // Search answers with model-facing names, over both servers; a filtered
    // tool is not found.
    let hits = toolbox.search("add up two numbers", 3).await;
    assert_eq!(hits[0].name, "ev_get-sum", "{hits:?}");
    assert_eq!(hits[0].tool.wire_name(), "get-sum");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let hits = toolbox.search("long running operation", 10).await;
    assert!(
        hits.iter().all(|h| !h.name.starts_with("ev_trigger-")),
        "{hits:?}"
    );

    // Definitions keep the server's schema verbatim.
    let openai = toolbox.openai_tools().await;
    let echo = openai
        .iter()
        .find(|d| d["function"]["name"] == "ev_echo")
        .unwrap();
    assert_eq!(
        echo["function"]["description"],
        "Echoes back the input string"
    );
    assert_eq!(
        echo["function"]["parameters"]["properties"]["message"]["type"],
        "string"
    );
    let anthropic = toolbox.anthropic_tools().await;
    assert_eq!(anthropic.len(), tools.len());

    // Calls through the bridge, on both servers.
    let out = toolbox
        .call("ev_echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: hi");
    let out = toolbox
        .call("ev_get-sum", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert!(out.text.contains("42"), "{}", out.text);
    let out = toolbox.call("ev_get-tiny-image", json!({})).await.unwrap();
    assert!(out.text.contains("[image: image/png, "), "{}", out.text);
    let out = toolbox
        .call("ev_get-resource-links", json!({"count": 2}))
        .await
        .unwrap();
    assert!(out.text.contains("[resource link: "), "{}", out.text);
    let out = toolbox
        .call("ev_get-resource-reference", json!({}))
        .await
        .unwrap();
    assert!(out.text.contains("[resource: "), "{}", out.text);

    let out = toolbox
        .call("py_echo", json!({"text": "héllo\nworld"}))
        .await
        .unwrap();
    assert_eq!(out.text, "héllo\nworld");
    let out = toolbox
        .call("py_add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(out.text, "42");
    assert_eq!(
        out.structured::<serde_json::Value>().unwrap().unwrap(),
        json!({"result": 42})
    );

    // The model's mistakes come back as model-correctable errors.
    let err = toolbox
        .call("py_fail", json!({"reason": "disk full"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::ToolFailed { .. }), "{err:?}");
    assert!(err.message_for_model().contains("disk full"), "{err}");
    let err = toolbox.call("ev_echo", json!({})).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err:?}");
    assert!(err.to_string().contains("message"), "{err}");
    let err = toolbox
        .call("py_add", json!({"a": "two", "b": 40}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err:?}");
    let err = toolbox.call("no_such_tool", json!({})).await.unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }), "{err:?}");

    // With local checking off, the servers' own validation answers, and it
    // is still the model's to fix.
    let unchecked = Toolbox::builder()
        .server(Server::new("everything", ev.clone()))
        .server(Server::new("python", py.clone()).prefix("py_"))
        .tool_options(mcp_tools::ToolOptions::new().validate_arguments(false))
        .build()
        .await
        .unwrap();
    for (name, args) in [
        ("echo", json!({})),
        ("py_add", json!({"a": "two", "b": 40})),
    ] {
        let err = unchecked.call(name, args).await.unwrap_err();
        assert!(err.is_model_correctable(), "{name}: {err:?}");
    }

    // A closed connection is fatal, with the cause kept.
    ev.close().await;
    let err = toolbox
        .call("ev_echo", json!({"message": "hi"}))
        .await
        .unwrap_err();
    assert!(err.is_fatal(), "{err:?}");
    assert!(err.client_error().is_some_and(|e| e.is_closed()), "{err:?}");
    py.close().await;
}

/// The Python SDK adds a tool at runtime and announces it: on the
/// `subscriptions/listen` stream the toolbox opened (2026-07-28), or as a
/// legacy `notifications/tools/list_changed`. Either way the toolbox lists
/// again and the new tool is callable.
async fn toolbox_follows_a_changing_tool_set(choice: VersionChoice, era: Era) {
    let Some(cmd) = changing_server() else { return };
    let client = connect_with(cmd, choice).await;
    assert_eq!(client.era(), Some(era));
    let toolbox = Toolbox::builder()
        .server(Server::new("py", client.clone()))
        .build()
        .await
        .unwrap();
    let names = |tools: Vec<mcp_tools::McpTool>| -> Vec<String> {
        tools.iter().map(|t| t.name().to_owned()).collect()
    };
    assert_eq!(names(toolbox.tools().await), ["unlock"]);
    let found = |hits: Vec<mcp_tools::SearchHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.name).collect()
    };
    // The index is built here, before the change...
    assert!(!found(toolbox.search("say hello", 5).await).contains(&"hello".to_owned()));
    let err = toolbox.call("hello", json!({})).await.unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }), "{err:?}");

    // The listen stream may not be established when the first `unlock`
    // runs (the server handles requests concurrently); `unlock` is
    // idempotent, so ask again until the announcement arrives.
    let mut announced = false;
    'outer: for _ in 0..10 {
        assert_eq!(
            toolbox.call("unlock", json!({})).await.unwrap().text,
            "unlocked"
        );
        for _ in 0..20 {
            if toolbox.is_stale() {
                announced = true;
                break 'outer;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    assert!(announced, "no tools/list_changed arrived ({era:?})");
    // ...and follows it: the search lists again and finds the new tool.
    assert_eq!(found(toolbox.search("say hello", 5).await)[0], "hello");
    assert!(!toolbox.is_stale());
    assert_eq!(names(toolbox.tools().await), ["unlock", "hello"]);
    let out = toolbox.call("hello", json!({})).await.unwrap();
    assert_eq!(out.text, "hello from a new tool");
    client.close().await;
}

/// Deferred loading over server-everything: the model starts with
/// `search_tools` only, finds `echo` by what it does, sees it the next
/// turn and calls it.
#[tokio::test]
async fn deferred_loading_finds_and_loads_a_real_servers_tool() {
    let Some(ev) = everything() else {
        return;
    };
    let toolbox = Toolbox::builder()
        .server(Server::new("everything", connect(ev).await))
        .build()
        .await
        .unwrap();
    let conversation = toolbox.deferred(DeferredOptions::new());
    let names = |defs: Vec<ModelTool>| -> Vec<String> {
        defs.iter().map(|t| t.name().to_owned()).collect()
    };
    assert_eq!(
        names(conversation.definitions(ModelApi::OpenAiChat).await),
        ["search_tools"]
    );
    let out = conversation
        .call(
            "search_tools",
            json!({"query": "repeat back the message I give", "limit": 3}),
        )
        .await
        .unwrap();
    assert!(out.text.contains(r#""name":"echo""#), "{}", out.text);
    let next = names(conversation.definitions(ModelApi::OpenAiChat).await);
    assert!(next.contains(&"echo".to_owned()), "{next:?}");
    let out = conversation
        .call("echo", json!({"message": "deferred"}))
        .await
        .unwrap();
    assert!(out.text.contains("deferred"), "{}", out.text);
}

/// A 5 MiB text result (the Python SDK's `blob` tool) reaches the model as
/// at most its budget with the note; `result` keeps all of it, and
/// `read_result` reads on from where the note says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5_mib_result_reaches_the_model_as_its_budget() {
    let Some(py) = python_server() else {
        return;
    };
    let client = connect(py).await;
    const BUDGET: usize = 10_000;
    let toolbox = Toolbox::builder()
        .server(Server::new("py", client.clone()))
        .result_budget(BUDGET)
        .build()
        .await
        .unwrap();
    let offered = serde_json::to_string(&toolbox.anthropic_definitions().await).unwrap();
    assert!(offered.contains(r#""name":"read_result""#), "{offered}");

    let out = toolbox.call("blob", json!({"mib": 5})).await.unwrap();
    let whole = mcp_tools::fold_result(&out.result);
    assert_eq!(whole.len(), 5 << 20, "the raw result is whole");
    assert!(
        estimate_tokens(&out.text) <= BUDGET,
        "{}",
        estimate_tokens(&out.text)
    );
    let cut = out.cut.clone().unwrap();
    assert_eq!(cut.total_bytes, 5 << 20);
    assert!(cut.shown_bytes > 50_000, "{cut:?}");
    let id = cut.id.clone().unwrap();
    assert!(
        out.text.ends_with(&format!(
            "To read on, call read_result with {{\"id\": \"{id}\", \"offset\": {}}}.]",
            cut.shown_bytes
        )),
        "{}",
        &out.text[out.text.len() - 300..]
    );
    assert!(whole.starts_with(out.text.split("\n\n[").next().unwrap()));

    // The model reads on, through the same toolbox call.
    let page = toolbox
        .call("read_result", json!({"id": id, "offset": cut.shown_bytes}))
        .await
        .unwrap();
    assert!(estimate_tokens(&page.text) <= BUDGET);
    assert!(
        page.text.starts_with("xxxx") && page.text.contains("this is bytes "),
        "{}",
        &page.text[page.text.len() - 300..]
    );

    // No budget, no cut: the same call on a toolbox without one.
    let plain = Toolbox::builder()
        .server(Server::new("py", client))
        .build()
        .await
        .unwrap();
    let out = plain.call("blob", json!({"mib": 5})).await.unwrap();
    assert_eq!((out.text.len(), out.cut), (5 << 20, None));
    let offered = serde_json::to_string(&plain.anthropic_definitions().await).unwrap();
    assert!(!offered.contains("read_result"));
}

#[tokio::test]
async fn toolbox_follows_tool_changes_on_a_listen_stream() {
    toolbox_follows_a_changing_tool_set(VersionChoice::Auto, Era::Modern).await;
}

#[tokio::test]
async fn toolbox_follows_legacy_list_changed_notifications() {
    toolbox_follows_a_changing_tool_set(
        VersionChoice::Pinned(ProtocolVersion::LATEST_LEGACY),
        Era::Legacy,
    )
    .await;
}

/// A rig tool set built from a real MCP server, called through rig's own
/// interface (`DynamicTool::execute`); no model involved.
#[cfg(feature = "rig")]
#[tokio::test]
async fn rig_tools_from_server_everything() {
    use rig_core::tool::ToolErrorKind;

    let Some(cmd) = everything() else { return };
    let client = connect(cmd).await;
    let toolbox = Toolbox::builder()
        .server(
            Server::new("everything", client.clone()).filter(Filter::include([
                "echo",
                "get-sum",
                "get-tiny-image",
            ])),
        )
        .build()
        .await
        .unwrap();
    let tools = mcp_tools::rig::rig_tools(&toolbox).await;
    let names: Vec<&str> = tools.iter().map(|t| t.name().as_str()).collect();
    assert_eq!(names, ["echo", "get-sum", "get-tiny-image"]);
    let sum = &tools[1];
    assert_eq!(
        sum.definition().description,
        "Returns the sum of two numbers"
    );
    assert_eq!(
        sum.definition().parameters["properties"]["a"]["type"],
        "number"
    );

    let out = sum.execute(json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(out.as_text(), Some("The sum of 2 and 40 is 42."));
    let out = tools[2].execute(json!({})).await.unwrap();
    assert!(
        out.as_text().unwrap().contains("[image: image/png, "),
        "{out:?}"
    );

    // The model's mistake stays the model's, with the explanation.
    let err = tools[0]
        .execute(json!({"mesage": "typo"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArgs);
    assert!(err.model_feedback().unwrap().contains("message"), "{err:?}");
    // A dead connection is not.
    client.close().await;
    let err = tools[0]
        .execute(json!({"message": "hi"}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Network, "{err:?}");
}
