//! Tools called as tasks (2025-11-25): every status and transition, polling
//! no faster than the server's `pollInterval`, status notifications, the
//! caller's deadline and the task's ttl, floods, malformed ids, and a
//! `tasks/result` answered before the task is done. Time is tokio's paused
//! clock: waits take no real time and intervals are exact.

use mcp_client::{TaskCall, TaskEra, TaskHandle, TaskOptions, TaskTicket, TicketError};
use mcp_proto::schema::TaskStatus;
use tokio::time::Instant;

use super::*;

pub(super) fn task(id: &str, status: &str, extra: Value) -> Value {
    let mut t = json!({
        "taskId": id,
        "status": status,
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
    });
    if let (Some(t), Value::Object(extra)) = (t.as_object_mut(), extra) {
        t.extend(extra);
    }
    t
}

pub(super) fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

async fn notify(t: &mut ChannelTransport, method: &'static str, v: Value) {
    t.send(Notification::new(method, Some(raw(v))).into())
        .await
        .unwrap();
}

pub(super) async fn fail(t: &mut ChannelTransport, id: RequestId, code: ErrorCode, msg: &str) {
    t.send(ErrorResponse::new(Some(id), ErrorObject::new(code, msg)).into())
        .await
        .unwrap();
}

/// Answers `tools/call` (checking it asks for a task) with task `t1`.
pub(super) async fn create(t: &mut ChannelTransport, extra: Value) {
    let r = next_request(t).await;
    assert_eq!(r.method, "tools/call");
    let p = params(&r);
    assert!(p["task"].is_object(), "no task member: {p}");
    respond(t, r.id, json!({"task": task("t1", "working", extra)})).await;
}

pub(super) async fn started(client: &Client, options: TaskOptions) -> TaskHandle {
    match client
        .call_tool_as_task("research", json!({"topic": "x"}), options)
        .await
        .unwrap()
    {
        TaskCall::Started(h) => *h,
        other => panic!("no task: {other:?}"),
    }
}

fn rpc_code(e: &ClientError) -> Option<ErrorCode> {
    e.rpc().map(|e| e.code)
}

#[tokio::test(start_paused = true)]
async fn working_to_completed_polls_at_the_interval_and_backs_off() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 500, "ttl": 600_000})).await;
        let mut polls = Vec::new();
        loop {
            let r = next_request(&mut server).await;
            match &*r.method {
                "tasks/get" => {
                    assert_eq!(params(&r)["taskId"], "t1");
                    polls.push(Instant::now());
                    let status = if polls.len() < 4 {
                        "working"
                    } else {
                        "completed"
                    };
                    respond(
                        &mut server,
                        r.id,
                        task(
                            "t1",
                            status,
                            json!({"pollInterval": 500, "statusMessage": "step"}),
                        ),
                    )
                    .await;
                }
                "tasks/result" => {
                    respond(&mut server, r.id, text_result("report")).await;
                    return polls;
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let options =
        TaskOptions::new().on_status(move |t| seen2.lock().unwrap().push(t.status.clone()));
    let created = Instant::now();
    let handle = started(&client, options).await;
    assert_eq!(handle.id(), "t1");
    assert_eq!(handle.status(), TaskStatus::Working);
    assert_eq!(handle.poll_interval(), Duration::from_millis(500));
    assert_eq!(handle.ttl(), Some(Duration::from_secs(600)));
    let result = handle.result().await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("report"));
    let polls = srv.await.unwrap();
    assert_eq!(polls.len(), 4);
    // Never faster than pollInterval; the first poll that changed only the
    // message resets it; polls without change stretch it by half.
    let gaps: Vec<Duration> = std::iter::once(polls[0] - created)
        .chain(polls.windows(2).map(|w| w[1] - w[0]))
        .collect();
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_millis(500)),
        "{gaps:?}"
    );
    assert_eq!(gaps[2], Duration::from_millis(750), "{gaps:?}");
    assert_eq!(gaps[3], Duration::from_millis(1125), "{gaps:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        [TaskStatus::Working, TaskStatus::Completed]
    );
}

