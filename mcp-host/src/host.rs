//! [`Host`]: many servers started at once, supervised, their tools merged.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Instant, SystemTime};

use mcp_client::Client;
use mcp_config::{ManagedPolicy, PinStore, TrustError};
use mcp_proto::error::chain;
use mcp_tools::{McpTool, OnCollision, ToolError, ToolOptions, ToolOutput, Toolbox};
use serde_json::Value;
use tokio::sync::watch;

use crate::cache::ResponseCache;
use crate::keeper::{HostKeeper, View};
use crate::slot::{Desired, Done, Slot};
use crate::spec::ServerSpec;
use crate::status::{ServerReport, ServerStatus};
use crate::ticket_store::{MemoryTicketStore, TicketStore};

/// Why a [`Host`] operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Two servers were given the same name.
    #[error("two servers are named `{0}`; give each server a unique name")]
    DuplicateServer(String),
    /// No server has this name.
    #[error("there is no server named `{0}`")]
    UnknownServer(String),
    /// [`Host::close`] was called: no server can be added.
    #[error("the host was closed; build a new one to start servers")]
    Closed,
    /// [`Host::approve`] needs a pin store ([`HostBuilder::pins`]).
    #[error(
        "the host has no pin store, so there is nothing to approve; give it one with HostBuilder::pins"
    )]
    NoPinStore,
    /// The pin store could not be read or written.
    #[error("the pin store failed")]
    Pins(#[source] Arc<TrustError>),
}

/// Builds a [`Host`].
#[derive(Debug, Default)]
#[must_use]
pub struct HostBuilder {
    servers: Vec<ServerSpec>,
    pub(crate) cache: Option<ResponseCache>,
    tickets: Option<Arc<dyn TicketStore>>,
    on_collision: OnCollision,
    tool_options: ToolOptions,
    pins: Option<PinStore>,
    managed: Option<ManagedPolicy>,
    result_budget: Option<usize>,
    kept_results: Option<(usize, usize)>,
}

impl HostBuilder {
    /// Adds a server. Earlier servers win tool-name collisions.
    pub fn server(mut self, spec: ServerSpec) -> Self {
        self.servers.push(spec);
        self
    }

