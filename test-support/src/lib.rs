//! What the workspace's tests share: a free loopback port, starting a peer
//! and waiting (bounded) until it listens, and finding the real peers that
//! `cargo xtask peers` installs (server-everything on the peers' Node, the
//! pinned Python SDK running `peers/python_server.py` or a crate's own
//! script).
//!
//! A dev-dependency only (`publish = false`): no library crate depends on
//! it, so nothing here reaches a user of the workspace's crates.
//!
//! [`assert_causes_once`] checks the workspace's error rule (each level's
//! `Display` is its own part; see `mcp_proto::error`) over a whole chain.
//!
//! Missing peers follow [`mcp_proto::testing`]: the helper prints a skip
//! message and returns `None`, unless `MCP_REQUIRE_PEERS=1` (set by
//! `cargo xtask test` and CI), where a missing peer panics.
//!
//! ```no_run
//! # async fn demo() {
//! let Some(everything) = test_support::everything() else {
//!     return; // not installed: skipped
//! };
//! let port = test_support::free_port();
//! let mut cmd = everything.arg("streamableHttp").to_tokio();
//! cmd.env("PORT", port.to_string());
//! let _server = test_support::listening(cmd, port).await;
//! let url = format!("http://127.0.0.1:{port}/mcp");
//! # let _ = url;
//! # }
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

pub use mcp_proto::testing::{assert_causes_once, peer, peers_dir, peers_required};

mod driver_only;
pub use driver_only::DriverOnly;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
pub mod scaling;

/// How long [`listening`] and [`listening_blocking`] wait for a started peer
/// to accept a connection: generous, the machine's cores are shared.
pub const LISTEN_DEADLINE: Duration = Duration::from_secs(60);

/// How often the wait for a listening peer tries to connect.
const LISTEN_POLL: Duration = Duration::from_millis(50);

/// The workspace root (where `Cargo.lock`, `peers/` and `.peers/` are).
pub fn workspace_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// A loopback TCP port that was free a moment ago, for a peer that takes
/// its port on the command line.
///
/// The port is released before the peer binds it; should another process
/// take it in between, the peer fails to bind and exits, and [`listening`]
/// reports that exit instead of waiting.
///
/// # Panics
///
/// When the loopback interface has no free port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Where a started peer's stderr goes: discarded, or this process's stderr
/// when `PEER_STDERR` is set (to see why a peer misbehaves).
fn peer_stderr() -> Stdio {
    if std::env::var_os("PEER_STDERR").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// Starts `cmd` (stdout discarded, stderr as `PEER_STDERR` says, killed when
/// the returned child drops) and waits until something accepts on
/// `127.0.0.1:port`.
///
/// # Panics
///
/// When the peer does not start, exits before it listens, or does not
/// listen within [`LISTEN_DEADLINE`].
pub async fn listening(cmd: tokio::process::Command, port: u16) -> tokio::process::Child {
    let connect = || async move { tokio::net::TcpStream::connect(("127.0.0.1", port)).await };
    accepting(cmd, &format!("port {port}"), connect).await
}

/// [`listening`] for a peer that serves on the Unix socket `path`.
///
/// # Panics
///
/// As [`listening`].
#[cfg(unix)]
pub async fn listening_on_socket(
    cmd: tokio::process::Command,
    path: &Path,
) -> tokio::process::Child {
    let connect = || async move { tokio::net::UnixStream::connect(path).await };
    accepting(cmd, &format!("socket {}", path.display()), connect).await
}

/// Starts `cmd` and polls `connect` until it succeeds.
async fn accepting<F, Fut, S>(
    mut cmd: tokio::process::Command,
    on: &str,
    connect: F,
) -> tokio::process::Child
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = std::io::Result<S>>,
{
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(peer_stderr())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("could not start peer {:?}: {e}", cmd.as_std()));
    let deadline = tokio::time::Instant::now() + LISTEN_DEADLINE;
    loop {
        if connect().await.is_ok() {
            return child;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "peer {:?} exited with {status} before it listened on {on}",
                cmd.as_std()
            );
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "peer {:?} did not listen on {on} within {LISTEN_DEADLINE:?}",
            cmd.as_std()
        );
        tokio::time::sleep(LISTEN_POLL).await;
    }
}

