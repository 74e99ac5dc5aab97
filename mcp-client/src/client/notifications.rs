//! The handler's notification task and the bounded queue in front of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Context;

use mcp_proto::jsonrpc::Notification;
use tokio::sync::mpsc;

use crate::handler::DynHandler;

/// How many notifications may wait for the handler before the driver stops
/// reading from the server (backpressure: a server that floods
/// notifications faster than the handler takes them is slowed down, not
/// buffered without bound, and nothing is dropped).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 1024;

/// Counts notifications queued for the handler and wakes the driver when
/// the queue drains below [`MAX_QUEUED_NOTIFICATIONS`].
#[derive(Default)]
pub(super) struct Backlog {
    queued: AtomicUsize,
    waker: std::sync::Mutex<Option<std::task::Waker>>,
}

impl Backlog {
    pub(super) fn push(&self) {
        self.queued.fetch_add(1, Ordering::AcqRel);
    }

    fn pop(&self) {
        if self.queued.fetch_sub(1, Ordering::AcqRel) == MAX_QUEUED_NOTIFICATIONS {
            if let Some(w) = self.waker.lock().ok().and_then(|mut g| g.take()) {
                w.wake();
            }
        }
    }

    /// Whether the driver may read; if not, it is woken when it may again.
    pub(super) fn has_room(&self, cx: &Context<'_>) -> bool {
        if self.queued.load(Ordering::Acquire) < MAX_QUEUED_NOTIFICATIONS {
            return true;
        }
        if let Ok(mut g) = self.waker.lock() {
            *g = Some(cx.waker().clone());
        }
        // Re-check: the handler may have drained in between.
        self.queued.load(Ordering::Acquire) < MAX_QUEUED_NOTIFICATIONS
    }
}

pub(super) async fn notification_loop(
    mut rx: mpsc::UnboundedReceiver<Box<Notification>>,
    handler: Arc<dyn DynHandler>,
    backlog: Arc<Backlog>,
) {
    while let Some(n) = rx.recv().await {
        handler.notify(*n);
        backlog.pop();
    }
}
