//! Envelope decode: one JSON-RPC response (a `tools/call` result with one
//! text block of 64 B or 1 MiB) from its text to a [`Message`], then to the
//! typed [`CallToolResult`], against `serde_json` baselines:
//!
//! - `message_from_string`: [`Message::from_string`] (the transports' path:
//!   scanner, raw result kept as a span of the text);
//! - `message_then_typed`: the above, then `result.decode::<CallToolResult>()`
//!   (what a `tools/call` costs end to end in decoding);
//! - `serde_message`: `serde_json::from_str::<Message>` (the generic
//!   `Deserialize` impl: owned raw values);
//! - `serde_value`: `serde_json::from_str::<Value>` (a naive client);
//! - `serde_typed_once`: one `serde_json` pass straight into a typed response
//!   struct, the floor a client that knows the result type up front can reach.
//!
//! Run: `cargo bench -p mcpio-proto --bench envelope`

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use mcp_proto::Message;
use mcp_proto::schema::CallToolResult;

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[64, 1024 * 1024];

fn response(size: usize) -> String {
    let text: String = (0..size)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    format!(
        r#"{{"jsonrpc":"2.0","id":42,"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

#[divan::bench(args = SIZES)]
fn message_from_string(bencher: Bencher<'_, '_>, size: usize) {
    let input = response(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .with_inputs(|| input.clone())
        .bench_local_values(|text| Message::from_string(text).expect("valid"));
}

#[divan::bench(args = SIZES)]
fn message_then_typed(bencher: Bencher<'_, '_>, size: usize) {
    let input = response(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .with_inputs(|| input.clone())
        .bench_local_values(|text| {
            let Ok(Message::Response(r)) = Message::from_string(text) else {
                panic!("not a response")
            };
            r.result.decode::<CallToolResult>().expect("valid")
        });
}

#[divan::bench(args = SIZES)]
fn serde_message(bencher: Bencher<'_, '_>, size: usize) {
    let input = response(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| serde_json::from_str::<Message>(black_box(&input)).expect("valid"));
}

#[divan::bench(args = SIZES)]
fn serde_value(bencher: Bencher<'_, '_>, size: usize) {
    let input = response(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| {
            serde_json::from_str::<serde_json::Value>(black_box(&input)).expect("valid")
        });
}

#[divan::bench(args = SIZES)]
fn serde_typed_once(bencher: Bencher<'_, '_>, size: usize) {
    #[derive(serde::Deserialize)]
    struct Typed {
        #[allow(dead_code)]
        id: i64,
        #[allow(dead_code)]
        result: CallToolResult,
    }
    let input = response(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| serde_json::from_str::<Typed>(black_box(&input)).expect("valid"));
}
