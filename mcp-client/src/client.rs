//! The async side: a cloneable [`Client`] handle and the [`Driver`] task that
//! owns the [`Session`](crate::session::Session) and the transport.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Notification};
use mcp_proto::method::Method;
use mcp_proto::schema::JsonObject;
use mcp_proto::schema::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, GetPromptParams,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ListenParams, LoggingLevel, Page, PageItem, PaginatedParams, ProgressParams,
    Prompt, ReadResourceParams, ReadResourceResult, Resource, ResourceTemplate, SubscribeParams,
    SubscriptionFilter, Tool,
};
use mcp_proto::transport::{BoxTransport, Transport};
use mcp_proto::{Era, ErrorObject, ProtocolVersion, RequestId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use crate::era_cache::EraCache;
use crate::error::{ClientError, CloseReason};
use crate::handler::{ClientHandler, NoHandler};
use crate::session::{
    CallId, CallOptions, Event, ServerInfo, Session, SessionConfig, Transmit, VersionChoice,
};
use crate::session::{Embedded, progress_token};

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(ProgressParams) + Send + Sync>;

type Reply = oneshot::Sender<Result<RawJson, ClientError>>;

enum Command {
    Request {
        call: CallId,
        method: Cow<'static, str>,
        params: Option<RawJson>,
        embedded: Embedded,
        options: CallOptions,
        progress: Option<ProgressFn>,
        reply: Reply,
    },
    /// Reply once the handshake finished (or failed).
    WaitReady(Reply),
    Cancel(CallId, Option<String>),
    Notify {
        method: String,
        params: Option<RawJson>,
    },
    Respond {
        id: mcp_proto::RequestId,
        result: Result<RawJson, ErrorObject>,
    },
    Input {
        call: CallId,
        responses: mcp_proto::schema::InputResponses,
    },
    SetLogLevel(Option<LoggingLevel>),
    Close(oneshot::Sender<()>),
}

/// Which server list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `resources/list`.
    Resources,
    /// `prompts/list`.
    Prompts,
}

struct Shared {
    commands: mpsc::UnboundedSender<Command>,
    next_call: AtomicU64,
    server: RwLock<Option<Arc<ServerInfo>>>,
    changes: [watch::Sender<u64>; 3],
    max_list_pages: usize,
    /// Why the connection closed, once it has (see [`Client::closed`]).
    closed: watch::Sender<Option<CloseReason>>,
    /// The negotiated modern revision and its per-request `_meta` members.
    meta: RwLock<Option<Arc<(ProtocolVersion, JsonObject)>>>,
    /// Length of the last params encoded at send time: the next ones are
    /// encoded into a buffer of about this size, so calls with large
    /// arguments do not regrow (and copy) their buffer every time.
    params_size_hint: AtomicUsize,
    /// The driver's state, for callers that hand requests over directly
    /// (set once at build; gone when the driver is dropped).
    core: std::sync::OnceLock<std::sync::Weak<Mutex<DriverCore>>>,
}

impl Shared {
    fn meta_template(&self) -> Option<Arc<(ProtocolVersion, JsonObject)>> {
        self.meta.read().ok().and_then(|g| g.clone())
    }

    fn closed_error(&self) -> ClientError {
        let reason = self.closed.borrow().clone();
        ClientError::Closed(reason.unwrap_or(CloseReason::DriverGone))
    }
}

/// A connected MCP client: cheap to clone, safe to share across tasks. Many
/// calls may be in flight at once over one transport; no lock is held across
/// a call.
///
/// Dropping every clone closes the connection (the driver closes the
/// transport). Prefer [`Client::close`] to wait for a clean shutdown.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server())
            .finish()
    }
}

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

/// How many notifications may wait for the handler before the driver stops
/// reading from the server (backpressure: a server that floods
/// notifications faster than the handler takes them is slowed down, not
/// buffered without bound, and nothing is dropped).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 1024;

/// How many server-to-client requests (legacy era) may be handled at once;
/// more are answered at once with an error (-32603, "client busy").
pub const MAX_CONCURRENT_SERVER_REQUESTS: usize = 64;

/// Counts notifications queued for the handler and wakes the driver when
/// the queue drains below [`MAX_QUEUED_NOTIFICATIONS`].
#[derive(Default)]
struct Backlog {
    queued: AtomicUsize,
    waker: std::sync::Mutex<Option<std::task::Waker>>,
}

