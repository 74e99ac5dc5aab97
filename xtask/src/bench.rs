//! `cargo xtask bench [--no-rmcp] [--pooled] [--otel] [--time] [--scenario NAME]...`:
//! the per-call benchmark (BENCHMARKS.md, "Method"), from a clone alone.
//! Builds, in release (the profile the project ships):
//!
//! - `bench-server`, the reference server (`examples`: serde_json and
//!   hyper by hand, no MCP library; costs every client the same);
//! - `bench-client`, ours: the library used as a user would;
//! - `bench-floor`, the floor: tokio, serde_json and hyper by hand, only
//!   what every client must do;
//! - `rmcp-bench`, rmcp 3.11.0 pinned with its own `Cargo.lock`
//!   (`bench/rmcp-scale`, target dir `target-rmcp/`), unless `--no-rmcp`;
//!   `--pooled` adds rmcp with a pooled HTTP client;
//! - with `--otel`, ours again with feature `otel` (its own target dir,
//!   `target/bench-otel/`) and `MCP_BENCH_OTEL=1`: every call traced
//!   through `tracing-opentelemetry` into an SDK tracer, recorded, not
//!   exported (row `ours+otel`: what the telemetry costs with a subscriber).
//!
//! All speak one contract (`examples/src/bench.rs`), and each scenario
//! runs them against one server:
//!
//! | scenario | transport | calls in flight | payload |
//! |---|---|--:|--:|
//! | `stdio-c1`, `stdio-c32` | stdio | 1, 32 | 64 B |
//! | `stdio-1mib` | stdio | 1 | 1 MiB |
//! | `http-c1`, `http-c32` | Streamable HTTP | 1, 32 | 64 B |
//! | `…-modern` (`stdio-c1`, `stdio-c32`, `http-c1`, `http-c32`) | the same in the 2026-07-28 era | | |
//!
//! **Instructions per call** (the default, with valgrind): each client runs
//! twice under callgrind, the server natively, with N₁ and N₂ calls (500
//! and 2,500; 2,000 and 10,000 at 32 in flight; 20 and 100 at 1 MiB); the
//! difference of the totals over N₂ − N₁ is its cost per call, start and
//! shutdown excluded. The count does not depend on the machine's load.
//! Without valgrind the command says how to install it and measures time
//! instead.
//!
//! **Throughput** (`--time`, or without valgrind): each client runs three
//! times per scenario (the best counts), client and server pinned to one
//! CPU with `taskset` when it exists, so what is measured is CPU cost per
//! call; calls per second and p50 latency, as ratios to the floor in the
//! same run. Only those ratios mean anything on a shared machine.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::catalog::instructions_with;
use crate::json::{self, Json};
use crate::{Result, cargo, root, run};

/// One scenario: name, transport, calls in flight, payload, era, the two
/// call counts of the instruction runs, and the calls of a timed run.
struct Scenario {
    name: &'static str,
    http: bool,
    concurrency: u64,
    payload: u64,
    modern: bool,
    n: (u64, u64),
    timed: u64,
}

const fn sc(
    name: &'static str,
    http: bool,
    concurrency: u64,
    payload: u64,
    modern: bool,
) -> Scenario {
    let n = match (concurrency, payload) {
        (_, 1_048_576) => (20, 100),
        (1, _) => (500, 2500),
        _ => (2000, 10000),
    };
    let timed = match (http, concurrency, payload) {
        (_, _, 1_048_576) => 300,
        (false, 1, _) => 90_000,
        (false, _, _) => 300_000,
        (true, 1, _) => 30_000,
        (true, _, _) => 45_000,
    };
    Scenario {
        name,
        http,
        concurrency,
        payload,
        modern,
        n,
        timed,
    }
}

const SCENARIOS: &[Scenario] = &[
    sc("stdio-c1", false, 1, 64, false),
    sc("stdio-c32", false, 32, 64, false),
    sc("stdio-1mib", false, 1, 1_048_576, false),
    sc("http-c1", true, 1, 64, false),
    sc("http-c32", true, 32, 64, false),
    sc("stdio-c1-modern", false, 1, 64, true),
    sc("stdio-c32-modern", false, 32, 64, true),
    sc("http-c1-modern", true, 1, 64, true),
    sc("http-c32-modern", true, 32, 64, true),
];

/// A client: its row label, binary and extra environment.
struct Client {
    label: &'static str,
    bin: PathBuf,
    env: Option<(&'static str, &'static str)>,
}

