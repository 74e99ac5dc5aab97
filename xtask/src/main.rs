//! Project chores. Run as `cargo xtask <command>`:
//!
//! - `peers`: install the pinned real MCP peers the tests run against into
//!   the git-ignored `.peers/` folder (npm: server-everything, the
//!   conformance suite and Node 22; PyPI: the Python SDK in `py/`, FastMCP with
//!   its tasks extra in `fastmcp/`, each its own venv). Re-runs only when
//!   the pins change.
//! - `test`: `peers`, then every test of the workspace with the peers
//!   required (a missing peer fails the run instead of skipping).
//! - `conformance [--matrix] [--requirements REV]... [--scenario NAME]...
//!   [--revision REV]... [--suite core|auth|all] [--runs N] [--keep DIR]`:
//!   `peers`, then the official MCP conformance suite's client scenarios
//!   against `examples`' `conformance-client`: every scenario at every
//!   revision it is tagged with, one at a time, and each requirement set in
//!   the suite's parallel mode, with tables; fails when a scenario × revision
//!   listed in `xtask/conformance-expected.txt` fails.
//! - `fuzz [--seconds N] [--target NAME]...`: builds the fuzz targets on
//!   stable and runs each for N seconds (default 60); fails on a finding and
//!   saves its reproducer under `fuzz/artifacts/` (`fuzz/README.md`).
//! - `ci`: what `.ci/run` runs: fmt check, clippy (default and all
//!   features, then with the newest dependencies), `features`, `package`,
//!   `test`, all the conformance scenarios, the chaos soak for 60 s,
//!   `scaling`, `docs`, 30 s of each fuzz target.
//! - `features`: `cargo check` of each feature combination a dependent can
//!   pick (`FEATURE_BUILDS`; part of `ci`).
//! - `docs`: each library crate's documentation as docs.rs builds it (all
//!   features, one crate at a time, warnings denied), as far as the stable
//!   toolchain allows; `docs.rs` says what differs (part of `ci`).
//! - `package`: every publishable package's metadata checked, then
//!   `cargo package --workspace` (each crate built from its packed files
//!   alone; part of `ci`). `release-check`: `package`, the names asked of
//!   crates.io, each packed crate's docs as docs.rs builds them (nightly
//!   when installed), and a semver check against the last release tag
//!   (see `release.rs`).
//! - `newest-deps`: the workspace checked (clippy, warnings denied) with
//!   the newest dependency versions semver allows, in a scratch copy: what
//!   a user's own lock file gives (part of `ci`; see `newest.rs`).
//! - `soak [--seconds N]`: the chaos soak over stdio and HTTP, both eras,
//!   N split between the four (`xtask/src/soak.rs`).
//! - `bench [--no-rmcp] [--pooled] [--time] [--scenario NAME]...`: the
//!   per-call benchmark from a clone alone: a reference server, our
//!   client, a no-framework floor and rmcp 3.11, all built here;
//!   instructions per call with valgrind, else throughput (see `bench.rs`).
//! - `scaling`: every decode and check over a collection a server controls
//!   measured at 1,000 and 100,000 elements; fails when one is not linear
//!   (`xtask/src/scaling.rs`).
//! - `scale [ARGS]`: the scale benchmark (100 stdio servers and 1,000 HTTP
//!   clients in one process; see `scale.rs`).
//! - `catalog [--no-rmcp] [--only list|convert|cold|host]...`: the catalog
//!   benchmarks: 2,000 tools listed, kept and converted to model tool
//!   definitions, cold starts, a host of twenty servers; ours beside a
//!   no-framework floor and rmcp (see `catalog.rs`).
//! - `bridge-bench [--calls N] [--starts N]`: `mcp bridge` beside
//!   `mcp-remote` (pinned in `peers/mcp-remote/`) on one Streamable HTTP
//!   server: start-up, per-message overhead, the bridge's memory (see
//!   `bridge_bench.rs`).
//! - `catalog-shapes`: captures the catalog server's tool shapes from real
//!   servers' `tools/list` (pinned in `peers/` and `peers/catalog/`).
//! - `search-catalog`: installs the real servers pinned in `peers/search/`
//!   and captures their tools into the tool-search evaluation's catalog
//!   (`mcp-tools/tests/search/catalog.json`; see `search.rs`).
//! - `search-eval`: the tool-search evaluation: recall@5 and MRR@10 on the
//!   dev and held-out queries, beside plain BM25; fails below the floors.
//! - `search-embed`: makes tool search's word vectors again from
//!   all-MiniLM-L6-v2 (pinned in `peers/search/embed.txt`; see `search.rs`).
//! - `search-bench`: tool search over 10,000 tools: build and query times,
//!   heap per tool, a digest of the hits (unchanged by a change that only
//!   speeds the build), instructions per build and per query (needs
//!   valgrind).