/// A fresh directory for a test's Unix socket (`mcp.sock` in it), removed
/// with everything in it on drop. Under the system's temporary directory,
/// with a short name: a socket path must fit in `sun_path` (108 bytes on
/// Linux, 104 on macOS).
#[derive(Debug)]
pub struct SocketDir(PathBuf);

impl SocketDir {
    /// A new, empty directory.
    ///
    /// # Panics
    ///
    /// When it cannot be created.
    pub fn new() -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        SocketDir(dir)
    }

    /// The socket's path: `mcp.sock` in the directory.
    pub fn path(&self) -> PathBuf {
        self.0.join("mcp.sock")
    }

    /// The socket's Streamable HTTP URL, `unix:///…/mcp.sock#/mcp`.
    pub fn url(&self) -> String {
        format!("unix://{}#/mcp", self.path().display())
    }
}

impl Default for SocketDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// [`listening`] for tests without a runtime: starts `cmd` and blocks until
/// something accepts on `127.0.0.1:port`. The peer is killed (and reaped)
/// when the returned guard drops.
///
/// # Panics
///
/// As [`listening`].
pub fn listening_blocking(cmd: std::process::Command, port: u16) -> KillOnDrop {
    let connect = || std::net::TcpStream::connect(("127.0.0.1", port)).map(drop);
    accepting_blocking(cmd, &format!("port {port}"), connect)
}

/// [`listening_blocking`] for a peer that serves on the Unix socket `path`.
///
/// # Panics
///
/// As [`listening`].
#[cfg(unix)]
pub fn listening_on_socket_blocking(cmd: std::process::Command, path: &Path) -> KillOnDrop {
    let connect = || std::os::unix::net::UnixStream::connect(path).map(drop);
    accepting_blocking(cmd, &format!("socket {}", path.display()), connect)
}

/// Starts `cmd` and polls `connect` until it succeeds, blocking.
fn accepting_blocking(
    mut cmd: std::process::Command,
    on: &str,
    connect: impl Fn() -> std::io::Result<()>,
) -> KillOnDrop {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(peer_stderr())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start peer {cmd:?}: {e}"));
    let mut child = KillOnDrop(child);
    let deadline = Instant::now() + LISTEN_DEADLINE;
    while connect().is_err() {
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!("peer {cmd:?} exited with {status} before it listened on {on}");
        }
        assert!(
            Instant::now() < deadline,
            "peer {cmd:?} did not listen on {on} within {LISTEN_DEADLINE:?}"
        );
        std::thread::sleep(LISTEN_POLL);
    }
    child
}

/// A child process that is killed and reaped when this guard drops.
#[derive(Debug)]
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A real peer's command line: a program and its arguments, for the test to
/// turn into whatever command type it starts servers with
/// (`ServerCommand::new(&c.program).args(&c.args)`, [`Self::to_tokio`],
/// [`Self::shell_line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerCommand {
    /// The program (an absolute path, or a name looked up in `PATH`).
    pub program: PathBuf,
    /// Its arguments, in order.
    pub args: Vec<OsString>,
}

