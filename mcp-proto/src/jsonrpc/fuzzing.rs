//! The envelope decoder checked against `serde_json` (the fuzz target
//! `fuzz/fuzz_targets/envelope.rs`; the unit tests use [`paths_agree`] too).
//! Compiled only for tests and `--cfg fuzzing`: not part of the API.

use serde_json::Value;
use serde_json::value::RawValue;

use super::decode::{decode_text_serde, fast_envelope, keep_text};
use super::{Message, scan};
use crate::RawJson;
use crate::schema::{CallToolParams, CallToolResult, call_tool_result_fast};

/// Both decoders on `text`: when the fast path takes a message, `serde_json`
/// must decode it to the same message (or the same envelope violation).
/// Returns whether the fast path took it.
pub fn paths_agree(text: &str) -> bool {
    let Some(env) = scan::envelope(text.as_bytes()).and_then(|s| fast_envelope(text, s)) else {
        return false;
    };
    let fast = keep_text(env, text.to_owned());
    let slow = decode_text_serde(text.to_owned());
    match (fast, slow) {
        (Ok(a), Ok(b)) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{text}");
            assert_eq!(a.to_vec(), b.to_vec(), "{text}");
        }
        (Err((a, _)), Err((b, _))) => assert_eq!(a, b, "{text}"),
        (a, b) => panic!("fast path {a:?} but serde_json {b:?} on {text}"),
    }
    true
}

/// The text-result fast path of [`CallToolResult::from_json`] against
/// `serde_json`: whenever it takes `text`, `serde_json` must decode `text`
/// to the same value (anything the fast path leaves goes to `serde_json`).
pub fn tool_result_agrees(text: &str) {
    if let Some(fast) = call_tool_result_fast(text) {
        let slow = serde_json::from_str::<CallToolResult>(text);
        assert!(
            matches!(&slow, Ok(s) if *s == fast),
            "fast path {fast:?} but serde_json {slow:?} on {text}"
        );
    }
}

/// The compact writer behind [`RawJson::from_value`] (`raw/compact.rs`)
/// against `serde_json`: `text` read as any JSON value, as `tools/call`
/// params (a struct with options, maps and `_meta`) and as a raw value must
/// encode to exactly the bytes `serde_json::to_string` writes.
pub fn writer_agrees(text: &str) {
    fn same<T: serde::Serialize>(v: &T, text: &str) {
        let ours = RawJson::from_value(v).map(|r| r.get().to_owned());
        let theirs = serde_json::to_string(v);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "encoding {text}"),
            (Err(_), Err(_)) => {}
            _ => panic!("compact writer {ours:?} but serde_json {theirs:?} on {text}"),
        }
    }
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        same(&v, text);
    }
    if let Ok(p) = serde_json::from_str::<CallToolParams>(text) {
        same(&p, text);
    }
    if let Ok(r) = serde_json::from_str::<Box<RawValue>>(text) {
        same(&r, text);
    }
}

/// Decodes `data` the ways a transport can and panics on any disagreement:
/// the scanner's fast path against `serde_json` ([`paths_agree`]), and the
/// tool result's ([`tool_result_agrees`], on the text and on its `result`); the
/// borrowing and owning entry points against each other; and a decoded
/// message against `serde_json`'s reading of the same text (valid JSON, the
/// same method, id and raw value) and against its own re-encoding.
pub fn envelope(data: &[u8]) {
    let decoded = Message::from_slice(data);
    let Ok(text) = std::str::from_utf8(data) else {
        assert!(decoded.is_err(), "not UTF-8 but decoded: {decoded:?}");
        return;
    };
    paths_agree(text);
    tool_result_agrees(text);
    writer_agrees(text);
    let owned = Message::try_from_string(text.to_owned()).map_err(|(e, back)| {
        assert_eq!(back, text, "the text handed back with the error");
        e
    });
    assert_eq!(format!("{decoded:?}"), format!("{owned:?}"), "{text}");
    let Ok(m) = decoded else {
        return;
    };
    assert!(
        serde_json::from_str::<&RawValue>(text).is_ok(),
        "decoded text serde_json rejects: {text}"
    );
    // `serde_json::Value` refuses some valid JSON (numbers beyond f64).
    if let Ok(Value::Object(v)) = serde_json::from_str::<Value>(text) {
        assert_eq!(
            v.get("method").and_then(Value::as_str),
            m.method(),
            "{text}"
        );
        if let Some(id) = m.id() {
            let want = id.to_value();
            let got = &v["id"];
            let same = got == &want || got.as_f64().is_some_and(|f| want.as_f64() == Some(f));
            assert!(same, "id {got} read as {id:?}: {text}");
        }
        if let Some(raw) = m.raw() {
            let key = if matches!(m, Message::Response(_)) {
                "result"
            } else {
                "params"
            };
            tool_result_agrees(raw.get());
            writer_agrees(raw.get());
            let raw: Value = serde_json::from_str(raw.get()).expect("raw value is JSON");
            assert_eq!(v.get(key), Some(&raw), "{key} of {text}");
        }
    }
    let bytes = m.to_vec();
    let again = Message::from_slice(&bytes).expect("a decoded message re-encodes to a message");
    assert_eq!(again.to_vec(), bytes, "re-encoding is stable: {text}");
}

#[cfg(test)]
mod tests {
    /// Every checked-in seed (and reproducer) of the fuzz target passes.
    #[test]
    fn the_seed_corpus_passes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/envelope");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            super::envelope(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
        assert!(n > 0, "no seeds in {dir}");
    }
}
