//! The relay core, scripted message by message: no IO.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId, Response};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use serde_json::{Value, json};

use super::*;

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

fn req(id: impl Into<RequestId>, method: &'static str, params: Value) -> Message {
    Request::new(id.into(), method, Some(raw(params))).into()
}

fn ok(id: impl Into<RequestId>, result: Value) -> Message {
    Response::new(id.into(), raw(result)).into()
}

fn to_server(r: &mut Relay) -> Vec<String> {
    std::iter::from_fn(|| r.poll_to_server())
        .map(|t| match t {
            ToServer::Message(m) => m.to_text(),
            ToServer::ProtocolVersion(v) => format!("version {v}"),
        })
        .collect()
}

fn to_host(r: &mut Relay) -> Vec<Value> {
    std::iter::from_fn(|| r.poll_to_host())
        .map(|m| serde_json::from_str(&m.to_text()).unwrap())
        .collect()
}

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn requests_travel_under_the_relays_ids_and_answers_come_back_under_the_senders() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req("h1", "tools/list", json!({})));
    r.handle_host(req(7, "tools/call", json!({"name": "echo"})));
    let sent: Vec<Value> = to_server(&mut r).iter().map(|t| value(t)).collect();
    assert_eq!(sent[0]["id"], 1);
    assert_eq!(sent[1]["id"], 2);
    assert_eq!(sent[1]["params"], json!({"name": "echo"}));
    // Answered out of order.
    r.handle_server(ok(2, json!({"content": []})));
    r.handle_server(ok(1, json!({"tools": []})));
    let got = to_host(&mut r);
    assert_eq!(got[0]["id"], 7);
    assert_eq!(got[1]["id"], "h1");
    assert_eq!(got[1]["result"], json!({"tools": []}));
    // The server's request to the host, and the host's answer.
    r.handle_server(req("s-9", "elicitation/create", json!({"message": "?"})));
    let asked = to_host(&mut r);
    assert_eq!(asked[0]["id"], 1);
    assert_eq!(asked[0]["method"], "elicitation/create");
    r.handle_host(ok(1, json!({"action": "decline"})));
    assert_eq!(
        value(&to_server(&mut r)[0]),
        json!({"jsonrpc": "2.0", "id": "s-9", "result": {"action": "decline"}})
    );
    // An answer nobody waits for is dropped, both ways.
    r.handle_host(ok(1, json!({})));
    r.handle_server(ok(1, json!({})));
    assert!(to_server(&mut r).is_empty() && to_host(&mut r).is_empty());
}

#[test]
fn cancellation_names_the_request_as_the_other_side_knows_it() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req("a", "tools/call", json!({"name": "slow"})));
    to_server(&mut r);
    r.handle_host(
        Notification::new(
            "notifications/cancelled",
            Some(raw(json!({"requestId": "a", "reason": "user"}))),
        )
        .into(),
    );
    let sent = value(&to_server(&mut r)[0]);
    assert_eq!(sent["params"], json!({"requestId": 1, "reason": "user"}));
    // The late answer is dropped: the host gave up on it.
    r.handle_server(ok(1, json!({})));
    assert!(to_host(&mut r).is_empty());
    // The server cancels its own request to the host.
    r.handle_server(req(40, "sampling/createMessage", json!({})));
    to_host(&mut r);
    r.handle_server(
        Notification::new(
            "notifications/cancelled",
            Some(raw(json!({"requestId": 40}))),
        )
        .into(),
    );
    assert_eq!(to_host(&mut r)[0]["params"], json!({"requestId": 1}));
    // Cancelling what is not in flight sends nothing.
    r.handle_host(
        Notification::new(
            "notifications/cancelled",
            Some(raw(json!({"requestId": "zz"}))),
        )
        .into(),
    );
    assert!(to_server(&mut r).is_empty());
}

#[test]
fn progress_and_other_notifications_pass_unchanged() {
    let mut r = Relay::new(RelayConfig::default());
    let p = json!({"progressToken": "t", "progress": 1, "total": 2});
    r.handle_server(Notification::new("notifications/progress", Some(raw(p.clone()))).into());
    assert_eq!(to_host(&mut r)[0]["params"], p);
    r.handle_host(Notification::new("notifications/roots/list_changed", None).into());
    assert_eq!(
        to_server(&mut r),
        [r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#]
    );
}

#[test]
fn the_legacy_revision_reaches_the_transport_before_initialized() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}),
    ));
    assert_eq!(to_server(&mut r).len(), 1, "initialize goes as it is");
    r.handle_server(ok(1, json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})));
    r.handle_host(Notification::new("notifications/initialized", None).into());
    let sent = to_server(&mut r);
    assert_eq!(sent[0], "version 2025-06-18");
    assert!(sent[1].contains("notifications/initialized"));
    assert_eq!(to_host(&mut r)[0]["id"], 0);
    // Legacy from now on: a request's `_meta` does not move it.
    r.handle_host(req(
        1,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    ));
    assert_eq!(to_server(&mut r).len(), 1);
}