    /// Answers `tools/list` from `cache` while fresh (SEP-2549) and stores
    /// what servers send. Without one, every start lists.
    pub fn cache(mut self, cache: ResponseCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Where [`Host::start_task`] records the tickets of the tasks it
    /// starts, for [`Host::tasks`] and [`Host::task_result`] (default: a
    /// [`MemoryTicketStore`], as long as the host lives). With a
    /// [`FileTicketStore`](crate::FileTicketStore) the tasks outlive the
    /// host; with or without a [cache](Self::cache).
    pub fn tickets(mut self, store: impl TicketStore + 'static) -> Self {
        self.tickets = Some(Arc::new(store));
        self
    }

    /// What to do on a tool-name collision.
    pub fn on_collision(mut self, policy: OnCollision) -> Self {
        self.on_collision = policy;
        self
    }

    /// How tools call their servers, and the [`ToolPolicy`](mcp_tools::ToolPolicy)
    /// (allow, ask, deny) every call is checked against
    /// ([`ToolOptions::policy`], [`ToolOptions::on_ask`]); each server's
    /// own rules ([`ServerSpec::tool_rules`]) come first.
    pub fn tool_options(mut self, options: ToolOptions) -> Self {
        self.tool_options = options;
        self
    }

    /// Pins each server's tool definitions in `store`: at a server's first
    /// use they are remembered; a later listing's new or changed tools are
    /// held back (not offered, calls refused with
    /// [`Refusal::Unapproved`](mcp_tools::Refusal::Unapproved)) until
    /// [`Host::approve`] approves what [`Host::held`] shows. The store
    /// survives restarts (`mcp_config::PinStore::default_path`); each
    /// server is known in it by its [`ServerSpec::pin_key`]. A store that
    /// cannot be read fails the server's start (nothing unapproved runs).
    pub fn pins(mut self, store: PinStore) -> Self {
        self.pins = Some(store);
        self
    }

    /// The most tokens of any tool's result that reach the model (default:
    /// no limit), unless its server or the tool has its own
    /// ([`ServerSpec::result_budget`], [`ServerSpec::tool_result_budget`]):
    /// past it, the text the model reads is cut and ends with a note on how
    /// to read on with the `read_result` tool the host's toolbox then
    /// offers. See [`ToolboxBuilder::result_budget`](mcp_tools::ToolboxBuilder::result_budget).
    pub fn result_budget(mut self, tokens: usize) -> Self {
        self.result_budget = Some(tokens);
        self
    }

    /// How many cut results `read_result` can still read, and their bytes
    /// together (default [`DEFAULT_KEPT_RESULTS`](mcp_tools::DEFAULT_KEPT_RESULTS)
    /// and [`DEFAULT_KEPT_BYTES`](mcp_tools::DEFAULT_KEPT_BYTES)), across
    /// every restart and change of the servers. See
    /// [`ToolboxBuilder::kept_results`](mcp_tools::ToolboxBuilder::kept_results).
    pub fn kept_results(mut self, max_results: usize, max_bytes: usize) -> Self {
        self.kept_results = Some((max_results, max_bytes));
        self
    }

    /// Starts no server `policy` refuses (the administrator's allow and
    /// deny lists, `mcp_config::ManagedPolicy::system()`): such a server is
    /// [`Blocked`](ServerStatus::Blocked) and never launched, whatever
    /// configuration named it.
    pub fn managed_policy(mut self, policy: ManagedPolicy) -> Self {
        self.managed = Some(policy);
        self
    }

    /// Starts every enabled server at once and returns when each one's
    /// first attempt ended (ready, failed, or past its startup timeout):
    /// the time of the slowest, not the sum. Servers that failed keep being
    /// retried in the background. To watch the servers start (each one's
    /// [`Starting`](ServerStatus::Starting) included), use
    /// [`spawn`](Self::spawn) instead.
    pub async fn start(self) -> Result<Host, HostError> {
        let host = self.spawn()?;
        host.started().await;
        Ok(host)
    }

    /// Starts every enabled server at once and returns the host at once,
    /// every enabled server [`Starting`](ServerStatus::Starting): a host
    /// that shows its servers coming up calls [`Host::watch`] right away
    /// and sees each status from the first, and [`Host::started`] waits
    /// until each first attempt ended (what [`start`](Self::start) does).
    ///
    /// ```no_run
    /// # async fn run(builder: mcp_host::HostBuilder) -> Result<(), mcp_host::HostError> {
    /// let host = builder.spawn()?;
    /// let mut status = host.watch();
    /// loop {
    ///     for r in status.borrow_and_update().iter() {
    ///         println!("{}: {}", r.name, r.status); // "git: is starting", then "git: is ready with 12 tools"
    ///     }
    ///     tokio::select! {
    ///         _ = host.started() => break,
    ///         _ = status.changed() => {}
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (each server's supervisor is a task).
    pub fn spawn(self) -> Result<Host, HostError> {
        let mut toolbox = Toolbox::builder()
            .listen(false)
            .on_collision(self.on_collision)
            .tool_options(self.tool_options);
        if let Some(tokens) = self.result_budget {
            toolbox = toolbox.result_budget(tokens);
        }
        if let Some((results, bytes)) = self.kept_results {
            toolbox = toolbox.kept_results(results, bytes);
        }
        let shared = Arc::new_cyclic(|me| Shared {
            status: watch::Sender::new(Vec::new()),
            slots: RwLock::new(Vec::new()),
            closed: AtomicBool::new(false),
            generations: AtomicU64::new(0),
            // The servers come in as they start (`rebuild`).
            toolbox: toolbox
                .keeper(HostKeeper(me.clone()))
                .build_now()
                .unwrap_or_else(|e| unreachable!("a toolbox of no servers: {e}")),
            view: RwLock::default(),
            rebuild: tokio::sync::Mutex::new(()),
            #[cfg(feature = "config")]
            applying: tokio::sync::Mutex::new(()),
            cache: self.cache,
            tickets: self
                .tickets
                .unwrap_or_else(|| Arc::new(MemoryTicketStore::default())),
            pins: self.pins,
            managed: self.managed,
        });
        let host = Host {
            inner: Arc::new(HostInner { shared }),
        };
        host.insert(self.servers)?;
        Ok(host)
    }
}

/// Many MCP servers started at once, kept running, their tools merged into
/// one set (see the [crate docs](crate)). Cheap to clone; clones share
/// state. Dropping the last clone stops every server (prefer
/// [`close`](Host::close), which waits for them to exit).
#[derive(Debug, Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

#[derive(Debug)]
struct HostInner {
    shared: Arc<Shared>,
}

impl Drop for HostInner {
    fn drop(&mut self) {
        for slot in self.shared.slots() {
            slot.desired.send_replace(Desired::Stopped);
        }
    }
}

impl Host {
    /// A builder.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// Every server's status, in the order they were added (no I/O).
    pub fn status(&self) -> Vec<ServerReport> {
        self.inner.shared.status.borrow().clone()
    }

    /// One server's status.
    pub fn server_status(&self, name: &str) -> Option<ServerStatus> {
        self.status()
            .into_iter()
            .find(|r| r.name == name)
            .map(|r| r.status)
    }

    /// A receiver that sees every status change (`changed().await`, then
    /// `borrow()`). From a host made with [`HostBuilder::spawn`], the first
    /// value has every enabled server [`Starting`](ServerStatus::Starting).
    pub fn watch(&self) -> watch::Receiver<Vec<ServerReport>> {
        self.inner.shared.status.subscribe()
    }

    /// Waits until every server's first attempt ended (ready, failed, or
    /// past its startup timeout; a disabled server's at once): what
    /// [`HostBuilder::start`] waits for after [`HostBuilder::spawn`]. A
    /// server added while it waits is waited for too.
    pub async fn started(&self) {
        loop {
            let slots = self.inner.shared.slots();
            for slot in &slots {
                slot.first_attempt().await;
            }
            // Done unless a server came in meanwhile.
            if self.inner.shared.slots().len() <= slots.len() {
                return;
            }
        }
    }

    /// The tools of the servers that are ready, as one live toolbox: the
    /// same one for the host's whole life (clones share it), which follows
    /// every start, restart, [`add`](Host::add), [`remove`](Host::remove),
    /// [`set_enabled`](Host::set_enabled), tool-list change and
    /// [approval](Host::approve) the moment the host sees it. An agent keeps
    /// it, or a [`Deferred`](mcp_tools::Deferred) made from it, for a whole
    /// conversation: its calls are [`call`](Host::call)'s (a down server's
    /// tool is [`ToolError::Unavailable`], a held one refused), and the
    /// results kept for `read_result` stay readable across every change.
    pub fn toolbox(&self) -> Toolbox {
        self.inner.shared.toolbox.clone()
    }

    /// The tools of the servers that are ready now: their definitions for
    /// the model. Each calls through the host's [`toolbox`](Host::toolbox)
    /// by its name, so one kept past a restart reaches the new process.
    pub fn tools(&self) -> Vec<McpTool> {
        self.inner.shared.toolbox.snapshot()
    }

    /// The client of a ready server.
    pub fn client(&self, server: &str) -> Option<Client> {
        self.inner.shared.slot(server)?.live().client
    }

    /// Calls the tool the model knows as `name` (the host's
    /// [`toolbox`](Host::toolbox) does). A tool of a server that is not
    /// ready (starting, restarting, failed, disabled) fails at once with
    /// [`ToolError::Unavailable`], which the model can act on; so does a
    /// call whose server went away during it (the host then starts it
    /// again), and one whose server changed its tools meanwhile (the host
    /// lists them again, checked against what the user approved).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
        self.inner.shared.toolbox.call(name, arguments).await
    }

    /// Starts (`true`) or stops (`false`) a server. A disabled server's
    /// process is shut down and its tools leave the toolbox.
    pub fn set_enabled(&self, server: &str, on: bool) -> Result<(), HostError> {
        let slot = self.slot(server)?;
        slot.desired.send_if_modified(|d| {
            let want = if on {
                Desired::Enabled
            } else {
                Desired::Disabled
            };
            let change = *d != Desired::Stopped && *d != want;
            if change {
                *d = want;
            }
            change
        });
        Ok(())
    }

    /// Starts a server again now: a running one is shut down first (a
    /// host's "restart server" command), one that failed or went away is
    /// tried at once instead of at the end of its backoff, and one being
    /// started is started afresh. A disabled server stays disabled (see
    /// [`set_enabled`](Host::set_enabled)), and after
    /// [`close`](Host::close) nothing starts.
    pub fn restart(&self, server: &str) -> Result<(), HostError> {
        let slot = self.slot(server)?;
        // Wakes the supervisor without changing what it wants.
        slot.desired.send_if_modified(|d| *d == Desired::Enabled);
        Ok(())
    }

    /// Adds a server while the host runs (say, one the user just wrote
    /// into their config) and returns when its first attempt ended, as
    /// [`HostBuilder::start`] does; a later server loses tool-name
    /// collisions to the ones before it. To change a server, remove it and
    /// add the new one.
    pub async fn add(&self, spec: ServerSpec) -> Result<(), HostError> {
        self.add_all(vec![spec]).await
    }

    /// Adds `specs` in order, all or none (a name taken, twice in `specs`,
    /// or a closed host changes nothing), starts them at once and returns
    /// when each one's first attempt ended.
    pub(crate) async fn add_all(&self, specs: Vec<ServerSpec>) -> Result<(), HostError> {
        for slot in self.insert(specs)? {
            slot.first_attempt().await;
        }
        Ok(())
    }

    /// Adds `specs` as [`add_all`](Self::add_all) does, their statuses
    /// `Starting` (or `Disabled`) before it returns, and starts their
    /// supervisors.
    fn insert(&self, specs: Vec<ServerSpec>) -> Result<Vec<Arc<Slot>>, HostError> {
        let shared = &self.inner.shared;
        let new: Vec<Arc<Slot>> = specs.into_iter().map(Slot::new).collect();
        {
            let mut slots = shared.slots_mut();
            if shared.closed.load(Ordering::Acquire) {
                return Err(HostError::Closed);
            }
            let mut names: HashSet<&str> = slots.iter().map(|s| s.name()).collect();
            if let Some(dup) = new.iter().find(|s| !names.insert(s.name())) {
                return Err(HostError::DuplicateServer(dup.name().to_owned()));
            }
            slots.extend(new.iter().cloned());
            // Under the same lock as `slots`: names stay unique in both.
            shared
                .status
                .send_modify(|all| all.extend(new.iter().map(|s| s.report())));
        }
        for slot in &new {
            shared.spawn(slot.clone());
        }
        Ok(new)
    }

    /// Removes a server: shuts it down as [`close`](Host::close) does, and
    /// once it has exited drops it from the status and its tools from the
    /// toolbox.
    pub async fn remove(&self, server: &str) -> Result<(), HostError> {
        let slot = self.slot(server)?;
        self.remove_all(vec![slot]).await;
        Ok(())
    }

    /// Stops `gone` at once, waits until each has, then drops them.
    pub(crate) async fn remove_all(&self, gone: Vec<Arc<Slot>>) {
        let shared = &self.inner.shared;
        for slot in &gone {
            slot.desired.send_replace(Desired::Stopped);
        }
        for slot in &gone {
            slot.stopped().await;
        }
        {
            let mut slots = shared.slots_mut();
            // Only the call that takes a slot out drops its report: a
            // server of the same name added since keeps its own.
            let taken: HashSet<&str> = gone
                .iter()
                .filter(|g| slots.iter().any(|s| Arc::ptr_eq(s, g)))
                .map(|g| g.name())
                .collect();
            slots.retain(|s| !gone.iter().any(|g| Arc::ptr_eq(s, g)));
            shared
                .status
                .send_modify(|all| all.retain(|r| !taken.contains(r.name.as_str())));
        }
        shared.rebuild().await;
    }

    /// The servers, in order.
    pub(crate) fn slots(&self) -> Vec<Arc<Slot>> {
        self.inner.shared.slots()
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    /// Waits for any other [`apply_config`](Host::apply_config) to end.
    #[cfg(feature = "config")]
    pub(crate) async fn applying(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.inner.shared.applying.lock().await
    }

    /// Whether [`close`](Host::close) was called.
    #[cfg(feature = "config")]
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.shared.closed.load(Ordering::Acquire)
    }

    fn slot(&self, server: &str) -> Result<Arc<Slot>, HostError> {
        self.inner
            .shared
            .slot(server)
            .ok_or_else(|| HostError::UnknownServer(server.to_owned()))
    }

    /// The response cache, if the host has one.
    pub fn cache(&self) -> Option<&ResponseCache> {
        self.inner.shared.cache.as_ref()
    }

    /// Where the host keeps its task tickets ([`HostBuilder::tickets`]).
    pub(crate) fn tickets(&self) -> &dyn TicketStore {
        &*self.inner.shared.tickets
    }

    /// Shuts every server down cleanly (stdio: stdin closed, then SIGTERM,
    /// then SIGKILL, as the transport does) and waits until each has. After
    /// it, [`add`](Host::add) fails with [`HostError::Closed`].
    pub async fn close(&self) {
        let shared = &self.inner.shared;
        let slots = {
            let slots = shared.slots_mut();
            shared.closed.store(true, Ordering::Release);
            slots.clone()
        };
        for slot in &slots {
            slot.desired.send_replace(Desired::Stopped);
        }
        for slot in &slots {
            slot.stopped().await;
        }
    }
}

#[derive(Debug)]
pub(crate) struct Shared {
    /// In the order they were added (earlier ones win tool-name collisions).
    slots: RwLock<Vec<Arc<Slot>>>,
    /// Set by [`Host::close`]: nothing is added after.
    closed: AtomicBool,
    /// Numbers each start of each server.
    pub(crate) generations: AtomicU64,
    pub(crate) status: watch::Sender<Vec<ServerReport>>,
    /// The ready servers' tools (its servers set by `rebuild`).
    toolbox: Toolbox,
    /// Why the tools not in the toolbox are not (set by `rebuild`).
    view: RwLock<Arc<View>>,
    /// Held while the toolbox and the view are brought up to date, so
    /// they are published in order.
    rebuild: tokio::sync::Mutex<()>,
    /// Held through a whole [`Host::apply_config`]: one at a time, each
    /// diffing against what the one before left.
    #[cfg(feature = "config")]
    applying: tokio::sync::Mutex<()>,
    pub(crate) cache: Option<ResponseCache>,
    /// Where the tickets of the tasks the host started are kept.
    pub(crate) tickets: Arc<dyn TicketStore>,
    pub(crate) pins: Option<PinStore>,
    pub(crate) managed: Option<ManagedPolicy>,
}

impl Shared {
    fn slots(&self) -> Vec<Arc<Slot>> {
        match self.slots.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The slots, to change (held briefly, never across an await).
    fn slots_mut(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Arc<Slot>>> {
        match self.slots.write() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        }
    }

    pub(crate) fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        self.slots().into_iter().find(|s| s.name() == name)
    }

