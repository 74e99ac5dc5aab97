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
//!     --server target/release/bench-server --stdio 100 --http 1000
//! ```
//!
//! The server is the per-call benchmark's `bench-server` (`--stdio` per stdio
//! connection, one `--http 0` for all the HTTP clients), whose memory is its
//! own process's and not counted. `--era modern` starts it with `--modern`
//! and asks the client for 2026-07-28; `--era legacy` (the default) pins the
//! legacy era, as a host that knows its server does (no `server/discover`
//! probe: `initialize` and `initialized` only); `--era auto` probes first.
//!
//! Memory is read twice while the clients idle: after `--idle-ms` (default
//! 2000), while the HTTP transports still keep their connections alive, and
//! again past the HTTP idle timeout (`--idle-timeout-ms`, default the
//! transport's [`DEFAULT_IDLE_TIMEOUT`](mcp_transport_http::DEFAULT_IDLE_TIMEOUT),
//! `none` to keep connections), once the transports have closed their idle
//! connections; then one call on each again (reconnecting). `--max-at-once N`
//! (default 128, `0`: no limit) lets at most N connects, calls or closes
//! run at once, the host's choice (each client is its own transport, so no
//! one transport could limit the others).
//!
//! `--shared-pool yes` (the default) makes every HTTP client's transport a
//! [`new_session`](mcp_transport_http::HttpTransport::new_session) of one
//! transport: one connection pool for all, as a host holding many sessions
//! with one server should; `--shared-pool no` builds a transport (and a
//! pool) per client, as earlier rounds measured. Before the clients, the same number of bare TCP
//! connects is timed, the floor under them; the client's and the server's
//! CPU time for connecting all is printed too (the wall time on a loaded
//! machine is mostly waiting for a core). `--hold-ms MS` reads memory once more that long after
//! the after-close reading (time to attach a debugger and ask glibc to
//! return free heap, `malloc_trim`, to tell live memory from retained free
//! memory).
//!
//! Before the "before" reading each phase connects, calls and closes
//! `--warmup N` connections (default 1), so that what the first connection
//! costs once per process (the code it runs paged in, counted as private
//! because no other process maps this binary; the runtime's first
//! registrations) is not divided among the measured ones. `--warmup 0`
//! measures as earlier rounds did. The idle line also gives the anonymous
//! part of the private memory (heap, stacks), the rest being file-backed
//! pages (code, read-only data).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use examples::scale::{self, ms, snapshot, start_http_server};
use mcp_client::{Client, VersionChoice};
use mcp_proto::Era;
use mcp_proto::error::chain;
use mcp_proto::schema::ContentBlock;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Which protocol version the clients ask for.
#[derive(Clone, Copy, PartialEq)]
enum EraArg {
    /// Probe with `server/discover`, fall back to `initialize`.
    Auto,
    /// The legacy era pinned: `initialize` at once.
    Legacy,
    /// 2026-07-28 (the server's `--modern`).
    Modern,
}