#[tokio::test(start_paused = true)]
async fn a_status_notification_ends_the_wait_without_a_poll() {
    let (client_end, mut server) = pair();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 3_600_000})).await;
        // Once the handle exists (a notification before it is not its).
        ready_rx.await.unwrap();
        notify(
            &mut server,
            "notifications/tasks/status",
            task("t1", "completed", json!({})),
        )
        .await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/result", "polled instead");
        respond(&mut server, r.id, text_result("fast")).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let start = Instant::now();
    let mut handle = started(&client, TaskOptions::new()).await;
    ready_tx.send(()).unwrap();
    assert_eq!(handle.wait().await.unwrap(), TaskStatus::Completed);
    assert!(start.elapsed() < Duration::from_secs(1));
    let result = handle.result().await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("fast"));
    srv.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_task_that_never_finishes_is_cancelled_at_the_deadline() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 200})).await;
        let mut polls = 0;
        loop {
            let r = next_request(&mut server).await;
            match &*r.method {
                "tasks/get" => {
                    polls += 1;
                    respond(
                        &mut server,
                        r.id,
                        task("t1", "working", json!({"pollInterval": 200})),
                    )
                    .await;
                }
                "tasks/cancel" => {
                    assert_eq!(params(&r)["taskId"], "t1");
                    respond(&mut server, r.id, task("t1", "cancelled", json!({}))).await;
                    return (polls, Instant::now());
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let start = Instant::now();
    let handle = started(&client, TaskOptions::new().deadline(Duration::from_secs(5))).await;
    let err = handle.result().await.unwrap_err();
    assert!(
        matches!(&err, ClientError::TaskDeadline { task_id, after } if task_id == "t1" && *after == Duration::from_secs(5)),
        "{err:?}"
    );
    let (polls, cancelled_at) = tokio::time::timeout(Duration::from_secs(60), srv)
        .await
        .expect("no tasks/cancel reached the server")
        .unwrap();
    let waited = cancelled_at - start;
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_millis(5010),
        "{waited:?}"
    );
    // Backed off from 200 ms: far fewer than 5 s / 200 ms polls.
    assert!((3..=10).contains(&polls), "{polls} polls");
}

#[tokio::test(start_paused = true)]
async fn the_ttl_ends_a_task_that_outlives_it() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 1000, "ttl": 3000})).await;
        let mut cancelled = None;
        loop {
            let Some(Ok(Message::Request(r))) = server.recv().await else {
                return cancelled;
            };
            if r.method == "tasks/cancel" {
                assert_eq!(params(&r)["taskId"], "t1");
                cancelled = Some(Instant::now());
                respond(&mut server, r.id, task("t1", "cancelled", json!({}))).await;
                continue;
            }
            assert_eq!(r.method, "tasks/get");
            respond(
                &mut server,
                r.id,
                task("t1", "working", json!({"ttl": 3000})),
            )
            .await;
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let start = Instant::now();
    let mut handle = started(&client, TaskOptions::new()).await;
    let err = handle.wait().await.unwrap_err();
    assert!(
        matches!(&err, ClientError::TaskExpired { ttl, .. } if *ttl == Duration::from_secs(3)),
        "{err:?}"
    );
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_millis(3010),
        "{waited:?}"
    );
    drop(handle);
    client.close().await;
    // The server is told to stop working for a client that no longer waits.
    let cancelled = srv.await.unwrap().expect("no tasks/cancel at the ttl");
    assert!(cancelled - start < Duration::from_millis(3010));
}

