//! Scripted tests of the session core: no IO, virtual time.
//!
//! - [`negotiation`]: the probe, the `initialize` fallback, version choice.
//! - [`calls`]: timeouts, progress, cancellation, responses, server
//!   requests and notifications, closing.
//! - [`retries`]: `input_required` rounds and the re-send after an expired
//!   HTTP session.
//! - [`renewal`]: a new session when the server ended the one in use.
//! - [`meta`]: composing `_meta`.
//! - [`era_hints`]: remembered eras ([`EraHint`]).

mod calls;
mod era_hints;
mod meta;
mod negotiation;
mod renewal;
mod retries;
mod tasks;

use std::time::{Duration, Instant};

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, Notification, Request, RequestId, Response};
use mcp_proto::schema::Implementation;
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{Era, ErrorCode, ErrorObject, ProtocolVersion};
use serde_json::{Value, json};

use super::meta::{MetaParts, compose_params};
use super::*;
use crate::error::{ClientError, CloseReason, HandshakeError};

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v).unwrap()
}

fn config() -> SessionConfig {
    SessionConfig::new(Implementation::new("test-client", "0.0.1"))
}

/// Drains transmit as a driver does (the transport takes and flushes it
/// all): returns the messages as JSON.
fn sent(s: &mut Session) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(t) = s.poll_transmit() {
        if let Transmit::Message(m) = t {
            out.push(serde_json::from_slice(&m.to_vec()).unwrap());
        }
    }
    s.handle_flushed();
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
    e.data = data.and_then(|d| mcp_proto::RawJson::from_value(&d).ok().map(Box::new));
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
                    .map_err(|e| mcp_proto::error::chain(e).to_string()),
            )),
            _ => None,
        })
        .collect()
}
