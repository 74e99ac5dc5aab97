//! Backpressure: a consumer that stops polling stops the socket reads, so a
//! flooding server is throttled by flow control instead of filling memory.
//! The server's bodies are generated on demand (`Reply::SseGenerated`), so
//! how much it "managed to write" is how much hyper asked it for.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::pin::Pin;
use std::time::{Duration, Instant};

use http::StatusCode;
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId};
use mcp_proto::transport::{Transport, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::{DEFAULT_MAX_BUFFERED_MESSAGES, HttpTransport};
use serde_json::{Value, json};
use support::*;

/// Notifications the server tries to send.
const FLOOD: usize = 100_000;
/// Padding per notification (~580 bytes per event, ~58 MB in all: far more
/// than the socket buffers, hyper's read buffer and the inbox hold together).
const PAD: usize = 500;

fn flood(count: usize) -> Generated {
    let pad = "x".repeat(PAD);
    Generated::new(count, move |i| {
        format!(
            "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"seq\":{i},\"pad\":\"{pad}\"}}}}\n\n"
        )
    })
}

fn raw(v: Value) -> Option<RawJson> {
    Some(RawJson::from_string(v.to_string()).unwrap())
}

fn set_version(t: &mut HttpTransport, v: ProtocolVersion) {
    Pin::new(t).set_protocol_version(v);
}

async fn recv_ok(t: &mut HttpTransport) -> Message {
    match tokio::time::timeout(Duration::from_secs(10), t.recv()).await {
        Ok(Some(Ok(m))) => m,
        Ok(Some(Err(e))) => panic!("expected a message, got error {e}"),
        Ok(None) => panic!("transport ended"),
        Err(_) => panic!("no message within 10 s"),
    }
}

fn seq(m: &Message) -> Option<u64> {
    match m {
        Message::Notification(n) if n.method == "notifications/message" => {
            let p: Value = n.params.as_ref()?.decode().ok()?;
            p["seq"].as_u64()
        }
        _ => None,
    }
}

/// Waits until the server's count stops moving for 500 ms and 20 samples
/// (so a stalled test process does not fake a plateau); returns it.
async fn settled(g: &Generated) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = g.produced();
    let mut since = Instant::now();
    let mut same = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(25)).await;
        let now = g.produced();
        if now != last {
            last = now;
            since = Instant::now();
            same = 0;
        } else {
            same += 1;
            if now > 0 && same >= 20 && since.elapsed() >= Duration::from_millis(500) {
                return now;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the server kept writing for 60 s ({now} events)"
        );
    }
}

/// What the server may have written while nobody polls: the inbox, plus
/// what hyper's read buffer and the loopback socket buffers hold (a few
/// MB). Without the bound it writes all [`FLOOD`].
fn assert_throttled(written: usize) {
    assert!(
        written > DEFAULT_MAX_BUFFERED_MESSAGES,
        "the server wrote only {written} events: the inbox did not even fill"
    );
    assert!(
        written < FLOOD / 4,
        "the server wrote {written} of {FLOOD} events while the transport was not polled: \
         received messages are buffered without bound"
    );
}

