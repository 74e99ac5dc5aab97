//! The transport against a loopback hyper server with fault modes.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::pin::Pin;
use std::time::{Duration, Instant};

use http::StatusCode;
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId, Response};
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::{HttpError, HttpTransport};
use serde_json::{Value, json};
use support::*;

fn raw(v: Value) -> Option<RawJson> {
    Some(RawJson::from_string(v.to_string()).unwrap())
}

fn req(id: i64, method: &'static str, params: Value) -> Message {
    Request::new(id.into(), method, raw(params)).into()
}

fn notif(method: &'static str, params: Value) -> Message {
    Notification::new(method, raw(params)).into()
}

async fn recv(t: &mut HttpTransport) -> Result<Message, TransportError> {
    tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .expect("no message within 10 s")
        .expect("transport ended")
}

async fn recv_ok(t: &mut HttpTransport) -> Message {
    match recv(t).await {
        Ok(m) => m,
        Err(e) => panic!("expected a message, got error {e}"),
    }
}

async fn recv_err(t: &mut HttpTransport) -> TransportError {
    match recv(t).await {
        Ok(m) => panic!("expected an error, got {m:?}"),
        Err(e) => e,
    }
}

fn result_of(m: &Message) -> Value {
    match m {
        Message::Response(r) => serde_json::from_str(r.result.get()).unwrap(),
        other => panic!("not a response: {other:?}"),
    }
}

fn set_version(t: &mut HttpTransport, v: ProtocolVersion) {
    Pin::new(t).set_protocol_version(v);
}

fn http_cause(e: &TransportError) -> &HttpError {
    e.cause()
        .and_then(|c| c.downcast_ref::<HttpError>())
        .unwrap_or_else(|| panic!("cause is not an HttpError: {e:?}"))
}

/// A legacy server: JSON for initialize (with a session id), 202 for
/// notifications, SSE with a priming event for everything else.
fn legacy_handler(r: &Rec) -> Reply2 {
    match r.rpc_method() {
        Some("initialize") => Reply2 {
            reply: Reply::Json(
                StatusCode::OK,
                result(&r.id(), json!({"protocolVersion":"2025-11-25"})),
            ),
            headers: vec![("mcp-session-id", "sess-1".into())],
        },
        None if r.method == http::Method::DELETE => {
            Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "", String::new()).into()
        }
        Some(m) if m.starts_with("notifications/") => Reply::Accepted.into(),
        Some(_) => Reply::Sse(vec![
            Piece::Data("id: p1\nretry: 5\ndata:\n\n".into()),
            event(
                &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})
                    .to_string(),
            ),
            event(&result(&r.id(), json!({"ok": r.rpc_method()}))),
        ])
        .into(),
        None => Reply::Raw(StatusCode::BAD_REQUEST, "text/plain", "no".into()).into(),
    }
}

#[tokio::test]
async fn legacy_session_headers_priming_and_keepalive_reuse() {
    let server = serve(legacy_handler).await;
    let mut t = HttpTransport::builder(&server.url)
        .header("authorization", "Bearer secret")
        .build()
        .unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    let init = recv_ok(&mut t).await;
    assert_eq!(init.id(), Some(&RequestId::Number(1)));
    assert_eq!(t.session_id().as_deref(), Some("sess-1"));
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
    for i in 2..7 {
        t.send(req(i, "tools/list", json!({}))).await.unwrap();
        // The priming event is skipped; progress then the answer arrive.
        let p = recv_ok(&mut t).await;
        assert_eq!(p.method(), Some("notifications/progress"));
        let a = recv_ok(&mut t).await;
        assert_eq!(result_of(&a), json!({"ok":"tools/list"}));
    }
    t.close().await.unwrap();
    let reqs = server.requests();
    let init = &reqs[0];
    assert_eq!(
        init.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None);
    assert_eq!(init.header("authorization"), Some("Bearer secret"));
    for r in &reqs[1..reqs.len() - 1] {
        assert_eq!(r.header("mcp-session-id"), Some("sess-1"), "{r:?}");
        assert_eq!(r.header("mcp-protocol-version"), Some("2025-11-25"));
        // Legacy: no modern headers.
        assert_eq!(r.header("mcp-method"), None);
    }
    let last = reqs.last().unwrap();
    assert_eq!(last.method, http::Method::DELETE);
    assert_eq!(last.header("mcp-session-id"), Some("sess-1"));
    // 8 requests (sequential) over one kept-alive connection.
    assert_eq!(reqs.len(), 8);
    let conns: Vec<_> = reqs
        .iter()
        .map(|r| {
            (
                r.rpc_method().unwrap_or(r.method.as_str()).to_owned(),
                r.conn,
            )
        })
        .collect();
    assert_eq!(
        server.connections(),
        1,
        "keep-alive connection was not reused: {conns:?}"
    );
}

