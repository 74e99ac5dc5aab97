//! 2026-07-28 task handles (the `io.modelcontextprotocol/tasks` extension):
//! which answers the session hands to its owner as
//! [`Event::TaskCreated`], and the extension's declaration.

use super::*;

fn handle() -> Value {
    json!({"resultType": "task", "taskId": "t1", "status": "working",
           "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z",
           "ttlMs": 60000, "pollIntervalMs": 500})
}

/// Sends `method` as call 1 and answers it with `result`.
fn answered(s: &mut Session, method: &'static str, result: Value, now: Instant) -> Vec<Event> {
    s.request(
        CallId(1),
        method,
        Some(raw(json!({"name": "research", "uri": "x://y"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let req = sent(s).remove(0);
    reply(s, id_of(&req), result, now);
    events(s)
}

#[test]
fn a_modern_tool_call_answered_with_a_task_handle_is_handed_over_as_created() {
    let now = Instant::now();
    let mut s = modern(now);
    let evs = answered(&mut s, "tools/call", handle(), now);
    let [Event::TaskCreated { call, handle: h }] = &evs[..] else {
        panic!("{evs:?}")
    };
    assert_eq!(*call, CallId(1));
    assert_eq!(serde_json::from_str::<Value>(h.get()).unwrap(), handle());
    // The call is over for the session.
    assert_eq!(s.in_flight(), 0);
}

#[test]
fn results_that_only_mention_task_and_other_methods_complete_as_results() {
    let now = Instant::now();
    // "task" as a plain value, and as an escaped quote inside text.
    for result in [
        json!({"resultType": "complete", "content": [], "structuredContent": {"kind": "task"}}),
        json!({"resultType": "complete", "content": [{"type": "text", "text": "a \"task\""}]}),
        json!({"resultType": "complete", "content": [], "structuredContent": {"resultType": "task"}}),
    ] {
        let mut s = modern(now);
        let evs = answered(&mut s, "tools/call", result.clone(), now);
        let done = completed(&evs);
        assert_eq!(done.len(), 1, "{evs:?}");
        assert_eq!(done[0].1, Ok(result));
    }
    // The extension covers `tools/call` only: elsewhere a handle is the
    // method's (invalid) result, for its decoder to refuse.
    for method in ["prompts/get", "resources/read", "tools/list"] {
        let mut s = modern(now);
        let evs = answered(&mut s, method, handle(), now);
        assert_eq!(completed(&evs).len(), 1, "{method}: {evs:?}");
    }
}

#[test]
fn without_the_extension_or_in_the_legacy_era_a_handle_is_not_followed() {
    let now = Instant::now();
    let mut c = config();
    c.tasks_extension = false;
    let mut s = Session::new(c);
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply(&mut s, id_of(&probe), discover_result(), now);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    let evs = answered(&mut s, "tools/call", handle(), now);
    assert_eq!(completed(&evs).len(), 1, "{evs:?}");

    let mut s = legacy(now);
    let evs = answered(&mut s, "tools/call", handle(), now);
    assert_eq!(completed(&evs).len(), 1, "{evs:?}");
}

#[test]
fn the_extension_is_declared_in_modern_requests_only_when_on() {
    let now = Instant::now();
    let mut s = modern(now);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let req = sent(&mut s).remove(0);
    assert_eq!(
        req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    let mut c = config();
    c.tasks_extension = false;
    let mut s = Session::new(c);
    s.start(now);
    let probe = sent(&mut s).remove(0);
    assert!(
        probe["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            .get("extensions")
            .is_none(),
        "{probe}"
    );
    // A legacy `initialize` declares no extension (2025-11-25 has none).
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply_err(&mut s, id_of(&probe), -32601, "no", None, now);
    let init = sent(&mut s).remove(0);
    assert_eq!(init["method"], "initialize");
    assert!(
        init["params"]["capabilities"].get("extensions").is_none(),
        "{init}"
    );
}
