//! `cargo xtask bridge-bench [--calls N] [--starts N]`: `mcp bridge`
//! beside `mcp-remote` (npm, pinned in `peers/mcp-remote/`), the stdio
//! bridge hosts use today, on the same Streamable HTTP server, with the
//! same host.
//!
//! - **Server**: `examples`' `mcp-http --serve`, the demo server behind a
//!   small hyper endpoint (JSON answers, no session): cheap, so what a
//!   bridge adds is not lost in the server's own time.
//! - **Host**: `examples`' `bench-client` (the shared benchmark's client),
//!   over stdio with the bridge as its server command, and over HTTP
//!   straight to the server for the floor (no bridge).
//! - **Start-up**: `connect_ms` of `--starts` runs of 1 call each (spawn
//!   the bridge, `initialize` through it, `tools/list`), median.
//! - **Per-message overhead**: `--calls` sequential `tools/call echo`
//!   (64 B), p50 and p99 of the round trip; the overhead is the bridge's
//!   p50 minus the floor's.
//! - **Memory and CPU**: the bridge process's resident set, polled from
//!   `/proc` every 10 ms while the calls run: the peak (`VmHWM`) and the
//!   last reading (steady state); and its CPU time (user + system) at the
//!   last reading, per call (start-up included: a few ms over 20,000
//!   calls). CPU per call is what a loaded machine moves least.
//!
//! Builds `mcp`, `bench-client` and `mcp-http` in release; installs the
//! peers (`peers`) first. Prints a markdown table (BENCHMARKS.md has the
//! results). Linux only (`/proc`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::json::{self, Json};
use crate::{Result, cargo, peers, root, run};

/// One row's numbers.
#[derive(Debug, Default)]
struct Row {
    connect_ms: f64,
    p50_us: f64,
    p99_us: f64,
    calls_per_s: f64,
    peak_rss_kb: Option<u64>,
    last_rss_kb: Option<u64>,
    /// The bridge's CPU time (user + system), at the last reading.
    cpu_ticks: Option<u64>,
}

