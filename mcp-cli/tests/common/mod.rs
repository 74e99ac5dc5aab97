//! What the `mcp` binary's tests share: running it with a deadline, and
//! finding the real peers (`cargo xtask peers`).

#![allow(dead_code)] // each test file uses some of these
#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// Longest a single `mcp` run may take before the test kills it.
pub const RUN_DEADLINE: Duration = Duration::from_secs(60);

pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }

    /// The stderr lines that are not progress lines.
    pub fn error_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with("progress:"))
            .collect()
    }
}

pub fn mcp_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_mcp(Command::new(MCP), args, env)
}

/// Runs `mcp` in the directory `dir` (where it looks for project configs).
pub fn mcp_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(MCP);
    cmd.current_dir(dir);
    run_mcp(cmd, args, env)
}

fn run_mcp(mut cmd: Command, args: &[&str], env: &[(&str, &str)]) -> Run {
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("spawn mcp");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(RUN_DEADLINE) {
        Ok(out) => out.expect("wait for mcp"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("mcp {args:?} did not finish within {RUN_DEADLINE:?}");
        }
    };
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn mcp(args: &[&str]) -> Run {
    mcp_env(args, &[])
}

pub fn assert_code(r: &Run, code: i32) {
    assert_eq!(
        r.code,
        Some(code),
        "exit status\n--- stdout\n{}\n--- stderr\n{}",
        r.stdout,
        r.stderr
    );
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

pub fn temp_path(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!("mcp-cli-{name}-{}-{nanos}", std::process::id()))
}

#[cfg(unix)]
pub fn alive(pid: &str) -> bool {
    Command::new("kill")
        .args(["-0", pid])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

// ---- the reference server-everything over stdio ------------------------------

/// `(node, server-everything's script)`, or `None` (with a skip message)
/// when the peer is not installed and not required. The peers' own Node
/// (`npm/node_modules/.bin/node`) is preferred over the one in `PATH`.
pub fn everything() -> Option<(String, String)> {
    let peers = std::env::var_os("MCP_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"));
    let script =
        peers.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let bundled = peers.join("npm/node_modules/.bin/node");
    let node = if bundled.exists() {
        bundled.display().to_string()
    } else {
        "node".to_owned()
    };
    let node_ok = Command::new(&node)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if script.is_file() && node_ok {
        return Some((node, script.display().to_string()));
    }
    let why = if node_ok {
        format!("{} is missing", script.display())
    } else {
        "node is not installed".to_owned()
    };
    if std::env::var("MCP_REQUIRE_PEERS").as_deref() == Ok("1") {
        panic!(
            "server-everything is required (MCP_REQUIRE_PEERS=1) but {why}; run `cargo xtask peers`"
        );
    }
    eprintln!(
        "SKIP: server-everything not available ({why}); run `cargo xtask peers` to install it"
    );
    None
}

/// The `--stdio` command line for server-everything.
pub fn everything_stdio() -> Option<String> {
    let (node, script) = everything()?;
    Some(format!("'{node}' '{script}' stdio"))
}

/// Kills the child when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits for a line satisfying `want` on `rx`, up to `within`.
#[cfg(unix)]
pub fn wait_line(rx: &mpsc::Receiver<String>, within: Duration, want: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + within;
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the expected line from mcp");
        if want(&line) {
            return;
        }
    }
}

#[cfg(unix)]
pub fn wait_exit(child: &mut std::process::Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "mcp did not exit in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `--stdio` command line running `script` (in `tests/peers/`) on the
/// pinned Python SDK (`.peers/py`), or `None` (with a skip message) when the
/// peer is not installed and not required.
pub fn python(script: &str) -> Option<String> {
    let peers = std::env::var_os("MCP_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"));
    let python = peers.join("py/bin/python");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(script);
    if python.exists() {
        return Some(format!("'{}' '{}'", python.display(), script.display()));
    }
    if std::env::var("MCP_REQUIRE_PEERS").as_deref() == Ok("1") {
        panic!(
            "the Python SDK is required (MCP_REQUIRE_PEERS=1) but {} is missing; run `cargo xtask peers`",
            python.display()
        );
    }
    eprintln!("SKIP: the Python SDK is not installed; run `cargo xtask peers` to install it");
    None
}
