use super::*;
use mcp_proto::jsonrpc::{EnvelopeViolation, Notification, Request};

const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const NOTE: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Feeds `input` in pieces of the given sizes (cycled), collecting every
/// decode result, then finishes with `decode_eof`.
fn feed(
    codec: &mut JsonLineCodec,
    input: &[u8],
    pieces: &[usize],
) -> Vec<Result<String, JsonLineCodecError>> {
    let mut out = Vec::new();
    let mut buf = BytesMut::new();
    let mut rest = input;
    let mut sizes = pieces.iter().copied().cycle();
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (head, tail) = rest.split_at(n);
        buf.extend_from_slice(head);
        rest = tail;
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(m)) => out.push(Ok(String::from_utf8(m.to_vec()).unwrap())),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(m)) => out.push(Ok(String::from_utf8(m.to_vec()).unwrap())),
            Ok(None) => break,
            Err(e) => out.push(Err(e)),
        }
    }
    assert!(buf.is_empty(), "decode_eof leaves an empty buffer");
    out
}

fn s(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

#[test]
fn decodes_lines_with_crlf_blank_lines_and_a_final_unterminated_line() {
    let mut input = Vec::new();
    input.extend_from_slice(PING);
    input.extend_from_slice(b"\r\n\n   \r\n\t\n");
    input.extend_from_slice(NOTE);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(PING); // no trailing newline
    let got = feed(&mut JsonLineCodec::new(), &input, &[usize::MAX]);
    assert_eq!(got, vec![Ok(s(PING)), Ok(s(NOTE)), Ok(s(PING))]);
}

#[test]
fn every_split_point_gives_the_same_messages() {
    let mut input = Vec::new();
    input.extend_from_slice(b"Server v1 starting\r\n");
    input.extend_from_slice(PING);
    input.extend_from_slice(b"\r\n\n");
    input.extend_from_slice(NOTE);
    input.extend_from_slice(b"\nbanner again\n");
    input.extend_from_slice(PING);
    input.extend_from_slice(b"\n");
    let want = vec![Ok(s(PING)), Ok(s(NOTE)), Ok(s(PING))];
    for first in 1..input.len() {
        let mut codec = JsonLineCodec::new();
        assert_eq!(
            feed(&mut codec, &input, &[first, usize::MAX]),
            want,
            "split at {first}"
        );
        assert_eq!(codec.skipped_lines(), 2);
    }
    for size in 1..8 {
        assert_eq!(
            feed(&mut JsonLineCodec::new(), &input, &[size]),
            want,
            "pieces of {size}"
        );
    }
}

#[test]
fn non_json_lines_are_skipped_and_counted() {
    let input = b"[INFO] listening on stdio\nnot json {\n{broken\n\xff\xfe\n";
    let mut codec = JsonLineCodec::new();
    assert!(feed(&mut codec, input, &[usize::MAX]).is_empty());
    assert_eq!(codec.skipped_lines(), 4);
}

#[test]
fn json_that_is_not_json_rpc_is_a_scoped_error() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"level\":\"info\",\"msg\":\"hi\"}\n[1,2]\n42\n");
    input.extend_from_slice(PING);
    input.extend_from_slice(b"\n");
    let mut codec = JsonLineCodec::new();
    let got = feed(&mut codec, &input, &[usize::MAX]);
    assert_eq!(got.len(), 4);
    assert_eq!(
        got[0],
        Err(JsonLineCodecError::Message(DecodeError::Envelope(
            EnvelopeViolation::Version
        )))
    );
    assert_eq!(
        got[1],
        Err(JsonLineCodecError::Message(DecodeError::Envelope(
            EnvelopeViolation::Batch
        )))
    );
    assert!(matches!(
        got[2],
        Err(JsonLineCodecError::Message(DecodeError::Json { .. }))
    ));
    assert_eq!(got[3], Ok(s(PING)));
    assert_eq!(codec.skipped_lines(), 0);
    let te: TransportError = too_long(1, 2, Dropped::NotAnAnswer).into();
    assert_eq!(te.kind(), TransportErrorKind::Decode);
    assert!(!te.is_terminal());
    assert_eq!(te.request_id(), None);
    let te: TransportError = too_long(1, 2, Dropped::Answer(5.into())).into();
    assert!(te.is_dropped_answer() && !te.is_terminal());
    assert_eq!(te.request_id(), Some(&5.into()));
    let te: TransportError = too_long(1, 2, Dropped::UnknownAnswer).into();
    assert!(te.is_unknown_answer() && !te.is_terminal());
}

