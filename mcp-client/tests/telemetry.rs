//! Spans as an OpenTelemetry backend sees them (`tracing-opentelemetry`
//! into the SDK's in-memory exporter), against the Python SDK's server over
//! stdio in both eras: names, kinds, attributes, events and status for
//! every method family, a tool's `isError`, a JSON-RPC error, a transport
//! failure and a cancelled call; and (feature `opentelemetry`) the trace
//! context the server receives: its own span (OpenTelemetry's Python SDK)
//! is the child of ours.
//!
//! Each test runs on a current-thread runtime: the capturing subscriber is
//! that thread's default, and the client's driver runs there too. The tests
//! run one at a time: tracing caches each callsite's interest across
//! threads, and a test thread without a subscriber (or one whose subscriber
//! just went away) must not decide it for another's.

#![allow(clippy::unwrap_used, clippy::await_holding_lock)]

use std::time::Duration;

use mcp_client::{Client, ClientHandler, VersionChoice};
use mcp_proto::schema::{
    ClientCapabilities, ElicitParams, ElicitResult, Prompt, Resource, ResourceTemplate, Tool,
};
use mcp_proto::{Era, ErrorObject};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;
use test_support::otel::{Capture, SpanKind, Status, attr, events, find, parent};

/// Answers elicitation (the `greet` tool asks for a name).
struct Names;

impl ClientHandler for Names {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_elicitation_form()
    }
    async fn elicit(&self, _: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let mut content = serde_json::Map::new();
        content.insert("name".into(), json!("octocat"));
        Ok(ElicitResult::accept(content))
    }
}

/// Held for a whole test (see the module docs).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn python_server() -> Option<ServerCommand> {
    let peer = test_support::python_server()?.arg("stdio");
    Some(
        ServerCommand::new(peer.program)
            .args(peer.args)
            .stderr(Stderr::discard()),
    )
}

