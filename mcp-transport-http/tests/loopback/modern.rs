//! The 2026-07-28 era: headers, era detection, cancellation, re-issue,
//! subscriptions.

use super::*;

over_tcp_and_unix!(modern_headers: modern_headers_and_x_mcp_header_filtering, modern_headers_over_a_unix_socket);

async fn modern_headers(on: On) {
    let server = serve_on(on, |r: &Rec| match r.rpc_method() {
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
    assert!(chain(&e).to_string().contains("no session"), "{e}");
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
    until("the stream closed", || server.closed_streams() > 0).await;
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
    until("the notification POSTed", || !server.requests().is_empty()).await;
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
