//! The filtering HTTP(S) proxy a host runs for one sandboxed server, on a
//! Unix socket in the server's private folder (the launcher bridges the
//! sandbox's loopback to it).
//!
//! It speaks the two forms clients send to an `HTTP_PROXY`: `CONNECT
//! host:port` (a tunnel, for https and anything else) and an absolute-form
//! request (`GET http://host/path`, plain http). The host named is checked
//! against the sandbox's domains *before* anything is resolved; the proxy
//! resolves it itself (the server has no DNS), and refuses a name that
//! resolves to a loopback or unspecified address unless the pattern that
//! allowed it names a loopback host (`localhost`, `127.0.0.1`), so a
//! public name pointed at `127.0.0.1` does not open the host's own
//! services. A refusal is an HTTP 403 whose body says why.
//!
//! Bounded: [`MAX_CONNECTIONS`] at once (more are closed), a request head
//! of at most [`MAX_HEAD`] bytes read within [`HEAD_TIMEOUT`], connecting
//! within [`CONNECT_TIMEOUT`], a tunnel closed after [`IDLE_TIMEOUT`]
//! without traffic, [`RELAY_BUFFER`] bytes buffered per direction.
//!
//! Needs the `host` feature.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout};

use crate::policy::Sandbox;

/// Connections served at once; more are closed unanswered.
pub const MAX_CONNECTIONS: usize = 64;
/// The longest request head (request line and headers) read.
pub const MAX_HEAD: usize = 16 * 1024;
/// How long the client has to send its request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long resolving and connecting to the destination may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A tunnel with no traffic either way for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Bytes buffered per direction of a tunnel.
pub const RELAY_BUFFER: usize = 16 * 1024;

/// A running proxy; dropping it stops it and every tunnel.
#[derive(Debug)]
pub(crate) struct Proxy {
    task: tokio::task::AbortHandle,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Listens on `socket` (created now) on the current tokio runtime.
    pub(crate) fn start(socket: &Path, rules: Arc<Sandbox>) -> io::Result<Proxy> {
        let rt = tokio::runtime::Handle::try_current()
            .map_err(|_| io::Error::other("the proxy needs a tokio runtime"))?;
        let listener = {
            let _guard = rt.enter();
            UnixListener::bind(socket)?
        };
        let task = rt.spawn(serve(listener, rules)).abort_handle();
        Ok(Proxy { task })
    }
}

async fn serve(listener: UnixListener, rules: Arc<Sandbox>) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // Dropped (and every tunnel aborted) when the proxy is.
    let mut tunnels = JoinSet::new();
    loop {
        let conn = match listener.accept().await {
            Ok((conn, _)) => conn,
            Err(e) => {
                tracing::debug!(error = %e, "sandbox proxy: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        while tunnels.try_join_next().is_some() {}
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tracing::warn!("sandbox proxy: {MAX_CONNECTIONS} connections open, one more refused");
            continue;
        };
        let rules = rules.clone();
        tunnels.spawn(async move {
            let _permit = permit;
            if let Err(e) = handle(conn, &rules).await {
                tracing::debug!(error = %e, "sandbox proxy: connection ended");
            }
        });
    }
}

/// What the client asked for.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// `CONNECT` (a tunnel) rather than a plain http request.
    tunnel: bool,
}

async fn handle(mut client: UnixStream, rules: &Sandbox) -> io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let end = timeout(HEAD_TIMEOUT, read_head(&mut client, &mut head))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "request head timed out"))??;
    let Some(end) = end else {
        return refuse(&mut client, 431, "the request head is too large").await;
    };
    let target = match parse_target(head.get(..end).unwrap_or_default()) {
        Ok(t) => t,
        Err(why) => return refuse(&mut client, 400, why).await,
    };
    let Some(pattern) = rules.matching_allowed(&target.host) else {
        tracing::info!(host = %target.host, "sandbox proxy: refused a host not in allowedDomains");
        let why = format!(
            "{} is not an allowed domain of this sandboxed server",
            target.host
        );
        return refuse(&mut client, 403, &why).await;
    };
    let loopback_ok = pattern.is_loopback();
    let mut upstream = match timeout(CONNECT_TIMEOUT, connect(&target, loopback_ok)).await {
        Ok(Ok(s)) => s,
        Ok(Err(why)) => return refuse(&mut client, 502, &why).await,
        Err(_) => return refuse(&mut client, 504, "connecting timed out").await,
    };
    if target.tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        // Bytes the client sent after the head (a TLS hello) go on.
        upstream
            .write_all(head.get(end..).unwrap_or_default())
            .await?;
    } else {
        upstream.write_all(&head).await?;
    }
    relay(client, upstream).await
}

/// Reads until the blank line ending the head; `Some(len)` of the head
/// (with its blank line), `None` past [`MAX_HEAD`].
async fn read_head(
    r: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
) -> io::Result<Option<usize>> {
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some(i + 4));
        }
        if buf.len() >= MAX_HEAD {
            return Ok(None);
        }
        let n = r.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
}

