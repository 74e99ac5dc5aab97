//! SSE decoder throughput against a naive line-splitting baseline.
//!
//! Run: `cargo bench -p mcpio-transport-http --bench sse`
//! Input is fed in 8 KiB chunks, as a socket would deliver it.

use bytes::BytesMut;
use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use mcp_transport_http::sse::SseDecoder;

fn main() {
    divan::main();
}

const CHUNK: usize = 8 * 1024;

/// `n` events of JSON-RPC-like data, each `size` bytes of payload.
fn stream(n: usize, size: usize) -> Vec<u8> {
    let payload = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"text\":\"{}\"}}}}",
        "x".repeat(size.saturating_sub(48))
    );
    let mut out = Vec::new();
    for i in 0..n {
        out.extend_from_slice(
            format!("id: {i}\r\nevent: message\r\ndata: {payload}\r\n\r\n").as_bytes(),
        );
    }
    out
}

fn inputs() -> [(&'static str, Vec<u8>); 2] {
    [
        ("small_200B_x5000", stream(5000, 200)),
        ("large_1MiB_x4", stream(4, 1024 * 1024)),
    ]
}

#[divan::bench(args = ["small_200B_x5000", "large_1MiB_x4"])]
fn sse_decoder(bencher: Bencher<'_, '_>, name: &str) {
    let input = inputs()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .unwrap_or_default();
    bencher.counter(BytesCount::new(input.len())).bench(|| {
        let mut dec = SseDecoder::new();
        let mut buf = BytesMut::with_capacity(CHUNK);
        let mut events = 0usize;
        for chunk in input.chunks(CHUNK) {
            buf.extend_from_slice(chunk);
            while let Ok(Some(ev)) = dec.decode(&mut buf) {
                events += ev.data.len();
            }
        }
        black_box(events)
    });
}

/// The common hand-written parser: a `String` buffer, `find('\n')` from the
/// start on every chunk, `drain` each line, `data:` prefix matching.
#[divan::bench(args = ["small_200B_x5000", "large_1MiB_x4"])]
fn naive_line_split(bencher: Bencher<'_, '_>, name: &str) {
    let input = inputs()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .unwrap_or_default();
    bencher.counter(BytesCount::new(input.len())).bench(|| {
        let mut buf = String::new();
        let mut data = String::new();
        let mut events = 0usize;
        for chunk in input.chunks(CHUNK) {
            buf.push_str(&String::from_utf8_lossy(chunk));
            while let Some(pos) = buf.find('\n') {
                let line: String = buf.drain(..=pos).collect();
                let line = line.trim_end_matches(['\r', '\n']);
                if line.is_empty() {
                    events += data.len();
                    data.clear();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
        }
        black_box(events)
    });
}
