//! The transport's own connection pool: a connection the server closed
//! while idle is not reused, and a custom `Connector` opens every
//! connection.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_proto::jsonrpc::{Message, Request};
use mcp_proto::transport::TransportExt;
use mcp_transport_http::{BoxFuture, Connected, Connector, HttpTransport};
use serde_json::json;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

async fn ping(t: &mut HttpTransport, id: i64) {
    t.send(Request::new(id.into(), "ping", None).into())
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .expect("an answer in time")
        .unwrap()
        .unwrap();
    let Message::Response(r) = m else {
        panic!("{m:?}")
    };
    assert_eq!(r.id, id.into());
}

/// A server that answers one request per connection with a keep-alive
/// response (no `Connection: close`), then closes the connection, as a
/// server whose keep-alive timeout ran out does.
async fn one_answer_per_connection() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers, then the Content-Length body.
                let body_start = loop {
                    let n = s.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "client closed before a whole request");
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map(|v| v.trim().parse().unwrap())
                    .unwrap_or(0);
                while buf.len() < body_start + len {
                    let n = s.read(&mut chunk).await.unwrap();
                    assert!(n > 0);
                    buf.extend_from_slice(&chunk[..n]);
                }
                let req: serde_json::Value =
                    serde_json::from_slice(&buf[body_start..body_start + len]).unwrap();
                let body = json!({"jsonrpc": "2.0", "id": req["id"], "result": {}}).to_string();
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                s.write_all(resp.as_bytes()).await.unwrap();
                // Keep-alive "expired" once the client has pooled the
                // connection: close without a word.
                tokio::time::sleep(Duration::from_millis(30)).await;
            });
        }
    });
    (url, accepted)
}

#[tokio::test]
async fn a_connection_the_server_closed_while_idle_is_not_reused() {
    let (url, accepted) = one_answer_per_connection().await;
    let mut t = HttpTransport::new(&url).unwrap();
    for id in 1..=3 {
        ping(&mut t, id).await;
        // Let the close reach the client's pooled connection.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

/// Connects to a fixed address whatever the URL says, and counts.
struct FixedAddr {
    addr: String,
    opened: Arc<AtomicUsize>,
}

impl Connector for FixedAddr {
    fn connect(&self, url: &http::Uri) -> BoxFuture<'static, std::io::Result<Connected>> {
        assert_eq!(url.host(), Some("mcp.invalid"));
        self.opened.fetch_add(1, Ordering::SeqCst);
        let addr = self.addr.clone();
        Box::pin(async move {
            let s = tokio::net::TcpStream::connect(addr).await?;
            Ok(Connected::new(s))
        })
    }
}

#[tokio::test]
async fn a_custom_connector_opens_every_connection() {
    let server =
        serve(|r: &Rec| Reply::Json(http::StatusCode::OK, result(&r.id(), json!({}))).into()).await;
    let opened = Arc::new(AtomicUsize::new(0));
    let mut t = HttpTransport::builder("http://mcp.invalid/mcp")
        .connector(FixedAddr {
            addr: format!("127.0.0.1:{}", server.port),
            opened: opened.clone(),
        })
        .build()
        .unwrap();
    for i in 0..3 {
        ping(&mut t, i).await;
    }
    // Sequential requests: one connection, kept alive.
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert_eq!(server.connections(), 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs.iter().all(|r| r.header("host") == Some("mcp.invalid")));
    assert!(reqs.iter().all(|r| r.path == "/mcp"));
}
