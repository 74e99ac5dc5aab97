//! A new session when the server ended the one in use (HTTP 404): at once,
//! whichever message found the loss; calls made meanwhile wait; what the
//! server did not process is re-sent; a server that ends every session is
//! given up on.

use super::*;

fn lost() -> TransportError {
    TransportError::new(TransportErrorKind::SessionExpired, "HTTP 404")
}

/// A legacy session (2025-11-25, chosen, not detected) with the re-send on.
fn ready(now: Instant) -> Session {
    let mut s = Session::new(SessionConfig {
        resend_on_session_expiry: true,
        version: VersionChoice::Era(Era::Legacy),
        request_timeout: Duration::from_secs(10),
        ..config()
    });
    s.start(now);
    let init = sent(&mut s).remove(0);
    reply(&mut s, id_of(&init), init_result("2025-11-25"), now);
    sent(&mut s);
    events(&mut s);
    s
}

/// Answers the renewal's `initialize` (the only message sent), returns what
/// the session sent then.
fn answer_renewal(s: &mut Session, now: Instant) -> Vec<Value> {
    let out = sent(s);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "initialize");
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");
    reply(s, id_of(&out[0]), init_result("2025-11-25"), now);
    sent(s)
}

#[test]
fn a_loss_starts_a_new_session_before_anything_else() {
    let now = Instant::now();
    let mut s = ready(now);
    // The 404 came to `notifications/initialized`: no call is involved.
    s.handle_transport_error(lost(), now);
    assert!(!s.is_closed());
    assert!(
        s.server().is_none(),
        "no session in use until the new one is ready"
    );
    // A call made meanwhile waits for the new session.
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let out = answer_renewal(&mut s, now);
    let methods: Vec<_> = out.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(methods, ["notifications/initialized", "tools/list"]);
    assert!(events(&mut s).iter().any(|e| matches!(e, Event::Ready)));
}

#[test]
fn a_loss_during_the_renewal_handshake_is_not_a_second_renewal() {
    let now = Instant::now();
    let mut s = ready(now);
    s.handle_transport_error(lost(), now);
    let init = sent(&mut s);
    assert_eq!(init.len(), 1);
    s.handle_transport_error(lost(), now);
    assert!(sent(&mut s).is_empty(), "one initialize per loss");
}

#[test]
fn a_call_the_server_did_not_process_is_re_sent_in_the_new_session() {
    let now = Instant::now();
    let mut s = ready(now);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "t"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    s.handle_transport_error(lost(), now);
    s.handle_transport_error(lost().with_request(id_of(&call)), now);
    assert!(events(&mut s).is_empty(), "the caller does not see it");
    let out = answer_renewal(&mut s, now);
    assert_eq!(out[1]["method"], "tools/call");
    assert_eq!(out[1]["params"], json!({"name": "t"}));
    reply(&mut s, id_of(&out[1]), json!({"content": []}), now);
    assert_eq!(completed(&events(&mut s))[0].1, Ok(json!({"content": []})));
}

/// A 404 that arrives after the new session is ready (the call was sent in
/// the old one just before the loss): the call goes at once, in the new
/// session, and no other session is started.
#[test]
fn a_late_404_of_the_old_session_re_sends_without_another_renewal() {
    let now = Instant::now();
    let mut s = ready(now);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let call = sent(&mut s).remove(0);
    s.handle_transport_error(lost(), now);
    answer_renewal(&mut s, now);
    s.handle_transport_error(lost().with_request(id_of(&call)), now);
    let out = sent(&mut s);
    let methods: Vec<_> = out.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(methods, ["tools/list"]);
}

#[test]
fn without_kept_params_the_call_fails_but_the_session_is_renewed() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Era(Era::Legacy),
        ..config()
    });
    s.start(now);
    let init = sent(&mut s).remove(0);
    reply(&mut s, id_of(&init), init_result("2025-11-25"), now);
    sent(&mut s);
    events(&mut s);
    s.request(CallId(1), "tools/call", None, CallOptions::new(), now)
        .unwrap();
    let call = sent(&mut s).remove(0);
    s.handle_transport_error(lost(), now);
    s.handle_transport_error(lost().with_request(id_of(&call)), now);
    let done = completed(&events(&mut s));
    assert!(
        done[0].1.as_ref().unwrap_err().contains("session expired"),
        "{done:?}"
    );
    answer_renewal(&mut s, now);
    assert!(!s.is_closed());
}

/// A server that ends every session it starts (404 to each
/// `notifications/initialized`): three new sessions, then the connection
/// closes with a typed reason, and the calls waiting fail with it.
#[test]
fn a_server_that_ends_every_session_is_given_up_on() {
    let now = Instant::now();
    let mut s = ready(now);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    sent(&mut s);
    for n in 1..=DEFAULT_MAX_SESSION_RENEWALS {
        s.handle_transport_error(lost(), now);
        assert!(!s.is_closed(), "after {n} losses");
        answer_renewal(&mut s, now);
    }
    s.handle_transport_error(lost(), now);
    assert!(s.is_closed());
    assert!(sent(&mut s).is_empty(), "no fourth initialize");
    let evs = events(&mut s);
    let done = completed(&evs);
    assert_eq!(done.len(), 1);
    let why = done[0].1.as_ref().unwrap_err();
    assert!(why.contains("each of the 3 new ones"), "{why}");
    assert!(evs.iter().any(|e| matches!(
        e,
        Event::Closed(CloseReason::SessionsLost { renewals: 3, .. })
    )));
}

#[test]
fn an_answered_call_starts_the_count_again() {
    let now = Instant::now();
    let mut s = ready(now);
    for _ in 0..10 {
        s.handle_transport_error(lost(), now);
        answer_renewal(&mut s, now);
        s.request(CallId(1), "ping", None, CallOptions::new(), now)
            .unwrap();
        let ping = sent(&mut s).remove(0);
        reply(&mut s, id_of(&ping), json!({}), now);
        events(&mut s);
    }
    assert!(!s.is_closed());
}

#[test]
fn the_modern_era_has_no_session_to_renew() {
    let now = Instant::now();
    let mut s = modern(now);
    s.handle_transport_error(lost(), now);
    assert!(!s.is_closed());
    assert!(sent(&mut s).is_empty());
}

/// A probe the server refused for now (429/503, past the transport's
/// retries) says nothing about its era: no fallback to `initialize`.
#[test]
fn a_throttled_probe_does_not_fall_back_to_legacy() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    let e =
        TransportError::new(TransportErrorKind::Throttled, "HTTP 429").with_request(id_of(&probe));
    s.handle_transport_error(e, now);
    assert!(s.is_closed());
    assert!(sent(&mut s).is_empty(), "no initialize");
}

#[test]
fn the_deadline_of_a_sent_request_is_known() {
    let now = Instant::now();
    let mut s = ready(now);
    s.request(
        CallId(1),
        "tools/call",
        None,
        CallOptions::new().timeout(Duration::from_secs(3)),
        now,
    )
    .unwrap();
    let call = sent(&mut s).remove(0);
    assert_eq!(
        s.request_deadline(&id_of(&call)),
        Some(now + Duration::from_secs(3))
    );
    assert_eq!(s.request_deadline(&RequestId::Number(999)), None);
}
