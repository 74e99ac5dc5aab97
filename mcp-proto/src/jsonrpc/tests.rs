use super::*;

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
