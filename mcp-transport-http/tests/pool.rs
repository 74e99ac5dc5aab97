//! The transport's own connection pool: a connection the server closed
//! while idle is not reused, and a custom `Connector` opens every
//! connection.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_proto::jsonrpc::{Message, Request};
use mcp_proto::transport::{Transport, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::{BoxFuture, Connected, Connector, HttpTransport};
use serde_json::json;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

async fn ping(t: &mut HttpTransport, id: i64) {
    call(t, id, "ping").await;
}

/// Sends a `method` request and checks that its answer comes back.
async fn call(t: &mut HttpTransport, id: i64, method: &'static str) {
    t.send(Request::new(id.into(), method, None).into())
        .await
        .unwrap();
    assert_eq!(answer(t).await, id.into());
}

/// The id of the next answer (within 10 s).
async fn answer(t: &mut HttpTransport) -> mcp_proto::RequestId {
    let m = tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .expect("an answer in time")
        .unwrap()
        .unwrap();
    let Message::Response(r) = m else {
        panic!("{m:?}")
    };
    r.id
}

/// A server that answers one request per connection with a keep-alive
/// response (no `Connection: close`), then closes the connection, as a
/// server whose keep-alive timeout ran out does. The receiver hears of
/// each close once the socket is closed.
async fn one_answer_per_connection() -> (
    String,
    Arc<AtomicUsize>,
    tokio::sync::mpsc::UnboundedReceiver<()>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let (closed, closes) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let closed = closed.clone();
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
                drop(s);
                let _ = closed.send(());
            });
        }
    });
    (url, accepted, closes)
}

#[tokio::test]
async fn a_connection_the_server_closed_while_idle_is_not_reused() {
    let (url, accepted, mut closes) = one_answer_per_connection().await;
    let mut t = HttpTransport::new(&url).unwrap();
    for id in 1..=3 {
        ping(&mut t, id).await;
        // Once the server closed it, let the client's connection task see
        // the end of the stream: the sleep parks the runtime, which polls
        // the socket (already readable) before the timer fires.
        closes.recv().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
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

/// What the keep-alive server saw of one connection.
#[derive(Debug, PartialEq)]
enum ConnEvent {
    Opened(usize),
    Closed(usize),
}

/// A keep-alive HTTP/1.1 server (hyper's, no timeout of its own) that
/// reports each connection opened and closed. A `slow` request is answered
/// after 400 ms, anything else at once.
async fn keep_alive_server() -> (String, tokio::sync::mpsc::UnboundedReceiver<ConnEvent>) {
    use http_body_util::{BodyExt, Full};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (events, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((s, _)) = listener.accept().await {
            n += 1;
            let (events, conn) = (events.clone(), n);
            let _ = events.send(ConnEvent::Opened(conn));
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    |req: http::Request<hyper::body::Incoming>| async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
                        if req["method"] == "slow" {
                            tokio::time::sleep(Duration::from_millis(400)).await;
                        }
                        let body = json!({"jsonrpc": "2.0", "id": req["id"], "result": {}});
                        Ok::<_, hyper::Error>(
                            http::Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(bytes::Bytes::from(body.to_string())))
                                .unwrap(),
                        )
                    },
                );
                let io = hyper_util::rt::TokioIo::new(s);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
                let _ = events.send(ConnEvent::Closed(conn));
            });
        }
    });
    (url, rx)
}

fn with_idle_timeout(url: &str, timeout: Option<Duration>) -> HttpTransport {
    HttpTransport::builder(url)
        .idle_timeout(timeout)
        .build()
        .unwrap()
}

async fn next_event(rx: &mut tokio::sync::mpsc::UnboundedReceiver<ConnEvent>) -> ConnEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a connection event within 10 s")
        .unwrap()
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_idle_timeout_and_the_next_request_reconnects() {
    let (url, mut events) = keep_alive_server().await;
    // Long enough that pings 2 and 3 share a connection on a busy machine.
    let timeout = Duration::from_millis(400);
    let mut t = with_idle_timeout(&url, Some(timeout));
    // Before the request: its connection goes idle after this.
    let sent = std::time::Instant::now();
    ping(&mut t, 1).await;
    assert_eq!(next_event(&mut events).await, ConnEvent::Opened(1));
    // The client closes it (the server has no timeout of its own), and
    // not before the idle timeout.
    assert_eq!(next_event(&mut events).await, ConnEvent::Closed(1));
    assert!(sent.elapsed() >= timeout, "{:?}", sent.elapsed());
    ping(&mut t, 2).await;
    assert_eq!(next_event(&mut events).await, ConnEvent::Opened(2));
    ping(&mut t, 3).await;
    // Requests in a row share the new connection.
    assert!(events.try_recv().is_err());
}

#[tokio::test]
async fn a_connection_in_use_is_never_closed_by_the_idle_timer() {
    let (url, mut events) = keep_alive_server().await;
    let mut t = with_idle_timeout(&url, Some(Duration::from_millis(250)));
    // Checked in once, so the timer runs; then busy for longer than the
    // timeout (the `slow` answer takes 400 ms). Not shorter: a stall of the
    // timeout's length between the two calls would close the connection
    // while it is idle, rightly.
    ping(&mut t, 1).await;
    call(&mut t, 2, "slow").await;
    assert_eq!(next_event(&mut events).await, ConnEvent::Opened(1));
    assert!(events.try_recv().is_err(), "one connection, still open");
}

