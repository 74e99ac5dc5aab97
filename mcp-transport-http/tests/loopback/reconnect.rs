//! Reconnection storms: a server whose SSE streams say `retry: 0` and end
//! after one message each, every time. Each reconnection loop (a response
//! stream being resumed, the standalone `GET` stream) waits at least
//! `MIN_RECONNECT_DELAY` between attempts, backs off while attempts make
//! no progress, and honours a `Retry-After` on a refused reconnection.

use super::*;
use std::sync::{Arc, Mutex};

/// How long each storm is watched.
const WATCH: Duration = Duration::from_millis(1500);

/// The most reconnections the floor (`MIN_RECONNECT_DELAY`, 250 ms) allows
/// in `WATCH`, plus the first.
fn allowed() -> usize {
    const FLOOR: Duration = Duration::from_millis(250);
    assert_eq!(mcp_transport_http::MIN_RECONNECT_DELAY, FLOOR);
    (WATCH.as_millis() / FLOOR.as_millis()) as usize + 1
}

fn note(n: u64) -> String {
    json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":n}})
        .to_string()
}

fn gets(server: &Server) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == http::Method::GET)
        .count()
}

/// Takes what the transport delivers for `WATCH` (the notifications that
/// make each reconnection count as progress).
async fn drain_for(t: &mut HttpTransport, watch: Duration) -> usize {
    let end = Instant::now() + watch;
    let mut n = 0;
    while let Ok(Some(item)) = tokio::time::timeout_at(end.into(), t.recv()).await {
        item.unwrap();
        n += 1;
    }
    n
}

#[tokio::test]
async fn a_response_stream_with_retry_0_is_not_resumed_in_a_storm() {
    let server = serve(|r: &Rec| {
        let n = r.index as u64;
        Reply::Sse(vec![
            Piece::Data(format!("id: e{n}\nretry: 0\n")),
            Piece::Data(format!("data: {}\n\n", note(n))),
        ])
        .into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let delivered = drain_for(&mut t, WATCH).await;
    let gets = gets(&server);
    eprintln!("{gets} resumptions, {delivered} messages in {WATCH:?}");
    assert!(gets >= 2, "the stream was not resumed: {gets}");
    assert!(gets <= allowed(), "{gets} resumptions in {WATCH:?}");
}

#[tokio::test]
async fn the_standalone_stream_with_retry_0_is_not_reopened_in_a_storm() {
    let server = serve(|r: &Rec| {
        if r.method == http::Method::GET {
            let n = r.index as u64;
            return Reply::Sse(vec![Piece::Data(format!(
                "id: g{n}\nretry: 0\ndata: {}\n\n",
                note(n)
            ))])
            .into();
        }
        session_s_then_accepted(r)
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    handshake(&mut t).await;
    let delivered = drain_for(&mut t, WATCH).await;
    let gets = gets(&server);
    eprintln!("{gets} GETs, {delivered} messages in {WATCH:?}");
    assert!(gets >= 2, "the stream was not reopened: {gets}");
    assert!(gets <= allowed(), "{gets} GETs in {WATCH:?}");
    t.close().await.unwrap();
}

/// A reconnection refused with 503 and `Retry-After: 1` is not tried again
/// for a second, though the stream said `retry: 0`; empty streams back off.
#[tokio::test]
async fn a_refused_reconnection_waits_for_retry_after_and_empty_streams_back_off() {
    let times = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let seen = times.clone();
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET {
            let mut t = seen.lock().unwrap();
            t.push(Instant::now());
            if t.len() == 1 {
                return Reply2 {
                    reply: Reply::Raw(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "busy".into()),
                    headers: vec![("retry-after", "1".into())],
                };
            }
            // Empty streams from then on: no progress.
            return Reply::Sse(vec![Piece::Data("id: x\nretry: 0\ndata:\n\n".into())]).into();
        }
        Reply::Sse(vec![Piece::Data("id: p\nretry: 0\ndata:\n\n".into())]).into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_resume_attempts(4)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let e = tokio::time::timeout(Duration::from_secs(20), t.recv())
        .await
        .expect("the resumption budget was not spent")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.request_id(), Some(&1.into()));
    let times = times.lock().unwrap().clone();
    assert_eq!(times.len(), 4, "{times:?}");
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("gaps between GETs: {gaps:?}");
    assert!(
        gaps[0] >= Duration::from_secs(1),
        "Retry-After not honoured: {gaps:?}"
    );
    // Then 1 s and 2 s (doubling from 250 ms per attempt without
    // progress), never the `retry: 0`.
    assert!(gaps[1] >= Duration::from_millis(1000), "{gaps:?}");
    assert!(gaps[2] >= Duration::from_millis(2000), "{gaps:?}");
}
