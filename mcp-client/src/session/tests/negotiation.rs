//! The probe, the `initialize` fallback, version choice.

use super::*;

#[test]
fn probe_success_negotiates_modern_and_requests_carry_meta() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let mut hints = Vec::new();
    let mut msgs = Vec::new();
    while let Some(t) = s.poll_transmit() {
        match t {
            Transmit::ProtocolVersion(v) => hints.push(v),
            Transmit::Message(m) => {
                msgs.push(serde_json::from_slice::<Value>(&m.to_vec()).unwrap())
            }
        }
    }
    assert_eq!(
        hints,
        vec![ProtocolVersion::V2026_07_28],
        "transport told the version before the probe"
    );
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["method"], "server/discover");
    assert_eq!(
        msgs[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        msgs[0]["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
        "test-client"
    );
    assert!(msgs[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object());

    reply(&mut s, id_of(&msgs[0]), discover_result(), now);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    let info = s.server().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V2026_07_28);
    assert_eq!(info.implementation.name, "srv");
    assert_eq!(info.instructions.as_deref(), Some("be nice"));

    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "echo", "arguments": {"x": 1}}))),
        CallOptions::new().progress(true),
        now,
    )
    .unwrap();
    let out = sent(&mut s);
    let call = out.iter().find(|m| m["method"] == "tools/call").unwrap();
    assert_eq!(call["params"]["name"], "echo");
    assert_eq!(call["params"]["arguments"], json!({"x": 1}));
    let meta = &call["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["progressToken"], 1,
        "the progress token is derived from the call id"
    );
    reply(
        &mut s,
        id_of(call),
        json!({"resultType": "complete", "content": []}),
        now,
    );
    let done = completed(&events(&mut s));
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, CallId(1));
    assert!(done[0].1.is_ok());
}

#[test]
fn any_probe_error_falls_back_to_initialize_and_queued_requests_wait() {
    for code in [-32601, -32602, -32600, -32603, -1] {
        let now = Instant::now();
        let mut s = Session::new(config());
        s.start(now);
        // A request made during negotiation waits.
        s.request(CallId(7), "tools/list", None, CallOptions::new(), now)
            .unwrap();
        let out = sent(&mut s);
        assert_eq!(out.len(), 1, "only the probe goes out before negotiation");
        reply_err(&mut s, id_of(&out[0]), code, "nope", None, now);
        let out = sent(&mut s);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["method"], "initialize");
        assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");
        assert!(out[0]["params"].get("_meta").is_none());
        reply(&mut s, id_of(&out[0]), init_result("2025-06-18"), now);
        let out = sent(&mut s);
        assert_eq!(out[0]["method"], "notifications/initialized");
        assert_eq!(out[1]["method"], "tools/list");
        assert!(
            out[1].get("params").is_none(),
            "legacy requests carry no _meta"
        );
        assert_eq!(
            s.server().unwrap().protocol_version,
            ProtocolVersion::V2025_06_18
        );
    }
}

#[test]
fn probe_without_answer_falls_back_after_probe_timeout() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    assert_eq!(s.poll_timeout(), Some(now + Duration::from_secs(5)));
    s.handle_timeout(now + Duration::from_secs(4));
    assert!(sent(&mut s).is_empty(), "not yet");
    s.handle_timeout(now + Duration::from_secs(5));
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "initialize");
    // A legacy server answers initialize: ready in the legacy era, and a
    // late probe answer after that is ignored.
    reply(
        &mut s,
        id_of(&out[0]),
        init_result("2025-11-25"),
        now + Duration::from_secs(6),
    );
    assert_eq!(sent(&mut s)[0]["method"], "notifications/initialized");
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    reply(
        &mut s,
        id_of(&probe),
        discover_result(),
        now + Duration::from_secs(7),
    );
    assert!(events(&mut s).is_empty());
    assert_eq!(s.server().unwrap().era(), Era::Legacy);
}