#[tokio::test]
async fn requests_closer_together_than_the_idle_timeout_keep_one_connection() {
    let (url, mut events) = keep_alive_server().await;
    let timeout = Duration::from_secs(1);
    let mut t = with_idle_timeout(&url, Some(timeout));
    // 1.2 s of requests 100 ms apart: the timer wakes while each one's
    // connection is idle, but none has been idle for 1 s.
    for id in 0..12 {
        ping(&mut t, id).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(next_event(&mut events).await, ConnEvent::Opened(1));
    assert!(events.try_recv().is_err(), "one connection, still open");
}

#[tokio::test]
async fn without_an_idle_timeout_an_idle_connection_stays_open() {
    let (url, mut events) = keep_alive_server().await;
    let mut t = with_idle_timeout(&url, None);
    ping(&mut t, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    ping(&mut t, 2).await;
    assert_eq!(next_event(&mut events).await, ConnEvent::Opened(1));
    assert!(events.try_recv().is_err(), "one connection, still open");
}

/// A server that gives each `initialize` a session id of its own (`s0`,
/// `s1`, ...) and answers everything else with an empty result.
async fn sessions_server() -> Server {
    let next = Arc::new(AtomicUsize::new(0));
    serve(move |r| {
        let answer = Reply::Json(http::StatusCode::OK, result(&r.id(), json!({})));
        match r.rpc_method() {
            Some("initialize") => Reply2 {
                reply: answer,
                headers: vec![(
                    "mcp-session-id",
                    format!("s{}", next.fetch_add(1, Ordering::SeqCst)),
                )],
            },
            _ => answer.into(),
        }
    })
    .await
}

/// Transports made with `new_session` share one pool: the second session's
/// requests go on the connection the first one kept alive, each with its
/// own session id, and closing one session leaves the other working on it.
#[tokio::test]
async fn sessions_made_with_new_session_share_connections_but_not_session_ids() {
    let server = sessions_server().await;
    let mut a = HttpTransport::new(&server.url).unwrap();
    let mut b = a.new_session();
    call(&mut a, 1, "initialize").await;
    call(&mut b, 1, "initialize").await;
    assert_eq!(a.session_id().as_deref(), Some("s0"));
    assert_eq!(b.session_id().as_deref(), Some("s1"));
    for t in [&mut a, &mut b] {
        std::pin::Pin::new(t).set_protocol_version(ProtocolVersion::V2025_11_25);
    }
    call(&mut a, 2, "ping").await;
    call(&mut b, 2, "ping").await;
    a.close().await.unwrap();
    call(&mut b, 3, "ping").await;
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
    let seen: Vec<(Option<String>, Option<String>)> = server
        .requests()
        .iter()
        .map(|r| {
            let method = r
                .rpc_method()
                .map(str::to_owned)
                .or(Some(r.method.to_string()));
            (method, r.header("mcp-session-id").map(str::to_owned))
        })
        .collect();
    let s = |m: &str, id: Option<&str>| (Some(m.to_owned()), id.map(str::to_owned));
    assert_eq!(
        seen,
        vec![
            s("initialize", None),
            s("initialize", None),
            s("ping", Some("s0")),
            s("ping", Some("s1")),
            s("DELETE", Some("s0")),
            s("ping", Some("s1")),
        ]
    );
}

/// Sends `n` `slow` requests at once (each on a connection of its own,
/// HTTP/1.1 taking one request at a time) and waits for every answer.
async fn burst(t: &mut HttpTransport, first_id: i64, n: i64) {
    for id in first_id..first_id + n {
        t.send(Request::new(id.into(), "slow", None).into())
            .await
            .unwrap();
    }
    let mut ids = std::collections::HashSet::new();
    for _ in 0..n {
        ids.insert(answer(t).await);
    }
    let want = (first_id..first_id + n).map(Into::into).collect();
    assert_eq!(ids, want, "one answer to each request");
}

/// The connections opened so far (each `Opened` event the server sent).
fn opened(events: &mut tokio::sync::mpsc::UnboundedReceiver<ConnEvent>) -> usize {
    std::iter::from_fn(|| events.try_recv().ok())
        .filter(|e| matches!(e, ConnEvent::Opened(_)))
        .count()
}

/// 40 requests at once need 40 connections; the default cap keeps them
/// all idle, so the next 40 at once reuse them and open none. (With the
/// old cap of 32, 8 were closed on their way back and the second burst
/// opened 8 again.)
#[tokio::test]
async fn a_burst_within_the_idle_cap_reuses_every_connection_of_the_last_one() {
    let (url, mut events) = keep_alive_server().await;
    let mut t = HttpTransport::new(&url).unwrap();
    burst(&mut t, 0, 40).await;
    assert_eq!(opened(&mut events), 40);
    burst(&mut t, 100, 40).await;
    assert_eq!(
        opened(&mut events),
        0,
        "the second burst opened connections"
    );
}

/// With `max_idle_connections(4)`, 36 of a burst's 40 connections are
/// closed on their way back: the next burst reuses 4 and opens 36.
#[tokio::test]
async fn max_idle_connections_caps_what_a_burst_leaves_open() {
    let (url, mut events) = keep_alive_server().await;
    let mut t = HttpTransport::builder(&url)
        .max_idle_connections(4)
        .build()
        .unwrap();
    burst(&mut t, 0, 40).await;
    assert_eq!(opened(&mut events), 40);
    burst(&mut t, 100, 40).await;
    assert_eq!(opened(&mut events), 36);
}
