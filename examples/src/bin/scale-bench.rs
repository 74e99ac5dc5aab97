//! `scale-bench`: what idle connections cost. One process holds `--stdio N`
//! stdio servers and `--http M` HTTP clients of one loopback server, and
//! reports, from its own `/proc/self`: private memory (`smaps_rollup`:
//! `Private_Clean + Private_Dirty`), open fds and threads per connection,
//! the time to connect all of them at once, one concurrent `echo` call on
//! each, and the same figures after closing them all.
//!
//! Run it with `cargo xtask scale` (which builds it in release), or:
//!
//! ```text
//! cargo run --release -p examples --bin scale-bench -- \
//!     --server /tmp/mcp-bench/target/release/refserver --stdio 100 --http 1000
//! ```
//!
//! The server is the shared benchmark's `refserver` (`--stdio` per stdio
//! connection, one `--http 0` for all the HTTP clients), whose memory is its
//! own process's and not counted. `--era modern` starts it with `--modern`
//! and asks the client for 2026-07-28. Memory is read after `--idle-ms`
//! (default 2000) without traffic, so buffers that are released when idle
//! are not counted. `--hold-ms MS` reads it once more that long after the
//! after-close reading (time to attach a debugger and ask glibc to return
//! free heap, `malloc_trim`, to tell live memory from retained free memory).
//!
//! Before the "before" reading each phase connects, calls and closes
//! `--warmup N` connections (default 1), so that what the first connection
//! costs once per process (the code it runs paged in, counted as private
//! because no other process maps this binary; the runtime's first
//! registrations) is not divided among the measured ones. `--warmup 0`
//! measures as earlier rounds did. The idle line also gives the anonymous
//! part of the private memory (heap, stacks), the rest being file-backed
//! pages (code, read-only data).

use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use mcp_client::{Client, VersionChoice};
use mcp_proto::Era;
use mcp_proto::schema::ContentBlock;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::task::JoinSet;

