//! The scaling check: every decode and every check over a collection a
//! server controls costs O(n) (or n log n) in the number of elements.
//!
//! A [`Shape`] is one such collection: how to build its input with n
//! elements (a message, a header, a stream) and what to run on it (the
//! decode or check under test). [`check`] runs each shape at
//! [`SMALL`] and [`LARGE`] elements and fails, naming the shapes, when the
//! cost per element at `LARGE` is more than [`MAX_GROWTH`] times that at
//! `SMALL` (a shape that already grows that much at a tenth of `LARGE`
//! fails there). A quadratic step over 100,000 elements costs 100 times
//! more per element than over 1,000 (10 times at 10,000); cache misses and
//! an n log n sort stay within a factor of 2.
//!
//! What is measured is the CPU time of the measuring thread
//! (`CLOCK_THREAD_CPUTIME_ID` on Unix; elsewhere wall time), the
//! least of several runs: time the thread waited for a core on a busy
//! machine is not counted, and the least of the runs is the one the
//! machine disturbed least. So the check holds on a loaded 2-core machine.
//!
//! Run by `cargo xtask scaling`. A new type a server sends adds a line to a
//! table of shapes (`mcp-cli/tests/scaling.rs`, and the tables of the
//! crates whose internals it reaches).

use std::time::{Duration, Instant};

/// Elements in the small input.
pub const SMALL: usize = 1_000;

/// Elements in the large input.
pub const LARGE: usize = 100_000;

/// The most the cost per element may grow from [`SMALL`] to [`LARGE`].
pub const MAX_GROWTH: f64 = 4.0;

/// How long one measured batch of small runs lasts at least.
const BATCH: Duration = Duration::from_millis(20);

/// Batches of small runs; the cheapest counts.
const SMALL_SAMPLES: usize = 7;

/// Runs on each larger input; the cheapest counts.
const LARGE_SAMPLES: usize = 3;

/// One collection a server controls.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// What it is (`elicitation properties`, `SSE data lines`, ...).
    pub name: &'static str,
    /// The input with n elements.
    pub build: fn(usize) -> Vec<u8>,
    /// The decode or check under test. It should fail loudly (panic) when
    /// the input is not handled as expected, so a shape that stopped
    /// decoding is not measured as fast.
    pub run: fn(&[u8]),
}

/// What [`check`] measured for one shape.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// The shape's name.
    pub name: &'static str,
    /// CPU nanoseconds per element of the small input.
    pub small: f64,
    /// CPU nanoseconds per element of the large input.
    pub large: f64,
    /// How many elements the large input had (a tenth of the large size
    /// when the shape already failed there).
    pub large_n: usize,
}

impl Measured {
    /// How much the cost per element grew.
    pub fn growth(&self) -> f64 {
        self.large / self.small.max(f64::MIN_POSITIVE)
    }
}

