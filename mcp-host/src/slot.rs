//! One server of a host: what the host wants of it ([`Desired`]), what it
//! is now ([`Live`]), and the signals its supervisor gives ([`Slot`]).

use std::sync::{Arc, Mutex};

use mcp_client::Client;
use mcp_config::ToolChange;
use mcp_proto::schema::Tool;
use tokio::sync::watch;

use crate::spec::ServerSpec;
use crate::status::{ServerReport, ServerStatus};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Desired {
    Enabled,
    Disabled,
    Stopped,
}

/// One server: its spec, what the host wants of it, and what it is.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) spec: ServerSpec,
    pub(crate) desired: watch::Sender<Desired>,
    /// A call saw the connection of this generation fail (why): a remote
    /// server's connection does not close by itself when the server goes
    /// away, so the host reconnects.
    pub(crate) lost: watch::Sender<(u64, String)>,
    live: Mutex<Live>,
    /// Held while its listing is sorted by its pins and published (the
    /// supervisor's re-listing, [`Host::approve`](crate::Host::approve)).
    pub(crate) sorting: tokio::sync::Mutex<()>,
    /// Set when its first attempt ended (ready, failed, timed out,
    /// disabled), or its supervisor ended before that.
    first: watch::Sender<bool>,
    /// Set when its supervisor has ended (stopped, or its task is gone).
    done: watch::Sender<bool>,
}

impl Slot {
    pub(crate) fn new(spec: ServerSpec) -> Arc<Slot> {
        Arc::new(Slot {
            desired: watch::Sender::new(if spec.enabled {
                Desired::Enabled
            } else {
                Desired::Disabled
            }),
            lost: watch::Sender::new((0, String::new())),
            live: Mutex::new(Live::default()),
            sorting: tokio::sync::Mutex::new(()),
            first: watch::Sender::new(false),
            done: watch::Sender::new(false),
            spec,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.spec.name
    }

    /// Its report before its supervisor starts.
    pub(crate) fn report(&self) -> ServerReport {
        ServerReport {
            name: self.spec.name.clone(),
            status: if self.spec.enabled {
                ServerStatus::Starting
            } else {
                ServerStatus::Disabled
            },
        }
    }

    pub(crate) fn live(&self) -> Live {
        match self.live.lock() {
            Ok(l) => l.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub(crate) fn set_live(&self, f: impl FnOnce(&mut Live)) {
        match self.live.lock() {
            Ok(mut l) => f(&mut l),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    /// Waits until its supervisor has ended.
    pub(crate) async fn stopped(&self) {
        let _ = self.done.subscribe().wait_for(|d| *d).await;
    }

    /// Records that its first attempt ended (once; later calls do nothing).
    pub(crate) fn first_attempt_ended(&self) {
        self.first.send_if_modified(|f| !std::mem::replace(f, true));
    }

    /// Waits until its first attempt ended.
    pub(crate) async fn first_attempt(&self) {
        let _ = self.first.subscribe().wait_for(|f| *f).await;
    }
}

/// Marks a slot's supervisor ended when dropped: at its end, on a panic,
/// or when the runtime drops the task (even one never polled: the task's
/// future owns it from the spawn).
pub(crate) struct Done(pub(crate) Arc<Slot>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.first_attempt_ended();
        self.0.done.send_replace(true);
    }
}

/// A server's connection and tools while it runs; its last tools after.
#[derive(Debug, Default, Clone)]
pub(crate) struct Live {
    pub(crate) client: Option<Client>,
    /// Which start of the server `client` is (from 1).
    pub(crate) generation: u64,
    /// The tools offered (after include/exclude, without those held back)
    /// at the last listing, shared with the toolbox built from them (each
    /// rebuild of the view clones the `Arc`, not the definitions).
    pub(crate) tools: Option<Arc<Vec<Tool>>>,
    /// The last listing after include/exclude, held-back tools included
    /// (the same `Arc` as `tools` when none is held).
    pub(crate) listed: Option<Arc<Vec<Tool>>>,
    /// The tools held back: new or changed since approved.
    pub(crate) held: Arc<Vec<ToolChange>>,
}

impl Live {
    /// Takes a sorted listing.
    pub(crate) fn sorted(&mut self, s: crate::trust::Sorted) {
        self.tools = Some(s.tools);
        self.listed = Some(s.listed);
        self.held = s.held;
    }
}