#[tokio::test(start_paused = true)]
async fn cancelled_and_failed_tasks_end_the_wait_with_their_outcome() {
    for (status, outcome) in [("cancelled", "cancelled"), ("failed", "error result")] {
        let (client_end, mut server) = pair();
        let srv = tokio::spawn(async move {
            legacy_handshake(&mut server).await;
            create(&mut server, json!({"pollInterval": 100})).await;
            let r = next_request(&mut server).await;
            assert_eq!(r.method, "tasks/get");
            respond(
                &mut server,
                r.id,
                task("t1", status, json!({"statusMessage": "boom"})),
            )
            .await;
            if status == "failed" {
                let r = next_request(&mut server).await;
                assert_eq!(r.method, "tasks/result");
                respond(
                    &mut server,
                    r.id,
                    json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
                )
                .await;
            }
        });
        let client = Client::builder("t", "1").connect(client_end).await.unwrap();
        let handle = started(&client, TaskOptions::new()).await;
        match (outcome, handle.result().await) {
            ("cancelled", Err(ClientError::TaskCancelled { task_id })) => assert_eq!(task_id, "t1"),
            ("error result", Ok(r)) => assert_eq!(r.is_error, Some(true)),
            (_, other) => panic!("{status}: {other:?}"),
        }
        srv.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn tasks_result_answered_before_the_task_is_done_goes_back_to_polling() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 100})).await;
        let mut results = 0;
        let mut gets = 0;
        loop {
            let r = next_request(&mut server).await;
            match &*r.method {
                "tasks/get" => {
                    gets += 1;
                    let status = match gets {
                        1 => "input_required",
                        2 => "working",
                        _ => "completed",
                    };
                    respond(&mut server, r.id, task("t1", status, json!({}))).await;
                }
                "tasks/result" => {
                    results += 1;
                    if results == 1 {
                        // Answered at once, while the task still runs.
                        fail(
                            &mut server,
                            r.id,
                            ErrorCode::INVALID_PARAMS,
                            "task not done",
                        )
                        .await;
                    } else {
                        respond(&mut server, r.id, text_result("late")).await;
                        return (gets, results);
                    }
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let handle = started(&client, TaskOptions::new()).await;
    let result = handle.result().await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("late"));
    assert_eq!(srv.await.unwrap(), (3, 2));
}

#[tokio::test(start_paused = true)]
async fn a_status_flood_costs_no_memory_and_the_last_word_wins() {
    let (client_end, mut server) = pair();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 3_600_000})).await;
        ready_rx.await.unwrap();
        for i in 0..20_000 {
            // Ours, and tasks nobody watches (with ids no handle knows).
            notify(
                &mut server,
                "notifications/tasks/status",
                task(
                    "t1",
                    "working",
                    json!({"statusMessage": format!("step {i}")}),
                ),
            )
            .await;
            notify(
                &mut server,
                "notifications/tasks/status",
                task(&format!("other-{i}"), "working", json!({})),
            )
            .await;
        }
        notify(
            &mut server,
            "notifications/tasks/status",
            task("t1", "completed", json!({})),
        )
        .await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/result");
        respond(&mut server, r.id, text_result("done")).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls2 = calls.clone();
    let options = TaskOptions::new().on_status(move |_| {
        calls2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let handle = started(&client, options).await;
    ready_tx.send(()).unwrap();
    let result = handle.result().await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    srv.await.unwrap();
    // The handle saw the latest status at each look, not every one of them.
    assert!(calls.load(std::sync::atomic::Ordering::Relaxed) <= 20_001);
}

#[tokio::test(start_paused = true)]
async fn malformed_or_unknown_task_ids_are_typed_errors() {
    // An empty id in the created task.
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        respond(
            &mut server,
            r.id,
            json!({"task": task("", "working", json!({}))}),
        )
        .await;
        server
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let err = client
        .call_tool_as_task("research", json!({}), TaskOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::TaskReport(_)), "{err:?}");
    drop(srv);

    // A poll answered with another task's state.
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 100})).await;
        let r = next_request(&mut server).await;
        respond(&mut server, r.id, task("t2", "completed", json!({}))).await;
        // An unknown id: the server's JSON-RPC error reaches the caller.
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/get");
        assert_eq!(params(&r)["taskId"], "nope");
        fail(&mut server, r.id, ErrorCode::INVALID_PARAMS, "unknown task").await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let mut handle = started(&client, TaskOptions::new()).await;
    let err = handle.wait().await.unwrap_err();
    assert!(matches!(err, ClientError::TaskReport(_)), "{err:?}");
    assert_eq!(
        handle.status(),
        TaskStatus::Working,
        "state changed by another task's report"
    );
    let err = client.get_task("nope").await.unwrap_err();
    assert_eq!(rpc_code(&err), Some(ErrorCode::INVALID_PARAMS), "{err:?}");
    srv.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_server_that_runs_the_call_at_once_gives_the_result() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        respond(&mut server, r.id, text_result("inline")).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let call = client
        .call_tool_as_task("echo", json!({}), TaskOptions::new())
        .await
        .unwrap();
    assert!(matches!(call, TaskCall::Done(_)));
    assert_eq!(
        call.result().await.unwrap().content[0].as_text(),
        Some("inline")
    );
    srv.await.unwrap();
}

