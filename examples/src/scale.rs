//! What the scale benchmarks measure, shared by `scale-bench` and rmcp's
//! side of it (`bench/rmcp-scale`, which includes this file by path, so
//! both read memory and start the server the same way): the process's own
//! memory, fds and threads from `/proc/self`, and the HTTP `refserver`.
//! Depends only on std and tokio.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

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

/// Starts `server --http 0` (the shared benchmark's `refserver`, with
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
