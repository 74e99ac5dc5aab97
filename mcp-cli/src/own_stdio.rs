//! This process's own stdin and stdout as a newline-delimited JSON-RPC
//! transport, for the stdio servers `mcp` runs itself (`bridge`, `replay`).
//!
//! On Unix, a pipe or a socket (what hosts give a server they spawn:
//! Python's `subprocess` a pipe, Node's `child_process` a socketpair) is
//! read and written by the runtime's own IO driver, in non-blocking mode:
//! no thread hand-off per read and per write. Anything else (a terminal, a
//! file) goes through tokio's `stdin()`/`stdout()`, which read and write on
//! the blocking pool.

use mcp_proto::transport::BoxTransport;
use mcp_transport_stdio::LineTransport;
use tokio::io::{AsyncRead, AsyncWrite};

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Stdin and stdout as a transport (`max_message_size`: the longest line
/// read; `None`: the transport's default). Call inside the runtime.
pub(crate) fn transport(max_message_size: Option<usize>) -> BoxTransport {
    let mut t = LineTransport::new(reader(), writer());
    if let Some(n) = max_message_size {
        t = t.with_max_message_size(n);
    }
    Box::pin(t)
}

#[cfg(unix)]
fn reader() -> Reader {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned();
    match fd.map(sys::Fd::open_read) {
        Ok(Some(r)) => r,
        _ => Box::new(tokio::io::stdin()),
    }
}

#[cfg(unix)]
fn writer() -> Writer {
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned();
    match fd.map(sys::Fd::open_write) {
        Ok(Some(w)) => w,
        _ => Box::new(tokio::io::stdout()),
    }
}

#[cfg(not(unix))]
fn reader() -> Reader {
    Box::new(tokio::io::stdin())
}

#[cfg(not(unix))]
fn writer() -> Writer {
    Box::new(tokio::io::stdout())
}

#[cfg(unix)]
mod sys {
    use std::os::fd::OwnedFd;
    use std::os::unix::fs::FileTypeExt;

    use super::{Reader, Writer};

    /// A duplicated stdio descriptor, opened the non-blocking way when it
    /// is a pipe or a socket.
    pub(super) struct Fd;

    fn kind(fd: &OwnedFd) -> Option<std::fs::FileType> {
        let file = std::fs::File::from(fd.try_clone().ok()?);
        Some(file.metadata().ok()?.file_type())
    }

    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let s = std::os::unix::net::UnixStream::from(fd);
        s.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(s).ok()
    }

    impl Fd {
        pub(super) fn open_read(fd: OwnedFd) -> Option<Reader> {
            let t = kind(&fd)?;
            if t.is_fifo() {
                let r = tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()?;
                return Some(Box::new(r));
            }
            if t.is_socket() {
                return Some(Box::new(socket(fd)?));
            }
            None
        }

        pub(super) fn open_write(fd: OwnedFd) -> Option<Writer> {
            let t = kind(&fd)?;
            if t.is_fifo() {
                let w = tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()?;
                return Some(Box::new(w));
            }
            if t.is_socket() {
                return Some(Box::new(socket(fd)?));
            }
            None
        }
    }
}