#[tokio::test]
async fn concurrent_posts_share_the_pool() {
    let server = serve(|r: &Rec| {
        Reply::Sse(vec![Piece::Sleep(50), event(&result(&r.id(), json!({})))]).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_06_18);
    for i in 0..4 {
        t.send(req(i, "ping", json!({}))).await.unwrap();
    }
    let started = Instant::now();
    let mut ids: Vec<_> = Vec::new();
    for _ in 0..4 {
        ids.push(recv_ok(&mut t).await.id().cloned().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (0..4).map(RequestId::Number).collect::<Vec<_>>());
    // Concurrent, not one after another (4 × 50 ms).
    assert!(
        started.elapsed() < Duration::from_millis(180),
        "{:?}",
        started.elapsed()
    );
    // A second round reuses the pooled connections.
    for i in 10..14 {
        t.send(req(i, "ping", json!({}))).await.unwrap();
    }
    for _ in 0..4 {
        recv_ok(&mut t).await;
    }
    assert!(
        server.connections() <= 4,
        "{} connections",
        server.connections()
    );
}

#[tokio::test]
async fn session_expiry_is_typed_and_forgets_the_session() {
    let server = serve(|r: &Rec| {
        if r.rpc_method() == Some("initialize") {
            let sid = if r.index == 0 { "old" } else { "new" };
            return Reply2 {
                reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
                headers: vec![("mcp-session-id", sid.into())],
            };
        }
        if r.header("mcp-session-id") == Some("old") {
            return Reply::Raw(
                StatusCode::NOT_FOUND,
                "text/plain",
                "session not found".into(),
            )
            .into();
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"fine":true}))).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::SessionExpired);
    assert_eq!(e.request_id(), Some(&RequestId::Number(2)));
    assert!(!e.is_terminal());
    assert!(matches!(http_cause(&e), HttpError::SessionExpired { session } if session == "old"));
    assert_eq!(t.session_id(), None);
    // The client re-initializes: without the old session id.
    t.send(req(3, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    t.send(req(4, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"fine":true}));
    let reqs = server.requests();
    assert_eq!(reqs[2].header("mcp-session-id"), None);
    assert_eq!(reqs[3].header("mcp-session-id"), Some("new"));
}

#[tokio::test]
async fn dropped_sse_answer_is_resumed_with_last_event_id() {
    let server = serve(|r: &Rec| {
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
    assert!(e.to_string().contains("4096"), "{e}");
    t.send(req(2, "small", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!("small"));
}

#[tokio::test]
async fn json_body_limit_is_enforced() {
    let server = serve(|r: &Rec| {
        Reply::Json(StatusCode::OK, result(&r.id(), json!("y".repeat(5000)))).into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_body_size(1000)
        .build()
        .unwrap();
    t.send(req(1, "x", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert!(
        matches!(http_cause(&e), HttpError::BodyTooLarge { limit: 1000, .. }),
        "{e}"
    );
}

#[tokio::test]
async fn bad_answers_are_typed_errors_with_status_and_excerpt() {
    let server = serve(|r: &Rec| match r.rpc_method() {
        Some("html") => Reply::Raw(
            StatusCode::OK,
            "text/html",
            "<html>login page</html>".into(),
        )
        .into(),
        Some("badjson") => Reply::Json(StatusCode::OK, "{not json".into()).into(),
        Some("fivexx") => Reply::Raw(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "overloaded, try later".into(),
        )
        .into(),
        Some("unauth") => Reply2 {
            reply: Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "no token".into()),
            headers: vec![("www-authenticate", "Bearer realm=\"mcp\"".into())],
        },
        Some("accepted") => Reply::Accepted.into(),
        _ => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "html", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    let s = e.to_string();
    assert!(
        s.contains("200") && s.contains("text/html") && s.contains("login page"),
        "{s}"
    );

    t.send(req(2, "badjson", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    assert!(
        matches!(http_cause(&e), HttpError::InvalidBody { excerpt, .. } if excerpt == "{not json"),
        "{e}"
    );

    t.send(req(3, "fivexx", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    assert!(
        matches!(http_cause(&e), HttpError::Status { status, excerpt } if status.as_u16() == 503 && excerpt.contains("overloaded"))
    );

    t.send(req(4, "unauth", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Unauthorized);

    t.send(req(5, "accepted", json!({}))).await.unwrap();
    assert_eq!(recv_err(&mut t).await.kind(), TransportErrorKind::Protocol);

    // All scoped; the transport still works.
    t.send(req(6, "ok", json!({}))).await.unwrap();
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(6)));
}

#[tokio::test]
async fn tool_set_changed_error_passes_through() {
    let server = serve(|r: &Rec| {
        Reply::Json(
            StatusCode::OK,
            json!({"jsonrpc":"2.0","id":r.id(),"error":{"code":-32602,"message":"tool set changed; list tools again"}}).to_string(),
        )
        .into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "tools/call", json!({"name":"gone"})))
        .await
        .unwrap();
    match recv_ok(&mut t).await {
        Message::Error(e) => {
            assert_eq!(e.error.code.0, -32602);
            assert_eq!(e.id, Some(RequestId::Number(1)));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn cross_origin_redirect_is_refused_and_leaks_nothing() {
    let other = serve(|_: &Rec| Reply::Json(StatusCode::OK, "{}".into()).into()).await;
    let target = format!("http://127.0.0.1:{}/mcp", other.port);
    let server = serve(move |_: &Rec| {
        Reply::Redirect(StatusCode::TEMPORARY_REDIRECT, target.clone()).into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .header("authorization", "Bearer secret")
        .header("cookie", "s=1")
        .build()
        .unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    assert!(
        matches!(http_cause(&e), HttpError::CrossOriginRedirect { .. }),
        "{e}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        other.requests().is_empty(),
        "the other origin got a request"
    );
}

#[tokio::test]
async fn same_origin_redirects_are_followed_a_bounded_number_of_times() {
    let server = serve(|r: &Rec| match r.path.as_str() {
        "/mcp" => Reply::Redirect(StatusCode::PERMANENT_REDIRECT, "/mcp2".into()).into(),
        "/mcp2" => Reply::Json(StatusCode::OK, result(&r.id(), json!({"via":"mcp2"}))).into(),
        _ => Reply::Redirect(StatusCode::TEMPORARY_REDIRECT, "/loop".into()).into(),
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .header("authorization", "Bearer s")
        .build()
        .unwrap();
    t.send(req(1, "x", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"via":"mcp2"}));
    let reqs = server.requests();
    assert_eq!(reqs[1].header("authorization"), Some("Bearer s"));
    assert_eq!(reqs[1].body["id"], json!(1));

    let looping =
        serve(|_: &Rec| Reply::Redirect(StatusCode::TEMPORARY_REDIRECT, "/again".into()).into())
            .await;
    let mut t = HttpTransport::new(&looping.url).unwrap();
    t.send(req(1, "x", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert!(matches!(http_cause(&e), HttpError::Redirect { .. }), "{e}");
    assert_eq!(looping.requests().len(), 6);
}

#[tokio::test]
async fn invalid_session_id_is_rejected() {
    let server = serve(|r: &Rec| Reply2 {
        reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
        headers: vec![("mcp-session-id", "has space".into())],
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert!(matches!(http_cause(&e), HttpError::InvalidSessionId));
    assert_eq!(t.session_id(), None);
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
    tokio::time::sleep(Duration::from_millis(50)).await;
    let posted = server
        .requests()
        .into_iter()
        .find(|r| r.body.get("result").is_some())
        .unwrap();
    assert_eq!(posted.body["id"], json!("s1"));
}

#[tokio::test]
async fn standalone_get_stream_delivers_server_messages() {
    let server = serve(|r: &Rec| {
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
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.closed_streams() >= 1);
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

#[tokio::test]
async fn close_is_bounded_when_delete_hangs() {
    let server = serve(|r: &Rec| {
        if r.method == http::Method::DELETE {
            return Reply::Sse(vec![Piece::KeepAliveForever]).into();
        }
        Reply2 {
            reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
            headers: vec![("mcp-session-id", "s".into())],
        }
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    let started = Instant::now();
    t.close().await.unwrap();
    // DELETE answered (headers) immediately here; close must not wait for the body.
    assert!(started.elapsed() < Duration::from_secs(6));
    assert!(t.recv().await.is_none());
}

// ---- 2026-07-28 ----

#[tokio::test]
async fn modern_headers_and_x_mcp_header_filtering() {
    let server = serve(|r: &Rec| match r.rpc_method() {
        Some("tools/list") => Reply::Json(
            StatusCode::OK,
            result(
                &r.id(),
                json!({"tools":[
                    {"name":"sql","inputSchema":{"type":"object","properties":{
                        "region":{"type":"string","x-mcp-header":"Region"},
                        "n":{"type":"integer","x-mcp-header":"N"},
                        "query":{"type":"string"}}}},
                    {"name":"bad","inputSchema":{"type":"object","properties":{
                        "f":{"type":"number","x-mcp-header":"F"}}}}]}),
            ),
        )
        .into(),
        _ => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let tools = result_of(&recv_ok(&mut t).await);
    let names: Vec<_> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        names,
        vec![json!("sql")],
        "the invalid tool must be left out"
    );
    t.send(req(
        2,
        "tools/call",
        json!({"name":"sql","arguments":{"region":"Zürich","n":42,"query":"select"}}),
    ))
    .await
    .unwrap();
    recv_ok(&mut t).await;
    t.send(req(3, "resources/read", json!({"uri":"file:///a b"})))
        .await
        .unwrap();
    recv_ok(&mut t).await;
    let reqs = server.requests();
    assert_eq!(reqs[0].header("mcp-method"), Some("tools/list"));
    assert_eq!(reqs[0].header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(reqs[0].header("mcp-name"), None);
    let call = &reqs[1];
    assert_eq!(call.header("mcp-method"), Some("tools/call"));
    assert_eq!(call.header("mcp-name"), Some("sql"));
    assert_eq!(
        call.header("mcp-param-region"),
        Some("=?base64?WsO8cmljaA==?=")
    );
    assert_eq!(call.header("mcp-param-n"), Some("42"));
    assert_eq!(call.header("mcp-session-id"), None);
    assert_eq!(reqs[2].header("mcp-name"), Some("file:///a b"));
}

#[tokio::test]
async fn modern_era_detection_reads_the_400_body() {
    let server = serve(|r: &Rec| match r.header("x-mode") {
        Some("modern") => Reply::Json(
            StatusCode::BAD_REQUEST,
            json!({"jsonrpc":"2.0","id":r.id(),"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}).to_string(),
        )
        .into(),
        _ => Reply::Raw(StatusCode::BAD_REQUEST, "text/plain", "Bad Request: no session".into()).into(),
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .header("x-mode", "modern")
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(1, "server/discover", json!({}))).await.unwrap();
    match recv_ok(&mut t).await {
        Message::Error(e) => {
            assert_eq!(e.error.code.0, -32022);
            assert_eq!(e.id, Some(RequestId::Number(1)));
        }
        other => panic!("{other:?}"),
    }
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(1, "server/discover", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    assert_eq!(e.request_id(), Some(&RequestId::Number(1)));
    assert!(e.to_string().contains("no session"), "{e}");
}

#[tokio::test]
async fn modern_cancellation_closes_the_stream_instead_of_posting() {
    let server = serve(|_: &Rec| {
        Reply::Sse(vec![
            event(
                &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":0}})
                    .to_string(),
            ),
            Piece::KeepAliveForever,
        ])
        .into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(7, "tools/call", json!({"name":"forever"})))
        .await
        .unwrap();
    assert_eq!(
        recv_ok(&mut t).await.method(),
        Some("notifications/progress")
    );
    assert_eq!(server.closed_streams(), 0);
    t.send(notif(
        "notifications/cancelled",
        json!({"requestId":7,"reason":"user"}),
    ))
    .await
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.closed_streams() == 0 {
        assert!(Instant::now() < deadline, "the stream was not closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.requests().len(),
        1,
        "notifications/cancelled must not be POSTed"
    );
}

#[tokio::test]
async fn legacy_cancellation_is_posted() {
    let server = serve(|_: &Rec| Reply::Accepted.into()).await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(notif("notifications/cancelled", json!({"requestId":7})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        server.requests()[0].rpc_method(),
        Some("notifications/cancelled")
    );
}

#[tokio::test]
async fn modern_broken_stream_reissued_only_where_allowed() {
    let server = serve(|r: &Rec| {
        let first = r.index < 2 || (r.rpc_method() == Some("tools/call"));
        if first && r.index != 1 {
            return Reply::Sse(vec![Piece::Data(": hi\n\n".into()), Piece::Fail]).into();
        }
        Reply::Sse(vec![event(&result(&r.id(), json!({"n": r.index})))]).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    // tools/list: broken, then re-issued once and answered.
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"n":1}));
    // tools/call: not re-issued (side effects).
    t.send(req(2, "tools/call", json!({"name":"x"})))
        .await
        .unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.request_id(), Some(&RequestId::Number(2)));
    let calls = server
        .requests()
        .iter()
        .filter(|r| r.rpc_method() == Some("tools/call"))
        .count();
    assert_eq!(calls, 1);
}

#[tokio::test]
async fn subscriptions_listen_stream_stays_open() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let rx = std::sync::Mutex::new(Some(rx));
    let server = serve(move |_: &Rec| match rx.lock().unwrap().take() {
        Some(rx) => Reply::SseChannel(rx).into(),
        None => Reply::Raw(StatusCode::BAD_REQUEST, "text/plain", "once".into()).into(),
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(1, "subscriptions/listen", json!({})))
        .await
        .unwrap();
    tx.send(event(
        &json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}})
            .to_string(),
    ))
    .unwrap();
    assert_eq!(
        recv_ok(&mut t).await.method(),
        Some("notifications/subscriptions/acknowledged")
    );
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(30)).await;
        tx.send(event(
            &json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}).to_string(),
        ))
        .unwrap();
        assert_eq!(
            recv_ok(&mut t).await.method(),
            Some("notifications/tools/list_changed")
        );
    }
    assert_eq!(
        server.requests()[0].header("mcp-method"),
        Some("subscriptions/listen")
    );
}

// ---- 2024-11-05 HTTP+SSE fallback ----

#[tokio::test]
async fn falls_back_to_http_sse_when_post_is_refused() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Piece>();
    let rx = std::sync::Mutex::new(Some(rx));
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET && r.path == "/mcp" {
            tx.send(Piece::Data(
                "event: endpoint\ndata: /messages?sessionId=abc\n\n".into(),
            ))
            .unwrap();
            return Reply::SseChannel(rx.lock().unwrap().take().unwrap()).into();
        }
        if r.path.starts_with("/messages") {
            if r.body.get("id").is_some() && r.body.get("method").is_some() {
                let m = format!(
                    "event: message\ndata: {}\n\n",
                    result(&r.id(), json!({"legacy":true}))
                );
                tx.send(Piece::Data(m)).unwrap();
            }
            return Reply::Accepted.into();
        }
        Reply::Raw(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "Method Not Allowed".into(),
        )
        .into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"legacy":true}));
    assert!(t.is_legacy_sse());
    set_version(&mut t, ProtocolVersion::V2024_11_05);
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(2)));
    let paths: Vec<_> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        paths,
        [
            "POST /mcp",
            "GET /mcp",
            "POST /messages?sessionId=abc",
            "POST /messages?sessionId=abc"
        ]
    );
}

#[tokio::test]
async fn no_fallback_when_get_is_refused_too() {
    let server = serve(|_: &Rec| {
        Reply::Raw(StatusCode::NOT_FOUND, "text/plain", "nothing here".into()).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    assert!(
        e.to_string().contains("404") && e.to_string().contains("nothing here"),
        "{e}"
    );
}

// ---- auth hook and timeouts ----

/// Hands out "old" until told the server refused it, then "new".
#[derive(Default)]
struct RefreshingToken {
    refreshed: std::sync::atomic::AtomicBool,
    challenges: std::sync::Mutex<Vec<String>>,
    statuses: std::sync::Mutex<Vec<StatusCode>>,
}

impl mcp_transport_http::AuthProvider for RefreshingToken {
    fn header(&self) -> mcp_transport_http::BoxFuture<'_, Option<http::HeaderValue>> {
        let t = if self.refreshed.load(std::sync::atomic::Ordering::SeqCst) {
            "Bearer new"
        } else {
            "Bearer old"
        };
        Box::pin(async move { Some(http::HeaderValue::from_static(t)) })
    }
    fn on_unauthorized(
        &self,
        refusal: mcp_transport_http::Unauthorized,
    ) -> mcp_transport_http::BoxFuture<'_, bool> {
        self.statuses.lock().unwrap().push(refusal.status);
        self.challenges.lock().unwrap().push(
            refusal
                .www_authenticate
                .and_then(|v| v.to_str().ok().map(str::to_owned))
                .unwrap_or_default(),
        );
        let first = !self
            .refreshed
            .swap(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { first })
    }
}

#[tokio::test]
async fn auth_provider_refreshes_once_after_401() {
    let server = serve(|r: &Rec| {
        if r.header("authorization") != Some("Bearer new") {
            return Reply2 {
                reply: Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "expired".into()),
                headers: vec![("www-authenticate", "Bearer error=\"invalid_token\"".into())],
            };
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"authed":true}))).into()
    })
    .await;
    let auth = std::sync::Arc::new(RefreshingToken::default());
    let mut t = HttpTransport::builder(&server.url)
        .auth(auth.clone())
        .build()
        .unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"authed":true}));
    assert_eq!(
        *auth.challenges.lock().unwrap(),
        vec!["Bearer error=\"invalid_token\"".to_owned()]
    );
    assert_eq!(*auth.statuses.lock().unwrap(), [StatusCode::UNAUTHORIZED]);
    let auths: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(auths, ["Bearer old", "Bearer new"]);
}

#[tokio::test]
async fn unauthorized_without_refresh_is_typed() {
    let server =
        serve(|_: &Rec| Reply::Raw(StatusCode::FORBIDDEN, "text/plain", "nope".into()).into())
            .await;
    let auth = std::sync::Arc::new(RefreshingToken::default());
    auth.refreshed
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut t = HttpTransport::builder(&server.url)
        .auth(auth.clone())
        .build()
        .unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Unauthorized);
    // The hook saw the 403 as a 403, without a challenge.
    assert_eq!(*auth.statuses.lock().unwrap(), [StatusCode::FORBIDDEN]);
    assert_eq!(*auth.challenges.lock().unwrap(), [String::new()]);
    assert_eq!(
        server.requests().len(),
        1,
        "no retry when the provider declines"
    );
}

#[tokio::test]
async fn request_timeout_when_server_never_answers() {
    // Accepts TCP connections and never writes a byte.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let mut t = HttpTransport::builder(format!("http://127.0.0.1:{port}/mcp"))
        .request_timeout(Some(Duration::from_millis(200)))
        .build()
        .unwrap();
    let started = Instant::now();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Timeout);
    assert_eq!(e.request_id(), Some(&RequestId::Number(1)));
    assert!(started.elapsed() < Duration::from_secs(2));
    hold.abort();
}

#[tokio::test]
async fn connection_refused_is_a_scoped_io_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut t = HttpTransport::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Io);
    assert_eq!(e.request_id(), Some(&RequestId::Number(1)));
}

#[test]
fn bad_urls_are_rejected_at_build() {
    for url in ["ftp://x/mcp", "not a url", "/relative", "http://"] {
        assert!(
            matches!(HttpTransport::new(url), Err(HttpError::InvalidUrl { .. })),
            "{url}"
        );
    }
    assert!(matches!(
        HttpTransport::builder("http://h/mcp").header("bad name", "v").build(),
        Err(HttpError::InvalidHeader { name }) if name == "bad name"
    ));
    assert!(mcp_transport_http::BearerToken::new("line\nbreak").is_err());
}

#[tokio::test]
async fn send_after_close_fails_and_recv_ends() {
    let server =
        serve(|r: &Rec| Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into()).await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.close().await.unwrap();
    assert!(t.recv().await.is_none());
    let e = t.send(req(1, "x", json!({}))).await.unwrap_err();
    assert_eq!(e.kind(), TransportErrorKind::Closed);
    assert!(
        server.requests().is_empty(),
        "no session: close sends no DELETE"
    );
}