#[test]
fn limit_is_inclusive_and_an_oversized_line_resynchronises() {
    let limit = PING.len();
    let mut input = Vec::new();
    input.extend_from_slice(PING); // exactly the limit: accepted
    input.extend_from_slice(b"\n");
    input.extend_from_slice(&[b'x'; 1000]); // too long, arrives in pieces
    input.extend_from_slice(b"\n");
    input.extend_from_slice(PING);
    input.extend_from_slice(b"\n");
    let dropped = Err(too_long(limit, 1000, Dropped::NotAnAnswer));
    let want = vec![Ok(s(PING)), dropped, Ok(s(PING))];
    for size in [1, 7, 64, 500, usize::MAX] {
        let mut codec = JsonLineCodec::new().with_max_message_size(limit);
        assert_eq!(feed(&mut codec, &input, &[size]), want, "pieces of {size}");
        assert!(!codec.is_discarding());
    }
    // An oversized unterminated line at EOF is reported once.
    let mut codec = JsonLineCodec::new().with_max_message_size(10);
    assert_eq!(
        feed(&mut codec, &[b'{'; 100], &[3]),
        vec![Err(too_long(10, 100, Dropped::NotAnAnswer))]
    );
}

fn too_long(limit: usize, len: u64, dropped: Dropped) -> JsonLineCodecError {
    JsonLineCodecError::LineTooLong {
        limit,
        len,
        ended: true,
        dropped,
    }
}