#[tokio::test]
async fn post_sse_flood_is_throttled_until_polled_then_delivered_in_order() {
    let g = flood(FLOOD);
    let gen_ = g.clone();
    let server = serve(move |r: &Rec| {
        if r.rpc_method() == Some("tools/call") {
            return Reply::SseGenerated(gen_.clone()).into();
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(Request::new(1.into(), "tools/call", raw(json!({"name":"x"}))).into())
        .await
        .unwrap();

    let written = settled(&g).await;
    eprintln!("server wrote {written} of {FLOOD} events while the transport was not polled");
    assert_throttled(written);
    // Still bounded a while later: the reader is parked, not slow.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(g.produced(), written);

    // Polling resumes the stream: everything arrives, in order, none lost.
    let started = Instant::now();
    for i in 0..FLOOD {
        let m = recv_ok(&mut t).await;
        assert_eq!(seq(&m), Some(i as u64), "message {i}: {m:?}");
    }
    eprintln!("received {FLOOD} events in {:?}", started.elapsed());
    assert_eq!(g.produced(), FLOOD);
    // The stream then ends without the answer: a scoped error for request 1.
    match tokio::time::timeout(Duration::from_secs(10), t.recv()).await {
        Ok(Some(Err(e))) => assert_eq!(e.request_id(), Some(&RequestId::Number(1))),
        other => panic!("expected the request's stream error, got {other:?}"),
    }
}

#[tokio::test]
async fn standalone_get_flood_is_throttled_and_answers_still_arrive() {
    let g = flood(FLOOD);
    let gen_ = g.clone();
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET {
            return Reply::SseGenerated(gen_.clone()).into();
        }
        match r.rpc_method() {
            Some(m) if m.starts_with("notifications/") => Reply::Accepted.into(),
            _ => Reply::Sse(vec![event(&result(&r.id(), json!({"pong": true})))]).into(),
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(Notification::new("notifications/initialized", None).into())
        .await
        .unwrap();

    let written = settled(&g).await;
    eprintln!("server wrote {written} of {FLOOD} events while the transport was not polled");
    assert_throttled(written);

    // A request while the inbox is full: its answer waits behind the
    // notifications that came first (no deadlock), and arrives once polled.
    t.send(Request::new(7.into(), "ping", None).into())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        g.produced(),
        written,
        "the GET stream was read while blocked"
    );

    let mut next = 0u64;
    let mut answered = false;
    while next < FLOOD as u64 || !answered {
        let m = recv_ok(&mut t).await;
        match seq(&m) {
            Some(s) => {
                assert_eq!(s, next, "out of order or lost");
                next += 1;
            }
            None => {
                assert_eq!(m.id(), Some(&RequestId::Number(7)), "{m:?}");
                assert!(!answered, "answered twice");
                answered = true;
            }
        }
    }
    assert_eq!(g.produced(), FLOOD);
}

#[tokio::test]
async fn dropping_a_blocked_transport_ends_its_streams() {
    let g = flood(FLOOD);
    let gen_ = g.clone();
    let server = serve(move |_: &Rec| Reply::SseGenerated(gen_.clone()).into()).await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(Request::new(1.into(), "tools/call", raw(json!({"name":"x"}))).into())
        .await
        .unwrap();
    let written = settled(&g).await;
    assert!(written < FLOOD);
    assert!(!g.dropped());
    drop(t);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !g.dropped() {
        assert!(
            Instant::now() < deadline,
            "the server's stream is still open 5 s after the transport was dropped"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(server);
}

#[tokio::test]
async fn smallest_inbox_still_delivers_everything() {
    let g = flood(300);
    let gen_ = g.clone();
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET {
            return Reply::SseGenerated(gen_.clone()).into();
        }
        match r.rpc_method() {
            Some(m) if m.starts_with("notifications/") => Reply::Accepted.into(),
            _ => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
        }
    })
    .await;
    // 0 is raised to 1 (a zero-capacity queue could not hold anything).
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .max_buffered_messages(0)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(Notification::new("notifications/initialized", None).into())
        .await
        .unwrap();
    t.send(Request::new(2.into(), "ping", None).into())
        .await
        .unwrap();
    let mut next = 0;
    let mut answered = false;
    while next < 300 || !answered {
        let m = recv_ok(&mut t).await;
        match seq(&m) {
            Some(s) => {
                assert_eq!(s, next);
                next += 1;
            }
            None => answered = m.id() == Some(&RequestId::Number(2)),
        }
    }
}

/// Notifications (and answers) the server never answers: once
/// `max_unanswered_posts` wait, `poll_ready` is pending, so the client
/// stops writing (and, its answers backing up, reading); when one ends (here
/// at the request timeout) the waker is woken and there is room again.
/// Before the bound, every one was accepted and held by a task of its own.
#[tokio::test]
async fn unanswered_notification_posts_are_bounded() {
    let server = serve(|r: &Rec| {
        if r.rpc_method() == Some("notifications/held") {
            Reply::Hang.into()
        } else {
            Reply::Accepted.into()
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_unanswered_posts(4)
        .request_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    let (waker, woken) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    for _ in 0..4 {
        assert!(Pin::new(&mut t).poll_ready(&mut cx).is_ready());
        Pin::new(&mut t)
            .start_send(Notification::new("notifications/held", None).into())
            .unwrap();
    }
    assert!(
        Pin::new(&mut t).poll_ready(&mut cx).is_pending(),
        "a fifth unanswered notification was accepted"
    );
    until("the waker is woken when a POST ends", || {
        woken.load(std::sync::atomic::Ordering::SeqCst) > 0
    })
    .await;
    assert!(matches!(
        Pin::new(&mut t).poll_ready(&mut cx),
        std::task::Poll::Ready(Ok(()))
    ));
}

/// A waker that counts its wakes.
fn counting_waker() -> (
    std::task::Waker,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    struct Count(std::sync::Arc<std::sync::atomic::AtomicUsize>);
    impl std::task::Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    (
        std::task::Waker::from(std::sync::Arc::new(Count(n.clone()))),
        n,
    )
}
