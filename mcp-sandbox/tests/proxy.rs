//! The host's proxy on its own: its refusals and its bounds.

#![cfg(all(target_os = "linux", feature = "host"))]
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mcp_sandbox::proxy::{MAX_CONNECTIONS, MAX_HEAD};
use mcp_sandbox::{Running, Sandbox};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_mcp-sandbox-launch");

fn proxy(sandbox: Sandbox) -> Running {
    let confined = sandbox
        .launcher(LAUNCHER)
        .prepare("true".as_ref(), &[])
        .unwrap();
    assert!(confined.running.has_proxy());
    confined.running
}

async fn ask(running: &Running, request: &[u8]) -> String {
    let mut s = UnixStream::connect(running.dir().join("proxy.sock"))
        .await
        .unwrap();
    s.write_all(request).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut reply))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&reply).into_owned()
}

#[tokio::test]
async fn refusals_say_why() {
    let running = proxy(
        Sandbox::new()
            .allow_domain("*.example.com")
            .unwrap()
            .deny_domain("evil.example.com")
            .unwrap()
            .allow_domain("public.test")
            .unwrap(),
    );
    let r = ask(&running, b"CONNECT other.org:443 HTTP/1.1\r\n\r\n").await;
    assert!(
        r.starts_with("HTTP/1.1 403 ") && r.contains("other.org is not an allowed domain"),
        "{r}"
    );
    let r = ask(&running, b"CONNECT evil.example.com:443 HTTP/1.1\r\n\r\n").await;
    assert!(r.starts_with("HTTP/1.1 403 "), "{r}");
    let r = ask(&running, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n").await;
    assert!(
        r.starts_with("HTTP/1.1 403 "),
        "the apex is not under *.example.com: {r}"
    );
    let r = ask(&running, b"GET /relative HTTP/1.1\r\n\r\n").await;
    assert!(r.starts_with("HTTP/1.1 400 "), "{r}");
    let big = format!(
        "GET http://a.example.com/ HTTP/1.1\r\nX: {}\r\n",
        "y".repeat(MAX_HEAD)
    );
    let r = ask(&running, big.as_bytes()).await;
    assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
}

#[tokio::test]
async fn a_loopback_address_needs_a_pattern_naming_it() {
    // `127.1` is an allowed name that resolves to 127.0.0.1 without naming
    // a loopback host the way a pattern does: refused, as a public name
    // pointed at loopback would be. `localhost` itself is reached.
    let running = proxy(
        Sandbox::new()
            .allow_domain("127.1")
            .unwrap()
            .allow_domain("localhost")
            .unwrap(),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let r = ask(
        &running,
        format!("CONNECT 127.1:{port} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(
        r.starts_with("HTTP/1.1 502 ") && r.contains("loopback"),
        "{r}"
    );
    let mut s = UnixStream::connect(running.dir().join("proxy.sock"))
        .await
        .unwrap();
    s.write_all(format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let want = b"HTTP/1.1 200 Connection Established\r\n\r\n";
    let mut got = vec![0u8; want.len()];
    s.read_exact(&mut got).await.unwrap();
    assert_eq!(&got[..], &want[..]);
}

#[tokio::test]
async fn connections_beyond_the_limit_are_closed() {
    let running = proxy(Sandbox::new().allow_domain("a.example.com").unwrap());
    let socket = running.dir().join("proxy.sock");
    // Each holds a slot while the proxy waits for its request head.
    let mut held = Vec::new();
    for _ in 0..MAX_CONNECTIONS {
        let mut s = UnixStream::connect(&socket).await.unwrap();
        s.write_all(b"CONNECT a.exa").await.unwrap();
        held.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = UnixStream::connect(&socket).await.unwrap();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(5), extra.read(&mut buf))
        .await
        .unwrap()
        .unwrap_or(0);
    assert_eq!(n, 0, "closed unanswered");
    drop(held);
}
