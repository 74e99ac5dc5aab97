//! Every queue has a bound, and the handler's tasks have an owner: a server
//! that stops reading, many more calls than the in-flight limit, handlers
//! that panic or are cancelled.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::*;
use mcp_proto::schema::{ListRootsParams, ListRootsResult, Root};

/// The server's end stops reading (sending never becomes ready) and floods
/// pings, requests and notifications once `flooding` is set; until then it
/// is the plain channel.
struct StopsReading {
    flooding: Arc<AtomicBool>,
    /// Messages handed to the client while flooding.
    flooded: Arc<AtomicUsize>,
}

impl Hooks for StopsReading {
    fn poll_recv(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        if !self.flooding.load(Ordering::SeqCst) {
            return inner.poll_recv(cx);
        }
        // Far past any bound the client keeps, but finite: a client that
        // reads without bound fails the test instead of eating the machine.
        if self.flooded.load(Ordering::SeqCst) >= FLOOD_CAP {
            return Poll::Pending;
        }
        let n = self.flooded.fetch_add(1, Ordering::SeqCst) as i64;
        let m: Message = match n % 3 {
            0 => Request::new(RequestId::Number(1_000_000 + n), "ping", None).into(),
            1 => Request::new(RequestId::Number(1_000_000 + n), "roots/list", None).into(),
            _ => Notification::new(
                "notifications/message",
                Some(raw(json!({"level": "info", "data": n}))),
            )
            .into(),
        };
        Poll::Ready(Some(Ok(m)))
    }
    fn poll_ready(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        if self.flooding.load(Ordering::SeqCst) {
            return Poll::Pending;
        }
        inner.poll_ready(cx)
    }
}

const FLOOD_CAP: usize = 200_000;

/// Answers `roots/list` slowly, so that flooded requests stay in flight.
struct SlowRoots;

impl ClientHandler for SlowRoots {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_roots()
    }
    async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(ListRootsResult::new(vec![]))
    }
}

/// A server that stops reading while it floods: the client reads only
/// until its answers back up (the outbound backlog), its notification
/// queue and its handler slots are full, then stops reading; its calls time
/// out cleanly and it closes. Before the driver paused, it read (and
/// queued an answer for) every message the server sent.
#[tokio::test(start_paused = true)]
async fn a_server_that_stops_reading_is_not_read_from() {
    let (client_end, mut server) = pair();
    let flooding = Arc::new(AtomicBool::new(false));
    let flooded = Arc::new(AtomicUsize::new(0));
    let transport = Hooked {
        inner: client_end,
        hooks: StopsReading {
            flooding: flooding.clone(),
            flooded: flooded.clone(),
        },
    };
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        server
    });
    let client = Client::builder("t", "1")
        .handler(SlowRoots)
        .connect(transport)
        .await
        .unwrap();
    let _server = srv.await.unwrap();
    flooding.store(true, Ordering::SeqCst);
    let call = client
        .call_tool("echo", json!({}))
        .timeout(Duration::from_secs(5));
    let err = call.await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let read = flooded.load(Ordering::SeqCst);
    // A third of the flood is pings, a third requests (the handler takes 64,
    // then each is answered busy), a third notifications (the handler's
    // queue takes 1024): reading stops once 1,024 answers wait.
    let bound = 3 * (mcp_client::session::DEFAULT_MAX_OUTBOUND_BACKLOG + 64) + 256;
    assert!(
        read <= bound,
        "read {read} messages from a server that does not read (bound {bound})"
    );
    // Nothing more is read however long the server keeps at it.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(flooded.load(Ordering::SeqCst), read);
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .expect("close is bounded");
}

