//! The transport test kit (`mcp_proto::transport::kit`) against this
//! crate's transports: [`LineTransport`] over `tokio::io::duplex`, and
//! [`StdioTransport`] with a real child process (a python relay between its
//! stdin/stdout and a TCP socket the test holds as the peer).
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Duration;

use mcp_proto::transport::kit::{CheckFuture, Failure, Outcome, Peer};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// A multi-thread runtime per check (the transports do IO on it).
fn block_on(check: CheckFuture<'_>) -> Result<Outcome, Failure> {
    tokio::runtime::Runtime::new().unwrap().block_on(check)
}

type Reader = BufReader<Box<dyn AsyncRead + Unpin + Send>>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// The other end of a newline-delimited byte stream.
struct LinePeer {
    reader: Option<Reader>,
    writer: Option<Writer>,
    /// The relay process, killed with the connection.
    pid: Option<u32>,
}

impl LinePeer {
    fn new(
        r: impl AsyncRead + Unpin + Send + 'static,
        w: impl AsyncWrite + Unpin + Send + 'static,
    ) -> Self {
        LinePeer {
            reader: Some(BufReader::with_capacity(64 * 1024, Box::new(r))),
            writer: Some(Box::new(w)),
            pid: None,
        }
    }
}

impl Peer for LinePeer {
    async fn send(&mut self, mut text: String) {
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        text.push('\n');
        // A failed write is the transport's side gone: the kit sees that there.
        let _ = w.write_all(text.as_bytes()).await;
        let _ = w.flush().await;
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
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// `LineTransport` over an in-memory pipe of 64 KiB each way.
mod line_over_duplex {
    use super::*;
    use mcp_proto::transport::kit::{Harness, Profile};
    use mcp_transport_stdio::LineTransport;
    use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

    const PIPE: usize = 64 * 1024;
    const MAX_MESSAGE: usize = 64 * 1024;
    const WRITE_LIMIT: usize = 256 * 1024;

    struct Duplex;

    impl Harness for Duplex {
        type Transport = LineTransport<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;
        type Peer = LinePeer;

        async fn connect(&self) -> (Self::Transport, LinePeer) {
            let (ours, theirs) = tokio::io::duplex(PIPE);
            let (r, w) = tokio::io::split(ours);
            let t = LineTransport::new(r, w)
                .with_max_message_size(MAX_MESSAGE)
                .with_write_buffer_limit(WRITE_LIMIT);
            let (r, w) = tokio::io::split(theirs);
            (t, LinePeer::new(r, w))
        }

        fn profile(&self) -> Profile {
            Profile::new()
                .max_message_size(MAX_MESSAGE)
                // The write buffer (one message past the limit) + the pipe.
                .send_buffer_bound(WRITE_LIMIT + PIPE + 16 * 1024)
                // Nothing is read unless polled: the pipe, plus one message.
                .recv_buffer_bound(PIPE + 16 * 1024)
        }
    }

    mcp_proto::transport_kit_tests!(Duplex, super::block_on);
}

/// `StdioTransport` with a real child: a python relay whose stdin and
/// stdout are bridged to a TCP connection back to the test, the peer.
#[cfg(unix)]
mod process {
    use super::*;
    use mcp_proto::transport::kit::{Harness, Profile};
    use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};

    /// Small socket buffers keep the backpressure bounds tight.
    const SOCKET_BUFFER: u32 = 64 * 1024;
    const WRITE_LIMIT: usize = 256 * 1024;
    const MAX_MESSAGE: usize = 64 * 1024;
    const GRACE: Duration = Duration::from_millis(300);

    const RELAY: &str = r#"
import os, socket, sys, threading
s = socket.socket()
for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
    s.setsockopt(socket.SOL_SOCKET, opt, int(sys.argv[2]))
s.connect(("127.0.0.1", int(sys.argv[1])))
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            s.shutdown(socket.SHUT_WR)
            os._exit(0)
        s.sendall(b)
threading.Thread(target=up, daemon=True).start()
while True:
    b = s.recv(65536)
    if not b:
        os._exit(0)
    while b:
        b = b[os.write(1, b):]
"#;

    fn python() -> &'static str {
        if std::path::Path::new("/usr/bin/python3").is_file() {
            "/usr/bin/python3"
        } else {
            "python3"
        }
    }

    struct Process;

    impl Harness for Process {
        type Transport = StdioTransport;
        type Peer = LinePeer;

        async fn connect(&self) -> (StdioTransport, LinePeer) {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.set_recv_buffer_size(SOCKET_BUFFER).unwrap();
            socket.set_send_buffer_size(SOCKET_BUFFER).unwrap();
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let port = socket.local_addr().unwrap().port();
            let listener = socket.listen(1).unwrap();
            let cmd = ServerCommand::new(python())
                .arg("-c")
                .arg(RELAY)
                .arg(port.to_string())
                .arg(SOCKET_BUFFER.to_string())
                .stderr(Stderr::discard())
                .max_message_size(MAX_MESSAGE)
                .write_buffer_limit(WRITE_LIMIT)
                .shutdown_timeouts(GRACE, GRACE);
            let t = StdioTransport::spawn(cmd).unwrap();
            let (sock, _) = tokio::time::timeout(Duration::from_secs(20), listener.accept())
                .await
                .expect("the relay did not connect within 20 s")
                .unwrap();
            let (r, w) = sock.into_split();
            let mut peer = LinePeer::new(r, w);
            peer.pid = t.pid();
            (t, peer)
        }

        fn profile(&self) -> Profile {
            // Each hop holds a little: the write buffer, the stdin pipe,
            // the relay's read, both sockets' buffers (Linux doubles them).
            let hops = WRITE_LIMIT + 64 * 1024 + 64 * 1024 + 4 * SOCKET_BUFFER as usize;
            Profile::new()
                .max_message_size(MAX_MESSAGE)
                .close_bound(2 * GRACE + Duration::from_secs(2))
                .send_buffer_bound(hops + 64 * 1024)
                .recv_buffer_bound(hops + 64 * 1024)
        }
    }

    mcp_proto::transport_kit_tests!(Process, super::block_on);
}
