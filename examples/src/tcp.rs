//! MCP over TCP: newline-delimited JSON-RPC on a socket, through
//! `mcp_transport_stdio::LineTransport`, which frames lines over any byte
//! stream's two halves. Nothing here is TCP-specific but the socket: the
//! same two lines make a transport of a Unix socket, a serial port or a
//! pipe. The test kit runs against it, with the kernel's default socket
//! buffers, in `tests/tcp.rs`; `src/bin/tcp.rs` uses it.

use mcp_transport_stdio::LineTransport;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpStream, ToSocketAddrs};

/// An MCP transport over a connected TCP socket.
pub type TcpTransport = LineTransport<OwnedReadHalf, OwnedWriteHalf>;

/// Connects to the MCP server listening on `addr`.
pub async fn connect(addr: impl ToSocketAddrs) -> std::io::Result<TcpTransport> {
    wrap(TcpStream::connect(addr).await?)
}

/// A connected socket (either end) as a transport. Nagle's algorithm is
/// off: a request is one small write, and waiting to coalesce it with the
/// next would add a round trip's delay to every call.
pub fn wrap(stream: TcpStream) -> std::io::Result<TcpTransport> {
    stream.set_nodelay(true)?;
    let (r, w) = stream.into_split();
    Ok(LineTransport::new(r, w))
}
