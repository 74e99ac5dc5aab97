//! SSE answers (priming, keepalives, resumption, oversized events), server
//! requests on streams, the standalone `GET` stream.

use super::*;

over_tcp_and_unix!(resumed: dropped_sse_answer_is_resumed_with_last_event_id, dropped_sse_answer_is_resumed_over_a_unix_socket);

async fn resumed(on: On) {
    let server = serve_on(on, |r: &Rec| {
        if r.method == http::Method::GET {
            assert_eq!(r.header("last-event-id"), Some("e2"));
            return Reply::Sse(vec![event_id(
                "e3",
                &result(&json!(5), json!({"resumed":true})),
            )])
            .into();
        }
        Reply::Sse(vec![
            Piece::Data("id: e1\nretry: 30\ndata:\n\n".into()),
            event_id(
                "e2",
                &json!({"jsonrpc":"2.0","method":"notifications/message","params":{}}).to_string(),
            ),
            Piece::Sleep(50),
            Piece::Fail,
        ])
        .into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    let started = Instant::now();
    t.send(req(5, "tools/call", json!({"name":"slow"})))
        .await
        .unwrap();
    assert_eq!(
        recv_ok(&mut t).await.method(),
        Some("notifications/message")
    );
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"resumed":true}));
    // The server's retry (30 ms) was honoured before reconnecting.
    assert!(started.elapsed() >= Duration::from_millis(30));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].method, http::Method::GET);
    assert_eq!(reqs[1].header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn dropped_sse_answer_without_ids_fails_the_request_only() {
    let server = serve(|r: &Rec| {
        if r.rpc_method() == Some("ping") {
            return Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into();
        }
        Reply::Sse(vec![Piece::Data(": hi\n\n".into()), Piece::Fail]).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.request_id(), Some(&RequestId::Number(1)));
    assert_eq!(e.kind(), TransportErrorKind::Io);
    // No GET: there was no event id to resume from.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.method == http::Method::POST)
    );
    // Still usable.
    t.send(req(2, "ping", json!({}))).await.unwrap();
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(2)));
}

#[tokio::test]
async fn graceful_closes_do_not_refill_the_retry_budget() {
    // Every stream primes and closes gracefully without the answer: a
    // server that would make rmcp reconnect forever.
    let server =
        serve(|_: &Rec| Reply::Sse(vec![Piece::Data("id: x\nretry: 1\ndata:\n\n".into())]).into())
            .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_resume_attempts(3)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(9, "tools/call", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.request_id(), Some(&RequestId::Number(9)));
    assert!(
        matches!(http_cause(&e), HttpError::StreamEnded { resumes: 3 }),
        "{e}"
    );
    let gets = server
        .requests()
        .iter()
        .filter(|r| r.method == http::Method::GET)
        .count();
    assert_eq!(gets, 3);
}

#[tokio::test]
async fn keepalive_comments_then_answer() {
    let server = serve(|r: &Rec| {
        let mut pieces = Vec::new();
        for _ in 0..50 {
            pieces.push(Piece::Data(":\r\n".into()));
            pieces.push(Piece::Data(": keep-alive\r\n\r\n".into()));
        }
        pieces.push(event(&result(&r.id(), json!({"after":"comments"}))));
        Reply::Sse(pieces).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    assert_eq!(
        result_of(&recv_ok(&mut t).await),
        json!({"after":"comments"})
    );
}

#[tokio::test]
async fn huge_event_is_a_scoped_decode_error() {
    let server = serve(|r: &Rec| {
        if r.rpc_method() == Some("big") {
            let big = "x".repeat(10_000);
            return Reply::Sse(vec![event(&result(&r.id(), json!(big)))]).into();
        }
        Reply::Sse(vec![event(&result(&r.id(), json!("small")))]).into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_sse_event_size(4096)
        .build()
        .unwrap();
    t.send(req(1, "big", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Decode);
    assert_eq!(e.request_id(), Some(&RequestId::Number(1)));
    assert!(chain(&e).to_string().contains("4096"), "{e}");
    t.send(req(2, "small", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!("small"));
}

#[tokio::test]
async fn server_requests_on_streams_and_replies_posted_back() {
    let server = serve(|r: &Rec| {
        if r.body.get("result").is_some() {
            return Reply::Accepted.into();
        }
        Reply::Sse(vec![
            event(
                &json!({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}})
                    .to_string(),
            ),
            Piece::Sleep(50),
            event(&result(&r.id(), json!({"done":true}))),
        ])
        .into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let m = recv_ok(&mut t).await;
    assert_eq!(m.method(), Some("sampling/createMessage"));
    let reply = Response::new("s1".into(), RawJson::from_string("{}".into()).unwrap());
    t.send(reply.into()).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"done":true}));
    let answer = || {
        server
            .requests()
            .into_iter()
            .find(|r| r.body.get("result").is_some())
    };
    until("the reply POSTed", || answer().is_some()).await;
    let posted = answer().unwrap();
    assert_eq!(posted.body["id"], json!("s1"));
}

over_tcp_and_unix!(standalone: standalone_get_stream_delivers_server_messages, standalone_get_stream_over_a_unix_socket);

async fn standalone(on: On) {
    let server = serve_on(on, |r: &Rec| {
        if r.method == http::Method::GET {
            return Reply::Sse(vec![
                event(
                    &json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
                        .to_string(),
                ),
                Piece::KeepAliveForever,
            ])
            .into();
        }
        match r.rpc_method() {
            Some("initialize") => Reply2 {
                reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
                headers: vec![("mcp-session-id", "s".into())],
            },
            _ => Reply::Accepted.into(),
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
    let m = recv_ok(&mut t).await;
    assert_eq!(m.method(), Some("notifications/tools/list_changed"));
    let get = server
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::GET)
        .unwrap();
    assert_eq!(get.header("mcp-session-id"), Some("s"));
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    // Opened only after the server accepted notifications/initialized.
    let initialized = server
        .requests()
        .into_iter()
        .find(|r| r.rpc_method() == Some("notifications/initialized"))
        .unwrap();
    assert!(get.index > initialized.index);
    // Closing ends the GET stream (bounded, even though it never ends).
    tokio::time::timeout(Duration::from_secs(6), t.close())
        .await
        .unwrap()
        .unwrap();
    until("the GET stream closed", || server.closed_streams() >= 1).await;
}

#[tokio::test]
async fn standalone_get_405_is_fine() {
    let server = serve(|r: &Rec| {
        if r.method == http::Method::GET {
            return Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "", String::new()).into();
        }
        match r.rpc_method() {
            Some("notifications/initialized") => Reply::Accepted.into(),
            _ => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
    t.send(req(2, "ping", json!({}))).await.unwrap();
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(2)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Exactly one GET: no reconnect loop after 405.
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.method == http::Method::GET)
            .count(),
        1
    );
}