struct Args {
    server: String,
    stdio: usize,
    http: usize,
    idle: Duration,
    modern: bool,
    /// After the after-close reading, wait this long and read again (time
    /// to inspect the process, e.g. `gdb -p PID -batch -ex 'call
    /// (int)malloc_trim(0)'` to see how much of the memory still held is
    /// free heap glibc kept).
    hold: Duration,
    /// Connections made, called and closed before the "before" reading.
    warmup: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        server: "/tmp/mcp-bench/target/release/refserver".into(),
        stdio: 100,
        http: 1000,
        idle: Duration::from_millis(2000),
        modern: false,
        hold: Duration::ZERO,
        warmup: 1,
    };
    examples::flags::each_flag(std::env::args().skip(1), |flag, v| {
        match flag {
            "--server" => a.server = v.text(),
            "--stdio" => a.stdio = v.number()?,
            "--http" => a.http = v.number()?,
            "--idle-ms" => a.idle = Duration::from_millis(v.number()?),
            "--hold-ms" => a.hold = Duration::from_millis(v.number()?),
            "--era" => a.modern = v.is_modern_era()?,
            "--warmup" => a.warmup = v.number()?,
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    Ok(a)
}

/// The process's own figures at one moment.
#[derive(Clone, Copy)]
struct Snapshot {
    private_kib: u64,
    /// Anonymous memory (heap, stacks): the private memory that is not
    /// file-backed pages of the binary and its libraries.
    anon_kib: u64,
    fds: u64,
    threads: u64,
}

fn snapshot() -> Snapshot {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |name: &str| -> u64 {
        rollup
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let threads = status
        .lines()
        .find(|l| l.starts_with("Threads:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    Snapshot {
        private_kib: field("Private_Clean:") + field("Private_Dirty:"),
        anon_kib: field("Anonymous:"),
        fds,
        threads,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn builder(modern: bool) -> mcp_client::ClientBuilder {
    let version = if modern {
        VersionChoice::Era(Era::Modern)
    } else {
        VersionChoice::Auto
    };
    Client::builder("scale-bench", env!("CARGO_PKG_VERSION")).protocol(version)
}

async fn connect_stdio(server: String, modern: bool) -> Result<Client, String> {
    let mut cmd = mcp_transport_stdio::ServerCommand::new(server).arg("--stdio");
    if modern {
        cmd = cmd.arg("--modern");
    }
    let transport = mcp_transport_stdio::StdioTransport::spawn(
        cmd.stderr(mcp_transport_stdio::Stderr::inherit()),
    )
    .map_err(|e| format!("spawn: {e}"))?;
    builder(modern)
        .connect(transport)
        .await
        .map_err(|e| format!("stdio connect: {e}"))
}

async fn connect_http(url: String, modern: bool) -> Result<Client, String> {
    let transport = mcp_transport_http::HttpTransport::builder(&url)
        .build()
        .map_err(|e| format!("http transport: {e}"))?;
    builder(modern)
        .resend_on_session_expiry(true)
        .connect(transport)
        .await
        .map_err(|e| format!("http connect: {e}"))
}

/// Connects `n` clients at once; returns them (in no particular order) and the time it took.
async fn connect_all<F, Fut>(n: usize, connect: &F) -> Result<(Vec<Client>, Duration), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Client, String>> + Send + 'static,
{
    let start = Instant::now();
    let mut set = JoinSet::new();
    for _ in 0..n {
        set.spawn(connect());
    }
    let mut clients = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        clients.push(r.map_err(|e| format!("connect task: {e}"))??);
    }
    Ok((clients, start.elapsed()))
}

/// One `echo` call on every client at once, each result verified.
async fn call_all(clients: &[Client]) -> Result<Duration, String> {
    let start = Instant::now();
    let mut set = JoinSet::new();
    for (i, c) in clients.iter().enumerate() {
        let c = c.clone();
        set.spawn(async move {
            let text = format!("call {i}");
            let r = c
                .call_tool("echo", serde_json::json!({ "text": text }))
                .await
                .map_err(|e| format!("call {i}: {e}"))?;
            match r.content.first() {
                Some(ContentBlock::Text(t)) if t.text == text && !r.is_error() => Ok(()),
                _ => Err(format!("call {i}: the echo does not match")),
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.map_err(|e| format!("call task: {e}"))??;
    }
    Ok(start.elapsed())
}

async fn close_all(clients: Vec<Client>) -> Duration {
    let start = Instant::now();
    let mut set = JoinSet::new();
    for c in clients {
        set.spawn(async move { c.close().await });
    }
    while set.join_next().await.is_some() {}
    start.elapsed()
}

/// Starts `refserver --http 0` and returns it with its URL.
async fn start_http_server(a: &Args) -> Result<(tokio::process::Child, String), String> {
    let mut cmd = tokio::process::Command::new(&a.server);
    cmd.args(["--http", "0"]);
    if a.modern {
        cmd.arg("--modern");
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("start {} --http 0: {e}", a.server))?;
    let stderr = child.stderr.take().ok_or("refserver: no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(i) = line.find("http://") {
                return Some(line[i..].split_whitespace().next().unwrap_or("").to_owned());
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .ok_or("refserver printed no URL")?;
    // Keep draining its stderr so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

/// Connects, calls, idles and measures one kind of connection; prints its rows.
async fn phase<F, Fut>(
    label: &str,
    (n, warmup): (usize, usize),
    (idle, hold): (Duration, Duration),
    connect: F,
) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Client, String>> + Send + 'static,
{
    if n == 0 {
        return Ok(());
    }
    if warmup > 0 {
        let (clients, _) = connect_all(warmup, &connect).await?;
        call_all(&clients).await?;
        close_all(clients).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = snapshot();
    let (clients, connect_time) = connect_all(n, &connect).await?;
    let call_time = call_all(&clients).await?;
    tokio::time::sleep(idle).await;
    let idle_snap = snapshot();
    let closing = close_all(clients).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = snapshot();
    #[allow(clippy::cast_precision_loss)]
    let per = |x: u64, y: u64| (x as f64 - y as f64) / n as f64;
    println!(
        "{label}: {n} connections: connect all {:.1} ms, one call on each {:.1} ms, close all {:.1} ms",
        ms(connect_time),
        ms(call_time),
        ms(closing)
    );
    println!(
        "{label}: idle {} ms: private memory {:.1} KiB (anonymous {:.1} KiB), fds {:.2}, threads {:.3} \
         per connection (process: {} KiB, {} fds, {} threads; before: {} KiB, {} fds, {} threads; \
         {warmup} warm-up connections before)",
        idle.as_millis(),
        per(idle_snap.private_kib, before.private_kib),
        per(idle_snap.anon_kib, before.anon_kib),
        per(idle_snap.fds, before.fds),
        per(idle_snap.threads, before.threads),
        idle_snap.private_kib,
        idle_snap.fds,
        idle_snap.threads,
        before.private_kib,
        before.fds,
        before.threads
    );
    println!(
        "{label}: after closing all: private memory {} KiB ({:+} KiB against before), {} fds, {} threads",
        after.private_kib,
        i128::from(after.private_kib) - i128::from(before.private_kib),
        after.fds,
        after.threads
    );
    if !hold.is_zero() {
        println!(
            "{label}: holding {} ms (pid {})",
            hold.as_millis(),
            std::process::id()
        );
        tokio::time::sleep(hold).await;
        let held = snapshot();
        println!(
            "{label}: after holding: private memory {} KiB ({:+} KiB against before)",
            held.private_kib,
            i128::from(held.private_kib) - i128::from(before.private_kib)
        );
    }
    Ok(())
}

async fn run(a: Args) -> Result<(), String> {
    let start = snapshot();
    println!(
        "start: private memory {} KiB, {} fds, {} threads",
        start.private_kib, start.fds, start.threads
    );
    let (server, modern) = (a.server.clone(), a.modern);
    phase("stdio", (a.stdio, a.warmup), (a.idle, a.hold), move || {
        connect_stdio(server.clone(), modern)
    })
    .await?;
    if a.http > 0 {
        let (mut child, url) = start_http_server(&a).await?;
        let result = phase("http", (a.http, a.warmup), (a.idle, a.hold), move || {
            connect_http(url.clone(), modern)
        })
        .await;
        let _ = child.kill().await;
        result?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("scale-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("scale-bench: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scale-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
