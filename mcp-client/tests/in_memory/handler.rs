//! Server requests, notifications and `input_required` reaching the
//! handler; backpressure and the concurrency cap.

use super::*;
use mcp_proto::schema::{
    CancelledParams, ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams,
    ElicitResult, ElicitationCompleteParams, ListRootsParams, ListRootsResult,
    LoggingMessageParams, ProgressParams, ResourceUpdatedParams, Role, Root, Tool,
};

struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn saw(&self, what: impl Into<String>) {
        self.seen.lock().unwrap().push(what.into());
    }
}

impl ClientHandler for Recorder {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
            .with_elicitation_form()
            .with_roots()
    }
    async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
        Ok(ListRootsResult::new(vec![Root::new("file:///w")]))
    }
    /// Implemented but not advertised: the client must not call it.
    async fn create_message(
        &self,
        _: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        self.saw("sampled although not advertised");
        Ok(CreateMessageResult::new(
            Role::Assistant,
            ContentBlock::text("no"),
            "m",
        ))
    }
    async fn elicit(&self, p: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let mut content = serde_json::Map::new();
        content.insert("name".into(), p.message().unwrap_or_default().into());
        Ok(ElicitResult::accept(content))
    }
    fn on_logging_message(&self, p: LoggingMessageParams) {
        self.saw(format!("log {}", p.data));
    }
    fn on_list_changed(&self, kind: mcp_client::ListKind) {
        self.saw(format!("{kind:?} changed"));
    }
    fn on_resource_updated(&self, p: ResourceUpdatedParams) {
        self.saw(format!("updated {}", p.uri));
    }
    fn on_progress(&self, p: ProgressParams) {
        self.saw(format!("progress {}", p.progress));
    }
    fn on_cancelled(&self, p: CancelledParams) {
        self.saw(format!("cancelled {:?}", p.request_id));
    }
    fn on_elicitation_complete(&self, p: ElicitationCompleteParams) {
        self.saw(format!("elicitation {} complete", p.elicitation_id));
    }
    fn other_notification(&self, n: Notification) {
        self.saw(format!("other {}", n.method));
    }
}

#[tokio::test]
async fn legacy_server_requests_and_notifications_reach_the_handler() {
    let (client_end, mut server) = pair();
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
            json!({"elicitation": {"form": {}}, "roots": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}}})
        );
        respond(&mut server, r.id, json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})).await;
        let _initialized = server.recv().await;
        for (m, p) in [
            (
                "notifications/message",
                json!({"level": "info", "data": "x"}),
            ),
            ("notifications/tools/list_changed", json!({})),
            ("notifications/prompts/list_changed", json!({})),
            ("notifications/resources/list_changed", json!({})),
            (
                "notifications/resources/updated",
                json!({"uri": "file:///a"}),
            ),
            (
                "notifications/progress",
                json!({"progressToken": "other", "progress": 3}),
            ),
            ("notifications/cancelled", json!({"requestId": "r0"})),
            (
                "notifications/elicitation/complete",
                json!({"elicitationId": "e1"}),
            ),
            ("notifications/example.com/custom", json!({})),
            // Known method, params that do not decode: passed on raw.
            ("notifications/message", json!({"data": "no level"})),
        ] {
            server
                .send(Notification::new(m, Some(raw(p))).into())
                .await
                .unwrap();
        }
        server
            .send(Request::new("r1".into(), "roots/list", None).into())
            .await
            .unwrap();
        server
            .send(
                Request::new(
                    "r2".into(),
                    "sampling/createMessage",
                    Some(raw(json!({"messages": [], "maxTokens": 5}))),
                )
                .into(),
            )
            .await
            .unwrap();
        // Elicitation is advertised but these params do not decode: -32602.
        server
            .send(
                Request::new(
                    "r3".into(),
                    "elicitation/create",
                    Some(raw(json!({"message": 1}))),
                )
                .into(),
            )
            .await
            .unwrap();
        server
            .send(Request::new("r4".into(), "elicitation/create", Some(raw(json!({"message": "who?", "requestedSchema": {"type": "object", "properties": {}}})))).into())
            .await
            .unwrap();
        server
            .send(Request::new("r5".into(), "example.com/custom", None).into())
            .await
            .unwrap();
        let mut answers = Vec::new();
        while answers.len() < 5 {
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
        // Sampling is not advertised: method not found, the handler is not asked.
        assert_eq!(answers[1]["error"]["code"], -32601);
        assert_eq!(answers[2]["error"]["code"], -32602);
        assert_eq!(
            answers[3]["result"],
            json!({"action": "accept", "content": {"name": "who?"}})
        );
        assert_eq!(answers[4]["error"]["code"], -32601);
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
    let expected = [
        "log \"x\"",
        "Tools changed",
        "Prompts changed",
        "Resources changed",
        "updated file:///a",
        "cancelled String(\"r0\")",
        "elicitation e1 complete",
        "other notifications/example.com/custom",
        "other notifications/message",
    ];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().len() < expected.len() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(*seen.lock().unwrap(), expected);
}

#[tokio::test]
async fn modern_input_required_is_answered_by_the_handler_and_retried() {
    let (client_end, mut server) = pair();
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
            // No `tasks`: the 2025-11-25 capability is not declared in the
            // 2026-07-28 era; its tasks extension is (on by default).
            json!({"elicitation": {"form": {}}, "roots": {},
                   "extensions": {"io.modelcontextprotocol/tasks": {}}})
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
    fn on_logging_message(&self, p: LoggingMessageParams) {
        let (lock, cvar) = &*self.gate;
        let open = lock.lock().unwrap();
        let left = self
            .give_up
            .saturating_duration_since(std::time::Instant::now());
        let _open = cvar.wait_timeout_while(open, left, |open| !*open).unwrap();
        self.seen
            .lock()
            .unwrap()
            .push(p.data.decode::<u64>().unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_flood_is_backpressured_not_buffered_or_dropped() {
    const FLOOD: u64 = 3000;
    let (client_end, mut server) = pair();
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
                        Some(raw(json!({"level": "info", "data": n}))),
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
            // Opened by the test long before; only a failing test waits it out.
            give_up: std::time::Instant::now() + Duration::from_secs(30),
        })
        .connect(client_end)
        .await
        .unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_page::<Tool>(None).await });
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
        fn capabilities(&self) -> ClientCapabilities {
            ClientCapabilities::default().with_roots()
        }
        async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
            std::future::pending().await
        }
    }
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let total = mcp_client::session::DEFAULT_MAX_SERVER_REQUESTS + 5;
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

/// Idle memory: the handler's notification task (and its channel) start
/// with the first notification, not with the connection.
#[tokio::test]
async fn the_notification_task_starts_with_the_first_notification() {
    let (client_end, mut server) = pair();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (go, go_rx) = tokio::sync::oneshot::channel::<()>();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        go_rx.await.unwrap();
        let n = json!({"level": "info", "data": "x"});
        server
            .send(Notification::new("notifications/message", Some(raw(n))).into())
            .await
            .unwrap();
        server
    });
    let client = Client::builder("t", "1")
        .handler(Recorder { seen: seen.clone() })
        .connect(client_end)
        .await
        .unwrap();
    let tasks = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let connected = tasks();
    assert_eq!(connected, 2, "the server's task and the driver only");
    go.send(()).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(*seen.lock().unwrap(), ["log \"x\""]);
    let _server = srv.await.unwrap();
    assert_eq!(tasks(), 2, "the driver and the notification task");
    drop(client);
}
