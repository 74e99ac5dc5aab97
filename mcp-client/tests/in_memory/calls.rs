//! Correlation, cancellation, timeouts, lists, progress tokens, callers on
//! many threads.

use super::*;

#[tokio::test]
async fn many_concurrent_calls_are_correlated_out_of_order() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        let mut reqs = Vec::new();
        for _ in 0..64 {
            reqs.push(next_request(&mut server).await);
        }
        // Answer in reverse order.
        for r in reqs.into_iter().rev() {
            let p = params(&r);
            assert_eq!(
                p["_meta"]["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
            let text = p["arguments"]["text"].clone();
            respond(
                &mut server,
                r.id,
                json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}),
            )
            .await;
        }
        server
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    let mut tasks = Vec::new();
    for i in 0..64 {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            let r = c
                .call_tool("echo", json!({"text": format!("n{i}")}))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some(format!("n{i}").as_str()));
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let (client_end, mut server) = pair();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        tx.send(()).unwrap();
        // The client drops the call: a cancellation for this id arrives.
        match server.recv().await {
            Some(Ok(Message::Notification(n))) if n.method == "notifications/cancelled" => {
                let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
                assert_eq!(p["requestId"], serde_json::to_value(&r.id).unwrap());
            }
            other => panic!("{other:?}"),
        }
        // A late response must not disturb anything.
        respond(&mut server, r.id, json!({"content": []})).await;
        let r = next_request(&mut server).await;
        respond(
            &mut server,
            r.id,
            json!({"content": [{"type": "text", "text": "second"}]}),
        )
        .await;
        server
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("slow", json!({})).await });
    rx.await.unwrap();
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled()); // the future is dropped: cancellation queued
    let r = client.call_tool("fast", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("second"));
    let _server = srv.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn timeout_with_virtual_time_cancels_and_reports() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        // Send progress twice, 8 s apart: each resets the 10 s timeout.
        let token = params(&r)["_meta"]["progressToken"].clone();
        for i in 0..2 {
            tokio::time::sleep(Duration::from_secs(8)).await;
            server
                .send(
                    Notification::new(
                        "notifications/progress",
                        Some(raw(json!({"progressToken": token, "progress": i}))),
                    )
                    .into(),
                )
                .await
                .unwrap();
        }
        let Some(Ok(Message::Notification(n))) = server.recv().await else {
            panic!()
        };
        assert_eq!(n.method, "notifications/cancelled");
        server
    });
    let client = Client::builder("t", "1")
        .request_timeout(Duration::from_secs(10))
        .connect(client_end)
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let err = client
        .call_tool("slow", json!({}))
        .on_progress(move |p| s2.lock().unwrap().push(p.progress))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(26) && waited <= Duration::from_secs(27),
        "{waited:?}"
    );
    assert_eq!(*seen.lock().unwrap(), vec![0.0, 1.0]);
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn server_exit_fails_pending_calls_with_the_cause() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let _r = next_request(&mut server).await;
        server
            .inject_error(TransportError::new(
                TransportErrorKind::Closed,
                "server exited with status 1: fatal: config missing",
            ))
            .unwrap();
        drop(server);
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let err = client.call_tool("x", json!({})).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Closed(CloseReason::Transport(_))),
        "{err:?}"
    );
    // Its own text, then the cause, each once.
    assert_eq!(err.to_string(), "connection closed");
    assert_eq!(
        mcp_proto::error::chain(&err).to_string(),
        "connection closed: server exited with status 1: fatal: config missing"
    );
    let source = std::error::Error::source(&err).unwrap();
    assert!(
        source.to_string().contains("fatal: config missing"),
        "the cause is reachable: {source}"
    );
    srv.await.unwrap();
    // Later calls fail at once with the same cause.
    let err = client
        .list_page::<mcp_proto::schema::Tool>(None)
        .await
        .unwrap_err();
    assert!(
        mcp_proto::error::chain(&err)
            .to_string()
            .contains("fatal: config missing"),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_shorter_timeout_started_later_fires_on_time_and_a_longer_one_still_fires() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // Never answer; keep the transport open until both calls timed out.
        while let Some(Ok(_)) = server.recv().await {}
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let start = tokio::time::Instant::now();
    let long = client
        .call_tool("slow", json!({}))
        .timeout(Duration::from_secs(100))
        .send();
    let short = client
        .call_tool("slow", json!({}))
        .timeout(Duration::from_secs(2))
        .send();
    let err = short.await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    let err = long.await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(100) && waited < Duration::from_secs(101),
        "{waited:?}"
    );
    client.close().await;
    let _ = srv.await;
}

