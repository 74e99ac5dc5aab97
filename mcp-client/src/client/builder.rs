//! [`ClientBuilder`]: configuration, then the split into [`Client`] and [`Driver`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcp_proto::transport::Transport;
use tokio::sync::{mpsc, watch};

use super::driver::{DriverCore, DriverState};
use super::notifications::Backlog;
use super::{Client, Driver, Shared};
use crate::era_cache::EraCache;
use crate::error::ClientError;
use crate::handler::{ClientHandler, DynHandler, NoHandler};
use crate::session::{Session, SessionConfig, VersionChoice};

/// Configures and connects a [`Client`].
#[must_use]
pub struct ClientBuilder {
    config: SessionConfig,
    handler: Arc<dyn DynHandler>,
    max_list_pages: usize,
    era_cache: Option<(EraCache, String)>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("config", &self.config)
            .finish()
    }
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
            era_cache: None,
        }
    }

    /// The application's handler (server requests, notifications). Its
    /// [`capabilities`](ClientHandler::capabilities) are what the client
    /// advertises.
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Which protocol revision to speak (default: [`VersionChoice::Auto`]).
    pub fn protocol(mut self, choice: VersionChoice) -> Self {
        self.config.version = choice;
        self
    }

    /// Default per-request timeout, reset by progress (default 60 s). It runs
    /// from when the call is made: waiting for a new session (after an
    /// expired one) and the re-send count against it; only an
    /// `input_required` round, answered by the user, starts it again.
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
    /// on a tokio runtime (or poll inside one) for anything to happen. The
    /// handshake starts when the driver first runs; [`Client::wait_ready`]
    /// waits for it.
    ///
    /// Never panics and needs no runtime itself: it may run before one
    /// exists. A driver polled outside a tokio runtime closes the connection
    /// with [`CloseReason::NoRuntime`](crate::CloseReason::NoRuntime).
    pub fn build(mut self, transport: impl Transport) -> (Client, Driver) {
        let mut caps = self.handler.capabilities();
        if let Some(existing) = self.config.capabilities.experimental.take() {
            caps.experimental
                .get_or_insert_with(Default::default)
                .extend(existing);
        }
        self.config.capabilities = caps.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog::default());
        let shared = Arc::new(Shared {
            commands: tx,
            next_call: AtomicU64::new(0),
            server: RwLock::new(None),
            changes: Default::default(),
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
            sleep: None,
            armed: None,
            notifications: None,
            backlog: backlog.clone(),
            server_requests: Arc::new(AtomicUsize::new(0)),
            handler: self.handler,
            capabilities: Arc::new(caps),
            state: DriverState::Running,
            ready_waiters: Vec::new(),
            ready: false,
            ready_after_flush: false,
            started: false,
            era_cache: self.era_cache,
            used_hint: false,
            close_waiters: Vec::new(),
            dirty: true,
            commands_unwatched: true,
            answered: 0,
        };
        let driver = Driver {
            core: Arc::new(Mutex::new(core)),
        };
        let _ = shared.core.set(Arc::downgrade(&driver.core));
        (Client { shared }, driver)
    }

    /// Spawns the driver on the current tokio runtime and waits for the
    /// handshake to finish. Outside a tokio runtime: [`ClientError::Closed`]
    /// with [`CloseReason::NoRuntime`](crate::CloseReason::NoRuntime).
    pub async fn connect(self, transport: impl Transport) -> Result<Client, ClientError> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Err(ClientError::Closed(crate::CloseReason::NoRuntime));
        };
        let (client, driver) = self.build(transport);
        runtime.spawn(driver);
        client.wait_ready().await?;
        Ok(client)
    }
}