#[test]
fn a_modern_request_tells_the_transport_its_revision_once() {
    let mut r = Relay::new(RelayConfig::default());
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    r.handle_host(req(1, "server/discover", meta.clone()));
    r.handle_host(req(2, "tools/list", meta.clone()));
    let sent = to_server(&mut r);
    assert_eq!(sent[0], "version 2026-07-28");
    assert!(sent[1].contains("server/discover"));
    assert!(
        sent[2].contains("tools/list"),
        "no second version: {sent:?}"
    );
}

#[test]
fn across_the_era_line_the_handshake_fails_naming_both_revisions() {
    // A legacy host, a server that speaks only 2026-07-28.
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}),
    ));
    to_server(&mut r);
    let refusal = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported")
        .with_data(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}));
    r.handle_server(ErrorResponse::new(Some(1.into()), refusal).into());
    let e = &to_host(&mut r)[0];
    assert_eq!(e["id"], 0);
    assert_eq!(e["error"]["code"], -32022);
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("2025-11-25") && msg.contains("only the 2026-07-28"),
        "{msg}"
    );
    assert_eq!(e["error"]["data"]["supported"], json!(["2026-07-28"]));

    // A modern host, a legacy HTTP server whose transport refused the probe.
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req(
        5,
        "server/discover",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    ));
    to_server(&mut r);
    r.handle_server_error(
        TransportError::new(TransportErrorKind::Protocol, "HTTP 400 Bad Request")
            .with_request(1.into()),
    );
    let e = &to_host(&mut r)[0];
    assert_eq!(e["id"], 5);
    assert_eq!(
        e["error"]["code"], -32601,
        "what a legacy stdio server says"
    );
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("2026-07-28") && msg.contains("2025-11-25"),
        "{msg}"
    );
}

#[test]
fn a_pinned_modern_host_refused_by_a_legacy_server_is_told_why() {
    let mut r = Relay::new(RelayConfig::default());
    let meta =
        json!({"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    r.handle_host(req(1, "tools/call", meta.clone()));
    to_server(&mut r);
    let refusal = ErrorObject::new(ErrorCode(-32000), "Bad Request: Server not initialized");
    r.handle_server(ErrorResponse::new(Some(1.into()), refusal.clone()).into());
    let msg = to_host(&mut r)[0]["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        msg.starts_with("Bad Request: Server not initialized (the host sent"),
        "{msg}"
    );
    assert!(
        msg.contains("2026-07-28") && msg.contains("2025-11-25"),
        "{msg}"
    );
    // Once the server answered one at that revision, its errors are its own.
    r.handle_host(req(2, "tools/list", meta.clone()));
    to_server(&mut r);
    r.handle_server(ok(2, json!({"tools": []})));
    r.handle_host(req(3, "tools/call", meta));
    to_server(&mut r);
    r.handle_server(ErrorResponse::new(Some(3.into()), refusal).into());
    assert_eq!(
        to_host(&mut r).last().unwrap()["error"]["message"],
        "Bad Request: Server not initialized"
    );
}

#[test]
fn too_many_requests_in_flight_are_answered_at_once_and_not_sent() {
    let mut r = Relay::new(RelayConfig::default().max_in_flight(2));
    for id in 1..=3 {
        r.handle_host(req(id, "ping", json!({})));
    }
    assert_eq!(to_server(&mut r).len(), 2);
    let e = &to_host(&mut r)[0];
    assert_eq!(e["id"], 3);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2 requests in flight")
    );
    // The server's requests are held to the same bound.
    for id in 1..=3 {
        r.handle_server(req(id, "ping", json!({})));
    }
    assert_eq!(to_host(&mut r).len(), 2);
    assert_eq!(value(&to_server(&mut r)[0])["id"], 3);
}

#[test]
fn an_id_already_in_flight_is_refused() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req("x", "ping", json!({})));
    r.handle_host(req("x", "ping", json!({})));
    assert_eq!(to_server(&mut r).len(), 1);
    let e = &to_host(&mut r)[0];
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!("x"), json!(-32600))
    );
}