impl Backlog {
    fn push(&self) {
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
    fn has_room(&self, cx: &Context<'_>) -> bool {
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

async fn notification_loop(
    mut rx: mpsc::UnboundedReceiver<Notification>,
    handler: Arc<dyn ClientHandler>,
    backlog: Arc<Backlog>,
) {
    while let Some(n) = rx.recv().await {
        handler.on_notification(n);
        backlog.pop();
    }
}

impl Client {
    /// A builder (see [`ClientBuilder`]).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    /// Connects over `transport` with default settings.
    pub async fn connect(transport: impl Transport) -> Result<Client, ClientError> {
        ClientBuilder::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
            .connect(transport)
            .await
    }

    /// Waits until the handshake has finished (or failed).
    pub async fn wait_ready(&self) -> Result<(), ClientError> {
        // Nothing goes on the wire: the driver answers when negotiation ends.
        let (tx, rx) = oneshot::channel();
        self.send(Command::WaitReady(tx))?;
        match rx.await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(self.shared.closed_error()),
        }
    }

    /// The negotiated server (identity, revision, capabilities, instructions),
    /// once the handshake finished.
    pub fn server(&self) -> Option<Arc<ServerInfo>> {
        self.shared.server.read().ok().and_then(|g| g.clone())
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.server().map(|s| s.protocol_version)
    }

    /// The negotiated era.
    pub fn era(&self) -> Option<Era> {
        self.protocol_version().map(ProtocolVersion::era)
    }

    /// A receiver whose value increases each time the server says `kind`'s
    /// list changed (legacy `list_changed` notifications, or a
    /// `subscriptions/listen` stream's).
    pub fn list_changed(&self, kind: ListKind) -> watch::Receiver<u64> {
        self.shared.changes[kind_index(kind)].subscribe()
    }

    /// Why the connection closed, or `None` while it is open.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.closed.borrow().clone()
    }

    /// Completes when the connection closes (the server exited or hung up,
    /// the transport failed, the handshake failed, [`close`](Client::close)
    /// was called, or the driver task is gone), with the reason. Completes at
    /// once if it already has. No polling: the driver signals it.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) {
    /// let reason = client.closed().await;
    /// eprintln!("server gone: {reason}");
    /// # }
    /// ```
    pub fn closed(&self) -> impl Future<Output = CloseReason> + Send + 'static {
        let mut rx = self.shared.closed.subscribe();
        async move {
            match rx.wait_for(Option::is_some).await {
                Ok(reason) => reason.clone().unwrap_or(CloseReason::DriverGone),
                // The sender lives in `Shared`, which `rx`'s client kept
                // alive until the call; gone means every client is gone.
                Err(_) => CloseReason::DriverGone,
            }
        }
    }

    fn next_call(&self) -> CallId {
        CallId(self.shared.next_call.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn send(&self, cmd: Command) -> Result<(), ClientError> {
        self.shared
            .commands
            .send(cmd)
            .map_err(|_| self.shared.closed_error())
    }

    /// Hands a request straight to the session (after any commands queued
    /// before it, so order is kept) and, when it is the only one in flight,
    /// writes it too. Falls back to the driver's channel before the driver
    /// first ran and after it stopped.
    fn submit(&self, cmd: Command) -> Result<(), ClientError> {
        let Some(core) = self.shared.core.get().and_then(std::sync::Weak::upgrade) else {
            return self.send(cmd);
        };
        let mut core = lock_core(&core);
        if !core.started || core.state != DriverState::Running {
            drop(core);
            return self.send(cmd);
        }
        core.take_commands();
        core.on_command(cmd);
        let alone = core.waiters.len() == 1;
        core.transmit_inline(alone);
        Ok(())
    }

    /// Starts a request with raw JSON params (must be an object or `None`).
    /// The escape hatch for methods this crate has no typed call for.
    pub fn request_raw(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
    ) -> RequestBuilder<'_> {
        RequestBuilder {
            client: self,
            method: method.into(),
            params: Params::Raw(params),
            options: CallOptions::default(),
            progress: None,
        }
    }

    /// Starts a request with serializable params.
    pub fn request_with<P: Serialize>(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: &P,
    ) -> RequestBuilder<'_> {
        let params = match RawJson::from_value(params) {
            Ok(p) => Params::Raw(Some(p)),
            Err(e) => Params::Failed(encode_error(&e)),
        };
        RequestBuilder {
            client: self,
            method: method.into(),
            params,
            options: CallOptions::default(),
            progress: None,
        }
    }

