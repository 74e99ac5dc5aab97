//! Remembered eras ([`EraHint`]).

use super::*;

/// What a session that negotiated the modern era through a probe whose
/// answer is fresh for `ttl_ms` remembers.
fn learned_modern(ttl_ms: u64, now: Instant) -> EraHint {
    let mut s = Session::new(config());
    s.start(now);
    let out = sent(&mut s);
    let mut d = discover_result();
    d["ttlMs"] = json!(ttl_ms);
    reply(&mut s, id_of(&out[0]), d, now);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    s.learned_era().cloned().unwrap()
}

fn methods(out: &[Value]) -> Vec<&str> {
    out.iter().filter_map(|m| m["method"].as_str()).collect()
}

#[test]
fn detection_is_remembered_but_a_chosen_legacy_era_is_not() {
    let now = Instant::now();
    let s = legacy(now);
    assert!(matches!(
        s.learned_era(),
        Some(EraHint::Legacy(ProtocolVersion::V2025_11_25))
    ));

    let hint = learned_modern(60_000, now);
    assert_eq!(hint.era(), Era::Modern);
    assert!(hint.is_fresh(now + Duration::from_secs(59)));
    assert!(!hint.is_fresh(now + Duration::from_secs(60)));
    // No ttlMs (or 0): stale at once.
    assert!(!modern(now).learned_era().unwrap().is_fresh(now));

    // An era the caller chose tells nothing about a dual-era server.
    let mut cfg = config();
    cfg.version = VersionChoice::Era(Era::Legacy);
    let mut s = Session::new(cfg);
    s.start(now);
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["initialize"]);
    reply(&mut s, id_of(&out[0]), init_result("2025-11-25"), now);
    // Ready once `notifications/initialized` is flushed.
    assert!(events(&mut s).is_empty());
    assert!(!s.is_ready());
    assert_eq!(methods(&sent(&mut s)), ["notifications/initialized"]);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    assert!(s.is_ready());
    assert!(s.learned_era().is_none());
}

#[test]
fn legacy_hint_skips_the_probe_and_offers_the_remembered_version() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start_with_hint(now, Some(EraHint::Legacy(ProtocolVersion::V2025_06_18)));
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["initialize"], "no server/discover");
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-06-18");
    reply(&mut s, id_of(&out[0]), init_result("2025-06-18"), now);
    assert_eq!(methods(&sent(&mut s)), ["notifications/initialized"]);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    assert_eq!(
        s.server().unwrap().protocol_version,
        ProtocolVersion::V2025_06_18
    );
    assert!(matches!(
        s.learned_era(),
        Some(EraHint::Legacy(ProtocolVersion::V2025_06_18))
    ));
}

#[test]
fn stale_legacy_hint_recovers_by_detecting_the_modern_server_once() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start_with_hint(now, Some(EraHint::Legacy(ProtocolVersion::V2025_11_25)));
    // A request made before the handshake waits for it.
    s.request(CallId(1), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["initialize"]);
    // The server was upgraded to a modern-only one: it rejects initialize.
    reply_err(
        &mut s,
        id_of(&out[0]),
        -32601,
        "initialize is not supported; use 2026-07-28",
        None,
        now,
    );
    assert!(events(&mut s).is_empty(), "not closed, not ready yet");
    assert!(s.learned_era().is_none(), "the wrong hint is forgotten");
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["server/discover"]);
    reply(&mut s, id_of(&out[0]), discover_result(), now);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    assert_eq!(s.server().unwrap().era(), Era::Modern);
    assert_eq!(s.learned_era().unwrap().era(), Era::Modern);
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["tools/list"]);
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
        "the queued request goes out in the detected era"
    );
}