pub(crate) fn bridge_bench(args: &[String]) -> Result {
    let mut calls = 20_000usize;
    let mut starts = 15usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || -> Result<usize> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{a} needs a number"))
        };
        match a.as_str() {
            "--calls" => calls = value()?,
            "--starts" => starts = value()?.max(1),
            other => return Err(format!("bridge-bench: unknown argument {other}")),
        }
    }
    peers()?;
    run(cargo().args(["build", "--release", "-p", "mcpio-cli", "--bin", "mcp"]))?;
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "examples",
        "--bin",
        "bench-client",
        "--bin",
        "mcp-http",
    ]))?;
    let release = root().join("target/release");
    let bench_client = release.join("bench-client");
    let mcp = release.join("mcp").display().to_string();
    let peers_dir = root().join(".peers");
    let node = peers_dir
        .join("npm/node_modules/.bin/node")
        .display()
        .to_string();
    let remote = peers_dir
        .join("mcp-remote/npm/node_modules/mcp-remote/dist/proxy.js")
        .display()
        .to_string();
    // mcp-remote keeps its state under $HOME/.mcp-auth: a fresh one.
    let home = std::env::temp_dir().join(format!("bridge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;

    let (server, url) = start_server(&release.join("mcp-http"))?;
    let _server = KillOnDrop(server);
    let bridges: [(&str, String); 2] = [
        ("mcp bridge", format!("{mcp} bridge --http {url}")),
        (
            "mcp-remote 0.15.1",
            format!("{node} {remote} {url} --transport http-only"),
        ),
    ];
    let client = |transport: &str, target: &str, n: usize| -> Command {
        let mut c = Command::new(&bench_client);
        c.args(["--transport", transport]);
        c.args([
            if transport == "http" {
                "--url"
            } else {
                "--server-cmd"
            },
            target,
        ]);
        c.args([
            "--calls",
            &n.to_string(),
            "--concurrency",
            "1",
            "--payload",
            "64",
        ]);
        c.env("HOME", &home);
        c
    };

    let mut rows: Vec<(String, Row)> = Vec::new();
    let mut floor = measure(client("http", &url, calls), false)?;
    floor.connect_ms = median(
        (0..starts)
            .map(|_| measure(client("http", &url, 1), false).map(|r| r.connect_ms))
            .collect::<Result<Vec<f64>>>()?,
    );
    rows.push(("no bridge (HTTP straight to the server)".into(), floor));
    for (name, cmd) in &bridges {
        let mut row = measure(client("stdio", cmd, calls), true)?;
        row.connect_ms = median(
            (0..starts)
                .map(|_| measure(client("stdio", cmd, 1), false).map(|r| r.connect_ms))
                .collect::<Result<Vec<f64>>>()?,
        );
        rows.push(((*name).into(), row));
    }
    let _ = std::fs::remove_dir_all(&home);

    let floor_p50 = rows[0].1.p50_us;
    println!(
        "\n{calls} sequential tools/call echo (64 B) per row; start-up: median of {starts}; \
         server: mcp-http --serve\n"
    );
    println!(
        "| host → server | start-up (connect_ms) | p50 µs | p99 µs | calls/s | overhead p50 µs | bridge CPU µs/call | bridge peak RSS | bridge RSS at the end |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (name, r) in &rows {
        let kb =
            |v: Option<u64>| v.map_or("-".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
        let overhead = if r.peak_rss_kb.is_some() {
            format!("{:.1}", r.p50_us - floor_p50)
        } else {
            "-".into()
        };
        // Ticks are 10 ms: over 20,000 calls, 0.5 µs a call.
        let cpu = r.cpu_ticks.map_or("-".to_owned(), |t| {
            format!("{:.1}", t as f64 * 10_000.0 / calls as f64)
        });
        println!(
            "| {name} | {:.2} ms | {:.1} | {:.1} | {:.0} | {overhead} | {cpu} | {} | {} |",
            r.connect_ms,
            r.p50_us,
            r.p99_us,
            r.calls_per_s,
            kb(r.peak_rss_kb),
            kb(r.last_rss_kb)
        );
    }
    Ok(())
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `mcp-http --serve` and reads the URL it prints.
fn start_server(bin: &std::path::Path) -> Result<(Child, String)> {
    let mut child = Command::new(bin)
        .arg("--serve")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start {}: {e}", bin.display()))?;
    let stdout = child.stdout.take().ok_or("mcp-http: no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let url = line.trim().to_owned();
    if !url.starts_with("http://") {
        let _ = child.kill();
        return Err(format!("mcp-http --serve printed {url:?}, not its URL"));
    }
    Ok((child, url))
}

/// Runs one `bench-client`; with `watch`, polls its child's (the bridge's)
/// memory while it runs.
fn measure(mut cmd: Command, watch: bool) -> Result<Row> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("start bench-client: {e}"))?;
    let mut peak: Option<u64> = None;
    let mut last: Option<u64> = None;
    let mut cpu: Option<u64> = None;
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        if watch {
            for pid in children(child.id()) {
                if let Some((rss, hwm)) = memory(&pid) {
                    last = Some(rss);
                    peak = Some(peak.unwrap_or(0).max(hwm));
                }
                if let Some(t) = cpu_ticks(&pid) {
                    cpu = Some(t);
                }
            }
        }
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                return Err("bench-client took over 600 s".into());
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("bench-client failed: {}", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let j = json::parse(line).map_err(|e| format!("bench-client printed {line:?}: {e}"))?;
    let num = |k: &str| j.get(k).and_then(Json::as_f64).unwrap_or(0.0);
    Ok(Row {
        connect_ms: num("connect_ms"),
        p50_us: num("p50_us"),
        p99_us: num("p99_us"),
        calls_per_s: num("calls_per_s"),
        peak_rss_kb: peak,
        last_rss_kb: last,
        cpu_ticks: cpu,
    })
}

/// A process's CPU time (user + system, all threads) in clock ticks
/// (`USER_HZ`, 100 a second on Linux): fields 14 and 15 of
/// `/proc/PID/stat`, counted after the command name's closing `)`.
fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The ids of `pid`'s children (from `/proc`).
fn children(pid: u32) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// `(VmRSS, VmHWM)` of a process, in KiB.
fn memory(pid: &str) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
