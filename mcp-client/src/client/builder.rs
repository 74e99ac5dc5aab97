//! [`ClientBuilder`]: configuration, then the split into [`Client`] and [`Driver`].

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::transport::Transport;
use tokio::sync::{Notify, Semaphore};

use super::driver::Driver;
use super::mcp_task::receiver::ReceiverLimits;
use super::{Client, Inner, State};
use crate::era_cache::EraCache;
use crate::error::ClientError;
use crate::handler::{ClientHandler, DynHandler, NoHandler};
use crate::session::{Session, SessionConfig, VersionChoice};

/// Configures and connects a [`Client`].
#[must_use]
pub struct ClientBuilder {
    /// Boxed: the builder moves by value through every setter and into
    /// `connect`'s future; a pointer is cheaper to move than ~540 bytes.
    config: Box<SessionConfig>,
    handler: Arc<dyn DynHandler>,
    max_list_pages: usize,
    max_in_flight: usize,
    era_cache: Option<(EraCache, String)>,
    receiver: ReceiverLimits,
    ui_extension: bool,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("config", &self.config)
            .field("max_in_flight", &self.max_in_flight)
            .finish()
    }
}

/// Default cap on pages followed by `list_all`.
pub const DEFAULT_MAX_LIST_PAGES: usize = 1000;

/// Default [`ClientBuilder::max_in_flight`]: enough for any agent's
/// parallel tool calls; bounds what a client holds for calls to a server
/// that answers slowly or not at all.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// The default handler, one for every client (an `Arc` of it costs an
/// allocation per client otherwise).
fn no_handler() -> Arc<dyn DynHandler> {
    static NO_HANDLER: std::sync::OnceLock<Arc<dyn DynHandler>> = std::sync::OnceLock::new();
    NO_HANDLER.get_or_init(|| Arc::new(NoHandler)).clone()
}

