//! Composing `_meta`: the protocol's members, the progress token and the
//! caller's, in one place.

use super::*;
use mcp_proto::schema::JsonObject;

fn compose(
    params: Option<Value>,
    protocol: Option<Value>,
    token: Option<i64>,
    caller: Option<Value>,
) -> Value {
    let params = params.map(raw);
    let protocol = protocol.map(raw);
    let token = token.map(RequestId::Number);
    let caller: Option<JsonObject> = caller.map(|c| serde_json::from_value(c).unwrap());
    let parts = MetaParts::default()
        .protocol(protocol.as_ref())
        .progress_token(token.as_ref())
        .caller(caller.as_ref())
        .trace(None);
    match compose_params(params.as_ref(), &parts) {
        Some(p) => serde_json::from_str(p.get()).unwrap(),
        None => params.map_or(Value::Null, |p| serde_json::from_str(p.get()).unwrap()),
    }
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
fn nothing_to_add_leaves_the_params_as_they_are() {
    let parts = MetaParts::default()
        .protocol(None)
        .progress_token(None)
        .caller(None)
        .trace(None);
    assert!(compose_params(Some(&raw(json!({"a": 1}))), &parts).is_none());
    assert!(compose_params(None, &parts).is_none());
}

#[test]
fn compose_handles_empty_whitespace_and_nested_meta() {
    assert_eq!(
        compose(Some(json!({})), Some(json!({"a": 1})), Some(4), None),
        json!({"_meta": {"a": 1, "progressToken": 4}})
    );
    assert_eq!(
        compose(None, None, Some(4), None),
        json!({"_meta": {"progressToken": 4}})
    );
    let spaced = RawJson::from_string(" { \"x\" : 1 } ".into()).unwrap();
    let a = raw(json!({"a": 1}));
    let parts = MetaParts::default()
        .protocol(Some(&a))
        .progress_token(None)
        .caller(None)
        .trace(None);
    let p = compose_params(Some(&spaced), &parts).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(p.get()).unwrap(),
        json!({"_meta": {"a": 1}, "x": 1})
    );
    // `_meta` inside the arguments takes the parsing path, which keeps both.
    assert_eq!(
        compose(
            Some(json!({"arguments": {"_meta": 1}})),
            Some(json!({"a": 1})),
            None,
            None
        ),
        json!({"_meta": {"a": 1}, "arguments": {"_meta": 1}})
    );
}

/// The protocol decides its members over `.meta()`'s; the params' own
/// `_meta` is sent as written (but for the progress token the session
/// routes by) and wins over both.
#[test]
fn the_protocol_decides_its_members_and_the_caller_the_rest() {
    let protocol = Some(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}));
    let caller = json!({
        "io.modelcontextprotocol/protocolVersion": "1999-01-01",
        "progressToken": "mine",
        "trace": "from-builder",
        "k": "builder"
    });
    let spliced = compose(
        Some(json!({"name": "t"})),
        protocol.clone(),
        Some(7),
        Some(caller.clone()),
    );
    assert_eq!(
        spliced,
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "progressToken": 7,
            "trace": "from-builder",
            "k": "builder"
        }, "name": "t"})
    );
    let merged = compose(
        Some(json!({"name": "t", "_meta": {
            "k": "params",
            "progressToken": "p",
            "io.modelcontextprotocol/protocolVersion": "2099-01-01"
        }})),
        protocol,
        Some(7),
        Some(caller),
    );
    assert_eq!(
        merged,
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "progressToken": 7,
            "trace": "from-builder",
            "k": "params"
        }, "name": "t"})
    );
    // Without a token or protocol members (legacy, no progress), the
    // caller's members pass as they are.
    assert_eq!(
        compose(
            Some(json!({})),
            None,
            None,
            Some(json!({"progressToken": 1}))
        ),
        json!({"_meta": {"progressToken": 1}})
    );
}

/// A call's own `_meta` rides with it: composed again for the revision in
/// use when an `input_required` round re-sends it.
#[test]
fn caller_meta_is_composed_again_on_every_send() {
    let now = Instant::now();
    let mut s = modern(now);
    let meta: JsonObject = serde_json::from_value(json!({"trace": "t1"})).unwrap();
    s.request_with_meta(
        CallId(1),
        "tools/call",
        Some(raw(json!({"name": "ask"}))),
        Some(meta),
        CallOptions::new().progress(true),
        now,
    )
    .unwrap();
    let out = sent(&mut s);
    let first = &out[0];
    assert_eq!(first["params"]["_meta"]["trace"], "t1");
    assert_eq!(first["params"]["_meta"]["progressToken"], 1);
    reply(
        &mut s,
        id_of(first),
        json!({"resultType": "input_required", "requestState": "s"}),
        now,
    );
    let out = sent(&mut s);
    let again = &out[0];
    assert_ne!(id_of(again), id_of(first));
    assert_eq!(again["params"]["_meta"]["trace"], "t1");
    assert_eq!(again["params"]["_meta"]["progressToken"], 1);
    assert_eq!(
        again["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(again["params"]["requestState"], "s");
}

/// The W3C trace context is the lowest tier: it fills `traceparent`,
/// `tracestate` and `baggage` only where no one else named them (the
/// params' own `_meta`, `.meta()`), on the fast path and the parsing one.
#[test]
fn trace_context_is_the_lowest_tier() {
    let trace: crate::telemetry::TraceMeta = vec![
        ("traceparent", "00-aa-bb-01".into()),
        ("tracestate", "k=v".into()),
        ("baggage", "user=alice".into()),
    ];
    let compose_traced = |params: Option<Value>, caller: Option<Value>| -> Value {
        let params = params.map(raw);
        let caller: Option<JsonObject> = caller.map(|c| serde_json::from_value(c).unwrap());
        let parts = MetaParts::default()
            .protocol(None)
            .progress_token(None)
            .caller(caller.as_ref())
            .trace(Some(&trace));
        let p = compose_params(params.as_ref(), &parts).unwrap();
        serde_json::from_str(p.get()).unwrap()
    };
    // Alone: all three, with the params' own members after `_meta`.
    assert_eq!(
        compose_traced(Some(json!({"name": "t"})), None),
        json!({"_meta": {"traceparent": "00-aa-bb-01", "tracestate": "k=v", "baggage": "user=alice"}, "name": "t"})
    );
    // `.meta()` names `traceparent`: its value is sent, the others fill in.
    assert_eq!(
        compose_traced(None, Some(json!({"traceparent": "00-caller-01"}))),
        json!({"_meta": {"traceparent": "00-caller-01", "tracestate": "k=v", "baggage": "user=alice"}})
    );
    // The params' own `_meta` (the parsing path) wins over both.
    assert_eq!(
        compose_traced(
            Some(json!({"_meta": {"baggage": "mine"}})),
            Some(json!({"tracestate": "caller=1"}))
        ),
        json!({"_meta": {"traceparent": "00-aa-bb-01", "tracestate": "caller=1", "baggage": "mine"}})
    );
}