/// The race found under load: a slow modern server (the Python SDK on a
/// busy machine) answers `server/discover` after the probe timeout, when
/// `initialize` is already on its way, then refuses `initialize` with
/// -32022 because the connection now serves 2026-07-28. The late answer
/// counts; the refusal that follows is dropped.
#[test]
fn a_late_discover_answer_wins_over_the_pending_fallback() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    s.handle_timeout(now + Duration::from_secs(5));
    let init = sent(&mut s).remove(0);
    assert_eq!(init["method"], "initialize");
    let t = now + Duration::from_secs(6);
    reply(&mut s, id_of(&probe), discover_result(), t);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    assert_eq!(
        s.server().unwrap().protocol_version,
        ProtocolVersion::V2026_07_28
    );
    assert!(matches!(s.learned_era(), Some(EraHint::Modern { .. })));
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "tools/list", "the queued call goes out");
    assert!(out[0]["params"]["_meta"].is_object(), "in the modern era");
    reply_err(
        &mut s,
        id_of(&init),
        -32022,
        "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
        Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})),
        t,
    );
    assert!(events(&mut s).is_empty(), "the refusal is dropped");
    assert!(!s.is_closed());
    assert_eq!(s.in_flight(), 1, "only tools/list is pending");
}

/// The same race when the refusal comes first (an HTTP server answers the
/// two POSTs in any order): -32022 naming a modern revision we speak sends
/// the probe again, once, instead of failing the connection.
#[test]
fn a_modern_refusal_of_the_fallback_initialize_probes_again_once() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    sent(&mut s);
    s.handle_timeout(now + Duration::from_secs(5));
    let init = sent(&mut s).remove(0);
    let refuse = |s: &mut Session, id| {
        reply_err(
            s,
            id,
            -32022,
            "connection is serving the 2026-07-28 protocol",
            Some(json!({"supported": ["2026-07-28"]})),
            now + Duration::from_secs(6),
        )
    };
    refuse(&mut s, id_of(&init));
    let probe = sent(&mut s).remove(0);
    assert_eq!(probe["method"], "server/discover");
    assert_eq!(
        probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(!s.is_closed());
    // Once: if that probe times out too and initialize is refused again, the
    // handshake fails with the server's words.
    s.handle_timeout(now + Duration::from_secs(12));
    let init = sent(&mut s).remove(0);
    assert_eq!(init["method"], "initialize");
    refuse(&mut s, id_of(&init));
    assert!(s.is_closed());
}

#[test]
fn transport_error_scoped_to_probe_falls_back() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    s.handle_transport_error(
        TransportError::new(
            TransportErrorKind::Protocol,
            "HTTP 400 without a JSON-RPC body",
        )
        .with_request(id_of(&probe)),
        now,
    );
    assert_eq!(sent(&mut s)[0]["method"], "initialize");
}

#[test]
fn unauthorized_probe_closes_without_a_second_handshake_request() {
    // Credentials refused are refused in every revision: an `initialize`
    // would only run the authorization (a browser login) again.
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    s.handle_transport_error(
        TransportError::new(TransportErrorKind::Unauthorized, "authorization failed")
            .with_request(id_of(&probe)),
        now,
    );
    assert!(sent(&mut s).is_empty(), "no initialize");
    let Some(Event::Closed(CloseReason::Transport(e))) = events(&mut s).pop() else {
        panic!("not closed by the transport error")
    };
    assert_eq!(e.kind(), TransportErrorKind::Unauthorized);
    assert!(s.is_closed());
}

#[test]
fn unsupported_version_error_picks_from_supported_list() {
    let mut s = probe_refused(
        -32022,
        "Unsupported protocol version",
        json!({"supported": ["2025-11-25", "1999-01-01"], "requested": "2026-07-28"}),
    );
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "initialize");
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");
}

#[test]
fn unsupported_version_with_nothing_in_common_is_a_typed_error() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let probe = sent(&mut s).remove(0);
    reply_err(
        &mut s,
        id_of(&probe),
        -32022,
        "Unsupported",
        Some(json!({"supported": ["2099-01-01"], "requested": "2026-07-28"})),
        now,
    );
    let evs = events(&mut s);
    let done = completed(&evs);
    assert_eq!(done.len(), 1);
    let msg = done[0].1.as_ref().unwrap_err();
    assert!(msg.contains("2099-01-01"), "{msg}");
    assert_unsupported(&evs, "2026-07-28", &["2099-01-01"]);
}

