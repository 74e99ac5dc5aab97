//! What each server is doing ([`ServerStatus`]) and when it is tried again
//! ([`Backoff`]).

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
        /// How many of its tools the host offers (after include/exclude,
        /// without those held back).
        tools: usize,
        /// How many of its tools are held back: new or changed since the
        /// user approved its tools ([`Host::held`](crate::Host::held)).
        held: usize,
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
        /// When the next attempt starts (monotonic: for waits and countdowns).
        next_retry: Instant,
        /// The same moment on the wall clock, as read when the attempt was
        /// scheduled (for display; the attempt itself follows `next_retry`).
        next_retry_at: SystemTime,
    },
    /// It was serving and went away (exited, hung up); it is started again
    /// at `next_retry` (now, if it had been up long enough), and the status
    /// stays `Restarting` until that attempt ends.
    Restarting {
        /// Why it went away (e.g. "server was killed by signal 9").
        why: String,
        /// The attempt that comes next.
        attempt: u32,
        /// When that attempt starts (monotonic: for waits and countdowns).
        next_retry: Instant,
        /// The same moment on the wall clock, as read when the attempt was
        /// scheduled (for display).
        next_retry_at: SystemTime,
    },
    /// Disabled by the host ([`Host::set_enabled`](crate::Host::set_enabled)
    /// or the server's options).
    Disabled,
    /// The [managed policy](crate::HostBuilder::managed_policy) does not let
    /// it start (it is not tried again).
    Blocked {
        /// Which rule of which policy file.
        why: String,
    },
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

/// A wall-clock time as RFC 3339 in UTC, to the second:
/// `2026-12-04T16:15:20Z` (the fraction of a second is dropped).
pub(crate) struct Utc(pub(crate) SystemTime);

impl fmt::Display for Utc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Seconds since the epoch, negative before it.
        let secs: i64 = match self.0.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            // Before the epoch: round down to the earlier second.
            Err(e) => {
                let d = e.duration();
                let whole = d.as_secs() + u64::from(d.subsec_nanos() > 0);
                -i64::try_from(whole).unwrap_or(i64::MAX)
            }
        };
        let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        )
    }
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, exact for every `i64` day within ±10^13).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], from March
    let d = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let y = yoe + era * 400 + i64::from(m <= 2);
    // In range by construction (the bracketed bounds above).
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

/// How the status reads in a message: "is restarting after it stopped
/// (server was killed by signal 9); next attempt at 2026-12-04T16:15:20Z".
///
/// Times are wall-clock times in UTC, RFC 3339 to the second
/// (`YYYY-MM-DDTHH:MM:SSZ`), as read when the attempt was scheduled: the
/// text depends only on the status, so an unchanged status prints the same
/// every time (a log or a UI that prints on change prints once).
impl fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerStatus::Starting => f.write_str("is starting"),
            ServerStatus::Ready { tools, held: 0, .. } => write!(f, "is ready with {tools} tools"),
            ServerStatus::Ready { tools, held, .. } => write!(
                f,
                "is ready with {tools} tools ({held} more held back until the user approves them)"
            ),
            ServerStatus::Failed {
                why,
                attempts,
                next_retry_at,
                ..
            } => write!(
                f,
                "failed to start ({why}; {attempts} failed attempt{}); next attempt at {}",
                if *attempts == 1 { "" } else { "s" },
                Utc(*next_retry_at)
            ),
            ServerStatus::Restarting {
                why, next_retry_at, ..
            } => write!(
                f,
                "is restarting after it stopped ({why}); next attempt at {}",
                Utc(*next_retry_at)
            ),
            ServerStatus::Disabled => f.write_str("is disabled"),
            ServerStatus::Blocked { why } => write!(f, "is not started: {why}"),
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
    fn statuses_read_as_sentences_with_utc_times() {
        let at = |secs: u64| UNIX_EPOCH + Duration::from_secs(secs);
        let s = ServerStatus::Restarting {
            why: "server was killed by signal 9".into(),
            attempt: 1,
            next_retry: Instant::now(),
            next_retry_at: at(1_764_864_920) + Duration::from_millis(999),
        };
        let text = "is restarting after it stopped (server was killed by signal 9); next attempt at 2025-12-04T16:15:20Z";
        assert_eq!(s.to_string(), text);
        let f = ServerStatus::Failed {
            why: "no such file".into(),
            attempts: 2,
            next_retry: Instant::now(),
            next_retry_at: at(951_782_400), // a leap day
        };
        assert_eq!(
            f.to_string(),
            "failed to start (no such file; 2 failed attempts); next attempt at 2000-02-29T00:00:00Z"
        );
    }

    #[test]
    fn an_unchanged_status_prints_the_same_every_time() {
        // Scheduled a moment from now: a relative text ("in 1s", then
        // "now") would change while the status does not.
        let soon = ServerStatus::Failed {
            why: "refused".into(),
            attempts: 1,
            next_retry: Instant::now() + Duration::from_millis(300),
            next_retry_at: SystemTime::now() + Duration::from_millis(300),
        };
        let first = soon.to_string();
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(soon.to_string(), first);
    }

    #[test]
    fn utc_dates_across_eras_and_before_the_epoch() {
        for (secs, want) in [
            (0_i64, "1970-01-01T00:00:00Z"),
            (86_399, "1970-01-01T23:59:59Z"),
            (946_684_800, "2000-01-01T00:00:00Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (-86_400 * 365, "1969-01-01T00:00:00Z"),
        ] {
            let t = if secs >= 0 {
                UNIX_EPOCH + Duration::from_secs(secs.unsigned_abs())
            } else {
                UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
            };
            assert_eq!(Utc(t).to_string(), want, "{secs}");
        }
        // Half a second before the epoch is in its last second.
        let t = UNIX_EPOCH - Duration::from_millis(500);
        assert_eq!(Utc(t).to_string(), "1969-12-31T23:59:59Z");
    }
}
