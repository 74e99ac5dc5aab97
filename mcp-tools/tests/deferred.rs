//! Deferred loading over the repository's catalog: 2,000 tools whose
//! shapes are real servers' tools (`examples/catalog/shapes.json`, named
//! `{name}_{i}` as `catalog-server` names them), served in pages by an
//! in-process server to the real client.
//!
//! - At the start of a turn the model sees at most 5 % of the tokens of all
//!   2,000 definitions.
//! - `search_tools` loads its hits for the next turn; the loaded set stays
//!   within its bounds, least recently used out first.
//! - The native forms validate against the providers' documented shapes:
//!   Anthropic's tool param and BM25 tool search tool, OpenAI Responses'
//!   function tool and `tool_search` (`tests/data/native_tools.schema.json`,
//!   written from their SDKs' generated types).

#![allow(clippy::unwrap_used)]

use mcp_client::Client;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Response};
use mcp_proto::transport::{TransportExt, channel};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use mcp_tools::{
    DeferredOptions, ModelApi, ModelTool, NativeSearch, Server, Toolbox, estimate_tokens, fit_tools,
};
use serde_json::{Value, json};

const TOOLS: usize = 2_000;
const PAGE: usize = 100;

/// The catalog's tools, as `catalog-server --tools 2000` serves them.
fn catalog() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/catalog/shapes.json"
    );
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let shapes: Vec<Value> = all["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tools"].as_array().unwrap().clone())
        .collect();
    (0..TOOLS)
        .map(|i| {
            let mut t = shapes[i % shapes.len()].clone();
            t["name"] = Value::from(format!("{}_{i}", t["name"].as_str().unwrap()));
            t
        })
        .collect()
}

/// A client of an in-process server listing `tools` in pages.
async fn serve(tools: Vec<Value>) -> Client {
    let (client_end, mut server) = channel::pair();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = server.recv().await {
            let Message::Request(req) = msg else { continue };
            let params = test_support::params(&req);
            let result = match &*req.method {
                "initialize" => Some(json!({
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "catalog", "version": "1"},
                })),
                "tools/list" => {
                    let from: usize = params["cursor"]
                        .as_str()
                        .and_then(|c| c.parse().ok())
                        .unwrap_or(0);
                    let to = (from + PAGE).min(tools.len());
                    let mut page = json!({"tools": tools[from..to]});
                    if to < tools.len() {
                        page["nextCursor"] = Value::from(to.to_string());
                    }
                    Some(page)
                }
                "tools/call" => Some(json!({"content": [{"type": "text", "text": "ok"}]})),
                _ => None,
            };
            let reply: Message = match result {
                Some(r) => Response::new(req.id, RawJson::from_value(&r).unwrap()).into(),
                None => ErrorResponse::new(
                    Some(req.id),
                    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"),
                )
                .into(),
            };
            if server.send(reply).await.is_err() {
                return;
            }
        }
    });
    Client::connect(client_end).await.unwrap()
}

fn tokens(defs: &[ModelTool]) -> usize {
    estimate_tokens(&serde_json::to_string(defs).unwrap())
}

#[tokio::test]
async fn a_turn_starts_with_at_most_5_percent_of_the_catalogs_tokens() {
    let toolbox = Toolbox::builder()
        .server(Server::new("catalog", serve(catalog()).await))
        .result_budget(10_000)
        .build()
        .await
        .unwrap();
    let everything = toolbox.definitions(ModelApi::Anthropic).await;
    assert_eq!(everything.len(), TOOLS + 1, "and read_result");
    let all = tokens(&everything);

    // The always-loaded set: the first tools that fit in 1 % of it.
    let always: Vec<String> = fit_tools(everything.clone(), all / 100)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(always.len() >= 5, "{always:?}");
    let conversation = toolbox.deferred(DeferredOptions::new().always(always.clone()));
    let start = conversation.definitions(ModelApi::Anthropic).await;
    let names: Vec<&str> = start.iter().map(ModelTool::name).collect();
    assert!(names.contains(&"search_tools") && names.contains(&"read_result"));
    let at_start = tokens(&start);
    println!(
        "all {TOOLS} definitions: {all} tokens; a turn's start: {at_start} ({:.2} %, {} tools)",
        at_start as f64 * 100.0 / all as f64,
        start.len()
    );
    assert!(at_start * 20 <= all, "{at_start} of {all}");
    // The same with a real tokenizer (OpenAI's o200k_base).
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let real = |defs: &[ModelTool]| {
        o200k
            .encode_ordinary(&serde_json::to_string(defs).unwrap())
            .len()
    };
    let (all_real, start_real) = (real(&everything), real(&start));
    println!(
        "o200k: all {all_real} tokens; a turn's start: {start_real} ({:.2} %)",
        start_real as f64 * 100.0 / all_real as f64
    );
    assert!(start_real * 20 <= all_real, "{start_real} of {all_real}");

    // The model searches; the hits are loaded for the next turn.
    let out = conversation
        .call(
            "search_tools",
            json!({"query": "list the commits of a git repository"}),
        )
        .await
        .unwrap();
    assert!(out.text.starts_with("Loaded 5 tools"), "{}", out.text);
    let loaded = conversation.loaded_names();
    assert_eq!(loaded.len(), 5);
    // The best hit is the most recently used. (The catalog holds each
    // shape some 44 times under other numbers: the hits are copies.)
    assert!(loaded.iter().all(|n| n.starts_with("git_")), "{loaded:?}");
    let next = conversation.definitions(ModelApi::Anthropic).await;
    for name in &loaded {
        assert!(next.iter().any(|t| t.name() == name), "{name}");
    }
    // Loaded tools are called as any other.
    let out = conversation
        .call(
            loaded.last().unwrap(),
            json!({"repo_path": ".", "message": "m"}),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "ok");

    // Many searches: the loaded set stays within its bounds.
    for q in [
        "read a file",
        "write a file",
        "search files by name",
        "show the diff of staged changes",
        "create a branch",
        "get environment variables",
        "add two numbers",
        "make a directory",
        "move a file",
        "long running operation with progress",
    ] {
        conversation
            .call("search_tools", json!({"query": q, "limit": 4}))
            .await
            .unwrap();
        let loaded = conversation.loaded_names();
        let loaded_tokens: usize = loaded
            .iter()
            .map(|n| {
                ModelTool::new(toolbox.get(n).unwrap(), ModelApi::Anthropic).estimated_tokens()
            })
            .sum();
        assert!(loaded.len() <= 20, "{}", loaded.len());
        assert!(loaded_tokens <= 8_000, "{loaded_tokens}");
        let turn = tokens(&conversation.definitions(ModelApi::Anthropic).await);
        assert!(turn * 20 <= all, "{turn} of {all} after {q:?}");
    }
}

