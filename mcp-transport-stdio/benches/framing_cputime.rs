//! The framing comparison of `framing.rs`, timed in *thread CPU time*
//! (best of 30 runs), so the ratios stay meaningful on a loaded machine
//! where wall-clock samples are mostly scheduling noise.
//!
//! Run: `cargo bench -p mcpio-transport-stdio --bench framing_cputime`

use std::io::BufRead;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use mcp_proto::Message;
use mcp_proto::transport::Transport;
use mcp_transport_stdio::{JsonLineCodec, LineTransport};

mod shared;
use shared::stream;

const RUNS: usize = 30;

#[cfg(unix)]
fn cpu_ns() -> u64 {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

#[cfg(not(unix))]
fn cpu_ns() -> u64 {
    0
}

/// Best (lowest) CPU time of `RUNS` runs of `f`, in ns.
fn best(mut f: impl FnMut()) -> u64 {
    (0..RUNS)
        .map(|_| {
            let t = cpu_ns();
            f();
            cpu_ns().saturating_sub(t).max(1)
        })
        .min()
        .unwrap_or(1)
}

fn main() {
    println!("{:>8}  {:<44} {:>9}", "message", "path", "MB/s");
    for size in [64usize, 1 << 20] {
        let input: &'static [u8] = Box::leak(stream(size).into_boxed_slice());
        let results = [
            (
                "baseline: read_line + from_str::<Message>",
                best(|| {
                    let mut r = std::io::BufReader::new(input);
                    let mut line = String::new();
                    while r.read_line(&mut line).expect("in-memory") > 0 {
                        let m: Message = serde_json::from_str(&line).expect("valid");
                        std::hint::black_box(m);
                        line.clear();
                    }
                }),
            ),
            (
                "baseline: read_line + from_str::<Value>",
                best(|| {
                    let mut r = std::io::BufReader::new(input);
                    let mut line = String::new();
                    while r.read_line(&mut line).expect("in-memory") > 0 {
                        let v: serde_json::Value = serde_json::from_str(&line).expect("valid");
                        std::hint::black_box(v);
                        line.clear();
                    }
                }),
            ),
            (
                "JsonLineCodec::decode (bytes in memory)",
                best(|| {
                    let mut buf = BytesMut::from(input);
                    let mut codec = JsonLineCodec::new();
                    while let Some(m) = codec.decode(&mut buf).expect("valid") {
                        std::hint::black_box(m);
                    }
                }),
            ),
            (
                "LineTransport::poll_recv (reads + decode)",
                best(|| {
                    let mut t = LineTransport::new(input, tokio::io::sink());
                    let mut cx = Context::from_waker(Waker::noop());
                    loop {
                        match Pin::new(&mut t).poll_recv(&mut cx) {
                            Poll::Ready(Some(m)) => {
                                std::hint::black_box(m.expect("valid"));
                            }
                            Poll::Ready(None) => break,
                            Poll::Pending => {}
                        }
                    }
                }),
            ),
        ];
        for (name, ns) in results {
            let mbps = input.len() as f64 / ns as f64 * 1e3;
            println!("{size:>8}  {name:<44} {mbps:>9.0}");
        }
    }
}
