//! The 2024-11-05 HTTP+SSE fallback.

use super::*;

over_tcp_and_unix!(falls_back: falls_back_to_http_sse_when_post_is_refused, falls_back_to_http_sse_over_a_unix_socket);

async fn falls_back(on: On) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Piece>();
    let rx = std::sync::Mutex::new(Some(rx));
    let server = serve_on(on, move |r: &Rec| {
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
        chain(&e).to_string().contains("404") && chain(&e).to_string().contains("nothing here"),
        "{e}"
    );
}
