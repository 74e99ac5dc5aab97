//! Answers the transport must drop (over a size limit, not JSON, not
//! UTF-8): each fails the request it answers the moment that is known, as
//! a `Decode` error scoped to it that names the limit and the size seen,
//! instead of leaving the call to wait for its timeout; a dropped message
//! that answered nothing fails nothing.

use super::*;

/// How long a dropped answer may take to be reported on a busy machine;
/// far below the transport's request timeout (120 s), which is what a
/// call waited for before.
const PROMPT: Duration = Duration::from_secs(5);

/// An answer's head, then bytes forever: the limit is crossed early, the
/// end never comes.
fn answer_head(id: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#)
}

async fn prompt_err(t: &mut HttpTransport, what: &str) -> TransportError {
    let started = Instant::now();
    let got = tokio::time::timeout(PROMPT, t.recv()).await;
    let e = match got {
        Ok(Some(Err(e))) => e,
        Ok(other) => panic!("{what}: expected an error, got {other:?}"),
        Err(_) => {
            panic!("{what}: not reported within {PROMPT:?}: the call would wait for its timeout")
        }
    };
    eprintln!("{what}: reported after {:?}: {e}", started.elapsed());
    e
}

#[tokio::test]
async fn an_endless_json_body_fails_its_request_at_the_limit() {
    let server = serve(|r: &Rec| {
        Reply::Stream(
            StatusCode::OK,
            "application/json",
            vec![
                Piece::Data(answer_head(&r.id())),
                Piece::Repeat("x".repeat(8192)),
            ],
        )
        .into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_body_size(1 << 20)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let e = prompt_err(&mut t, "endless JSON body").await;
    assert!(e.is_dropped_answer(), "{e:?}");
    assert_eq!(e.request_id(), Some(&1.into()));
    assert!(
        matches!(http_cause(&e), HttpError::BodyTooLarge { limit, size: None, received }
            if *limit == 1 << 20 && *received > 1 << 20),
        "{e:?}"
    );
    let text = chain(&e).to_string();
    assert!(
        text.contains("at least") && text.contains("1 MiB limit"),
        "{text}"
    );
}

#[tokio::test]
async fn an_endless_sse_answer_fails_its_request_at_the_limit() {
    let server = serve(|r: &Rec| {
        Reply::Sse(vec![
            Piece::Data(format!("id: 1\ndata: {}", answer_head(&r.id()))),
            Piece::Repeat("x".repeat(8192)),
        ])
        .into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_sse_event_size(1 << 20)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let e = prompt_err(&mut t, "endless SSE event").await;
    assert!(e.is_dropped_answer(), "{e:?}");
    assert_eq!(e.request_id(), Some(&1.into()));
    let text = chain(&e).to_string();
    assert!(
        text.contains("at least") && text.contains("1 MiB limit"),
        "{text}"
    );
}

/// An oversized notification on a response stream is not the answer: the
/// call is not failed by it, and its answer, after it, arrives. An
/// oversized event whose head names another request fails that one.
#[tokio::test]
async fn an_oversized_event_fails_only_the_request_it_answered() {
    let server = serve(|r: &Rec| {
        let big = "y".repeat(4000);
        Reply::Sse(vec![
            event(&format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{big}"}}}}"#
            )),
            event(&format!(r#"{{"jsonrpc":"2.0","id":99,"result":{{"t":"{big}"}}}}"#)),
            event(&result(&r.id(), json!({"ok": true}))),
        ])
        .into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_sse_event_size(1000)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let notification = recv_err(&mut t).await;
    assert_eq!(notification.kind(), TransportErrorKind::Decode);
    assert_eq!(notification.request_id(), None, "{notification:?}");
    assert!(!notification.is_unknown_answer());
    let other = recv_err(&mut t).await;
    assert_eq!(other.request_id(), Some(&99.into()));
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"ok": true}));
}

/// An answer event that is not JSON after the SSE decoder's UTF-8
/// replacement (an invalid byte where JSON needs a value), and one cut
/// short: each fails its call now instead of being skipped.
#[tokio::test]
async fn an_undecodable_sse_answer_fails_its_request() {
    let server = serve(|r: &Rec| {
        let mut bad =
            format!(r#"data: {{"jsonrpc":"2.0","id":{},"result":{{"x":"#, r.id()).into_bytes();
        if r.rpc_method() == Some("cut") {
            bad.extend_from_slice(b"\n\n");
        } else {
            bad.extend_from_slice(b"\xff}}\n\n");
        }
        Reply::Sse(vec![Piece::Bytes(bad)]).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    for (id, method) in [(1, "bad_utf8"), (2, "cut")] {
        t.send(req(id, method, json!({}))).await.unwrap();
        let e = prompt_err(&mut t, method).await;
        assert!(e.is_dropped_answer(), "{method}: {e:?}");
        assert_eq!(e.request_id(), Some(&id.into()), "{method}");
    }
}

/// A JSON body with an invalid UTF-8 byte in a string: the answer is
/// dropped and its call fails at once, naming what is wrong.
#[tokio::test]
async fn a_json_answer_with_invalid_utf8_fails_its_request() {
    let server = serve(|r: &Rec| {
        let mut body =
            format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"t":"caf"#, r.id()).into_bytes();
        body.extend_from_slice(b"\xe9\"}}");
        Reply::Stream(StatusCode::OK, "application/json", vec![Piece::Bytes(body)]).into()
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(5, "tools/call", json!({}))).await.unwrap();
    let e = prompt_err(&mut t, "invalid UTF-8 JSON").await;
    assert!(e.is_dropped_answer(), "{e:?}");
    assert_eq!(e.request_id(), Some(&5.into()));
    assert!(chain(&e).to_string().contains("invalid unicode"), "{e}");
}

/// The 2024-11-05 HTTP+SSE stream carries every answer: one over the limit
/// whose head names its request fails that request when the limit is
/// crossed, and the stream goes on.
#[tokio::test]
async fn http_sse_an_endless_answer_fails_its_request() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Piece>();
    let rx = std::sync::Mutex::new(Some(rx));
    let server = serve(move |r: &Rec| {
        if r.method == http::Method::GET && r.path == "/mcp" {
            tx.send(Piece::Data("event: endpoint\ndata: /messages\n\n".into()))
                .unwrap();
            return Reply::SseChannel(rx.lock().unwrap().take().unwrap()).into();
        }
        if r.path.starts_with("/messages") {
            match r.rpc_method() {
                Some("initialize") => {
                    let m = format!("data: {}\n\n", result(&r.id(), json!({"legacy":true})));
                    tx.send(Piece::Data(m)).unwrap();
                }
                Some("big") => {
                    // More than the limit, then the event's end and a ping.
                    let big = format!("data: {}{}\n\n", answer_head(&r.id()), "x".repeat(5000));
                    tx.send(Piece::Data(big)).unwrap();
                    let m = format!("data: {}\n\n", result(&json!(3), json!({"after":true})));
                    tx.send(Piece::Data(m)).unwrap();
                }
                _ => {}
            }
            return Reply::Accepted.into();
        }
        Reply::Raw(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "no".into()).into()
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_sse_event_size(1000)
        .build()
        .unwrap();
    t.send(req(1, "initialize", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    assert!(t.is_legacy_sse());
    set_version(&mut t, ProtocolVersion::V2024_11_05);
    t.send(req(2, "big", json!({}))).await.unwrap();
    let e = prompt_err(&mut t, "HTTP+SSE oversized answer").await;
    assert!(e.is_dropped_answer(), "{e:?}");
    assert_eq!(e.request_id(), Some(&2.into()));
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"after":true}));
}