/// Measures every shape and panics, naming each, when one grows by more
/// than [`MAX_GROWTH`] (or by `max_growth` given in `MCP_SCALING_MAX`).
pub fn check(shapes: &[Shape]) -> Vec<Measured> {
    let limit = std::env::var("MCP_SCALING_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_GROWTH);
    let only = std::env::var("MCP_SCALING_ONLY").ok();
    let mut all = Vec::new();
    let mut failed = Vec::new();
    eprintln!(
        "{:<44} {:>12} {:>12} {:>8}",
        "shape", "ns/elem small", "ns/elem large", "growth"
    );
    for shape in shapes {
        if only.as_deref().is_some_and(|o| !shape.name.contains(o)) {
            continue;
        }
        let m = measure(shape, SMALL, LARGE, limit);
        let verdict = if m.growth() > limit { "  FAIL" } else { "" };
        let at = if m.large_n == LARGE {
            String::new()
        } else {
            format!(" (at {} elements)", m.large_n)
        };
        eprintln!(
            "{:<44} {:>12.1} {:>12.1} {:>7.2}x{verdict}{at}",
            m.name,
            m.small,
            m.large,
            m.growth()
        );
        if m.growth() > limit {
            failed.push(m);
        }
        all.push(m);
    }
    assert!(
        failed.is_empty(),
        "cost per element grew more than {limit}x from {SMALL} to {LARGE} elements (not linear): {}",
        failed
            .iter()
            .map(|m| format!("{} ({:.1}x)", m.name, m.growth()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    all
}

/// One shape at `small` and `large` elements; `limit`: past it, the
/// measure stops early. Between the two a tenth of `large` is measured
/// first: a quadratic shape already fails there (in a second, not in the
/// minutes its large run would take), and is reported with that size's
/// cost.
pub fn measure(shape: &Shape, small_n: usize, large_n: usize, limit: f64) -> Measured {
    let small_input = (shape.build)(small_n);
    // Warm up (allocator, lazy statics), and find how many small runs
    // fill a batch.
    (shape.run)(&small_input);
    let mut reps = 1usize;
    loop {
        let started = Instant::now();
        for _ in 0..reps {
            (shape.run)(&small_input);
        }
        if started.elapsed() >= BATCH || reps >= 1 << 20 {
            break;
        }
        reps *= 2;
    }
    let small = (0..SMALL_SAMPLES)
        .map(|_| {
            cpu(|| {
                for _ in 0..reps {
                    (shape.run)(&small_input);
                }
            }) / reps as f64
        })
        .fold(f64::INFINITY, f64::min)
        / small_n as f64;
    drop(small_input);
    let mut large = f64::INFINITY;
    let mut measured_n = large_n;
    for n in [large_n / 10, large_n] {
        if n <= small_n {
            continue;
        }
        let input = (shape.build)(n);
        large = f64::INFINITY;
        measured_n = n;
        for _ in 0..LARGE_SAMPLES {
            large = large.min(cpu(|| (shape.run)(&input)) / n as f64);
            if large <= small * limit {
                // Within the limit once is enough at the middle size.
                if n < large_n {
                    break;
                }
            } else if large > small * limit * 4.0 {
                // Far past it: more samples only take longer.
                break;
            }
        }
        if large > small * limit {
            break;
        }
    }
    Measured {
        name: shape.name,
        small,
        large,
        large_n: measured_n,
    }
}

/// CPU nanoseconds of this thread spent in `f`.
fn cpu(f: impl FnOnce()) -> f64 {
    let before = thread_cpu_ns();
    let started = Instant::now();
    f();
    match (before, thread_cpu_ns()) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64,
        _ => started.elapsed().as_nanos() as f64,
    }
}

/// This thread's time on a CPU so far (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(unix)]
fn thread_cpu_ns() -> Option<u64> {
    use nix::time::{ClockId, clock_gettime};
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    let secs = u64::try_from(t.tv_sec()).ok()?;
    let nanos = u64::try_from(t.tv_nsec()).ok()?;
    Some(secs * 1_000_000_000 + nanos)
}

#[cfg(not(unix))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

/// `prefix`, then `item(i)` for each i in 0..n separated by `sep`, then
/// `suffix`: the usual way a shape builds its JSON.
pub fn repeated(
    prefix: &str,
    n: usize,
    sep: &str,
    item: impl Fn(usize) -> String,
    suffix: &str,
) -> Vec<u8> {
    let mut out = String::from(prefix);
    for i in 0..n {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&item(i));
    }
    out.push_str(suffix);
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(input: &[u8]) {
        let sum: u64 = input.iter().map(|&b| u64::from(b)).sum();
        std::hint::black_box(sum);
    }

    fn quadratic(input: &[u8]) {
        let mut seen: Vec<&[u8]> = Vec::new();
        for item in input.split(|&b| b == b',') {
            if !seen.contains(&item) {
                seen.push(item);
            }
        }
        std::hint::black_box(seen.len());
    }

    fn items(n: usize) -> Vec<u8> {
        repeated("", n, ",", |i| format!("item-{i}"), "")
    }

    #[test]
    fn a_linear_shape_passes_and_a_quadratic_one_is_caught() {
        let lin = measure(
            &Shape {
                name: "linear",
                build: items,
                run: linear,
            },
            100,
            10_000,
            MAX_GROWTH,
        );
        assert!(lin.growth() < MAX_GROWTH, "{lin:?}");
        let quad = measure(
            &Shape {
                name: "quadratic",
                build: items,
                run: quadratic,
            },
            100,
            10_000,
            MAX_GROWTH,
        );
        assert!(quad.growth() > MAX_GROWTH, "{quad:?}");
    }
}
