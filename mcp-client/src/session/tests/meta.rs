//! `_meta` splicing and params the caller already encoded.

use super::*;

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
