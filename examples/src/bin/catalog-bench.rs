//! `catalog-bench`: what an agent host feels beyond the per-call path, with
//! the library used as its docs show. `cargo xtask catalog` runs it beside
//! the no-framework floor (`catalog-floor`) and rmcp (`bench/rmcp-scale`'s
//! `rmcp-catalog`), counting instructions with callgrind and heap with
//! massif; `catalog-server` is the server.
//!
//! - `--bench list [--keep vec|toolbox]`: spawn `--server-cmd`, connect
//!   (legacy era pinned, as the floor), list every tool
//!   (`Client::list_all::<Tool>`) and keep them: the `Vec<Tool>`, or a
//!   `mcp_tools::Toolbox` of the server (what an agent host keeps).
//! - `--bench convert --turns T --shape openai|anthropic|openai-value|anthropic-value`:
//!   the toolbox, then T times every tool as a model tool definition,
//!   serialized into one buffer (what is sent to the model each turn):
//!   `openai`/`anthropic` with [`Toolbox::openai_definitions`]
//!   / [`anthropic_definitions`](Toolbox::anthropic_definitions),
//!   `*-value` with the `serde_json::Value` forms
//!   ([`Toolbox::openai_tools`]).
//! - `--bench cold --starts K --era legacy|auto|cached|modern [--sandbox on]`: K times
//!   spawn + connect, each connection kept (the process exits holding
//!   them: shutting down is not part of a cold start). `legacy` pins the legacy era (no probe),
//!   `auto` probes `server/discover` and falls back, `cached` is `auto`
//!   with an [`EraCache`] warmed by one connection before the K, `modern`
//!   pins 2026-07-28 (give the server `--modern`). `--sandbox on` confines
//!   each server (an empty `Sandbox`: no writes, no network), this program
//!   being its own launcher. Prints the wall time per start.
//! - `--bench host --servers N --tools T --startup-ms MS`: one
//!   `mcp_host::Host` of N stdio `catalog-server`s (T tools each; server
//!   `i` takes `MS * (i + 1) / N` to start). Prints the time from `start()`
//!   to all ready, the slowest server's own readiness (its `--ready-file`),
//!   the difference, and private memory per server after `--idle-ms` idle,
//!   beside the size of each server's catalog as JSON text.
//!
//! Every bench prints one JSON line; `list` and `convert` exit with the
//! catalog held (nothing dropped: a memory profile at exit sees it).

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use examples::scale::{ms, snapshot};
use mcp_client::{Client, EraCache, VersionChoice};
use mcp_proto::Era;
use mcp_proto::schema::Tool;
use mcp_tools::{Server, Toolbox};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};

