//! The little runtime the kit needs and brings itself, std only: a timer
//! thread, `sleep`/`timeout`, `join`, waker probes, and a `block_on` for
//! transports that need no runtime. The caller's runtime (tokio for the
//! workspace's transports) drives the checks; these only wake it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Default)]
struct TimerState {
    fired: bool,
    waker: Option<Waker>,
}

struct Entry {
    at: Instant,
    seq: u64,
    state: Arc<Mutex<TimerState>>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct Timers {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

/// One thread for every timer of the process, started on first use.
fn timers() -> &'static (Mutex<Timers>, Condvar) {
    static TIMERS: OnceLock<(Mutex<Timers>, Condvar)> = OnceLock::new();
    TIMERS.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("transport-kit-timer".into())
            .spawn(timer_thread);
        if let Err(e) = spawned {
            // Without the thread no timer fires: say so instead of hanging.
            panic!("transport kit: cannot start its timer thread: {e}");
        }
        (Mutex::new(Timers::default()), Condvar::new())
    })
}

fn timer_thread() {
    let (m, cv) = timers();
    let mut t = lock(m);
    loop {
        let now = Instant::now();
        while let Some(Reverse(first)) = t.heap.peek() {
            if first.at > now {
                break;
            }
            if let Some(Reverse(e)) = t.heap.pop() {
                let mut s = lock(&e.state);
                s.fired = true;
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            }
        }
        t = match t.heap.peek() {
            Some(Reverse(first)) => {
                let wait = first.at.saturating_duration_since(now);
                cv.wait_timeout(t, wait)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0
            }
            None => cv
                .wait(t)
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        };
    }
}

/// A future that is ready once `d` has passed.
#[derive(Debug)]
pub(crate) struct Sleep {
    state: Arc<Mutex<TimerState>>,
}

impl std::fmt::Debug for TimerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimerState")
            .field("fired", &self.fired)
            .finish()
    }
}

pub(crate) fn sleep(d: Duration) -> Sleep {
    let state = Arc::new(Mutex::new(TimerState::default()));
    let (m, cv) = timers();
    let mut t = lock(m);
    t.seq += 1;
    let seq = t.seq;
    t.heap.push(Reverse(Entry {
        at: Instant::now() + d,
        seq,
        state: state.clone(),
    }));
    cv.notify_one();
    Sleep { state }
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = lock(&self.state);
        if s.fired {
            return Poll::Ready(());
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// `fut`'s output, or `None` once `d` has passed.
pub(crate) async fn timeout<F: Future>(d: Duration, fut: F) -> Option<F::Output> {
    poll_for(d, pin!(fut)).await
}

/// Polls `fut` (pinned by the caller, so it survives) for at most `d`:
/// `Some` when it finished.
pub(crate) async fn poll_for<F: Future + ?Sized>(
    d: Duration,
    mut fut: Pin<&mut F>,
) -> Option<F::Output> {
    let mut timer = sleep(d);
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        Pin::new(&mut timer).poll(cx).map(|()| None)
    })
    .await
}

/// Runs both futures to completion, concurrently, in this task.
pub(crate) async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}

/// A waker the kit hands to the transport, to see whether (and how often)
/// the transport wakes it. Waking it also wakes the kit's task.
#[derive(Debug, Default)]
pub(crate) struct Probe {
    wakes: AtomicUsize,
    task: Mutex<Option<Waker>>,
}

impl Wake for Probe {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        if let Some(w) = lock(&self.task).take() {
            w.wake();
        }
    }
}

impl Probe {
    pub(crate) fn new() -> (Arc<Probe>, Waker) {
        let p = Arc::new(Probe::default());
        let w = Waker::from(p.clone());
        (p, w)
    }

    pub(crate) fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }

    /// Ready once the probe has been woken more than `seen` times.
    pub(crate) async fn woken_after(&self, seen: usize) {
        poll_fn(|cx| {
            *lock(&self.task) = Some(cx.waker().clone());
            if self.wakes() > seen {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}

/// Parks the thread between polls.
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking it while the future
/// waits: enough for a transport that needs no runtime of its own (the
/// in-memory [`channel`](crate::transport::channel)). Transports on tokio
/// use tokio's `block_on` instead.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_in_order_and_timeouts_end() {
        let start = Instant::now();
        block_on(async {
            let (a, b) = join(sleep(Duration::from_millis(30)), async {
                sleep(Duration::from_millis(10)).await;
                Instant::now()
            })
            .await;
            let () = a;
            assert!(b.duration_since(start) >= Duration::from_millis(10));
            assert_eq!(
                timeout(Duration::from_millis(10), std::future::pending::<()>()).await,
                None
            );
            assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Some(7));
        });
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}
