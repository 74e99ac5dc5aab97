//! What each server is doing ([`ServerStatus`]) and when it is tried again
//! ([`Backoff`]).

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

use mcp_proto::{Era, ProtocolVersion};

/// What a supervised server is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerStatus {
    /// Being started afresh (launched, handshake, first listing): at the
    /// host's start, or when enabled again. A retry is not `Starting`: the
    /// status stays [`Failed`](ServerStatus::Failed) or
    /// [`Restarting`](ServerStatus::Restarting), with the last reason,
    /// until the retry ends.
    Starting,
    /// Serving.
    Ready {
        /// The era it speaks.
        era: Era,
        /// The negotiated revision.
        protocol_version: ProtocolVersion,
        /// How many of its tools the host offers (after include/exclude).
        tools: usize,
        /// When it became ready.
        since: Instant,
        /// Whether its tools came from the response cache (no `tools/list`).
        tools_from_cache: bool,
    },
    /// The last start failed; the next one is at `next_retry`, and once
    /// that has passed it is under way (the status stays `Failed`, with this
    /// reason, until it ends).
    Failed {
        /// Why (the launcher's error: the stderr tail of a stdio server that
        /// exited, the HTTP status, "did not start within 10s", …).
        why: String,
        /// Failed attempts in a row.
        attempts: u32,
        /// When the next attempt starts.
        next_retry: Instant,
    },
    /// It was serving and went away (exited, hung up); it is started again
    /// at `next_retry` (now, if it had been up long enough), and the status
    /// stays `Restarting` until that attempt ends.
    Restarting {
        /// Why it went away (e.g. "server was killed by signal 9").
        why: String,
        /// The attempt that comes next.
        attempt: u32,
        /// When that attempt starts.
        next_retry: Instant,
    },
    /// Disabled by the host ([`Host::set_enabled`](crate::Host::set_enabled)
    /// or the server's options).
    Disabled,
    /// Shut down by [`Host::close`](crate::Host::close).
    Stopped,
}

impl ServerStatus {
    /// Whether the server serves calls.
    pub fn is_ready(&self) -> bool {
        matches!(self, ServerStatus::Ready { .. })
    }

    /// Whether the server is between attempts or being (re)started.
    pub fn is_down(&self) -> bool {
        matches!(
            self,
            ServerStatus::Starting | ServerStatus::Failed { .. } | ServerStatus::Restarting { .. }
        )
    }
}

/// The wait until `.0` as seen at `.1`, rounded up to whole seconds, for
/// people and models.
struct In(Instant, Instant);

impl fmt::Display for In {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let left = self.0.saturating_duration_since(self.1);
        if left.is_zero() {
            f.write_str("now")
        } else {
            write!(f, "in {}s", left.as_millis().div_ceil(1000))
        }
    }
}

/// How the status reads in a message: "is restarting after it stopped
/// (server was killed by signal 9); next attempt in 2s".
impl fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Sentence(self, Instant::now()).fmt(f)
    }
}

/// A status read at a given instant (the waits it names are counted from it).
struct Sentence<'a>(&'a ServerStatus, Instant);

impl fmt::Display for Sentence<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Sentence(status, now) = *self;
        match status {
            ServerStatus::Starting => f.write_str("is starting"),
            ServerStatus::Ready { tools, .. } => write!(f, "is ready with {tools} tools"),
            ServerStatus::Failed {
                why,
                attempts,
                next_retry,
            } => write!(
                f,
                "failed to start ({why}; {attempts} failed attempt{}); next attempt {}",
                if *attempts == 1 { "" } else { "s" },
                In(*next_retry, now)
            ),
            ServerStatus::Restarting {
                why, next_retry, ..
            } => write!(
                f,
                "is restarting after it stopped ({why}); next attempt {}",
                In(*next_retry, now)
            ),
            ServerStatus::Disabled => f.write_str("is disabled"),
            ServerStatus::Stopped => f.write_str("was shut down"),
        }
    }
}

/// One server's name and status (see [`Host::status`](crate::Host::status)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerReport {
    /// The server's name.
    pub name: String,
    /// What it is doing.
    pub status: ServerStatus,
}

