//! Property tests: decoding never panics on any input, and every message we
//! can build survives encode → decode unchanged.

#![allow(clippy::unwrap_used)] // test code: a panic is a test failure

use mcp_proto::schema::{
    ContentBlock, ElicitParams, InputResponse, PrimitiveSchema, SamplingContent,
};
use mcp_proto::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e300f64..1.0e300).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-zA-Z_]{1,8}", arb_json(), 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn arb_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::from),
        ".{0,16}".prop_map(RequestId::from),
    ]
}

fn raw(v: &Value) -> mcp_proto::RawJson {
    mcp_proto::RawJson::from_value(v).unwrap()
}

fn arb_message() -> impl Strategy<Value = Message> {
    let method = "[a-z]{1,10}(/[a-zA-Z_]{1,10}){0,2}";
    prop_oneof![
        (arb_id(), method, prop::option::of(arb_object()))
            .prop_map(|(id, m, p)| Message::Request(Request::new(id, m, p.as_ref().map(raw)))),
        (method, prop::option::of(arb_object()))
            .prop_map(|(m, p)| Message::Notification(Notification::new(m, p.as_ref().map(raw)))),
        (arb_id(), arb_json()).prop_map(|(id, r)| Message::Response(Response::new(id, raw(&r)))),
        (
            prop::option::of(arb_id()),
            any::<i32>(),
            ".{0,20}",
            prop::option::of(arb_json())
        )
            .prop_map(|(id, code, msg, data)| {
                let mut e = ErrorObject::new(ErrorCode(code), msg);
                if let Some(d) = data {
                    e = e.with_data(d);
                }
                Message::Error(mcp_proto::jsonrpc::ErrorResponse::new(id, e))
            }),
    ]
}

fn as_value(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Message::from_slice(&bytes);
    }

    #[test]
    fn decoding_arbitrary_json_never_panics(v in arb_json()) {
        let bytes = serde_json::to_vec(&v).unwrap();
        let _ = Message::from_slice(&bytes);
    }

    #[test]
    fn decoding_envelope_shaped_json_never_panics(
        id in arb_json(), method in arb_json(), params in arb_json(),
        result in arb_json(), error in arb_json(), pick in 0u8..32,
    ) {
        let mut o = Map::new();
        o.insert("jsonrpc".into(), json!("2.0"));
        if pick & 1 != 0 { o.insert("id".into(), id); }
        if pick & 2 != 0 { o.insert("method".into(), method); }
        if pick & 4 != 0 { o.insert("params".into(), params); }
        if pick & 8 != 0 { o.insert("result".into(), result); }
        if pick & 16 != 0 { o.insert("error".into(), error); }
        let _ = Message::from_slice(&serde_json::to_vec(&Value::Object(o)).unwrap());
    }

    #[test]
    fn messages_round_trip(m in arb_message()) {
        let bytes = m.to_vec();
        let back = Message::from_slice(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&bytes))))?;
        prop_assert_eq!(back.method(), m.method());
        prop_assert_eq!(back.id(), m.id());
        prop_assert_eq!(as_value(&back), as_value(&m));
        prop_assert_eq!(back.to_vec(), bytes);
    }

    /// An object whose `type` is no known content kind decodes to `Unknown`
    /// holding exactly that JSON, and re-encodes unchanged.
    #[test]
    fn unknown_content_kinds_are_kept(mut o in arb_object(), kind in "x-[a-z]{1,8}") {
        o["type"] = Value::from(kind);
        let b: ContentBlock = serde_json::from_value(o.clone()).unwrap();
        let ContentBlock::Unknown(raw) = &b else {
            return Err(TestCaseError::fail(format!("not unknown: {b:?}")));
        };
        prop_assert_eq!(&Value::Object(raw.to_object().unwrap()), &o);
        prop_assert_eq!(serde_json::to_value(&b).unwrap(), o);
    }

    /// Server-sent shapes with open sets never fail on odd input that is an
    /// object: they fall back to `Unknown`.
    #[test]
    fn open_unions_never_fail_on_objects(o in arb_object()) {
        let p: PrimitiveSchema = serde_json::from_value(o.clone()).unwrap();
        prop_assert_eq!(serde_json::to_value(&p).unwrap(), o.clone());
        let r: InputResponse = serde_json::from_value(o.clone()).unwrap();
        if let InputResponse::Unknown(v) = &r { prop_assert_eq!(v, &o); }
        // Sampling content and elicitation params may reject, but never panic.
        let _ = serde_json::from_value::<SamplingContent>(o.clone());
        let _ = serde_json::from_value::<ElicitParams>(o);
    }
}
