//! Legacy sessions, the connection pool, session expiry, closing, and
//! URLs refused at build.

use super::*;

over_tcp_and_unix!(legacy_session: legacy_session_headers_priming_and_keepalive_reuse, legacy_session_over_a_unix_socket);

async fn legacy_session(on: On) {
    let server = serve_on(on, legacy_handler).await;
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
    assert_eq!(init.header("host"), Some(on.host(&server).as_str()));
    assert_eq!(init.path, "/mcp");
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
        Reply::Sse(vec![Piece::Sleep(250), event(&result(&r.id(), json!({})))]).into()
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
    // Concurrent, not one after another (4 × 250 ms): the margin on both
    // sides is wide enough for a machine whose cores are busy.
    assert!(
        started.elapsed() < Duration::from_millis(750),
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

/// A notification is flushed once the server has accepted it (202), not
/// when its POST is spawned: `send` (ready, start, flush) returns after the
/// server saw it, and a request sent right after waits for nothing more.
/// (On this single-threaded runtime, a spawned POST has not even started when
/// an unwaited flush returns.)
#[tokio::test]
async fn a_notification_is_flushed_when_the_server_accepted_it() {
    let server = serve(legacy_handler).await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    let seen = |server: &Server, m: &str| {
        server
            .requests()
            .iter()
            .filter(|r| r.rpc_method() == Some(m))
            .count()
    };
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
    assert_eq!(seen(&server, "notifications/initialized"), 1);
    // A request's flush does not wait for its answer.
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    assert_eq!(seen(&server, "tools/list"), 0);
    recv_ok(&mut t).await;
    recv_ok(&mut t).await;
    // Each notification is waited for, not only the first.
    t.send(notif("notifications/roots/list_changed", json!({})))
        .await
        .unwrap();
    assert_eq!(seen(&server, "notifications/roots/list_changed"), 1);
    t.close().await.unwrap();
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
    // The loss, once, then the request the server did not process.
    let lost = recv_err(&mut t).await;
    assert_eq!(lost.kind(), TransportErrorKind::SessionExpired);
    assert_eq!(lost.request_id(), None);
    assert!(!lost.is_terminal());
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

#[test]
fn bad_urls_are_rejected_at_build() {
    for (url, problem) in [
        ("ftp://x/mcp", "scheme"),
        ("not a url", "syntax"),
        ("/relative", "scheme"),
        ("http://", "syntax"),
        ("http:///mcp", "syntax"),
        ("http://:8080/mcp", "no host"),
    ] {
        let got = match HttpTransport::new(url) {
            Err(HttpError::InvalidUrl { reason, .. }) => match reason {
                UrlProblem::Syntax(_) => "syntax",
                UrlProblem::Scheme => "scheme",
                UrlProblem::NoHost => "no host",
                other => panic!("{url}: {other}"),
            },
            other => panic!("{url}: {other:?}"),
        };
        assert_eq!(got, problem, "{url}");
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

/// A server that forgets every session at its `notifications/initialized`
/// (404), the shape that made `mcp` exit 4: the loss is reported once, not
/// scoped to a request; nothing but `initialize` is sent until a new
/// session starts (a request sent meanwhile fails at once, not sent); and
/// once `initialize` went out, requests carry the new session.
#[tokio::test]
async fn a_404_to_a_notification_reports_the_loss_and_holds_everything_back() {
    let server = serve(|r: &Rec| {
        let session = r.header("mcp-session-id").map(str::to_owned);
        match (r.rpc_method(), session.as_deref()) {
            (Some("initialize"), None) => {
                let sid = format!("s{}", r.index);
                Reply2 {
                    reply: Reply::Json(StatusCode::OK, result(&r.id(), json!({}))),
                    headers: vec![("mcp-session-id", sid)],
                }
            }
            (_, None) => {
                Reply::Raw(StatusCode::BAD_REQUEST, "text/plain", "no session".into()).into()
            }
            (Some("notifications/initialized"), Some("s0")) => Reply::Raw(
                StatusCode::NOT_FOUND,
                "text/plain",
                "unknown session".into(),
            )
            .into(),
            (Some(m), Some(_)) if m.starts_with("notifications/") => Reply::Accepted.into(),
            (_, Some(_)) => {
                Reply::Json(StatusCode::OK, result(&r.id(), json!({"ok": true}))).into()
            }
        }
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
    let lost = recv_err(&mut t).await;
    assert_eq!(lost.kind(), TransportErrorKind::SessionExpired, "{lost:?}");
    assert_eq!(lost.request_id(), None);
    assert!(!lost.is_terminal());
    assert!(matches!(http_cause(&lost), HttpError::SessionExpired { session } if session == "s0"));
    assert_eq!(t.session_id(), None);
    // Sent before the client started a new session: not sent at all.
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    let held = recv_err(&mut t).await;
    assert_eq!(held.kind(), TransportErrorKind::SessionExpired);
    assert_eq!(held.request_id(), Some(&2.into()));
    t.send(notif("notifications/roots/list_changed", json!({})))
        .await
        .unwrap();
    // The new session.
    t.send(req(3, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    let new = t.session_id().expect("a new session");
    assert_ne!(new, "s0");
    t.send(notif("notifications/initialized", json!({})))
        .await
        .unwrap();
    t.send(req(4, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"ok": true}));
    let reqs = server.requests();
    let without: Vec<_> = reqs
        .iter()
        .filter(|r| r.header("mcp-session-id").is_none())
        .filter_map(|r| r.rpc_method())
        .collect();
    assert_eq!(without, ["initialize", "initialize"], "{reqs:?}");
    assert!(
        reqs.iter()
            .all(|r| r.rpc_method() != Some("notifications/roots/list_changed"))
    );
}

/// A 404 to the standalone `GET` stream is a loss too; a 404 to the `GET`
/// resuming a request's stream reports the loss and fails that request,
/// not as "not processed" (it may have run), so it is not re-sent.
#[tokio::test]
async fn a_404_to_a_get_stream_reports_the_loss() {
    let server = serve(|r: &Rec| {
        if r.method == http::Method::GET {
            return Reply::Raw(StatusCode::NOT_FOUND, "text/plain", "gone".into()).into();
        }
        if r.rpc_method() == Some("tools/call") {
            return Reply::Sse(vec![Piece::Data("id: e1\nretry: 0\ndata:\n\n".into())]).into();
        }
        session_s_then_accepted(r)
    })
    .await;
    // The resumption GET.
    let mut t = HttpTransport::new(&server.url).unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(2, "tools/call", json!({}))).await.unwrap();
    let lost = recv_err(&mut t).await;
    assert_eq!(
        (lost.kind(), lost.request_id()),
        (TransportErrorKind::SessionExpired, None)
    );
    let e = recv_err(&mut t).await;
    assert_eq!(e.request_id(), Some(&2.into()));
    assert_ne!(
        e.kind(),
        TransportErrorKind::SessionExpired,
        "it may have run: {e:?}"
    );
    // The standalone GET.
    let mut t = HttpTransport::builder(&server.url)
        .standalone_stream(true)
        .build()
        .unwrap();
    handshake(&mut t).await;
    let lost = recv_err(&mut t).await;
    assert_eq!(
        (lost.kind(), lost.request_id()),
        (TransportErrorKind::SessionExpired, None)
    );
    assert_eq!(t.session_id(), None);
}