impl ClientBuilder {
    /// A builder for a client named `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            config: Box::new(SessionConfig::new(mcp_proto::schema::Implementation::new(
                name, version,
            ))),
            handler: no_handler(),
            max_list_pages: DEFAULT_MAX_LIST_PAGES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            era_cache: None,
            receiver: ReceiverLimits::default(),
            ui_extension: false,
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
    /// from the connection's next pass after the call is handed to it (which
    /// writes the request, or finds the transport not ready for it, and
    /// reads the clock once for all it writes): waiting for a new
    /// session (after an expired one) and the re-send count against it;
    /// only an `input_required` round, answered by the user, starts it
    /// again. Time spent waiting for room under
    /// [`max_in_flight`](Self::max_in_flight) does not count: the call is
    /// not on the connection yet.
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

    /// Cap on pages followed by `list_all` (default [`DEFAULT_MAX_LIST_PAGES`]).
    pub fn max_list_pages(mut self, n: usize) -> Self {
        self.max_list_pages = n;
        self
    }

    /// How many calls may be in flight on this connection at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT`], at least 1). A call made while that many
    /// are in flight waits for one to end, in the order calls started
    /// waiting (what the connection holds is bounded by this, however many
    /// calls a program starts); [`RequestBuilder::try_send`](crate::RequestBuilder::try_send)
    /// fails with [`ClientError::Busy`] instead of waiting.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// How many of the server's requests (legacy era: sampling, elicitation,
    /// roots) the handler may be answering at once (default
    /// [`DEFAULT_MAX_SERVER_REQUESTS`](crate::session::DEFAULT_MAX_SERVER_REQUESTS));
    /// more are answered "client busy" at once.
    pub fn max_server_requests(mut self, n: usize) -> Self {
        self.config.max_server_requests = n;
        self
    }

    /// How many tasks the server asked the client to run (2025-11-25
    /// task-augmented `sampling/createMessage` and `elicitation/create`)
    /// are kept at once, working or finished (default
    /// [`DEFAULT_MAX_KEPT_TASKS`](crate::DEFAULT_MAX_KEPT_TASKS)); one more
    /// is refused with a "client busy" error (-32603) without calling the
    /// handler. `0` takes no tasks: the client then declares no `tasks`
    /// capability and answers such requests as plain ones.
    pub fn max_kept_tasks(mut self, n: usize) -> Self {
        self.receiver.max_tasks = n;
        self
    }

    /// The longest a task the server asked the client to run is kept after
    /// its creation (default [`DEFAULT_MAX_TASK_TTL`](crate::DEFAULT_MAX_TASK_TTL)):
    /// the server's requested `ttl` is capped at this, and a request without
    /// one gets it. At its ttl a task is dropped (its handler stopped if it
    /// still runs) and its id becomes unknown.
    pub fn max_task_ttl(mut self, ttl: Duration) -> Self {
        self.receiver.max_ttl = ttl;
        self
    }

    /// Declare the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`)
    /// in each request's client capabilities (default on).
    ///
    /// Declared, the server may answer any `tools/call` with a task instead
    /// of a result, and the client follows it for you: [`Client::call_tool`]
    /// still resolves to the `CallToolResult` (polling `tasks/get`, answering
    /// the task's input requests through the handler), and
    /// [`Client::call_tool_as_task`] hands you the [`TaskHandle`](crate::TaskHandle).
    /// Not declared, a server whose tool can only run as a task refuses the
    /// call with -32021 (missing required client capability), and one that
    /// could run it either way keeps the caller waiting on one long request
    /// instead. That is why it is on: a long-running tool works with no
    /// setup, as a task-required tool does in 2025-11-25. The cost is the
    /// extension's ~50 bytes in each modern request's `_meta`; a result's
    /// `resultType` is read anyway (for `input_required`), so telling a
    /// task handle apart costs nothing more. Turn it off
    /// for a server that must never hold work for this client between
    /// requests. No effect on a legacy (2025-11-25 and earlier) connection,
    /// whose tasks are driven by [`Client::call_tool_as_task`] and tools'
    /// `taskSupport`.
    pub fn tasks_extension(mut self, on: bool) -> Self {
        self.config.tasks_extension = on;
        self
    }

    /// Declare the MCP Apps extension (`io.modelcontextprotocol/ui`, with
    /// `mimeTypes: ["text/html;profile=mcp-app"]`) in the client
    /// capabilities (default off): this application renders the servers'
    /// UI resources, so servers may offer their UI tools. Declared or not,
    /// a tool's `_meta.ui` is read
    /// ([`Tool::ui`](mcp_proto::schema::Tool::ui)), and `mcp-tools` keeps
    /// app-only tools from the model.
    pub fn ui_extension(mut self, on: bool) -> Self {
        self.ui_extension = on;
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

    /// Record `tools/call` arguments and results on each call's span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, as JSON
    /// text; see [`telemetry`](crate::telemetry)). They may hold sensitive
    /// data: off by default, as the OpenTelemetry conventions ask.
    pub fn record_tool_content(mut self, on: bool) -> Self {
        self.config.record_tool_content = on;
        self
    }

    /// Splits into the client and its driver, which the caller must spawn
    /// on a tokio runtime (or poll inside one) for anything to happen. The
    /// handshake is queued now and goes out when the driver first runs;
    /// [`Client::wait_ready`] waits for it (its timeout runs from now).
    ///
    /// Never panics and needs no runtime itself: it may run before one
    /// exists. A driver polled outside a tokio runtime closes the connection
    /// with [`CloseReason::NoRuntime`](crate::CloseReason::NoRuntime).
    pub fn build(mut self, transport: impl Transport) -> (Client, Driver) {
        let mut caps = self.handler.capabilities();
        if self.receiver.max_tasks > 0 {
            // `tasks.requests` names only what the handler declared
            // (sampling, elicitation); nothing if it declared neither.
            caps = caps.with_task_requests();
        }
        if self.ui_extension {
            caps = caps.with_ui_extension();
        }
        if let Some(existing) = self.config.capabilities.experimental.take() {
            caps.experimental
                .get_or_insert_with(Default::default)
                .extend(existing);
        }
        self.config.capabilities = caps.clone();
        let caps = Arc::new(caps);
        self.config.endpoint = transport.endpoint();
        let mut session = Session::with_config(self.config);
        let hint = self.era_cache.as_ref().and_then(|(c, k)| c.get(k));
        let used_hint = hint.is_some();
        session.start_with_hint(super::now(), hint);
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                session,
                next_call: 0,
                waiters: HashMap::default(),
                driver: None,
                driver_woken: false,
                ready_waiters: Vec::new(),
                close_waiters: Some(Vec::new()),
                task_watch: HashMap::default(),
            }),
            slots: Arc::new(Semaphore::new(self.max_in_flight)),
            max_in_flight: self.max_in_flight,
            closed: Notify::new(),
            changes: Default::default(),
            max_list_pages: self.max_list_pages,
            params_size_hint: AtomicUsize::new(0),
            handler: self.handler.clone(),
            capabilities: caps.clone(),
        });
        let driver = Driver::new(
            inner.clone(),
            Box::pin(transport),
            self.handler,
            caps,
            self.era_cache.map(|(cache, key)| (cache, key, used_hint)),
            self.receiver,
        );
        (Client::new(inner), driver)
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
