//! `cargo xtask catalog [--no-rmcp] [--only list|convert|cold|host]...`:
//! the catalog benchmarks (issue 37), one command. Builds `examples`'
//! `catalog-server`, `catalog-bench` (ours) and `catalog-floor` (tokio +
//! serde_json by hand) in release, and rmcp 3.11's `rmcp-catalog` from
//! `bench/rmcp-scale` (its own Cargo project and target dir,
//! `target-rmcp/`, outside the workspace's dependency tree), then measures
//! as the per-call path is measured (`cargo xtask bench`):
//!
//! - **instructions** with valgrind (callgrind, the client only: the
//!   server runs natively), two runs of different sizes, the difference:
//!   per tool (1,000 and 2,000 tools), per conversion turn (1 and 3 turns
//!   of 2,000 tools), per cold start (5 and 15 starts, each connection
//!   kept: closing is not counted);
//! - **a sandboxed cold start's wall time** beside the same start
//!   unconfined (native, medians; the launcher and the kernel's namespace
//!   work are outside what callgrind counts);
//! - **heap held per tool** with valgrind's massif: the heap at exit (the
//!   benchmarks exit holding the catalog), 1,000 and 2,000 tools, the
//!   difference (requested bytes; malloc's own overhead beside it);
//! - **round trips** of a cold start: the requests the server received
//!   (`catalog-server --request-log`);
//! - **a host of twenty stdio servers** (`catalog-bench --bench host`, run
//!   natively three times): time from `start()` to all ready beyond the
//!   slowest server's own readiness, private memory per idle server beside
//!   its catalog's size.
//!
//! Ratios are to the floor measured in the same run. Prints markdown
//! tables (BENCHMARKS.md has the results). Needs valgrind.

use std::path::Path;
use std::process::Command;

use crate::{Result, cargo, root, run};

struct Bins {
    server: String,
    ours: String,
    floor: String,
    rmcp: Option<String>,
}

/// Builds and runs the catalog benchmarks.
pub(crate) fn catalog(args: &[String]) -> Result {
    let mut rmcp = true;
    let mut only: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-rmcp" => rmcp = false,
            "--only" => only.push(it.next().ok_or("--only needs a value")?.clone()),
            other => return Err(format!("catalog: unknown argument {other}")),
        }
    }
    let wants = |b: &str| only.is_empty() || only.iter().any(|o| o == b);
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "examples",
        "--bin",
        "catalog-server",
        "--bin",
        "catalog-bench",
        "--bin",
        "catalog-floor",
    ]))?;
    let release = root().join("target/release");
    let path = |p: &Path| p.display().to_string();
    let rmcp_bin = if rmcp {
        run(cargo()
            .args([
                "build",
                "--release",
                "--locked",
                "--manifest-path",
                "bench/rmcp-scale/Cargo.toml",
                "--bin",
                "rmcp-catalog",
            ])
            .env("CARGO_TARGET_DIR", root().join("target-rmcp")))?;
        Some(path(&root().join("target-rmcp/release/rmcp-catalog")))
    } else {
        None
    };
    let bins = Bins {
        server: path(&release.join("catalog-server")),
        ours: path(&release.join("catalog-bench")),
        floor: path(&release.join("catalog-floor")),
        rmcp: rmcp_bin,
    };
    if wants("list") {
        list(&bins)?;
    }
    if wants("convert") {
        convert(&bins)?;
    }
    if wants("cold") {
        cold(&bins)?;
    }
    if wants("host") {
        host(&bins)?;
    }
    Ok(())
}

/// The client's instructions (callgrind's total), run once.
pub(crate) fn instructions(cmd: &[String]) -> Result<u64> {
    instructions_with(cmd, &[])
}