#[test]
fn an_oversized_line_names_the_request_it_answered() {
    let big = "x".repeat(5000);
    let lines = [
        // The Python SDK's order: the id first.
        (
            format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"t":"{big}"}}}}"#),
            Dropped::Answer(7.into()),
        ),
        // The TypeScript SDK's: the id last.
        (
            format!(r#"{{"result":{{"t":"{big}"}},"jsonrpc":"2.0","id":"s-8"}}"#),
            Dropped::Answer("s-8".into()),
        ),
        (
            format!(r#"{{"error":{{"code":1,"message":"{big}"}},"jsonrpc":"2.0","id":9}}"#),
            Dropped::Answer(9.into()),
        ),
        // A response whose id is in the middle: any pending call.
        (
            format!(r#"{{"result":{{"t":"{big}"}},"id":3,"jsonrpc":"2.0"}}"#),
            Dropped::UnknownAnswer,
        ),
        // A request from the server answers nothing (it is answered with
        // an error), nor does a notification, nor noise.
        (
            format!(r#"{{"method":"x","params":{{"t":"{big}"}},"jsonrpc":"2.0","id":4}}"#),
            Dropped::Request(4.into()),
        ),
        (
            format!(r#"{{"method":"x","params":{{"t":"{big}"}},"jsonrpc":"2.0"}}"#),
            Dropped::NotAnAnswer,
        ),
        (big.clone(), Dropped::NotAnAnswer),
    ];
    for (line, dropped) in lines {
        let input = format!("{line}\n{}\n", std::str::from_utf8(PING).unwrap());
        // An id at the start is reported as soon as the limit is crossed
        // (unless the newline came with the same read).
        let id_first = line.starts_with(r#"{"jsonrpc":"2.0","id""#);
        for size in [1, 7, 999, 1001, usize::MAX] {
            let mut codec = JsonLineCodec::new().with_max_message_size(1000);
            let got = feed(&mut codec, input.as_bytes(), &[size]);
            let whole = size > line.len();
            let len = match &got[..] {
                [
                    Err(JsonLineCodecError::LineTooLong {
                        limit: 1000,
                        len,
                        ended,
                        dropped: d,
                    }),
                    Ok(p),
                ] if *d == dropped && *ended == (whole || !id_first) && *p == s(PING) => *len,
                other => panic!("{size}: {line:.40}: {other:?}"),
            };
            if whole || !id_first {
                assert_eq!(len, line.len() as u64, "{size}: {line:.40}");
            } else {
                // What had arrived when the limit was crossed.
                assert!(len > 1000 && len < line.len() as u64, "{size}: {len}");
            }
        }
    }
}

/// A valid answer's head, then bytes forever: the call it answers fails
/// the moment the limit is crossed, naming the limit and the size seen,
/// without waiting for an end that never comes; memory stays bounded and
/// the line's end (if it ever comes) is not reported twice.
#[test]
fn an_endless_answer_is_reported_when_the_limit_is_crossed() {
    let limit = 4096;
    let mut codec = JsonLineCodec::new().with_max_message_size(limit);
    let mut buf = BytesMut::from(
        &br#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":""#[..],
    );
    let mut reports = Vec::new();
    for _ in 0..10_000 {
        buf.extend_from_slice(&[b'a'; 1000]);
        loop {
            match codec.decode(&mut buf) {
                Ok(None) => break,
                Ok(Some(m)) => panic!("{m:?}"),
                Err(e) => reports.push(e),
            }
        }
        assert!(buf.len() <= limit + 1000);
    }
    let [
        JsonLineCodecError::LineTooLong {
            limit: l,
            len,
            ended: false,
            dropped,
        },
    ] = &reports[..]
    else {
        panic!("{reports:?}")
    };
    assert_eq!((*l, dropped), (limit, &Dropped::Answer(42.into())));
    assert!(*len > limit as u64 && *len <= limit as u64 + 1000, "{len}");
    let e = reports[0].to_string();
    assert!(
        e.contains("at least") && e.contains("4096 bytes limit"),
        "{e}"
    );
    let te: TransportError = reports.remove(0).into();
    assert!(te.is_dropped_answer());
    assert_eq!(te.request_id(), Some(&42.into()));
    // The end: no second report; the next line decodes.
    buf.extend_from_slice(b"\"}]}}\n");
    buf.extend_from_slice(PING);
    buf.extend_from_slice(b"\n");
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().to_vec(), PING);
}

/// An answer line that is not JSON (an invalid UTF-8 byte, or cut short)
/// fails the call it answers instead of being skipped as noise; one shaped
/// like a response with no id fails every waiting call; noise stays noise.
#[test]
fn an_answer_that_is_not_json_names_its_request() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"t\":\"caf\xe9\"}}\n");
    input.extend_from_slice(b"{\"result\":{\"t\":\"\xff\"},\"jsonrpc\":\"2.0\",\"id\":\"s-6\"}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"cut\n");
    // The id in the middle is found too (the whole line is scanned)...
    input.extend_from_slice(b"{\"result\":{\"t\":\"\xff\"},\"id\":8,\"jsonrpc\":\"2.0\"}\n");
    // ... but a response cut short before its id may have answered any call.
    input.extend_from_slice(b"{\"result\":{\"t\":\"\xff\n");
    // A server request with a bad byte answers nothing but is answered
    // (with -32700); a log line with one is noise.
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\xff\"}\n");
    input.extend_from_slice(b"{\"level\":\"info\",\"msg\":\"\xff\"}\n");
    input.extend_from_slice(PING);
    input.extend_from_slice(b"\n");
    for size in [1, 13, usize::MAX] {
        let mut codec = JsonLineCodec::new();
        let got = feed(&mut codec, &input, &[size]);
        let dropped: Vec<_> = got
            .iter()
            .map(|r| match r {
                Err(JsonLineCodecError::UndecodableAnswer { dropped, .. }) => Some(dropped.clone()),
                Err(JsonLineCodecError::UndecodableRequest { id, .. }) => {
                    Some(Dropped::Request(id.clone()))
                }
                Ok(m) => {
                    assert_eq!(m.as_bytes(), PING);
                    None
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            dropped,
            [
                Some(Dropped::Answer(5.into())),
                Some(Dropped::Answer("s-6".into())),
                Some(Dropped::Answer(7.into())),
                Some(Dropped::Answer(8.into())),
                Some(Dropped::UnknownAnswer),
                Some(Dropped::Request(9.into())),
                None
            ],
            "pieces of {size}"
        );
        assert_eq!(codec.skipped_lines(), 1);
        let te: TransportError = got.into_iter().next().unwrap().unwrap_err().into();
        assert_eq!(te.request_id(), Some(&5.into()));
        assert!(te.is_dropped_answer() && !te.is_terminal());
        assert!(
            mcp_proto::error::chain(&te)
                .to_string()
                .contains("invalid unicode"),
            "{te}"
        );
    }
}

#[test]
fn json_not_json_rpc_with_an_id_names_the_request() {
    let mut codec = JsonLineCodec::new();
    let got = feed(
        &mut codec,
        b"{\"jsonrpc\":\"1.0\",\"id\":3,\"result\":{}}\n",
        &[usize::MAX],
    );
    assert_eq!(
        got,
        vec![Err(JsonLineCodecError::BrokenAnswer {
            id: 3.into(),
            error: DecodeError::Envelope(EnvelopeViolation::Version)
        })]
    );
    let te: TransportError = got.into_iter().next().unwrap().unwrap_err().into();
    assert_eq!(te.request_id(), Some(&3.into()));
    assert!(te.is_dropped_answer());
}

#[test]
fn an_oversized_line_is_never_buffered_whole() {
    let limit = 4096;
    let mut codec = JsonLineCodec::new().with_max_message_size(limit);
    let mut buf = BytesMut::new();
    let chunk = [b'a'; 1000];
    let mut errors = 0;
    for _ in 0..10_000 {
        // 10 MB line
        buf.extend_from_slice(&chunk);
        match codec.decode(&mut buf) {
            Ok(None) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(buf.len() <= limit + chunk.len());
    }
    // Reported once, when the line ends.
    buf.extend_from_slice(b"\n");
    match codec.decode(&mut buf) {
        Err(JsonLineCodecError::LineTooLong { len, .. }) => {
            assert_eq!(len, 10_000_000);
            errors += 1;
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        buf.capacity() <= 2 * (limit + chunk.len()),
        "capacity {}",
        buf.capacity()
    );
    assert_eq!(errors, 1);
    buf.extend_from_slice(b"tail\n");
    buf.extend_from_slice(PING);
    buf.extend_from_slice(b"\n");
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().to_vec(), PING);
}

#[test]
fn scanning_resumes_where_it_stopped() {
    let mut codec = JsonLineCodec::new();
    let mut buf = BytesMut::from(&PING[..10]);
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert_eq!(codec.next_index, 10);
    buf.extend_from_slice(&PING[10..]);
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert_eq!(codec.next_index, PING.len());
    buf.extend_from_slice(b"\n");
    assert!(codec.decode(&mut buf).unwrap().is_some());
    assert_eq!(codec.next_index, 0);
}

#[test]
fn encode_never_embeds_a_newline() {
    let pretty = mcp_proto::RawJson::from_string(
        "{\n  \"text\": \"line1\\nline2\",\r\n  \"n\": [1,\n2]\n}".into(),
    )
    .unwrap();
    let msg: Message = Request::new(7.into(), "tools/call", Some(pretty)).into();
    let mut out = Vec::new();
    let mut codec = JsonLineCodec::new();
    codec.encode(&msg, &mut out);
    codec.encode(
        &Notification::new("notifications/initialized", None).into(),
        &mut out,
    );
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 2);
    assert!(!out.contains(&b'\r'));
    // Round trip: the value is unchanged, the escaped newline survives.
    let mut buf = BytesMut::from(&out[..]);
    let Message::Request(r) = codec.decode(&mut buf).unwrap().unwrap() else {
        panic!()
    };
    let v: serde_json::Value = serde_json::from_str(r.params.unwrap().get()).unwrap();
    assert_eq!(v, serde_json::json!({"text": "line1\nline2", "n": [1, 2]}));
    assert!(codec.decode(&mut buf).unwrap().is_some());
}

mod chunking {
    use super::*;
    use proptest::prelude::*;

    const LIMIT: usize = 100;

    #[derive(Debug, Clone)]
    enum Piece {
        Ping(u32),
        Banner(Vec<u8>),
        NotRpc,
        Xs(usize),
    }

    impl Piece {
        fn bytes(&self) -> Vec<u8> {
            match self {
                Piece::Ping(i) => {
                    format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#).into_bytes()
                }
                Piece::Banner(b) => b.clone(),
                Piece::NotRpc => b"{\"level\":1}".to_vec(),
                Piece::Xs(n) => vec![b'x'; *n],
            }
        }
    }

    fn piece() -> impl Strategy<Value = Piece> {
        prop_oneof![
            any::<u32>().prop_map(Piece::Ping),
            proptest::collection::vec(proptest::sample::select(b"ab :-\t".to_vec()), 0..30)
                .prop_map(Piece::Banner),
            Just(Piece::NotRpc),
            (0usize..300).prop_map(Piece::Xs),
        ]
    }

    /// What decoding `line` (terminator excluded, `\r` included) must give.
    fn expected(line: &[u8], piece: &Piece) -> Option<Result<String, JsonLineCodecError>> {
        if line.len() > LIMIT {
            let dropped = Dropped::learn(&line[..LIMIT], line);
            return Some(Err(too_long(LIMIT, line.len() as u64, dropped)));
        }
        match piece {
            Piece::Ping(_) => Some(Ok(String::from_utf8(piece.bytes()).unwrap())),
            Piece::NotRpc => Some(Err(JsonLineCodecError::Message(DecodeError::Envelope(
                EnvelopeViolation::Version,
            )))),
            Piece::Banner(_) | Piece::Xs(_) => None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any chunking gives the same results as the model, and the buffer
        /// never holds more than the limit plus one chunk.
        #[test]
        fn chunking_never_changes_the_result(
            lines in proptest::collection::vec((piece(), any::<bool>()), 0..16),
            last in proptest::option::of(piece()),
            splits in proptest::collection::vec(1usize..64, 1..8),
        ) {
            let mut input = Vec::new();
            let mut want = Vec::new();
            for (p, crlf) in &lines {
                let mut line = p.bytes();
                if *crlf {
                    line.push(b'\r');
                }
                want.extend(expected(&line, p));
                input.extend_from_slice(&line);
                input.push(b'\n');
            }
            if let Some(p) = &last {
                let line = p.bytes();
                want.extend(expected(&line, p));
                input.extend_from_slice(&line);
            }
            let whole = feed(&mut JsonLineCodec::new().with_max_message_size(LIMIT), &input, &[usize::MAX]);
            prop_assert_eq!(&whole, &want);
            let chunked = feed(&mut JsonLineCodec::new().with_max_message_size(LIMIT), &input, &splits);
            prop_assert_eq!(&chunked, &want);
        }
    }
}

/// A large line is handed over with its buffer only when little follows it;
/// with many large lines already buffered, each is copied out and the rest
/// stays where it is (no copying of everything behind every line).
#[test]
fn buffered_large_lines_are_not_shifted_line_by_line() {
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{{\"x\":\"{}\"}}}}\n",
        "a".repeat(100_000)
    );
    let mut buf = BytesMut::new();
    for _ in 0..5 {
        buf.extend_from_slice(line.as_bytes());
    }
    let mut codec = JsonLineCodec::new();
    for left in (0..5).rev() {
        let before = buf.as_ptr() as usize;
        assert!(codec.decode(&mut buf).unwrap().is_some());
        assert_eq!(buf.len(), left * line.len());
        if left > 0 {
            // Advanced in place: the bytes after the line did not move.
            assert_eq!(buf.as_ptr() as usize, before + line.len());
        }
    }
}

/// Found by the `envelope` fuzz target: serde_json's default float parsing is
/// best-effort (one ULP off for `3.4e+44`), so a number a server sent reached
/// the client changed. Tested here because this crate's tests, unlike
/// mcp-proto's, do not pull in a dev-dependency that turns `float_roundtrip`
/// on by feature unification (run it alone: `cargo test -p mcpio-transport-stdio`).
#[test]
fn fuzz_regression_numbers_from_the_server_arrive_unchanged() {
    let mut codec = JsonLineCodec::new();
    let mut buf = BytesMut::from(
        &br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[3.4e+44,0.1,5e-324]}}
"#[..],
    );
    let Ok(Some(Message::Error(e))) = codec.decode(&mut buf) else {
        panic!("not an error response")
    };
    let want: Vec<serde_json::Value> = [3.4e44, 0.1, 5e-324].map(serde_json::Value::from).into();
    assert_eq!(
        e.error.data_as::<serde_json::Value>().unwrap().unwrap(),
        serde_json::Value::Array(want)
    );
}

/// A read that brought exactly one line (the usual answer) hands its buffer
/// over as the message's storage instead of copying the line out of it; a
/// buffer much larger than its line is kept, and the line copied.
#[test]
fn a_buffer_holding_one_line_becomes_the_message() {
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
    // Where the result starts in the line.
    let result_at = line.len() - br#"{"content":[]}}"#.len();
    let result_ptr = |m: &Message| m.raw().unwrap().as_bytes().as_ptr();
    let mut codec = JsonLineCodec::new();
    for ending in [&b"\n"[..], b"\r\n"] {
        let mut exact = BytesMut::from(&[&line[..], ending].concat()[..]);
        let at = exact.as_ptr().wrapping_add(result_at);
        let m = codec.decode(&mut exact).unwrap().unwrap();
        assert_eq!(m.to_vec(), line);
        assert_eq!(result_ptr(&m), at, "the line was copied");
        assert_eq!(exact.capacity(), 0, "the buffer went with the line");
    }
    let mut big = BytesMut::with_capacity(4096);
    big.extend_from_slice(line);
    big.extend_from_slice(b"\n");
    let at = big.as_ptr().wrapping_add(result_at);
    let m = codec.decode(&mut big).unwrap().unwrap();
    assert_eq!(m.to_vec(), line);
    assert_ne!(result_ptr(&m), at, "a 4 KiB buffer went with a short line");
    assert!(big.is_empty() && big.capacity() >= 4096 - line.len() - 1);
}

/// The server's own requests that cannot be decoded are reported with
/// their id, to be answered with JSON-RPC's error: nested past the limit
/// (-32700), JSON but not a request (-32600), not JSON (-32700).
#[test]
fn the_servers_broken_requests_are_reported_to_be_answered() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases = [
        (deep, RequestId::from("s1"), ErrorCode::PARSE_ERROR),
        (
            r#"{"jsonrpc":"1.0","id":2,"method":"roots/list"}"#.to_owned(),
            RequestId::Number(2),
            ErrorCode::INVALID_REQUEST,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"roots/list","id":3,"params":{"#.to_owned(),
            RequestId::Number(3),
            ErrorCode::PARSE_ERROR,
        ),
    ];
    for (line, id, code) in cases {
        let mut codec = JsonLineCodec::new();
        let mut buf = BytesMut::from(format!("{line}\n").as_str());
        let err = codec.decode(&mut buf).unwrap_err();
        let te = TransportError::from(err);
        let (got_id, got_code) = te.refused_request().expect("a refused request");
        assert_eq!((got_id, got_code), (&id, code), "{te:?}");
        assert!(
            te.request_id().is_none(),
            "never one of the client's requests"
        );
        assert!(!te.is_terminal());
    }
    // A notification that cannot be decoded answers nothing.
    let mut codec = JsonLineCodec::new();
    let mut buf = BytesMut::from("{\"jsonrpc\":\"1.0\",\"method\":\"x\"}\n");
    let te = TransportError::from(codec.decode(&mut buf).unwrap_err());
    assert!(te.refused_request().is_none());
}