    /// A request whose params (a struct or map with no `_meta` member of its
    /// own) are encoded at send time together with the `_meta` it needs.
    fn request_lazy<'a, P: Serialize + Send + 'a>(
        &'a self,
        method: impl Into<Cow<'static, str>>,
        params: P,
    ) -> RequestBuilder<'a> {
        self.request_encoded(method, move |meta: &MetaSpec<'_>, capacity| {
            if meta.is_empty() {
                RawJson::from_value_with_capacity(&params, capacity)
            } else {
                RawJson::from_value_with_capacity(
                    &WithMeta {
                        meta,
                        params: &params,
                    },
                    capacity,
                )
            }
        })
    }

    /// A request whose params `encode` writes at send time, including the
    /// given `_meta` when it is not empty, into a buffer of the given capacity.
    fn request_encoded<'a>(
        &'a self,
        method: impl Into<Cow<'static, str>>,
        encode: impl FnOnce(&MetaSpec<'_>, usize) -> serde_json::Result<RawJson> + Send + 'a,
    ) -> RequestBuilder<'a> {
        RequestBuilder {
            client: self,
            method: method.into(),
            params: Params::Lazy(Box::new(encode)),
            options: CallOptions::default(),
            progress: None,
        }
    }

    /// A typed request.
    pub async fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result, ClientError> {
        self.request_with(M::NAME, params)
            .send_typed::<M::Result>()
            .await
    }

    /// Sends a notification.
    pub fn notify(
        &self,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        self.send(Command::Notify {
            method: method.into(),
            params,
        })
    }

    /// Sets the server's minimum log level: `logging/setLevel` in the legacy
    /// era; the `_meta` log level of every later request in 2026-07-28.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.era() == Some(Era::Modern) {
            return self.send(Command::SetLogLevel(Some(level)));
        }
        self.request_with("logging/setLevel", &serde_json::json!({ "level": level }))
            .send()
            .await
            .map(drop)
    }

    /// `ping` (legacy era; 2026-07-28 has no ping: this sends `server/discover` instead).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.era() == Some(Era::Modern) {
            "server/discover"
        } else {
            "ping"
        };
        self.request_raw(method, None).send().await.map(drop)
    }

    /// One page of any paginated list, named by its item type:
    /// `client.list_page::<Tool>(None)` sends `tools/list`. See
    /// [`Page`](mcp_proto::schema::Page) for why every list shares one shape.
    pub async fn list_page<T: PageItem + DeserializeOwned>(
        &self,
        cursor: Option<String>,
    ) -> Result<Page<T>, ClientError> {
        self.request_lazy(T::METHOD, PaginatedParams::new(cursor))
            .send_typed()
            .await
    }

    /// Every item of a paginated list, following cursors (up to the page cap,
    /// [`ClientBuilder::max_list_pages`]): `client.list_all::<Prompt>()`.
    pub async fn list_all<T: PageItem + DeserializeOwned>(&self) -> Result<Vec<T>, ClientError> {
        let mut all = Vec::new();
        self.paginate(T::METHOD, |page: Page<T>| {
            all.extend(page.items);
            Ok(page.next_cursor)
        })
        .await?;
        Ok(all)
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every tool, following cursors (up to the page cap).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all().await
    }

    /// Every page of a list method, raw: each page's result object as received.
    pub async fn list_all_raw(&self, method: &str) -> Result<Vec<RawJson>, ClientError> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Cursor {
            next_cursor: Option<String>,
        }
        let mut pages = Vec::new();
        self.paginate(method.to_owned(), |raw: RawJson| {
            let next: Cursor = decode(method, &raw)?;
            pages.push(raw);
            Ok(next.next_cursor)
        })
        .await?;
        Ok(pages)
    }

    /// The one cursor loop behind every `list_all*`: requests `method` page
    /// by page, hands each decoded page to `on_page`, which returns the page's
    /// `nextCursor`, and stops when a page has none (an empty string is a
    /// valid cursor). More than [`ClientBuilder::max_list_pages`] pages is
    /// [`ClientError::TooManyPages`].
    pub async fn paginate<R: DeserializeOwned>(
        &self,
        method: impl Into<Cow<'static, str>>,
        mut on_page: impl FnMut(R) -> Result<Option<String>, ClientError>,
    ) -> Result<(), ClientError> {
        let method = method.into();
        let mut cursor = None;
        for _ in 0..self.shared.max_list_pages {
            let page: R = self
                .request_lazy(method.clone(), PaginatedParams::new(cursor.take()))
                .send_typed()
                .await?;
            match on_page(page)? {
                Some(c) => cursor = Some(c),
                None => return Ok(()),
            }
        }
        Err(ClientError::TooManyPages {
            method: method.into(),
            limit: self.shared.max_list_pages,
        })
    }

    /// Calls a tool with JSON arguments. For progress (which then also
    /// resets the timeout) use [`call_tool_with_args`](Self::call_tool_with_args)
    /// and [`RequestBuilder::progress`] or [`RequestBuilder::on_progress`].
    pub async fn call_tool(
        &self,
        name: impl AsRef<str>,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with_args(name.as_ref(), &arguments)
            .send_typed()
            .await
    }

    /// A `tools/call` request whose arguments are any serializable value,
    /// encoded straight into the request (no intermediate `serde_json::Value`,
    /// no copy of large arguments).
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// #[derive(serde::Serialize)]
    /// struct Echo<'a> { text: &'a str }
    /// let result: mcp_proto::schema::CallToolResult =
    ///     client.call_tool_with_args("echo", &Echo { text: "hi" }).send_typed().await?;
    /// # Ok(()) }
    /// ```
    pub fn call_tool_with_args<'a, A: Serialize + Sync + ?Sized>(
        &'a self,
        name: &'a str,
        arguments: &'a A,
    ) -> RequestBuilder<'a> {
        // Written directly (not with `#[serde(flatten)]`): this is the hot path.
        #[derive(Serialize)]
        struct CallParams<'a, A: ?Sized> {
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a MetaSpec<'a>>,
            name: &'a str,
            arguments: &'a A,
        }
        self.request_encoded("tools/call", move |meta: &MetaSpec<'_>, capacity| {
            RawJson::from_value_with_capacity(
                &CallParams {
                    meta: (!meta.is_empty()).then_some(meta),
                    name,
                    arguments,
                },
                capacity,
            )
        })
    }

    /// A `tools/call` request to configure (timeout, progress callback) before sending.
    pub fn call_tool_with(&self, params: &CallToolParams) -> RequestBuilder<'_> {
        self.request_with("tools/call", params)
    }

    /// One page of `resources/list`.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every resource, following cursors.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all().await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every resource template, following cursors.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all().await
    }

    /// `resources/read`.
    pub async fn read_resource(
        &self,
        uri: impl Into<String>,
    ) -> Result<ReadResourceResult, ClientError> {
        self.request_lazy("resources/read", ReadResourceParams::new(uri))
            .send_typed()
            .await
    }

    /// `resources/subscribe` (legacy era; in 2026-07-28 use [`Client::listen`]).
    pub async fn subscribe_resource(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.legacy_only("resources/subscribe")?;
        self.request_lazy("resources/subscribe", SubscribeParams::new(uri))
            .send()
            .await
            .map(drop)
    }

    /// `resources/unsubscribe` (legacy era).
    pub async fn unsubscribe_resource(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.legacy_only("resources/unsubscribe")?;
        self.request_lazy("resources/unsubscribe", SubscribeParams::new(uri))
            .send()
            .await
            .map(drop)
    }

    /// `subscriptions/listen` (2026-07-28): opens a long-lived subscription.
    /// The notifications it carries reach the handler and [`Client::list_changed`];
    /// the returned future completes when the server ends the subscription.
    /// Dropping it cancels the subscription.
    pub fn listen(&self, filter: SubscriptionFilter) -> ResponseFuture {
        if let Err(e) = self.modern_only("subscriptions/listen") {
            return ResponseFuture::failed(self, e);
        }
        self.request_lazy("subscriptions/listen", ListenParams::new(filter))
            .no_timeout()
            .send()
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.list_page(cursor).await
    }

    /// Every prompt, following cursors.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all().await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: impl Into<String>,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = GetPromptParams::new(name);
        for (k, v) in arguments {
            params = params.with_argument(k, v);
        }
        self.request_lazy("prompts/get", params).send_typed().await
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: &CompleteParams) -> Result<CompleteResult, ClientError> {
        self.request_with("completion/complete", params)
            .send_typed()
            .await
    }

    fn legacy_only(&self, method: &str) -> Result<(), ClientError> {
        match self.protocol_version() {
            Some(v) if v.era() == Era::Modern => Err(ClientError::NotInRevision {
                method: method.into(),
                version: v,
            }),
            _ => Ok(()),
        }
    }

    fn modern_only(&self, method: &str) -> Result<(), ClientError> {
        match self.protocol_version() {
            Some(v) if v.era() == Era::Legacy => Err(ClientError::NotInRevision {
                method: method.into(),
                version: v,
            }),
            _ => Ok(()),
        }
    }

    /// Closes the connection: pending calls fail with [`ClientError::Closed`],
    /// the transport shuts down (stdio: close stdin, wait, SIGTERM, SIGKILL).
    pub async fn close(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Command::Close(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

fn kind_index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Resources => 1,
        ListKind::Prompts => 2,
    }
}