/// A transport whose server answers each request after `delay`, and
/// records the most requests it ever had unanswered.
async fn slow_server(mut server: ChannelTransport, delay: Duration, peak: Arc<AtomicUsize>) {
    legacy_handshake(&mut server).await;
    let outstanding = Arc::new(AtomicUsize::new(0));
    let (answers, mut to_send) = tokio::sync::mpsc::unbounded_channel::<Message>();
    loop {
        tokio::select! {
            m = server.recv() => match m {
                Some(Ok(Message::Request(r))) => {
                    let now = outstanding.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    let answers = answers.clone();
                    let outstanding = outstanding.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        outstanding.fetch_sub(1, Ordering::SeqCst);
                        let result = json!({"content": [{"type": "text", "text": r.id.to_string()}]});
                        let _ = answers.send(Response::new(r.id, raw(result)).into());
                    });
                }
                Some(Ok(_)) => {}
                _ => return,
            },
            Some(m) = to_send.recv() => {
                if server.send(m).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// 100,000 calls started at once against a slow server: never more than
/// the in-flight limit reach the connection, and every call ends with its
/// own answer.
#[tokio::test(start_paused = true)]
async fn a_hundred_thousand_calls_at_once_stay_within_the_in_flight_limit() {
    const CALLS: usize = 100_000;
    const LIMIT: usize = 256;
    let (client_end, server) = pair();
    let peak = Arc::new(AtomicUsize::new(0));
    tokio::spawn(slow_server(server, Duration::from_millis(50), peak.clone()));
    let client = Client::builder("t", "1")
        .max_in_flight(LIMIT)
        .connect(client_end)
        .await
        .unwrap();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..CALLS {
        let c = client.clone();
        calls.spawn(async move { (i, c.call_tool("echo", json!({"i": i})).await) });
    }
    let mut ended = 0;
    while let Some(done) = calls.join_next().await {
        let (_, result) = done.unwrap();
        let r = result.unwrap();
        assert!(r.content[0].as_text().is_some());
        ended += 1;
    }
    assert_eq!(ended, CALLS);
    assert_eq!(
        peak.load(Ordering::SeqCst),
        LIMIT,
        "the limit was reached, never passed"
    );
}

/// A client allowed one call in flight, connected (the legacy handshake)
/// to the test's end of the transport.
async fn one_slot_client() -> (Client, ChannelTransport) {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        server
    });
    let client = Client::builder("t", "1")
        .max_in_flight(1)
        .connect(client_end)
        .await
        .unwrap();
    (client, srv.await.unwrap())
}

/// With the limit reached, `try_send` refuses at once and sends nothing;
/// waiting calls go out in the order they started waiting as slots free,
/// and one dropped while it waits is never sent.
#[tokio::test]
async fn try_send_refuses_when_full_and_waiting_calls_go_in_order() {
    let (client, mut server) = one_slot_client().await;
    let first = client.call_tool("first", json!({})).send();
    let r1 = next_request(&mut server).await;
    assert_eq!(params(&r1)["name"], "first");
    let busy = client
        .call_tool("refused", json!({}))
        .try_send()
        .unwrap_err();
    assert!(matches!(busy, ClientError::Busy { limit: 1 }), "{busy}");
    // Each waits from its first poll: spawned in this order, they wait in it.
    let dropped = tokio::spawn(client.call_tool("dropped", json!({})).send());
    let second = tokio::spawn(client.call_tool("second", json!({})).send());
    let third = tokio::spawn(client.call_tool("third", json!({})).send());
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    dropped.abort();
    respond(&mut server, r1.id, json!({"content": []})).await;
    first.await.unwrap();
    let r2 = next_request(&mut server).await;
    assert_eq!(
        params(&r2)["name"],
        "second",
        "the dropped call was never sent"
    );
    respond(&mut server, r2.id, json!({"content": []})).await;
    second.await.unwrap().unwrap();
    let r3 = next_request(&mut server).await;
    assert_eq!(params(&r3)["name"], "third");
    respond(&mut server, r3.id, json!({"content": []})).await;
    third.await.unwrap().unwrap();
}

/// An answer the driver has received frees its call's slot at once, before
/// the caller takes it (here: never); dropping that call then cancels
/// nothing, since it is done.
#[tokio::test]
async fn an_answer_not_yet_taken_frees_its_slot_and_its_drop_cancels_nothing() {
    let (client, mut server) = one_slot_client().await;
    let first = client.call_tool("first", json!({})).send();
    let r1 = next_request(&mut server).await;
    respond(&mut server, r1.id, json!({"content": []})).await;
    // `first` is never polled: its answer waits, its slot is free.
    let second = tokio::spawn(client.call_tool("second", json!({})).send());
    let r2 = tokio::time::timeout(Duration::from_secs(5), next_request(&mut server))
        .await
        .expect("the answered call's slot went to the next call");
    assert_eq!(params(&r2)["name"], "second");
    drop(first);
    client.notify("test/marker", None).unwrap();
    match server.recv().await {
        Some(Ok(Message::Notification(n))) => assert_eq!(n.method, "test/marker"),
        other => panic!("expected only the marker, got {other:?}"),
    }
    respond(&mut server, r2.id, json!({"content": []})).await;
    second.await.unwrap().unwrap();
}