mod bench;
mod bridge_bench;
mod catalog;
mod conformance;
mod doc_facts;
mod docs;
mod fuzz;
mod json;
mod newest;
mod release;
mod scale;
mod scaling;
mod search;
mod soak;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("peers") => peers(),
        Some("test") => test(&args[1..]),
        Some("conformance") => conformance::conformance(&args[1..]),
        Some("bridge-bench") => bridge_bench::bridge_bench(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("ci") => ci(),
        Some("features") => feature_builds(),
        Some("docs") => docs::docs(),
        Some("soak") => soak::soak(&args[1..]),
        Some("scaling") => scaling::scaling(&args[1..]),
        Some("scale") => scale::scale(&args[1..]),
        Some("catalog") => catalog::catalog(&args[1..]),
        Some("bench") => bench::bench(&args[1..]),
        Some("package") => release::package(),
        Some("release-check") => release::release_check(),
        Some("newest-deps") => newest::newest_deps(),
        Some("catalog-shapes") => catalog::shapes(),
        Some("search-catalog") => search::catalog(),
        Some("search-eval") => search::eval(),
        Some("search-bench") => search::bench(),
        Some("search-embed") => search::embed(),
        _ => {
            eprintln!(
                "usage: cargo xtask <peers|test|conformance|fuzz|ci|features|docs|package|release-check|newest-deps|soak|scaling|bench|scale|catalog|catalog-shapes|bridge-bench|search-catalog|search-eval|search-bench|search-embed> [args]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (xtask's parent directory).
fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

fn run(cmd: &mut Command) -> Result {
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("could not start {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{:?} failed with {status}", cmd.get_program()))
    }
}

fn cargo() -> Command {
    let mut c = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// `cargo metadata` of the workspace's own packages (`--no-deps`), parsed.
fn workspace_metadata() -> Result<json::Json> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    json::parse(&String::from_utf8_lossy(&out.stdout))
}

/// Copies `files` from `peers/` into `dest` and returns whether anything changed
/// since the last successful install (recorded in `dest/.stamp`).
fn stage(dest: &Path, files: &[&str]) -> Result<bool> {
    stage_from(&root().join("peers"), dest, files)
}

/// [`stage`] from another folder of pins.
fn stage_from(pins: &Path, dest: &Path, files: &[&str]) -> Result<bool> {
    fs::create_dir_all(dest).map_err(|e| format!("create {}: {e}", dest.display()))?;
    let mut stamp = String::new();
    for f in files {
        let src = pins.join(f);
        let text = fs::read_to_string(&src).map_err(|e| format!("read {}: {e}", src.display()))?;
        fs::write(dest.join(f), &text).map_err(|e| format!("write {f}: {e}"))?;
        stamp.push_str(&text);
    }
    let old = fs::read_to_string(dest.join(".stamp")).unwrap_or_default();
    Ok(old != stamp)
}

fn mark_done(dest: &Path, files: &[&str]) -> Result {
    let mut stamp = String::new();
    for f in files {
        stamp.push_str(&fs::read_to_string(dest.join(f)).map_err(|e| e.to_string())?);
    }
    fs::write(dest.join(".stamp"), stamp).map_err(|e| e.to_string())
}

pub(crate) fn peers() -> Result {
    let base = root().join(".peers");
    let npm_files = ["package.json", "package-lock.json"];
    // The main npm peers, the catalog's (the reference filesystem
    // server, which the sandbox tests run confined), and mcp-remote (the
    // bridge the `bridge-bench` measures `mcp bridge` against).
    for (pins, npm_dir) in [
        (root().join("peers"), base.join("npm")),
        (root().join("peers/catalog"), base.join("catalog/npm")),
        (root().join("peers/mcp-remote"), base.join("mcp-remote/npm")),
    ] {
        if stage_from(&pins, &npm_dir, &npm_files)? || !npm_dir.join("node_modules").exists() {
            run(Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&npm_dir))?;
            mark_done(&npm_dir, &npm_files)?;
        }
    }
    // Two venvs: the Python SDK's servers (`py`) and FastMCP's (`fastmcp`),
    // which brings its own dependency set; one venv would let either move
    // the other's pins.
    venv(&base.join("py"), ["requirements.txt", "constraints.txt"])?;
    venv(
        &base.join("fastmcp"),
        ["fastmcp-requirements.txt", "fastmcp-constraints.txt"],
    )?;
    eprintln!("xtask: peers ready in {}", base.display());
    Ok(())
}