fn decode<R: DeserializeOwned>(method: &str, raw: &RawJson) -> Result<R, ClientError> {
    raw.decode().map_err(|e| ClientError::Decode {
        method: method.to_owned(),
        message: e.to_string(),
    })
}

/// A request being configured. Send it with [`send`](RequestBuilder::send)
/// (raw result) or [`send_typed`](RequestBuilder::send_typed).
///
/// Dropping the returned future before it completes cancels the request on
/// the server.
#[must_use = "a request does nothing until sent"]
pub struct RequestBuilder<'a> {
    client: &'a Client,
    method: Cow<'static, str>,
    params: Params<'a>,
    options: CallOptions,
    progress: Option<ProgressFn>,
}

type LazyParams<'a> =
    Box<dyn FnOnce(&MetaSpec<'_>, usize) -> serde_json::Result<RawJson> + Send + 'a>;

/// Request params, before they are sent.
enum Params<'a> {
    /// Already encoded (the caller's `_meta`, if any, is inside).
    Raw(Option<RawJson>),
    /// Encoded at send time, with the `_meta` the request needs written in
    /// the same pass (no splice, no second copy of large arguments). Only for
    /// params types that have no `_meta` of their own.
    Lazy(LazyParams<'a>),
    Failed(ClientError),
}

/// What goes into `_meta` when lazy params are encoded.
struct MetaSpec<'a> {
    members: Option<&'a JsonObject>,
    progress_token: Option<RequestId>,
}

impl MetaSpec<'_> {
    fn is_empty(&self) -> bool {
        self.members.is_none() && self.progress_token.is_none()
    }
}

impl Serialize for MetaSpec<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if let Some(members) = self.members {
            for (k, v) in members {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some(t) = &self.progress_token {
            m.serialize_entry(mcp_proto::schema::META_PROGRESS_TOKEN, t)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct WithMeta<'a, P: ?Sized> {
    #[serde(rename = "_meta")]
    meta: &'a MetaSpec<'a>,
    #[serde(flatten)]
    params: &'a P,
}

fn encode_error(e: &serde_json::Error) -> ClientError {
    ClientError::Decode {
        method: "request params".into(),
        message: e.to_string(),
    }
}

impl std::fmt::Debug for RequestBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("method", &self.method)
            .field("options", &self.options)
            .finish()
    }
}

