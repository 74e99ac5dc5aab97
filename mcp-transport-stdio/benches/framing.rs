//! Framing throughput (MB/s of newline-delimited JSON-RPC) for 64-byte and
//! 1 MiB messages:
//!
//! - `codec_decode`: [`JsonLineCodec::decode`] over bytes already in memory;
//! - `line_transport_recv`: [`LineTransport::poll_recv`] reading from an
//!   in-memory reader (64 KiB reads, decode, message out): the full receive path;
//! - `baseline_read_line_message`: `BufReader::read_line` + `serde_json::from_str::<Message>`;
//! - `baseline_read_line_value`: `BufReader::read_line` + `serde_json::from_str::<Value>`;
//! - `encode`: `JsonLineCodec::encode` into one buffer (the batched write path).
//!
//! Run: `cargo bench -p mcpio-transport-stdio --bench framing`

use std::io::BufRead;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use mcp_proto::Message;
use mcp_proto::transport::Transport;
use mcp_transport_stdio::{JsonLineCodec, LineTransport};

mod shared;
use shared::stream;

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[64, 1024 * 1024];

#[divan::bench(args = SIZES)]
fn codec_decode(bencher: Bencher<'_, '_>, size: usize) {
    let input = stream(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .with_inputs(|| BytesMut::from(&input[..]))
        .bench_local_values(|mut buf| {
            let mut codec = JsonLineCodec::new();
            let mut n = 0usize;
            while let Some(m) = codec.decode(&mut buf).expect("valid input") {
                black_box(m);
                n += 1;
            }
            n
        });
}

#[divan::bench(args = SIZES)]
fn line_transport_recv(bencher: Bencher<'_, '_>, size: usize) {
    // `Transport` needs a 'static reader.
    let input: &'static [u8] = Box::leak(stream(size).into_boxed_slice());
    let mut cx = Context::from_waker(Waker::noop());
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| {
            let mut t = LineTransport::new(input, tokio::io::sink());
            let mut n = 0usize;
            loop {
                match Pin::new(&mut t).poll_recv(&mut cx) {
                    Poll::Ready(Some(Ok(m))) => {
                        black_box(m);
                        n += 1;
                    }
                    Poll::Ready(None) => break,
                    Poll::Ready(Some(Err(e))) => panic!("{e}"),
                    Poll::Pending => {} // yield point; an in-memory reader is always ready
                }
            }
            n
        });
}

#[divan::bench(args = SIZES)]
fn baseline_read_line_message(bencher: Bencher<'_, '_>, size: usize) {
    let input = stream(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| {
            let mut r = std::io::BufReader::new(&input[..]);
            let mut line = String::new();
            let mut n = 0usize;
            while r.read_line(&mut line).expect("in-memory read") > 0 {
                let m: Message = serde_json::from_str(&line).expect("valid input");
                black_box(m);
                line.clear();
                n += 1;
            }
            n
        });
}

#[divan::bench(args = SIZES)]
fn baseline_read_line_value(bencher: Bencher<'_, '_>, size: usize) {
    let input = stream(size);
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| {
            let mut r = std::io::BufReader::new(&input[..]);
            let mut line = String::new();
            let mut n = 0usize;
            while r.read_line(&mut line).expect("in-memory read") > 0 {
                let m: serde_json::Value = serde_json::from_str(&line).expect("valid input");
                black_box(m);
                line.clear();
                n += 1;
            }
            n
        });
}

#[divan::bench(args = SIZES)]
fn encode(bencher: Bencher<'_, '_>, size: usize) {
    let input = stream(size);
    let mut buf = BytesMut::from(&input[..]);
    let mut codec = JsonLineCodec::new();
    let mut msgs = Vec::new();
    while let Some(m) = codec.decode(&mut buf).expect("valid input") {
        msgs.push(m);
    }
    let mut out = Vec::with_capacity(input.len() + 1024);
    bencher
        .counter(BytesCount::new(input.len()))
        .bench_local(|| {
            out.clear();
            for m in &msgs {
                codec.encode(m, &mut out);
            }
            out.len()
        });
}
