//! What one soak phase counts and checks, and how it reports.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mcp_client::ClientError;
use mcp_proto::schema::{CallToolResult, ContentBlock};

/// How late past its deadline a call may end (a loaded 2-core machine).
pub const SLACK: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct Tally {
    pub calls: u64,
    pub outcomes: BTreeMap<String, u64>,
    pub worst_late: Duration,
    /// The slowest connect, failed ones included.
    pub worst_connect: Duration,
    /// stdio: the longest a server lived on after its client was closed.
    pub worst_exit: Duration,
    pub violations: Vec<String>,
}

impl Tally {
    pub fn count(&mut self, k: impl Into<String>) {
        *self.outcomes.entry(k.into()).or_default() += 1;
    }

    pub fn merge(&mut self, other: Tally) {
        self.calls += other.calls;
        self.worst_late = self.worst_late.max(other.worst_late);
        self.worst_connect = self.worst_connect.max(other.worst_connect);
        self.worst_exit = self.worst_exit.max(other.worst_exit);
        self.violations.extend(other.violations);
        for (k, v) in other.outcomes {
            *self.outcomes.entry(k).or_default() += v;
        }
    }

    /// Checks one call that took `took` against `timeout` and its answer
    /// against the caller's `payload`; returns its outcome's kind.
    pub fn call(
        &mut self,
        payload: &str,
        started: Instant,
        timeout: Duration,
        r: Result<Result<CallToolResult, ClientError>, tokio::time::error::Elapsed>,
    ) -> &'static str {
        let took = started.elapsed();
        self.calls += 1;
        self.worst_late = self.worst_late.max(took.saturating_sub(timeout));
        if took > timeout + SLACK {
            self.violations.push(format!(
                "call {payload} took {took:?}: {:?}",
                r.as_ref().map(|r| r.as_ref().err())
            ));
        }
        let k = match r {
            Err(_) => {
                self.violations.push(format!("call {payload} never ended"));
                "hung"
            }
            Ok(Ok(res)) => {
                if text(&res) != payload {
                    self.violations
                        .push(format!("call {payload} got {:?}", text(&res)));
                }
                "ok"
            }
            Ok(Err(e)) => kind(&e),
        };
        self.count(k);
        k
    }
}

pub fn kind(e: &ClientError) -> &'static str {
    match e {
        ClientError::Timeout { .. } => "timeout",
        ClientError::AnswerDropped { .. } => "answer dropped",
        ClientError::Rpc(_) => "rpc error",
        ClientError::Closed(_) => "closed",
        ClientError::Transport(_) => "transport",
        ClientError::Decode { .. } => "decode",
        _ => "other",
    }
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Prints one phase's numbers and adds the drift violations.
pub fn report(
    name: &str,
    seconds: f64,
    epochs: usize,
    samples: &[(u64, usize)],
    warmup: usize,
    extra: &[String],
    tally: &mut Tally,
) {
    let after = &samples[warmup.min(samples.len() - 1)..];
    let (rss0, fd0) = after[0];
    let (rss1, fd1) = after[after.len() - 1];
    let rss_max = after.iter().map(|s| s.0).max().unwrap_or(0);
    let rss_drift = rss1 as i64 - rss0 as i64;
    let fd_drift = fd1 as i64 - fd0 as i64;
    println!(
        "soak {name}: {seconds:.0} s, {epochs} connections, {} calls",
        tally.calls
    );
    for (k, v) in &tally.outcomes {
        println!("  {k}: {v}");
    }
    println!("  worst time past the deadline: {:?}", tally.worst_late);
    println!("  slowest connect: {:?}", tally.worst_connect);
    if tally.worst_exit > Duration::ZERO {
        println!(
            "  slowest server exit after its client: {:?}",
            tally.worst_exit
        );
    }
    println!(
        "  RSS after warm-up: {rss0} KiB -> {rss1} KiB (drift {rss_drift} KiB, max {rss_max} KiB)"
    );
    println!("  open fds after warm-up: {fd0} -> {fd1} (drift {fd_drift})");
    if rss_drift > 32 * 1024 {
        tally
            .violations
            .push(format!("RSS grew by {rss_drift} KiB after warm-up"));
    }
    if fd_drift > 4 {
        tally
            .violations
            .push(format!("open fds grew by {fd_drift} after warm-up"));
    }
    for line in extra {
        println!("  {line}");
    }
    println!("  violations: {}", tally.violations.len());
    for v in tally.violations.iter().take(20) {
        println!("    {v}");
    }
}