/// Creates (or re-creates, when `files` changed) the venv `dir` and installs
/// `files[0]` (the requirements) with every version pinned by `files[1]` (the
/// constraints), both from `peers/`. `$PYTHON` names the interpreter
/// (default `python3`).
fn venv(dir: &Path, files: [&str; 2]) -> Result {
    if !stage(dir, &files)? && dir.join("bin/python").exists() {
        return Ok(());
    }
    let python = env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(Command::new(&python)
        .args(["-m", "venv", "--clear"])
        .arg(dir))?;
    // --clear wiped the staged files; stage them again.
    stage(dir, &files)?;
    run(Command::new(dir.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(["-r", files[0], "-c", files[1]])
        .current_dir(dir))?;
    mark_done(dir, &files)
}

fn test(extra: &[String]) -> Result {
    peers()?;
    run(cargo()
        .args(["test", "--workspace"])
        .args(extra)
        .env("MCP_PEERS_DIR", root().join(".peers"))
        .env("MCP_REQUIRE_PEERS", "1"))
}

/// Each feature combination a dependent can pick, checked on its own (the
/// workspace build unifies features and would hide a missing `cfg`): every
/// library crate with its defaults, without them, and with each optional
/// feature. `mcp-tools --features rig` is built by the `--all-features`
/// test run in `ci`.
const FEATURE_BUILDS: &[&[&str]] = &[
    // wire types only; the message-framed adapter; the transport test
    // kit with its own tests (std only: the transports run it from their
    // tests, in `test`)
    &["-p", "mcpio-proto"],
    &["-p", "mcpio-proto", "--features", "framed"],
    &[
        "-p",
        "mcpio-proto",
        "--features",
        "test-kit",
        "--all-targets",
    ],
    &["-p", "mcpio-transport-stdio"],
    &["-p", "mcpio-transport-stdio", "--features", "sandbox"],
    // the launcher alone (no tokio); with the host side and its proxy
    &["-p", "mcpio-sandbox"],
    &["-p", "mcpio-sandbox", "--features", "host"],
    // the sans-IO session core only
    &["-p", "mcpio-client", "--no-default-features"],
    &["-p", "mcpio-client"],
    &["-p", "mcpio-client", "--features", "skills"],
    // the trace-context bridge; the duration histograms
    &["-p", "mcpio-client", "--features", "opentelemetry"],
    &["-p", "mcpio-client", "--features", "metrics"],
    // plain http:// only, no TLS stack
    &["-p", "mcpio-transport-http", "--no-default-features"],
    // https with the webpki roots (the default)
    &["-p", "mcpio-transport-http"],
    &["-p", "mcpio-transport-http", "--features", "native-roots"],
    // search by words alone (no word vectors); by words and meaning
    &["-p", "mcpio-tools", "--no-default-features"],
    &["-p", "mcpio-tools"],
    &["-p", "mcpio-tools", "--features", "jsonschema"],
    &["-p", "mcpio-host"],
    &["-p", "mcpio-host", "--features", "config"],
    &["-p", "mcpio-host", "--features", "stdio"],
    &["-p", "mcpio-host", "--features", "http"],
    &["-p", "mcpio-config", "--no-default-features"],
    &[
        "-p",
        "mcpio-config",
        "--no-default-features",
        "--features",
        "stdio",
    ],
    &[
        "-p",
        "mcpio-config",
        "--no-default-features",
        "--features",
        "http",
    ],
    &["-p", "mcpio-config"],
    // Codex's TOML and Goose's YAML, each alone
    &[
        "-p",
        "mcpio-config",
        "--no-default-features",
        "--features",
        "toml",
    ],
    &[
        "-p",
        "mcpio-config",
        "--no-default-features",
        "--features",
        "yaml",
    ],
    &["-p", "mcpio-auth"],
    &["-p", "mcpio-transport-http", "--features", "http2"],
];

fn feature_builds() -> Result {
    for args in FEATURE_BUILDS {
        run(cargo().arg("check").args(*args))?;
    }
    Ok(())
}

/// Clippy over every crate, target and feature, warnings denied: CI runs it
/// on the lock file and on the newest compatible dependencies.
const CLIPPY_ALL_FEATURES: &[&str] = &[
    "clippy",
    "--workspace",
    "--all-targets",
    "--all-features",
    "--",
    "-D",
    "warnings",
];

fn ci() -> Result {
    let mut stages = Stages::default();
    let result = ci_stages(&mut stages);
    stages.print();
    result
}

/// CI's stages in order, each timed by `stages`: the summary printed at the
/// end says where a run's minutes went (compiling dominates on a fresh machine).
fn ci_stages(stages: &mut Stages) -> Result {
    stages.run("fmt", || run(cargo().args(["fmt", "--all", "--check"])))?;
    stages.run("clippy", || {
        run(cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))?;
        // Optional features change types (rig-core's serde_json `preserve_order`
        // makes every JSON map larger): lint that build too.
        run(cargo().args(CLIPPY_ALL_FEATURES))
    })?;
    // What a user's own lock file gives: the newest compatible dependencies.
    stages.run("newest deps", newest::newest_deps)?;
    stages.run("feature builds", feature_builds)?;
    // Every crate packed and built from its packed files alone.
    stages.run("package", release::package)?;
    // Every test binary runs even after one fails: one CI run names every
    // failing test, not only those of the first failing crate.
    stages.run("tests", || test(&["--no-fail-fast".to_owned()]))?;
    stages.run("optional-feature tests", || {
        // Optional features that default builds skip: full JSON Schema
        // validation and the rig adapter (its test drives a real server
        // through rig).
        run(cargo()
            .args(["test", "-p", "mcpio-tools", "--all-features"])
            .env("MCP_PEERS_DIR", root().join(".peers"))
            .env("MCP_REQUIRE_PEERS", "1"))?;
        // The client's spans with both OpenTelemetry features (the workspace
        // run above has `opentelemetry` through mcp-cli, not `metrics`).
        run(cargo()
            .args([
                "test",
                "-p",
                "mcpio-client",
                "--features",
                "opentelemetry,metrics",
                "--test",
                "telemetry",
            ])
            .env("MCP_PEERS_DIR", root().join(".peers"))
            .env("MCP_REQUIRE_PEERS", "1"))?;
        // The stdio oversized answer comes from the demo server's chaos mode,
        // which only the `chaos` feature (never a release build) compiles in.
        run(cargo().args([
            "test",
            "-p",
            "mcpio-cli",
            "--features",
            "chaos",
            "--test",
            "oversized_answer",
        ]))?;
        // HTTP/2 by ALPN (the transport's optional `http2` feature).
        run(cargo().args([
            "test",
            "-p",
            "mcpio-transport-http",
            "--features",
            "http2",
            "--test",
            "tls",
        ]))
    })?;
    // The conformance suite: every client scenario at every revision it is
    // tagged with, one at a time, then both requirement sets in the suite's
    // own parallel mode.
    stages.run("conformance", || conformance::conformance(&[]))?;
    stages.run("soak", || soak::soak(&[]))?;
    stages.run("scaling", || scaling::scaling(&[]))?;
    stages.run("docs", docs::docs)?;
    stages.run("fuzz", || fuzz::fuzz(&["--seconds".into(), "30".into()]))
}

/// How long each CI stage took, in the order they ran.
#[derive(Default)]
struct Stages {
    done: Vec<(&'static str, std::time::Duration, bool)>,
}

impl Stages {
    /// Runs one stage and records its wall time and whether it passed.
    fn run(&mut self, name: &'static str, stage: impl FnOnce() -> Result) -> Result {
        let start = std::time::Instant::now();
        let result = stage();
        self.done.push((name, start.elapsed(), result.is_ok()));
        result
    }

    fn print(&self) {
        let total: std::time::Duration = self.done.iter().map(|(_, took, _)| *took).sum();
        eprintln!("\nxtask: ci stages (wall time)");
        for (name, took, passed) in &self.done {
            let verdict = if *passed { "" } else { "  FAILED" };
            eprintln!("  {name:<24} {:>7.1} s{verdict}", took.as_secs_f64());
        }
        eprintln!("  {:<24} {:>7.1} s", "total", total.as_secs_f64());
    }
}
