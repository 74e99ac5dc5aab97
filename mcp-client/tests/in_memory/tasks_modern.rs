//! Tools run as tasks in 2026-07-28 (the `io.modelcontextprotocol/tasks`
//! extension, SEP-2663): the server answers `tools/call` with a task handle
//! (`resultType: "task"`) and the client follows it: `tasks/get` polled no
//! faster than `pollIntervalMs`, the result (or error) inline on the
//! terminal status, `inputRequests` answered through the handler with
//! `tasks/update` (each key once), the caller's deadline and `ttlMs` ending
//! the wait with `tasks/cancel` sent, floods, malformed reports. Time is
//! tokio's paused clock.

use mcp_client::{TaskCall, TaskOptions};
use mcp_proto::schema::{ElicitParams, ElicitResult, TaskStatus};
use tokio::time::Instant;

use super::*;

fn task(status: &str, extra: Value) -> Value {
    let mut t = json!({
        "taskId": "t1",
        "status": status,
        "createdAt": "2026-07-28T00:00:00Z",
        "lastUpdatedAt": "2026-07-28T00:00:00Z",
        "ttlMs": 600_000,
        "pollIntervalMs": 500,
    });
    if let (Some(t), Value::Object(extra)) = (t.as_object_mut(), extra) {
        t.extend(extra);
    }
    t
}

/// A `tasks/get` answer (`resultType: "complete"`).
fn got(status: &str, extra: Value) -> Value {
    let mut t = task(status, extra);
    t["resultType"] = json!("complete");
    t
}

