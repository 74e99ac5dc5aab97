//! What the bridge adds to a tool call: folding, naming, argument checking,
//! and a whole `Toolbox::call` against a raw `Client::call_tool` over the
//! in-memory transport (the difference is the bridge's overhead).
//!
//! `cargo bench -p mcpio-tools --bench bridge`

#![allow(clippy::unwrap_used, missing_docs)]

use divan::{Bencher, black_box};
use mcp_client::Client;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Response};
use mcp_proto::schema::CallToolResult;
use mcp_proto::transport::{TransportExt, channel};
use mcp_proto::{ErrorCode, ErrorObject};
use mcp_tools::{Glob, Server, Toolbox, check_arguments, fold_result, sanitize_name};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn mixed_result() -> CallToolResult {
    serde_json::from_value(json!({"content": [
        {"type": "text", "text": "Found 3 files matching the query in the repository."},
        {"type": "resource_link", "uri": "file:///src/main.rs", "name": "main.rs"},
        {"type": "resource_link", "uri": "file:///src/lib.rs", "name": "lib.rs"},
        {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///README.md", "mimeType": "text/markdown", "text": "# Project\n\nSome text."}},
        {"type": "text", "text": "Done."},
    ]}))
    .unwrap()
}

#[divan::bench]
fn fold_mixed_result(b: Bencher<'_, '_>) {
    let r = mixed_result();
    b.bench_local(|| fold_result(black_box(&r)));
}

#[divan::bench]
fn sanitize_valid_name(b: Bencher<'_, '_>) {
    b.bench_local(|| sanitize_name(black_box("github_search_issues")));
}

#[divan::bench]
fn sanitize_dotted_name(b: Bencher<'_, '_>) {
    b.bench_local(|| sanitize_name(black_box("github.issues/search-all")));
}

#[divan::bench]
fn glob_match(b: Bencher<'_, '_>) {
    let g = Glob::new("admin.**.delete_*");
    b.bench_local(|| g.matches(black_box("admin.users.accounts.delete_all")));
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "sort": {"enum": ["created", "updated", "comments"]},
            "labels": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

#[divan::bench]
fn check_arguments_typical(b: Bencher<'_, '_>) {
    let s = schema();
    let args = json!({"query": "is:open", "limit": 20, "sort": "updated", "labels": ["bug", "p1"]});
    b.bench_local(|| check_arguments(black_box(&s), black_box(&args)).is_ok());
}

/// A minimal server: legacy handshake, one tool, echoes `query`.
fn spawn_server(rt: &tokio::runtime::Runtime) -> Client {
    let (client_end, mut server) = channel::pair();
    rt.spawn(async move {
        while let Some(Ok(msg)) = server.recv().await {
            let Message::Request(req) = msg else { continue };
            let params = test_support::params(&req);
            let reply: Message = match &*req.method {
                "initialize" => Response::new(
                    req.id,
                    mcp_proto::RawJson::from_value(&json!({
                        "protocolVersion": params["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "bench", "version": "1"},
                    }))
                    .unwrap(),
                )
                .into(),
                "tools/list" => Response::new(
                    req.id,
                    mcp_proto::RawJson::from_value(&json!({"tools": [
                        {"name": "search", "inputSchema": schema()},
                    ]}))
                    .unwrap(),
                )
                .into(),
                "tools/call" => Response::new(
                    req.id,
                    mcp_proto::RawJson::from_value(&json!({"content": [
                        {"type": "text", "text": params["arguments"]["query"]},
                    ]}))
                    .unwrap(),
                )
                .into(),
                _ => ErrorResponse::new(
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
    rt.block_on(Client::connect(client_end)).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[divan::bench]
fn call_raw_client(b: Bencher<'_, '_>) {
    let rt = runtime();
    let client = spawn_server(&rt);
    let args = json!({"query": "is:open", "limit": 20});
    b.bench_local(|| {
        rt.block_on(client.call_tool("search", args.clone()).send())
            .unwrap()
    });
}

#[divan::bench]
fn call_through_toolbox(b: Bencher<'_, '_>) {
    let rt = runtime();
    let client = spawn_server(&rt);
    let toolbox = rt
        .block_on(
            Toolbox::builder()
                .server(Server::new("gh", client).prefix("gh_"))
                .build(),
        )
        .unwrap();
    let args = json!({"query": "is:open", "limit": 20});
    b.bench_local(|| {
        rt.block_on(toolbox.call("gh_search", args.clone()))
            .unwrap()
    });
}

/// The same call with a tool policy whose rules do not match the tool: the
/// cost of the check when it is on (the verdict is decided once per tool).
#[divan::bench]
fn call_through_toolbox_with_a_policy(b: Bencher<'_, '_>) {
    let rt = runtime();
    let client = spawn_server(&rt);
    let policy = mcp_tools::ToolPolicy::new()
        .deny(["**delete**", "admin.**"])
        .server("gh", mcp_tools::ToolRules::new().ask(["create_*"]));
    let toolbox = rt
        .block_on(
            Toolbox::builder()
                .server(Server::new("gh", client).prefix("gh_"))
                .tool_options(mcp_tools::ToolOptions::new().policy(policy))
                .build(),
        )
        .unwrap();
    let args = json!({"query": "is:open", "limit": 20});
    b.bench_local(|| {
        rt.block_on(toolbox.call("gh_search", args.clone()))
            .unwrap()
    });
}