struct Args {
    common: scale::Common,
    era: EraArg,
    /// The HTTP transports' idle timeout (`None`: connections kept).
    idle_timeout: Option<Duration>,
    /// After the after-close reading, wait this long and read again (time
    /// to inspect the process, e.g. `gdb -p PID -batch -ex 'call
    /// (int)malloc_trim(0)'` to see how much of the memory still held is
    /// free heap glibc kept).
    hold: Duration,
    /// Connections made, called and closed before the "before" reading.
    warmup: usize,
    /// All HTTP clients share one connection pool.
    shared_pool: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        common: scale::Common::default(),
        era: EraArg::Legacy,
        idle_timeout: Some(mcp_transport_http::DEFAULT_IDLE_TIMEOUT),
        hold: Duration::ZERO,
        warmup: 1,
        shared_pool: true,
    };
    examples::flags::each_flag(std::env::args().skip(1), |flag, v| {
        if a.common.set(flag, &v)? {
            return Ok(());
        }
        match flag {
            "--hold-ms" => a.hold = Duration::from_millis(v.number()?),
            "--era" => {
                a.era = match v.text().as_str() {
                    "auto" => EraArg::Auto,
                    "legacy" => EraArg::Legacy,
                    "modern" => EraArg::Modern,
                    other => return Err(format!("--era: {other:?} is not auto, legacy or modern")),
                }
            }
            "--idle-timeout-ms" => {
                a.idle_timeout = match v.number() {
                    Ok(ms) => Some(Duration::from_millis(ms)),
                    Err(_) if v.text() == "none" => None,
                    Err(e) => return Err(e),
                }
            }
            "--warmup" => a.warmup = v.number()?,
            "--shared-pool" => {
                a.shared_pool = match v.text().as_str() {
                    "yes" => true,
                    "no" => false,
                    other => return Err(format!("--shared-pool: {other:?} is not yes or no")),
                }
            }
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    Ok(a)
}

/// CPU time (user + system) of this process, or of `pid`, from
/// `/proc/*/stat` (10 ms steps: clock ticks of 100 Hz).
fn cpu_ms(pid: Option<u32>) -> f64 {
    let path = pid.map_or_else(
        || "/proc/self/stat".to_owned(),
        |p| format!("/proc/{p}/stat"),
    );
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // After the command's `(name)`: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse::<u64>().ok())
        .sum();
    #[allow(clippy::cast_precision_loss)]
    let ms = ticks as f64 * 10.0;
    ms
}

/// The kernel's count of connections dropped because a listen queue was
/// full (`TcpExt: ListenOverflows`, all of the machine's sockets): each
/// dropped SYN is retried after the 1 s initial retransmission timeout.
fn listen_overflows() -> i64 {
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap_or_default();
    let mut lines = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "ListenOverflows")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

fn builder(era: EraArg) -> mcp_client::ClientBuilder {
    let version = match era {
        EraArg::Auto => VersionChoice::Auto,
        EraArg::Legacy => VersionChoice::Era(Era::Legacy),
        EraArg::Modern => VersionChoice::Era(Era::Modern),
    };
    Client::builder("scale-bench", env!("CARGO_PKG_VERSION")).protocol(version)
}

async fn connect_stdio(server: String, era: EraArg) -> Result<Client, String> {
    let mut cmd = mcp_transport_stdio::ServerCommand::new(server).arg("--stdio");
    if era == EraArg::Modern {
        cmd = cmd.arg("--modern");
    }
    let transport = mcp_transport_stdio::StdioTransport::spawn(
        cmd.stderr(mcp_transport_stdio::Stderr::inherit()),
    )
    .map_err(|e| format!("spawn: {}", chain(&e)))?;
    builder(era)
        .connect(transport)
        .await
        .map_err(|e| format!("stdio connect: {}", chain(&e)))
}

fn http_transport(
    url: &str,
    idle_timeout: Option<Duration>,
) -> Result<mcp_transport_http::HttpTransport, String> {
    mcp_transport_http::HttpTransport::builder(url)
        .idle_timeout(idle_timeout)
        .build()
        .map_err(|e| format!("http transport: {}", chain(&e)))
}

async fn connect_http(
    transport: mcp_transport_http::HttpTransport,
    era: EraArg,
) -> Result<Client, String> {
    builder(era)
        .resend_on_session_expiry(true)
        .connect(transport)
        .await
        .map_err(|e| format!("http connect: {}", chain(&e)))
}

/// Connects `n` clients at once (at most `max_at_once` at a time, 0: no
/// limit); returns them (in no particular order), the time it took, and
/// the slowest and median single connect.
async fn connect_all<F, Fut>(
    n: usize,
    max_at_once: usize,
    connect: &F,
) -> Result<(Vec<Client>, Duration, Duration, Duration), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Client, String>> + Send + 'static,
{
    let permits = permits(max_at_once, n);
    let start = Instant::now();
    let mut set = JoinSet::new();
    for _ in 0..n {
        let (connect, permits) = (connect(), permits.clone());
        set.spawn(async move {
            let _permit = permits.acquire_owned().await.map_err(|e| e.to_string())?;
            let t = Instant::now();
            connect.await.map(|c| (c, t.elapsed()))
        });
    }
    let mut clients = Vec::with_capacity(n);
    let mut each = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        let (c, t) = r.map_err(|e| format!("connect task: {e}"))??;
        clients.push(c);
        each.push(t);
    }
    let all = start.elapsed();
    each.sort();
    let median = each.get(each.len() / 2).copied().unwrap_or_default();
    let max = each.last().copied().unwrap_or_default();
    Ok((clients, all, median, max))
}

/// A semaphore of `limit` permits (0: `n`, enough for all at once).
fn permits(limit: usize, n: usize) -> std::sync::Arc<Semaphore> {
    std::sync::Arc::new(Semaphore::new(if limit == 0 { n.max(1) } else { limit }))
}

/// `n` bare TCP connects to `addr` at once, at most `max_at_once` at a
/// time (held until all are open), as the floor under the HTTP connects.
async fn tcp_connect_all(addr: &str, n: usize, max_at_once: usize) -> Result<Duration, String> {
    let permits = permits(max_at_once, n);
    let start = Instant::now();
    let mut set = JoinSet::new();
    for _ in 0..n {
        let (addr, permits) = (addr.to_owned(), permits.clone());
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            tokio::net::TcpStream::connect(addr).await
        });
    }
    let mut held = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        held.push(
            r.map_err(|e| e.to_string())?
                .map_err(|e| format!("tcp: {e}"))?,
        );
    }
    Ok(start.elapsed())
}

