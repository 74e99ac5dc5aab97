//! [`ClientBuilder`]: configuration, then the split into [`Client`] and [`Driver`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcp_proto::transport::Transport;
use tokio::sync::{mpsc, watch};

use super::driver::{DriverCore, DriverState};
use super::notifications::{Backlog, notification_loop};
use super::{Client, Driver, Shared};
use crate::era_cache::EraCache;
use crate::error::ClientError;
use crate::handler::{ClientHandler, NoHandler};
use crate::session::{Session, SessionConfig, VersionChoice};

/// Configures and connects a [`Client`].
#[must_use]
pub struct ClientBuilder {
    config: SessionConfig,
    handler: Arc<dyn ClientHandler>,
    max_list_pages: usize,
    prime_allocator: bool,
    era_cache: Option<(EraCache, String)>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("config", &self.config)
            .finish()
    }
}

/// Raises glibc malloc's dynamic thresholds once per process.
///
/// glibc returns freed memory at the top of the heap to the kernel as soon as
/// more than its trim threshold (128 KiB at start) is free there, and serves
/// blocks above its mmap threshold with fresh mappings. Both thresholds adapt
/// upward when a large *mapped* block is freed. A client exchanging
/// megabyte-sized messages allocates and frees a few such buffers per call
/// (the encoded params, the raw result, the decoded text), so without this
/// every call faults their pages in again: measured ~740 page faults per
/// 1 MiB tool call, about 40 % of its time (see `BENCHMARKS.md`).
///
/// This allocates and frees one 8 MiB block that is never written (so it
/// costs no resident memory): glibc then keeps up to 16 MiB of freed heap for
/// reuse instead of trimming it. Other allocators simply allocate and free
/// it. Called by [`ClientBuilder::build`] unless
/// [`ClientBuilder::prime_allocator`] turned it off.
pub fn prime_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(8 << 20))));
}

/// Default cap on pages followed by `list_all_*`.
pub const DEFAULT_MAX_LIST_PAGES: usize = 1000;

impl ClientBuilder {
    /// A builder for a client named `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            config: SessionConfig::new(mcp_proto::schema::Implementation::new(name, version)),
            handler: Arc::new(NoHandler),
            max_list_pages: DEFAULT_MAX_LIST_PAGES,
            prime_allocator: true,
            era_cache: None,
        }
    }

    /// The application's handler (server requests, notifications). Its
    /// capabilities are advertised.
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Which protocol revision to speak (default: [`VersionChoice::Auto`]).
    pub fn protocol(mut self, choice: VersionChoice) -> Self {
        self.config.version = choice;
        self
    }

    /// Default per-request timeout, reset by progress (default 60 s).
    pub fn request_timeout(mut self, t: Duration) -> Self {
        self.config.request_timeout = t;
        self
    }

    /// Cap on a request's total time however much progress it reports (default 600 s).
    pub fn max_request_time(mut self, t: Duration) -> Self {
        self.config.max_request_time = t;
        self
    }

    /// How long to wait for the `server/discover` probe (default 5 s).
    pub fn probe_timeout(mut self, t: Duration) -> Self {
        self.config.probe_timeout = t;
        self
    }

    /// How long the handshake (`initialize`) may take (default 60 s). The
    /// `server/discover` probe has its own, shorter [`probe_timeout`](Self::probe_timeout).
    pub fn handshake_timeout(mut self, t: Duration) -> Self {
        self.config.handshake_timeout = t;
        self
    }

    /// How many `input_required` rounds one call may take (default 8).
    pub fn max_input_rounds(mut self, n: u32) -> Self {
        self.config.max_input_rounds = n;
        self
    }

    /// Cap on pages followed by `list_all_*` (default [`DEFAULT_MAX_LIST_PAGES`]).
    pub fn max_list_pages(mut self, n: usize) -> Self {
        self.max_list_pages = n;
        self
    }

    /// Re-initialize and retry once when an HTTP session expires (default off;
    /// the HTTP transport's users turn it on).
    pub fn resend_on_session_expiry(mut self, on: bool) -> Self {
        self.config.resend_on_session_expiry = on;
        self
    }

    /// Whether to raise the process allocator's trim and mmap thresholds once,
    /// so that megabyte-sized messages reuse heap memory instead of faulting in
    /// fresh pages on every call (default on; see [`prime_allocator`]).
    pub fn prime_allocator(mut self, on: bool) -> Self {
        self.prime_allocator = on;
        self
    }

    /// Remembers the server's era in `cache` under `key` (HTTP: the endpoint's
    /// origin and path; stdio: the command line), so that later connections
    /// with the same cache and key skip the `server/discover` probe where the
    /// spec allows it. See [`EraCache`] (default: no cache, every connection
    /// detects the era).
    pub fn era_cache(mut self, cache: EraCache, key: impl Into<String>) -> Self {
        self.era_cache = Some((cache, key.into()));
        self
    }

    /// Splits into the client and its driver, which the caller must spawn
    /// (or poll) for anything to happen. The handshake starts when the driver
    /// first runs; [`Client::wait_ready`] waits for it.
    pub fn build(mut self, transport: impl Transport) -> (Client, Driver) {
        if self.prime_allocator {
            prime_allocator();
        }
        let mut caps = self.handler.capabilities();
        if let Some(existing) = self.config.capabilities.experimental.take() {
            caps.experimental
                .get_or_insert_with(Default::default)
                .extend(existing);
        }
        self.config.capabilities = caps;
        let (tx, rx) = mpsc::unbounded_channel();
        let (n_tx, n_rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog::default());
        let shared = Arc::new(Shared {
            commands: tx,
            next_call: AtomicU64::new(0),
            server: RwLock::new(None),
            changes: [
                watch::Sender::new(0),
                watch::Sender::new(0),
                watch::Sender::new(0),
            ],
            max_list_pages: self.max_list_pages,
            closed: watch::Sender::new(None),
            meta: RwLock::new(None),
            params_size_hint: AtomicUsize::new(0),
            core: std::sync::OnceLock::new(),
        });
        let core = DriverCore {
            driver_waker: None,
            deferred: Vec::new(),
            session: Session::new(self.config),
            transport: Box::pin(transport),
            commands: rx,
            shared: Arc::downgrade(&shared),
            waiters: HashMap::default(),
            stash: None,
            sleep: Box::pin(tokio::time::sleep(Duration::from_secs(3600))),
            armed: None,
            notifications: n_tx,
            backlog: backlog.clone(),
            server_requests: Arc::new(AtomicUsize::new(0)),
            handler: self.handler.clone(),
            state: DriverState::Running,
            ready_waiters: Vec::new(),
            ready: false,
            started: false,
            era_cache: self.era_cache,
            used_hint: false,
            close_waiters: Vec::new(),
            dirty: true,
        };
        let driver = Driver {
            core: Arc::new(Mutex::new(core)),
        };
        let _ = shared.core.set(Arc::downgrade(&driver.core));
        let handler = self.handler;
        tokio::spawn(notification_loop(n_rx, handler, backlog));
        (Client { shared }, driver)
    }

    /// Spawns the driver on the current tokio runtime and waits for the
    /// handshake to finish.
    pub async fn connect(self, transport: impl Transport) -> Result<Client, ClientError> {
        let (client, driver) = self.build(transport);
        tokio::spawn(driver);
        client.wait_ready().await?;
        Ok(client)
    }
}
