//! MCP over a Unix-domain socket (newline-delimited JSON-RPC), written
//! through `mcp_proto::transport::halves` as a new transport's author
//! would: an `async fn` to send a message, one to receive one. The test
//! kit runs against it in `tests/unix_socket.rs`; `src/bin/unix_socket.rs`
//! uses it. (For any byte stream of JSON lines, `mcp_transport_stdio::LineTransport`
//! does the same with batched writes; this shows the adapter.)

use std::path::Path;

use mcp_proto::Message;
use mcp_proto::transport::halves::{Halves, RecvHalf, SendHalf};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// The longest line [`connect`] reads: 16 MiB. A longer one is skipped
/// (never held whole) and reported as a scoped `Decode` error.
pub const MAX_LINE: u64 = 16 << 20;

/// An MCP transport over a connected Unix socket.
pub type UnixTransport = Halves<Lines, LineReader>;

/// Connects to the MCP server listening on `path`.
pub async fn connect(path: impl AsRef<Path>) -> std::io::Result<UnixTransport> {
    Ok(wrap(UnixStream::connect(path).await?))
}

/// A connected socket (either end) as a transport.
pub fn wrap(stream: UnixStream) -> UnixTransport {
    let (r, w) = stream.into_split();
    Halves::new(Lines(w), LineReader(BufReader::new(r), Vec::new()))
}

/// Writes one message per line.
#[derive(Debug)]
pub struct Lines(OwnedWriteHalf);

impl SendHalf for Lines {
    async fn send(&mut self, msg: Message) -> Result<(), TransportError> {
        // In JSON a newline can only be whitespace: a space keeps one message per line.
        let line = msg.to_text().replace('\n', " ") + "\n";
        Ok(self.0.write_all(line.as_bytes()).await?) // io errors keep their kind
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        Ok(self.0.shutdown().await?) // the server reads the end of input
    }
}

/// Reads one message per line (and keeps the line's buffer).
#[derive(Debug)]
pub struct LineReader(BufReader<OwnedReadHalf>, Vec<u8>);

impl RecvHalf for LineReader {
    async fn recv(&mut self) -> Result<Option<Message>, TransportError> {
        let LineReader(r, line) = self;
        loop {
            line.clear();
            if (&mut *r).take(MAX_LINE + 1).read_until(b'\n', line).await? == 0 {
                return Ok(None); // the server closed the connection
            }
            if line.len() as u64 > MAX_LINE && !line.ends_with(b"\n") {
                // Too long: skip to its end, a limit's worth at a time, and say so.
                while !line.ends_with(b"\n") {
                    line.clear();
                    if (&mut *r).take(MAX_LINE).read_until(b'\n', line).await? == 0 {
                        break;
                    }
                }
                let why = format!("a line over {MAX_LINE} bytes was skipped");
                return Err(TransportError::new(TransportErrorKind::Decode, why));
            }
            if !line.trim_ascii().is_empty() {
                return Ok(Some(Message::from_slice(line)?)); // not JSON-RPC: a scoped error
            }
        }
    }
}
