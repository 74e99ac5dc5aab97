//! Request POSTs run on the transport's own polls instead of tasks of
//! their own: a small set of futures, each with its own waker, so each is
//! polled when (and only when) it can make progress, and a slow one never
//! holds up another.
//!
//! `poll_recv` (the driver's task) polls the futures that were woken and
//! hands their answers straight to the caller. What this saves against a
//! task per POST: the spawn, the task registry, and one task switch per
//! answer (the answer is read where it is consumed, with no queue between).
//! What it gives up: on a multi-threaded runtime the POSTs no longer run in
//! parallel with the driver; the driver decodes every answer anyway.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use mcp_proto::jsonrpc::RequestId;

use super::{Item, lock};
use crate::client::BoxFuture;

/// Most request POSTs run inline at once; more run on tasks of their own.
pub(super) const MAX_INLINE: usize = 64;

/// The inline POSTs of one transport.
pub(super) struct InlineSet {
    slots: Vec<Slot>,
    /// Indexes of empty slots.
    free: Vec<usize>,
    running: usize,
    woken: Arc<Woken>,
    /// The woken indexes being polled (kept to reuse its allocation).
    polling: Vec<usize>,
    /// A copy of `woken`'s parent waker, compared without the lock.
    parent: Option<Waker>,
}

struct Slot {
    run: Option<(RequestId, BoxFuture<'static, Option<Item>>)>,
    flag: Arc<SlotWaker>,
    /// `flag` as a waker, made once per slot.
    waker: Waker,
}

/// Which slots were woken, and whom to tell.
struct Woken {
    inner: Mutex<WokenInner>,
}

struct WokenInner {
    slots: Vec<usize>,
    /// The waker of the latest `poll_recv`.
    parent: Option<Waker>,
}

struct SlotWaker {
    index: usize,
    queued: AtomicBool,
    woken: Arc<Woken>,
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut w = lock(&self.woken.inner);
        if !self.queued.swap(true, Ordering::AcqRel) {
            w.slots.push(self.index);
        }
        if let Some(p) = &w.parent {
            p.wake_by_ref();
        }
    }
}

impl InlineSet {
    pub(super) fn new() -> Self {
        InlineSet {
            slots: Vec::new(),
            free: Vec::new(),
            running: 0,
            woken: Arc::new(Woken {
                inner: Mutex::new(WokenInner {
                    slots: Vec::new(),
                    parent: None,
                }),
            }),
            polling: Vec::new(),
            parent: None,
        }
    }

    /// Whether a POST can start here: below [`MAX_INLINE`], and
    /// `poll_recv` has been called (its waker is who the POSTs wake).
    pub(super) fn has_room(&self) -> bool {
        self.running < MAX_INLINE && self.parent.is_some()
    }

    /// Remembers the waker of the latest `poll_recv`.
    pub(super) fn set_waker(&mut self, waker: &Waker) {
        if self.parent.as_ref().is_some_and(|p| p.will_wake(waker)) {
            return;
        }
        self.parent = Some(waker.clone());
        lock(&self.woken.inner).parent = Some(waker.clone());
    }

    pub(super) fn is_empty(&self) -> bool {
        self.running == 0
    }

    /// Starts a POST and polls it once (so it is on its way, as a spawned
    /// one would be); its last item if it finished at once.
    pub(super) fn start(
        &mut self,
        request: RequestId,
        fut: BoxFuture<'static, Option<Item>>,
    ) -> Option<Item> {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                let index = self.slots.len();
                let flag = Arc::new(SlotWaker {
                    index,
                    queued: AtomicBool::new(false),
                    woken: Arc::clone(&self.woken),
                });
                self.slots.push(Slot {
                    run: None,
                    waker: Waker::from(Arc::clone(&flag)),
                    flag,
                });
                index
            }
        };
        self.slots[index].run = Some((request, fut));
        self.running += 1;
        self.poll_slot(index)
    }

    /// Polls the woken POSTs; the last items of those that finished go to
    /// `out`.
    pub(super) fn poll_woken(&mut self, out: &mut VecDeque<Item>) {
        {
            let mut w = lock(&self.woken.inner);
            if w.slots.is_empty() {
                return;
            }
            std::mem::swap(&mut w.slots, &mut self.polling);
        }
        let mut polling = std::mem::take(&mut self.polling);
        for &index in &polling {
            if let Some(item) = self.poll_slot(index) {
                out.push_back(item);
            }
        }
        polling.clear();
        self.polling = polling;
    }

    fn poll_slot(&mut self, index: usize) -> Option<Item> {
        let slot = self.slots.get_mut(index)?;
        slot.flag.queued.store(false, Ordering::Release);
        let (_, fut) = slot.run.as_mut()?;
        let Poll::Ready(item) = fut.as_mut().poll(&mut Context::from_waker(&slot.waker)) else {
            return None;
        };
        slot.run = None;
        self.running -= 1;
        self.free.push(index);
        item
    }

    /// Drops the POST of request `id`, if it runs here.
    pub(super) fn cancel(&mut self, id: &RequestId) {
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if slot.run.as_ref().is_some_and(|(r, _)| r == id) {
                slot.run = None;
                self.running -= 1;
                self.free.push(index);
                return;
            }
        }
    }

    /// Takes every POST out (to move them to tasks, or to drop them).
    pub(super) fn take_all(&mut self) -> Vec<(RequestId, BoxFuture<'static, Option<Item>>)> {
        let mut all = Vec::new();
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if let Some(run) = slot.run.take() {
                all.push(run);
                self.free.push(index);
            }
        }
        self.running = 0;
        all
    }
}
