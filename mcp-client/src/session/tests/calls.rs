//! Timeouts, progress, cancellation, responses, server requests and
//! notifications, closing.

use super::*;

#[test]
fn timeout_cancels_on_the_server_and_ignores_the_late_response() {
    let now = Instant::now();
    let mut s = legacy(now);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "slow"}))),
        CallOptions::new().timeout(Duration::from_secs(2)),
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    assert_eq!(s.poll_timeout(), Some(now + Duration::from_secs(2)));
    s.handle_timeout(now + Duration::from_secs(2));
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/cancelled");
    assert_eq!(out[0]["params"]["requestId"], call["id"]);
    let done = completed(&events(&mut s));
    assert!(done[0].1.as_ref().unwrap_err().contains("timed out"));
    reply(
        &mut s,
        id_of(&call),
        json!({"content": []}),
        now + Duration::from_secs(3),
    );
    assert!(events(&mut s).is_empty(), "late response ignored");
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn progress_resets_the_timeout_up_to_the_cap() {
    let now = Instant::now();
    let mut s = legacy(now);
    let opts = CallOptions::new()
        .timeout(Duration::from_secs(10))
        .max_time(Duration::from_secs(25))
        .progress(true);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "slow"}))),
        opts,
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    let token = call["params"]["_meta"]["progressToken"].clone();
    assert_eq!(token, json!(1));
    for (i, t) in [8u64, 16, 24].into_iter().enumerate() {
        let at = now + Duration::from_secs(t);
        s.handle_message(
            Notification::new(
                "notifications/progress",
                Some(raw(json!({"progressToken": token, "progress": i}))),
            )
            .into(),
            at,
        );
        let evs = events(&mut s);
        assert!(
            matches!(
                evs[..],
                [Event::Progress {
                    call: CallId(1),
                    ..
                }]
            ),
            "{evs:?}"
        );
    }
    // The timer may fire at the first deadline (10 s): nothing is due then,
    // and the next one is the reset one, 24+10 = 34, capped at 25.
    assert!(s.poll_timeout() <= Some(now + Duration::from_secs(10)));
    s.handle_timeout(now + Duration::from_secs(10));
    assert!(
        completed(&events(&mut s)).is_empty(),
        "progress kept it alive"
    );
    assert_eq!(s.poll_timeout(), Some(now + Duration::from_secs(25)));
    s.handle_timeout(now + Duration::from_secs(25));
    assert!(
        completed(&events(&mut s))[0]
            .1
            .as_ref()
            .unwrap_err()
            .contains("timed out")
    );
}

