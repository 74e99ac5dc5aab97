//! What every client of the per-call benchmark shares (`cargo xtask
//! bench`, BENCHMARKS.md "Method"): the command line, the payload, the
//! latency histogram, the process's CPU time and peak memory, and the one
//! JSON line a run prints. `bench-client` (ours, through the library),
//! `bench-floor` (no framework) and rmcp's `rmcp-bench` (in
//! `bench/rmcp-scale`, which includes this file by path) use it, so the
//! only thing that differs between them is the client. Std only.
//!
//! ```text
//! CLIENT --transport stdio --server-cmd "bench-server --stdio" --calls N --concurrency C --payload BYTES [--era legacy|modern]
//! CLIENT --transport http  --url http://127.0.0.1:PORT/mcp     --calls N --concurrency C --payload BYTES [--era legacy|modern]
//! ```
//!
//! A run connects (the clock starts before the spawn or the first
//! request; `connect_ms` ends when `tools/list` has shown `echo`), makes N
//! `tools/call echo {"text": PAYLOAD}` calls from C workers sharing one
//! session, verifies every result (a success whose `content[0]` is a text
//! block equal to PAYLOAD byte for byte; in the 2026-07-28 era its
//! `resultType` absent or `complete`), closes, and prints one JSON line on
//! stdout. Exit status 0 when every call passed, 1 on any failure (one line
//! on stderr says which step and why), 2 on a usage error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::flags;

/// A parsed command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// `stdio` or `http`.
    pub transport: String,
    /// The server's command line (stdio): words split on ASCII whitespace.
    pub server_cmd: Option<String>,
    /// The server's URL (http).
    pub url: Option<String>,
    /// How many calls.
    pub calls: usize,
    /// Workers (calls in flight), at least 1.
    pub concurrency: usize,
    /// Payload bytes.
    pub payload: usize,
    /// `--era modern`: the 2026-07-28 revision.
    pub modern: bool,
}

impl Args {
    /// Parses `args` (the command line without the program name). The
    /// error is a usage error: print it and exit with status 2.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut a = Args {
            transport: "stdio".into(),
            server_cmd: None,
            url: None,
            calls: 1000,
            concurrency: 1,
            payload: 64,
            modern: false,
        };
        flags::each_flag(args, |flag, v| {
            match flag {
                "--transport" => a.transport = v.text(),
                "--server-cmd" => a.server_cmd = Some(v.text()),
                "--url" => a.url = Some(v.text()),
                "--calls" => a.calls = v.number()?,
                "--concurrency" => a.concurrency = v.number::<usize>()?.max(1),
                "--payload" => a.payload = v.number()?,
                "--era" => a.modern = v.is_modern_era()?,
                other => return Err(format!("unknown flag {other}")),
            }
            Ok(())
        })?;
        match a.transport.as_str() {
            "stdio" if a.server_cmd.is_none() => Err("--transport stdio needs --server-cmd".into()),
            "http" if a.url.is_none() => Err("--transport http needs --url".into()),
            "stdio" | "http" => Ok(a),
            other => Err(format!("unknown transport {other:?}")),
        }
    }

    /// The server's program and arguments (`--server-cmd`, split on ASCII
    /// whitespace: no shell, no quoting).
    pub fn server_words(&self) -> Result<(String, Vec<String>), String> {
        let line = self.server_cmd.as_deref().unwrap_or_default();
        let mut words = line.split_ascii_whitespace().map(str::to_owned);
        let program = words.next().ok_or("--server-cmd is empty")?;
        Ok((program, words.collect()))
    }

    /// How many workers run: C, but no more than there are calls.
    pub fn workers(&self) -> usize {
        self.concurrency.min(self.calls).max(1)
    }
}

/// The payload: `n` ASCII bytes, byte `i` being
/// `"abcdefghijklmnopqrstuvwxyz0123456789"[i % 36]` (nothing to escape).
pub fn payload(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|i| char::from(ALPHABET[i % ALPHABET.len()]))
        .collect()
}

/// Buckets of the latency histogram.
const NB: usize = 4500;
/// Growth per bucket.
const G: f64 = 1.005;
/// The first bucket's upper end, in µs.
const LO: f64 = 0.1;

/// A fixed-size log-linear latency histogram (4,500 buckets growing by
/// 0.5 % from 0.1 µs, ±0.25 % per percentile), shared by every worker:
/// atomic buckets, so its memory does not grow with the calls or the
/// workers.
#[derive(Debug)]
pub struct Histogram(Vec<AtomicU64>);