    pub(crate) fn view(&self) -> Arc<View> {
        match self.view.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Starts `slot`'s supervisor.
    fn spawn(self: &Arc<Self>, slot: Arc<Slot>) {
        tokio::spawn(crate::supervisor::supervise(self.clone(), Done(slot)));
    }

    pub(crate) fn set_status(&self, slot: &Slot, status: ServerStatus) {
        tracing::debug!(server = %slot.name(), status = %status, "server status");
        self.status.send_modify(|all| {
            if let Some(r) = all.iter_mut().find(|r| r.name == slot.name()) {
                r.status = status;
            }
        });
    }

    /// A ready server's tool counts after its listing was sorted again
    /// ([`Host::approve`]); another status is left as it is.
    pub(crate) fn set_tool_counts(&self, slot: &Slot, tools: usize, held: usize) {
        self.status.send_if_modified(|all| {
            match all
                .iter_mut()
                .find(|r| r.name == slot.name())
                .map(|r| &mut r.status)
            {
                Some(ServerStatus::Ready {
                    tools: t, held: h, ..
                }) if (*t, *h) != (tools, held) => {
                    (*t, *h) = (tools, held);
                    true
                }
                _ => false,
            }
        });
    }

    /// Moves a `Failed` or `Restarting` status's `next_retry` (and its
    /// wall-clock reading) to now if it is later: the retry is under way.
    pub(crate) fn retry_now(&self, slot: &Slot) {
        let now = Instant::now();
        self.status.send_if_modified(|all| {
            match all
                .iter_mut()
                .find(|r| r.name == slot.name())
                .map(|r| &mut r.status)
            {
                Some(
                    ServerStatus::Failed {
                        next_retry,
                        next_retry_at,
                        ..
                    }
                    | ServerStatus::Restarting {
                        next_retry,
                        next_retry_at,
                        ..
                    },
                ) if *next_retry > now => {
                    *next_retry = now;
                    *next_retry_at = SystemTime::now();
                    true
                }
                _ => false,
            }
        });
    }

    /// Gives the toolbox the ready servers and publishes why the others'
    /// tools are missing, from the servers' current state (no I/O).
    pub(crate) async fn rebuild(&self) {
        let _guard = self.rebuild.lock().await;
        let slots = self.slots();
        let mut servers = Vec::new();
        let mut down = Vec::new();
        let mut held_back = Vec::new();
        for slot in &slots {
            let l = slot.live();
            match (l.client, l.tools) {
                (Some(client), Some(tools)) => {
                    held_back.push((slot, l.held));
                    servers.push(slot.spec.toolbox_server(client, tools));
                }
                (None, Some(tools)) => down.push((slot, tools)),
                _ => {}
            }
        }
        // The keeper reads the view only for names the toolbox lacks: the
        // view of every name goes out first, so a call made while the
        // toolbox changes never finds a tool in neither.
        self.publish_view(view_of(&down, &held_back, |_| false));
        if let Err(e) = self.toolbox.set_servers(servers).await {
            // Only listed servers with unique names: cannot fail.
            tracing::error!(error = %chain(&e), "updating the toolbox failed");
            return;
        }
        let toolbox = &self.toolbox;
        self.publish_view(view_of(&down, &held_back, |name| {
            toolbox.get(name).is_some()
        }));
    }

    fn publish_view(&self, view: View) {
        let view = Arc::new(view);
        match self.view.write() {
            Ok(mut g) => *g = view,
            Err(p) => *p.into_inner() = view,
        }
    }
}

/// Why the tools not in the toolbox are not: those of the servers `down`
/// (with their last tools), and those `held_back` on ready servers; each
/// but the names `offered` says the toolbox has (another server's tool
/// took the name).
fn view_of(
    down: &[(&Arc<Slot>, Arc<Vec<mcp_proto::schema::Tool>>)],
    held_back: &[(&Arc<Slot>, Arc<Vec<mcp_config::ToolChange>>)],
    offered: impl Fn(&str) -> bool,
) -> View {
    let mut unavailable = HashMap::new();
    for (slot, tools) in down {
        // An app-only tool (MCP Apps) is no model's, up or down.
        for t in tools.iter().filter(|t| t.is_model_visible()) {
            let name = mcp_tools::sanitize_name(&format!("{}{}", slot.spec.prefix, t.name));
            if !offered(&name) {
                unavailable
                    .entry(name)
                    .or_insert_with(|| slot.spec.name.clone());
            }
        }
    }
    let mut held = HashMap::new();
    for (slot, changes) in held_back {
        for c in changes.iter() {
            let name = mcp_tools::sanitize_name(&format!("{}{}", slot.spec.prefix, c.tool));
            if !offered(&name) {
                let added = c.kind == mcp_config::ChangeKind::Added;
                held.entry(name)
                    .or_insert_with(|| (slot.spec.name.clone(), added));
            }
        }
    }
    View { unavailable, held }
}
