//! Server requests, notifications and `input_required` reaching the
//! handler; backpressure and the concurrency cap.

use super::*;

struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    fn capabilities(&self) -> ClientCapabilities {
        serde_json::from_value(json!({"elicitation": {}, "roots": {}})).unwrap()
    }
    fn handle_request(&self, method: &str, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        let method = method.to_owned();
        Box::pin(async move {
            match method.as_str() {
                "roots/list" => Ok(json!({"roots": [{"uri": "file:///w"}]})),
                "elicitation/create" => {
                    Ok(json!({"action": "accept", "content": {"name": params["message"]}}))
                }
                m => Err(ErrorObject::method_not_found(m)),
            }
        })
    }
    fn on_notification(&self, n: Notification) {
        self.seen.lock().unwrap().push(n.method.into_owned());
    }
}

#[tokio::test]
async fn legacy_server_requests_and_notifications_reach_the_handler() {
    let (client_end, mut server) = channel::pair();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let srv = tokio::spawn(async move {
        // The capabilities in initialize come from the handler.
        let Some(Ok(Message::Request(r))) = server.recv().await else {
            panic!()
        };
        server
            .send(
                ErrorResponse::new(
                    Some(r.id),
                    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "x"),
                )
                .into(),
            )
            .await
            .unwrap();
        let Some(Ok(Message::Request(r))) = server.recv().await else {
            panic!()
        };
        assert_eq!(
            params(&r)["capabilities"],
            json!({"elicitation": {}, "roots": {}})
        );
        respond(&mut server, r.id, json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})).await;
        let _initialized = server.recv().await;
        for m in [
            "notifications/message",
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
        ] {
            server
                .send(Notification::new(m, Some(raw(json!({"level": "info", "data": "x"})))).into())
                .await
                .unwrap();
        }
        server
            .send(Request::new("r1".into(), "roots/list", None).into())
            .await
            .unwrap();
        server
            .send(Request::new("r2".into(), "sampling/createMessage", Some(raw(json!({})))).into())
            .await
            .unwrap();
        let mut answers = Vec::new();
        while answers.len() < 2 {
            match server.recv().await {
                Some(Ok(m @ (Message::Response(_) | Message::Error(_)))) => {
                    answers.push(serde_json::to_value(&m).unwrap())
                }
                Some(Ok(_)) => {}
                other => panic!("{other:?}"),
            }
        }
        answers.sort_by_key(|a| a["id"].as_str().unwrap().to_owned());
        assert_eq!(
            answers[0],
            json!({"jsonrpc": "2.0", "id": "r1", "result": {"roots": [{"uri": "file:///w"}]}})
        );
        assert_eq!(answers[1]["error"]["code"], -32601);
        server
    });
    let client = Client::builder("t", "1")
        .handler(Recorder { seen: seen.clone() })
        .connect(client_end)
        .await
        .unwrap();
    let mut changes = client.list_changed(mcp_client::ListKind::Tools);
    let _server = srv.await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), changes.wait_for(|v| *v >= 1))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "notifications/message",
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed"
        ]
    );
}

#[tokio::test]
async fn modern_input_required_is_answered_by_the_handler_and_retried() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        respond(&mut server, r.id, json!({
            "resultType": "input_required",
            "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "octocat", "requestedSchema": {"type": "object"}}}},
            "requestState": "s-1"
        }))
        .await;
        let r2 = next_request(&mut server).await;
        let p = params(&r2);
        assert_eq!(p["requestState"], "s-1");
        assert_eq!(
            p["inputResponses"]["who"],
            json!({"action": "accept", "content": {"name": "octocat"}})
        );
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"elicitation": {}, "roots": {}})
        );
        respond(
            &mut server,
            r2.id,
            json!({"resultType": "complete", "content": [{"type": "text", "text": "welcome"}]}),
        )
        .await;
        server
    });
    let client = Client::builder("t", "1")
        .handler(Recorder {
            seen: Arc::default(),
        })
        .protocol(VersionChoice::Auto)
        .connect(client_end)
        .await
        .unwrap();
    let r = client.call_tool("login", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("welcome"));
    let _server = srv.await.unwrap();
}

/// Blocks in `on_notification` until the gate opens; records the order.
struct SlowHandler {
    gate: Arc<(Mutex<bool>, std::sync::Condvar)>,
    seen: Arc<Mutex<Vec<u64>>>,
    /// The gate gives up by then, so a broken test fails instead of hanging.
    give_up: std::time::Instant,
}

impl ClientHandler for SlowHandler {
    fn on_notification(&self, n: Notification) {
        let (lock, cvar) = &*self.gate;
        let open = lock.lock().unwrap();
        let left = self
            .give_up
            .saturating_duration_since(std::time::Instant::now());
        let _open = cvar.wait_timeout_while(open, left, |open| !*open).unwrap();
        let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        self.seen.lock().unwrap().push(p["n"].as_u64().unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_flood_is_backpressured_not_buffered_or_dropped() {
    const FLOOD: u64 = 3000;
    let (client_end, mut server) = channel::pair();
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        for n in 0..FLOOD {
            server
                .send(
                    Notification::new(
                        "notifications/message",
                        Some(raw(json!({"level": "info", "data": "x", "n": n}))),
                    )
                    .into(),
                )
                .await
                .unwrap();
        }
        respond(&mut server, r.id, json!({"tools": []})).await;
        server
    });
    let client = Client::builder("t", "1")
        .handler(SlowHandler {
            gate: gate.clone(),
            seen: seen.clone(),
            give_up: std::time::Instant::now() + Duration::from_secs(3),
        })
        .connect(client_end)
        .await
        .unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_tools(None).await });
    // The handler is stuck: the driver stops reading after the queue fills,
    // so the response behind the flood is not reached.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !call.is_finished(),
        "the driver kept reading past the notification limit"
    );
    {
        let (lock, cvar) = &*gate;
        *lock.lock().unwrap() = true;
        cvar.notify_all();
    }
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let _server = srv.await.unwrap();
    // Every notification arrives, in order.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().len() < FLOOD as usize && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, (0..FLOOD).collect::<Vec<_>>());
}

#[tokio::test]
async fn too_many_concurrent_server_requests_are_answered_busy() {
    struct Never;
    impl ClientHandler for Never {
        fn handle_request(&self, _: &str, _: Value) -> BoxFuture<Result<Value, ErrorObject>> {
            Box::pin(std::future::pending())
        }
    }
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let total = mcp_client::MAX_CONCURRENT_SERVER_REQUESTS + 5;
        for i in 0..total {
            server
                .send(Request::new(RequestId::Number(i as i64), "roots/list", None).into())
                .await
                .unwrap();
        }
        // The ones over the limit are answered at once with an error.
        let mut busy = Vec::new();
        while busy.len() < 5 {
            match server.recv().await {
                Some(Ok(Message::Error(e))) => {
                    assert!(e.error.message.contains("busy"), "{e:?}");
                    busy.push(e.id.unwrap());
                }
                other => panic!("{other:?}"),
            }
        }
        server
    });
    let client = Client::builder("t", "1")
        .handler(Never)
        .connect(client_end)
        .await
        .unwrap();
    let _server = tokio::time::timeout(Duration::from_secs(10), srv)
        .await
        .unwrap()
        .unwrap();
    drop(client);
}