#[test]
fn legacy_version_the_client_does_not_know_closes() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Era(Era::Legacy),
        ..config()
    });
    s.start(now);
    let init = sent(&mut s).remove(0);
    assert_eq!(init["method"], "initialize", "legacy era skips the probe");
    reply(&mut s, id_of(&init), init_result("2099-01-01"), now);
    assert!(sent(&mut s).is_empty(), "no initialized notification");
    let evs = events(&mut s);
    assert_unsupported(&evs, "2025-11-25", &["2099-01-01"]);
}

#[test]
fn pinned_legacy_version_must_match() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Pinned(ProtocolVersion::V2025_03_26),
        ..config()
    });
    s.start(now);
    let init = sent(&mut s).remove(0);
    assert_eq!(init["params"]["protocolVersion"], "2025-03-26");
    reply(&mut s, id_of(&init), init_result("2025-06-18"), now);
    let evs = events(&mut s);
    assert_unsupported(&evs, "2025-03-26", &["2025-06-18"]);
}

#[test]
fn pinned_modern_against_legacy_server_fails_clearly() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Pinned(ProtocolVersion::V2026_07_28),
        ..config()
    });
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply_err(&mut s, id_of(&probe), -32601, "Method not found", None, now);
    let evs = events(&mut s);
    let Some(Event::Closed(CloseReason::Handshake(e @ HandshakeError::NotModern { .. }))) =
        evs.last()
    else {
        panic!("{evs:?}")
    };
    assert!(e.to_string().contains("2026-07-28"), "{e}");
    assert_eq!(e.rpc().map(|r| r.code), Some(ErrorCode::METHOD_NOT_FOUND));
}

#[test]
fn the_transport_learns_the_legacy_version_before_initialized_goes_out() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply_err(&mut s, id_of(&probe), -32601, "nope", None, now);
    let init = sent(&mut s).remove(0);
    reply(&mut s, id_of(&init), init_result("2025-06-18"), now);
    let mut order = Vec::new();
    while let Some(t) = s.poll_transmit() {
        order.push(match t {
            Transmit::ProtocolVersion(v) => v.to_string(),
            Transmit::Message(m) => m.method().unwrap_or("?").to_owned(),
        });
    }
    assert_eq!(
        order[..2],
        ["2025-06-18", "notifications/initialized"],
        "{order:?}"
    );
}

/// SEP-2575 (the suite's `request-metadata`): a server that rejects the
/// first attempt and names the pinned revision among those it supports gets
/// one more probe with it; a second rejection ends the handshake.
#[test]
fn pinned_modern_retries_once_when_the_rejection_lists_it() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Pinned(ProtocolVersion::V2026_07_28),
        ..config()
    });
    s.start(now);
    let reject = |s: &mut Session, probe: &Value| {
        reply_err(
            s,
            id_of(probe),
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
            now,
        )
    };
    let probe = sent(&mut s).remove(0);
    reject(&mut s, &probe);
    let again = sent(&mut s).remove(0);
    assert_eq!(again["method"], "server/discover");
    assert_ne!(again["id"], probe["id"]);
    reject(&mut s, &again);
    assert!(sent(&mut s).is_empty(), "no third probe");
    assert!(matches!(
        events(&mut s).last(),
        Some(Event::Closed(CloseReason::Handshake(
            HandshakeError::UnsupportedVersion { .. }
        )))
    ));
}

/// With a pinned modern revision there is no legacy fallback to detect, so
/// the probe waits the handshake timeout, not the 5 s probe timeout (an
/// OAuth flow run for the probe on a loaded machine takes longer).
#[test]
fn pinned_modern_probe_waits_the_handshake_timeout() {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Pinned(ProtocolVersion::V2026_07_28),
        ..config()
    });
    s.start(now);
    let probe = sent(&mut s).remove(0);
    s.handle_timeout(now + Duration::from_secs(8));
    assert!(events(&mut s).is_empty(), "still waiting after 8 s");
    reply(
        &mut s,
        id_of(&probe),
        discover_result(),
        now + Duration::from_secs(8),
    );
    assert!(events(&mut s).iter().any(|e| matches!(e, Event::Ready)));
}

