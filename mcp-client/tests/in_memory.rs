//! The real driver and `Client` over an in-memory transport, against a fake
//! server scripted in the test (no processes, no sockets).

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{BoxFuture, Client, ClientError, ClientHandler, CloseReason, VersionChoice};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, Response};
use mcp_proto::schema::ClientCapabilities;
use mcp_proto::transport::channel::{self, ChannelTransport};
use mcp_proto::transport::{TransportError, TransportErrorKind, TransportExt};
use mcp_proto::{Era, ErrorCode, ErrorObject, ProtocolVersion, RequestId};
use serde_json::{Value, json};

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

fn params(r: &Request) -> Value {
    r.params
        .as_ref()
        .map_or(Value::Null, |p| serde_json::from_str(p.get()).unwrap())
}

async fn respond(t: &mut ChannelTransport, id: RequestId, v: Value) {
    t.send(Response::new(id, raw(v)).into()).await.unwrap();
}

/// Plays the legacy handshake: rejects `server/discover`, answers `initialize`,
/// swallows `notifications/initialized`.
async fn legacy_handshake(t: &mut ChannelTransport) {
    loop {
        let Some(Ok(m)) = t.recv().await else {
            panic!("client went away during handshake")
        };
        match m {
            Message::Request(r) if r.method == "server/discover" => {
                t.send(
                    ErrorResponse::new(
                        Some(r.id),
                        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope"),
                    )
                    .into(),
                )
                .await
                .unwrap();
            }
            Message::Request(r) if r.method == "initialize" => {
                respond(
                    t,
                    r.id,
                    json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {"listChanged": true}},
                        "serverInfo": {"name": "fake", "version": "1"},
                        "instructions": "hello"
                    }),
                )
                .await;
            }
            Message::Notification(n) if n.method == "notifications/initialized" => return,
            other => panic!("unexpected during handshake: {other:?}"),
        }
    }
}

async fn modern_handshake(t: &mut ChannelTransport) {
    let Some(Ok(Message::Request(r))) = t.recv().await else {
        panic!()
    };
    assert_eq!(r.method, "server/discover");
    respond(
        t,
        r.id,
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake", "version": "2"}}
        }),
    )
    .await;
}

