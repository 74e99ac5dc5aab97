//! How long the transport waits before it tries again: reconnecting an SSE
//! stream ([`Reconnects`]), and retrying a request the server refused with
//! 429 or 503 ([`retry_at`] reads its `Retry-After`). Every wait has a floor, a cap and jitter,
//! so neither a server's `retry: 0` nor many clients failing together make
//! a storm.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use http::HeaderMap;
use http::header::RETRY_AFTER;

use crate::client::{INITIAL_BACKOFF, MAX_BACKOFF, MIN_RECONNECT_DELAY};
use crate::error::RetryAt;

/// The share of a wait added at random on top of it (never taken off: a
/// server's `retry` and `Retry-After` are minimums).
const JITTER: f64 = 0.2;

/// A number in `0.0..1.0`, different on every call (no `rand` crate: the
/// standard library's randomly seeded hasher over a counter is plenty for
/// spreading reconnections).
fn random_unit() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    // 53 random bits as a fraction.
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// `d` plus up to [`JITTER`] of it, at random.
pub(crate) fn jittered(d: Duration) -> Duration {
    d.saturating_add(d.mul_f64(JITTER * random_unit()))
}

/// The reconnection policy of one SSE stream (a response stream being
/// resumed, the standalone `GET` stream).
///
/// - **A floor.** Never sooner than [`MIN_RECONNECT_DELAY`], whatever the
///   server's `retry` says (`retry: 0` would otherwise reconnect as fast as
///   the loopback allows: thousands of times a second). Never sooner than
///   the server's `retry` either (the spec's MUST).
/// - **Backoff.** Each reconnection in a row that delivers no message (the
///   attempt failed, or the stream ended empty) doubles the wait from
///   [`INITIAL_BACKOFF`] up to [`MAX_BACKOFF`]; a delivered message starts
///   over at the floor (or `retry`).
/// - **Jitter.** Up to a fifth more at random, so many clients do not come
///   back at the same instant.
/// - **A cap.** After `max_attempts` reconnections in a row without a
///   message, the stream is given up.
///
/// A server that answers a reconnection with `Retry-After` (429, 503) is
/// waited for at least that long too ([`Reconnects::next`]'s `asked`).
#[derive(Debug)]
pub(crate) struct Reconnects {
    max_attempts: u32,
    /// Reconnections in a row that delivered nothing.
    failed: u32,
    /// Reconnections made in all.
    total: u32,
}

impl Reconnects {
    pub(crate) fn new(max_attempts: u32) -> Self {
        Reconnects {
            max_attempts,
            failed: 0,
            total: 0,
        }
    }

    /// Reconnections made so far.
    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// The stream (or the attempt to reopen it) ended; `progress`: it
    /// delivered a message. The wait before the next attempt, or `None`
    /// when the budget of attempts without progress is spent. `retry`: the
    /// server's SSE `retry`; `asked`: a `Retry-After` it answered the last
    /// attempt with.
    pub(crate) fn next(
        &mut self,
        progress: bool,
        retry: Option<Duration>,
        asked: Option<Duration>,
    ) -> Option<Duration> {
        if progress {
            self.failed = 0;
        }
        if self.failed >= self.max_attempts {
            return None;
        }
        let wait = base_delay(self.failed, retry, asked);
        self.failed += 1;
        self.total += 1;
        Some(jittered(wait))
    }
}

/// The wait before a reconnection after `failed` attempts in a row without
/// progress, before jitter.
fn base_delay(failed: u32, retry: Option<Duration>, asked: Option<Duration>) -> Duration {
    let backoff = if failed == 0 {
        // The first try after progress: the server's `retry` if it gave one.
        retry.unwrap_or(INITIAL_BACKOFF)
    } else {
        let doublings = failed.min(16);
        INITIAL_BACKOFF
            .saturating_mul(1u32 << doublings)
            .min(MAX_BACKOFF)
    };
    backoff
        .max(retry.unwrap_or(Duration::ZERO))
        .max(asked.unwrap_or(Duration::ZERO))
        .max(MIN_RECONNECT_DELAY)
        .min(MAX_SERVER_WAIT)
}

/// The longest wait a server's `Retry-After` or SSE `retry` is taken as
/// (a year): a longer one is that long, so that adding it to a time never
/// overflows (`Retry-After: 18446744073709551616` once wrapped to "now").
/// Any wait this long is past every request's deadline and
/// `max_retry_wait` anyway: what it changes is only what is reported.
pub(crate) const MAX_SERVER_WAIT: Duration = Duration::from_secs(365 * 24 * 3600);

