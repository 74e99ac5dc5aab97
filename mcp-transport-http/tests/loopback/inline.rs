//! Request POSTs run inline (on the transport's own `poll_recv`, not on
//! tasks of their own): no task per request, and still no answer waits for
//! another.

use std::task::{Context, Waker};

use super::*;

/// A server answering `tools/call` on a stream the test feeds, and
/// anything else at once.
async fn held_and_quick() -> (Server, tokio::sync::mpsc::UnboundedSender<Piece>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let rx = std::sync::Mutex::new(Some(rx));
    let server = serve(move |r: &Rec| {
        if r.rpc_method() == Some("tools/call")
            && let Some(rx) = rx.lock().unwrap().take()
        {
            return Reply::SseChannel(rx).into();
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"id": r.id()}))).into()
    })
    .await;
    (server, tx)
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

#[tokio::test]
async fn a_held_answer_does_not_hold_up_the_next_request() {
    let (server, tx) = held_and_quick().await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    // After one answer, requests run inline.
    t.send(req(1, "ping", json!({}))).await.unwrap();
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(1)));
    t.send(req(2, "tools/call", json!({"name": "held"})))
        .await
        .unwrap();
    t.send(req(3, "ping", json!({}))).await.unwrap();
    // 3 is answered while 2's stream is still open and silent.
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(3)));
    tx.send(event(&result(&json!(2), json!({"held": true}))))
        .unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"held": true}));
}

#[tokio::test]
async fn a_request_runs_without_a_task_of_its_own() {
    let (server, tx) = held_and_quick().await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "ping", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    let before = alive_tasks();
    // Reuses the idle connection: no connection task either.
    t.send(req(2, "tools/call", json!({"name": "held"})))
        .await
        .unwrap();
    assert_eq!(alive_tasks(), before, "the request POST spawned a task");
    tx.send(event(&result(&json!(2), json!({})))).unwrap();
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(2)));
}

/// `mcp-client` writes from a caller's task with a no-op waker: the POST
/// still wakes the task that polls `poll_recv` when its answer comes.
#[tokio::test]
async fn a_request_sent_with_a_noop_waker_is_answered() {
    let (server, _tx) = held_and_quick().await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "ping", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    let mut noop = Context::from_waker(Waker::noop());
    assert!(Pin::new(&mut t).poll_ready(&mut noop).is_ready());
    Pin::new(&mut t)
        .start_send(req(2, "ping", json!({})))
        .unwrap();
    assert!(Pin::new(&mut t).poll_flush(&mut noop).is_ready());
    assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(2)));
}

/// A configured `Host` header is the one sent (the transport's own default
/// does not replace it).
#[tokio::test]
async fn a_configured_host_header_is_kept() {
    let server =
        serve(|r: &Rec| Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into()).await;
    let mut t = HttpTransport::builder(&server.url)
        .header("host", "example.test")
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "ping", json!({}))).await.unwrap();
    recv_ok(&mut t).await;
    let reqs = server.requests();
    assert_eq!(reqs[0].header("host"), Some("example.test"));
}

/// The first attempt's headers and body go with its request; a redirect
/// builds both again, `Mcp-*` headers included (spawned and inline alike).
#[tokio::test]
async fn a_redirected_request_is_sent_again_whole() {
    let server = serve(|r: &Rec| match r.path.as_str() {
        "/mcp" => Reply::Redirect(StatusCode::TEMPORARY_REDIRECT, "/mcp2".into()).into(),
        _ => Reply::Json(StatusCode::OK, result(&r.id(), json!({}))).into(),
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    for id in [1, 2] {
        t.send(req(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {}}),
        ))
        .await
        .unwrap();
        assert_eq!(recv_ok(&mut t).await.id(), Some(&RequestId::Number(id)));
    }
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    for r in &reqs {
        assert_eq!(r.header("mcp-method"), Some("tools/call"), "{}", r.path);
        assert_eq!(r.header("mcp-name"), Some("echo"), "{}", r.path);
        assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
    }
    assert_eq!(reqs[1].path, "/mcp2");
    assert_eq!(reqs[1].body, reqs[0].body);
    assert_eq!(reqs[3].body, reqs[2].body);
}
