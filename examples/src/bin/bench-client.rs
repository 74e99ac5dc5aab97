//! `bench-client`: the project's side of the shared peer benchmark
//! (`../shared/bench/CONTRACT.md`). It uses the library exactly as a user
//! would: connect, list tools, then call `echo` from C tasks sharing one
//! `Client`, verifying every result.
//!
//! `--era modern` asks the library for the 2026-07-28 revision
//! (`VersionChoice::Era(Era::Modern)`: `server/discover`, no fallback to
//! `initialize`); the library then writes each request's `_meta` and, over
//! HTTP, the `Mcp-*` headers itself.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{Client, ClientError, VersionChoice};
use mcp_proto::error::chain;
use mcp_proto::schema::{ContentBlock, ResultType};
use mcp_proto::transport::BoxTransport;
use mcp_proto::{Era, ProtocolVersion};

const NB: usize = 4500;
const G: f64 = 1.005;
const LO: f64 = 0.1;

struct Args {
    transport: String,
    server_cmd: Option<String>,
    url: Option<String>,
    calls: usize,
    concurrency: usize,
    payload: usize,
    /// `--era modern`: the 2026-07-28 revision.
    modern: bool,
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("bench-client: {msg}");
    ExitCode::from(2)
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        transport: "stdio".into(),
        server_cmd: None,
        url: None,
        calls: 1000,
        concurrency: 1,
        payload: 64,
        modern: false,
    };
    examples::flags::each_flag(std::env::args().skip(1), |flag, v| {
        match flag {
            "--transport" => a.transport = v.text(),
            "--server-cmd" => a.server_cmd = Some(v.text()),
            "--url" => a.url = Some(v.text()),
            "--calls" => a.calls = v.number()?,
            "--concurrency" => a.concurrency = v.number::<usize>()?.max(1),
            "--payload" => a.payload = v.number()?,
            "--era" => a.modern = v.is_modern_era()?,
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    match a.transport.as_str() {
        "stdio" if a.server_cmd.is_none() => Err("--transport stdio needs --server-cmd".into()),
        "http" if a.url.is_none() => Err("--transport http needs --url".into()),
        "stdio" | "http" => Ok(a),
        other => Err(format!("unknown transport {other:?}")),
    }
}

/// One histogram shared by every worker (atomic buckets: no per-worker
/// copies, whose 36 KB each would count against the client's memory).
struct Histogram(Vec<AtomicU64>);

impl Histogram {
    fn new() -> Self {
        Histogram((0..NB).map(|_| AtomicU64::new(0)).collect())
    }
    fn record(&self, us: f64) {
        let b = if us < LO {
            0
        } else {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let b = ((us / LO).ln() / G.ln()).floor() as usize;
            b.min(NB - 1)
        };
        if let Some(c) = self.0.get(b) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn total(&self) -> u64 {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
    fn percentile(&self, p: f64) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut sum = 0;
        for (b, c) in self.0.iter().enumerate() {
            sum += c.load(Ordering::Relaxed);
            if sum >= rank {
                #[allow(
                    clippy::cast_precision_loss,
                    clippy::cast_possible_truncation,
                    clippy::cast_possible_wrap
                )]
                return LO * G.powf(b as f64 + 0.5);
            }
        }
        0.0
    }
}

fn payload(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|i| char::from(ALPHABET[i % ALPHABET.len()]))
        .collect()
}

fn peak_rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn cpu_ticks() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

async fn connect(a: &Args) -> Result<(Client, f64), String> {
    let start = Instant::now();
    let transport: BoxTransport = match a.transport.as_str() {
        "stdio" => {
            let line = a.server_cmd.as_deref().unwrap_or_default();
            let mut words = line.split_ascii_whitespace();
            let program = words.next().ok_or("--server-cmd is empty")?;
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
    Ok((client, start.elapsed().as_secs_f64() * 1000.0))
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
        h.record(t0.elapsed().as_secs_f64() * 1e6);
    }
}

async fn run(a: Args) -> Result<String, String> {
    let (client, connect_ms) = connect(&a).await?;
    let payload = Arc::new(payload(a.payload));
    let next = Arc::new(AtomicUsize::new(0));
    let workers = a.concurrency.min(a.calls).max(1);
    let cpu0 = cpu_ticks();
    let start = Instant::now();
    let hist = Arc::new(Histogram::new());
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
    let total_ms = (total.as_secs_f64() * 1000.0).max(0.001);
    #[allow(clippy::cast_precision_loss)]
    let calls_per_s = a.calls as f64 / (total_ms / 1000.0);
    let mut line = format!(
        "{{\"client\":\"mcp-rs\",\"transport\":\"{}\",\"calls\":{},\"concurrency\":{},\"payload\":{},\"connect_ms\":{:.3},\"total_ms\":{:.3},\"calls_per_s\":{:.1},\"p50_us\":{:.2},\"p99_us\":{:.2}",
        a.transport,
        a.calls,
        a.concurrency,
        a.payload,
        connect_ms,
        total_ms,
        calls_per_s,
        hist.percentile(50.0),
        hist.percentile(99.0)
    );
    if let Some(rss) = peak_rss_kb() {
        line.push_str(&format!(",\"peak_rss_kb\":{rss}"));
    }
    if let (Some(c0), Some(c1)) = (cpu0, cpu1) {
        #[allow(clippy::cast_precision_loss)]
        let us = (c1.saturating_sub(c0)) as f64 * 1e6 / 100.0 / a.calls.max(1) as f64;
        line.push_str(&format!(",\"cpu_us_per_call\":{us:.3}"));
    }
    line.push('}');
    Ok(line)
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
    let args = match parse_args() {
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
