//! An agent's own `execute_tool` span: the tool call adds the MCP
//! attributes to it instead of nesting a span of its own (the
//! OpenTelemetry MCP conventions), and the server's span (the Python SDK's,
//! recorded by OpenTelemetry's Python SDK) is its child. Without such a
//! span the call has its own.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mcp_client::{Client, VersionChoice};
use mcp_tools::{McpTool, Tool};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;
use test_support::otel::{Capture, attr};
use tracing::Instrument;
use tracing::field::Empty;

#[tokio::test(flavor = "current_thread")]
async fn an_agents_execute_tool_span_takes_the_mcp_attributes() {
    let Some(peer) = test_support::python_server() else {
        return;
    };
    let spans = std::env::temp_dir().join(format!("mcp-tools-otel-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&spans);
    let cmd = ServerCommand::new(peer.program)
        .args(peer.args)
        .arg("stdio")
        .env("MCP_TEST_OTEL_SPANS", &spans)
        .stderr(Stderr::discard());
    let cap = Capture::install();
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        Client::builder("mcp-rs-tests", "0.1.0")
            .protocol(VersionChoice::Auto)
            .connect(StdioTransport::spawn(cmd).unwrap()),
    )
    .await
    .unwrap()
    .unwrap();
    let tools = McpTool::list(&client).await.unwrap();
    let echo = tools.iter().find(|t| t.name() == "echo").unwrap();

    // The agent's span declares a few MCP fields; the others are set
    // through tracing-opentelemetry.
    let agent = tracing::info_span!(
        "execute_tool",
        otel.name = "execute_tool echo",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = "echo",
        mcp.method.name = Empty,
        jsonrpc.request.id = Empty,
    );
    echo.call(json!({"text": "hi"}))
        .instrument(agent)
        .await
        .unwrap();
    // Without one, the call has its own span.
    echo.call(json!({"text": "again"})).await.unwrap();
    client.close().await;

    let agent = cap.span("execute_tool echo");
    assert_eq!(
        attr(&agent, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert!(attr(&agent, "jsonrpc.request.id").is_some());
    // Undeclared: set on its OpenTelemetry span.
    assert!(attr(&agent, "mcp.protocol.version").is_some());
    let own: Vec<_> = cap
        .spans()
        .into_iter()
        .filter(|s| s.name == "tools/call echo")
        .collect();
    assert_eq!(own.len(), 1, "only the second call has a span of its own");

    let text = std::fs::read_to_string(&spans).unwrap_or_default();
    let _ = std::fs::remove_file(&spans);
    let server: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|s: &serde_json::Value| s["name"] == "tools/call echo")
        .collect();
    assert_eq!(server.len(), 2, "{text}");
    assert_eq!(
        server[0]["parent_span_id"],
        agent.span_context.span_id().to_string(),
        "the server's span is the child of the agent's"
    );
    assert_eq!(
        server[1]["parent_span_id"],
        own[0].span_context.span_id().to_string()
    );
}
