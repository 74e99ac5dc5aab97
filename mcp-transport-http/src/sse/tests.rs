#![allow(clippy::indexing_slicing, clippy::panic)]

use super::*;

/// What a decoder produced from one input: events and errors in order, then
/// the final last event ID and retry.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    items: Vec<Result<SseEvent, SseError>>,
    last_id: String,
    retry: Option<Duration>,
}

fn drain(dec: &mut SseDecoder, buf: &mut BytesMut, items: &mut Vec<Result<SseEvent, SseError>>) {
    // A decoder returns `Ok(None)` once nothing more is decodable; errors
    // and events are interleaved. Bound the loop: a bug must fail, not hang.
    for _ in 0..100_000 {
        match dec.decode(buf) {
            Ok(None) => {
                assert!(
                    buf.len() <= dec.max_event_size().max(2),
                    "buffer grew past the limit: {} > {}",
                    buf.len(),
                    dec.max_event_size()
                );
                return;
            }
            other => items.push(other.map(|o| o.expect("checked above"))),
        }
    }
    panic!("decoder did not settle");
}

fn run(chunks: &[&[u8]], limit: usize) -> Outcome {
    let mut dec = SseDecoder::new().with_max_event_size(limit);
    let mut buf = BytesMut::new();
    let mut items = Vec::new();
    for c in chunks {
        buf.extend_from_slice(c);
        drain(&mut dec, &mut buf, &mut items);
    }
    loop {
        match dec.decode_eof(&mut buf) {
            Ok(None) => break,
            other => items.push(other.map(|o| o.expect("checked above"))),
        }
    }
    assert!(buf.is_empty());
    Outcome {
        items: items.into_iter().map(sizeless).collect(),
        last_id: dec.last_event_id().to_owned(),
        retry: dec.retry(),
    }
}

fn ev(event: &str, data: &str, id: &str) -> Result<SseEvent, SseError> {
    Ok(SseEvent {
        event: event.into(),
        data: data.into(),
        id: id.into(),
    })
}

fn msg(data: &str) -> Result<SseEvent, SseError> {
    ev("message", data, "")
}

struct Case {
    name: &'static str,
    input: &'static [u8],
    limit: usize,
    items: Vec<Result<SseEvent, SseError>>,
    last_id: &'static str,
    retry: Option<u64>,
}

fn case(name: &'static str, input: &'static [u8], items: Vec<Result<SseEvent, SseError>>) -> Case {
    Case {
        name,
        input,
        limit: DEFAULT_MAX_EVENT_SIZE,
        items,
        last_id: "",
        retry: None,
    }
}

impl Case {
    fn id(mut self, id: &'static str) -> Self {
        self.last_id = id;
        self
    }
    fn retry(mut self, ms: u64) -> Self {
        self.retry = Some(ms);
        self
    }
    fn limit(mut self, n: usize) -> Self {
        self.limit = n;
        self
    }
}

fn too_large(limit: usize) -> Result<SseEvent, SseError> {
    Err(SseError::EventTooLarge { limit, size: 0 })
}

/// How much of a dropped event had arrived depends on how the input was
/// split: compared without it (`an_oversized_event_says_how_much_arrived`
/// checks it).
fn sizeless(item: Result<SseEvent, SseError>) -> Result<SseEvent, SseError> {
    item.map_err(|e| match e {
        SseError::EventTooLarge { limit, .. } => SseError::EventTooLarge { limit, size: 0 },
    })
}

