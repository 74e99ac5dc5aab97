//! The demo server's chaos mode, for `cargo xtask soak`: with
//! `MCP_DEMO_CHAOS=<seed>` in its environment, answers are delayed (and so
//! reordered), dropped, duplicated, turned into errors, preceded by garbage,
//! replaced by JSON that is not JSON-RPC or by a line over the client's
//! limit (`MCP_DEMO_CHAOS_BIG` bytes, default 128 KiB), and now and then the
//! server crashes mid-line or disconnects.
//!
//! With `MCP_DEMO_CHAOS=oversized` it only does one thing: every
//! `tools/call` answer is a valid line of `MCP_DEMO_CHAOS_BIG` bytes (the
//! oversized-answer tests, `tests/dropped_answer.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorResponse, Message};
use mcp_proto::{ErrorCode, ErrorObject};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The chaos settings, if `MCP_DEMO_CHAOS` asks for them.
#[derive(Debug)]
pub(crate) struct Chaos {
    rng: u64,
    big: usize,
    /// `MCP_DEMO_CHAOS=oversized`: only the oversized `tools/call` answers.
    oversized: bool,
}

impl Chaos {
    pub(crate) fn from_env() -> Option<Chaos> {
        let mode = std::env::var("MCP_DEMO_CHAOS").ok()?;
        let oversized = mode == "oversized";
        let seed: u64 = if oversized { 1 } else { mode.parse().ok()? };
        let big = std::env::var("MCP_DEMO_CHAOS_BIG")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(128 * 1024);
        Some(Chaos {
            rng: (seed ^ u64::from(std::process::id())).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            big,
            oversized,
        })
    }

    fn next(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }

    /// Writes `rx`'s messages to `writer`, misbehaving.
    pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
        mut self,
        mut rx: mpsc::Receiver<Message>,
        mut writer: W,
    ) -> std::io::Result<()> {
        let mut delayed: BinaryHeap<Reverse<(Instant, u64, Vec<u8>)>> = BinaryHeap::new();
        let mut seq = 0u64;
        loop {
            let next_due = delayed.peek().map(|Reverse((t, _, _))| *t);
            let msg = tokio::select! {
                m = rx.recv() => match m {
                    Some(m) => m,
                    None => break,
                },
                () = sleep_until(next_due) => {
                    if let Some(Reverse((_, _, line))) = delayed.pop() {
                        writer.write_all(&line).await?;
                        writer.flush().await?;
                    }
                    continue;
                }
            };
            let Some(id) = msg
                .id()
                .cloned()
                .filter(|_| matches!(msg, Message::Response(_) | Message::Error(_)))
            else {
                write(&mut writer, &line_of(&msg)).await?;
                continue;
            };
            let line = line_of(&msg);
            let id_json = serde_json::to_string(&id).unwrap_or_else(|_| "0".into());
            if self.oversized {
                let is_call_result = matches!(&msg, Message::Response(r) if r.result.get().contains("\"content\":["));
                if is_call_result {
                    write_big(&mut writer, &id_json, self.big).await?;
                } else {
                    write(&mut writer, &line).await?;
                }
                continue;
            }
            match self.next(1000) {
                // Dropped: the call times out.
                0..30 => {}
                30..60 => {
                    write(&mut writer, &line).await?;
                    write(&mut writer, &line).await?;
                }
                60..90 => {
                    write(&mut writer, b"chaos: \x01 garbage that is not JSON\n").await?;
                    write(&mut writer, &line).await?;
                }
                // JSON, not JSON-RPC, answering the call.
                90..110 => {
                    let broken =
                        format!("{{\"jsonrpc\":\"1.0\",\"id\":{id_json},\"result\":{{}}}}\n");
                    write(&mut writer, broken.as_bytes()).await?;
                }
                110..170 => {
                    seq += 1;
                    let wait = Duration::from_millis(self.next(400));
                    delayed.push(Reverse((Instant::now() + wait, seq, line)));
                }
                170..200 => {
                    let e = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "chaos: refused");
                    write(
                        &mut writer,
                        &line_of(&ErrorResponse::new(Some(id), e).into()),
                    )
                    .await?;
                }
                // Over the client's limit, the id first or last.
                200..206 => {
                    let pad = "x".repeat(self.big);
                    let big = if self.next(2) == 0 {
                        format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"result\":{{\"pad\":\"{pad}\"}}}}\n"
                        )
                    } else {
                        format!(
                            "{{\"result\":{{\"pad\":\"{pad}\"}},\"jsonrpc\":\"2.0\",\"id\":{id_json}}}\n"
                        )
                    };
                    write(&mut writer, big.as_bytes()).await?;
                }
                // Crash mid-line.
                206..208 => {
                    let half = line.get(..line.len() / 2).unwrap_or_default();
                    writer.write_all(half).await?;
                    writer.flush().await?;
                    std::process::exit(70);
                }
                // Disconnect cleanly.
                208..209 => {
                    writer.shutdown().await?;
                    std::process::exit(0);
                }
                _ => write(&mut writer, &line).await?,
            }
        }
        writer.shutdown().await
    }
}

/// A valid answer to `id` of about `size` bytes, written in 1 MiB pieces.
async fn write_big<W: AsyncWrite + Unpin>(
    w: &mut W,
    id_json: &str,
    size: usize,
) -> std::io::Result<()> {
    let head = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
    );
    let tail = b"\"}]}}\n";
    w.write_all(head.as_bytes()).await?;
    let chunk = vec![b'x'; 1 << 20];
    let mut left = size.saturating_sub(head.len() + tail.len());
    while left > 0 {
        let n = left.min(chunk.len());
        w.write_all(chunk.get(..n).unwrap_or_default()).await?;
        left -= n;
    }
    w.write_all(tail).await?;
    w.flush().await
}

fn line_of(msg: &Message) -> Vec<u8> {
    let mut buf = msg.to_vec();
    buf.push(b'\n');
    buf
}

async fn write<W: AsyncWrite + Unpin>(w: &mut W, line: &[u8]) -> std::io::Result<()> {
    w.write_all(line).await?;
    w.flush().await
}

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