/// Builds everything and runs the scenarios asked for.
pub(crate) fn bench(args: &[String]) -> Result {
    let (mut rmcp, mut pooled, mut otel, mut time, mut only) =
        (true, false, false, false, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-rmcp" => rmcp = false,
            "--pooled" => pooled = true,
            "--otel" => otel = true,
            "--time" => time = true,
            "--scenario" => only.push(it.next().ok_or("--scenario needs a name")?.clone()),
            other => return Err(format!("bench: unknown argument {other}")),
        }
    }
    let scenarios: Vec<&Scenario> = SCENARIOS
        .iter()
        .filter(|s| only.is_empty() || only.iter().any(|o| o == s.name))
        .collect();
    if let Some(bad) = only
        .iter()
        .find(|o| SCENARIOS.iter().all(|s| s.name != o.as_str()))
    {
        let names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
        return Err(format!(
            "bench: no scenario {bad} (there are {})",
            names.join(", ")
        ));
    }
    if !time && Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!(
            "xtask: valgrind is not installed, so instructions per call cannot be counted \
             (Debian/Ubuntu: `apt-get install valgrind`; Fedora: `dnf install valgrind`); \
             measuring throughput instead, which only compares clients within one run"
        );
        time = true;
    }
    let clients = build(rmcp, pooled, otel)?;
    let server = root().join("target/release/bench-server");
    if time {
        timed(&server, &clients, &scenarios)
    } else {
        counted(&server, &clients, &scenarios)
    }
}

fn build(rmcp: bool, pooled: bool, otel: bool) -> Result<Vec<Client>> {
    run(cargo()
        .args(["build", "--release", "-p", "examples"])
        .args([
            "--bin",
            "bench-server",
            "--bin",
            "bench-client",
            "--bin",
            "bench-floor",
        ]))?;
    let release = root().join("target/release");
    let mut clients = vec![
        Client {
            label: "ours",
            bin: release.join("bench-client"),
            env: None,
        },
        Client {
            label: "floor",
            bin: release.join("bench-floor"),
            env: None,
        },
    ];
    if otel {
        let dir = root().join("target/bench-otel");
        run(cargo()
            .args(["build", "--release", "-p", "examples", "--features", "otel"])
            .args(["--bin", "bench-client"])
            .env("CARGO_TARGET_DIR", &dir))?;
        clients.push(Client {
            label: "ours+otel",
            bin: dir.join("release/bench-client"),
            env: Some(("MCP_BENCH_OTEL", "1")),
        });
    }
    if rmcp || pooled {
        run(cargo()
            .args(["build", "--release", "--locked", "--manifest-path"])
            .arg(root().join("bench/rmcp-scale/Cargo.toml"))
            .args(["--bin", "rmcp-bench"])
            .env("CARGO_TARGET_DIR", root().join("target-rmcp")))?;
        let bin = root().join("target-rmcp/release/rmcp-bench");
        if rmcp {
            clients.push(Client {
                label: "rmcp",
                bin: bin.clone(),
                env: None,
            });
        }
        if pooled {
            clients.push(Client {
                label: "rmcp-pooled",
                bin,
                env: Some(("RMCP_POOLED", "1")),
            });
        }
    }
    Ok(clients)
}

/// A server for one run: over HTTP, a fresh `bench-server --http 0` (killed
/// when dropped) and its URL; over stdio, the command line the client
/// spawns.
struct Server {
    child: Option<Child>,
    target: [String; 4],
}

