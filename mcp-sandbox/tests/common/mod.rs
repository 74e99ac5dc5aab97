//! Shared by the sandbox tests: starting a server with or without a
//! sandbox through the real stdio transport, calling its tools, and small
//! loopback servers standing in for the outside world.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_client::Client;
use mcp_transport_stdio::sandbox::Sandbox;
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::Value;

/// The launcher built with these tests.
pub const LAUNCHER: &str = env!("CARGO_BIN_EXE_mcp-sandbox-launch");

/// `cmd`, confined by `sandbox` when given.
pub fn maybe_sandboxed(cmd: ServerCommand, sandbox: Option<&Sandbox>) -> ServerCommand {
    let cmd = cmd.stderr(Stderr::forward_to(|l| eprintln!("[server] {l}")));
    match sandbox {
        Some(s) => cmd.sandbox(s.clone().launcher(LAUNCHER)),
        None => cmd,
    }
}

/// Connects to `cmd` (with a sandbox when given).
pub async fn connect(cmd: ServerCommand, sandbox: Option<&Sandbox>) -> Client {
    let t = StdioTransport::spawn(maybe_sandboxed(cmd, sandbox)).unwrap();
    Client::builder("sandbox-test", "1")
        .request_timeout(Duration::from_secs(60))
        .connect(t)
        .await
        .unwrap()
}

/// The hostile server of `tests/hostile_server.py` on the pinned Python.
pub fn hostile() -> Option<ServerCommand> {
    let py = test_support::python()?;
    Some(ServerCommand::new(py).arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/hostile_server.py"
    )))
}

/// The text of a tool's result (all text blocks), and whether it is an error.
pub async fn call(client: &Client, tool: &str, args: Value) -> (String, bool) {
    let r = client.call_tool(tool, args).await.unwrap();
    let text: String = r
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n");
    (text, r.is_error.unwrap_or(false))
}

/// The hostile server's verdict for one tool: its text starts with "ok:"
/// or "denied:".
pub async fn attempt(client: &Client, tool: &str, args: Value) -> String {
    call(client, tool, args).await.0
}

/// A fresh folder, removed on drop.
pub struct Folder(test_support::SocketDir);

impl Folder {
    pub fn new() -> Self {
        Folder(test_support::SocketDir::new())
    }

    pub fn path(&self) -> PathBuf {
        let sock = self.0.path();
        sock.parent().unwrap().to_path_buf()
    }

    /// Creates `rel` (and its parents) with `text`; returns its path.
    pub fn file(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}

/// A one-page HTTP server on 127.0.0.1 (answers every request with
/// `200 hello from PORT` and closes); returns its port.
pub fn http_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.read(&mut buf);
            let body = format!("hello from {port}");
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// A UDP server on 127.0.0.1 answering every datagram with "ack".
pub fn udp_server() -> u16 {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut buf = [0u8; 100];
        while let Ok((_, from)) = sock.recv_from(&mut buf) {
            let _ = sock.send_to(b"ack", from);
        }
    });
    port
}

/// A Unix socket listener (accepting and dropping) at `dir/host.sock`.
pub fn unix_server(dir: &Path) -> PathBuf {
    let path = dir.join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || for _ in listener.incoming() {});
    path
}