/// `call_tool` with the listing's `taskSupport: required` runs the tool as
/// a task (status messages as progress); other tools go as plain calls.
#[tokio::test(start_paused = true)]
async fn call_tool_runs_a_task_required_tool_as_a_task() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tools/list");
        respond(
            &mut server,
            r.id,
            json!({"tools": [
                {"name": "research", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
                {"name": "echo", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
            ]}),
        )
        .await;
        // The plain tool: no task member.
        let r = next_request(&mut server).await;
        assert_eq!(params(&r)["name"], "echo");
        assert!(params(&r).get("task").is_none(), "{:?}", params(&r));
        respond(&mut server, r.id, text_result("plain")).await;
        // The required one: a task.
        let r = next_request(&mut server).await;
        let p = params(&r);
        assert_eq!(
            (p["name"].as_str(), p["arguments"]["topic"].as_str()),
            (Some("research"), Some("x"))
        );
        assert!(p["task"].is_object(), "{p}");
        respond(
            &mut server,
            r.id,
            json!({"task": task("t1", "working", json!({"pollInterval": 100}))}),
        )
        .await;
        for (i, status) in ["working", "completed"].into_iter().enumerate() {
            let r = next_request(&mut server).await;
            assert_eq!(r.method, "tasks/get");
            respond(
                &mut server,
                r.id,
                task("t1", status, json!({"statusMessage": format!("stage {i}")})),
            )
            .await;
        }
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/result");
        respond(&mut server, r.id, text_result("report")).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let tools = client.list_all::<mcp_proto::schema::Tool>().await.unwrap();
    assert_eq!(tools.len(), 2);
    let r = client
        .call_tool("echo", json!({}))
        .task_support(tools[1].task_support())
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("plain"));
    let messages = Arc::new(Mutex::new(Vec::new()));
    let seen = messages.clone();
    let r = client
        .call_tool("research", json!({"topic": "x"}))
        .task_support(tools[0].task_support())
        .on_progress(move |p| seen.lock().unwrap().push((p.progress, p.message)))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("report"));
    srv.await.unwrap();
    assert_eq!(
        *messages.lock().unwrap(),
        [
            (1.0, Some("working: stage 0".to_owned())),
            (2.0, Some("completed: stage 1".to_owned()))
        ]
    );
}