#[test]
fn a_request_its_transport_failed_is_answered_with_the_reason() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req("a", "tools/call", json!({})));
    r.handle_host(req("b", "tools/call", json!({})));
    to_server(&mut r);
    r.handle_server_error(
        TransportError::new(
            TransportErrorKind::Protocol,
            "HTTP 500 Internal Server Error",
        )
        .with_request(2.into()),
    );
    let e = &to_host(&mut r)[0];
    assert_eq!(e["id"], "b");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("HTTP 500"), "{msg}");
    // A dropped frame whose id nobody knows: every request in flight.
    r.handle_server_error(
        TransportError::new(TransportErrorKind::Decode, "too large").answering_unknown(),
    );
    assert_eq!(to_host(&mut r)[0]["id"], "a");
    assert_eq!(r.host_requests_in_flight(), 0);
}

#[test]
fn a_lost_server_answers_every_request_in_flight_and_ends_the_relay() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host(req(1, "tools/call", json!({})));
    to_server(&mut r);
    r.handle_server_error(TransportError::new(
        TransportErrorKind::Closed,
        "server exited with status 1",
    ));
    let e = &to_host(&mut r)[0];
    assert!(e["error"]["message"].as_str().unwrap().contains("status 1"));
    assert!(matches!(r.ended(), Some(RelayEnd::ServerClosed(Some(_)))));
    assert!(!r.wants_host() && !r.wants_server());
}

fn initialized(r: &mut Relay) {
    r.handle_host(req(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "h", "version": "1"}}),
    ));
    r.handle_server(ok(1, json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})));
    r.handle_host(Notification::new("notifications/initialized", None).into());
    to_server(r);
    to_host(r);
}

#[test]
fn an_ended_session_is_started_again_with_the_hosts_initialize() {
    let mut r = Relay::new(RelayConfig::default());
    initialized(&mut r);
    r.handle_host(req("c", "tools/call", json!({})));
    to_server(&mut r);
    r.handle_server_error(TransportError::from_kind(
        TransportErrorKind::SessionExpired,
    ));
    r.handle_server_error(
        TransportError::from_kind(TransportErrorKind::SessionExpired).with_request(2.into()),
    );
    assert!(
        !r.wants_host(),
        "the host waits while the session starts again"
    );
    let sent = to_server(&mut r);
    let init = value(&sent[0]);
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["capabilities"], json!({"elicitation": {}}));
    let e = &to_host(&mut r)[0];
    assert_eq!(e["id"], "c");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send it again")
    );
    // The new session's answer stays in the relay; `initialized` follows.
    r.handle_server(ok(init["id"].as_i64().unwrap(), json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})));
    assert!(to_host(&mut r).is_empty());
    let sent = to_server(&mut r);
    assert_eq!(sent[0], "version 2025-11-25");
    assert!(sent[1].contains("notifications/initialized"));
    assert!(r.wants_host());
}

#[test]
fn a_new_session_at_another_revision_ends_the_relay() {
    let mut r = Relay::new(RelayConfig::default());
    initialized(&mut r);
    r.handle_server_error(TransportError::from_kind(
        TransportErrorKind::SessionExpired,
    ));
    let init = value(&to_server(&mut r)[0]);
    r.handle_server(ok(init["id"].as_i64().unwrap(), json!({"protocolVersion": "2025-03-26", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})));
    assert!(
        matches!(r.ended(), Some(RelayEnd::SessionLost(e)) if e.message.contains("2025-03-26"))
    );
}

#[test]
fn the_host_waits_while_its_messages_have_nowhere_to_go() {
    let mut r = Relay::new(RelayConfig::default());
    assert!(r.wants_host() && r.wants_server());
    r.handle_host(req(1, "ping", json!({})));
    assert!(
        !r.wants_host(),
        "the server's side has not taken the last one"
    );
    assert!(r.wants_server());
    to_server(&mut r);
    r.handle_server(Notification::new("notifications/message", None).into());
    assert!(!r.wants_server(), "the host has not taken the last one");
    to_host(&mut r);
    assert!(r.wants_host() && r.wants_server());
}

#[test]
fn an_undecodable_frame_from_the_host_is_answered_as_a_server_would() {
    let mut r = Relay::new(RelayConfig::default());
    r.handle_host_error(
        TransportError::new(TransportErrorKind::Decode, "not JSON-RPC").with_request("q".into()),
    );
    let e = &to_host(&mut r)[0];
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!("q"), json!(-32600))
    );
    // The host's answer to a server request, dropped: the server is told.
    r.handle_server(req(9, "roots/list", json!({})));
    to_host(&mut r);
    r.handle_host_error(
        TransportError::new(TransportErrorKind::Decode, "line too long").with_request(1.into()),
    );
    assert_eq!(value(&to_server(&mut r)[0])["id"], 9);
}
