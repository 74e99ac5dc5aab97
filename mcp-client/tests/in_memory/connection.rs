//! The handshake in both eras, remembered eras, closing.

use super::*;

#[tokio::test]
async fn legacy_fallback_and_accessors() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tools/list");
        respond(
            &mut server,
            r.id,
            json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": ""}),
        )
        .await;
        // An empty-string cursor is a real cursor: the client must ask again with it.
        let r = next_request(&mut server).await;
        assert_eq!(params(&r)["cursor"], "");
        respond(
            &mut server,
            r.id,
            json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}),
        )
        .await;
        server
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2025_11_25)
    );
    let info = client.server().unwrap();
    assert_eq!(info.implementation.name, "fake");
    assert_eq!(info.instructions.as_deref(), Some("hello"));
    let names: Vec<String> = client
        .list_all::<mcp_proto::schema::Tool>()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn server_that_never_answers_the_probe_gets_initialize_after_probe_timeout() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        let Some(Ok(Message::Request(r))) = server.recv().await else {
            panic!()
        };
        assert_eq!(r.method, "server/discover"); // ignored: a silent legacy server
        let Some(Ok(Message::Request(r))) = server.recv().await else {
            panic!()
        };
        assert_eq!(r.method, "initialize");
        respond(&mut server, r.id, json!({"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "old", "version": "0"}})).await;
        server
    });
    let client = Client::builder("t", "1")
        .probe_timeout(Duration::from_millis(50))
        .connect(client_end)
        .await
        .unwrap();
    assert_eq!(
        client.protocol_version(),
        Some(ProtocolVersion::V2024_11_05)
    );
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn close_finishes_the_driver_and_closes_the_transport() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // After close, the server sees its receive side end.
        assert!(server.recv().await.is_none());
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    client.close().await;
    tokio::time::timeout(Duration::from_secs(5), srv)
        .await
        .unwrap()
        .unwrap();
    let err = client.call_tool("x", json!({})).await.unwrap_err();
    assert!(err.is_closed(), "{err:?}");
}

#[tokio::test]
async fn dropping_every_client_closes_the_connection() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        assert!(server.recv().await.is_none());
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    drop(client);
    tokio::time::timeout(Duration::from_secs(5), srv)
        .await
        .unwrap()
        .unwrap();
}

/// Connects with `eras` under `key` to a server scripted by `script`, which
/// gets the server end and returns it when the handshake is done.
async fn connect_remembering<F>(
    eras: &mcp_client::EraCache,
    key: &str,
    script: impl FnOnce(ChannelTransport) -> F,
) -> Client
where
    F: std::future::Future<Output = ChannelTransport> + Send + 'static,
{
    let (client_end, server) = pair();
    let srv = tokio::spawn(script(server));
    let client = Client::builder("t", "1")
        .era_cache(eras.clone(), key)
        .connect(client_end)
        .await
        .unwrap();
    let _server = srv.await.unwrap();
    client
}

#[tokio::test]
async fn an_era_cache_skips_the_probe_on_the_next_connection() {
    use mcp_client::{EraCache, EraHint};

    let eras = EraCache::new();
    let key = "stdio:fake-server --flag";
    // First connection: detection (probe rejected, initialize).
    let client = connect_remembering(&eras, key, |mut server| async move {
        legacy_handshake(&mut server).await;
        server
    })
    .await;
    assert_eq!(client.era(), Some(Era::Legacy));
    assert!(matches!(
        eras.get(key),
        Some(EraHint::Legacy(ProtocolVersion::V2025_11_25))
    ));

    // Second connection: the first thing the server sees is `initialize`.
    let client = connect_remembering(&eras, key, |mut server| async move {
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "initialize", "no server/discover probe");
        assert_eq!(params(&r)["protocolVersion"], "2025-11-25");
        let result = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "fake", "version": "1"}
        });
        respond(&mut server, r.id, result).await;
        server
    })
    .await;
    assert_eq!(client.era(), Some(Era::Legacy));

    // Another key is another server: detected from scratch.
    let client = connect_remembering(&eras, "https://example.com/mcp", |mut server| async move {
        modern_handshake(&mut server).await;
        server
    })
    .await;
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(eras.len(), 2);
}

#[tokio::test]
async fn a_remembered_era_that_fails_the_handshake_is_forgotten() {
    use mcp_client::{EraCache, EraHint};

    let eras = EraCache::new();
    eras.insert("srv", EraHint::Legacy(ProtocolVersion::V2025_11_25));
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        // Rejects initialize, then the server goes away during detection.
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "initialize");
        server
            .send(
                ErrorResponse::new(
                    Some(r.id),
                    ErrorObject::new(ErrorCode(-32601), "modern only"),
                )
                .into(),
            )
            .await
            .unwrap();
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "server/discover", "detection starts over");
        drop(server);
    });
    let err = Client::builder("t", "1")
        .era_cache(eras.clone(), "srv")
        .connect(client_end)
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Closed(_)), "{err:?}");
    srv.await.unwrap();
    assert!(eras.get("srv").is_none(), "the wrong entry is gone");
}