#[test]
fn a_failing_legacy_hint_is_retried_by_detection_only_once() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start_with_hint(now, Some(EraHint::Legacy(ProtocolVersion::V2025_11_25)));
    let out = sent(&mut s);
    reply_err(&mut s, id_of(&out[0]), -32603, "broken", None, now);
    // Detection: the probe fails too, the fallback initialize fails again.
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["server/discover"]);
    reply_err(&mut s, id_of(&out[0]), -32601, "nope", None, now);
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["initialize"]);
    reply_err(&mut s, id_of(&out[0]), -32603, "still broken", None, now);
    assert!(sent(&mut s).is_empty(), "no third attempt");
    let evs = events(&mut s);
    assert!(
        matches!(
            &evs[..],
            [Event::Closed(CloseReason::Handshake(HandshakeError::Rejected { method: "initialize", error }))]
                if error.message == "still broken"
        ),
        "{evs:?}"
    );
}

#[test]
fn fresh_modern_hint_skips_the_probe() {
    let now = Instant::now();
    let hint = learned_modern(60_000, now);
    let later = now + Duration::from_secs(30);
    let mut s = Session::new(config());
    s.start_with_hint(later, Some(hint));
    let mut versions = Vec::new();
    let mut msgs = Vec::new();
    while let Some(t) = s.poll_transmit() {
        match t {
            Transmit::ProtocolVersion(v) => versions.push(v),
            Transmit::Message(m) => msgs.push(m),
        }
    }
    assert!(msgs.is_empty(), "no server/discover: {msgs:?}");
    assert_eq!(versions, [ProtocolVersion::V2026_07_28]);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    let info = s.server().unwrap();
    assert_eq!(info.implementation.name, "srv");
    assert_eq!(
        info.capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    s.request(CallId(1), "tools/list", None, CallOptions::new(), later)
        .unwrap();
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["tools/list"]);
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    // It works: from now on errors are ordinary errors.
    reply(&mut s, id_of(&out[0]), json!({"tools": []}), later);
    assert!(completed(&events(&mut s))[0].1.is_ok());
    s.request(CallId(2), "tools/call", None, CallOptions::new(), later)
        .unwrap();
    let out = sent(&mut s);
    reply_err(&mut s, id_of(&out[0]), -32602, "bad args", None, later);
    let done = completed(&events(&mut s));
    assert_eq!(done.len(), 1);
    assert!(done[0].1.as_ref().unwrap_err().contains("bad args"));
    assert!(
        sent(&mut s).is_empty(),
        "no re-detection after confirmation"
    );
}

#[test]
fn stale_modern_hint_probes_again_with_the_remembered_version() {
    let now = Instant::now();
    let hint = learned_modern(1_000, now);
    let mut s = Session::new(config());
    s.start_with_hint(now + Duration::from_secs(2), Some(hint));
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["server/discover"]);
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn wrong_modern_hint_detects_again_and_resends_the_failed_calls_once() {
    let now = Instant::now();
    let hint = learned_modern(60_000, now);
    let mut s = Session::new(config());
    s.start_with_hint(now, Some(hint));
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    let _ = sent(&mut s);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "echo"}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    s.request(CallId(2), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["tools/call", "tools/list"]);
    // The server is now a legacy one: both calls fail.
    reply_err(&mut s, id_of(&out[0]), -32600, "not initialized", None, now);
    reply_err(&mut s, id_of(&out[1]), -32600, "not initialized", None, now);
    assert!(completed(&events(&mut s)).is_empty(), "held for a retry");
    let probe = sent(&mut s);
    assert_eq!(
        methods(&probe),
        ["server/discover"],
        "detection starts once"
    );
    reply_err(&mut s, id_of(&probe[0]), -32601, "nope", None, now);
    let out = sent(&mut s);
    assert_eq!(methods(&out), ["initialize"]);
    reply(&mut s, id_of(&out[0]), init_result("2025-11-25"), now);
    let out = sent(&mut s);
    assert_eq!(
        methods(&out),
        ["notifications/initialized", "tools/call", "tools/list"],
        "in the order they failed"
    );
    let call = out.iter().find(|m| m["method"] == "tools/call").unwrap();
    assert_eq!(call["params"]["name"], "echo", "the params were kept");
    assert!(matches!(
        s.learned_era(),
        Some(EraHint::Legacy(ProtocolVersion::V2025_11_25))
    ));
    // A second failure reaches the caller: each call is re-sent once at most.
    reply_err(&mut s, id_of(call), -32602, "bad args", None, now);
    let list = out.iter().find(|m| m["method"] == "tools/list").unwrap();
    reply(&mut s, id_of(list), json!({"tools": []}), now);
    let evs = events(&mut s);
    assert!(matches!(evs[0], Event::Ready), "{evs:?}");
    let done = completed(&evs);
    assert_eq!(done.len(), 2);
    assert!(done[0].1.as_ref().unwrap_err().contains("bad args"));
    assert_eq!(done[1], (CallId(2), Ok(json!({"tools": []}))));
}