#[tokio::test]
async fn every_list_shares_the_page_shape_and_the_cursor_loop() {
    use mcp_proto::schema::{Prompt, ResourceTemplate};

    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // Each list's items live under its own member; the cursor goes back verbatim.
        for (method, member, first, second) in [
            (
                "resources/templates/list",
                "resourceTemplates",
                json!({"uriTemplate": "file:///{a}", "name": "a"}),
                json!({"uriTemplate": "file:///{b}", "name": "b"}),
            ),
            (
                "resources/list",
                "resources",
                json!({"uri": "file:///a", "name": "a"}),
                json!({"uri": "file:///b", "name": "b"}),
            ),
        ] {
            let r = next_request(&mut server).await;
            assert_eq!(r.method, method);
            assert_eq!(params(&r).get("cursor"), None, "first page has no cursor");
            respond(
                &mut server,
                r.id,
                json!({member: [first], "nextCursor": "c/2"}),
            )
            .await;
            let r = next_request(&mut server).await;
            assert_eq!(r.method, method);
            assert_eq!(params(&r)["cursor"], "c/2");
            respond(&mut server, r.id, json!({member: [second], "ttlMs": 5})).await;
        }
        // A server whose prompt list never ends: the page cap stops the loop.
        for i in 0..3 {
            let r = next_request(&mut server).await;
            assert_eq!(r.method, "prompts/list");
            let p =
                json!({"prompts": [{"name": format!("p{i}")}], "nextCursor": format!("{}", i + 1)});
            respond(&mut server, r.id, p).await;
        }
        server
    });
    let client = Client::builder("t", "1")
        .max_list_pages(3)
        .connect(client_end)
        .await
        .unwrap();
    let templates: Vec<ResourceTemplate> = client.list_all().await.unwrap();
    let t: Vec<_> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(t, ["file:///{a}", "file:///{b}"]);
    let resources = client
        .list_all::<mcp_proto::schema::Resource>()
        .await
        .unwrap();
    let r: Vec<_> = resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(r, ["a", "b"]);
    match client.list_all::<Prompt>().await {
        Err(ClientError::TooManyPages { method, limit }) => {
            assert_eq!((method.as_str(), limit), ("prompts/list", 3));
        }
        other => panic!("expected TooManyPages, got {other:?}"),
    }
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn progress_tokens_are_sent_only_when_asked_for() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let mut tokens = Vec::new();
        for _ in 0..2 {
            let r = next_request(&mut server).await;
            tokens.push(params(&r)["_meta"]["progressToken"].clone());
            respond(&mut server, r.id, json!({"content": []})).await;
        }
        tokens
    });
    let client = Client::connect(client_end).await.unwrap();
    client.call_tool("plain", json!({})).await.unwrap();
    client
        .call_tool("asked", json!({}))
        .progress(true)
        .await
        .unwrap();
    let tokens = srv.await.unwrap();
    assert_eq!(tokens[0], Value::Null, "no token unless asked for");
    assert!(tokens[1].is_number(), "{tokens:?}");
}