async fn connect(cmd: ServerCommand, era: Era) -> Client {
    let transport = StdioTransport::spawn(cmd).unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        Client::builder("mcp-rs-tests", "0.1.0")
            .handler(Names)
            .protocol(VersionChoice::Era(era))
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn spans_of_every_method_family_legacy() {
    let _serial = one_at_a_time();
    method_families(Era::Legacy).await;
}

#[tokio::test(flavor = "current_thread")]
async fn spans_of_every_method_family_2026_07_28() {
    let _serial = one_at_a_time();
    method_families(Era::Modern).await;
}

async fn method_families(era: Era) {
    let Some(cmd) = python_server() else { return };
    let cap = Capture::install();
    let client = connect(cmd, era).await;
    let version = client.protocol_version().unwrap().as_str().to_owned();

    client.list_all::<Tool>().await.unwrap();
    client.list_all::<Prompt>().await.unwrap();
    client.list_all::<Resource>().await.unwrap();
    client.list_all::<ResourceTemplate>().await.unwrap();
    let echo = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert!(!echo.is_error());
    let fail = client
        .call_tool("fail", json!({"reason": "no"}))
        .await
        .unwrap();
    assert!(fail.is_error());
    client
        .get_prompt("review", [("code", "fn main() {}")])
        .await
        .unwrap();
    client.read_resource("test://static/hello").await.unwrap();
    let rpc = client
        .request_raw("no/such/method", None)
        .await
        .unwrap_err();
    assert_eq!(rpc.rpc().unwrap().code.0, -32601, "{rpc}");
    client
        .call_tool("slow_count", json!({"steps": 2}))
        .on_progress(|_| {})
        .await
        .unwrap();
    client.call_tool("greet", json!({})).await.unwrap();
    client.close().await;

    let session = cap.span("mcp.session");
    assert_eq!(session.span_kind, SpanKind::Internal);
    assert_eq!(
        attr(&session, "mcp.protocol.version"),
        Some(version.clone())
    );
    assert_eq!(attr(&session, "network.transport").as_deref(), Some("pipe"));
    assert_eq!(attr(&session, "error.type"), None, "closed by the client");
    assert_eq!(events(&session, "closed").len(), 1);

    // The handshake: a client span under the session span.
    let handshake = match era {
        Era::Legacy => "initialize",
        _ => "server/discover",
    };
    let hs = cap.span(handshake);
    assert_eq!(hs.span_kind, SpanKind::Client);
    assert_eq!(parent(&hs), session.span_context.span_id().to_string());
    assert_eq!(attr(&hs, "mcp.method.name").as_deref(), Some(handshake));
    assert_eq!(attr(&hs, "jsonrpc.request.id").as_deref(), Some("1"));

    for (name, method) in [
        ("tools/list", "tools/list"),
        ("prompts/list", "prompts/list"),
        ("resources/list", "resources/list"),
        ("resources/templates/list", "resources/templates/list"),
        ("tools/call echo", "tools/call"),
        ("prompts/get review", "prompts/get"),
        // A resource's URI is not in the name (high cardinality).
        ("resources/read", "resources/read"),
    ] {
        let s = cap.span(name);
        assert_eq!(s.span_kind, SpanKind::Client, "{name}");
        assert_eq!(
            attr(&s, "mcp.method.name").as_deref(),
            Some(method),
            "{name}"
        );
        assert_eq!(
            attr(&s, "mcp.protocol.version"),
            Some(version.clone()),
            "{name}"
        );
        assert_eq!(
            attr(&s, "network.transport").as_deref(),
            Some("pipe"),
            "{name}"
        );
        assert!(attr(&s, "jsonrpc.request.id").is_some(), "{name}");
        assert_eq!(attr(&s, "error.type"), None, "{name}");
        assert_eq!(s.status, Status::Unset, "{name}");
        // The application's span (none here) is the parent, not the session.
        assert_eq!(parent(&s), "0000000000000000", "{name}");
    }
    let echo = cap.span("tools/call echo");
    assert_eq!(
        attr(&echo, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(attr(&echo, "gen_ai.tool.name").as_deref(), Some("echo"));
    // Content only when asked for.
    assert_eq!(attr(&echo, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attr(&echo, "gen_ai.tool.call.result"), None);
    let review = cap.span("prompts/get review");
    assert_eq!(
        attr(&review, "gen_ai.prompt.name").as_deref(),
        Some("review")
    );
    assert_eq!(attr(&review, "gen_ai.operation.name"), None);
    let read = cap.span("resources/read");
    assert_eq!(
        attr(&read, "mcp.resource.uri").as_deref(),
        Some("test://static/hello")
    );

    // A tool that ran and failed.
    let fail = cap.span("tools/call fail");
    assert_eq!(attr(&fail, "error.type").as_deref(), Some("tool_error"));
    assert!(
        matches!(fail.status, Status::Error { .. }),
        "{:?}",
        fail.status
    );

    // A JSON-RPC error: its code, and its message as the status.
    let rpc = cap.span("no/such/method");
    assert_eq!(attr(&rpc, "error.type").as_deref(), Some("-32601"));
    assert_eq!(
        attr(&rpc, "rpc.response.status_code").as_deref(),
        Some("-32601")
    );
    let Status::Error { description } = &rpc.status else {
        panic!("{:?}", rpc.status)
    };
    assert!(!description.is_empty());

    // Progress notifications are events of their call.
    let slow = cap.span("tools/call slow_count");
    let progress = events(&slow, "progress");
    assert_eq!(progress.len(), 2, "{:?}", slow.events);
    assert_eq!(
        find(&progress[1], "progress")
            .map(|v| v.to_string())
            .as_deref(),
        Some("2")
    );
    assert_eq!(
        find(&progress[1], "total")
            .map(|v| v.to_string())
            .as_deref(),
        Some("2")
    );
    assert_eq!(
        find(&progress[1], "progress.message")
            .map(|v| v.to_string())
            .as_deref(),
        Some("step 2")
    );

    // 2026-07-28 asks for the name in an `input_required` round: one event
    // for the round, one for the request that answers it (a new id).
    let greet = cap.span("tools/call greet");
    match era {
        Era::Legacy => {
            assert!(events(&greet, "input required").is_empty());
            assert!(events(&greet, "sent again").is_empty());
            // The server's own request: a SERVER span of ours.
            let ask = cap.span("elicitation/create");
            assert_eq!(ask.span_kind, SpanKind::Server);
            assert_eq!(
                attr(&ask, "mcp.method.name").as_deref(),
                Some("elicitation/create")
            );
            assert!(attr(&ask, "jsonrpc.request.id").is_some());
            assert_eq!(attr(&ask, "error.type"), None);
        }
        _ => {
            assert_eq!(
                events(&greet, "input required").len(),
                1,
                "{:?}",
                greet.events
            );
            let again = events(&greet, "sent again");
            assert_eq!(again.len(), 1, "{:?}", greet.events);
            assert_eq!(
                find(&again[0], "reason").map(|v| v.to_string()).as_deref(),
                Some("input round")
            );
            let first = attr(&greet, "jsonrpc.request.id");
            let second = find(&again[0], "jsonrpc.request.id").map(|v| v.to_string());
            assert!(first.is_some() && second.is_some() && first != second);
        }
    }
}

/// A server that dies mid-call: the call's and the session's `error.type`
/// is the transport's kind; a call the caller drops is `cancelled`.
#[tokio::test(flavor = "current_thread")]
async fn transport_failure_and_cancellation() {
    let _serial = one_at_a_time();
    let Some(cmd) = python_server() else { return };
    let cap = Capture::install();
    let client = connect(cmd, Era::Legacy).await;
    let slow = client.call_tool("slow_count", json!({"steps": 200}));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), slow)
            .await
            .is_err()
    );
    client.close().await;
    let cancelled = cap.span("tools/call slow_count");
    assert_eq!(attr(&cancelled, "error.type").as_deref(), Some("cancelled"));
    assert_eq!(events(&cancelled, "cancelled").len(), 1);

    let Some(cmd) = python_server() else { return };
    let client = connect(cmd.env("MCP_TEST_EXIT_AFTER_CALLS", "1"), Era::Legacy).await;
    let err = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
    let _ = client.closed().await;
    let echo = cap.span("tools/call echo");
    assert_eq!(
        attr(&echo, "error.type").as_deref(),
        Some("closed"),
        "{err}"
    );
    assert!(matches!(echo.status, Status::Error { .. }));
    drop(client);
    let sessions: Vec<_> = cap
        .spans()
        .into_iter()
        .filter(|s| s.name == "mcp.session")
        .collect();
    assert_eq!(sessions.len(), 2);
    assert!(
        sessions
            .iter()
            .any(|s| attr(s, "error.type").as_deref() == Some("closed")),
        "the second session ended with the server's exit"
    );
}

/// The trace context reaches the server: the Python SDK's server span for
/// each call (recorded by OpenTelemetry's Python SDK) is in our trace, the
/// child of our client span, in both eras; a `traceparent` the caller set
/// is sent as set.
#[cfg(feature = "opentelemetry")]
#[tokio::test(flavor = "current_thread")]
async fn the_server_span_is_the_child_of_ours() {
    let _serial = one_at_a_time();
    use tracing::Instrument;
    for era in [Era::Legacy, Era::Modern] {
        let Some(cmd) = python_server() else { return };
        let spans_file = server_spans::file();
        let cap = Capture::install();
        let client = connect(cmd.env("MCP_TEST_OTEL_SPANS", &spans_file), era).await;
        let agent = tracing::info_span!("agent");
        let mine = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        if era == Era::Legacy {
            client.call_tool("greet", json!({})).await.unwrap();
        }
        async {
            client
                .call_tool("echo", json!({"text": "hi"}))
                .await
                .unwrap();
            client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .meta("traceparent", mine)
                .await
                .unwrap();
        }
        .instrument(agent)
        .await;
        client.close().await;

        let ours = cap.span("tools/call echo");
        let agent = cap.span("agent");
        assert_eq!(parent(&ours), agent.span_context.span_id().to_string());
        let theirs = server_spans::named(&spans_file, "tools/call echo");
        assert_eq!(theirs["kind"], "SERVER");
        assert_eq!(
            theirs["trace_id"],
            ours.span_context.trace_id().to_string(),
            "{era:?}"
        );
        assert_eq!(
            theirs["parent_span_id"],
            ours.span_context.span_id().to_string(),
            "{era:?}"
        );
        // The handshake's server span is the child of our handshake span.
        let hs = if era == Era::Legacy {
            "initialize"
        } else {
            "server/discover"
        };
        let theirs = server_spans::named(&spans_file, hs);
        assert_eq!(
            theirs["parent_span_id"],
            cap.span(hs).span_context.span_id().to_string(),
            "{era:?}"
        );
        // Legacy: the server's request to us (elicitation) carries its
        // trace context; our SERVER span for it is the child of the span
        // the Python SDK sent it in.
        if era == Era::Legacy {
            let sent = server_spans::named(&spans_file, "MCP send elicitation/create");
            let ask = cap.span("elicitation/create");
            assert_eq!(ask.span_kind, SpanKind::Server);
            assert_eq!(parent(&ask), sent["span_id"].as_str().unwrap());
            assert_eq!(
                ask.span_context.trace_id().to_string(),
                sent["trace_id"].as_str().unwrap()
            );
        }
        // The caller's own traceparent wins.
        let theirs = server_spans::named(&spans_file, "tools/call add");
        assert_eq!(theirs["trace_id"], "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(theirs["parent_span_id"], "00f067aa0ba902b7");
        let _ = std::fs::remove_file(&spans_file);
    }
}

#[cfg(feature = "opentelemetry")]
mod server_spans {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A fresh file for the server's spans.
    pub(super) fn file() -> PathBuf {
        static N: AtomicU32 = AtomicU32::new(0);
        std::env::temp_dir().join(format!(
            "mcp-otel-spans-{}-{}.jsonl",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// The server span named `name` (the Python server wrote it when it
    /// ended, before it answered).
    pub(super) fn named(file: &PathBuf, name: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("the server recorded no span {name:?}:\n{text}"))
    }
}

/// The duration histograms (feature `metrics`): one
/// `mcp.client.operation.duration` point per request with its attributes
/// (`error.type` for the failed one), the conventions' bucket boundaries,
/// and one `mcp.client.session.duration` when the connection closes.
#[cfg(feature = "metrics")]
#[tokio::test(flavor = "current_thread")]
async fn duration_histograms() {
    let _serial = one_at_a_time();
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

    let Some(cmd) = python_server() else { return };
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    // The only test in this binary that uses the global meter provider.
    opentelemetry::global::set_meter_provider(provider.clone());
    let _cap = Capture::install();
    let client = connect(cmd, Era::Legacy).await;
    client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    client
        .call_tool("fail", json!({"reason": "no"}))
        .await
        .unwrap();
    client.close().await;
    provider.force_flush().unwrap();

    let mut operations = Vec::new();
    let mut sessions = 0;
    for rm in exporter.get_finished_metrics().unwrap() {
        for sm in rm.scope_metrics() {
            for m in sm.metrics() {
                let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() else {
                    continue;
                };
                for p in h.data_points() {
                    let attrs: Vec<(String, String)> = p
                        .attributes()
                        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                        .collect();
                    match m.name() {
                        "mcp.client.operation.duration" => {
                            assert_eq!(
                                p.bounds().collect::<Vec<_>>(),
                                [
                                    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0,
                                    60.0, 120.0, 300.0
                                ]
                            );
                            operations.push(attrs);
                        }
                        "mcp.client.session.duration" => sessions += p.count(),
                        _ => {}
                    }
                }
            }
        }
    }
    let has = |attrs: &Vec<(String, String)>, k: &str, v: &str| {
        attrs.iter().any(|(a, b)| a == k && b == v)
    };
    assert!(
        operations.iter().any(|a| has(a, "gen_ai.tool.name", "echo")
            && has(a, "mcp.method.name", "tools/call")
            && has(a, "network.transport", "pipe")
            && !a.iter().any(|(k, _)| k == "error.type")),
        "{operations:?}"
    );
    assert!(
        operations
            .iter()
            .any(|a| has(a, "gen_ai.tool.name", "fail") && has(a, "error.type", "tool_error")),
        "{operations:?}"
    );
    assert!(
        operations
            .iter()
            .any(|a| has(a, "mcp.method.name", "initialize"))
    );
    // At least this one (tests running beside it may add theirs).
    assert!(sessions >= 1);
}

/// `record_tool_content`: a call's arguments and result, as JSON text, on
/// its span (opt-in: off in the other tests).
#[tokio::test(flavor = "current_thread")]
async fn tool_content_only_when_asked_for() {
    let _serial = one_at_a_time();
    let Some(cmd) = python_server() else { return };
    let cap = Capture::install();
    let client = Client::builder("mcp-rs-tests", "0.1.0")
        .protocol(VersionChoice::Era(Era::Legacy))
        .record_tool_content(true)
        .connect(StdioTransport::spawn(cmd).unwrap())
        .await
        .unwrap();
    client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    client.close().await;
    let echo = cap.span("tools/call echo");
    let args: serde_json::Value =
        serde_json::from_str(&attr(&echo, "gen_ai.tool.call.arguments").unwrap()).unwrap();
    assert_eq!(args, json!({"text": "hi"}));
    let result = attr(&echo, "gen_ai.tool.call.result").unwrap();
    assert!(result.contains("\"hi\""), "{result}");
}
