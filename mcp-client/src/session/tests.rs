//! Scripted tests of the session core: no IO, virtual time.

use std::time::{Duration, Instant};

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, Notification, Request, RequestId, Response};
use mcp_proto::schema::Implementation;
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{Era, ErrorCode, ErrorObject, ProtocolVersion};
use serde_json::{Value, json};

use super::wire::splice_meta;
use super::*;
use crate::error::{ClientError, CloseReason};

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

fn config() -> SessionConfig {
    SessionConfig::new(Implementation::new("test-client", "0.0.1"))
}

/// Drains transmit: returns (messages as JSON, version hints).
fn sent(s: &mut Session) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(t) = s.poll_transmit() {
        if let Transmit::Message(m) = t {
            out.push(serde_json::from_slice(&m.to_vec()).unwrap());
        }
    }
    out
}

fn events(s: &mut Session) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(e) = s.poll_event() {
        out.push(e);
    }
    out
}

fn id_of(v: &Value) -> RequestId {
    serde_json::from_value(v["id"].clone()).unwrap()
}

fn reply(s: &mut Session, id: RequestId, result: Value, now: Instant) {
    s.handle_message(Response::new(id, raw(result)).into(), now);
}

fn reply_err(
    s: &mut Session,
    id: RequestId,
    code: i32,
    msg: &str,
    data: Option<Value>,
    now: Instant,
) {
    let mut e = ErrorObject::new(ErrorCode(code), msg);
    e.data = data;
    s.handle_message(ErrorResponse::new(Some(id), e).into(), now);
}

fn discover_result() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": true}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "srv", "version": "9"}},
        "instructions": "be nice"
    })
}

fn init_result(v: &str) -> Value {
    json!({
        "protocolVersion": v,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "legacy-srv", "version": "1"}
    })
}

/// A session that negotiated the modern era.
fn modern(now: Instant) -> Session {
    let mut s = Session::new(config());
    s.start(now);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "server/discover");
    reply(&mut s, id_of(&out[0]), discover_result(), now);
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    s
}

/// A session that negotiated 2025-11-25 through the fallback.
fn legacy(now: Instant) -> Session {
    let mut s = Session::new(config());
    s.start(now);
    let out = sent(&mut s);
    reply_err(
        &mut s,
        id_of(&out[0]),
        -32601,
        "Method not found",
        None,
        now,
    );
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "initialize");
    reply(&mut s, id_of(&out[0]), init_result("2025-11-25"), now);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/initialized");
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
    s
}

