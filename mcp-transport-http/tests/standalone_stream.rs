//! When the standalone GET stream is opened, with both cores busy: the
//! shapes of the conformance suite's `elicitation-sep1034-client-defaults`
//! (a server request sent on the standalone stream the moment a tool call
//! arrives, dropped when no stream is registered yet, as the TypeScript SDK
//! does) and `sse-retry` (every GET after the tool call must be a
//! resumption, with `Last-Event-ID`, after `retry`).
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::StatusCode;
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Notification, Request};
use mcp_proto::transport::{Transport, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::HttpTransport;
use serde_json::{Value, json};
use support::*;
use tokio::sync::mpsc;

/// How late the server gets to the GET: what a loaded machine does to it.
const LATE_GET: Duration = Duration::from_millis(150);

/// Spins a thread per core until dropped.
struct CpuLoad(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>);

impl CpuLoad {
    fn on_every_core() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x: u64 = 1;
                    while !stop.load(Ordering::Relaxed) {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        std::hint::black_box(x);
                    }
                })
            })
            .collect();
        CpuLoad(stop, threads)
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        for t in self.1.drain(..) {
            let _ = t.join();
        }
    }
}

fn raw(v: Value) -> Option<RawJson> {
    Some(RawJson::from_string(v.to_string()).unwrap())
}

async fn handshake(t: &mut HttpTransport) {
    t.send(Request::new(1.into(), "initialize", raw(json!({}))).into())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    std::pin::Pin::new(&mut *t).set_protocol_version(ProtocolVersion::V2025_11_25);
    t.send(Notification::new("notifications/initialized", raw(json!({}))).into())
        .await
        .unwrap();
}

fn initialize_answer(r: &Rec) -> Reply2 {
    Reply2 {
        reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
        headers: vec![("mcp-session-id", "s".into())],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_request_on_the_standalone_stream_is_not_lost_to_a_late_get() {
    let _load = CpuLoad::on_every_core();
    let standalone: Arc<Mutex<Option<mpsc::UnboundedSender<Piece>>>> = Arc::default();
    let registered = Arc::clone(&standalone);
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET {
            std::thread::sleep(LATE_GET);
            let (tx, rx) = mpsc::unbounded_channel();
            *registered.lock().unwrap() = Some(tx);
            return Reply::SseChannel(rx).into();
        }
        match r.rpc_method() {
            Some("initialize") => initialize_answer(r),
            Some("tools/call") => {
                // A request related to none of the client's goes to the
                // standalone stream, or nowhere.
                let elicit = json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                    "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}});
                if let Some(tx) = registered.lock().unwrap().as_ref() {
                    let _ = tx.send(event(&elicit.to_string()));
                }
                // The tool's answer waits for the elicitation's.
                Reply::Sse(vec![Piece::KeepAliveForever]).into()
            }
            _ => Reply::Accepted.into(),
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    handshake(&mut t).await;
    // The application calls a tool at once.
    t.send(Request::new(2.into(), "tools/call", raw(json!({"name": "x"}))).into())
        .await
        .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(3), t.recv()).await;
    let msg = got
        .expect("the server's elicitation/create never arrived: it was sent before the GET stream was registered")
        .unwrap()
        .unwrap();
    assert_eq!(msg.method(), Some("elicitation/create"));
    let requests = server.requests();
    let get = requests
        .iter()
        .find(|r| r.method == http::Method::GET)
        .unwrap();
    let call = requests
        .iter()
        .find(|r| r.rpc_method() == Some("tools/call"))
        .unwrap();
    assert!(get.index < call.index, "the tool call overtook the GET");
    drop(standalone);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_get_after_a_request_is_a_resumption_after_retry() {
    let _load = CpuLoad::on_every_core();
    const RETRY_MS: u64 = 300;
    // When the tool call arrived; its stream closes 50 ms later.
    let called_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    // When the server started serving each GET, and its Last-Event-ID.
    type Gets = Arc<Mutex<Vec<(Instant, Option<String>)>>>;
    let gets: Gets = Arc::default();
    let (called, seen) = (Arc::clone(&called_at), Arc::clone(&gets));
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET {
            let last = r.header("last-event-id").map(str::to_owned);
            if last.is_none() {
                std::thread::sleep(LATE_GET);
            }
            // When the server starts serving the stream.
            seen.lock().unwrap().push((Instant::now(), last.clone()));
            if last.is_some() {
                // The resumption: the tool's answer.
                let answer = json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}});
                return Reply::Sse(vec![event_id("e3", &answer.to_string())]).into();
            }
            return Reply::Sse(vec![
                Piece::Data(format!("id: e1\nretry: {RETRY_MS}\ndata: \n\n")),
                Piece::KeepAliveForever,
            ])
            .into();
        }
        match r.rpc_method() {
            Some("initialize") => initialize_answer(r),
            Some("tools/call") => {
                *called.lock().unwrap() = Some(Instant::now());
                // Priming event, then a graceful close after 50 ms.
                Reply::Sse(vec![
                    Piece::Data(format!("id: e2\nretry: {RETRY_MS}\ndata: \n\n")),
                    Piece::Sleep(50),
                ])
                .into()
            }
            _ => Reply::Accepted.into(),
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    handshake(&mut t).await;
    t.send(Request::new(2.into(), "tools/call", raw(json!({"name": "x"}))).into())
        .await
        .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), t.recv())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(answer, Message::Response(_)), "{answer:?}");
    let called = called_at.lock().unwrap().unwrap();
    let closed = called + Duration::from_millis(50);
    let gets = gets.lock().unwrap().clone();
    let after: Vec<_> = gets.iter().filter(|(at, _)| *at >= called).collect();
    assert!(!after.is_empty(), "no resumption GET: {gets:?}");
    for (at, last) in after {
        assert_eq!(
            last.as_deref(),
            Some("e2"),
            "a GET after the tool call without Last-Event-ID"
        );
        let waited = at.saturating_duration_since(closed);
        assert!(
            waited >= Duration::from_millis(RETRY_MS - 50),
            "resumed {waited:?} after the close, before retry"
        );
    }
}