/// [`instructions`], with `env` set for the client.
pub(crate) fn instructions_with(cmd: &[String], env: &[(&str, &str)]) -> Result<u64> {
    let out = Command::new("valgrind")
        .envs(env.iter().copied())
        .args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--trace-children=no",
        ])
        .args(cmd)
        .output()
        .map_err(|e| format!("valgrind: {e} (apt-get install valgrind)"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {log}"));
    }
    log.lines()
        .filter_map(|l| l.split("Collected : ").nth(1))
        .filter_map(|n| n.trim().parse().ok())
        .next_back()
        .ok_or_else(|| format!("{cmd:?}: no instruction count in valgrind's output"))
}

/// The heap at exit (massif's last snapshot): requested bytes and malloc's
/// overhead.
fn heap_at_exit(cmd: &[String]) -> Result<(u64, u64)> {
    let file = std::env::temp_dir().join(format!("xtask-massif-{}", std::process::id()));
    let out = Command::new("valgrind")
        .arg("--tool=massif")
        .arg(format!("--massif-out-file={}", file.display()))
        .args(cmd)
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&file);
    let last = |key: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix(key))
            .filter_map(|v| v.trim().parse::<u64>().ok())
            .next_back()
            .unwrap_or(0)
    };
    Ok((last("mem_heap_B="), last("mem_heap_extra_B=")))
}

fn argv(bin: &str, args: &[&str]) -> Vec<String> {
    std::iter::once(bin.to_owned())
        .chain(args.iter().map(|a| (*a).to_owned()))
        .collect()
}

/// (x₂ − x₁) / (n₂ − n₁).
#[allow(clippy::cast_precision_loss)]
fn per(a: u64, b: u64, n1: u64, n2: u64) -> f64 {
    (b as f64 - a as f64) / (n2 - n1) as f64
}

fn list(b: &Bins) -> Result {
    let (n1, n2) = (1000u64, 2000u64);
    let server = |n: u64| format!("{} --tools {n}", b.server);
    let mut rows: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "floor (serde_json::Value per schema)",
            b.floor.clone(),
            vec!["--bench", "list"],
        ),
        (
            "ours: Vec<Tool>",
            b.ours.clone(),
            vec!["--bench", "list", "--keep", "vec"],
        ),
        (
            "ours: Toolbox",
            b.ours.clone(),
            vec!["--bench", "list", "--keep", "toolbox"],
        ),
    ];
    if let Some(r) = &b.rmcp {
        rows.push((
            "rmcp 3.11 list_all_tools",
            r.clone(),
            vec!["--bench", "list"],
        ));
    }
    println!(
        "\n### Listing and keeping tools (per tool: runs of {n1} and {n2} tools, the difference)\n"
    );
    println!(
        "| client | instructions per tool | for 2,000 tools | ÷ floor | heap held per tool, bytes (+ malloc overhead) | ÷ floor |"
    );
    println!("|---|--:|--:|--:|--:|--:|");
    let mut floor = (0.0, 0.0);
    for (label, bin, args) in rows {
        let cmd = |n: u64| {
            let mut c = argv(&bin, &args);
            c.extend(["--server-cmd".to_owned(), server(n)]);
            c
        };
        let i = per(instructions(&cmd(n1))?, instructions(&cmd(n2))?, n1, n2);
        let (h1, e1) = heap_at_exit(&cmd(n1))?;
        let (h2, e2) = heap_at_exit(&cmd(n2))?;
        let (h, e) = (per(h1, h2, n1, n2), per(e1, e2, n1, n2));
        if floor.0 == 0.0 {
            floor = (i, h);
        }
        println!(
            "| {label} | {i:.0} | {:.1} M | {:.2} | {h:.0} (+{e:.0}) | {:.2} |",
            i * 2000.0 / 1e6,
            i / floor.0,
            h / floor.1
        );
    }
    Ok(())
}