impl RequestBuilder<'_> {
    /// Timeout for this call, reset by progress.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.options = self.options.timeout(t);
        self
    }

    /// Cap on this call's total time.
    pub fn max_time(mut self, t: Duration) -> Self {
        self.options = self.options.max_time(t);
        self
    }

    /// Never time out (long-lived requests such as `subscriptions/listen`).
    pub fn no_timeout(mut self) -> Self {
        self.options = self.options.no_timeout();
        self
    }

    /// Ask for progress notifications (they reset the timeout) without a
    /// callback. Off by default, as in the spec and the other SDKs: a
    /// progress token invites the server to send notifications, which cost
    /// both sides (about 2.5% of a small sequential call here). Ask for it
    /// for calls that may run long: a server that reports progress then
    /// keeps them alive past the timeout (up to the max time).
    pub fn progress(mut self, on: bool) -> Self {
        self.options = self.options.progress(on);
        self
    }

    /// Calls `f` for each progress notification of this call.
    pub fn on_progress(mut self, f: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        self.options = self.options.progress(true);
        self.progress = Some(Arc::new(f));
        self
    }

    /// Sends the request; resolves to the raw result.
    pub fn send(self) -> ResponseFuture {
        let (tx, rx) = oneshot::channel();
        let call = self.client.next_call();
        let encoded = match self.params {
            Params::Raw(p) => Ok((p, Embedded::default())),
            Params::Failed(e) => Err(e),
            Params::Lazy(encode) => {
                let template = self.client.shared.meta_template();
                let members = template.as_deref().map(|(_, m)| m);
                let spec = MetaSpec {
                    members,
                    progress_token: self.options.progress.then(|| progress_token(call)),
                };
                let embedded =
                    Embedded::new(template.as_deref().map(|(v, _)| *v), self.options.progress);
                let hint = &self.client.shared.params_size_hint;
                // A little headroom over the last size: equal sizes never regrow.
                let capacity = hint.load(Ordering::Relaxed).saturating_mul(9) / 8 + 64;
                encode(&spec, capacity)
                    .map(|p| {
                        hint.store(p.len(), Ordering::Relaxed);
                        (Some(p), embedded)
                    })
                    .map_err(|e| encode_error(&e))
            }
        };
        let sent = encoded.and_then(|(params, embedded)| {
            self.client.submit(Command::Request {
                call,
                method: self.method,
                params,
                embedded,
                options: self.options,
                progress: self.progress,
                reply: tx,
            })
        });
        ResponseFuture {
            rx,
            early: sent.err(),
            guard: CancelGuard {
                shared: self.client.shared.clone(),
                call,
                armed: true,
            },
        }
    }

    /// Sends the request and decodes the result.
    pub async fn send_typed<R: DeserializeOwned>(self) -> Result<R, ClientError> {
        let method = self.method.clone();
        let raw = self.send().await?;
        decode(&method, &raw)
    }
}

struct CancelGuard {
    shared: Arc<Shared>,
    call: CallId,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.shared.commands.send(Command::Cancel(self.call, None));
        }
    }
}

/// The pending result of a request. Dropping it cancels the request.
#[must_use = "dropping the future cancels the request"]
pub struct ResponseFuture {
    rx: oneshot::Receiver<Result<RawJson, ClientError>>,
    early: Option<ClientError>,
    guard: CancelGuard,
}

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("call", &self.guard.call)
            .finish()
    }
}

impl ResponseFuture {
    /// Cancels the request with a reason the server may log (the spec's
    /// `notifications/cancelled` `reason`). Dropping the future cancels too,
    /// with a generic reason.
    pub fn cancel(mut self, reason: &str) {
        if self.guard.armed {
            self.guard.armed = false;
            let _ = self
                .guard
                .shared
                .commands
                .send(Command::Cancel(self.guard.call, Some(reason.to_owned())));
        }
    }

    fn failed(client: &Client, err: ClientError) -> Self {
        let (_tx, rx) = oneshot::channel();
        ResponseFuture {
            rx,
            early: Some(err),
            guard: CancelGuard {
                shared: client.shared.clone(),
                call: CallId(0),
                armed: false,
            },
        }
    }
}