/// A modern refusal of the probe other than -32022 ends the handshake with
/// the server's error, typed, at the end of the source chain.
#[test]
fn a_modern_refusal_of_the_probe_keeps_the_servers_error() {
    let mut s = probe_refused(
        -32021,
        "sampling required",
        json!({"requiredCapabilities": ["sampling"]}),
    );
    assert!(sent(&mut s).is_empty(), "no fallback initialize");
    let Some(Event::Closed(reason)) = events(&mut s).pop() else {
        panic!("not closed")
    };
    let CloseReason::Handshake(HandshakeError::Rejected { method, error }) = &reason else {
        panic!("{reason:?}")
    };
    assert_eq!(*method, "server/discover");
    assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    let err = ClientError::Closed(reason.clone());
    assert_eq!(err.handshake().and_then(HandshakeError::rpc), Some(error));
    let mut chain = std::error::Error::source(&err);
    let mut last = None;
    while let Some(c) = chain {
        last = Some(c);
        chain = c.source();
    }
    let root = last.and_then(|c| c.downcast_ref::<ErrorObject>());
    assert_eq!(root, Some(error), "the chain ends at the server's error");
}

#[test]
fn a_malformed_initialize_result_keeps_serdes_error() {
    let now = Instant::now();
    let mut s = legacy_pinned(now);
    let init = sent(&mut s).remove(0);
    reply(&mut s, id_of(&init), json!({"protocolVersion": 5}), now);
    let Some(Event::Closed(CloseReason::Handshake(e))) = events(&mut s).pop() else {
        panic!("not closed")
    };
    let HandshakeError::InvalidResult { method, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*method, "initialize");
    let serde = std::error::Error::source(&e).and_then(|c| c.downcast_ref::<serde_json::Error>());
    assert!(serde.is_some(), "{e:?}");
}

/// Pinned to the modern era, a probe that times out or fails in the
/// transport means the server does not speak it; the cause is kept.
#[test]
fn a_pinned_modern_probe_that_fails_says_how() {
    let pinned = SessionConfig {
        version: VersionChoice::Pinned(ProtocolVersion::V2026_07_28),
        ..config()
    };
    let now = Instant::now();
    let mut s = Session::new(pinned.clone());
    s.start(now);
    let _probe = sent(&mut s);
    s.handle_timeout(now + pinned.handshake_timeout);
    let Some(Event::Closed(CloseReason::Handshake(e))) = events(&mut s).pop() else {
        panic!("not closed")
    };
    assert!(matches!(&e, HandshakeError::NotModern { .. }), "{e:?}");
    assert!(e.is_timeout(), "{e:?}");

    let mut s = Session::new(pinned);
    s.start(now);
    let probe = sent(&mut s).remove(0);
    s.handle_transport_error(
        TransportError::new(TransportErrorKind::Protocol, "HTTP 405").with_request(id_of(&probe)),
        now,
    );
    let Some(Event::Closed(CloseReason::Handshake(HandshakeError::NotModern { cause }))) =
        events(&mut s).pop()
    else {
        panic!("not closed as not modern")
    };
    let HandshakeError::Transport { method, error } = &*cause else {
        panic!("{cause:?}")
    };
    assert_eq!(*method, "server/discover");
    assert_eq!(error.kind(), TransportErrorKind::Protocol);
}

fn legacy_pinned(now: Instant) -> Session {
    let mut s = Session::new(SessionConfig {
        version: VersionChoice::Pinned(ProtocolVersion::V2025_11_25),
        ..config()
    });
    s.start(now);
    s
}

/// The session closed because the server named no revision in common.
fn assert_unsupported(evs: &[Event], want_requested: &str, want_supported: &[&str]) {
    let Some(Event::Closed(CloseReason::Handshake(HandshakeError::UnsupportedVersion {
        requested,
        supported,
    }))) = evs.last()
    else {
        panic!("{evs:?}")
    };
    assert_eq!(requested, want_requested);
    assert_eq!(supported, want_supported);
}

/// A session (auto) whose probe the server refused with this error.
fn probe_refused(code: i32, message: &str, data: Value) -> Session {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply_err(&mut s, id_of(&probe), code, message, Some(data), now);
    s
}