fn convert(b: &Bins) -> Result {
    let (t1, t2) = (1u64, 3u64);
    let server = format!("{} --tools 2000", b.server);
    let rows: Vec<(&str, &str, &str)> = vec![
        (
            "floor: every input schema serialized once (the baseline)",
            &b.floor,
            "schemas",
        ),
        (
            "floor: OpenAI definitions as Values, serialized",
            &b.floor,
            "openai",
        ),
        ("ours: `openai_definitions`, serialized", &b.ours, "openai"),
        (
            "ours: `anthropic_definitions`, serialized",
            &b.ours,
            "anthropic",
        ),
        (
            "ours: `openai_tools` (Values), serialized",
            &b.ours,
            "openai-value",
        ),
        (
            "ours: `anthropic_tools` (Values), serialized",
            &b.ours,
            "anthropic-value",
        ),
    ];
    println!(
        "\n### Converting 2,000 tools to model tool definitions (per turn: runs of {t1} and {t2} turns, the difference)\n"
    );
    println!("| what | instructions per turn | ÷ baseline |");
    println!("|---|--:|--:|");
    let mut base = 0.0;
    for (label, bin, shape) in rows {
        let cmd = |t: u64| {
            argv(
                bin,
                &[
                    "--bench",
                    "convert",
                    "--shape",
                    shape,
                    "--turns",
                    &t.to_string(),
                    "--server-cmd",
                    &server,
                ],
            )
        };
        let i = per(instructions(&cmd(t1))?, instructions(&cmd(t2))?, t1, t2);
        if base == 0.0 {
            base = i;
        }
        println!("| {label} | {:.2} M | {:.2} |", i / 1e6, i / base);
    }
    Ok(())
}

