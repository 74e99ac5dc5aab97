//! `input_required` rounds and the re-send after an expired HTTP session.

use super::*;

#[test]
fn input_required_round_retries_with_new_id_responses_and_exact_state() {
    let now = Instant::now();
    let mut s = modern(now);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "login", "arguments": {"a": 1}}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let first = sent(&mut s).remove(0);
    let state = "eyJ4IjoxfQ== opaque \u{1F600}";
    reply(
        &mut s,
        id_of(&first),
        json!({
            "resultType": "input_required",
            "inputRequests": {"gh": {"method": "elicitation/create", "params": {"message": "user?", "requestedSchema": {"type": "object"}}}},
            "requestState": state
        }),
        now,
    );
    let evs = events(&mut s);
    let Some(Event::InputRequired { call, requests }) = evs.first() else {
        panic!("{evs:?}")
    };
    assert_eq!(*call, CallId(1));
    assert_eq!(requests[0].0, "gh");
    assert_eq!(requests[0].1.method, "elicitation/create");
    let mut responses = mcp_proto::schema::InputResponses::new();
    responses.insert(
        "gh".into(),
        json!({"action": "accept", "content": {"name": "octocat"}}),
    );
    s.provide_input(CallId(1), responses, now);
    let retry = sent(&mut s).remove(0);
    assert_ne!(retry["id"], first["id"], "a retry is a new request");
    assert_eq!(retry["params"]["name"], "login");
    assert_eq!(retry["params"]["arguments"], json!({"a": 1}));
    assert_eq!(retry["params"]["requestState"], state);
    assert_eq!(
        retry["params"]["inputResponses"]["gh"]["content"]["name"],
        "octocat"
    );
    assert_eq!(
        retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    reply(
        &mut s,
        id_of(&retry),
        json!({"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}),
        now,
    );
    let done = completed(&events(&mut s));
    assert_eq!(done[0].0, CallId(1));
    assert_eq!(done[0].1.as_ref().unwrap()["content"][0]["text"], "ok");
}

#[test]
fn input_required_without_requests_retries_at_once_and_rounds_are_bounded() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        max_input_rounds: 2,
        ..config()
    });
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply(&mut s, id_of(&probe), discover_result(), now);
    events(&mut s);
    s.request(
        CallId(1),
        "resources/read",
        Some(raw(json!({"uri": "x:/y"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let mut msg = sent(&mut s).remove(0);
    for round in 1..=3 {
        reply(
            &mut s,
            id_of(&msg),
            json!({"resultType": "input_required", "requestState": format!("s{round}")}),
            now,
        );
        if round <= 2 {
            msg = sent(&mut s).remove(0);
            assert_eq!(msg["params"]["requestState"], format!("s{round}"));
            assert!(msg["params"].get("inputResponses").is_none());
            assert!(events(&mut s).is_empty());
        }
    }
    let done = completed(&events(&mut s));
    assert!(
        done[0].1.as_ref().unwrap_err().contains("asked for input"),
        "{done:?}"
    );
}

#[test]
fn session_expiry_reinitializes_once_and_resends() {
    let now = Instant::now();
    let (mut s, reinit) = expired_call(now, now);
    assert!(
        events(&mut s).is_empty(),
        "the caller does not see the expiry"
    );
    reply(&mut s, id_of(&reinit), init_result("2025-11-25"), now);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/initialized");
    assert_eq!(out[1]["method"], "tools/call");
    assert_eq!(out[1]["params"], json!({"name": "t"}));
    // A second expiry for the same call is surfaced.
    let expired = TransportError::new(TransportErrorKind::SessionExpired, "HTTP 404");
    s.handle_transport_error(expired.clone(), now);
    s.handle_transport_error(expired.with_request(id_of(&out[1])), now);
    let done = completed(&events(&mut s));
    assert!(
        done[0].1.as_ref().unwrap_err().contains("session expired"),
        "{done:?}"
    );
}

/// A legacy session with `resend_on_session_expiry`, ready at `now`, and
/// the first `tools/call` (2 s timeout) sent at `now` then expired at `at`:
/// returns the session and the re-initialize request it sent.
fn expired_call(now: Instant, at: Instant) -> (Session, Value) {
    let mut s = Session::new(SessionConfig {
        resend_on_session_expiry: true,
        version: VersionChoice::Era(Era::Legacy),
        request_timeout: Duration::from_secs(2),
        ..config()
    });
    s.start(now);
    let init = sent(&mut s).remove(0);
    reply(&mut s, id_of(&init), init_result("2025-11-25"), now);
    sent(&mut s);
    events(&mut s);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "t"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    // The transport reports the loss first, then the call it did not send.
    let expired = TransportError::new(TransportErrorKind::SessionExpired, "HTTP 404");
    s.handle_transport_error(expired.clone(), at);
    s.handle_transport_error(expired.with_request(id_of(&call)), at);
    let reinit = sent(&mut s).remove(0);
    assert_eq!(reinit["method"], "initialize");
    (s, reinit)
}

#[test]
fn a_call_resent_after_session_expiry_keeps_its_deadline() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    let (mut s, reinit) = expired_call(now, now + ms(1500));
    reply(
        &mut s,
        id_of(&reinit),
        init_result("2025-11-25"),
        now + ms(1800),
    );
    let out = sent(&mut s);
    assert_eq!(out[1]["method"], "tools/call");
    // The caller asked for 2 s at `now`: the re-send does not start it again.
    assert_eq!(s.poll_timeout(), Some(now + ms(2000)));
    s.handle_timeout(now + ms(2000));
    let done = completed(&events(&mut s));
    assert_eq!(done.len(), 1, "{done:?}");
    assert!(
        done[0]
            .1
            .as_ref()
            .unwrap_err()
            .contains("timed out after 2s"),
        "{done:?}"
    );
}

#[test]
fn calls_waiting_for_a_new_session_time_out_on_their_own_deadline() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    // The new `initialize` is never answered (its own timeout is 60 s).
    let (mut s, _reinit) = expired_call(now, now + ms(100));
    // A call made while the session restarts waits in the queue.
    s.request(
        CallId(2),
        "tools/list",
        None,
        CallOptions::new(),
        now + ms(500),
    )
    .unwrap();
    assert!(sent(&mut s).is_empty(), "queued until the session is ready");
    assert_eq!(s.poll_timeout(), Some(now + ms(2000)));
    s.handle_timeout(now + ms(2000));
    let done = completed(&events(&mut s));
    assert_eq!(done.iter().map(|d| d.0).collect::<Vec<_>>(), [CallId(1)]);
    assert!(
        done[0]
            .1
            .as_ref()
            .unwrap_err()
            .contains("timed out after 2s"),
        "{done:?}"
    );
    assert!(
        sent(&mut s).is_empty(),
        "a call never re-sent needs no cancel"
    );
    assert_eq!(s.poll_timeout(), Some(now + ms(2500)));
    s.handle_timeout(now + ms(2500));
    let done = completed(&events(&mut s));
    assert_eq!(done.iter().map(|d| d.0).collect::<Vec<_>>(), [CallId(2)]);
    assert!(!s.is_closed(), "the handshake still has time");
}