/// When a server that refused a request (429, 503) asked to be tried
/// again: its `Retry-After` (RFC 9110 §10.2.3), a number of seconds or an
/// HTTP date, for an answer that arrived at `now`, at most
/// [`MAX_SERVER_WAIT`] away. A date in the past means now (a wait of 0); an
/// invalid value is no `Retry-After`.
pub(crate) fn retry_at(headers: &HeaderMap, now: SystemTime) -> Option<RetryAt> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let delay = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // A number too large for u64 is a wait longer than anything.
        Duration::from_secs(value.parse::<u64>().unwrap_or(u64::MAX))
    } else {
        let at = httpdate::parse_http_date(value).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    let delay = delay.min(MAX_SERVER_WAIT);
    // Within a year of a clock's reading: cannot overflow.
    let at = now.checked_add(delay)?;
    Some(RetryAt { delay, at })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_floor_holds_whatever_retry_says() {
        let mut r = Reconnects::new(5);
        // `retry: 0` and a message delivered every time: never below the floor.
        for _ in 0..100 {
            let wait = r.next(true, Some(Duration::ZERO), None).unwrap();
            assert!(wait >= MIN_RECONNECT_DELAY, "{wait:?}");
            assert!(wait <= jittered_max(MIN_RECONNECT_DELAY), "{wait:?}");
        }
        assert_eq!(r.total(), 100);
    }

    fn jittered_max(d: Duration) -> Duration {
        d.mul_f64(1.0 + JITTER)
    }

    #[test]
    fn retry_is_a_minimum_and_backoff_doubles_without_progress() {
        assert_eq!(base_delay(0, Some(MS(500)), None), MS(500));
        assert_eq!(base_delay(0, None, None), INITIAL_BACKOFF);
        assert_eq!(base_delay(1, None, None), INITIAL_BACKOFF * 2);
        assert_eq!(base_delay(3, Some(MS(1)), None), INITIAL_BACKOFF * 8);
        assert_eq!(base_delay(30, None, None), MAX_BACKOFF);
        assert_eq!(
            base_delay(3, Some(Duration::from_secs(60)), None),
            Duration::from_secs(60)
        );
        assert_eq!(
            base_delay(0, None, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            base_delay(0, Some(Duration::ZERO), None),
            MIN_RECONNECT_DELAY
        );
    }

    #[test]
    fn attempts_without_progress_are_capped_and_progress_refills_them() {
        let mut r = Reconnects::new(3);
        let waits: Vec<_> = (0..3).map(|_| r.next(false, None, None).unwrap()).collect();
        assert!(
            waits[0] >= INITIAL_BACKOFF && waits[1] >= INITIAL_BACKOFF * 2,
            "{waits:?}"
        );
        assert!(waits[2] >= INITIAL_BACKOFF * 4, "{waits:?}");
        assert_eq!(r.next(false, None, None), None, "the budget is spent");
        assert!(r.next(true, None, None).is_some(), "a message refills it");
    }

    #[test]
    fn jitter_only_adds_and_varies() {
        let d = Duration::from_secs(1);
        let waits: Vec<_> = (0..50).map(|_| jittered(d)).collect();
        assert!(
            waits.iter().all(|w| *w >= d && *w <= jittered_max(d)),
            "{waits:?}"
        );
        assert!(waits.iter().any(|w| *w != waits[0]), "no jitter: {waits:?}");
    }

    #[test]
    fn retry_after_as_seconds_and_as_a_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(RETRY_AFTER, v.parse().unwrap());
            m
        };
        let r = retry_at(&h("120"), now).unwrap();
        assert_eq!(r.delay, Duration::from_secs(120));
        assert_eq!(r.at, now + Duration::from_secs(120));
        // IMF-fixdate, and the two obsolete forms RFC 9110 still accepts.
        let at = now + Duration::from_secs(30);
        for v in [
            httpdate::fmt_http_date(at),
            "Tuesday, 14-Nov-23 22:13:50 GMT".into(),
            "Tue Nov 14 22:13:50 2023".into(),
        ] {
            let r = retry_at(&h(&v), now).unwrap();
            assert_eq!(r.delay, Duration::from_secs(30), "{v}");
        }
        // A date already past: now.
        let past = httpdate::fmt_http_date(now - Duration::from_secs(5));
        assert_eq!(retry_at(&h(&past), now).unwrap().delay, Duration::ZERO);
        for bad in ["", "-1", "1.5", "soon", "+3"] {
            assert_eq!(retry_at(&h(bad), now), None, "{bad:?}");
        }
        assert_eq!(retry_at(&HeaderMap::new(), now), None);
        // A number past u64 (or past a year) is a year, never "now".
        for huge in [
            "18446744073709551616",
            "18446744073709551615",
            "99999999999",
        ] {
            let r = retry_at(&h(huge), now).unwrap();
            assert_eq!(r.delay, MAX_SERVER_WAIT, "{huge}");
            assert_eq!(r.at, now + MAX_SERVER_WAIT, "{huge}");
        }
        let far = retry_at(&h("Fri, 31 Dec 9999 23:59:59 GMT"), now).unwrap();
        assert_eq!(far.delay, MAX_SERVER_WAIT);
        // An SSE `retry` of u64::MAX ms is a year too.
        let wait = base_delay(0, Some(Duration::from_millis(u64::MAX)), None);
        assert_eq!(wait, MAX_SERVER_WAIT);
    }
}