async fn next_request(t: &mut ChannelTransport) -> Request {
    loop {
        match t.recv().await {
            Some(Ok(Message::Request(r))) => return r,
            Some(Ok(_)) => continue,
            other => panic!("expected a request, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn legacy_fallback_and_accessors() {
    let (client_end, mut server) = channel::pair();
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
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn many_concurrent_calls_are_correlated_out_of_order() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        let mut reqs = Vec::new();
        for _ in 0..64 {
            reqs.push(next_request(&mut server).await);
        }
        // Answer in reverse order.
        for r in reqs.into_iter().rev() {
            let p = params(&r);
            assert_eq!(
                p["_meta"]["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
            let text = p["arguments"]["text"].clone();
            respond(
                &mut server,
                r.id,
                json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}),
            )
            .await;
        }
        server
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    let mut tasks = Vec::new();
    for i in 0..64 {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            let r = c
                .call_tool("echo", json!({"text": format!("n{i}")}))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some(format!("n{i}").as_str()));
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let (client_end, mut server) = channel::pair();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        tx.send(()).unwrap();
        // The client drops the call: a cancellation for this id arrives.
        match server.recv().await {
            Some(Ok(Message::Notification(n))) if n.method == "notifications/cancelled" => {
                let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
                assert_eq!(p["requestId"], serde_json::to_value(&r.id).unwrap());
            }
            other => panic!("{other:?}"),
        }
        // A late response must not disturb anything.
        respond(&mut server, r.id, json!({"content": []})).await;
        let r = next_request(&mut server).await;
        respond(
            &mut server,
            r.id,
            json!({"content": [{"type": "text", "text": "second"}]}),
        )
        .await;
        server
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("slow", json!({})).await });
    rx.await.unwrap();
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled()); // the future is dropped: cancellation queued
    let r = client.call_tool("fast", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("second"));
    let _server = srv.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn timeout_with_virtual_time_cancels_and_reports() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        // Send progress twice, 8 s apart: each resets the 10 s timeout.
        let token = params(&r)["_meta"]["progressToken"].clone();
        for i in 0..2 {
            tokio::time::sleep(Duration::from_secs(8)).await;
            server
                .send(
                    Notification::new(
                        "notifications/progress",
                        Some(raw(json!({"progressToken": token, "progress": i}))),
                    )
                    .into(),
                )
                .await
                .unwrap();
        }
        let Some(Ok(Message::Notification(n))) = server.recv().await else {
            panic!()
        };
        assert_eq!(n.method, "notifications/cancelled");
        server
    });
    let client = Client::builder("t", "1")
        .request_timeout(Duration::from_secs(10))
        .connect(client_end)
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let err = client
        .call_tool_with(&mcp_proto::schema::CallToolParams::new("slow"))
        .on_progress(move |p| s2.lock().unwrap().push(p.progress))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(26) && waited <= Duration::from_secs(27),
        "{waited:?}"
    );
    assert_eq!(*seen.lock().unwrap(), vec![0.0, 1.0]);
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn server_exit_fails_pending_calls_with_the_cause() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let _r = next_request(&mut server).await;
        server
            .inject_error(TransportError::new(
                TransportErrorKind::Closed,
                "server exited with status 1: fatal: config missing",
            ))
            .unwrap();
        drop(server);
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let err = client.call_tool("x", json!({})).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Closed(CloseReason::Transport(_))),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "connection closed: server exited with status 1: fatal: config missing"
    );
    let source = std::error::Error::source(&err).unwrap();
    assert!(
        source.to_string().contains("fatal: config missing"),
        "the cause is reachable: {source}"
    );
    srv.await.unwrap();
    // Later calls fail at once with the same cause.
    let err = client.list_tools(None).await.unwrap_err();
    assert!(err.to_string().contains("fatal: config missing"), "{err}");
}

#[tokio::test]
async fn server_that_never_answers_the_probe_gets_initialize_after_probe_timeout() {
    let (client_end, mut server) = channel::pair();
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

#[tokio::test]
async fn close_finishes_the_driver_and_closes_the_transport() {
    let (client_end, mut server) = channel::pair();
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
    let (client_end, mut server) = channel::pair();
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

#[tokio::test(start_paused = true)]
async fn a_shorter_timeout_started_later_fires_on_time_and_a_longer_one_still_fires() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // Never answer; keep the transport open until both calls timed out.
        while let Some(Ok(_)) = server.recv().await {}
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let start = tokio::time::Instant::now();
    let long = client
        .call_tool_with(&mcp_proto::schema::CallToolParams::new("slow"))
        .timeout(Duration::from_secs(100))
        .send();
    let short = client
        .call_tool_with(&mcp_proto::schema::CallToolParams::new("slow"))
        .timeout(Duration::from_secs(2))
        .send();
    let err = short.await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    let err = long.await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(100) && waited < Duration::from_secs(101),
        "{waited:?}"
    );
    client.close().await;
    let _ = srv.await;
}