/// A server that does not declare `tasks.requests.tools.call` is never
/// asked for a task, whatever the tool's listing says (the spec: clients
/// MUST NOT use task augmentation on its tools): `call_tool` with
/// `taskSupport: required` and `call_tool_as_task` both go as plain calls.
#[tokio::test(start_paused = true)]
async fn a_server_without_tool_tasks_is_never_asked_for_one() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake_with(&mut server, json!({"tools": {}})).await;
        for answer in ["plain", "done"] {
            let r = next_request(&mut server).await;
            assert_eq!(r.method, "tools/call");
            assert!(params(&r).get("task").is_none(), "{:?}", params(&r));
            respond(&mut server, r.id, text_result(answer)).await;
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    client.wait_ready().await.unwrap();
    assert!(!client.must_call_as_task(mcp_proto::schema::TaskSupport::Required));
    let r = client
        .call_tool("research", json!({}))
        .task_support(mcp_proto::schema::TaskSupport::Required)
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("plain"));
    let call = client
        .call_tool_as_task("research", json!({}), TaskOptions::new())
        .await
        .unwrap();
    assert!(matches!(call, TaskCall::Done(_)), "{call:?}");
    srv.await.unwrap();
}

/// A task known only by its id (a handle dropped, its id kept) is followed
/// again with `resume_task` on a ticket made from the id: it asks the
/// server for the state at once.
#[tokio::test(start_paused = true)]
async fn a_task_is_resumed_by_its_id() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 100})).await;
        let r = next_request(&mut server).await;
        assert_eq!(
            (&*r.method, &params(&r)["taskId"]),
            ("tasks/get", &json!("t1"))
        );
        respond(&mut server, r.id, task("t1", "completed", json!({}))).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/result");
        respond(&mut server, r.id, text_result("resumed")).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let id = started(&client, TaskOptions::new()).await.id().to_owned();
    let ticket = TaskTicket::new("server", id, TaskEra::Core);
    let handle = client
        .resume_task(&ticket, TaskOptions::new())
        .await
        .unwrap();
    assert_eq!(handle.status(), TaskStatus::Completed);
    assert_eq!(
        handle.result().await.unwrap().content[0].as_text(),
        Some("resumed")
    );
    srv.await.unwrap();
    let err = client
        .resume_task(
            &TaskTicket::new("server", "", TaskEra::Core),
            TaskOptions::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Ticket(TicketError::BadId)),
        "{err:?}"
    );
}

/// A 2026-07-28 task handle (`resultType: "task"`) answered on a legacy
/// connection, where the extension cannot be in use, is a typed error,
/// not an empty result (the extension: an invalid response).
#[tokio::test(start_paused = true)]
async fn a_2026_task_handle_on_a_legacy_connection_is_a_typed_error() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        respond(
            &mut server,
            r.id,
            json!({"resultType": "task", "taskId": "t1", "status": "working",
                   "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z"}),
        )
        .await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let err = client
        .call_tool_as_task("research", json!({}), TaskOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::TaskExtension { .. }), "{err:?}");
    srv.await.unwrap();
}

/// A caller that gives up on `call_tool` for a task-required tool (its
/// future dropped mid-task) leaves nothing running: `tasks/cancel` follows.
#[tokio::test(start_paused = true)]
async fn dropping_a_task_calls_future_cancels_the_task() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tools/list");
        respond(
            &mut server,
            r.id,
            json!({"tools": [
                {"name": "research", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
            ]}),
        )
        .await;
        create(&mut server, json!({"pollInterval": 1000})).await;
        loop {
            let r = next_request(&mut server).await;
            match &*r.method {
                "tasks/get" => {
                    respond(
                        &mut server,
                        r.id,
                        task("t1", "working", json!({"pollInterval": 1000})),
                    )
                    .await;
                }
                "tasks/cancel" => {
                    assert_eq!(params(&r)["taskId"], "t1");
                    respond(&mut server, r.id, task("t1", "cancelled", json!({}))).await;
                    return;
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let tools = client.list_all::<mcp_proto::schema::Tool>().await.unwrap();
    let gave_up = tokio::time::timeout(
        Duration::from_millis(2500),
        client
            .call_tool("research", json!({"topic": "x"}))
            .task_support(tools[0].task_support()),
    )
    .await;
    assert!(gave_up.is_err(), "the task ended: {gave_up:?}");
    tokio::time::timeout(Duration::from_secs(60), srv)
        .await
        .expect("no tasks/cancel reached the server after the call was dropped")
        .unwrap();
}
