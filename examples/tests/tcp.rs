//! MCP over TCP (`examples::tcp`: `LineTransport` over a socket's halves)
//! against the transport test kit, with the kernel's default socket
//! buffers: Linux grows a socket's send buffer by itself while a
//! connection runs, and the kit must hold a correct transport to its
//! contract all the same. And the `tcp` example end to end.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};

use examples::tcp::{TcpTransport, wrap};
use mcp_proto::transport::kit::{CheckFuture, Failure, Harness, Outcome, Peer, Profile};
use mcp_transport_stdio::{DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_WRITE_BUFFER_LIMIT};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

/// A multi-thread runtime per check (the socket's IO runs on it).
fn block_on(check: CheckFuture<'_>) -> Result<Outcome, Failure> {
    tokio::runtime::Runtime::new().unwrap().block_on(check)
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

/// The most a socket's buffer of `kind` (`tcp_wmem`, `tcp_rmem`) may grow
/// to: the third of the kernel's three numbers (4 MiB and 6 MiB by
/// default, more on some systems).
fn socket_max(kind: &str) -> usize {
    std::fs::read_to_string(format!("/proc/sys/net/ipv4/{kind}"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(2)?.parse().ok())
        .unwrap_or(32 << 20)
}

/// A listener on a free loopback port per check; the transport connects to
/// it and the accepted end is the peer. Neither socket's buffers are set.
struct Tcp;

impl Harness for Tcp {
    type Transport = TcpTransport;
    type Peer = SocketPeer;

    async fn connect(&self) -> (TcpTransport, SocketPeer) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (ours, theirs) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let (r, w) = theirs.unwrap().0.into_split();
        let peer = SocketPeer {
            reader: Some(BufReader::new(r)),
            writer: Some(w),
        };
        (wrap(ours.unwrap()).unwrap(), peer)
    }

    fn profile(&self) -> Profile {
        // Sending: the transport's write buffer (one message may pass its
        // limit), then the sending socket's and the receiving socket's
        // buffers, each as large as the kernel lets it grow. Receiving: the
        // same sockets, the other way round, and one read of the transport.
        let sockets = socket_max("tcp_wmem") + socket_max("tcp_rmem");
        Profile::new()
            .max_message_size(DEFAULT_MAX_MESSAGE_SIZE)
            .send_buffer_bound(DEFAULT_WRITE_BUFFER_LIMIT + 16 * 1024 + sockets)
            .recv_buffer_bound(sockets + 64 * 1024 + 16 * 1024)
    }
}

mcp_proto::transport_kit_tests!(Tcp, block_on);

/// The example serves the demo server on a loopback port, connects through
/// the transport, lists the tools and calls one.
#[test]
fn the_tcp_example_lists_and_calls() {
    let out = Command::new(env!("CARGO_BIN_EXE_tcp"))
        .stdin(Stdio::null())
        .output()
        .expect("run tcp");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("with protocol 2026-07-28"), "{stdout}");
    assert!(stdout.contains("tool slow_sum"), "{stdout}");
    assert!(stdout.contains("echo: over TCP"), "{stdout}");
}