/// The destination of a request head: `CONNECT host:port HTTP/1.x`, or an
/// absolute-form `METHOD http://host[:port]/... HTTP/1.x`.
fn parse_target(head: &[u8]) -> Result<Target, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let line = text.lines().next().unwrap_or_default();
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err("malformed request line");
    };
    if !version.starts_with("HTTP/1.") {
        return Err("only HTTP/1.x requests are proxied");
    }
    let (authority, tunnel, default_port) = if method == "CONNECT" {
        (target, true, None)
    } else {
        let rest = target
            .strip_prefix("http://")
            .ok_or("expected CONNECT, or an absolute http:// URL")?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        (rest.get(..end).unwrap_or_default(), false, Some(80))
    };
    if authority.contains('@') {
        return Err("credentials in the URL are not proxied");
    }
    let (host, port) = split_authority(authority, default_port).ok_or("malformed host:port")?;
    Ok(Target {
        host: host.to_owned(),
        port,
        tunnel,
    })
}

/// `host:port`, `[v6]:port`, or a bare host when a default port applies.
fn split_authority(a: &str, default_port: Option<u16>) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = a.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        match after.strip_prefix(':') {
            Some(p) => (h, Some(p)),
            None if after.is_empty() => (h, None),
            None => return None,
        }
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default_port?,
    };
    (!host.is_empty()).then_some((host, port))
}

/// Resolves (the proxy, never the server, does DNS) and connects to the
/// first address that answers.
async fn connect(target: &Target, loopback_ok: bool) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((target.host.as_str(), target.port))
        .await
        .map_err(|e| format!("cannot resolve {}: {e}", target.host))?
        .filter(|a| loopback_ok || !(a.ip().is_loopback() || a.ip().is_unspecified()))
        .collect();
    if addrs.is_empty() {
        return Err(format!(
            "{} resolves to no address the sandbox may reach (a loopback address is reached only through a pattern naming it: localhost, 127.0.0.1)",
            target.host
        ));
    }
    let mut last = String::new();
    for a in addrs {
        match TcpStream::connect(a).await {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("cannot connect to {}:{}: {e}", target.host, target.port),
        }
    }
    Err(last)
}

async fn refuse(client: &mut UnixStream, status: u16, why: &str) -> io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        502 => "Bad Gateway",
        _ => "Gateway Timeout",
    };
    let body = format!("mcp-sandbox: {why}\n");
    let reply = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(reply.as_bytes()).await?;
    client.shutdown().await?;
    // A lingering close: what the client still sends is read (and dropped),
    // bounded, so that closing with it unread does not reset the
    // connection before the client has read the refusal.
    let mut sink = [0u8; 4096];
    let mut left = MAX_HEAD * 4;
    let _ = timeout(Duration::from_secs(1), async {
        while left > 0 {
            match client.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
    Ok(())
}

/// Copies both ways until both ends closed, or neither sent anything for
/// [`IDLE_TIMEOUT`].
async fn relay(client: UnixStream, upstream: TcpStream) -> io::Result<()> {
    let (mut cr, mut cw) = client.into_split();
    let (mut ur, mut uw) = upstream.into_split();
    let mut last = Instant::now();
    let (mut a, mut b) = (vec![0u8; RELAY_BUFFER], vec![0u8; RELAY_BUFFER]);
    let (mut client_open, mut upstream_open) = (true, true);
    while client_open || upstream_open {
        tokio::select! {
            r = cr.read(&mut a), if client_open => {
                client_open = forward(r, &a, &mut uw).await?;
            }
            r = ur.read(&mut b), if upstream_open => {
                upstream_open = forward(r, &b, &mut cw).await?;
            }
            () = tokio::time::sleep_until(last + IDLE_TIMEOUT) => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "tunnel idle"));
            }
        }
        last = Instant::now();
    }
    Ok(())
}

/// Writes what was read to `to` (bounded in time); `false` at end of input.
async fn forward(
    read: io::Result<usize>,
    buf: &[u8],
    to: &mut (impl AsyncWrite + Unpin),
) -> io::Result<bool> {
    let n = read?;
    if n == 0 {
        let _ = to.shutdown().await;
        return Ok(false);
    }
    timeout(IDLE_TIMEOUT, to.write_all(buf.get(..n).unwrap_or_default()))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "peer not reading"))??;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(head: &str) -> Result<Target, &'static str> {
        parse_target(head.as_bytes())
    }

    #[test]
    fn reads_both_proxy_request_forms() {
        assert_eq!(
            target("CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
            Ok(Target {
                host: "api.example.com".into(),
                port: 443,
                tunnel: true
            })
        );
        assert_eq!(
            target("GET http://localhost:8080/a?b HTTP/1.1\r\n\r\n"),
            Ok(Target {
                host: "localhost".into(),
                port: 8080,
                tunnel: false
            })
        );
        assert_eq!(
            target("GET http://example.com/ HTTP/1.0\r\n\r\n").map(|t| t.port),
            Ok(80)
        );
        assert_eq!(
            target("CONNECT [::1]:443 HTTP/1.1\r\n\r\n").map(|t| t.host),
            Ok("::1".into())
        );
        for bad in [
            "GET /relative HTTP/1.1\r\n\r\n",
            "GET https://x.example/ HTTP/1.1\r\n\r\n",
            "CONNECT example.com HTTP/1.1\r\n\r\n",
            "GET http://user@example.com/ HTTP/1.1\r\n\r\n",
            "CONNECT a.example:443 HTTP/2\r\n\r\n",
            "GARBAGE\r\n\r\n",
        ] {
            assert!(target(bad).is_err(), "{bad:?}");
        }
    }
}