/// One `echo` call on every client at once, at most `max_at_once` at a
/// time (0: no limit; after the idle timeout each call reconnects).
async fn call_all(clients: &[Client], max_at_once: usize) -> Result<Duration, String> {
    let permits = permits(max_at_once, clients.len());
    let start = Instant::now();
    let mut set = JoinSet::new();
    for (i, c) in clients.iter().enumerate() {
        let (c, permits) = (c.clone(), permits.clone());
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let text = format!("call {i}");
            let r = c
                .call_tool("echo", serde_json::json!({ "text": text }))
                .await
                .map_err(|e| format!("call {i}: {}", chain(&e)))?;
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

async fn close_all(clients: Vec<Client>, max_at_once: usize) -> Duration {
    let permits = permits(max_at_once, clients.len());
    let start = Instant::now();
    let mut set = JoinSet::new();
    for c in clients {
        let permits = permits.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            c.close().await
        });
    }
    while set.join_next().await.is_some() {}
    start.elapsed()
}

/// When and how one phase measures.
#[derive(Clone, Copy)]
struct Plan {
    /// First reading after this long idle.
    idle: Duration,
    /// A second reading once idle this long in all (past the transports'
    /// idle timeout), then one call on each again.
    idle_past_timeout: Option<Duration>,
    hold: Duration,
    max_at_once: usize,
    /// Connections made, called and closed before the "before" reading.
    warmup: usize,
    /// The server whose CPU time the connects are charged with (HTTP).
    server_pid: Option<u32>,
}

