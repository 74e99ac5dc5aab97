//! The line codec under arbitrary input (the fuzz target
//! `fuzz/fuzz_targets/stdio_codec.rs`). Compiled only for tests and
//! `--cfg fuzzing`: not part of the API.

use bytes::BytesMut;
use mcp_proto::Message;
use mcp_proto::jsonrpc::{DecodeError, Dropped};
use serde_json::value::RawValue;

use crate::{JsonLineCodec, JsonLineCodecError};

type Outcome = Vec<Result<Vec<u8>, JsonLineCodecError>>;

/// Feeds `chunks` one by one, decoding after each, then ends the input.
fn run<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, limit: usize) -> Outcome {
    let mut codec = JsonLineCodec::new().with_max_message_size(limit);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let push = |r: Result<Option<Message>, JsonLineCodecError>, out: &mut Outcome| match r {
        Ok(None) => false,
        Ok(Some(m)) => {
            out.push(Ok(m.to_vec()));
            true
        }
        Err(e) => {
            out.push(Err(e));
            true
        }
    };
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while push(codec.decode(&mut buf), &mut out) {}
        // Only a partial line of at most `limit` bytes is ever held.
        assert!(buf.len() <= limit, "buffer {} > limit {limit}", buf.len());
    }
    while push(codec.decode_eof(&mut buf), &mut out) {}
    assert!(buf.is_empty(), "decode_eof leaves an empty buffer");
    // How much of an oversized line had arrived when it was reported
    // depends on how the input was split (a line whose start names the
    // request it answers is reported as soon as the limit is crossed):
    // compared without it.
    for r in &mut out {
        if let Err(JsonLineCodecError::LineTooLong { len, ended, .. }) = r {
            *len = 0;
            *ended = false;
        }
    }
    out
}

/// What a line must give by the codec's documented table.
#[derive(Debug, PartialEq)]
enum Expected {
    Message(Vec<u8>),
    TooLong,
    Invalid(DecodeError),
    /// Not JSON, shaped like an answer.
    Undecodable(DecodeError),
}

/// The last bytes of a line the codec looks at for a trailing `id`.
fn tail(line: &[u8]) -> &[u8] {
    line.get(line.len().saturating_sub(256)..)
        .unwrap_or_default()
}

fn expected(input: &[u8], limit: usize) -> Vec<Expected> {
    let mut out = Vec::new();
    for line in input.split(|&b| b == b'\n') {
        if line.len() > limit {
            out.push(Expected::TooLong);
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match Message::from_slice(line) {
            Ok(m) => out.push(Expected::Message(m.to_vec())),
            // Valid JSON that is not a message is reported; other lines are noise.
            Err(e) if serde_json::from_slice::<&RawValue>(line).is_ok() => {
                out.push(Expected::Invalid(e));
            }
            Err(e)
                if matches!(
                    Dropped::learn(line, tail(line)),
                    Dropped::Answer(_) | Dropped::UnknownAnswer | Dropped::Request(_)
                ) =>
            {
                out.push(Expected::Undecodable(e));
            }
            Err(_) => {}
        }
    }
    out
}

/// Decodes `data` whole, in chunks sized by its own bytes and byte by byte;
/// panics unless all three give what each line gives alone, the buffer stays
/// within the limit, and every message re-encodes to one line that decodes
/// to itself. The first byte picks the limit (8..=512 bytes).
pub fn stdio_codec(data: &[u8]) {
    let Some((&ctl, input)) = data.split_first() else {
        return;
    };
    let limit = 8 + usize::from(ctl & 0x3F) * 8;
    let whole = run([input], limit);
    let model: Vec<Expected> = whole
        .iter()
        .map(|r| match r {
            Ok(m) => Expected::Message(m.clone()),
            Err(JsonLineCodecError::LineTooLong { .. }) => Expected::TooLong,
            Err(
                JsonLineCodecError::Message(e)
                | JsonLineCodecError::BrokenAnswer { error: e, .. }
                | JsonLineCodecError::BrokenRequest { error: e, .. },
            ) => Expected::Invalid(e.clone()),
            Err(
                JsonLineCodecError::UndecodableAnswer { error, .. }
                | JsonLineCodecError::UndecodableRequest { error, .. },
            ) => Expected::Undecodable(error.clone()),
        })
        .collect();
    assert_eq!(model, expected(input, limit), "whole input");

    let mut chunks = Vec::new();
    let mut rest = input;
    let mut sizes = input.iter().rev().cycle();
    while !rest.is_empty() {
        let n = 1 + usize::from(*sizes.next().unwrap_or(&0) % 16);
        let (a, b) = rest.split_at(n.min(rest.len()));
        chunks.push(a);
        rest = b;
    }
    assert_eq!(run(chunks, limit), whole, "chunked decoding differs");
    assert_eq!(
        run(input.chunks(1), limit),
        whole,
        "bytewise decoding differs"
    );

    for m in whole.iter().filter_map(|r| r.as_ref().ok()) {
        let msg = Message::from_slice(m).expect("a decoded message decodes again");
        let mut line = Vec::new();
        JsonLineCodec::new().encode(&msg, &mut line);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        let back = run([&line[..]], line.len());
        assert_eq!(
            back,
            vec![Ok(line[..line.len() - 1].to_vec())],
            "encode → decode"
        );
    }
}

#[cfg(test)]
mod tests {
    /// Every checked-in seed (and reproducer) of the fuzz target passes.
    #[test]
    fn the_seed_corpus_passes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/stdio_codec");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            super::stdio_codec(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
        assert!(n > 0, "no seeds in {dir}");
    }
}