#[test]
fn cancel_sends_notification_and_drops_late_response() {
    let now = Instant::now();
    let mut s = modern(now);
    s.request(
        CallId(3),
        "tools/call",
        Some(raw(json!({"name": "x"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    s.cancel(CallId(3), Some("user"));
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/cancelled");
    assert_eq!(out[0]["params"]["requestId"], call["id"]);
    assert_eq!(out[0]["params"]["reason"], "user");
    reply(&mut s, id_of(&call), json!({}), now);
    assert!(events(&mut s).is_empty());
    assert_eq!(s.in_flight(), 0);
}

#[test]
fn initialize_is_never_cancelled() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Era(Era::Legacy),
        ..config()
    });
    s.start(now);
    let _init = sent(&mut s);
    s.handle_timeout(now + Duration::from_secs(61));
    let out = sent(&mut s);
    assert!(
        out.iter().all(|m| m["method"] != "notifications/cancelled"),
        "{out:?}"
    );
    assert!(matches!(
        events(&mut s).last(),
        Some(Event::Closed(CloseReason::Handshake(
            HandshakeError::Timeout {
                method: "initialize",
                ..
            }
        )))
    ));
}

#[test]
fn unknown_duplicate_and_malformed_responses_are_dropped() {
    let now = Instant::now();
    let mut s = legacy(now);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let call = sent(&mut s).remove(0);
    reply(&mut s, RequestId::Number(999), json!({}), now);
    reply(&mut s, RequestId::String("nope".into()), json!({}), now);
    s.handle_message(
        ErrorResponse::new(None, ErrorObject::new(ErrorCode::PARSE_ERROR, "bad")).into(),
        now,
    );
    s.handle_transport_error(
        TransportError::new(TransportErrorKind::Decode, "not json"),
        now,
    );
    assert!(events(&mut s).is_empty());
    reply(&mut s, id_of(&call), json!({"tools": []}), now);
    assert_eq!(completed(&events(&mut s)).len(), 1);
    reply(&mut s, id_of(&call), json!({"tools": []}), now);
    assert!(events(&mut s).is_empty(), "duplicate dropped");
    assert!(!s.is_closed());
}

#[test]
fn rpc_errors_reach_the_caller_with_code_and_data() {
    let now = Instant::now();
    let mut s = legacy(now);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "x"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    reply_err(
        &mut s,
        id_of(&call),
        -32602,
        "tool set changed; list tools again",
        Some(json!({"k": 1})),
        now,
    );
    let evs = events(&mut s);
    let Some(Event::Completed {
        result: Err(ClientError::Rpc(e)),
        ..
    }) = evs.first()
    else {
        panic!("{evs:?}")
    };
    assert!(e.is_tool_set_changed());
    assert_eq!(
        e.data_as::<serde_json::Value>().unwrap().unwrap(),
        json!({"k": 1})
    );
}

#[test]
fn server_ping_is_answered_and_other_requests_surface() {
    let now = Instant::now();
    let mut s = legacy(now);
    s.handle_message(Request::new("p1".into(), "ping", None).into(), now);
    let out = sent(&mut s);
    assert_eq!(out[0], json!({"jsonrpc": "2.0", "id": "p1", "result": {}}));
    s.handle_message(Request::new(5.into(), "roots/list", None).into(), now);
    let evs = events(&mut s);
    assert!(matches!(&evs[..], [Event::ServerRequest(r)] if r.method == "roots/list"));
    s.respond(5.into(), Ok(raw(json!({"roots": []}))));
    assert_eq!(
        sent(&mut s)[0],
        json!({"jsonrpc": "2.0", "id": 5, "result": {"roots": []}})
    );
}

#[test]
fn notifications_keep_server_order() {
    let now = Instant::now();
    let mut s = legacy(now);
    for m in [
        "notifications/message",
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ] {
        s.handle_message(Notification::new(m, None).into(), now);
    }
    let got: Vec<String> = events(&mut s)
        .into_iter()
        .map(|e| match e {
            Event::Notification(n) => n.method.into_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        [
            "notifications/message",
            "notifications/tools/list_changed",
            "notifications/resources/updated"
        ]
    );
}

#[test]
fn close_fails_every_call_with_the_cause() {
    let now = Instant::now();
    let mut s = legacy(now);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    s.request(CallId(2), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    sent(&mut s);
    let cause = TransportError::new(
        TransportErrorKind::Closed,
        "server exited with status 1: fatal: config missing",
    );
    s.handle_transport_error(cause, now);
    let evs = events(&mut s);
    let done = completed(&evs);
    assert_eq!(done.len(), 2);
    for (_, r) in &done {
        assert!(r.as_ref().unwrap_err().contains("fatal: config missing"));
    }
    assert!(matches!(evs.last(), Some(Event::Closed(_))));
    assert!(
        s.request(CallId(3), "tools/list", None, CallOptions::new(), now)
            .is_err()
    );
}

#[test]
fn no_timeout_calls_never_expire() {
    let now = Instant::now();
    let mut s = modern(now);
    s.request(
        CallId(1),
        "subscriptions/listen",
        Some(raw(json!({"notifications": {"toolsListChanged": true}}))),
        CallOptions::new().no_timeout(),
        now,
    )
    .unwrap();
    sent(&mut s);
    // At most the handshake's old deadline is left; once it passed, nothing.
    if let Some(t) = s.poll_timeout() {
        s.handle_timeout(t);
    }
    assert_eq!(s.poll_timeout(), None);
    assert!(completed(&events(&mut s)).is_empty());
}

/// The transport dropped the frame answering a call (a 64 MiB line over the
/// limit): that call fails at once with what happened, and nothing else.
#[test]
fn a_dropped_answer_fails_its_call_at_once() {
    let now = Instant::now();
    for mut s in [modern(now), legacy(now)] {
        s.request(CallId(1), "tools/call", None, CallOptions::new(), now)
            .unwrap();
        s.request(CallId(2), "tools/list", None, CallOptions::new(), now)
            .unwrap();
        let out = sent(&mut s);
        let err = TransportError::new(
            TransportErrorKind::Decode,
            "64.0 MiB, over the 16 MiB limit; raise it with `max_message_size`",
        )
        .with_request(id_of(&out[0]));
        s.handle_transport_error(err, now);
        let got = completed(&events(&mut s));
        assert_eq!(
            got,
            [(
                CallId(1),
                Err("the response to tools/call was dropped: undecodable message: 64.0 MiB, over the 16 MiB limit; raise it with `max_message_size`".into())
            )]
        );
        assert_eq!(s.in_flight(), 1, "not left pending");
        assert!(!s.is_closed());
        reply(&mut s, id_of(&out[1]), json!({"tools": []}), now);
        assert_eq!(completed(&events(&mut s)).len(), 1);
    }
}

/// A dropped response whose id could not be learned fails every call
/// waiting for an answer (any could have been it); the session goes on.
#[test]
fn a_dropped_answer_of_unknown_id_fails_every_waiting_call() {
    let now = Instant::now();
    let mut s = modern(now);
    for c in 1..=3 {
        s.request(CallId(c), "tools/call", None, CallOptions::new(), now)
            .unwrap();
    }
    sent(&mut s);
    let err = TransportError::new(TransportErrorKind::Decode, "64.0 MiB").answering_unknown();
    assert!(!err.is_terminal());
    s.handle_transport_error(err, now);
    let got = completed(&events(&mut s));
    assert_eq!(got.iter().map(|(c, _)| c.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(
        got.iter()
            .all(|(_, r)| r.as_ref().is_err_and(|e| e.contains("was dropped")))
    );
    assert_eq!(s.in_flight(), 0);
    assert!(!s.is_closed());
    s.request(CallId(4), "ping", None, CallOptions::new(), now)
        .unwrap();
    let out = sent(&mut s);
    reply(&mut s, id_of(&out[0]), json!({}), now);
    assert_eq!(completed(&events(&mut s)), [(CallId(4), Ok(json!({})))]);
}

/// An answer that completes a call does not read the clock (the driver
/// passes its clock function: one clock read less per call); answers that
/// need the time (the handshake's, a progress notification) do.
#[test]
fn an_answer_completing_a_call_reads_no_clock() {
    let now = Instant::now();
    let read = std::cell::Cell::new(0);
    let clock = || {
        read.set(read.get() + 1);
        now
    };
    let mut s = Session::new(config());
    s.start(now);
    let out = sent(&mut s);
    s.handle_message(
        ErrorResponse::new(
            Some(id_of(&out[0])),
            ErrorObject::new(ErrorCode(-32601), "Method not found"),
        )
        .into(),
        clock,
    );
    let out = sent(&mut s);
    s.handle_message(
        Response::new(id_of(&out[0]), raw(init_result("2025-11-25"))).into(),
        clock,
    );
    assert_eq!(read.get(), 2, "the handshake's answers read the clock");
    s.request(CallId(1), "tools/call", None, CallOptions::new(), now)
        .unwrap();
    let call = sent(&mut s).pop().unwrap();
    s.handle_message(
        Response::new(id_of(&call), raw(json!({"content": []}))).into(),
        clock,
    );
    assert_eq!(completed(&events(&mut s)).len(), 1);
    assert_eq!(read.get(), 2, "the call's answer read the clock");
}
