//! What the scale benchmarks measure, shared by `scale-bench` and rmcp's
//! side of it (`bench/rmcp-scale`, which includes this file by path, so
//! both read memory and start the server the same way): the process's own
//! memory, fds and threads from `/proc/self`, and the HTTP server (`bench-server`).
//! Depends only on std, tokio and `flags.rs` (which rmcp-scale includes
//! by path too).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

/// Connects (and calls, and closes) in flight at once, by default: the host's choice, not the
/// library's (each client is its own transport). The server listens with
/// tokio's backlog of 128 (`ss -ltn`); with no limit, 1,000 SYNs at once
/// overflow it whenever the single-threaded server is not scheduled soon
/// enough (`TcpExt: ListenOverflows`), and each dropped SYN is retried
/// after Linux's 1 s initial retransmission timeout: a 1.1 s connect-all
/// instead of ~0.5 s. A client connect holds its permit until the server
/// has answered `initialize`, so it has been accepted: at most 128
/// connections wait in the queue. (The bare TCP connects release theirs
/// when the kernel completes the handshake, before the server accepts, so
/// they can still overflow.) The calls and closes are limited the same way:
/// on a shared pool, which keeps at most
/// `mcp_transport_http::DEFAULT_MAX_IDLE_CONNECTIONS` idle,
/// 1,000 calls or `DELETE`s at once open ~970 connections at once and
/// overflow it too.
///
/// 128 is the most the queue holds, not the fastest: on one client thread,
/// 8–32 at once connected 1,000 sessions 30–50 % sooner than 128, whose
/// connects in flight keep ~200 connections and several MiB in use. The
/// default stays 128 so that results stay comparable with those recorded
/// in BENCHMARKS.md; `--max-at-once` shows the rest.
pub const DEFAULT_MAX_AT_ONCE: usize = 128;

/// The flags both scale benchmarks take, with their defaults: `--server`
/// (the server binary, `bench-server`), `--stdio N`, `--http N`, `--idle-ms MS`,
/// `--max-at-once N` (connects in flight at once; 0: no limit).
#[derive(Clone, Debug)]
pub struct Common {
    /// The server binary (`bench-server`).
    pub server: String,
    /// stdio connections (one server process each).
    pub stdio: usize,
    /// HTTP connections (one shared server).
    pub http: usize,
    /// How long the connections stay idle before they are measured.
    pub idle: Duration,
    /// Most connects in flight at once (0: no limit).
    pub max_at_once: usize,
}

impl Default for Common {
    fn default() -> Self {
        Common {
            server: "target/release/bench-server".into(),
            stdio: 100,
            http: 1000,
            idle: Duration::from_millis(2000),
            max_at_once: DEFAULT_MAX_AT_ONCE,
        }
    }
}

impl Common {
    /// Takes `flag` if it is one of these; `Ok(false)` if it is not.
    pub fn set(&mut self, flag: &str, v: &crate::flags::Value) -> Result<bool, String> {
        match flag {
            "--server" => self.server = v.as_str().to_owned(),
            "--stdio" => self.stdio = v.number()?,
            "--http" => self.http = v.number()?,
            "--idle-ms" => self.idle = Duration::from_millis(v.number()?),
            "--max-at-once" => self.max_at_once = v.number()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// `d` in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Prints one row of memory, fds and threads per connection: `now`
/// against `before`, over `n` connections idle for `idle` (`what`: which
/// idle state).
pub fn per_connection(
    label: &str,
    idle: Duration,
    what: &str,
    now: Snapshot,
    before: Snapshot,
    n: usize,
) {
    #[allow(clippy::cast_precision_loss)]
    let per = |x: u64, y: u64| (x as f64 - y as f64) / n as f64;
    println!(
        "{label}: idle {} ms ({what}): private memory {:.1} KiB (anonymous {:.1} KiB), fds {:.2}, \
         threads {:.3} per connection (process: {} KiB, {} fds, {} threads; before: {} KiB, {} fds, \
         {} threads)",
        idle.as_millis(),
        per(now.private_kib, before.private_kib),
        per(now.anon_kib, before.anon_kib),
        per(now.fds, before.fds),
        per(now.threads, before.threads),
        now.private_kib,
        now.fds,
        now.threads,
        before.private_kib,
        before.fds,
        before.threads
    );
}

/// Prints the process's figures before any connection (the `start:` row).
pub fn print_start() {
    let start = snapshot();
    println!(
        "start: private memory {} KiB, {} fds, {} threads",
        start.private_kib, start.fds, start.threads
    );
}

/// The process's own figures at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    /// Private memory (`smaps_rollup`: `Private_Clean + Private_Dirty`), KiB.
    pub private_kib: u64,
    /// Anonymous memory (heap, stacks): the private memory that is not
    /// file-backed pages of the binary and its libraries.
    pub anon_kib: u64,
    /// Open file descriptors.
    pub fds: u64,
    /// Threads.
    pub threads: u64,
}

/// Reads [`Snapshot`] from `/proc/self`.
pub fn snapshot() -> Snapshot {
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

/// Starts `server --http 0` (the benchmark's `bench-server`, with
/// `--modern` for the 2026-07-28 era) and returns it with its URL. Its
/// stderr is drained so that it never blocks on a full pipe.
///
/// # Errors
///
/// When it cannot be started or prints no URL within 10 s.
pub async fn start_http_server(
    server: &str,
    modern: bool,
) -> Result<(tokio::process::Child, String), String> {
    let mut cmd = tokio::process::Command::new(server);
    cmd.args(["--http", "0"]);
    if modern {
        cmd.arg("--modern");
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("start {server} --http 0: {e}"))?;
    let stderr = child.stderr.take().ok_or("the server: no stderr")?;
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
    .ok_or("the server printed no URL")?;
    // Keep draining its stderr so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

/// The benchmark's `main`: parses the arguments, runs `run` on a
/// current-thread runtime (one thread for every connection, in both scale
/// benchmarks), and maps the outcome to an exit status (2: a usage error).
pub fn main<A, Fut>(
    name: &str,
    parse: impl FnOnce() -> Result<A, String>,
    run: impl FnOnce(A) -> Fut,
) -> std::process::ExitCode
where
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{name}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