/// A call dropped while the server works on it gives its slot back at
/// once: the server is told (`notifications/cancelled`) and the next call
/// goes out though the first is never answered.
#[tokio::test]
async fn a_cancelled_call_frees_its_slot() {
    let (client, mut server) = one_slot_client().await;
    let first = client.call_tool("first", json!({})).send();
    let r1 = next_request(&mut server).await;
    drop(first);
    match server.recv().await {
        Some(Ok(Message::Notification(n))) => assert_eq!(n.method, "notifications/cancelled"),
        other => panic!("expected the cancellation, got {other:?}"),
    }
    let second = tokio::spawn(client.call_tool("second", json!({})).send());
    let r2 = tokio::time::timeout(Duration::from_secs(5), next_request(&mut server))
        .await
        .expect("the cancelled call's slot went to the next call");
    assert_eq!(params(&r2)["name"], "second");
    assert_ne!(r2.id, r1.id);
    respond(&mut server, r2.id, json!({"content": []})).await;
    second.await.unwrap().unwrap();
}

/// Panics on its first `PANICS` requests, then answers; records whether a
/// cancelled request's future was dropped.
struct Fragile {
    calls: AtomicUsize,
    started: Arc<tokio::sync::Notify>,
    dropped: Arc<AtomicBool>,
}

const PANICS: usize = 1000;

struct SetOnDrop(Arc<AtomicBool>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl ClientHandler for Fragile {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_roots()
    }
    async fn list_roots(&self, p: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
        if p.meta.is_some_and(|m| m.contains_key("hang")) {
            let _guard = SetOnDrop(self.dropped.clone());
            self.started.notify_one();
            std::future::pending::<()>().await;
        }
        if self.calls.fetch_add(1, Ordering::SeqCst) < PANICS {
            panic!("a handler bug");
        }
        Ok(ListRootsResult::new(vec![Root::new("file:///ok")]))
    }
}

async fn answer_to(server: &mut ChannelTransport, id: i64) -> Message {
    loop {
        match server.recv().await {
            Some(Ok(m @ (Message::Response(_) | Message::Error(_))))
                if m.id() == Some(&RequestId::Number(id)) =>
            {
                return m;
            }
            Some(Ok(Message::Notification(_))) => {}
            other => panic!("expected the answer to {id}, got {other:?}"),
        }
    }
}

/// A handler that panics 1,000 times: each request gets an internal-error
/// answer, and afterwards the client still answers as many requests at
/// once as its limit allows (before, every panic leaked an in-flight slot
/// and after 64 every request was answered "busy").
#[tokio::test]
async fn a_handler_that_panics_a_thousand_times_leaves_every_count_right() {
    let (client_end, mut server) = pair();
    let handler = Fragile {
        calls: AtomicUsize::new(0),
        started: Arc::default(),
        dropped: Arc::default(),
    };
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        for id in 0..PANICS as i64 {
            server
                .send(Request::new(RequestId::Number(id), "roots/list", None).into())
                .await
                .unwrap();
            let Message::Error(e) = answer_to(&mut server, id).await else {
                panic!("request {id}: expected an error answer")
            };
            assert_eq!(e.error.code, ErrorCode::INTERNAL_ERROR);
            assert!(!e.error.message.contains("busy"), "{}", e.error.message);
        }
        // As many at once as the limit: all answered, none busy.
        let n = mcp_client::session::DEFAULT_MAX_SERVER_REQUESTS as i64;
        for id in 10_000..10_000 + n {
            server
                .send(Request::new(RequestId::Number(id), "roots/list", None).into())
                .await
                .unwrap();
        }
        for id in 10_000..10_000 + n {
            let Message::Response(r) = answer_to(&mut server, id).await else {
                panic!("request {id} was not answered with roots")
            };
            assert_eq!(
                serde_json::from_str::<Value>(r.result.get()).unwrap()["roots"][0]["uri"],
                "file:///ok"
            );
        }
        server
    });
    let client = Client::builder("t", "1")
        .handler(handler)
        .connect(client_end)
        .await
        .unwrap();
    let _server = tokio::time::timeout(Duration::from_secs(60), srv)
        .await
        .expect("the client kept answering")
        .unwrap();
    drop(client);
}

