//! Bad answers, body limits, redirects, timeouts and refused connections:
//! each a typed error scoped to its request.

use super::*;

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
    let s = chain(&e).to_string();
    assert!(
        s.contains("200") && s.contains("text/html") && s.contains("login page"),
        "{s}"
    );

    t.send(req(2, "badjson", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    // This POST's answer, dropped: scoped to its request, so the call fails now.
    assert_eq!(e.kind(), TransportErrorKind::Decode);
    assert!(e.is_dropped_answer());
    assert_eq!(e.request_id(), Some(&2.into()));
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