#[tokio::test]
async fn the_least_recently_used_tool_is_unloaded_first() {
    let toolbox = Toolbox::builder()
        .server(Server::new("catalog", serve(catalog()).await))
        .build()
        .await
        .unwrap();
    let c = toolbox.deferred(DeferredOptions::new().max_loaded(3));
    for q in ["add two numbers", "read a file"] {
        c.call("search_tools", json!({"query": q, "limit": 2}))
            .await
            .unwrap();
    }
    let before = c.loaded_names();
    assert_eq!(before.len(), 3);
    // Calling the oldest makes it the most recent; the next search then
    // unloads the one after it.
    // (A call the model got wrong counts as a use too.)
    let _ = c.call(&before[0], json!({})).await;
    c.call(
        "search_tools",
        json!({"query": "create a branch", "limit": 1}),
    )
    .await
    .unwrap();
    let after = c.loaded_names();
    assert_eq!(after.len(), 3);
    assert_eq!(
        after[..2],
        [before[2].clone(), before[0].clone()],
        "{before:?} -> {after:?}"
    );
    assert!(!after.contains(&before[1]), "{before:?} -> {after:?}");
    // Bad arguments are the model's to fix.
    let err = c.call("search_tools", json!({})).await.unwrap_err();
    assert!(err.is_model_correctable(), "{err}");
}

#[tokio::test]
async fn native_definitions_validate_against_the_providers_shapes() {
    let toolbox = Toolbox::builder()
        .server(Server::new("catalog", serve(catalog()).await))
        .result_budget(5_000)
        .build()
        .await
        .unwrap();
    let always = ["echo_0", "read_file_*"];
    let c = toolbox.deferred(DeferredOptions::new().always(always));
    let schemas: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/native_tools.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    for (search, schema) in [
        (NativeSearch::AnthropicBm25, "anthropic"),
        (NativeSearch::AnthropicRegex, "anthropic"),
        (NativeSearch::OpenAiHosted, "openai_responses"),
    ] {
        let tools = serde_json::to_value(c.native_definitions(search).await).unwrap();
        let mut request = schemas[schema].clone();
        request["$defs"] = schemas["$defs"].clone();
        let validator = jsonschema::validator_for(&request).unwrap();
        let body = json!({"tools": tools});
        let errors: Vec<String> = validator
            .iter_errors(&body)
            .take(5)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{search:?}: {errors:?}");
        let tools = tools.as_array().unwrap();
        // Every server tool, deferred unless always loaded; the search tool
        // itself is not deferred; read_result is offered.
        let deferred = tools.iter().filter(|t| t["defer_loading"] == true).count();
        let kept: Vec<&str> = tools
            .iter()
            .filter(|t| t.get("defer_loading").is_none())
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(
            deferred + kept.len(),
            tools.len() - usize::from(search == NativeSearch::OpenAiHosted)
        );
        assert!(
            kept.contains(&"echo_0") && kept.contains(&"read_result"),
            "{kept:?}"
        );
        assert!(kept.iter().any(|n| n.starts_with("read_file_")), "{kept:?}");
        assert!(deferred > 1_900, "{deferred}");
    }
}