/// Callers on several threads hand requests to the session and write them
/// themselves while the driver reads on another: every call completes with
/// its own answer, sequential and concurrent callers mixed (a lost wake-up
/// or a lock held across an await would hang here, bounded by the timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn callers_on_many_threads_share_the_driver_without_losing_calls() {
    const TASKS: usize = 16;
    const CALLS: usize = 200;
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        for _ in 0..TASKS * CALLS {
            let r = next_request(&mut server).await;
            let text = params(&r)["arguments"]["text"].clone();
            respond(
                &mut server,
                r.id,
                json!({"content": [{"type": "text", "text": text}]}),
            )
            .await;
        }
        server
    });
    let client = Client::connect(client_end).await.unwrap();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..CALLS {
                let text = format!("t{t}-{i}");
                let r = c.call_tool("echo", json!({ "text": text })).await.unwrap();
                assert_eq!(r.content[0].as_text(), Some(text.as_str()));
            }
        }));
    }
    tokio::time::timeout(Duration::from_secs(60), async {
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
    .expect("every call completes");
    let _server = srv.await.unwrap();
}

/// A transport whose inbound never lets up (every `poll_recv` ready, as
/// the HTTP transport's inline POSTs can be on a busy runtime: no channel
/// between, so tokio's cooperative budget never says `Pending`) must not
/// starve the driver's timer: a call still times out on time. Found by the
/// 30-minute soak (a call 1.35 s past its deadline).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_times_out_while_inbound_never_lets_up() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let (client_end, mut server) = pair();
    let on = Arc::new(AtomicBool::new(false));
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        while let Some(Ok(_)) = server.recv().await {}
    });
    let flooding = Arc::clone(&on);
    let flood = Hooked::on_recv(client_end, move || {
        // An answer to nothing in flight: read and dropped.
        flooding
            .load(Ordering::Relaxed)
            .then(|| Response::new(RequestId::from("stale"), raw(json!({}))).into())
    });
    let client = Client::builder("t", "1").connect(flood).await.unwrap();
    on.store(true, Ordering::Relaxed);
    let start = std::time::Instant::now();
    let call = client
        .call_tool("slow", json!({}))
        .timeout(Duration::from_millis(300))
        .send();
    let err = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call's 300 ms timeout never fired: the flood starved the timer")
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    on.store(false, Ordering::Relaxed);
    drop(client);
    srv.abort();
}

/// Waits for the next notification, at most `within`.
async fn notification_within(t: &mut ChannelTransport, within: Duration) -> Option<String> {
    loop {
        match tokio::time::timeout(within, t.recv()).await {
            Ok(Some(Ok(Message::Notification(n)))) => return Some(n.method.to_string()),
            Ok(Some(Ok(_))) => continue,
            _ => return None,
        }
    }
}

/// Every change a caller makes wakes the driver, whoever took its waker
/// last: a notification queued behind a call, and one after it with no
/// other traffic, both reach the server at once.
#[tokio::test]
async fn a_notification_after_a_call_reaches_the_server_without_other_traffic() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let first = notification_within(&mut server, Duration::from_secs(5)).await;
        let r = next_request(&mut server).await;
        respond(&mut server, r.id, json!({"content": []})).await;
        // Nothing else happens on the connection: only the caller's wake-up
        // can bring it, within this bound.
        let second = notification_within(&mut server, Duration::from_secs(2)).await;
        (first, second)
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    // Queued before the call, so written before its request.
    client.notify("notifications/first", None).unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    // Nothing else wakes the driver now: only this notification's wake-up.
    client.notify("notifications/second", None).unwrap();
    let (first, second) = srv.await.unwrap();
    assert_eq!(first.as_deref(), Some("notifications/first"));
    assert_eq!(second.as_deref(), Some("notifications/second"));
}

/// A driver polled from a new task (a host that moves it) is woken through
/// the new task's waker. (Over a plain channel: the transport moves with
/// the driver, which [`DriverOnly`] would report.)
#[tokio::test]
async fn a_driver_moved_to_another_task_still_hears_callers() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        notification_within(&mut server, Duration::from_secs(5)).await
    });
    let (client, driver) = Client::builder("t", "1").build(client_end);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let first = tokio::spawn(async move {
        let mut driver = driver;
        tokio::select! {
            () = &mut driver => panic!("the driver finished"),
            // In an Option: a future handed back, not awaited here.
            _ = stopped => Some(driver),
        }
    });
    client.wait_ready().await.unwrap();
    stop.send(()).unwrap();
    let driver = first.await.unwrap().unwrap();
    // The first task is gone; its waker wakes nothing.
    let _moved = tokio::spawn(driver);
    tokio::task::yield_now().await;
    client.notify("notifications/after-the-move", None).unwrap();
    assert_eq!(
        srv.await.unwrap().as_deref(),
        Some("notifications/after-the-move")
    );
}