impl Future for ResponseFuture {
    type Output = Result<RawJson, ClientError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(e) = self.early.take() {
            self.guard.armed = false;
            return Poll::Ready(Err(e));
        }
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(r) => {
                self.guard.armed = false;
                Poll::Ready(r.unwrap_or_else(|_| Err(self.guard.shared.closed_error())))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

struct Waiter {
    reply: Reply,
    progress: Option<ProgressFn>,
}

#[derive(Debug, PartialEq, Eq)]
enum DriverState {
    Running,
    /// Session closed; closing the transport.
    Closing,
    Done,
}

/// The task that runs the connection: it reads from the server, writes
/// what callers queued, runs timers and closes. Spawn it (or `.await` it); it
/// finishes when the connection is closed.
///
/// The session and the transport live in one state behind a mutex
/// that callers share: a request is handed to the session by the caller
/// itself, and when it is the only one in flight (the sequential case) the
/// caller also writes it, so a call costs no task hand-off on the way out.
/// Concurrent requests leave the writing to the driver, which batches them
/// into one write. The lock is never held across an `.await` or while user
/// code (handlers, progress callbacks) runs.
#[must_use = "the driver does nothing unless spawned or polled"]
pub struct Driver {
    core: Arc<Mutex<DriverCore>>,
}

/// Everything the connection owns; see [`Driver`].
struct DriverCore {
    /// Wakes the driver task (its last poll's waker).
    driver_waker: Option<std::task::Waker>,
    /// Progress callbacks to run once the lock is released.
    deferred: Vec<(ProgressFn, ProgressParams)>,
    session: Session,
    transport: BoxTransport,
    commands: mpsc::UnboundedReceiver<Command>,
    shared: std::sync::Weak<Shared>,
    waiters: HashMap<CallId, Waiter, crate::session::IdHash>,
    stash: Option<Message>,
    sleep: Pin<Box<tokio::time::Sleep>>,
    armed: Option<std::time::Instant>,
    notifications: mpsc::UnboundedSender<Notification>,
    backlog: Arc<Backlog>,
    server_requests: Arc<AtomicUsize>,
    handler: Arc<dyn ClientHandler>,
    state: DriverState,
    ready_waiters: Vec<Reply>,
    ready: bool,
    started: bool,
    /// Where to remember the server's era, and under which key.
    era_cache: Option<(EraCache, String)>,
    /// The session started from a remembered era.
    used_hint: bool,
    close_waiters: Vec<oneshot::Sender<()>>,
    dirty: bool,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

impl Drop for DriverCore {
    /// A driver dropped before the connection closed (its task was aborted,
    /// the runtime shut down) still wakes [`Client::closed`].
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.closed.send_if_modified(|reason| {
                let unset = reason.is_none();
                if unset {
                    *reason = Some(CloseReason::DriverGone);
                }
                unset
            });
        }
    }
}

/// Locks the core; a panic while it was held (a bug) does not wedge the
/// connection for everyone else.
fn lock_core(core: &Mutex<DriverCore>) -> std::sync::MutexGuard<'_, DriverCore> {
    core.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many inbound messages one poll handles before yielding (fairness).
const MAX_INBOUND_PER_POLL: usize = 256;

fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

impl DriverCore {
    /// Applies the commands queued on the channel, oldest first.
    fn take_commands(&mut self) {
        while let Ok(cmd) = self.commands.try_recv() {
            self.on_command(cmd);
        }
    }

    /// After a caller handed over a request: writes it right away when the
    /// transport takes it without waiting, and wakes the driver only for
    /// what the caller cannot finish (a write that would block, session
    /// events, a timer to move earlier, requests already in flight whose
    /// writes are better batched by the driver).
    fn transmit_inline(&mut self, alone: bool) {
        // A transport may spawn tasks while writing (HTTP): only inside the
        // runtime. Elsewhere the driver writes.
        let inline = alone && tokio::runtime::Handle::try_current().is_ok();
        let mut wake = !inline;
        if inline {
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let _ = self.poll_transmit(&mut cx);
            wake = self.stash.is_some() || self.dirty;
        }
        if let Some(deadline) = self.session.take_new_deadline() {
            wake |= self.armed.is_none_or(|armed| deadline < armed);
        }
        if wake || self.session.has_events() || self.state != DriverState::Running {
            if let Some(w) = &self.driver_waker {
                w.wake_by_ref();
            }
        }
    }

