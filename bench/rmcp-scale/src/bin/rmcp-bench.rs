//! `rmcp-bench`: rmcp 3.11.0 in the per-call benchmark (`cargo xtask
//! bench` runs it beside `bench-client` and `bench-floor`). The same
//! command line, verification and JSON line as theirs: the contract's code
//! is `examples/src/bench.rs`, included by path.
//!
//! rmcp is used as its docs show: `().serve(transport)` (stdio:
//! `TokioChildProcess`; HTTP: `StreamableHttpClientTransport`), then
//! `list_all_tools()` and `call_tool(..)` from C tasks sharing the client,
//! on a current-thread runtime as the other clients are. `--era modern` is
//! rmcp's opt-in to 2026-07-28, `serve_with_lifecycle` with
//! `ClientLifecycleMode::Discover` preferring only that revision (no
//! fallback to `initialize`). With `RMCP_POOLED=1` (HTTP) the transport
//! gets a plain `reqwest::Client`, which keeps connections alive (rmcp's
//! own client does not): reported as `rmcp-pooled`.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, JsonObject, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};

#[allow(dead_code)]
#[path = "../../../../examples/src/flags.rs"]
mod flags;
#[allow(dead_code)]
#[path = "../../../../examples/src/bench.rs"]
mod bench;
use bench::{Args, Histogram, Measured, cpu_ticks, payload};

type Client = RunningService<RoleClient, ()>;

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

async fn connect(a: &Args, pooled: bool) -> Result<Client, String> {
    let step = if a.modern { "server/discover" } else { "initialize" };
    if a.transport == "stdio" {
        let (program, words) = a.server_words()?;
        let transport = TokioChildProcess::new(tokio::process::Command::new(program).configure(|c| {
            c.args(&words);
        }))
        .map_err(|e| format!("spawn: {e}"))?;
        let served = if a.modern {
            ().serve_with_lifecycle(transport, lifecycle()).await
        } else {
            ().serve(transport).await
        };
        return served.map_err(|e| format!("{step}: {e}"));
    }
    let config = StreamableHttpClientTransportConfig::with_uri(a.url.clone().unwrap_or_default())
        // rmcp's default is 16 POSTs in flight: allow the workers'.
        .max_concurrent_requests(a.concurrency.max(16));
    let transport = if pooled {
        StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
    } else {
        StreamableHttpClientTransport::from_config(config)
    };
    let served = if a.modern {
        ().serve_with_lifecycle(transport, lifecycle()).await
    } else {
        ().serve(transport).await
    };
    served.map_err(|e| format!("{step}: {e}"))
}

async fn worker(
    client: Arc<Client>,
    next: Arc<AtomicUsize>,
    n: usize,
    text: Arc<String>,
    hist: Arc<Histogram>,
) -> Result<(), String> {
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            return Ok(());
        }
        let at = Instant::now();
        let mut args = JsonObject::new();
        args.insert("text".into(), serde_json::Value::String(text.to_string()));
        let r = client
            .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
            .await
            .map_err(|e| format!("call {i}: {e}"))?;
        if r.is_error == Some(true) {
            return Err(format!("call {i}: the tool reported isError"));
        }
        match r.content.first().and_then(|c| c.as_text()) {
            Some(t) if t.text == *text => {}
            _ => return Err(format!("call {i}: content[0] is not the payload as text")),
        }
        hist.record(at.elapsed());
    }
}

async fn run(a: &Args, pooled: bool) -> Result<String, String> {
    let start = Instant::now();
    let client = connect(a, pooled).await?;
    let tools = client.list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
    if !tools.iter().any(|t| t.name == "echo") {
        return Err("tools/list: the server has no `echo` tool".into());
    }
    let connect = start.elapsed();
    let client = Arc::new(client);
    let (text, hist) = (Arc::new(payload(a.payload)), Arc::new(Histogram::default()));
    let next = Arc::new(AtomicUsize::new(0));
    let cpu0 = cpu_ticks();
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..a.workers() {
        let w = worker(client.clone(), next.clone(), a.calls, text.clone(), hist.clone());
        tasks.push(tokio::spawn(w));
    }
    for t in tasks {
        t.await.map_err(|e| format!("worker: {e}"))??;
    }
    let total = t0.elapsed();
    let cpu1 = cpu_ticks();
    if hist.total() != a.calls as u64 {
        return Err(format!("recorded {} results, expected {}", hist.total(), a.calls));
    }
    let client = Arc::try_unwrap(client).map_err(|_| "the client is still shared".to_owned())?;
    let _ = tokio::time::timeout(Duration::from_secs(10), client.cancel()).await;
    let m = Measured {
        client: if pooled { "rmcp-pooled" } else { "rmcp" },
        connect,
        total,
        cpu: (cpu0, cpu1),
        hist: &hist,
    };
    Ok(m.line(a))
}

fn main() -> ExitCode {
    let a = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rmcp-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let pooled = a.transport == "http" && std::env::var_os("RMCP_POOLED").is_some_and(|v| v == "1");
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rmcp-bench: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(&a, pooled)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rmcp-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