/// The server cancels a request mid-flight: the handler's future is
/// dropped, no answer is sent for it, and its slot is free again.
#[tokio::test]
async fn a_server_request_cancelled_mid_flight_is_aborted_and_not_answered() {
    let (client_end, mut server) = pair();
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let handler = Fragile {
        calls: AtomicUsize::new(PANICS),
        started: started.clone(),
        dropped: dropped.clone(),
    };
    let client = {
        let srv = tokio::spawn(async move {
            legacy_handshake(&mut server).await;
            server
        });
        let c = Client::builder("t", "1")
            .handler(handler)
            .connect(client_end)
            .await
            .unwrap();
        server = srv.await.unwrap();
        c
    };
    let hang = raw(json!({"_meta": {"hang": true}}));
    server
        .send(Request::new(RequestId::Number(7), "roots/list", Some(hang)).into())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .expect("the handler started");
    let cancel = raw(json!({"requestId": 7, "reason": "changed my mind"}));
    server
        .send(Notification::new("notifications/cancelled", Some(cancel)).into())
        .await
        .unwrap();
    // The next answer the server sees is the ping's, not one for 7.
    server
        .send(Request::new(RequestId::Number(8), "ping", None).into())
        .await
        .unwrap();
    match server.recv().await {
        Some(Ok(m)) => assert_eq!(m.id(), Some(&RequestId::Number(8)), "{m:?}"),
        other => panic!("{other:?}"),
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !dropped.load(Ordering::SeqCst) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future was dropped"
    );
    // A late answer for 7 is not sent: the next request's is next.
    server
        .send(Request::new(RequestId::Number(9), "roots/list", None).into())
        .await
        .unwrap();
    match server.recv().await {
        Some(Ok(Message::Response(r))) => assert_eq!(r.id, RequestId::Number(9)),
        other => panic!("{other:?}"),
    }
    drop(client);
}

/// Closing aborts the handler's running tasks.
#[tokio::test]
async fn close_aborts_the_handlers_tasks() {
    let (client_end, mut server) = pair();
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let handler = Fragile {
        calls: AtomicUsize::new(PANICS),
        started: started.clone(),
        dropped: dropped.clone(),
    };
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let hang = raw(json!({"_meta": {"hang": true}}));
        server
            .send(Request::new(RequestId::Number(1), "roots/list", Some(hang)).into())
            .await
            .unwrap();
        server
    });
    let client = Client::builder("t", "1")
        .handler(handler)
        .connect(client_end)
        .await
        .unwrap();
    let _server = srv.await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .expect("the handler started");
    client.close().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !dropped.load(Ordering::SeqCst) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(dropped.load(Ordering::SeqCst), "close aborted the handler");
}

/// A handler's answer goes out as soon as it is ready, with nothing else
/// happening on the connection to wake the driver.
#[tokio::test]
async fn a_handlers_answer_goes_out_without_other_traffic() {
    let (client_end, mut server) = pair();
    let handler = Fragile {
        calls: AtomicUsize::new(PANICS),
        started: Arc::default(),
        dropped: Arc::default(),
    };
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        server
            .send(Request::new(RequestId::Number(3), "roots/list", None).into())
            .await
            .unwrap();
        let m = tokio::time::timeout(Duration::from_secs(5), answer_to(&mut server, 3))
            .await
            .expect("answered within 5 s");
        assert!(matches!(m, Message::Response(_)), "{m:?}");
        server
    });
    let _client = Client::builder("t", "1")
        .handler(handler)
        .connect(client_end)
        .await
        .unwrap();
    srv.await.unwrap();
}