impl PeerCommand {
    /// Appends an argument (a peer's mode: `stdio`, `streamableHttp`, a port).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// As a `std::process::Command`.
    pub fn to_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args);
        cmd
    }

    /// As a `tokio::process::Command`.
    pub fn to_tokio(&self) -> tokio::process::Command {
        tokio::process::Command::from(self.to_std())
    }

    /// The program and its arguments as UTF-8 strings (lossy), for a
    /// configuration file's `command` and `args`.
    pub fn to_strings(&self) -> (String, Vec<String>) {
        (
            self.program.to_string_lossy().into_owned(),
            self.args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        )
    }

    /// The program and arguments as one line of single-quoted shell words
    /// (`'node' '/…/index.js' 'stdio'`), for a command line that takes one
    /// (the CLI's `--stdio`). Paths with a `'` are not supported.
    ///
    /// # Panics
    ///
    /// When a word contains a single quote.
    pub fn shell_line(&self) -> String {
        std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(|w| {
                let w = w.to_string_lossy();
                assert!(!w.contains('\''), "cannot quote {w:?} for a shell line");
                format!("'{w}'")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The Node to run the npm peers with: the peers' own
/// (`npm/node_modules/.bin/node`, the version they were installed for) when
/// present, else `node` from `PATH`.
pub fn node() -> PathBuf {
    let bundled = peers_dir().join("npm/node_modules/.bin/node");
    if bundled.is_file() {
        bundled
    } else {
        PathBuf::from("node")
    }
}

/// `node <server-everything's dist/index.js>` (append the mode: `stdio`,
/// `streamableHttp`), or `None` (after a skip message) when it is not
/// installed.
///
/// # Panics
///
/// When it is missing and [`peers_required`].
pub fn everything() -> Option<PeerCommand> {
    let script = peer("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")?;
    Some(PeerCommand {
        program: node(),
        args: vec![script.into()],
    })
}

/// `node <server-filesystem's dist/index.js>` (the reference filesystem
/// server, pinned in `peers/catalog/`, installed in `.peers/catalog/npm`;
/// append the folders it may serve), or `None` (after a skip message) when
/// it is not installed.
///
/// # Panics
///
/// When it is missing and [`peers_required`].
pub fn filesystem_server() -> Option<PeerCommand> {
    let script =
        peer("catalog/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")?;
    Some(PeerCommand {
        program: node(),
        args: vec![script.into()],
    })
}

/// `node <peers/tasks_server.mjs>`: a 2026-07-28 server with the tasks
/// extension (SEP-2663) built on the pinned TypeScript SDK
/// (`@modelcontextprotocol/server`) and the extension's schemas
/// (`@modelcontextprotocol/ext-tasks`); append `--http <port>` for
/// Streamable HTTP (default: stdio). See the script for its tools. `None`
/// (after a skip message) when the packages are not installed.
///
/// Node resolves the script's imports from the script's own folder, so it
/// runs from a copy in a folder of the temporary directory (one per
/// workspace) whose `node_modules` links to the installed peers: nothing is
/// written into the shared peers folder.
///
/// # Panics
///
/// When the packages are missing and [`peers_required`], or the copy
/// cannot be made.
pub fn tasks_server() -> Option<PeerCommand> {
    peer("npm/node_modules/@modelcontextprotocol/ext-tasks/package.json")?;
    let modules = peer("npm/node_modules/@modelcontextprotocol/server/package.json")?
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)?;
    let workspace = workspace_dir();
    let tag: u64 = workspace
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        });
    let dir = std::env::temp_dir().join(format!("mcp-tasks-peer-{tag:016x}"));
    std::fs::create_dir_all(&dir).expect("the tasks peer's folder");
    let link = dir.join("node_modules");
    if std::fs::read_link(&link).ok().as_deref() != Some(modules.as_path()) {
        let _ = std::fs::remove_file(&link);
        #[cfg(unix)]
        if let Err(e) = std::os::unix::fs::symlink(&modules, &link) {
            assert!(
                e.kind() == std::io::ErrorKind::AlreadyExists,
                "{link:?}: {e}"
            );
        }
    }
    // Copied whole, then renamed: a test running at the same time never
    // starts a half-written script. The part's name is this copy's alone
    // (tests of one binary share the process id).
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let copy = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let script = dir.join("tasks_server.mjs");
    let part = dir.join(format!("tasks_server.mjs.{}.{copy}", std::process::id()));
    std::fs::copy(workspace.join("peers/tasks_server.mjs"), &part).expect("copy tasks_server.mjs");
    std::fs::rename(&part, &script).expect("place tasks_server.mjs");
    Some(PeerCommand {
        program: node(),
        args: vec![script.into()],
    })
}

/// The pinned Python SDK's interpreter (`py/bin/python`, a venv), or `None`
/// (after a skip message) when it is not installed.
///
/// # Panics
///
/// When it is missing and [`peers_required`].
pub fn python() -> Option<PathBuf> {
    peer("py/bin/python")
}