    fn on_command(&mut self, cmd: Command) {
        let now = now();
        match cmd {
            Command::Request {
                call,
                method,
                params,
                embedded,
                options,
                progress,
                reply,
            } => {
                match self
                    .session
                    .request_embedded(call, method, params, options, embedded, now)
                {
                    Ok(()) => {
                        self.waiters.insert(call, Waiter { reply, progress });
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
            Command::WaitReady(reply) => {
                if self.ready {
                    let _ = reply.send(Ok(empty()));
                } else if let Some(err) = self.closed_error() {
                    let _ = reply.send(Err(err));
                } else {
                    self.ready_waiters.push(reply);
                }
            }
            Command::Cancel(call, reason) => {
                if self.waiters.remove(&call).is_some() {
                    let reason = reason
                        .as_deref()
                        .unwrap_or("the caller dropped the request");
                    self.session.cancel(call, Some(reason));
                }
            }
            Command::Notify { method, params } => {
                let _ = self.session.notify(method, params);
            }
            Command::Respond { id, result } => self.session.respond(id, result),
            Command::Input { call, responses } => self.session.provide_input(call, responses, now),
            Command::SetLogLevel(level) => {
                self.session.set_log_level(level);
                self.publish_meta();
            }
            Command::Close(tx) => {
                self.close_waiters.push(tx);
                self.session.close();
            }
        }
    }

    fn publish_meta(&self) {
        if let Some(shared) = self.shared.upgrade() {
            if let Ok(mut g) = shared.meta.write() {
                *g = self.session.request_meta_members().map(Arc::new);
            }
        }
    }

    fn closed_error(&self) -> Option<ClientError> {
        if self.session.is_closed() {
            self.shared.upgrade().map(|s| s.closed_error())
        } else {
            None
        }
    }

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::Ready => {
                self.ready = true;
                if let (Some((cache, key)), Some(learned)) =
                    (&self.era_cache, self.session.learned_era())
                {
                    cache.insert(key.clone(), learned.clone());
                }
                self.publish_meta();
                if let (Some(shared), Some(info)) = (self.shared.upgrade(), self.session.server()) {
                    if let Ok(mut g) = shared.server.write() {
                        *g = Some(Arc::new(info.clone()));
                    }
                }
                for r in self.ready_waiters.drain(..) {
                    let _ = r.send(Ok(empty()));
                }
            }
            Event::Completed { call, result } => {
                if let Some(w) = self.waiters.remove(&call) {
                    let _ = w.reply.send(result);
                }
            }
            Event::Progress { call, progress } => {
                if let Some(cb) = self.waiters.get(&call).and_then(|w| w.progress.clone()) {
                    // Called by `Driver::poll` once the lock is released.
                    self.deferred.push((cb, progress));
                }
            }
            Event::InputRequired { call, requests } => {
                let handler = self.handler.clone();
                let commands = self.shared.upgrade().map(|s| s.commands.clone());
                tokio::spawn(async move {
                    let mut responses = mcp_proto::schema::InputResponses::new();
                    for (key, req) in requests {
                        let params = req
                            .params
                            .as_ref()
                            .and_then(|p| p.decode().ok())
                            .unwrap_or(Value::Null);
                        match handler.handle_request(&req.method, params).await {
                            Ok(v) => {
                                responses.insert(key, v);
                            }
                            Err(e) => {
                                tracing::warn!(method = %req.method, error = %e, "could not answer an input request; retrying without it");
                            }
                        }
                    }
                    if let Some(c) = commands {
                        let _ = c.send(Command::Input { call, responses });
                    }
                });
            }
            Event::ServerRequest(req) => {
                if self.server_requests.load(Ordering::Acquire) >= MAX_CONCURRENT_SERVER_REQUESTS {
                    tracing::warn!(method = %req.method, "too many server requests in flight; answering busy");
                    let busy = ErrorObject::new(
                        mcp_proto::ErrorCode::INTERNAL_ERROR,
                        format!(
                            "client busy: more than {MAX_CONCURRENT_SERVER_REQUESTS} requests in flight"
                        ),
                    );
                    self.session.respond(req.id, Err(busy));
                    return;
                }
                self.server_requests.fetch_add(1, Ordering::AcqRel);
                let in_flight = self.server_requests.clone();
                let handler = self.handler.clone();
                let commands = self.shared.upgrade().map(|s| s.commands.clone());
                tokio::spawn(async move {
                    let params = req
                        .params
                        .as_ref()
                        .and_then(|p| p.decode().ok())
                        .unwrap_or(Value::Null);
                    let result = handler
                        .handle_request(&req.method, params)
                        .await
                        .and_then(|v| {
                            RawJson::from_value(&v).map_err(|e| {
                                ErrorObject::new(
                                    mcp_proto::ErrorCode::INTERNAL_ERROR,
                                    e.to_string(),
                                )
                            })
                        });
                    in_flight.fetch_sub(1, Ordering::AcqRel);
                    if let Some(c) = commands {
                        let _ = c.send(Command::Respond { id: req.id, result });
                    }
                });
            }
            Event::Notification(n) => {
                let kind = match &*n.method {
                    "notifications/tools/list_changed" => Some(ListKind::Tools),
                    "notifications/resources/list_changed" => Some(ListKind::Resources),
                    "notifications/prompts/list_changed" => Some(ListKind::Prompts),
                    _ => None,
                };
                if let (Some(kind), Some(shared)) = (kind, self.shared.upgrade()) {
                    shared.changes[kind_index(kind)].send_modify(|v| *v += 1);
                }
                if self.notifications.send(n).is_ok() {
                    self.backlog.push();
                }
            }
            Event::Closed(reason) => {
                if let Some((cache, key)) = &self.era_cache {
                    if self.used_hint && self.session.learned_era().is_none() {
                        // The remembered era failed and detection did not
                        // finish: the next connection starts from scratch.
                        cache.remove(key);
                    }
                }
                if let Some(shared) = self.shared.upgrade() {
                    shared.closed.send_replace(Some(reason.clone()));
                }
                let err = ClientError::Closed(reason);
                for r in self.ready_waiters.drain(..) {
                    let _ = r.send(Err(err.clone()));
                }
                for (_, w) in self.waiters.drain() {
                    let _ = w.reply.send(Err(err.clone()));
                }
                self.state = DriverState::Closing;
            }
        }
    }

    /// Moves the session's output into the transport. Returns Err on a terminal send failure.
    fn poll_transmit(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut wrote = false;
        loop {
            let msg = match self.stash.take() {
                Some(m) => m,
                None => match self.session.poll_transmit() {
                    Some(Transmit::Message(m)) => m,
                    Some(Transmit::ProtocolVersion(v)) => {
                        self.transport.as_mut().set_protocol_version(v);
                        continue;
                    }
                    None => break,
                },
            };
            match self.transport.as_mut().poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => {
                    self.session.handle_transport_error(e, now());
                    return Poll::Ready(());
                }
                Poll::Pending => {
                    self.stash = Some(msg);
                    break;
                }
            }
            if let Err(e) = self.transport.as_mut().start_send(msg) {
                self.session.handle_transport_error(e, now());
                return Poll::Ready(());
            }
            wrote = true;
        }
        if wrote || self.stash.is_some() || self.dirty {
            match self.transport.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => self.dirty = false,
                Poll::Ready(Err(e)) => {
                    self.dirty = false;
                    self.session.handle_transport_error(e, now());
                    return Poll::Ready(());
                }
                Poll::Pending => self.dirty = true,
            }
        }
        Poll::Pending
    }