struct Args {
    bench: String,
    server_cmd: String,
    keep: String,
    turns: usize,
    shape: String,
    starts: usize,
    era: String,
    servers: usize,
    tools: usize,
    startup_ms: u64,
    idle: Duration,
    /// Each server confined by an (empty) sandbox, this program its launcher.
    sandbox: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        bench: "list".into(),
        server_cmd: String::new(),
        keep: "vec".into(),
        turns: 1,
        shape: "openai".into(),
        starts: 1,
        era: "legacy".into(),
        servers: 20,
        tools: 100,
        startup_ms: 200,
        idle: Duration::from_millis(2000),
        sandbox: false,
    };
    examples::flags::each_flag(std::env::args().skip(1), |flag, v| {
        match flag {
            "--bench" => a.bench = v.text(),
            "--server-cmd" => a.server_cmd = v.text(),
            "--keep" => a.keep = v.text(),
            "--turns" => a.turns = v.number()?,
            "--shape" => a.shape = v.text(),
            "--starts" => a.starts = v.number()?,
            "--era" => a.era = v.text(),
            "--servers" => a.servers = v.number()?,
            "--tools" => a.tools = v.number()?,
            "--startup-ms" => a.startup_ms = v.number()?,
            "--idle-ms" => a.idle = Duration::from_millis(v.number()?),
            "--sandbox" => {
                a.sandbox = match v.as_str() {
                    "on" => true,
                    "off" => false,
                    other => return Err(format!("--sandbox: {other:?} is not on or off")),
                }
            }
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    if a.server_cmd.is_empty() {
        return Err("--server-cmd is required".into());
    }
    Ok(a)
}

fn command(line: &str) -> Result<ServerCommand, String> {
    let mut words = line.split_whitespace();
    let program = words.next().ok_or("empty --server-cmd")?;
    Ok(ServerCommand::new(program)
        .args(words)
        .stderr(Stderr::inherit()))
}

fn builder(era: &str) -> Result<mcp_client::ClientBuilder, String> {
    let choice = match era {
        "legacy" => VersionChoice::Era(Era::Legacy),
        "auto" | "cached" => VersionChoice::Auto,
        "modern" => VersionChoice::Era(Era::Modern),
        other => {
            return Err(format!(
                "--era: {other:?} is not legacy, auto, cached or modern"
            ));
        }
    };
    Ok(Client::builder("catalog-bench", env!("CARGO_PKG_VERSION")).protocol(choice))
}

async fn connect(line: &str, b: mcp_client::ClientBuilder) -> Result<Client, String> {
    let transport = StdioTransport::spawn(command(line)?).map_err(|e| format!("spawn: {e}"))?;
    b.connect(transport)
        .await
        .map_err(|e| format!("connect: {e}"))
}

async fn toolbox(client: Client) -> Result<Toolbox, String> {
    Toolbox::builder()
        .server(Server::new("catalog", client))
        .listen(false)
        .build()
        .await
        .map_err(|e| format!("toolbox: {e}"))
}

async fn list(a: &Args) -> Result<(), String> {
    let client = connect(&a.server_cmd, builder("legacy")?).await?;
    let n = match a.keep.as_str() {
        "vec" => {
            let tools: Vec<Tool> = client
                .list_all::<Tool>()
                .await
                .map_err(|e| format!("tools/list: {e}"))?;
            let n = tools.len();
            std::mem::forget(tools);
            n
        }
        "toolbox" => {
            let tb = toolbox(client.clone()).await?;
            let n = tb.snapshot().len();
            std::mem::forget(tb);
            n
        }
        other => return Err(format!("--keep: {other:?} is not vec or toolbox")),
    };
    println!(
        r#"{{"client":"ours","bench":"list","keep":"{}","tools":{n}}}"#,
        a.keep
    );
    // Exit with the catalog (and the connection) held.
    std::process::exit(0);
}

async fn convert(a: &Args) -> Result<(), String> {
    let client = connect(&a.server_cmd, builder("legacy")?).await?;
    let tb = toolbox(client.clone()).await?;
    let mut out = Vec::new();
    for _ in 0..a.turns {
        out.clear();
        match a.shape.as_str() {
            "openai" => serde_json::to_writer(&mut out, &tb.openai_definitions().await),
            "anthropic" => serde_json::to_writer(&mut out, &tb.anthropic_definitions().await),
            "openai-value" => serde_json::to_writer(&mut out, &tb.openai_tools().await),
            "anthropic-value" => serde_json::to_writer(&mut out, &tb.anthropic_tools().await),
            other => return Err(format!("--shape: {other:?} is not openai or anthropic")),
        }
        .map_err(|e| e.to_string())?;
        std::hint::black_box(out.len());
    }
    println!(
        r#"{{"client":"ours","bench":"convert","shape":"{}","tools":{},"turns":{},"bytes":{}}}"#,
        a.shape,
        tb.snapshot().len(),
        a.turns,
        out.len()
    );
    std::mem::forget(tb);
    std::process::exit(0);
}

/// `command(line)`, confined by a sandbox allowing nothing (no writes but
/// its temporary folder, no network) when `sandbox`.
fn maybe_sandboxed(line: &str, sandbox: bool) -> Result<ServerCommand, String> {
    let cmd = command(line)?;
    Ok(if sandbox {
        cmd.sandbox(mcp_transport_stdio::sandbox::Sandbox::new())
    } else {
        cmd
    })
}

async fn cold(a: &Args) -> Result<(), String> {
    let eras = EraCache::new();
    let b = |eras: &EraCache| -> Result<mcp_client::ClientBuilder, String> {
        let b = builder(&a.era)?;
        Ok(if a.era == "cached" {
            b.era_cache(eras.clone(), a.server_cmd.clone())
        } else {
            b
        })
    };
    if a.era == "cached" {
        // Warms the cache: the server's era is known before the K starts.
        connect(&a.server_cmd, b(&eras)?).await?.close().await;
    }
    let mut held = Vec::with_capacity(a.starts);
    let t0 = Instant::now();
    for _ in 0..a.starts {
        let transport = StdioTransport::spawn(maybe_sandboxed(&a.server_cmd, a.sandbox)?)
            .map_err(|e| format!("spawn: {}", mcp_proto::error::chain(&e)))?;
        let client = b(&eras)?
            .connect(transport)
            .await
            .map_err(|e| format!("connect: {}", mcp_proto::error::chain(&e)))?;
        held.push(client);
    }
    #[allow(clippy::cast_precision_loss)]
    let ms_per_start = ms(t0.elapsed()) / a.starts.max(1) as f64;
    println!(
        r#"{{"client":"ours","bench":"cold","era":"{}","starts":{},"sandbox":{},"ms_per_start":{ms_per_start:.3}}}"#,
        a.era, a.starts, a.sandbox
    );
    // Exit with every connection held: what is counted is spawn +
    // handshake, not shutting down (each server exits at EOF on its stdin).
    std::process::exit(0);
}

fn unix_us() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0)
}