/// The task handle a `tools/call` is answered with.
fn handle(extra: Value) -> Value {
    let mut t = task("working", extra);
    t["resultType"] = json!("task");
    t
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

/// Answers the first `tools/call` (checking it declares the extension and
/// carries no 2025-11-25 `task` member) with `answer`.
async fn create(t: &mut ChannelTransport, answer: Value) {
    let r = next_request(t).await;
    assert_eq!(r.method, "tools/call");
    let p = params(&r);
    assert!(p.get("task").is_none(), "a 2025-11-25 task member: {p}");
    assert_eq!(
        p["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{p}"
    );
    respond(t, r.id, answer).await;
}

/// Answers an elicitation with the message as `name`, and counts.
#[derive(Default, Clone)]
struct Elicitor {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Elicitor {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_elicitation_form()
    }
    async fn elicit(&self, p: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let message = p.message().unwrap_or_default().to_owned();
        self.asked.lock().unwrap().push(message.clone());
        let mut content = serde_json::Map::new();
        content.insert("name".into(), message.into());
        Ok(ElicitResult::accept(content))
    }
}

#[tokio::test(start_paused = true)]
async fn call_tool_follows_the_task_to_its_inline_result_with_status_as_progress() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        create(&mut server, handle(json!({"statusMessage": "queued"}))).await;
        let mut polls = Vec::new();
        loop {
            let r = next_request(&mut server).await;
            assert_eq!(
                r.method, "tasks/get",
                "only tasks/get (no tasks/result in 2026-07-28)"
            );
            let p = params(&r);
            assert_eq!(p["taskId"], "t1");
            assert!(
                p["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
                    .get("io.modelcontextprotocol/tasks")
                    .is_some(),
                "tasks/get must declare the extension: {p}"
            );
            polls.push(Instant::now());
            let answer = match polls.len() {
                1 => got("working", json!({"statusMessage": "step 1"})),
                2 | 3 => got("working", json!({"statusMessage": "step 1"})),
                _ => got("completed", json!({"result": text_result("report")})),
            };
            respond(&mut server, r.id, answer).await;
            if polls.len() == 4 {
                return polls;
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let progress2 = progress.clone();
    let start = Instant::now();
    let result = client
        .call_tool("research", json!({"topic": "x"}))
        .on_progress(move |p| {
            progress2
                .lock()
                .unwrap()
                .push(p.message.unwrap_or_default())
        })
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("report"));
    let polls = srv.await.unwrap();
    let gaps: Vec<Duration> = std::iter::once(polls[0] - start)
        .chain(polls.windows(2).map(|w| w[1] - w[0]))
        .collect();
    // Never faster than pollIntervalMs; unchanged polls back off by half.
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_millis(500)),
        "{gaps:?}"
    );
    assert_eq!(gaps[2], Duration::from_millis(750), "{gaps:?}");
    assert_eq!(gaps[3], Duration::from_millis(1125), "{gaps:?}");
    assert_eq!(*progress.lock().unwrap(), ["working: step 1", "completed"],);
}

#[tokio::test(start_paused = true)]
async fn input_requests_are_answered_through_the_handler_once_each_with_tasks_update() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        create(&mut server, handle(json!({}))).await;
        let ask = json!({"inputRequests": {"who": {"method": "elicitation/create",
            "params": {"mode": "form", "message": "octocat", "requestedSchema": {"type": "object"}}}}});
        let mut updates = Vec::new();
        let mut gets = 0;
        loop {
            let r = next_request(&mut server).await;
            let p = params(&r);
            match &*r.method {
                "tasks/get" => {
                    gets += 1;
                    // The server repeats the outstanding request until it
                    // has taken the answer (eventual consistency): twice.
                    let answer = match gets {
                        1..=3 => got("input_required", ask.clone()),
                        _ => got("completed", json!({"result": text_result("hello octocat")})),
                    };
                    respond(&mut server, r.id, answer).await;
                    if gets == 4 {
                        return updates;
                    }
                }
                "tasks/update" => {
                    assert_eq!(p["taskId"], "t1");
                    updates.push(p["inputResponses"].clone());
                    respond(&mut server, r.id, json!({"resultType": "complete"})).await;
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let elicitor = Elicitor::default();
    let client = Client::builder("t", "1")
        .handler(elicitor.clone())
        .connect(client_end)
        .await
        .unwrap();
    let result = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello octocat"));
    let updates = srv.await.unwrap();
    assert_eq!(
        updates,
        [json!({"who": {"action": "accept", "content": {"name": "octocat"}}})]
    );
    assert_eq!(*elicitor.asked.lock().unwrap(), ["octocat"]);
}

#[tokio::test(start_paused = true)]
async fn a_never_finishing_task_is_cancelled_at_the_deadline_and_at_its_ttl() {
    for by_ttl in [false, true] {
        let (client_end, mut server) = pair();
        let srv = tokio::spawn(async move {
            modern_handshake(&mut server).await;
            let ttl = if by_ttl { 3_000 } else { 600_000 };
            create(
                &mut server,
                handle(json!({"ttlMs": ttl, "pollIntervalMs": 200})),
            )
            .await;
            let mut polls = 0;
            loop {
                let r = next_request(&mut server).await;
                match &*r.method {
                    "tasks/get" => {
                        polls += 1;
                        let t = got("working", json!({"ttlMs": ttl, "pollIntervalMs": 200}));
                        respond(&mut server, r.id, t).await;
                    }
                    "tasks/cancel" => {
                        assert_eq!(params(&r)["taskId"], "t1");
                        respond(&mut server, r.id, json!({"resultType": "complete"})).await;
                        return (polls, Instant::now());
                    }
                    other => panic!("unexpected {other}"),
                }
            }
        });
        let client = Client::builder("t", "1").connect(client_end).await.unwrap();
        let start = Instant::now();
        let err = client
            .call_tool("forever", json!({}))
            .max_time(Duration::from_secs(5))
            .await
            .unwrap_err();
        let (polls, cancelled_at) = srv.await.unwrap();
        let (expected, ok) = if by_ttl {
            (
                Duration::from_secs(3),
                matches!(&err, ClientError::TaskExpired { task_id, .. } if task_id == "t1"),
            )
        } else {
            (
                Duration::from_secs(5),
                matches!(&err, ClientError::TaskDeadline { task_id, .. } if task_id == "t1"),
            )
        };
        assert!(ok, "{err:?}");
        let waited = cancelled_at - start;
        assert!(
            waited >= expected && waited < expected + Duration::from_millis(10),
            "{waited:?}"
        );
        assert!(
            (3..=12).contains(&polls),
            "{polls} polls: backed off from 200 ms"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn terminal_outcomes_failed_cancelled_and_completed_without_a_result() {
    let cases = [
        got(
            "failed",
            json!({"error": {"code": -32603, "message": "rate limited"}}),
        ),
        got("cancelled", json!({})),
        got("completed", json!({})),
        got("failed", json!({})),
        // An `isError` tool result is `completed`, not `failed`.
        got(
            "completed",
            json!({"result": {"content": [{"type": "text", "text": "bad input"}], "isError": true}}),
        ),
    ];
    for (i, answer) in cases.into_iter().enumerate() {
        let (client_end, mut server) = pair();
        let srv = tokio::spawn(async move {
            modern_handshake(&mut server).await;
            create(&mut server, handle(json!({}))).await;
            let r = next_request(&mut server).await;
            assert_eq!(r.method, "tasks/get");
            respond(&mut server, r.id, answer).await;
        });
        let client = Client::builder("t", "1").connect(client_end).await.unwrap();
        let out = client.call_tool("job", json!({})).await;
        srv.await.unwrap();
        match i {
            0 => assert!(
                matches!(&out, Err(ClientError::Rpc(e)) if e.message == "rate limited"),
                "{out:?}"
            ),
            1 => assert!(
                matches!(&out, Err(ClientError::TaskCancelled { .. })),
                "{out:?}"
            ),
            2 | 3 => assert!(
                matches!(
                    &out,
                    Err(ClientError::TaskReport(
                        mcp_client::session::TaskReportError::NoOutcome { .. }
                    ))
                ),
                "{out:?}"
            ),
            _ => {
                let r = out.unwrap();
                assert_eq!(r.is_error, Some(true));
                assert_eq!(r.content[0].as_text(), Some("bad input"));
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn malformed_or_unknown_task_ids_are_typed_errors() {
    // A handle with an empty id; a poll about another task; an unknown id (-32602).
    for case in 0..3 {
        let (client_end, mut server) = pair();
        let srv = tokio::spawn(async move {
            modern_handshake(&mut server).await;
            if case == 0 {
                create(&mut server, handle(json!({"taskId": ""}))).await;
                return;
            }
            create(&mut server, handle(json!({}))).await;
            let r = next_request(&mut server).await;
            if case == 1 {
                respond(
                    &mut server,
                    r.id,
                    got(
                        "completed",
                        json!({"taskId": "other", "result": text_result("x")}),
                    ),
                )
                .await;
            } else {
                server
                    .send(
                        ErrorResponse::new(
                            Some(r.id),
                            ErrorObject::new(
                                ErrorCode::INVALID_PARAMS,
                                "Failed to retrieve task: Task not found",
                            ),
                        )
                        .into(),
                    )
                    .await
                    .unwrap();
            }
        });
        let client = Client::builder("t", "1").connect(client_end).await.unwrap();
        let err = client.call_tool("job", json!({})).await.unwrap_err();
        srv.await.unwrap();
        match case {
            0 | 1 => assert!(matches!(err, ClientError::TaskReport(_)), "{err:?}"),
            _ => assert_eq!(
                err.rpc().map(|e| e.code),
                Some(ErrorCode::INVALID_PARAMS),
                "{err:?}"
            ),
        }
    }
}

/// `notifications/tasks` (from a `subscriptions/listen` stream the
/// application opened) feed the handle: a flood keeps one slot, and the
/// terminal one, carrying the result, ends the wait without a poll.
#[tokio::test(start_paused = true)]
async fn a_status_flood_costs_no_memory_and_the_terminal_notification_ends_the_wait() {
    let (client_end, mut server) = pair();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        create(&mut server, handle(json!({"pollIntervalMs": 3_600_000}))).await;
        ready_rx.await.unwrap();
        for i in 0..10_000 {
            let n = task("working", json!({"statusMessage": format!("step {i}")}));
            server
                .send(Notification::new("notifications/tasks", Some(raw(n))).into())
                .await
                .unwrap();
        }
        let done = task("completed", json!({"result": text_result("pushed")}));
        server
            .send(Notification::new("notifications/tasks", Some(raw(done))).into())
            .await
            .unwrap();
        // No poll follows: the client closes with nothing more sent.
        server.recv().await.map(|m| format!("{m:?}"))
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let call = client
        .call_tool_as_task("job", json!({}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Started(mut h) = call else {
        panic!("{call:?}")
    };
    assert_eq!(h.era(), Era::Modern);
    assert_eq!(h.poll_interval(), Duration::from_secs(3600));
    ready_tx.send(()).unwrap();
    let start = Instant::now();
    assert_eq!(h.wait().await.unwrap(), TaskStatus::Completed);
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(
        h.result().await.unwrap().content[0].as_text(),
        Some("pushed")
    );
    client.close().await;
    let after = srv.await.unwrap();
    assert!(after.is_none(), "the client sent {after:?}");
}

#[tokio::test(start_paused = true)]
async fn call_tool_as_task_gives_a_handle_or_the_synchronous_result_and_cancel_sends_tasks_cancel()
{
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        create(
            &mut server,
            json!({"resultType": "complete", "content": [{"type": "text", "text": "now"}]}),
        )
        .await;
        create(&mut server, handle(json!({}))).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/cancel");
        assert_eq!(params(&r)["taskId"], "t1");
        respond(&mut server, r.id, json!({"resultType": "complete"})).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let call = client
        .call_tool_as_task("job", json!({}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Done(r) = call else {
        panic!("{call:?}")
    };
    assert_eq!(r.content[0].as_text(), Some("now"));
    let call = client
        .call_tool_as_task("job", json!({}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Started(h) = call else {
        panic!("{call:?}")
    };
    assert_eq!(
        (h.id(), h.era(), h.status()),
        ("t1", Era::Modern, TaskStatus::Working)
    );
    assert_eq!(h.ttl(), Some(Duration::from_secs(600)));
    h.cancel().await.unwrap();
    srv.await.unwrap();
}

/// Dropping `call_tool`'s future while it follows a task cancels the task.
#[tokio::test(start_paused = true)]
async fn dropping_call_tool_mid_task_sends_tasks_cancel() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        create(&mut server, handle(json!({}))).await;
        loop {
            let r = next_request(&mut server).await;
            match &*r.method {
                "tasks/get" => respond(&mut server, r.id, got("working", json!({}))).await,
                "tasks/cancel" => {
                    respond(&mut server, r.id, json!({"resultType": "complete"})).await;
                    return;
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let call = client.call_tool("job", json!({}));
    assert!(
        tokio::time::timeout(Duration::from_secs(2), call)
            .await
            .is_err()
    );
    tokio::time::timeout(Duration::from_secs(10), srv)
        .await
        .expect("no tasks/cancel")
        .unwrap();
}

/// Turned off, the extension is not declared (and the server, which must
/// not answer with a task then, is not asked to).
#[tokio::test(start_paused = true)]
async fn the_extension_can_be_turned_off() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        let r = next_request(&mut server).await;
        let caps = &params(&r)["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert!(caps.get("extensions").is_none(), "{caps}");
        respond(
            &mut server,
            r.id,
            json!({"resultType": "complete", "content": []}),
        )
        .await;
    });
    let client = Client::builder("t", "1")
        .tasks_extension(false)
        .connect(client_end)
        .await
        .unwrap();
    client.call_tool("job", json!({})).await.unwrap();
    srv.await.unwrap();
}

/// A 2026-07-28 task's ticket names the extension, and resumes on a
/// 2026-07-28 connection (the result from `tasks/get`, as for the handle).
#[tokio::test(start_paused = true)]
async fn a_modern_tasks_ticket_names_the_extension_and_resumes() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        modern_handshake(&mut server).await;
        create(&mut server, handle(json!({}))).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/get");
        respond(&mut server, r.id, got("working", json!({}))).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/get");
        respond(
            &mut server,
            r.id,
            got("completed", json!({"result": text_result("resumed")})),
        )
        .await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let call = client
        .call_tool_as_task("job", json!({}), TaskOptions::new())
        .await
        .unwrap();
    let TaskCall::Started(h) = call else {
        panic!("{call:?}")
    };
    let ticket = h.ticket("peer");
    assert_eq!(ticket.era, mcp_client::TaskEra::Extension);
    drop(h);
    let resumed = client
        .resume_task(&ticket, TaskOptions::new())
        .await
        .unwrap();
    assert_eq!(resumed.era(), Era::Modern);
    assert_eq!(
        resumed.result().await.unwrap().content[0].as_text(),
        Some("resumed")
    );
    srv.await.unwrap();
}
