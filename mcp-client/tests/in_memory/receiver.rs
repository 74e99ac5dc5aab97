//! The client as the receiver of tasks (2025-11-25): the fake server sends
//! task-augmented `sampling/createMessage` / `elicitation/create` and then
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` about them.

use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_client::ClientBuilder;
use mcp_proto::schema::{
    ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Role,
};
use tokio::sync::Notify;

use super::*;

/// Sampling waits for `gate` (one permit per call); elicitation fails.
#[derive(Clone, Default)]
struct Gated {
    gate: Arc<Notify>,
    started: Arc<AtomicUsize>,
    started_one: Arc<Notify>,
    /// A sampling future was dropped before it finished (aborted).
    aborted: Arc<AtomicUsize>,
}

struct AbortFlag(Arc<AtomicUsize>, bool);

impl Drop for AbortFlag {
    fn drop(&mut self) {
        if self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl ClientHandler for Gated {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
            .with_sampling()
            .with_elicitation_form()
    }
    async fn create_message(
        &self,
        p: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        let mut flag = AbortFlag(self.aborted.clone(), true);
        self.started.fetch_add(1, Ordering::SeqCst);
        self.started_one.notify_one();
        self.gate.notified().await;
        flag.1 = false;
        let text = format!("sampled {} messages", p.messages.len());
        Ok(CreateMessageResult::new(
            Role::Assistant,
            ContentBlock::text(text),
            "gated-model",
        ))
    }
    async fn elicit(&self, _: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "no user here"))
    }
}

/// Connects over the legacy handshake (2025-11-25); the capabilities the
/// client declared in `initialize`.
async fn connect(builder: ClientBuilder) -> (Client, ChannelTransport, Value) {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "server/discover");
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
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "initialize");
        let caps = params(&r)["capabilities"].clone();
        respond(&mut server, r.id, json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})).await;
        let _initialized = server.recv().await;
        (server, caps)
    });
    let client = builder.connect(client_end).await.unwrap();
    let (server, caps) = srv.await.unwrap();
    (client, server, caps)
}

/// The next answer (response or error) the client sends, skipping
/// notifications (kept in `notes`).
async fn next_answer(
    t: &mut ChannelTransport,
    notes: &mut Vec<Notification>,
) -> (RequestId, Result<Value, ErrorObject>) {
    loop {
        // A broken client fails the test instead of hanging it.
        let next = tokio::time::timeout(Duration::from_secs(30), t.recv())
            .await
            .expect("no answer from the client within 30 s");
        match next {
            Some(Ok(Message::Response(r))) => return (r.id, Ok(r.result.decode().unwrap())),
            Some(Ok(Message::Error(e))) => return (e.id.unwrap(), Err(e.error)),
            Some(Ok(Message::Notification(n))) => notes.push(n),
            other => panic!("expected an answer, got {other:?}"),
        }
    }
}

/// Sends request `id` and returns its answer, which must be the next one.
async fn ask(
    t: &mut ChannelTransport,
    id: &str,
    method: &str,
    p: Value,
) -> Result<Value, ErrorObject> {
    ask_collecting(t, id, method, p, &mut Vec::new()).await
}

async fn ask_collecting(
    t: &mut ChannelTransport,
    id: &str,
    method: &str,
    p: Value,
    notes: &mut Vec<Notification>,
) -> Result<Value, ErrorObject> {
    send(t, id, method, p).await;
    let (got, answer) = next_answer(t, notes).await;
    assert_eq!(got, RequestId::from(id), "answers out of order: {answer:?}");
    answer
}

/// Sends request `id` without waiting for its answer.
async fn send(t: &mut ChannelTransport, id: &str, method: &str, p: Value) {
    t.send(Request::new(id.into(), method.to_owned(), Some(raw(p))).into())
        .await
        .unwrap();
}

fn sampling(ttl: Option<u64>) -> Value {
    let mut p = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
        "task": {}
    });
    if let Some(ttl) = ttl {
        p["task"]["ttl"] = ttl.into();
    }
    p
}

/// Asks for a sampling task; its id.
async fn create(t: &mut ChannelTransport, id: &str, ttl: Option<u64>) -> String {
    let created = ask(t, id, "sampling/createMessage", sampling(ttl))
        .await
        .unwrap();
    let task = &created["task"];
    assert_eq!(task["status"], "working", "{created}");
    task["taskId"].as_str().unwrap().to_owned()
}

/// Waits for the handler to start one sampling call.
async fn started(h: &Gated) {
    tokio::time::timeout(Duration::from_secs(30), h.started_one.notified())
        .await
        .expect("the handler never started");
}

fn id_params(task: &str) -> Value {
    json!({"taskId": task})
}

#[tokio::test]
async fn a_task_augmented_request_gets_a_task_then_the_handlers_result() {
    let h = Gated::default();
    let (_client, mut server, caps) = connect(Client::builder("t", "1").handler(h.clone())).await;
    assert_eq!(
        caps["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {
            "sampling": {"createMessage": {}},
            "elicitation": {"create": {}}
        }})
    );

    let created = ask(
        &mut server,
        "c1",
        "sampling/createMessage",
        sampling(Some(60_000)),
    )
    .await
    .unwrap();
    let task = created["task"].clone();
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert!(id.len() >= 32, "guessable id {id}");
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60_000);
    assert!(task["pollInterval"].as_u64().unwrap() > 0);
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    started(&h).await;

    let got = ask(&mut server, "g1", "tasks/get", id_params(&id))
        .await
        .unwrap();
    assert_eq!(got["status"], "working");
    assert_eq!(got["taskId"], id.as_str());
    let listed = ask(&mut server, "l1", "tasks/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], id.as_str());

    h.gate.notify_one();
    let mut notes = Vec::new();
    // The outcome is kept: `tasks/result` (whenever it arrives) is the handler's result.
    send(&mut server, "r1", "tasks/result", id_params(&id)).await;
    let (rid, result) = next_answer(&mut server, &mut notes).await;
    assert_eq!(rid, RequestId::from("r1"));
    let result = result.unwrap();
    assert_eq!(result["model"], "gated-model");
    assert_eq!(result["content"]["text"], "sampled 1 messages");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let got = ask(&mut server, "g2", "tasks/get", id_params(&id))
        .await
        .unwrap();
    assert_eq!(got["status"], "completed");

    // A handler error is the task's failure and `tasks/result`'s error.
    let mut elicit = json!({"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {}}, "task": {"ttl": 1000}});
    let created = ask(&mut server, "c2", "elicitation/create", elicit.take())
        .await
        .unwrap();
    let eid = created["task"]["taskId"].as_str().unwrap().to_owned();
    let err = ask(&mut server, "r2", "tasks/result", id_params(&eid))
        .await
        .unwrap_err();
    assert_eq!(err.message, "no user here");
    let got = ask(&mut server, "g3", "tasks/get", id_params(&eid))
        .await
        .unwrap();
    assert_eq!(got["status"], "failed");
    assert_eq!(got["statusMessage"], "no user here");
}

#[tokio::test]
async fn tasks_result_before_the_task_is_done_waits_for_it() {
    let h = Gated::default();
    let (_client, mut server, _) = connect(Client::builder("t", "1").handler(h.clone())).await;
    let id = create(&mut server, "c1", None).await;
    started(&h).await;
    send(&mut server, "r1", "tasks/result", id_params(&id)).await;
    // Answered in order: had `tasks/result` been answered at once, its
    // answer would come before this one.
    let got = ask(&mut server, "g1", "tasks/get", id_params(&id))
        .await
        .unwrap();
    assert_eq!(got["status"], "working");

    h.gate.notify_one();
    let mut notes = Vec::new();
    let (rid, result) = next_answer(&mut server, &mut notes).await;
    assert_eq!(rid, RequestId::from("r1"));
    assert_eq!(result.unwrap()["model"], "gated-model");
    // Then the status notification (optional in the spec; we send it),
    // before the answer to a later request.
    let _ = ask_collecting(&mut server, "g2", "tasks/get", id_params(&id), &mut notes).await;
    let status = notes
        .into_iter()
        .find(|n| n.method == "notifications/tasks/status")
        .expect("no status notification");
    let p = status.params.unwrap().decode::<Value>().unwrap();
    assert_eq!(p["taskId"], id.as_str());
    assert_eq!(p["status"], "completed");
}

#[tokio::test]
async fn tasks_cancel_aborts_the_handler_and_ends_a_waiting_result() {
    let h = Gated::default();
    let (_client, mut server, _) = connect(Client::builder("t", "1").handler(h.clone())).await;
    let id = create(&mut server, "c1", None).await;
    started(&h).await;
    send(&mut server, "r1", "tasks/result", id_params(&id)).await;
    send(&mut server, "x1", "tasks/cancel", id_params(&id)).await;
    let mut notes = Vec::new();
    let (first, cancelled) = next_answer(&mut server, &mut notes).await;
    assert_eq!(first, RequestId::from("x1"));
    assert_eq!(cancelled.unwrap()["status"], "cancelled");
    let (second, result) = next_answer(&mut server, &mut notes).await;
    assert_eq!(second, RequestId::from("r1"));
    assert!(result.unwrap_err().message.contains("cancelled"));
    // The handler's future was dropped, not left running.
    tokio::time::timeout(Duration::from_secs(10), async {
        while h.aborted.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the handler was not aborted");
    // Kept, cancelled; cancelling again is invalid.
    let got = ask(&mut server, "g1", "tasks/get", id_params(&id))
        .await
        .unwrap();
    assert_eq!(got["status"], "cancelled");
    let again = ask(&mut server, "x2", "tasks/cancel", id_params(&id))
        .await
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn an_unknown_or_missing_task_id_is_invalid_params() {
    let h = Gated::default();
    let (_client, mut server, _) = connect(Client::builder("t", "1").handler(h.clone())).await;
    for (n, method) in ["tasks/get", "tasks/result", "tasks/cancel"]
        .into_iter()
        .enumerate()
    {
        let e = ask(&mut server, &format!("u{n}"), method, id_params("nope"))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{method}");
        let e = ask(&mut server, &format!("m{n}"), method, json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{method}");
    }
    let listed = ask(&mut server, "l", "tasks/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["tasks"], json!([]));
}

#[tokio::test]
async fn beyond_max_kept_tasks_a_task_request_is_refused_without_the_handler() {
    let h = Gated::default();
    let (_client, mut server, _) = connect(
        Client::builder("t", "1")
            .handler(h.clone())
            .max_kept_tasks(2),
    )
    .await;
    create(&mut server, "c1", None).await;
    create(&mut server, "c2", None).await;
    let refused = ask(&mut server, "c3", "sampling/createMessage", sampling(None))
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::INTERNAL_ERROR);
    assert!(
        refused.message.contains("max_kept_tasks"),
        "{}",
        refused.message
    );
    let listed = ask(&mut server, "l", "tasks/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(h.started.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn max_kept_tasks_zero_declares_no_tasks_and_answers_plainly() {
    let h = Gated::default();
    let (_client, mut server, caps) = connect(
        Client::builder("t", "1")
            .handler(h.clone())
            .max_kept_tasks(0),
    )
    .await;
    assert!(caps.get("tasks").is_none(), "{caps}");
    h.gate.notify_one();
    let answer = ask(&mut server, "c1", "sampling/createMessage", sampling(None))
        .await
        .unwrap();
    assert_eq!(answer["model"], "gated-model");
}

#[tokio::test(start_paused = true)]
async fn a_task_is_dropped_at_its_ttl_capped_by_max_task_ttl() {
    let h = Gated::default();
    let (_client, mut server, _) = connect(
        Client::builder("t", "1")
            .handler(h.clone())
            .max_task_ttl(Duration::from_secs(5)),
    )
    .await;
    let created = ask(
        &mut server,
        "c1",
        "sampling/createMessage",
        sampling(Some(60_000)),
    )
    .await
    .unwrap();
    assert_eq!(created["task"]["ttl"], 5_000, "ttl not capped");
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let short = ask(
        &mut server,
        "c2",
        "sampling/createMessage",
        sampling(Some(1_000)),
    )
    .await
    .unwrap();
    assert_eq!(short["task"]["ttl"], 1_000);
    let short_id = short["task"]["taskId"].as_str().unwrap().to_owned();
    send(&mut server, "r1", "tasks/result", id_params(&id)).await;

    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let gone = ask(&mut server, "g1", "tasks/get", id_params(&short_id))
        .await
        .unwrap_err();
    assert_eq!(gone.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        h.aborted.load(Ordering::SeqCst),
        1,
        "the expired task's handler runs on"
    );
    let still = ask(&mut server, "g2", "tasks/get", id_params(&id))
        .await
        .unwrap();
    assert_eq!(still["status"], "working");

    tokio::time::sleep(Duration::from_secs(4)).await;
    // The waiting `tasks/result` is told, the handler stopped, the id unknown.
    let mut notes = Vec::new();
    let (rid, result) = next_answer(&mut server, &mut notes).await;
    assert_eq!(rid, RequestId::from("r1"));
    assert_eq!(result.unwrap_err().code, ErrorCode::INVALID_PARAMS);
    let gone = ask(&mut server, "g3", "tasks/get", id_params(&id))
        .await
        .unwrap_err();
    assert_eq!(gone.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(h.aborted.load(Ordering::SeqCst), 2);
    let listed = ask(&mut server, "l", "tasks/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["tasks"], json!([]));
}

/// A task the server cancels is reported with `notifications/tasks/status`
/// (`cancelled`), as a finished one is.
#[tokio::test]
async fn a_cancelled_task_is_reported_with_a_status_notification() {
    let h = Gated::default();
    let (_client, mut server, _) = connect(Client::builder("t", "1").handler(h.clone())).await;
    let id = create(&mut server, "c1", None).await;
    started(&h).await;
    let mut notes = Vec::new();
    let cancelled = ask_collecting(
        &mut server,
        "x1",
        "tasks/cancel",
        id_params(&id),
        &mut notes,
    )
    .await
    .unwrap();
    assert_eq!(cancelled["status"], "cancelled");
    // Collected before the answer to a later request.
    let _ = ask_collecting(&mut server, "g1", "tasks/get", id_params(&id), &mut notes).await;
    let status = notes
        .into_iter()
        .find(|n| n.method == "notifications/tasks/status")
        .expect("no status notification for the cancelled task");
    let p = status.params.unwrap().decode::<Value>().unwrap();
    assert_eq!(
        (&p["taskId"], &p["status"]),
        (&json!(id), &json!("cancelled"))
    );
}

/// `tasks/list` answers in pages of at most TASK_LIST_PAGE_SIZE, each
/// task once, the last page without `nextCursor`; a cursor the client did
/// not give is -32602.
#[tokio::test]
async fn tasks_list_is_paged_with_a_cursor() {
    let page = mcp_client::TASK_LIST_PAGE_SIZE;
    let h = Gated::default();
    let (_client, mut server, _) = connect(
        Client::builder("t", "1")
            .handler(h.clone())
            .max_kept_tasks(3 * page),
    )
    .await;
    let total = 2 * page + 3;
    let mut made = Vec::new();
    for i in 0..total {
        made.push(create(&mut server, &format!("c{i}"), None).await);
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for n in 0.. {
        assert!(n < 10, "tasks/list never ends");
        let p = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let listed = ask(&mut server, &format!("l{n}"), "tasks/list", p)
            .await
            .unwrap();
        let tasks = listed["tasks"].as_array().unwrap();
        assert!(tasks.len() <= page, "a page of {}", tasks.len());
        seen.extend(
            tasks
                .iter()
                .map(|t| t["taskId"].as_str().unwrap().to_owned()),
        );
        match listed.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let mut expected = made.clone();
    expected.sort();
    assert_eq!(seen, expected, "each task once, in order");
    for bad in [
        json!({"cursor": "not-ours"}),
        json!({"cursor": 7}),
        json!([1]),
    ] {
        let e = ask(&mut server, "lb", "tasks/list", bad.clone())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{bad}");
    }
}