/// The requests one cold start sends (the server's request log).
fn requests_per_start(bin: &str, server_bin: &str, era: &str, modern: bool) -> Result<String> {
    let log = std::env::temp_dir().join(format!("xtask-requests-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let server = format!(
        "{} --tools 10 --request-log {}{}",
        server_bin,
        log.display(),
        if modern { " --modern" } else { "" }
    );
    let mut cmd = Command::new(bin);
    cmd.args(["--bench", "cold", "--starts", "1", "--server-cmd", &server]);
    if !era.is_empty() {
        cmd.args(["--era", era]);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "cold start ({era}): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let methods: Vec<&str> = text.lines().collect();
    // A `cached` run connects twice (the first warms the cache): the
    // measured start is the second.
    let measured = if era == "cached" {
        methods
            .iter()
            .skip_while(|m| **m != "initialize")
            .skip(1)
            .copied()
            .collect()
    } else {
        methods
    };
    Ok(format!("{} ({})", measured.len(), measured.join(", ")))
}

fn cold(b: &Bins) -> Result {
    let (k1, k2) = (5u64, 15u64);
    let legacy = format!("{} --tools 10", b.server);
    let modern = format!("{} --tools 10 --modern", b.server);
    // (label, binary, extra flags, server command, (era, modern) of the
    // request-log run: none for the floor and rmcp)
    type Row<'a> = (
        &'a str,
        &'a str,
        Vec<&'a str>,
        &'a str,
        Option<(&'a str, bool)>,
    );
    let mut rows: Vec<Row<'_>> = vec![
        (
            "floor: `initialize` by hand",
            &b.floor,
            vec![],
            &legacy,
            None,
        ),
        (
            "ours, legacy pinned",
            &b.ours,
            vec!["--era", "legacy"],
            &legacy,
            Some(("legacy", false)),
        ),
        (
            "ours, auto (probe, fall back)",
            &b.ours,
            vec!["--era", "auto"],
            &legacy,
            Some(("auto", false)),
        ),
        (
            "ours, auto with a warm era cache",
            &b.ours,
            vec!["--era", "cached"],
            &legacy,
            Some(("cached", false)),
        ),
        (
            "ours, 2026-07-28 pinned (`--modern` server)",
            &b.ours,
            vec!["--era", "modern"],
            &modern,
            Some(("modern", true)),
        ),
    ];
    if let Some(r) = &b.rmcp {
        rows.push(("rmcp 3.11 (`serve`)", r, vec![], &legacy, None));
    }
    println!(
        "\n### Cold start: spawn + handshake (per start: runs of {k1} and {k2} starts, the difference)\n"
    );
    println!("| client | instructions per start | ÷ floor | requests sent (server's log) |");
    println!("|---|--:|--:|---|");
    let mut floor = 0.0;
    for (label, bin, extra, server, probe) in rows {
        let cmd = |k: u64| {
            let mut c = argv(bin, &["--bench", "cold", "--starts", &k.to_string()]);
            c.extend(extra.iter().map(|s| (*s).to_owned()));
            c.extend(["--server-cmd".to_owned(), server.to_owned()]);
            c
        };
        let i = per(instructions(&cmd(k1))?, instructions(&cmd(k2))?, k1, k2);
        if floor == 0.0 {
            floor = i;
        }
        let (era, modern) = probe.unwrap_or(("", false));
        let requests = requests_per_start(bin, &b.server, era, modern)?;
        println!(
            "| {label} | {:.0} k | {:.2} | {requests} |",
            i / 1e3,
            i / floor
        );
    }
    sandboxed_cold(b, &legacy)
}

/// The wall time a sandbox adds to a cold start (issue 43: at most 15 ms).
/// Instructions cannot tell (the launcher's two stages and the kernel's
/// namespace work are outside the client), so both forms run natively,
/// alternated, [`SANDBOX_RUNS`] times of 15 starts; the medians compare.
fn sandboxed_cold(b: &Bins, server: &str) -> Result {
    let per_start = |sandbox: &str| -> Result<f64> {
        let out = Command::new(&b.ours)
            .args(["--bench", "cold", "--starts", "15", "--era", "legacy"])
            .args(["--sandbox", sandbox, "--server-cmd", server])
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!(
                "sandboxed cold start ({sandbox}): {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        text.split("\"ms_per_start\":")
            .nth(1)
            .and_then(|t| t.trim_end_matches(['}', '\n']).parse().ok())
            .ok_or_else(|| format!("no ms_per_start in {text}"))
    };
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..SANDBOX_RUNS {
        off.push(per_start("off")?);
        on.push(per_start("on")?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (off, on) = (median(&mut off), median(&mut on));
    println!(
        "\n### Cold start with a sandbox: wall time per start (native, median of {SANDBOX_RUNS} runs of 15 starts, alternated)\n"
    );
    println!("| client | ms per start |");
    println!("|---|--:|");
    println!("| ours, legacy pinned | {off:.2} |");
    println!(
        "| ours, legacy pinned, sandboxed (empty `Sandbox`; catalog-bench is its own launcher) | {on:.2} |"
    );
    println!(
        "| **the sandbox's cost** (budget: 15 ms) | **{:.2}** |",
        on - off
    );
    Ok(())
}

/// Runs of each form in [`sandboxed_cold`].
const SANDBOX_RUNS: usize = 9;

fn host(b: &Bins) -> Result {
    println!(
        "\n### A host of twenty stdio servers (100 tools each; server i starts in 10·(i+1) ms)\n"
    );
    println!(
        "| run | start() to all ready, ms | slowest server's own readiness, ms | beyond it, ms | private memory per idle server, KiB | of which anonymous, KiB | its catalog as JSON text, KiB | beyond the catalog's text, KiB |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|");
    for run_no in 1..=3 {
        let out = Command::new(&b.ours)
            .args([
                "--bench",
                "host",
                "--servers",
                "20",
                "--tools",
                "100",
                "--startup-ms",
                "200",
            ])
            .args(["--server-cmd", &b.server])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "host bench: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let line = String::from_utf8_lossy(&out.stdout);
        let v = crate::json::parse(line.trim())
            .map_err(|e| format!("host bench printed {line:?}: {e}"))?;
        let f = |k: &str| match v.get(k) {
            Some(crate::json::Json::Number(n)) => *n,
            _ => f64::NAN,
        };
        println!(
            "| {run_no} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            f("start_to_all_ready_ms"),
            f("slowest_own_ready_ms"),
            f("beyond_slowest_ms"),
            f("private_kib_per_server"),
            f("anon_kib_per_server"),
            f("catalog_text_kib_per_server"),
            f("beyond_catalog_kib_per_server")
        );
    }
    // The heap of an idle server in the host (massif: hosts of 10 and 20
    // servers, the difference), beside the heap of its 100 tools as a
    // `Vec<Tool>` (the list bench's per-tool heap × 100).
    let host_heap = |n: u64| {
        heap_at_exit(&argv(
            &b.ours,
            &[
                "--bench",
                "host",
                "--servers",
                &n.to_string(),
                "--tools",
                "100",
                "--startup-ms",
                "100",
                "--idle-ms",
                "300",
                "--server-cmd",
                &b.server,
            ],
        ))
    };
    let (h1, e1) = host_heap(10)?;
    let (h2, e2) = host_heap(20)?;
    let list_heap = |n: u64| {
        heap_at_exit(&argv(
            &b.ours,
            &[
                "--bench",
                "list",
                "--server-cmd",
                &format!("{} --tools {n}", b.server),
            ],
        ))
    };
    let (l1, f1) = list_heap(1000)?;
    let (l2, f2) = list_heap(2000)?;
    let server = per(h1, h2, 10, 20) + per(e1, e2, 10, 20);
    let catalog = 100.0 * (per(l1, l2, 1000, 2000) + per(f1, f2, 1000, 2000));
    println!(
        "\nHeap per idle server (massif, hosts of 10 and 20 servers, malloc overhead included): \
         {:.1} KiB; its 100 tools as a `Vec<Tool>`: {:.1} KiB; beyond them: {:.1} KiB.",
        server / 1024.0,
        catalog / 1024.0,
        (server - catalog) / 1024.0
    );
    Ok(())
}

/// `cargo xtask catalog-shapes`: captures the catalog server's tool shapes
/// (`examples/catalog/shapes.json`) from the real servers' `tools/list`:
/// server-everything (`peers/package.json`), the reference filesystem
/// server (`peers/catalog/package.json`), the reference git server
/// (`peers/catalog/requirements.txt`) and FastMCP-style samples on the
/// Python SDK (`examples/catalog/fastmcp_samples.py`). Installs the pinned
/// servers into `.peers/` first.
pub(crate) fn shapes() -> Result {
    crate::peers()?;
    let peers = root().join(".peers");
    let pins = root().join("peers/catalog");
    let npm = peers.join("catalog/npm");
    let py = peers.join("catalog/py");
    for dir in [&npm, &py] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for f in ["package.json", "package-lock.json"] {
        std::fs::copy(pins.join(f), npm.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&npm))?;
    if !py.join("bin/python").exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&py))?;
    }
    run(Command::new(py.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(pins.join("requirements.txt"))
        .arg("-c")
        .arg(pins.join("constraints.txt")))?;
    let fs_root = std::env::temp_dir().join("catalog-shapes-root");
    std::fs::create_dir_all(&fs_root).map_err(|e| e.to_string())?;
    let node = peers.join("npm/node_modules/.bin/node");
    let show = |p: &Path| p.display().to_string();
    run(Command::new("python3")
        .arg(root().join("examples/catalog/capture.py"))
        .arg(root().join("examples/catalog/shapes.json"))
        .arg(format!(
            "everything={} {} stdio",
            show(&node),
            show(
                &peers
                    .join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            )
        ))
        .arg(format!(
            "filesystem={} {} {}",
            show(&node),
            show(&npm.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")),
            show(&fs_root)
        ))
        .arg(format!("git={}", show(&py.join("bin/mcp-server-git"))))
        .arg(format!(
            "fastmcp={} {}",
            show(&peers.join("py/bin/python")),
            show(&root().join("examples/catalog/fastmcp_samples.py"))
        )))
}