#[tokio::test]
async fn closed_resolves_when_the_server_hangs_up() {
    let (client_end, mut server) = pair();
    let (hang_up, now) = tokio::sync::oneshot::channel::<()>();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let _ = now.await;
        drop(server);
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    assert!(client.close_reason().is_none());
    let closed = client.closed();
    let early = tokio::time::timeout(Duration::from_millis(50), client.closed()).await;
    assert!(
        early.is_err(),
        "closed() resolved while the connection was open"
    );
    hang_up.send(()).unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(10), closed)
        .await
        .expect("closed() did not resolve after the server hung up");
    assert!(matches!(reason, CloseReason::ServerClosed), "{reason:?}");
    assert!(matches!(
        client.close_reason(),
        Some(CloseReason::ServerClosed)
    ));
    // Resolves at once after the fact, too.
    let again = tokio::time::timeout(Duration::from_secs(1), client.closed()).await;
    assert!(again.is_ok());
    srv.await.unwrap();
}

#[tokio::test]
async fn closed_resolves_when_the_driver_is_dropped() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        server
    });
    let (client, driver) = Client::builder("t", "1").build(client_end);
    let task = tokio::spawn(driver);
    client.wait_ready().await.unwrap();
    let _server = srv.await.unwrap();
    task.abort();
    let reason = tokio::time::timeout(Duration::from_secs(10), client.closed())
        .await
        .expect("closed() did not resolve after the driver was dropped");
    assert!(matches!(reason, CloseReason::DriverGone), "{reason:?}");
}

#[test]
fn outside_a_runtime_build_does_not_panic_and_the_driver_and_connect_say_why() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let mut cx = Context::from_waker(Waker::noop());
    let (client_end, _server) = pair();
    let (client, driver) = Client::builder("t", "1").build(client_end);
    let mut driver = std::pin::pin!(driver);
    assert!(driver.as_mut().poll(&mut cx).is_ready());
    assert!(
        matches!(client.close_reason(), Some(CloseReason::NoRuntime)),
        "{:?}",
        client.close_reason()
    );
    let (client_end, _server) = pair();
    let connect = Client::builder("t", "1").connect(client_end);
    let mut connect = std::pin::pin!(connect);
    match connect.as_mut().poll(&mut cx) {
        Poll::Ready(Err(ClientError::Closed(CloseReason::NoRuntime))) => {}
        other => panic!("{other:?}"),
    }
}

/// The client is ready when the transport has flushed
/// `notifications/initialized` (over HTTP: the server accepted it), not as
/// soon as it was queued.
#[tokio::test]
async fn ready_waits_until_initialized_is_flushed() {
    let (client_end, mut server) = pair();
    // Flushes stay pending until the gate opens (what an HTTP transport
    // does until the server accepted a notification).
    let gate: Arc<Mutex<(bool, Option<std::task::Waker>)>> = Arc::new(Mutex::new((false, None)));
    let held = gate.clone();
    let transport = Hooked::on_flush(client_end, move |_, cx: &mut Context<'_>| {
        let mut gate = held.lock().unwrap();
        if gate.0 {
            Poll::Ready(Ok(()))
        } else {
            gate.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    });
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        server
    });
    let (client, driver) = Client::builder("t", "1").build(transport);
    tokio::spawn(driver);
    // The server has `initialized`: the handshake is over but unflushed.
    let _server = srv.await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(100), client.wait_ready())
            .await
            .is_err(),
        "ready before the transport flushed `initialized`"
    );
    let waker = {
        let mut gate = gate.lock().unwrap();
        gate.0 = true;
        gate.1.take()
    };
    waker.unwrap().wake();
    tokio::time::timeout(Duration::from_secs(10), client.wait_ready())
        .await
        .expect("not ready after the flush")
        .unwrap();
}

/// A flush that fails with an error scoped to one request (not the
/// connection's end) right after `initialized` was sent still lets the
/// client become ready: nothing is left to flush.
#[tokio::test]
async fn ready_after_a_scoped_flush_error() {
    let (client_end, mut server) = pair();
    let mut writes = 0;
    let transport = Hooked::on_flush(client_end, move |sent, _: &mut Context<'_>| {
        if sent {
            writes += 1;
            // probe, `initialize`, then `initialized`.
            if writes == 3 {
                let e = TransportError::new(TransportErrorKind::Other, "one request failed")
                    .with_request(RequestId::from("not-ours"));
                return Poll::Ready(Err(e));
            }
        }
        Poll::Ready(Ok(()))
    });
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        server
    });
    // `connect` waits for readiness from the start: after the failed flush
    // nothing wakes the driver but a timer, seconds later.
    let client = tokio::time::timeout(
        Duration::from_secs(2),
        Client::builder("t", "1").connect(transport),
    )
    .await
    .expect("never ready after a scoped flush error")
    .unwrap();
    let _server = srv.await.unwrap();
    assert_eq!(client.era(), Some(Era::Legacy));
}