    fn drain_events(&mut self) {
        while let Some(ev) = self.session.poll_event() {
            self.on_event(ev);
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut core = lock_core(&self.core);
        if !core
            .driver_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            core.driver_waker = Some(cx.waker().clone());
        }
        let done = core.poll_core(cx);
        let deferred = std::mem::take(&mut core.deferred);
        drop(core);
        for (cb, progress) in deferred {
            cb(progress);
        }
        done
    }
}

impl DriverCore {
    fn poll_core(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let this = self;
        if !this.started {
            this.started = true;
            let hint = this.era_cache.as_ref().and_then(|(c, k)| c.get(k));
            this.used_hint = hint.is_some();
            this.session.start_with_hint(now(), hint);
        }
        loop {
            if this.state == DriverState::Running {
                // Commands from callers.
                loop {
                    match this.commands.poll_recv(cx) {
                        Poll::Ready(Some(cmd)) => this.on_command(cmd),
                        Poll::Ready(None) => {
                            // Every Client is gone: close.
                            this.session.close();
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
                this.drain_events();
            }

            if this.state == DriverState::Running {
                // Inbound messages.
                let mut budget = MAX_INBOUND_PER_POLL;
                let mut exhausted = false;
                while this.state == DriverState::Running {
                    if budget == 0 {
                        exhausted = true;
                        break;
                    }
                    budget -= 1;
                    if !this.backlog.has_room(cx) {
                        // The handler is behind: stop reading until it catches up.
                        break;
                    }
                    match this.transport.as_mut().poll_recv(cx) {
                        Poll::Ready(Some(Ok(m))) => this.session.handle_message(m, now()),
                        Poll::Ready(Some(Err(e))) => this.session.handle_transport_error(e, now()),
                        Poll::Ready(None) => this.session.handle_closed(CloseReason::ServerClosed),
                        Poll::Pending => break,
                    }
                    this.drain_events();
                }
                // Outbound.
                let _ = this.poll_transmit(cx);
                this.drain_events();
                if exhausted && this.state == DriverState::Running {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }

            match this.state {
                DriverState::Running => {
                    // Timer. It only ever moves earlier: every new request
                    // has a later deadline than those in flight, and moving
                    // the timer for each would cost a timer-wheel update per
                    // call. A timer that fires before the session's next
                    // deadline (or with nothing left to time) costs one idle
                    // wake-up and is re-armed.
                    if let Some(deadline) = this.session.poll_timeout() {
                        if this.armed.is_none_or(|armed| deadline < armed) {
                            this.armed = Some(deadline);
                            this.sleep
                                .as_mut()
                                .reset(tokio::time::Instant::from_std(deadline));
                        }
                        if this.sleep.as_mut().poll(cx).is_ready() {
                            this.armed = None;
                            this.session.handle_timeout(now());
                            this.drain_events();
                            continue;
                        }
                    }
                    return Poll::Pending;
                }
                DriverState::Closing => {
                    // Flush what the session queued (e.g. cancellations), then close.
                    let _ = this.poll_transmit(cx);
                    match this.transport.as_mut().poll_close(cx) {
                        Poll::Ready(r) => {
                            if let Err(e) = r {
                                tracing::debug!(error = %e, "error while closing the transport");
                            }
                            this.state = DriverState::Done;
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }
                DriverState::Done => {
                    for tx in this.close_waiters.drain(..) {
                        let _ = tx.send(());
                    }
                    // Late commands get a closed error.
                    this.commands.close();
                    while let Ok(cmd) = this.commands.try_recv() {
                        match cmd {
                            Command::Request { reply, .. } | Command::WaitReady(reply) => {
                                let err =
                                    this.shared.upgrade().map_or(
                                        ClientError::Closed(CloseReason::DriverGone),
                                        |s| s.closed_error(),
                                    );
                                let _ = reply.send(Err(err));
                            }
                            Command::Close(tx) => {
                                let _ = tx.send(());
                            }
                            _ => {}
                        }
                    }
                    return Poll::Ready(());
                }
            }
        }
    }
}

use crate::session::empty_object as empty;
