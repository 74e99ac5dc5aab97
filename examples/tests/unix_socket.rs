//! The Unix-socket transport (`examples::unix_socket`, written with
//! `mcp_proto::transport::halves`) against the transport test kit, with a
//! test server on a socket in a temporary directory; and the
//! `unix_socket` example end to end.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use examples::unix_socket::{MAX_LINE, UnixTransport, wrap};
use mcp_proto::transport::kit::{CheckFuture, Failure, Harness, Outcome, Peer, Profile};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};

/// A multi-thread runtime per check (the socket's IO runs on it).
fn block_on(check: CheckFuture<'_>) -> Result<Outcome, Failure> {
    tokio::runtime::Runtime::new().unwrap().block_on(check)
}

/// A fresh, empty directory under the system's temporary one.
fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcp-uds-kit-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The server's end of the socket, as the kit drives it: one line per frame.
struct SocketPeer {
    reader: Option<BufReader<OwnedReadHalf>>,
    writer: Option<OwnedWriteHalf>,
}

impl Peer for SocketPeer {
    async fn send(&mut self, mut text: String) {
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        text.push('\n');
        // A failed write is the transport's side gone: the kit sees that there.
        let _ = w.write_all(text.as_bytes()).await;
    }

    async fn recv(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.as_mut()?.read_line(&mut line).await {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end().to_owned()),
        }
    }

    async fn kill(&mut self) {
        self.reader = None;
        self.writer = None;
    }
}

/// A listener on `<temp dir>/mcp.sock` per check; the transport connects
/// to it, the accepted end is the peer, and the directory is removed once
/// both ends are connected.
struct Socket;

impl Harness for Socket {
    type Transport = UnixTransport;
    type Peer = SocketPeer;

    async fn connect(&self) -> (UnixTransport, SocketPeer) {
        let dir = temp_dir();
        let path = dir.join("mcp.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let (ours, theirs) = tokio::join!(UnixStream::connect(&path), listener.accept());
        std::fs::remove_dir_all(&dir).unwrap();
        let (r, w) = theirs.unwrap().0.into_split();
        let peer = SocketPeer {
            reader: Some(BufReader::new(r)),
            writer: Some(w),
        };
        (wrap(ours.unwrap()), peer)
    }

    fn profile(&self) -> Profile {
        // What the socket holds (Linux: its send buffer, net.core.wmem_default,
        // 208 KiB by default; measured 200 to 216 KiB of messages), a
        // quarter more for the kernel's accounting, then one message in
        // flight and the reader's 8 KiB buffer.
        let wmem = std::fs::read_to_string("/proc/sys/net/core/wmem_default")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(208 * 1024);
        let bound = wmem + wmem / 4 + 16 * 1024;
        Profile::new()
            .max_message_size(MAX_LINE as usize)
            .send_buffer_bound(bound)
            .recv_buffer_bound(bound)
    }
}

mcp_proto::transport_kit_tests!(Socket, block_on);

/// The example serves the demo server on a socket, connects through the
/// transport, lists the tools and calls one.
#[test]
fn the_unix_socket_example_lists_and_calls() {
    let out = Command::new(env!("CARGO_BIN_EXE_unix_socket"))
        .stdin(Stdio::null())
        .output()
        .expect("run unix_socket");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("with protocol 2026-07-28"), "{stdout}");
    assert!(stdout.contains("tool slow_sum"), "{stdout}");
    assert!(stdout.contains("echo: over a socket"), "{stdout}");
}

/// A line of exactly `MAX_LINE` bytes is a message; one byte more is
/// skipped with a scoped error, and the next line is read.
#[tokio::test]
async fn the_line_limit_is_exact() {
    use mcp_proto::transport::{TransportErrorKind, TransportExt};
    let (mut t, mut peer) = Socket.connect().await;
    let line = |len: usize| {
        let head = r#"{"jsonrpc":"2.0","method":"n","params":{"pad":""#;
        let pad = "k".repeat(len - head.len() - 3);
        format!("{head}{pad}\"}}}}")
    };
    let writer = tokio::spawn(async move {
        for len in [MAX_LINE as usize, MAX_LINE as usize + 1, 100] {
            peer.send(line(len)).await;
        }
        peer
    });
    let m = t.recv().await.unwrap().unwrap();
    assert_eq!(m.to_text().len(), MAX_LINE as usize);
    let e = t.recv().await.unwrap().unwrap_err();
    assert!(!e.is_terminal() && e.kind() == TransportErrorKind::Decode);
    assert_eq!(t.recv().await.unwrap().unwrap().to_text().len(), 100);
    drop(writer.await.unwrap());
    assert!(t.recv().await.is_none());
}

/// Many calls at once through a client: its driver keeps a receive in
/// flight while sends wait, and every answer arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_runs_many_calls_at_once_over_the_socket() {
    let dir = temp_dir();
    let path = dir.join("mcp.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (r, w) = stream.into_split();
        examples::demo_server::serve(r, w).await
    });
    let transport = examples::unix_socket::connect(&path).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let client = mcp_client::Client::builder("uds-test", "1")
        .connect(transport)
        .await
        .unwrap();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..200 {
        let client = client.clone();
        calls.spawn(async move {
            let text = format!("call {i} {}", "x".repeat(i * 50));
            let r = client
                .call_tool("echo", serde_json::json!({"text": text}))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some(text.as_str()));
        });
    }
    while let Some(r) = calls.join_next().await {
        r.unwrap();
    }
    client.close().await;
    server.await.unwrap().unwrap();
}