/// Connects, calls, idles and measures one kind of connection; prints its rows.
async fn phase<F, Fut>(label: &str, n: usize, plan: Plan, connect: F) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Client, String>> + Send + 'static,
{
    if n == 0 {
        return Ok(());
    }
    if plan.warmup > 0 {
        let (clients, ..) = connect_all(plan.warmup, plan.max_at_once, &connect).await?;
        call_all(&clients, 0).await?;
        close_all(clients, 0).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = snapshot();
    let cpu = (cpu_ms(None), plan.server_pid.map(|p| cpu_ms(Some(p))));
    let overflows = listen_overflows();
    let (clients, connect_time, median, slowest) =
        connect_all(n, plan.max_at_once, &connect).await?;
    let client_cpu = cpu_ms(None) - cpu.0;
    let connect_overflows = listen_overflows() - overflows;
    let server_cpu = plan
        .server_pid
        .zip(cpu.1)
        .map(|(p, before)| cpu_ms(Some(p)) - before);
    let call_time = call_all(&clients, plan.max_at_once).await?;
    tokio::time::sleep(plan.idle).await;
    let idle_snap = snapshot();
    let past = match plan.idle_past_timeout {
        Some(total) if total > plan.idle => {
            tokio::time::sleep(total - plan.idle).await;
            let snap = snapshot();
            let overflows = listen_overflows();
            let again = call_all(&clients, plan.max_at_once).await?;
            Some((total, snap, again, listen_overflows() - overflows))
        }
        _ => None,
    };
    let closing = close_all(clients, plan.max_at_once).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = snapshot();
    let limit = match plan.max_at_once {
        0 => String::new(),
        k => format!(", at most {k} at once"),
    };
    println!("{label}: {} warm-up connections before", plan.warmup);
    println!(
        "{label}: {n} connections: connect all {:.1} ms (one connect: median {:.1} ms, slowest {:.1} ms{limit}), \
         one call on each {:.1} ms, close all {:.1} ms (calls and closes{limit})",
        ms(connect_time),
        ms(median),
        ms(slowest),
        ms(call_time),
        ms(closing)
    );
    println!(
        "{label}: CPU time of connecting all: client {client_cpu:.0} ms{}; \
         listen overflows while connecting {connect_overflows}",
        server_cpu.map_or(String::new(), |c| format!(", server {c:.0} ms"))
    );
    let kept = if past.is_some() {
        "connections kept alive"
    } else {
        "idle"
    };
    scale::per_connection(label, plan.idle, kept, idle_snap, before, n);
    if let Some((total, snap, again, overflows)) = past {
        scale::per_connection(label, total, "past the idle timeout", snap, before, n);
        println!(
            "{label}: one call on each after the idle timeout (reconnecting{limit}) {:.1} ms, \
             listen overflows {overflows}",
            ms(again)
        );
    }
    println!(
        "{label}: after closing all: private memory {} KiB ({:+} KiB against before), {} fds, {} threads",
        after.private_kib,
        i128::from(after.private_kib) - i128::from(before.private_kib),
        after.fds,
        after.threads
    );
    if !plan.hold.is_zero() {
        println!(
            "{label}: holding {} ms (pid {})",
            plan.hold.as_millis(),
            std::process::id()
        );
        tokio::time::sleep(plan.hold).await;
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
    scale::print_start();
    let plan = Plan {
        idle: a.common.idle,
        idle_past_timeout: None,
        hold: a.hold,
        max_at_once: a.common.max_at_once,
        warmup: a.warmup,
        server_pid: None,
    };
    let (server, era) = (a.common.server.clone(), a.era);
    phase("stdio", a.common.stdio, plan, move || {
        connect_stdio(server.clone(), era)
    })
    .await?;
    if a.common.http > 0 {
        let (mut child, url) = start_http_server(&a.common.server, a.era == EraArg::Modern).await?;
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let overflows = listen_overflows();
        let tcp = tcp_connect_all(&addr, a.common.http, a.common.max_at_once).await;
        let overflows = listen_overflows() - overflows;
        match &tcp {
            Ok(t) => println!(
                "http: {} bare TCP connects, at most {} at once (0: no limit): {:.1} ms, listen overflows {overflows}",
                a.common.http,
                a.common.max_at_once,
                ms(*t)
            ),
            Err(e) => println!("http: bare TCP connects failed: {e}"),
        }
        let idle_timeout = a.idle_timeout;
        // With --shared-pool every client's transport is a new session of
        // this one (`HttpTransport::new_session`): one pool for all.
        let shared = if a.shared_pool {
            Some(http_transport(&url, idle_timeout)?)
        } else {
            None
        };
        println!(
            "http: {}",
            if a.shared_pool {
                "one connection pool shared by all clients (--shared-pool)"
            } else {
                "a connection pool per client"
            }
        );
        println!(
            "http: idle timeout {}",
            idle_timeout.map_or("none (connections kept)".into(), |t| format!(
                "{} ms",
                t.as_millis()
            ))
        );
        let plan = Plan {
            // Past the timeout, with a second for the timer and the
            // sockets to close.
            idle_past_timeout: idle_timeout.map(|t| t + Duration::from_secs(1)),
            server_pid: child.id(),
            ..plan
        };
        let result = phase("http", a.common.http, plan, move || {
            let transport = match &shared {
                Some(t) => Ok(t.new_session()),
                None => http_transport(&url, idle_timeout),
            };
            async move { connect_http(transport?, era).await }
        })
        .await;
        let _ = child.kill().await;
        result?;
    }
    Ok(())
}

fn main() -> ExitCode {
    scale::main("scale-bench", parse_args, run)
}