impl Server {
    fn start(server: &std::path::Path, s: &Scenario, pin: &[String]) -> Result<Server> {
        let modern: &[&str] = if s.modern { &["--modern"] } else { &[] };
        let bin = server.display().to_string();
        if !s.http {
            let mut words: Vec<String> = pin.to_vec();
            words.push(bin);
            words.push("--stdio".into());
            words.extend(modern.iter().map(|m| (*m).to_owned()));
            let target = ["--transport", "stdio", "--server-cmd", &words.join(" ")];
            return Ok(Server {
                child: None,
                target: target.map(str::to_owned),
            });
        }
        let (program, pinned) = pin
            .split_first()
            .map_or((bin.as_str(), &[][..]), |(p, rest)| (p.as_str(), rest));
        let mut cmd = Command::new(program);
        if !pin.is_empty() {
            cmd.args(pinned).arg(&bin);
        }
        let mut child = cmd
            .args(["--http", "0"])
            .args(modern)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("start {bin}: {e}"))?;
        let mut line = String::new();
        if let Some(err) = child.stderr.take() {
            BufReader::new(err)
                .read_line(&mut line)
                .map_err(|e| format!("bench-server: {e}"))?;
        }
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .ok_or_else(|| format!("bench-server did not say where it listens: {line:?}"))?
            .to_owned();
        Ok(Server {
            child: Some(child),
            target: ["--transport", "http", "--url", &url].map(str::to_owned),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The client's command line for `calls` calls.
fn argv(c: &Client, srv: &Server, s: &Scenario, calls: u64) -> Vec<String> {
    let mut v = vec![c.bin.display().to_string()];
    v.extend(srv.target.iter().cloned());
    for (flag, value) in [
        ("--calls", calls),
        ("--concurrency", s.concurrency),
        ("--payload", s.payload),
    ] {
        v.push(flag.into());
        v.push(value.to_string());
    }
    if s.modern {
        v.extend(["--era".into(), "modern".into()]);
    }
    v
}

fn counted(server: &std::path::Path, clients: &[Client], scenarios: &[&Scenario]) -> Result {
    let others: Vec<&Client> = clients.iter().filter(|c| c.label != "floor").collect();
    print!("\n| scenario | floor |");
    for c in &others {
        print!(" {} | {} ÷ floor |", c.label, c.label);
    }
    print!("\n|---|--:|");
    for _ in &others {
        print!("--:|--:|");
    }
    println!();
    for s in scenarios {
        let mut per = Vec::new();
        for c in clients {
            let mut totals = [0u64; 2];
            for (total, calls) in totals.iter_mut().zip([s.n.0, s.n.1]) {
                let srv = Server::start(server, s, &[])?;
                let env: Vec<(&str, &str)> = c.env.into_iter().collect();
                *total = instructions_with(&argv(c, &srv, s, calls), &env)
                    .map_err(|e| format!("{} {}: {e}", s.name, c.label))?;
            }
            #[allow(clippy::cast_precision_loss)]
            let n = (totals[1] as f64 - totals[0] as f64) / (s.n.1 - s.n.0) as f64;
            eprintln!(
                "xtask: {} {}: {n:.0} instructions per call",
                s.name, c.label
            );
            per.push((c.label, n));
        }
        let floor = per
            .iter()
            .find(|(l, _)| *l == "floor")
            .map_or(f64::NAN, |p| p.1);
        print!("| {} | {} |", s.name, count(floor));
        for (_, n) in per.iter().filter(|(l, _)| *l != "floor") {
            print!(" {} | {:.2} |", count(*n), n / floor);
        }
        println!();
    }
    Ok(())
}

/// 11,561 or 5.99 M.
fn count(n: f64) -> String {
    if n >= 1e6 {
        return format!("{:.2} M", n / 1e6);
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let digits = (n.round() as u64).to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn timed(server: &std::path::Path, clients: &[Client], scenarios: &[&Scenario]) -> Result {
    let pin: Vec<String> = if Command::new("taskset").arg("-V").output().is_ok() {
        vec!["taskset".into(), "-c".into(), "0".into()]
    } else {
        eprintln!("xtask: no taskset (util-linux): client and server are not pinned to one CPU");
        Vec::new()
    };
    println!("\n| scenario | client | calls | calls/s | p50 µs | thr ÷ floor | p50 ÷ floor |");
    println!("|---|---|--:|--:|--:|--:|--:|");
    for s in scenarios {
        let mut rows = Vec::new();
        for c in clients {
            // rmcp is several times slower: fewer calls, the same rate.
            let calls = if c.label.starts_with("rmcp") {
                s.timed / 4
            } else {
                s.timed
            };
            let mut best: Option<(f64, f64)> = None;
            for _ in 0..3 {
                let srv = Server::start(server, s, &pin)?;
                let mut cmd = Command::new(pin.first().map_or(c.bin.as_os_str(), |p| p.as_ref()));
                if !pin.is_empty() {
                    cmd.args(&pin[1..]).arg(&c.bin);
                }
                if let Some((k, v)) = c.env {
                    cmd.env(k, v);
                }
                let out = cmd
                    .args(&argv(c, &srv, s, calls)[1..])
                    .stdin(Stdio::null())
                    .output()
                    .map_err(|e| format!("{}: {e}", c.bin.display()))?;
                if !out.status.success() {
                    return Err(format!(
                        "{} {} failed: {}",
                        s.name,
                        c.label,
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
                let stdout = String::from_utf8_lossy(&out.stdout);
                let line = json::parse(stdout.lines().last().unwrap_or_default())?;
                let num = |k: &str| match line.get(k) {
                    Some(Json::Number(n)) => Ok(*n),
                    _ => Err(format!("{} {}: no {k} in {stdout}", s.name, c.label)),
                };
                let (rate, p50) = (num("calls_per_s")?, num("p50_us")?);
                if best.is_none_or(|(r, _)| rate > r) {
                    best = Some((rate, p50));
                }
            }
            rows.push((c.label, calls, best.unwrap_or_default()));
        }
        let floor = rows
            .iter()
            .find(|r| r.0 == "floor")
            .map_or((f64::NAN, f64::NAN), |r| r.2);
        for (label, calls, (rate, p50)) in rows {
            println!(
                "| {} | {label} | {calls} | {rate:.0} | {p50:.1} | {:.2} | {:.2} |",
                s.name,
                rate / floor.0,
                p50 / floor.1
            );
        }
    }
    Ok(())
}