fn completed(evs: &[Event]) -> Vec<(CallId, Result<Value, String>)> {
    evs.iter()
        .filter_map(|e| match e {
            Event::Completed { call, result } => Some((
                *call,
                result
                    .as_ref()
                    .map(|r| serde_json::from_str(r.get()).unwrap())
                    .map_err(ToString::to_string),
            )),
            _ => None,
        })
        .collect()
}

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
fn user_meta_is_merged_not_replaced() {
    let now = Instant::now();
    let mut s = modern(now);
    s.request(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "t", "_meta": {"traceparent": "00-x"}}))),
        CallOptions::new(),
        now,
    )
    .unwrap();
    let out = sent(&mut s);
    assert_eq!(out[0]["params"]["_meta"]["traceparent"], "00-x");
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
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
    // A late answer to the probe is ignored.
    reply(
        &mut s,
        id_of(&probe),
        discover_result(),
        now + Duration::from_secs(6),
    );
    assert!(events(&mut s).is_empty());
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
fn unsupported_version_error_picks_from_supported_list() {
    let now = Instant::now();
    let mut s = Session::new(config());
    s.start(now);
    let probe = sent(&mut s).remove(0);
    reply_err(
        &mut s,
        id_of(&probe),
        -32022,
        "Unsupported protocol version",
        Some(json!({"supported": ["2025-11-25", "1999-01-01"], "requested": "2026-07-28"})),
        now,
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
    assert!(matches!(
        evs.last(),
        Some(Event::Closed(CloseReason::Handshake(_)))
    ));
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
    let Some(Event::Closed(CloseReason::Handshake(m))) = evs.last() else {
        panic!("{evs:?}")
    };
    assert!(m.contains("2099-01-01"), "{m}");
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
    assert!(matches!(events(&mut s).last(), Some(Event::Closed(_))));
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
    let Some(Event::Closed(CloseReason::Handshake(m))) = evs.last() else {
        panic!("{evs:?}")
    };
    assert!(m.contains("2026-07-28"), "{m}");
}

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
    // Reset to 24+10 = 34 but capped at 25.
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
        Some(Event::Closed(CloseReason::Handshake(_)))
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
    assert_eq!(e.data, Some(json!({"k": 1})));
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
    let mut s = Session::new(SessionConfig {
        resend_on_session_expiry: true,
        version: VersionChoice::Era(Era::Legacy),
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
    let expired = || TransportError::new(TransportErrorKind::SessionExpired, "HTTP 404");
    s.handle_transport_error(expired().with_request(id_of(&call)), now);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "initialize");
    assert!(
        events(&mut s).is_empty(),
        "the caller does not see the expiry"
    );
    reply(&mut s, id_of(&out[0]), init_result("2025-11-25"), now);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/initialized");
    assert_eq!(out[1]["method"], "tools/call");
    assert_eq!(out[1]["params"], json!({"name": "t"}));
    // A second expiry for the same call is surfaced.
    s.handle_transport_error(expired().with_request(id_of(&out[1])), now);
    let done = completed(&events(&mut s));
    assert!(
        done[0].1.as_ref().unwrap_err().contains("session expired"),
        "{done:?}"
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
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn splice_meta_handles_empty_whitespace_and_nested_meta() {
    let t = RequestId::Number(4);
    let p = splice_meta(Some(&raw(json!({}))), "\"a\":1", Some(&t));
    assert_eq!(
        serde_json::from_str::<Value>(p.get()).unwrap(),
        json!({"_meta": {"a": 1, "progressToken": 4}})
    );
    let p = splice_meta(None, "", Some(&t));
    assert_eq!(
        serde_json::from_str::<Value>(p.get()).unwrap(),
        json!({"_meta": {"progressToken": 4}})
    );
    let spaced = RawJson::from_string(" { \"x\" : 1 } ".into()).unwrap();
    let p = splice_meta(Some(&spaced), "\"a\":1", None);
    assert_eq!(
        serde_json::from_str::<Value>(p.get()).unwrap(),
        json!({"_meta": {"a": 1}, "x": 1})
    );
    // `_meta` inside the arguments forces the slow path, which keeps both.
    let nested = raw(json!({"arguments": {"_meta": 1}}));
    let p = splice_meta(Some(&nested), "\"a\":1", None);
    assert_eq!(
        serde_json::from_str::<Value>(p.get()).unwrap(),
        json!({"_meta": {"a": 1}, "arguments": {"_meta": 1}})
    );
}

#[test]
fn embedded_meta_is_sent_verbatim_and_a_mismatch_is_completed() {
    let now = Instant::now();
    let mut s = modern(now);
    let (v, members) = s.request_meta_members().unwrap();
    assert_eq!(v, ProtocolVersion::V2026_07_28);
    let mut meta = members.clone();
    meta.insert("progressToken".into(), json!(5));
    let text = serde_json::to_string(&json!({"_meta": meta, "name": "echo"})).unwrap();
    s.request_embedded(
        CallId(5),
        "tools/call",
        Some(RawJson::from_string(text.clone()).unwrap()),
        CallOptions::new().progress(true),
        Embedded::new(Some(v), true),
        now,
    )
    .unwrap();
    let r = loop {
        match s.poll_transmit() {
            Some(Transmit::Message(mcp_proto::Message::Request(r))) => break r,
            Some(_) => continue,
            None => panic!("nothing sent"),
        }
    };
    assert_eq!(r.params.unwrap().get(), text, "no splice, no re-encoding");

    // Embedded only the token, but the modern members are needed: the session adds them.
    s.request_embedded(
        CallId(6),
        "tools/call",
        Some(raw(json!({"_meta": {"progressToken": 6}, "name": "echo"}))),
        CallOptions::new().progress(true),
        Embedded::new(None, true),
        now,
    )
    .unwrap();
    let out = sent(&mut s);
    assert_eq!(out[0]["params"]["_meta"]["progressToken"], 6);
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/clientInfo"],
        members["io.modelcontextprotocol/clientInfo"]
    );
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

// ---- remembered eras (EraHint) -------------------------------------------

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
    assert!(matches!(events(&mut s)[..], [Event::Ready]));
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
        matches!(&evs[..], [Event::Closed(CloseReason::Handshake(m))] if m.contains("still broken")),
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