/// When a server that failed to start, or went away, is tried again:
/// capped exponential backoff with jitter.
///
/// After `n` failures in a row the wait is `initial × 2^(n-1)`, at most
/// `max`, minus a random part of up to `jitter` of it (so servers that
/// failed together do not all retry at the same instant, and the cap holds).
/// A server that was up for at least `reset_after` before it went away is
/// started again at once and its count starts over.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Backoff {
    /// The first wait (default 1 s).
    pub initial: Duration,
    /// The longest wait (default 30 s).
    pub max: Duration,
    /// The share of each wait taken off at random, 0.0 to 1.0 (default 0.3).
    pub jitter: f64,
    /// How long a server must have been up for its going away to count as
    /// a fresh start rather than one more failure (default 30 s).
    pub reset_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(30),
            jitter: 0.3,
            reset_after: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the first wait.
    #[must_use]
    pub fn initial(mut self, d: Duration) -> Self {
        self.initial = d;
        self
    }

    /// Sets the longest wait.
    #[must_use]
    pub fn max(mut self, d: Duration) -> Self {
        self.max = d;
        self
    }

    /// Sets the random share (clamped to 0.0 ..= 1.0).
    #[must_use]
    pub fn jitter(mut self, share: f64) -> Self {
        self.jitter = share.clamp(0.0, 1.0);
        self
    }

    /// Sets how long a server must run for its count to start over.
    #[must_use]
    pub fn reset_after(mut self, d: Duration) -> Self {
        self.reset_after = d;
        self
    }

    /// The wait after `failures` failures in a row (0 waits nothing).
    pub fn delay(&self, failures: u32) -> Duration {
        self.delay_with(failures, random_unit())
    }

    /// [`delay`](Backoff::delay) with the random draw `r` in `0.0..1.0`.
    fn delay_with(&self, failures: u32, r: f64) -> Duration {
        if failures == 0 {
            return Duration::ZERO;
        }
        let doublings = (failures - 1).min(30);
        let base = self.initial.saturating_mul(1u32 << doublings).min(self.max);
        base.mul_f64(1.0 - self.jitter.clamp(0.0, 1.0) * r.clamp(0.0, 1.0))
    }
}

/// A number in `0.0..1.0`, different on every call (no `rand` crate: the
/// standard library's randomly seeded hasher over a counter is plenty for
/// spreading retries).
fn random_unit() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    // 53 random bits as a fraction.
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_jitter_only_shortens() {
        let b = Backoff::new()
            .initial(Duration::from_millis(100))
            .max(Duration::from_millis(1000))
            .jitter(0.5);
        assert_eq!(b.delay_with(0, 0.9), Duration::ZERO);
        assert_eq!(b.delay_with(1, 0.0), Duration::from_millis(100));
        assert_eq!(b.delay_with(2, 0.0), Duration::from_millis(200));
        assert_eq!(b.delay_with(4, 0.0), Duration::from_millis(800));
        assert_eq!(b.delay_with(5, 0.0), Duration::from_millis(1000));
        assert_eq!(b.delay_with(u32::MAX, 0.0), Duration::from_millis(1000));
        assert_eq!(b.delay_with(5, 1.0), Duration::from_millis(500));
        for n in 1..40 {
            let d = b.delay(n);
            assert!(
                d <= Duration::from_millis(1000) && d >= Duration::from_millis(50),
                "{d:?}"
            );
        }
        let draws: std::collections::HashSet<u64> =
            (0..20).map(|_| random_unit().to_bits()).collect();
        assert!(draws.len() > 15, "jitter draws differ");
    }

    #[test]
    fn statuses_read_as_sentences() {
        // Read at a fixed instant: a second clock reading could be more
        // than half a second later on a busy machine, and round to "2s".
        let now = Instant::now();
        let later = now + Duration::from_millis(2500);
        let s = ServerStatus::Restarting {
            why: "server was killed by signal 9".into(),
            attempt: 1,
            next_retry: later,
        };
        assert_eq!(
            Sentence(&s, now).to_string(),
            "is restarting after it stopped (server was killed by signal 9); next attempt in 3s"
        );
        // The `Display` reads the clock itself: an hour ahead reads as
        // "in 3…s" for the next ten minutes.
        let hour = ServerStatus::Restarting {
            why: "x".into(),
            attempt: 1,
            next_retry: now + Duration::from_secs(3600),
        };
        assert!(hour.to_string().contains("next attempt in 3"), "{hour}");
        let f = ServerStatus::Failed {
            why: "no such file".into(),
            attempts: 2,
            next_retry: Instant::now(),
        };
        assert_eq!(
            f.to_string(),
            "failed to start (no such file; 2 failed attempts); next attempt now"
        );
    }
}
