//! What the `mcp` binary's tests share: running it with a deadline, and
//! finding the real peers (`cargo xtask peers`).

#![allow(dead_code)] // each test file uses some of these
#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod bridge;
#[cfg(unix)]
pub mod terminal;
#[allow(unused_imports)] // each test file uses some of these
pub use test_support::{KillOnDrop, PeerCommand, free_port, listening_blocking};

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
    // Tool pins of configured servers go to a file of this test binary's
    // own (keyed by config file, which each test makes afresh), not to the
    // user's; a test that follows pins across runs names its own.
    cmd.env("MCP_PINS_FILE", pins_file());
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

/// Where `mcp` keeps tool pins in these tests unless a test says otherwise.
pub fn pins_file() -> PathBuf {
    std::env::temp_dir().join(format!("mcp-cli-tests-pins-{}.json", std::process::id()))
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

/// `r` failed as the CLI contract says a failure does: exit status `code`
/// and one line on stderr, starting with `prefix`.
pub fn assert_one_line_error(r: &Run, code: i32, prefix: &str) {
    assert_code(r, code);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with(prefix), "{}", r.stderr);
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

/// The `--stdio` command line for server-everything, or `None` (with a skip
/// message) when the peer is not installed and not required.
pub fn everything_stdio() -> Option<String> {
    Some(test_support::everything()?.arg("stdio").shell_line())
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

/// `python <script>` (in `tests/peers/`) on the pinned Python SDK
/// (`.peers/py`), or `None` (with a skip message) when the peer is not
/// installed and not required.
pub fn python_peer(script: &str) -> Option<PeerCommand> {
    test_support::python_running(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peers")
            .join(script),
    )
}

/// [`python_peer`] as a `--stdio` command line.
pub fn python(script: &str) -> Option<String> {
    Some(python_peer(script)?.shell_line())
}