async fn host(a: &Args) -> Result<(), String> {
    use mcp_host::{Host, Launcher, ServerSpec};
    let dir = std::env::temp_dir().join(format!("catalog-bench-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let spec = |i: usize, startup_ms: u64| -> Result<ServerSpec, String> {
        let ready = dir.join(format!("ready-{i}"));
        let line = format!(
            "{} --tools {} --startup-ms {startup_ms} --ready-file {}",
            a.server_cmd,
            a.tools,
            ready.display()
        );
        let era = a.era.clone();
        let _ = builder(&era)?;
        Ok(ServerSpec::new(
            format!("s{i}"),
            Launcher::new(move || {
                let (line, era) = (line.clone(), era.clone());
                async move {
                    let transport =
                        StdioTransport::spawn(command(&line).map_err(std::io::Error::other)?)?;
                    let b = builder(&era).map_err(std::io::Error::other)?;
                    Ok(b.connect(transport).await?)
                }
            }),
        )
        .prefix(format!("s{i}_")))
    };
    // Warm-up: one host of one server, started and closed, so that what
    // runs once per process is not counted per server.
    let warm = Host::builder()
        .server(spec(usize::MAX, 0)?)
        .start()
        .await
        .map_err(|e| e.to_string())?;
    warm.close().await;
    drop(warm);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = snapshot();
    let n = a.servers.max(1);
    let mut b = Host::builder();
    for i in 0..n {
        b = b.server(spec(i, a.startup_ms * (i as u64 + 1) / n as u64)?);
    }
    let (t0, i0) = (unix_us(), Instant::now());
    let host = b.start().await.map_err(|e| e.to_string())?;
    let all_ready = i0.elapsed();
    let t1 = unix_us();
    let ready = host
        .status()
        .iter()
        .filter(|r| matches!(r.status, mcp_host::ServerStatus::Ready { .. }))
        .count();
    if ready != n {
        return Err(format!("{ready} of {n} servers ready: {:?}", host.status()));
    }
    let mut slowest = 0u128;
    for i in 0..n {
        let path = dir.join(format!("ready-{i}"));
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let us: u128 = text
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| format!("{}: no time", path.display()))?;
        slowest = slowest.max(us);
    }
    tokio::time::sleep(a.idle).await;
    // Measured before anything else is allocated: what this bench reads
    // to report the catalog's size (the tools, their JSON text) is not the
    // host's memory.
    let idle = snapshot();
    let tools = host.tools();
    let catalog_bytes: usize = tools
        .iter()
        .map(|t| serde_json::to_string(t.definition()).map_or(0, |s| s.len()))
        .sum();
    #[allow(clippy::cast_precision_loss)]
    let per_server = (idle.private_kib as f64 - before.private_kib as f64) / n as f64;
    #[allow(clippy::cast_precision_loss)]
    let anon_per_server = (idle.anon_kib as f64 - before.anon_kib as f64) / n as f64;
    #[allow(clippy::cast_precision_loss)]
    let catalog_kib = catalog_bytes as f64 / 1024.0 / n as f64;
    #[allow(clippy::cast_precision_loss)]
    let beyond_ms = (t1.saturating_sub(slowest)) as f64 / 1000.0;
    #[allow(clippy::cast_precision_loss)]
    let slowest_ms = (slowest.saturating_sub(t0)) as f64 / 1000.0;
    println!(
        r#"{{"client":"ours","bench":"host","servers":{n},"tools":{},"start_to_all_ready_ms":{:.1},"slowest_own_ready_ms":{slowest_ms:.1},"beyond_slowest_ms":{beyond_ms:.1},"private_kib_per_server":{per_server:.1},"anon_kib_per_server":{anon_per_server:.1},"catalog_text_kib_per_server":{catalog_kib:.1},"beyond_catalog_kib_per_server":{:.1}}}"#,
        tools.len(),
        ms(all_ready),
        per_server - catalog_kib
    );
    let _ = std::fs::remove_dir_all(&dir);
    // Exit with the host and its servers held (a memory profile at exit
    // sees the idle host; each server exits at EOF on its stdin).
    std::mem::forget(host);
    std::process::exit(0);
}

async fn run(a: Args) -> Result<(), String> {
    match a.bench.as_str() {
        "list" => list(&a).await,
        "convert" => convert(&a).await,
        "cold" => cold(&a).await,
        "host" => host(&a).await,
        other => Err(format!(
            "--bench: {other:?} is not list, convert, cold or host"
        )),
    }
}

fn main() -> ExitCode {
    // This program is its own sandbox launcher (`--sandbox on`).
    mcp_transport_stdio::sandbox::hook();
    examples::scale::main("catalog-bench", parse_args, run)
}