/// `python <script>` on the pinned Python SDK (a crate's own server script:
/// pass `concat!(env!("CARGO_MANIFEST_DIR"), "/tests/…")`), or `None` as
/// [`python`].
pub fn python_running(script: impl Into<PathBuf>) -> Option<PeerCommand> {
    Some(PeerCommand {
        program: python()?,
        args: vec![script.into().into()],
    })
}

/// `python peers/python_server.py` (the workspace's Python SDK server;
/// append the mode: `stdio`, `http <port>`, …), or `None` as [`python`].
pub fn python_server() -> Option<PeerCommand> {
    python_running(workspace_dir().join("peers/python_server.py"))
}

/// `python peers/fastmcp_server.py` on the pinned FastMCP venv
/// (`fastmcp/bin/python`, FastMCP with its tasks extra; append the mode:
/// `stdio`, `http <port>`), or `None` (after a skip message) when it is not
/// installed. See the script for its tools.
///
/// # Panics
///
/// When it is missing and [`peers_required`].
pub fn fastmcp_server() -> Option<PeerCommand> {
    Some(PeerCommand {
        program: peer("fastmcp/bin/python")?,
        args: vec![workspace_dir().join("peers/fastmcp_server.py").into()],
    })
}

/// `python peers/fastmcp_apps.py` on the pinned FastMCP venv: a server
/// using MCP Apps through FastMCP's own support (a UI resource, an
/// app-only tool, a model-only one; append `stdio`), or `None` as
/// [`fastmcp_server`]. See the script for its tools.
///
/// # Panics
///
/// When it is missing and [`peers_required`].
pub fn fastmcp_apps() -> Option<PeerCommand> {
    Some(PeerCommand {
        program: peer("fastmcp/bin/python")?,
        args: vec![workspace_dir().join("peers/fastmcp_apps.py").into()],
    })
}

/// `python -m uvicorn --uds <path> … python_server:socket_app`: the
/// workspace's Python SDK server ([`python_server`]) served by uvicorn on
/// the Unix socket `path`, at `unix://<path>#/mcp`, or `None` as
/// [`python`]. Start it with [`listening_on_socket`].
pub fn python_socket_server(path: &Path) -> Option<PeerCommand> {
    let peers = workspace_dir().join("peers");
    Some(PeerCommand {
        program: python()?,
        args: vec![
            "-m".into(),
            "uvicorn".into(),
            "--uds".into(),
            path.into(),
            "--app-dir".into(),
            peers.into(),
            "--factory".into(),
            "python_server:socket_app".into(),
        ],
    })
}

/// A request's params as JSON (`Null` when it has none), for a test's
/// in-memory fake server.
///
/// # Panics
///
/// When the params are not JSON (a `RawJson` always is).
pub fn params(req: &mcp_proto::Request) -> serde_json::Value {
    req.params.as_ref().map_or(serde_json::Value::Null, |p| {
        serde_json::from_str(p.get()).expect("RawJson holds JSON")
    })
}

/// Polls `cond` every 20 ms for up to `within`; whether it came true. For
/// what happens in the background (a process exiting, a POST the transport
/// started, a stream it dropped): a fixed sleep is too short on a machine
/// whose cores are busy.
pub async fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_line_quotes_each_word() {
        let c = PeerCommand {
            program: "/usr/bin/node".into(),
            args: vec!["/a b/index.js".into()],
        }
        .arg("stdio");
        assert_eq!(c.shell_line(), "'/usr/bin/node' '/a b/index.js' 'stdio'");
        assert_eq!(
            c.to_strings(),
            (
                "/usr/bin/node".into(),
                vec!["/a b/index.js".into(), "stdio".into()]
            )
        );
    }

    #[test]
    fn the_workspace_dir_holds_the_peer_scripts() {
        assert!(workspace_dir().join("peers/python_server.py").is_file());
    }

    #[test]
    #[should_panic(expected = "exited with")]
    fn listening_blocking_reports_a_peer_that_exits_early() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "exit 3"]);
        drop(listening_blocking(cmd, free_port()));
    }
}