#[test]
fn a_hint_that_does_not_fit_the_version_choice_is_ignored() {
    let now = Instant::now();
    let mut cfg = config();
    cfg.version = VersionChoice::Pinned(ProtocolVersion::V2025_11_25);
    let mut s = Session::new(cfg);
    s.start_with_hint(now, Some(EraHint::Legacy(ProtocolVersion::V2025_06_18)));
    let out = sent(&mut s);
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");

    let mut cfg = config();
    cfg.version = VersionChoice::Era(Era::Legacy);
    let mut s = Session::new(cfg);
    s.start_with_hint(now, Some(learned_modern(60_000, now)));
    assert_eq!(methods(&sent(&mut s)), ["initialize"]);
}

#[test]
fn a_transport_error_on_a_hinted_request_also_means_detect_again() {
    let now = Instant::now();
    // Legacy hint, modern-only HTTP server: `initialize` gets a bare 400.
    let mut s = Session::new(config());
    s.start_with_hint(now, Some(EraHint::Legacy(ProtocolVersion::V2025_11_25)));
    let init = sent(&mut s).remove(0);
    let http_400 = |id| {
        TransportError::new(TransportErrorKind::Protocol, "HTTP 400 Bad Request").with_request(id)
    };
    s.handle_transport_error(http_400(id_of(&init)), now);
    assert_eq!(methods(&sent(&mut s)), ["server/discover"]);
    assert!(events(&mut s).is_empty());

    // Fresh modern hint, the endpoint now serves a legacy server: the first
    // call's 400 starts detection and the call is re-sent after it.
    let mut s = Session::new(config());
    s.start_with_hint(now, Some(learned_modern(60_000, now)));
    let _ = events(&mut s);
    s.request(CallId(7), "tools/list", None, CallOptions::new(), now)
        .unwrap();
    let call = sent(&mut s).remove(0);
    s.handle_transport_error(http_400(id_of(&call)), now);
    let probe = sent(&mut s);
    assert_eq!(methods(&probe), ["server/discover"]);
    s.handle_transport_error(http_400(id_of(&probe[0])), now);
    let init = sent(&mut s);
    assert_eq!(methods(&init), ["initialize"]);
    reply(&mut s, id_of(&init[0]), init_result("2025-11-25"), now);
    assert_eq!(
        methods(&sent(&mut s)),
        ["notifications/initialized", "tools/list"]
    );
    assert!(completed(&events(&mut s)).is_empty(), "still in flight");
}

/// Idle memory: a session that fell back to the legacy era keeps nothing of
/// the `_meta` it built for its `server/discover` probe.
#[test]
fn a_legacy_session_drops_the_probes_meta() {
    let s = legacy(Instant::now());
    assert_eq!(s.server().unwrap().era(), Era::Legacy);
    assert!(s.protocol_meta().is_none(), "{:?}", s.protocol_meta());
}

/// Idle memory: the negotiated server is kept once, shared by the session
/// and the era it remembers (and, in the client, its handle).
#[test]
fn the_server_info_is_shared_not_copied() {
    let s = modern(Instant::now());
    let Some(EraHint::Modern { server, .. }) = s.learned_era() else {
        panic!("no modern era learned");
    };
    assert!(std::sync::Arc::ptr_eq(server, s.server_shared().unwrap()));
    assert!(s.protocol_meta().is_some(), "modern requests need it");
}
