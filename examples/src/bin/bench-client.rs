//! `bench-client`: our client in the per-call benchmark (`cargo xtask
//! bench`; the contract is `examples::bench`). It uses the library exactly
//! as a user would: connect, list tools, then call `echo` from C tasks
//! sharing one `Client` on a current-thread runtime, verifying every result.
//!
//! `--era modern` asks the library for the 2026-07-28 revision
//! (`VersionChoice::Era(Era::Modern)`: `server/discover`, no fallback to
//! `initialize`); the library then writes each request's `_meta` and, over
//! HTTP, the `Mcp-*` headers itself.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{Client, ClientError, VersionChoice};
use mcp_proto::error::chain;
use mcp_proto::schema::{ContentBlock, ResultType};
use mcp_proto::transport::BoxTransport;
use mcp_proto::{Era, ProtocolVersion};

use examples::bench::{Args, Histogram, Measured, cpu_ticks, payload};

fn usage(msg: &str) -> ExitCode {
    eprintln!("bench-client: {msg}");
    ExitCode::from(2)
}

async fn connect(a: &Args) -> Result<(Client, Duration), String> {
    let start = Instant::now();
    let transport: BoxTransport = match a.transport.as_str() {
        "stdio" => {
            let (program, words) = a.server_words()?;
            let cmd = mcp_transport_stdio::ServerCommand::new(program)
                .args(words)
                .stderr(mcp_transport_stdio::Stderr::inherit())
                .max_message_size(64 << 20);
            Box::pin(
                mcp_transport_stdio::StdioTransport::spawn(cmd)
                    .map_err(|e| format!("spawn: {}", chain(&e)))?,
            )
        }
        _ => {
            let url = a.url.as_deref().unwrap_or_default();
            Box::pin(
                mcp_transport_http::HttpTransport::builder(url)
                    .max_body_size(64 << 20)
                    .build()
                    .map_err(|e| format!("http transport: {}", chain(&e)))?,
            )
        }
    };
    let version = if a.modern {
        VersionChoice::Era(Era::Modern)
    } else {
        VersionChoice::Auto
    };
    let client = Client::builder("bench-client", env!("CARGO_PKG_VERSION"))
        .protocol(version)
        .resend_on_session_expiry(a.transport == "http")
        .connect(transport)
        .await
        .map_err(|e| format!("connect: {}", chain(&e)))?;
    if a.modern && client.protocol_version() != Some(ProtocolVersion::V2026_07_28) {
        return Err(format!(
            "connect: negotiated {:?}, not 2026-07-28",
            client.protocol_version()
        ));
    }
    let tools = client
        .list_all::<mcp_proto::schema::Tool>()
        .await
        .map_err(|e| format!("tools/list: {}", chain(&e)))?;
    if !tools.iter().any(|t| t.name == "echo") {
        return Err("tools/list: the server has no `echo` tool".into());
    }
    Ok((client, start.elapsed()))
}

#[derive(serde::Serialize)]
struct EchoArgs<'a> {
    text: &'a str,
}

async fn worker(
    client: Client,
    next: Arc<AtomicUsize>,
    n: usize,
    payload: Arc<String>,
    h: Arc<Histogram>,
) -> Result<(), String> {
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            return Ok(());
        }
        let t0 = Instant::now();
        let r = client
            .call_tool("echo", &EchoArgs { text: &payload })
            .await
            .map_err(|e: ClientError| format!("call {i}: {}", chain(&e)))?;
        if r.is_error() {
            return Err(format!("call {i}: the tool reported isError"));
        }
        if r.result_type
            .as_ref()
            .is_some_and(|t| *t != ResultType::Complete)
        {
            return Err(format!("call {i}: resultType is not \"complete\""));
        }
        match r.content.first() {
            Some(ContentBlock::Text(t)) if t.text == *payload => {}
            Some(ContentBlock::Text(_)) => {
                return Err(format!("call {i}: echoed text differs from the payload"));
            }
            _ => return Err(format!("call {i}: content[0] is not a text block")),
        }
        h.record(t0.elapsed());
    }
}

async fn run(a: Args) -> Result<String, String> {
    let (client, connect) = connect(&a).await?;
    let payload = Arc::new(payload(a.payload));
    let next = Arc::new(AtomicUsize::new(0));
    let workers = a.concurrency.min(a.calls).max(1);
    let cpu0 = cpu_ticks();
    let start = Instant::now();
    let hist = Arc::new(Histogram::default());
    let mut tasks = Vec::with_capacity(workers);
    for _ in 0..workers {
        tasks.push(tokio::spawn(worker(
            client.clone(),
            next.clone(),
            a.calls,
            payload.clone(),
            hist.clone(),
        )));
    }
    for t in tasks {
        t.await.map_err(|e| format!("worker: {e}"))??;
    }
    let total = start.elapsed();
    let cpu1 = cpu_ticks();
    let recorded = hist.total();
    if recorded != a.calls as u64 {
        return Err(format!("recorded {recorded} results, expected {}", a.calls));
    }
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .map_err(|_| "close: timed out".to_owned())?;
    let measured = Measured {
        client: "mcp-rs",
        connect,
        total,
        cpu: (cpu0, cpu1),
        hist: &hist,
    };
    Ok(measured.line(&a))
}

/// With `MCP_BENCH_OTEL` set (feature `otel`): every call's span goes
/// through `tracing-opentelemetry` into an SDK tracer that samples and
/// records everything, with no exporter (export is the exporter's cost).
#[cfg(feature = "otel")]
fn install_otel() -> Option<opentelemetry_sdk::trace::SdkTracerProvider> {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    std::env::var_os("MCP_BENCH_OTEL")?;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("bench-client")));
    tracing::subscriber::set_global_default(subscriber).ok()?;
    Some(provider)
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    #[cfg(feature = "otel")]
    let _otel = install_otel();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bench-client: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-client: {e}");
            ExitCode::FAILURE
        }
    }
}