#[tokio::test]
async fn every_list_shares_the_page_shape_and_the_cursor_loop() {
    use mcp_proto::schema::{Prompt, ResourceTemplate};

    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // Each list's items live under its own member; the cursor goes back verbatim.
        for (method, member, first, second) in [
            (
                "resources/templates/list",
                "resourceTemplates",
                json!({"uriTemplate": "file:///{a}", "name": "a"}),
                json!({"uriTemplate": "file:///{b}", "name": "b"}),
            ),
            (
                "resources/list",
                "resources",
                json!({"uri": "file:///a", "name": "a"}),
                json!({"uri": "file:///b", "name": "b"}),
            ),
        ] {
            let r = next_request(&mut server).await;
            assert_eq!(r.method, method);
            assert_eq!(params(&r).get("cursor"), None, "first page has no cursor");
            respond(
                &mut server,
                r.id,
                json!({member: [first], "nextCursor": "c/2"}),
            )
            .await;
            let r = next_request(&mut server).await;
            assert_eq!(r.method, method);
            assert_eq!(params(&r)["cursor"], "c/2");
            respond(&mut server, r.id, json!({member: [second], "ttlMs": 5})).await;
        }
        // A server whose prompt list never ends: the page cap stops the loop.
        for i in 0..3 {
            let r = next_request(&mut server).await;
            assert_eq!(r.method, "prompts/list");
            let p =
                json!({"prompts": [{"name": format!("p{i}")}], "nextCursor": format!("{}", i + 1)});
            respond(&mut server, r.id, p).await;
        }
        server
    });
    let client = Client::builder("t", "1")
        .max_list_pages(3)
        .connect(client_end)
        .await
        .unwrap();
    let templates: Vec<ResourceTemplate> = client.list_all().await.unwrap();
    let t: Vec<_> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(t, ["file:///{a}", "file:///{b}"]);
    let resources = client.list_all_resources().await.unwrap();
    let r: Vec<_> = resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(r, ["a", "b"]);
    match client.list_all::<Prompt>().await {
        Err(ClientError::TooManyPages { method, limit }) => {
            assert_eq!((method.as_str(), limit), ("prompts/list", 3));
        }
        other => panic!("expected TooManyPages, got {other:?}"),
    }
    let _server = srv.await.unwrap();
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
    let (client_end, server) = channel::pair();
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
    let (client_end, mut server) = channel::pair();
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
async fn progress_tokens_are_sent_only_when_asked_for() {
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let mut tokens = Vec::new();
        for _ in 0..2 {
            let r = next_request(&mut server).await;
            tokens.push(params(&r)["_meta"]["progressToken"].clone());
            respond(&mut server, r.id, json!({"content": []})).await;
        }
        tokens
    });
    let client = Client::connect(client_end).await.unwrap();
    client.call_tool("plain", json!({})).await.unwrap();
    client
        .call_tool_with_args("asked", &json!({}))
        .progress(true)
        .send()
        .await
        .unwrap();
    let tokens = srv.await.unwrap();
    assert_eq!(tokens[0], Value::Null, "no token unless asked for");
    assert!(tokens[1].is_number(), "{tokens:?}");
}

/// Callers on several threads hand requests to the session and write them
/// themselves while the driver reads on another: every call completes with
/// its own answer, sequential and concurrent callers mixed (a lost wake-up
/// or a lock held across an await would hang here, bounded by the timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn callers_on_many_threads_share_the_driver_without_losing_calls() {
    const TASKS: usize = 16;
    const CALLS: usize = 200;
    let (client_end, mut server) = channel::pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        for _ in 0..TASKS * CALLS {
            let r = next_request(&mut server).await;
            let text = params(&r)["arguments"]["text"].clone();
            respond(
                &mut server,
                r.id,
                json!({"content": [{"type": "text", "text": text}]}),
            )
            .await;
        }
        server
    });
    let client = Client::connect(client_end).await.unwrap();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..CALLS {
                let text = format!("t{t}-{i}");
                let r = c.call_tool("echo", json!({ "text": text })).await.unwrap();
                assert_eq!(r.content[0].as_text(), Some(text.as_str()));
            }
        }));
    }
    tokio::time::timeout(Duration::from_secs(60), async {
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
    .expect("every call completes");
    let _server = srv.await.unwrap();
}

#[tokio::test]
async fn closed_resolves_when_the_server_hangs_up() {
    let (client_end, mut server) = channel::pair();
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
    let (client_end, mut server) = channel::pair();
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