/// The WHATWG rules, one case each (most from the spec's examples).
fn cases() -> Vec<Case> {
    vec![
        case("lf", b"data: a\n\n", vec![msg("a")]),
        case("crlf", b"data: a\r\n\r\n", vec![msg("a")]),
        case("lone cr", b"data: a\r\r", vec![msg("a")]),
        case("mixed ends", b"data: a\r\ndata: b\rdata: c\n\r\n", vec![msg("a\nb\nc")]),
        case("cr then lf is one end, not two", b"data: a\r\n\ndata: b\n\n", vec![msg("a"), msg("b")]),
        case("two events", b"data: 1\n\ndata: 2\n\n", vec![msg("1"), msg("2")]),
        // Spec example: "YHOO / +2 / 10" joined with LF.
        case("multi-line data", b"data: YHOO\ndata: +2\ndata: 10\n\n", vec![msg("YHOO\n+2\n10")]),
        case("bom stripped", b"\xEF\xBB\xBFdata: a\n\n", vec![msg("a")]),
        // Only one BOM, only at the start: a second one makes the field name "\u{FEFF}data".
        case("second bom is not stripped", b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", vec![]),
        case("bom-like bytes later are data", b"data: \xEF\xBB\xBFx\n\n", vec![msg("\u{FEFF}x")]),
        case("comment", b": hello\ndata: a\n\n", vec![msg("a")]),
        case("comments only", b":\n:\n\n: keep-alive\n\n", vec![]),
        case("no space after colon", b"data:a\n\n", vec![msg("a")]),
        case("only one space removed", b"data:  a \n\n", vec![msg(" a ")]),
        case("empty data field dispatches empty string", b"data\n\n", vec![msg("")]),
        case("two empty data fields", b"data\ndata\n\n", vec![msg("\n")]),
        case("data with colon only", b"data:\n\n", vec![msg("")]),
        case("colon in value kept", b"data: a:b: c\n\n", vec![msg("a:b: c")]),
        case("event type", b"event: add\ndata: 73857293\n\n", vec![ev("add", "73857293", "")]),
        case("event type last wins", b"event: a\nevent: b\ndata: x\n\n", vec![ev("b", "x", "")]),
        case("event type resets after dispatch", b"event: a\ndata: x\n\ndata: y\n\n", vec![ev("a", "x", ""), msg("y")]),
        case("event type without data is dropped", b"event: a\n\ndata: y\n\n", vec![msg("y")]),
        case("empty event type means message", b"event:\ndata: y\n\n", vec![msg("y")]),
        case("id", b"id: 1\ndata: a\n\n", vec![ev("message", "a", "1")]).id("1"),
        case("id persists to later events", b"id: 1\ndata: a\n\ndata: b\n\n", vec![ev("message", "a", "1"), ev("message", "b", "1")]).id("1"),
        case("empty id resets", b"id: 1\ndata: a\n\nid\ndata: b\n\n", vec![ev("message", "a", "1"), ev("message", "b", "")]),
        case("id with nul is ignored", b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", vec![ev("message", "a", "1"), ev("message", "b", "1")]).id("1"),
        case("id-only block moves the cursor without dispatch", b"id: 5\n\n", vec![]).id("5"),
        // MCP priming event: id plus empty data dispatches "" and sets the id.
        case("priming event", b"id: 7\ndata:\n\n", vec![ev("message", "", "7")]).id("7"),
        case("id set but event never ended", b"id: 9\ndata: x\n", vec![]),
        case("retry digits", b"retry: 1500\n\n", vec![]).retry(1500),
        case("retry with plus ignored", b"retry: +5\n\n", vec![]),
        case("retry with space ignored", b"retry: 5 \n\n", vec![]),
        case("retry empty ignored", b"retry:\n\n", vec![]),
        case("retry negative ignored", b"retry: -1\n\n", vec![]),
        case("retry overflow ignored", b"retry: 99999999999999999999999\n\n", vec![]),
        case("retry last valid wins", b"retry: 10\nretry: x\nretry: 20\n\n", vec![]).retry(20),
        case("unknown field ignored", b"foo: bar\ndata: a\n\n", vec![msg("a")]),
        case("field names are case-sensitive", b"Data: a\n\n", vec![]),
        case("line without colon is a field name", b"data\n\n", vec![msg("")]),
        case("partial event at eof discarded", b"data: a\n\ndata: b", vec![msg("a")]),
        case("partial event with newline at eof discarded", b"data: a\n\ndata: b\n", vec![msg("a")]),
        case("blank lines alone", b"\n\n\r\n\r\r", vec![]),
        case("invalid utf-8 replaced", b"data: a\xFFb\n\n", vec![msg("a\u{FFFD}b")]),
        case("truncated utf-8 before newline", b"data: \xE4\xB8\ndata: x\n\n", vec![msg("\u{FFFD}\nx")]),
        case("non-ascii data", "data: héllo 世界\n\n".as_bytes(), vec![msg("héllo 世界")]),
        case("spec example stock", b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
            vec![ev("message", "first event", "1"), ev("message", "second event", ""), ev("message", " third event", "")]),
        case("cr at end of stream", b"data: a\r\r", vec![msg("a")]),
        // Limits: lines of an event count, comments don't.
        case("event at the limit passes", b"data: 12345\n\n", vec![msg("12345")]).limit(11),
        case("event over the limit", b"data: 123456\n\ndata: ok\n\n", vec![too_large(11), msg("ok")]).limit(11),
        case("over the limit across lines", b"data: 1234\ndata: 1234\ndata: x\n\ndata: ok\n\n", vec![too_large(16), msg("ok")]).limit(16),
        case("comments do not count", b": 0123456789\n: 0123456789\ndata: a\n\n", vec![msg("a")]).limit(12),
        case("endless comment line bounded", b": 01234567890123456789\ndata: a\n\n", vec![too_large(12)]).limit(12),
        case("endless line without end", b"data: 0123456789012345678901234567890123456789", vec![too_large(16)]).limit(16),
        case("discard resumes after blank line", b"id: 1\ndata: 0123456789abcdef\nid: 2\ndata: y\n\ndata: z\n\n",
            vec![too_large(16), ev("message", "z", "1")]).limit(16).id("1"),
    ]
}

#[test]
fn spec_cases_single_feed() {
    for c in cases() {
        let got = run(&[c.input], c.limit);
        let want = Outcome {
            items: c.items,
            last_id: c.last_id.into(),
            retry: c.retry.map(Duration::from_millis),
        };
        assert_eq!(got, want, "case {:?}", c.name);
    }
}

/// hyper's "shotgun" approach: every split point (and every pair of split
/// points for short inputs) gives the same result as one feed.
#[test]
fn every_split_point_matches_single_feed() {
    for c in cases() {
        let whole = run(&[c.input], c.limit);
        let n = c.input.len();
        for i in 0..=n {
            let (a, b) = c.input.split_at(i);
            assert_eq!(
                run(&[a, b], c.limit),
                whole,
                "case {:?} split at {i}",
                c.name
            );
        }
        if n <= 64 {
            for i in 0..=n {
                for j in i..=n {
                    let parts = [&c.input[..i], &c.input[i..j], &c.input[j..]];
                    assert_eq!(
                        run(&parts, c.limit),
                        whole,
                        "case {:?} split at {i},{j}",
                        c.name
                    );
                }
            }
        }
        // One byte at a time.
        let bytes: Vec<&[u8]> = c.input.chunks(1).collect();
        assert_eq!(run(&bytes, c.limit), whole, "case {:?} bytewise", c.name);
    }
}

#[test]
fn crlf_split_across_chunks_is_one_line_end() {
    // "data: a\r" | "\n" | "\ndata: b\n\n": without skip_lf this would
    // dispatch at the split and then see an extra blank line.
    let got = run(
        &[b"data: a\r", b"\n", b"data: b\n\n"],
        DEFAULT_MAX_EVENT_SIZE,
    );
    assert_eq!(got.items, vec![msg("a\nb")]);
}

#[test]
fn bom_split_across_chunks() {
    let got = run(
        &[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"],
        DEFAULT_MAX_EVENT_SIZE,
    );
    assert_eq!(got.items, vec![msg("a")]);
    // A partial BOM that turns out not to be one is a field-name byte.
    let got = run(&[b"\xEF", b"data: a\n\n"], DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(got.items, vec![]);
}

#[test]
fn many_events_in_one_chunk_come_out_one_per_call() {
    let mut dec = SseDecoder::new();
    let mut buf = BytesMut::from(&b"data: 1\n\ndata: 2\n\ndata: 3\n\n"[..]);
    assert_eq!(dec.decode(&mut buf).unwrap().unwrap().data, "1");
    assert_eq!(dec.decode(&mut buf).unwrap().unwrap().data, "2");
    assert_eq!(dec.decode(&mut buf).unwrap().unwrap().data, "3");
    assert_eq!(dec.decode(&mut buf).unwrap(), None);
    assert!(buf.is_empty());
}

#[test]
fn buffer_stays_bounded_on_endless_line() {
    let mut dec = SseDecoder::new().with_max_event_size(1024);
    let mut buf = BytesMut::new();
    let mut errors = 0;
    for _ in 0..1000 {
        buf.extend_from_slice(&[b'x'; 100]);
        match dec.decode(&mut buf) {
            Ok(None) => {}
            Err(SseError::EventTooLarge { limit: 1024, size }) => {
                assert!(size > 1024 && size <= 1124, "{size}");
                errors += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(buf.len() <= 1024);
    }
    // Reported once, then discarded silently until a blank line.
    assert_eq!(errors, 1);
    buf.extend_from_slice(b"\n\ndata: after\n\n");
    assert_eq!(dec.decode(&mut buf).unwrap().unwrap().data, "after");
}

#[test]
fn resumed_stream_keeps_last_event_id_and_retry() {
    let mut dec = SseDecoder::new();
    let mut buf = BytesMut::from(&b"retry: 250\nid: 4\ndata:\n\ndata: part"[..]);
    assert_eq!(dec.decode(&mut buf).unwrap().unwrap().data, "");
    assert_eq!(dec.decode_eof(&mut buf).unwrap(), None);
    assert_eq!(dec.last_event_id(), "4");
    assert_eq!(dec.retry(), Some(Duration::from_millis(250)));
    // A BOM is allowed again at the start of the new stream.
    let mut buf = BytesMut::from(&b"\xEF\xBB\xBFdata: x\n\n"[..]);
    let e = dec.decode(&mut buf).unwrap().unwrap();
    assert_eq!((e.data.as_str(), e.id.as_str()), ("x", "4"));
}

#[test]
fn set_last_event_id_rejects_nul() {
    let mut dec = SseDecoder::new();
    dec.set_last_event_id("a");
    dec.set_last_event_id("b\0");
    assert_eq!(dec.last_event_id(), "a");
}

/// A small deterministic pseudo-random generator (no dev-dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Random streams over a tiny alphabet rich in SSE syntax, cut at random
/// points: the chunked outcome always equals the single-feed outcome and the
/// buffer stays bounded (the fuzz target checks the same with coverage).
#[test]
fn random_streams_are_chunking_invariant() {
    const TOKENS: &[&[u8]] = &[
        b"data",
        b"id",
        b"retry",
        b"event",
        b":",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"0",
        b"12",
        b"x",
        b"\x00",
        b"\xEF\xBB\xBF",
        b"\xEF",
        b"\xFF",
    ];
    let mut rng = Lcg(0x5EED);
    for round in 0..3000 {
        let len = (rng.next() % 40) as usize;
        let input: Vec<u8> = (0..len)
            .flat_map(|_| TOKENS[(rng.next() as usize) % TOKENS.len()].iter().copied())
            .collect();
        let limit = 1 + (rng.next() % 40) as usize;
        let whole = run(&[&input], limit);
        let mut chunks = Vec::new();
        let mut rest = &input[..];
        while !rest.is_empty() {
            let n = 1 + (rng.next() as usize) % rest.len();
            let (a, b) = rest.split_at(n);
            chunks.push(a);
            rest = b;
        }
        assert_eq!(
            run(&chunks, limit),
            whole,
            "round {round}: {:?}",
            String::from_utf8_lossy(&input)
        );
    }
}

/// The fuzz harness on its seed corpus and random inputs, on stable.
#[test]
fn fuzz_regression_partial_bom_with_tiny_limit() {
    // fuzz/corpus/sse_decoder/crash-54ce35…: limit 1, a BOM fed bytewise.
    super::fuzzing::sse_decoder(b"\x00\xEF\xBB\xBF4\x05\xEF\x9D");
}

#[test]
fn fuzz_harness_smoke() {
    let mut rng = Lcg(42);
    super::fuzzing::sse_decoder(b"\x10data: a\r\n\r\nid: 1\ndata:\n\n");
    super::fuzzing::sse_decoder(
        b"\x05\xEF\xBB\xBFevent: x\rdata: 0123456789abcdef\r\r: c\nretry: 10\n\n",
    );
    for _ in 0..2000 {
        let len = (rng.next() % 120) as usize;
        let data: Vec<u8> = (0..len)
            .map(|_| b"\x05data:id \r\n\x00\xEFretry9:"[(rng.next() as usize) % 19])
            .collect();
        super::fuzzing::sse_decoder(&data);
    }
}

/// Every checked-in seed (and reproducer) of the `sse_decoder` fuzz target passes.
#[test]
fn the_fuzz_seed_corpus_passes() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/sse_decoder");
    for entry in std::fs::read_dir(dir).unwrap() {
        super::fuzzing::sse_decoder(&std::fs::read(entry.unwrap().path()).unwrap());
    }
}

/// An event over the limit says how much of it had arrived and keeps the
/// start of its data, to tell which request the message answered.
#[test]
fn an_oversized_event_says_how_much_arrived_and_keeps_its_head() {
    let head = br#"{"jsonrpc":"2.0","id":7,"result":{"content":"#;
    // A data line that never ends.
    let mut dec = SseDecoder::new().with_max_event_size(100);
    let mut buf = BytesMut::from(&b"id: 3\ndata: "[..]);
    buf.extend_from_slice(head);
    assert_eq!(dec.decode(&mut buf), Ok(None));
    buf.extend_from_slice(&[b'x'; 200]);
    let e = dec.decode(&mut buf).unwrap_err();
    assert!(
        matches!(e, SseError::EventTooLarge { limit: 100, size } if size > 100),
        "{e:?}"
    );
    assert!(e.to_string().contains("at least"), "{e}");
    assert!(
        dec.dropped_head().starts_with(head),
        "{:?}",
        dec.dropped_head()
    );
    // Over several data lines: the earlier lines come first, joined.
    let mut dec = SseDecoder::new().with_max_event_size(60);
    let mut buf = BytesMut::from(&b"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":\"a\",\"result\":\"0123456789012345678901234567890\"}\n\n"[..]);
    // Both lines whole: the size is theirs (without the line ends).
    let lines = 23 + 58;
    assert_eq!(
        dec.decode(&mut buf),
        Err(SseError::EventTooLarge {
            limit: 60,
            size: lines
        })
    );
    assert!(
        dec.dropped_head()
            .starts_with(b"{\"jsonrpc\":\"2.0\",\n\"id\":\"a\"")
    );
    assert_eq!(
        mcp_proto::jsonrpc::Dropped::learn(dec.dropped_head(), b""),
        mcp_proto::jsonrpc::Dropped::Answer("a".into())
    );
    // A comment line over the limit keeps no head.
    let mut buf = BytesMut::from(
        &b":xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"[..],
    );
    let mut dec = SseDecoder::new().with_max_event_size(60);
    assert!(dec.decode(&mut buf).is_err());
    assert!(dec.dropped_head().is_empty());
}