/// Concurrent callers answered by one read send their next requests in one
/// write: none of them writes its own inline ahead of the others (that made
/// two writes a round at stdio C=32, twice the floor's system calls).
#[tokio::test]
async fn callers_answered_together_send_their_next_requests_in_one_write() {
    const CALLERS: usize = 8;
    const ROUNDS: usize = 4;
    let (client_end, mut server) = pair();
    // Counts the client's writes: flushes that follow at least one message.
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = writes.clone();
    let counted = Hooked::on_flush(client_end, move |sent, _: &mut Context<'_>| {
        if sent {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        Poll::Ready(Ok(()))
    });
    let seen = writes.clone();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let mut per_round = Vec::new();
        for round in 0..ROUNDS {
            let before = seen.load(std::sync::atomic::Ordering::SeqCst);
            let mut reqs = Vec::new();
            for _ in 0..CALLERS {
                reqs.push(next_request(&mut server).await);
            }
            if round > 0 {
                // (The first round starts the callers one by one.)
                per_round.push(seen.load(std::sync::atomic::Ordering::SeqCst) - before);
            }
            // All answers at once: one read's worth for the client.
            for r in reqs {
                respond(&mut server, r.id, json!({"content": []})).await;
            }
        }
        per_round
    });
    let client = Client::builder("t", "1").connect(counted).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..CALLERS {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                c.call_tool("echo", json!({})).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(srv.await.unwrap(), vec![1; ROUNDS - 1]);
}

/// What the client's transport saw, in order: `msg` (a message handed
/// over), `nothing` (`poll_recv` was `Pending`), `request` (one queued).
struct Logged(Arc<Mutex<Vec<&'static str>>>);

impl Hooks for Logged {
    fn poll_recv(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let got = inner.poll_recv(cx);
        let event = if got.is_pending() { "nothing" } else { "msg" };
        self.0.lock().unwrap().push(event);
        got
    }
    fn start_send(
        &mut self,
        inner: Pin<&mut DriverOnly<ChannelTransport>>,
        msg: Message,
    ) -> Result<(), TransportError> {
        if let Message::Request(_) = &msg {
            self.0.lock().unwrap().push("request");
        }
        inner.start_send(msg)
    }
}

/// After a read that handed over two or more messages (a round of answers),
/// the driver reads once more after the callers they answered have run: a
/// transport that keeps its read buffer while answers are due (the stdio
/// transport does) sees that read find nothing with no request since, and
/// releases it. After a single answer there is no such read (none is needed:
/// see `mcp_transport_stdio`'s `on_quiet`).
#[tokio::test]
async fn after_a_round_of_answers_the_driver_reads_once_more() {
    let (client_end, mut server) = pair();
    let log = Arc::new(Mutex::new(Vec::new()));
    let transport = Hooked {
        inner: client_end,
        hooks: Logged(log.clone()),
    };
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // One call, then two answered together.
        let r = next_request(&mut server).await;
        respond(&mut server, r.id, json!({})).await;
        let a = next_request(&mut server).await;
        let b = next_request(&mut server).await;
        respond(&mut server, a.id, json!({})).await;
        respond(&mut server, b.id, json!({})).await;
        server
    });
    let client = Client::builder("t", "1")
        .protocol(VersionChoice::Pinned(ProtocolVersion::V2025_11_25))
        .connect(transport)
        .await
        .unwrap();
    client.request_raw("ping", None).await.unwrap();
    let after_one = log.lock().unwrap().len();
    let (a, b) = tokio::join!(
        client.request_raw("ping", None),
        client.request_raw("ping", None)
    );
    a.unwrap();
    b.unwrap();
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let log = log.lock().unwrap().clone();
    // After the single answer: one read that found nothing, then the next
    // requests.
    let one = &log[..after_one];
    let last = one.iter().rposition(|e| *e == "msg").unwrap();
    assert_eq!(&one[last..], ["msg", "nothing"], "{log:?}");
    // After the two answers: that read, and one more, with no request between.
    let last = log.iter().rposition(|e| *e == "msg").unwrap();
    assert_eq!(
        &log[last - 1..],
        ["msg", "msg", "nothing", "nothing"],
        "{log:?}"
    );
    let _server = srv.await.unwrap();
}
