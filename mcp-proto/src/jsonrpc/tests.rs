use super::decode::decode_text_serde;
use super::*;
use fuzzing::paths_agree;

fn decode(s: &str) -> Result<Message, DecodeError> {
    Message::from_slice(s.as_bytes())
}

#[test]
fn classifies_the_four_shapes() {
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Ok(Message::Request(_))
    ));
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#),
        Ok(Message::Notification(_))
    ));
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
        Ok(Message::Response(_))
    ));
    let Ok(Message::Error(e)) =
        decode(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
    else {
        panic!("not an error")
    };
    assert_eq!(e.id, None);
    assert_eq!(e.error.code, crate::ErrorCode::PARSE_ERROR);
}

#[test]
fn envelope_violations_are_typed() {
    assert_eq!(
        decode(r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).unwrap_err(),
        DecodeError::Envelope(EnvelopeViolation::Version)
    );
    assert_eq!(
        decode(r#"{"id":1,"method":"x"}"#).unwrap_err(),
        DecodeError::Envelope(EnvelopeViolation::Version)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap_err(),
        DecodeError::Envelope(EnvelopeViolation::NullRequestId)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#)
            .unwrap_err(),
        DecodeError::Envelope(EnvelopeViolation::Shape)
    );
    assert_eq!(
        decode(r#"{"jsonrpc":"2.0","result":{}}"#).unwrap_err(),
        DecodeError::Envelope(EnvelopeViolation::MissingId)
    );
    assert_eq!(
        decode(r#" [{"jsonrpc":"2.0","method":"x"}]"#).unwrap_err(),
        DecodeError::Envelope(EnvelopeViolation::Batch)
    );
    assert!(matches!(
        decode("not json"),
        Err(DecodeError::Json { eof: false, .. })
    ));
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","#),
        Err(DecodeError::Json { eof: true, .. })
    ));
}

#[test]
fn round_trip_keeps_raw_params() {
    let src = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\nb"}}}"#;
    let m = decode(src).unwrap();
    let out = String::from_utf8(m.to_vec()).unwrap();
    assert_eq!(out, src);
    assert!(!out.contains('\n'));
}

#[test]
fn ids_accept_integral_floats_and_reject_others() {
    let Ok(Message::Response(r)) = decode(r#"{"jsonrpc":"2.0","id":3.0,"result":{}}"#) else {
        panic!()
    };
    assert_eq!(r.id, RequestId::Number(3));
    assert!(decode(r#"{"jsonrpc":"2.0","id":3.5,"result":{}}"#).is_err());
    assert!(decode(r#"{"jsonrpc":"2.0","id":true,"result":{}}"#).is_err());
}

#[test]
fn known_methods_are_interned() {
    let Ok(Message::Notification(n)) =
        decode(r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#)
    else {
        panic!()
    };
    assert!(matches!(n.method, Cow::Borrowed(_)));
}

#[test]
fn the_fast_path_takes_ordinary_messages_and_agrees_with_serde() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
        r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}"#,
        r#"{"jsonrpc":"2.0","id":-7,"error":{"code":-32601,"message":"nope","data":{"x":[1]}}}"#,
        r#"{"jsonrpc":"2.0","method":"ping"}"#,
        r#" { "result" : [ 1 , 2 ] , "id" : 3 , "jsonrpc" : "2.0" } "#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":null}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":null}"#,
        r#"{"jsonrpc":"1.0","id":4,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
    ] {
        assert!(paths_agree(text), "the fast path should take {text}");
    }
    // Left to serde_json (and still decoded correctly there).
    for text in [
        r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"\u0061","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
        r#"{"jsonrpc":"2.0","method":"tools\/call","id":1}"#,
    ] {
        assert!(!paths_agree(text), "{text}");
        assert!(decode(text).is_ok(), "{text}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

    /// Envelopes assembled from valid and broken pieces, in any order, then
    /// possibly damaged at one byte: the two paths never disagree.
    #[test]
    fn fast_and_serde_paths_agree(
        members in proptest::collection::vec((0usize..9, 0usize..19), 0..6),
        damage in proptest::option::of((0usize..400, proptest::prelude::any::<u8>())),
    ) {
        const KEYS: [&str; 9] = ["jsonrpc", "id", "method", "params", "result", "error", "x", "i\\u0064", "Id"];
        // The last three: strings longer than the word-at-a-time search
        // (its end found by `memchr`), with an escape, a control character
        // or neither past it.
        const VALUES: [&str; 19] = [
            "\"2.0\"", "7", "-3", "\"s-1\"", "null", "{\"a\":[1,2.5e3,{}]}", "\"tools/call\"",
            "{\"code\":-32600,\"message\":\"m\"}", "[]", "true", "1.5", "\"a\\\"b\\u00e9\"",
            "{\"a\":\"\u{1}\"}", "01", "{\"text\":\"é ü 😀\"}", "99999999999999999999",
            concat!("\"", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "é\\\"x\""),
            concat!("{\"text\":\"", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "\u{1f}\"}"),
            concat!("[\"", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "xyz\"]"),
        ];
        let body: Vec<String> = members
            .iter()
            .map(|&(k, v)| format!("\"{}\" : {}", KEYS[k], VALUES[v]))
            .collect();
        let mut text = format!("{{ {} }}", body.join(" , ")).into_bytes();
        if let Some((at, byte)) = damage
            && !text.is_empty()
        {
            let at = at % text.len();
            text[at] = byte;
        }
        if let Ok(text) = String::from_utf8(text) {
            paths_agree(&text);
        }
    }
}

#[test]
fn edge_numbers_and_strings_agree() {
    for text in [
        r#"{"jsonrpc":"2.0","id":-0,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775807,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":"x\u0000y"}"#,
        r#"{"jsonrpc":"2.0","method":"","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":1e400}}"#,
    ] {
        paths_agree(text);
        assert_eq!(
            decode(text).map(|m| m.to_vec()).ok(),
            decode_text_serde(text.to_owned()).map(|m| m.to_vec()).ok(),
            "{text}"
        );
    }
}

/// Found by the `envelope` fuzz target (fuzz/corpus/envelope/regression-float-reparse):
/// `34E043` in an error's `data` re-encodes as `3.4e+44`, which serde_json's
/// default best-effort float parsing read back one ULP off
/// (`3.4000000000000002e+44`): numbers a server sent changed on the way
/// through. Fixed by serde_json's `float_roundtrip` (correctly rounded parsing).
#[test]
fn fuzz_regression_floats_survive_decode_encode_decode() {
    fuzzing::envelope(
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"sued":34E043}}}"#,
    );
    let text = r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":3.4e+44}}"#;
    let Ok(Message::Error(e)) = decode(text) else {
        panic!("not an error response")
    };
    assert_eq!(
        e.error.data.as_deref().map(RawJson::as_str),
        Some("3.4e+44")
    );
    assert_eq!(
        e.error.data_as::<serde_json::Value>().unwrap().unwrap(),
        serde_json::Value::from(3.4e44)
    );
}

proptest::proptest! {
    /// Method names and string ids are written byte for byte as `serde_json`
    /// writes them, whether or not they need escaping.
    #[test]
    fn method_and_id_strings_are_written_as_serde_json_writes_them(
        s in proptest::string::string_regex("[\\x00-\\x7f\u{e9}\u{1F600}]{0,24}").unwrap()
    ) {
        let m: Message = Request::new(RequestId::String(s.clone().into()), s.clone(), None).into();
        let want = format!(
            r#"{{"jsonrpc":"2.0","id":{0},"method":{0}}}"#,
            serde_json::to_string(&s).unwrap()
        );
        proptest::prop_assert_eq!(String::from_utf8(m.to_vec()).unwrap(), want);
    }
}

#[test]
fn to_vec_allocates_its_buffer_once() {
    let raw = |n: usize| {
        RawJson::from_string(format!(
            r#"{{"name":"echo","arguments":{{"text":"{}"}}}}"#,
            "x".repeat(n)
        ))
        .unwrap()
    };
    let long_id = RequestId::String("a-string-id".repeat(20).into());
    let messages: Vec<Message> = vec![
        Request::new(RequestId::Number(i64::MIN), "tools/call", Some(raw(64))).into(),
        Request::new(long_id.clone(), "tools/call", Some(raw(5000))).into(),
        Request::new(7.into(), "ping", None).into(),
        Notification::new("notifications/initialized", None).into(),
        Notification::new("notifications/progress", Some(raw(300))).into(),
        Response::new(long_id, raw(1000)).into(),
        ErrorResponse::new(
            Some(RequestId::Number(i64::MAX)),
            crate::ErrorObject::new(crate::ErrorCode::INVALID_PARAMS, "m".repeat(500)),
        )
        .into(),
    ];
    for m in messages {
        let v = m.to_vec();
        let text = String::from_utf8_lossy(&v);
        assert!(v.len() <= m.encoded_len_hint(), "{text}");
        assert_eq!(v.capacity(), m.encoded_len_hint(), "grew: {text}");
    }
}

/// `[[…]]` nested `n` levels.
fn nested(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

#[test]
fn raw_values_nest_at_most_max_depth_minus_one_levels() {
    // The envelope is one level: a result of MAX_DEPTH - 1 levels fits, and
    // decodes as a `Value` (serde_json's own limit).
    let ok = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#,
        nested(MAX_DEPTH - 1)
    );
    let Ok(Message::Response(r)) = Message::from_string(ok) else {
        panic!("a result of MAX_DEPTH - 1 levels is a message")
    };
    assert!(r.result.decode::<serde_json::Value>().is_ok());
    for member in ["result", "params", "x-other"] {
        for depth in [MAX_DEPTH, 100_000] {
            let head = if member == "params" {
                r#""method":"m","#
            } else if member == "x-other" {
                r#""result":{},"#
            } else {
                ""
            };
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,{head}"{member}":{}}}"#,
                nested(depth)
            );
            let started = std::time::Instant::now();
            assert_eq!(
                Message::from_string(text.clone()).unwrap_err(),
                DecodeError::TooDeep { limit: MAX_DEPTH },
                "{member} {depth}"
            );
            assert_eq!(
                Message::from_slice(text.as_bytes()).unwrap_err(),
                DecodeError::TooDeep { limit: MAX_DEPTH }
            );
            assert!(started.elapsed() < std::time::Duration::from_secs(5));
        }
    }
    // Brackets inside strings are text.
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":"{}"}}}}"#,
        "[".repeat(100_000)
    );
    assert!(Message::from_string(text).is_ok());
    // RawJson's own constructor has the same limit for a value.
    assert!(RawJson::from_string(nested(MAX_DEPTH - 1)).is_ok());
    let e = RawJson::from_string(nested(100_000)).unwrap_err();
    assert!(e.to_string().contains("deeper than 127"), "{e}");
}

#[test]
fn a_small_result_does_not_keep_its_large_message() {
    let pad = "x".repeat(1 << 20);
    let text = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":1}},"pad":"{pad}"}}"#);
    let range = text.as_ptr() as usize..text.as_ptr() as usize + text.len();
    let Ok(Message::Response(r)) = Message::from_string(text) else {
        panic!("a response")
    };
    assert_eq!(r.result.as_str(), r#"{"a":1}"#);
    assert!(
        !range.contains(&(r.result.as_str().as_ptr() as usize)),
        "copied out of the 1 MiB line"
    );
    // A result that is most of its line is read in place (no copy).
    let text = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":"{pad}"}}}}"#);
    let range = text.as_ptr() as usize..text.as_ptr() as usize + text.len();
    let Ok(Message::Response(r)) = Message::from_string(text) else {
        panic!("a response")
    };
    assert!(range.contains(&(r.result.as_str().as_ptr() as usize)));
}
