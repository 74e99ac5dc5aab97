//! The server's only way out: a TCP listener on the sandbox's own
//! loopback, each connection relayed to the host's proxy over its Unix
//! socket (a socket file crosses network namespaces). The proxy decides
//! what may be reached; this only carries bytes.

use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Connections relayed at once; more are closed at once (the proxy has its
/// own, lower, limit).
pub(super) const MAX_BRIDGED: usize = 128;

/// Binds `127.0.0.1:0` and relays on a thread; returns the port.
pub(super) fn start(proxy: &Path) -> Result<u16, String> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| format!("binding the proxy bridge on 127.0.0.1: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("the proxy bridge's port: {e}"))?
        .port();
    let proxy = proxy.to_path_buf();
    let active = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("mcp-sandbox-bridge".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                if active.load(Ordering::Relaxed) >= MAX_BRIDGED {
                    continue;
                }
                let _ = spawn_relay(stream, proxy.clone(), active.clone());
            }
        })
        .map_err(|e| format!("starting the proxy bridge: {e}"))?;
    Ok(port)
}

/// Decrements the count when both directions are done.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn spawn_relay(tcp: TcpStream, proxy: PathBuf, active: Arc<AtomicUsize>) -> io::Result<()> {
    active.fetch_add(1, Ordering::Relaxed);
    let slot = Arc::new(Slot(active));
    let unix = UnixStream::connect(&proxy)?;
    let (mut tcp_in, mut unix_out) = (tcp.try_clone()?, unix.try_clone()?);
    let (mut unix_in, mut tcp_out) = (unix, tcp);
    let up = slot.clone();
    std::thread::Builder::new().spawn(move || {
        let _slot = up;
        let _ = io::copy(&mut tcp_in, &mut unix_out);
        let _ = unix_out.shutdown(Shutdown::Write);
    })?;
    std::thread::Builder::new().spawn(move || {
        let _slot = slot;
        let _ = io::copy(&mut unix_in, &mut tcp_out);
        let _ = tcp_out.shutdown(Shutdown::Write);
    })?;
    Ok(())
}