impl Default for Histogram {
    fn default() -> Self {
        Histogram((0..NB).map(|_| AtomicU64::new(0)).collect())
    }
}

impl Histogram {
    /// Records one latency.
    pub fn record(&self, latency: Duration) {
        let us = latency.as_secs_f64() * 1e6;
        let b = if us < LO {
            0
        } else {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let b = ((us / LO).ln() / G.ln()).floor() as usize;
            b.min(NB - 1)
        };
        if let Some(c) = self.0.get(b) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many latencies were recorded.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// The nearest-rank `p`th percentile (0–100), in µs; 0 when empty.
    pub fn percentile(&self, p: f64) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut sum = 0;
        for (b, c) in self.0.iter().enumerate() {
            sum += c.load(Ordering::Relaxed);
            if sum >= rank {
                #[allow(clippy::cast_precision_loss)]
                return LO * G.powf(b as f64 + 0.5);
            }
        }
        0.0
    }
}

/// This process's CPU time (user + system, every thread), in clock ticks
/// of 10 ms (`/proc/self/stat`); `None` where there is no `/proc`.
pub fn cpu_ticks() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces and parentheses.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// This process's peak resident memory (`VmHWM`), in KiB.
pub fn peak_rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What a run measured, for [`Measured::line`].
#[derive(Debug)]
pub struct Measured<'a> {
    /// The client's short name.
    pub client: &'a str,
    /// The connect phase.
    pub connect: Duration,
    /// The call phase.
    pub total: Duration,
    /// [`cpu_ticks`] just before the first call and after the last result.
    pub cpu: (Option<u64>, Option<u64>),
    /// Every call's latency.
    pub hist: &'a Histogram,
}

impl Measured<'_> {
    /// The run's JSON line.
    pub fn line(&self, a: &Args) -> String {
        let ms = |d: Duration| (d.as_secs_f64() * 1000.0).max(0.001);
        let total_ms = ms(self.total);
        #[allow(clippy::cast_precision_loss)]
        let calls = a.calls as f64;
        let mut line = format!(
            "{{\"client\":\"{}\",\"transport\":\"{}\",\"calls\":{},\"concurrency\":{},\"payload\":{},\"connect_ms\":{:.3},\"total_ms\":{:.3},\"calls_per_s\":{:.1},\"p50_us\":{:.2},\"p99_us\":{:.2}",
            self.client,
            a.transport,
            a.calls,
            a.concurrency,
            a.payload,
            ms(self.connect),
            total_ms,
            calls / (total_ms / 1000.0),
            self.hist.percentile(50.0),
            self.hist.percentile(99.0)
        );
        if let Some(rss) = peak_rss_kb() {
            line.push_str(&format!(",\"peak_rss_kb\":{rss}"));
        }
        if let (Some(c0), Some(c1)) = self.cpu {
            #[allow(clippy::cast_precision_loss)]
            let us = c1.saturating_sub(c0) as f64 * 1e6 / 100.0 / calls.max(1.0);
            line.push_str(&format!(",\"cpu_us_per_call\":{us:.3}"));
        }
        line.push('}');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_cycles_through_the_alphabet() {
        assert_eq!(payload(40), "abcdefghijklmnopqrstuvwxyz0123456789abcd");
    }

    #[test]
    fn percentiles_are_nearest_rank_within_a_quarter_percent() {
        let h = Histogram::default();
        for us in 1..=100 {
            h.record(Duration::from_micros(us));
        }
        assert_eq!(h.total(), 100);
        let p50 = h.percentile(50.0);
        assert!((p50 / 50.0 - 1.0).abs() < 0.0025, "{p50}");
        let p99 = h.percentile(99.0);
        assert!((p99 / 99.0 - 1.0).abs() < 0.0025, "{p99}");
        assert_eq!(Histogram::default().percentile(50.0), 0.0);
    }

    #[test]
    fn usage_errors_name_what_is_missing() {
        let parse = |s: &str| Args::parse(s.split(' ').map(str::to_owned));
        assert!(parse("--transport stdio --calls 3").is_err());
        assert!(parse("--transport http --server-cmd x").is_err());
        assert!(parse("--transport pigeon --url x").is_err());
        let a = parse("--transport http --url u --concurrency 0 --era modern").unwrap();
        assert_eq!((a.concurrency, a.modern, a.workers()), (1, true, 1));
    }
}
