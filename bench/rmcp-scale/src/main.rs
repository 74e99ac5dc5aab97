//! `rmcp-scale`: rmcp's side of `examples/src/bin/scale-bench.rs`. One
//! process holds `--stdio N` stdio servers and `--http M` Streamable HTTP
//! clients of one loopback `bench-server`, all on rmcp 3.11.0 (legacy era:
//! `initialize`, `initialized`), on a current-thread runtime as
//! `scale-bench` is, and prints the same lines: the time to connect all (at
//! most `--max-at-once` at a time, default 128), private memory
//! (`smaps_rollup`), fds and threads per connection after `--idle-ms`
//! (default 2000), one `echo` call on each, and closing all. Every HTTP
//! client shares one `reqwest::Client` (one connection pool), as
//! `scale-bench`'s shared pool does; `--shared-client no` gives each its own.
//! One connection of each kind is made, called and closed first (the
//! warm-up), as `scale-bench` does by default. Memory is read, and the
//! server started, by `scale-bench`'s own code (`examples/src/scale.rs`,
//! included by path).
//!
//! ```text
//! cargo build --release --manifest-path bench/rmcp-scale/Cargo.toml
//! bench/rmcp-scale/target/release/rmcp-scale --server target/release/bench-server
//! ```

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

// The same measurements and flags as `scale-bench`'s, from the same files.
#[allow(dead_code)]
#[path = "../../../examples/src/flags.rs"]
mod flags;
#[path = "../../../examples/src/scale.rs"]
mod scale;
use scale::{ms, snapshot, start_http_server};

type Client = RunningService<RoleClient, ()>;

struct Args {
    common: scale::Common,
    shared_client: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        common: scale::Common::default(),
        shared_client: true,
    };
    flags::each_flag(std::env::args().skip(1), |flag, v| {
        if a.common.set(flag, &v)? {
            return Ok(());
        }
        match flag {
            "--shared-client" => a.shared_client = v.as_str() == "yes",
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    Ok(a)
}

/// Runs `f(i)` for `0..n`, at most `max_at_once` at a time; the results in
/// no particular order, and the time it took.
async fn all<T, F, Fut>(n: usize, max_at_once: usize, f: F) -> Result<(Vec<T>, Duration), String>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<T, String>> + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(max_at_once.max(1)));
    let start = Instant::now();
    let mut set = JoinSet::new();
    for i in 0..n {
        let (work, permits) = (f(i), permits.clone());
        set.spawn(async move {
            let _permit = permits.acquire_owned().await.map_err(|e| e.to_string())?;
            work.await
        });
    }
    let mut out = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        out.push(r.map_err(|e| e.to_string())??);
    }
    Ok((out, start.elapsed()))
}

async fn call_echo(c: Arc<Client>, i: usize) -> Result<(), String> {
    let text = format!("call {i}");
    let mut args = JsonObject::new();
    args.insert("text".into(), serde_json::Value::String(text.clone()));
    let r = c
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .map_err(|e| format!("call {i}: {e}"))?;
    match r.content.first().and_then(|c| c.as_text()) {
        Some(t) if t.text == text => Ok(()),
        _ => Err(format!("call {i}: the echo does not match")),
    }
}

/// Connects `n` (after one warm-up), idles, measures, calls each, closes all.
async fn phase<F, Fut>(label: &str, n: usize, a: &Args, connect: F) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Client, String>> + Send + 'static,
{
    if n == 0 {
        return Ok(());
    }
    let (warm, _) = all(1, 1, |_| connect()).await?;
    for c in warm {
        call_echo(Arc::new(c), 0).await?;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = snapshot();
    let (clients, connect_time) = all(n, a.common.max_at_once, |_| connect()).await?;
    tokio::time::sleep(a.common.idle).await;
    let now = snapshot();
    println!(
        "{label}: {n} connections: connect all {:.1} ms (at most {} at once)",
        ms(connect_time),
        a.common.max_at_once
    );
    scale::per_connection(label, a.common.idle, "idle", now, before, n);
    let clients: Vec<Arc<Client>> = clients.into_iter().map(Arc::new).collect();
    let shared = Arc::new(clients);
    let list = shared.clone();
    let (_, call_time) = all(n, a.common.max_at_once, move |i| call_echo(list[i].clone(), i)).await?;
    let clients = Arc::try_unwrap(shared).map_err(|_| "clients still shared")?;
    let start = Instant::now();
    let mut set = JoinSet::new();
    let permits = Arc::new(Semaphore::new(a.common.max_at_once.max(1)));
    for c in clients {
        let c = Arc::try_unwrap(c).map_err(|_| "client still shared")?;
        let permits = permits.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let _ = c.cancel().await;
        });
    }
    while set.join_next().await.is_some() {}
    let close_time = start.elapsed();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = snapshot();
    println!(
        "{label}: one call on each {:.1} ms, close all {:.1} ms; after closing all: private memory {} KiB ({:+} KiB against before), {} fds, {} threads",
        ms(call_time),
        ms(close_time),
        after.private_kib,
        after.private_kib as i64 - before.private_kib as i64,
        after.fds,
        after.threads
    );
    Ok(())
}

async fn run(a: Args) -> Result<(), String> {
    scale::print_start();
    let server = a.common.server.clone();
    phase("stdio", a.common.stdio, &a, || {
        let server = server.clone();
        async move {
            let transport =
                TokioChildProcess::new(tokio::process::Command::new(&server).configure(|c| {
                    c.arg("--stdio");
                }))
                .map_err(|e| format!("spawn: {e}"))?;
            ().serve(transport)
                .await
                .map_err(|e| format!("stdio connect: {e}"))
        }
    })
    .await?;
    if a.common.http > 0 {
        let (_server, url) = start_http_server(&a.common.server, false).await?;
        let shared = reqwest::Client::new();
        let shared_client = a.shared_client;
        println!(
            "http: {}",
            if shared_client {
                "one reqwest::Client (one connection pool) shared by all clients"
            } else {
                "a reqwest::Client per client"
            }
        );
        phase("http", a.common.http, &a, || {
            let config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            let transport = if shared_client {
                StreamableHttpClientTransport::with_client(shared.clone(), config)
            } else {
                StreamableHttpClientTransport::from_config(config)
            };
            async move { ().serve(transport).await.map_err(|e| format!("http connect: {e}")) }
        })
        .await?;
    }
    Ok(())
}

fn main() -> ExitCode {
    scale::main("rmcp-scale", parse_args, run)
}
