//! Many servers' tools as one set of model-facing tools.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use mcp_client::{Client, ClientError, ListKind, ResponseFuture};
use mcp_proto::Era;
use mcp_proto::schema::{ListenResult, SubscriptionFilter};
use serde_json::Value;
use tokio::sync::watch;

use crate::budget::{ResultStore, ResultsConfig, ServerBudgets};
use crate::error::{ToolError, ToolboxError};
use crate::export::{ModelApi, ModelTool};
use crate::meta::{Meta, free_name};
use crate::names::{Filter, NamingInput, assign_names};
use crate::options::ToolOptions;
use crate::policy::Decision;
use crate::search::{SearchHit, ToolIndex};
use crate::tool::{AttemptError, McpTool, ToolOutput};

/// What to do when two tools end up with the same model-facing name (after
/// prefixing and sanitizing). The tool met first keeps the name: servers in
/// the order they were added, each server's tools in its listing order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnCollision {
    /// The later tool gets a `_2` (`_3`, …) suffix. Default.
    #[default]
    Rename,
    /// The later tool is left out.
    Drop,
}

/// A name collision the toolbox resolved (see [`Toolbox::collisions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Collision {
    /// The contested model-facing name.
    pub name: String,
    /// The server whose tool kept the name.
    pub winner_server: String,
    /// That tool's own name.
    pub winner_tool: String,
    /// The server of the tool that lost.
    pub server: String,
    /// The losing tool's own name.
    pub tool: String,
    /// Its new name ([`OnCollision::Rename`]), or `None` if it was left out.
    pub renamed_to: Option<String>,
}

/// Where a model-facing name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Route {
    /// The server's name in the toolbox.
    pub server: String,
    /// The tool's name on that server (sent in `tools/call`).
    pub tool: String,
}

/// One server of a toolbox: a connected client, a name, an optional prefix
/// and a filter.
#[derive(Debug, Clone)]
#[must_use]
pub struct Server {
    name: String,
    client: Client,
    prefix: String,
    filter: Filter,
    listed: Option<Arc<Vec<mcp_proto::schema::Tool>>>,
    /// Result budgets (set in `budget.rs`).
    pub(crate) budgets: ServerBudgets,
}

impl Server {
    /// A server called `name` (unique in the toolbox; used in logs, errors
    /// and [`Route`]s, never shown to the model) reached through `client`.
    pub fn new(name: impl Into<String>, client: Client) -> Self {
        Server {
            name: name.into(),
            client,
            prefix: String::new(),
            filter: Filter::All,
            listed: None,
            budgets: ServerBudgets::default(),
        }
    }

    /// The server's tools, already listed (e.g. from a cache, or by a
    /// supervisor that watches the server): the toolbox sends no
    /// `tools/list` for this server when built, and does not watch its
    /// `list_changed` either; whoever listed the tools keeps them current
    /// (by building a new toolbox). A call failing with "tool set changed"
    /// still lists the server again.
    ///
    /// A `Vec<Tool>` or an `Arc<Vec<Tool>>`: the toolbox's tools share the
    /// definitions of an `Arc`'s list rather than copy them (a host that
    /// keeps each server's listing and builds a new toolbox when one
    /// changes holds every definition once).
    pub fn listed(mut self, tools: impl Into<Arc<Vec<mcp_proto::schema::Tool>>>) -> Self {
        self.listed = Some(tools.into());
        self
    }

    /// A prefix put verbatim in front of each tool name the model sees
    /// (e.g. `"gh_"`), and stripped before the wire.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Which tools to keep, by the server's own names (before the prefix).
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = filter;
        self
    }
}

/// Builds a [`Toolbox`].
#[derive(Debug)]
#[must_use]
pub struct ToolboxBuilder {
    servers: Vec<Server>,
    on_collision: OnCollision,
    options: ToolOptions,
    listen: bool,
    /// Result budgets and their store (set in `budget.rs`).
    pub(crate) results: ResultsConfig,
}

impl Default for ToolboxBuilder {
    fn default() -> Self {
        ToolboxBuilder {
            servers: Vec::new(),
            on_collision: OnCollision::default(),
            options: ToolOptions::default(),
            listen: true,
            results: ResultsConfig::default(),
        }
    }
}

impl ToolboxBuilder {
    /// Adds a server. Earlier servers win name collisions.
    pub fn server(mut self, server: Server) -> Self {
        self.servers.push(server);
        self
    }

    /// What to do on a name collision (default [`OnCollision::Rename`]).
    pub fn on_collision(mut self, policy: OnCollision) -> Self {
        self.on_collision = policy;
        self
    }

    /// How tools call their servers (argument checking, timeout).
    pub fn tool_options(mut self, options: ToolOptions) -> Self {
        self.options = options;
        self
    }

    /// Whether to open a `subscriptions/listen` stream for tool-list changes
    /// on servers speaking 2026-07-28 that advertise `tools.listChanged`
    /// (default on). Legacy servers send `notifications/tools/list_changed`
    /// unasked.
    pub fn listen(mut self, on: bool) -> Self {
        self.listen = on;
        self
    }

    /// Lists every server's tools and assembles the toolbox.
    pub async fn build(self) -> Result<Toolbox, ToolboxError> {
        let mut seen = HashSet::new();
        for s in &self.servers {
            if !seen.insert(s.name.clone()) {
                return Err(ToolboxError::DuplicateServer(s.name.clone()));
            }
        }
        let mut states = Vec::with_capacity(self.servers.len());
        let mut lists = Vec::with_capacity(self.servers.len());
        for s in self.servers {
            let (changes, tools) = match s.listed {
                Some(tools) => (None, tools),
                None => {
                    // Subscribe before listing: a change during the listing
                    // is then seen as a change.
                    let changes = s.client.list_changed(ListKind::Tools);
                    let tools =
                        list_tools(&s.client)
                            .await
                            .map_err(|source| ToolboxError::List {
                                server: s.name.clone(),
                                source,
                            })?;
                    (Some(changes), Arc::new(tools))
                }
            };
            let listen = if self.listen && changes.is_some() {
                open_listen(&s.client)
            } else {
                None
            };
            lists.push(tools);
            states.push(ServerState {
                name: s.name,
                prefix: s.prefix,
                filter: s.filter,
                budgets: s.budgets,
                client: s.client,
                changes: Mutex::new(changes),
                forced: AtomicBool::new(false),
                _listen: Mutex::new(listen),
            });
        }
        Ok(Toolbox::assemble(
            states,
            lists,
            self.on_collision,
            self.options,
            self.results,
        ))
    }
}

/// Every tool of the server; none (and no request) if the server does not
/// offer tools.
async fn list_tools(client: &Client) -> Result<Vec<mcp_proto::schema::Tool>, ClientError> {
    if client
        .server()
        .is_some_and(|info| info.capabilities.tools.is_none())
    {
        return Ok(Vec::new());
    }
    client.list_all::<mcp_proto::schema::Tool>().await
}

/// Opens `subscriptions/listen` for tool-list changes if the server speaks
/// 2026-07-28 and says it sends them. The returned future is kept, never
/// polled: the request stays open until the toolbox is dropped (which
/// cancels it). The notifications it brings reach the client's
/// `list_changed` counter like legacy ones.
fn open_listen(client: &Client) -> Option<ResponseFuture<ListenResult>> {
    let info = client.server()?;
    let announces = info
        .capabilities
        .tools
        .as_ref()
        .and_then(|t| t.list_changed)
        .unwrap_or(false);
    if info.era() != Era::Modern || !announces {
        return None;
    }
    Some(client.listen(SubscriptionFilter::new().with_tools_list_changed()))
}

/// Many MCP servers' tools as one set of model-facing tools.
///
/// - **Names.** Each tool is exposed as `prefix + name`, sanitized to what
///   model APIs accept ([`sanitize_name`](crate::sanitize_name)); [`resolve`](Toolbox::resolve)
///   maps a model-facing name back to its server and wire name. Collisions
///   are resolved deterministically ([`OnCollision`]) and reported
///   ([`collisions`](Toolbox::collisions)).
/// - **Filters.** Per server, an include or an exclude list of globs
///   ([`Filter`]).
/// - **Staying current.** When a server says its tools changed (legacy
///   `notifications/tools/list_changed`, or the same notification on a
///   2026-07-28 `subscriptions/listen` stream), the next
///   [`tools`](Toolbox::tools) or [`call`](Toolbox::call) lists that server
///   again. When a call fails with "tool set changed; list tools again"
///   (-32602), the toolbox lists that server again and retries the call
///   once.
/// - **Export.** [`openai_tools`](Toolbox::openai_tools) and
///   [`anthropic_tools`](Toolbox::anthropic_tools).
/// - **The model's tools only.** A toolbox's tools are the tools a model
///   may be offered: [`tools`](Toolbox::tools), [`snapshot`](Toolbox::snapshot),
///   [`get`](Toolbox::get), [`call`](Toolbox::call), the exports and
///   everything built on them leave out MCP Apps tools whose
///   `_meta.ui.visibility` leaves out `"model"` (an app-only tool, for its
///   UI's buttons), decided by one predicate,
///   [`Tool::is_model_visible`](mcp_proto::schema::Tool::is_model_visible).
///   Such a tool takes no model-facing name (it never makes another
///   tool `_2`), and a model that calls it by name gets
///   [`ToolError::NotFound`]. The application calls it for the app with
///   [`call_from_app`](Toolbox::call_from_app).
///
/// Cheap to clone; clones share state.
#[derive(Clone)]
pub struct Toolbox {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let catalog = self.inner.snapshot();
        f.debug_struct("Toolbox")
            .field(
                "servers",
                &self
                    .inner
                    .servers
                    .iter()
                    .map(|s| &s.name)
                    .collect::<Vec<_>>(),
            )
            .field("tools", &catalog.offered().len())
            .finish()
    }
}

/// A toolbox of no servers (what a host offers before any is ready).
impl Default for Toolbox {
    fn default() -> Self {
        Toolbox::assemble(
            Vec::new(),
            Vec::new(),
            OnCollision::default(),
            ToolOptions::default(),
            ResultsConfig::default(),
        )
    }
}

impl Toolbox {
    /// A builder.
    pub fn builder() -> ToolboxBuilder {
        ToolboxBuilder::default()
    }

    /// The toolbox of `states`, whose tools are `lists` (in the same order).
    fn assemble(
        states: Vec<ServerState>,
        lists: Vec<Arc<Vec<mcp_proto::schema::Tool>>>,
        on_collision: OnCollision,
        options: ToolOptions,
        results: ResultsConfig,
    ) -> Toolbox {
        let budgets = results.any(states.iter().map(|s| &s.budgets));
        let results = Results {
            default: results.default,
            store: budgets.then(|| results.store()),
        };
        let inner = Arc::new_cyclic(|me: &Weak<Inner>| {
            let catalog = Catalog::build(&states, lists, on_collision, &options, &results, me);
            Inner {
                servers: states,
                on_collision,
                options,
                results,
                catalog: RwLock::new(Arc::new(catalog)),
                refresh: tokio::sync::Mutex::new(()),
                me: me.clone(),
            }
        });
        Toolbox { inner }
    }

    /// The tools, after listing again any server that said its tools changed.
    pub async fn tools(&self) -> Vec<McpTool> {
        self.inner.refresh_stale().await;
        self.snapshot()
    }

    /// The tools as of the last listing (no I/O), without those the
    /// [tool policy](crate::ToolOptions::policy) denies.
    pub fn snapshot(&self) -> Vec<McpTool> {
        self.inner.snapshot().offered().to_vec()
    }

    /// The tool the model knows as `name` (no I/O).
    pub fn get(&self, name: &str) -> Option<McpTool> {
        self.inner.snapshot().get(name).cloned()
    }

    /// Where the model-facing `name` leads: the server and the tool's own
    /// name. The reverse of the toolbox's naming.
    pub fn resolve(&self, name: &str) -> Option<Route> {
        let tool = self.get(name)?;
        Some(Route {
            server: tool.server().unwrap_or_default().to_owned(),
            tool: tool.wire_name().to_owned(),
        })
    }

    /// The tools that best match `query` (words as a person would write
    /// them), best first, at most `limit`; after listing again any server
    /// that said its tools changed. What a tool is matched on, and how, is
    /// in the [`search`](crate::search) module's docs. The index is built at
    /// the first search after each listing and kept until the next.
    pub async fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.inner.refresh_stale().await;
        let catalog = self.inner.snapshot();
        catalog
            .search_index()
            .search(query, limit)
            .into_iter()
            .filter_map(|hit| {
                let tool = catalog.tools.get(hit.id)?.clone();
                Some(SearchHit {
                    name: crate::Tool::name(&tool).to_owned(),
                    tool,
                    score: hit.score,
                })
            })
            .collect()
    }

    /// The name collisions of the last listing.
    pub fn collisions(&self) -> Vec<Collision> {
        self.inner.snapshot().collisions.clone()
    }

    /// The server named `server`: its client, its last listing (whole: app-only
    /// tools too), its filter and the tool options, after re-listing stale
    /// servers. For calls that do not go by a model-facing name.
    pub(crate) async fn server_listing(&self, server: &str) -> Option<ServerListing> {
        self.inner.refresh_stale().await;
        let i = self.inner.servers.iter().position(|s| s.name == server)?;
        let state = self.inner.servers.get(i)?;
        Some(ServerListing {
            client: state.client.clone(),
            tools: self.inner.snapshot().lists.get(i)?.clone(),
            filter: state.filter.clone(),
            options: self.inner.options.clone(),
        })
    }

    /// Calls the tool the model knows as `name` with the model's arguments.
    /// Lists again first if a server said its tools changed; on a "tool set
    /// changed" error, lists that server again and retries once.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
        Inner::call(&self.inner, name, arguments).await
    }

    /// [`call`](Toolbox::call) with the arguments as the model API
    /// delivered them: a JSON text (OpenAI's `function.arguments`). Blank
    /// text means no arguments; text that is not JSON is
    /// [`ToolError::InvalidArguments`] (nothing is sent).
    pub async fn call_raw(&self, name: &str, arguments: &str) -> Result<ToolOutput, ToolError> {
        let arguments = crate::tool::parse_raw_arguments(name, arguments).map_err(|e| *e)?;
        self.call(name, arguments).await
    }

    /// Lists every server's tools again now. On error, the failing server
    /// keeps its previous tools and is listed again on next use.
    pub async fn refresh(&self) -> Result<(), ToolboxError> {
        for s in &self.inner.servers {
            s.forced.store(true, Ordering::Release);
        }
        match self.inner.refresh_stale().await.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether some server said its tools changed since the last listing.
    pub fn is_stale(&self) -> bool {
        self.inner.is_stale()
    }

    /// Every tool in the OpenAI function-calling shape
    /// ([`openai_function`](crate::openai_function)), with the toolbox's own
    /// as in [`openai_definitions`](Self::openai_definitions).
    pub async fn openai_tools(&self) -> Vec<Value> {
        self.definitions(ModelApi::OpenAiChat)
            .await
            .iter()
            .map(ModelTool::to_value)
            .collect()
    }

    /// Every tool in the Anthropic tool shape
    /// ([`anthropic_tool`](crate::anthropic_tool)), with the toolbox's own
    /// as in [`anthropic_definitions`](Self::anthropic_definitions).
    pub async fn anthropic_tools(&self) -> Vec<Value> {
        self.definitions(ModelApi::Anthropic)
            .await
            .iter()
            .map(ModelTool::to_value)
            .collect()
    }

    /// Every tool in the OpenAI function-calling shape, to serialize into
    /// the model request: each schema is written verbatim, never decoded
    /// (see [`ModelTool`]; [`openai_tools`](Self::openai_tools) builds
    /// `Value`s instead, at about ten times the cost).
    pub async fn openai_definitions(&self) -> Vec<ModelTool> {
        self.definitions(ModelApi::OpenAiChat).await
    }

    /// Every tool in the Anthropic tool shape, to serialize into the model
    /// request, each schema verbatim (see [`ModelTool`]).
    pub async fn anthropic_definitions(&self) -> Vec<ModelTool> {
        self.definitions(ModelApi::Anthropic).await
    }

    /// Every tool in `api`'s shape ([`openai_definitions`](Self::openai_definitions)
    /// and [`anthropic_definitions`](Self::anthropic_definitions) for one
    /// API each; [`ModelApi::OpenAiResponses`] for OpenAI's Responses API),
    /// with the toolbox's own (`read_result` when a result budget is set).
    pub async fn definitions(&self, api: ModelApi) -> Vec<ModelTool> {
        self.inner.refresh_stale().await;
        let catalog = self.inner.snapshot();
        let mut all: Vec<ModelTool> = catalog
            .offered()
            .iter()
            .map(|t| ModelTool::new(t.clone(), api))
            .collect();
        all.extend(self.own_definitions(api));
        all
    }

    /// The toolbox's own tools in `api`'s shape, as of the last listing:
    /// `read_result` when a result budget is set.
    pub(crate) fn own_definitions(&self, api: ModelApi) -> Option<ModelTool> {
        let catalog = self.inner.snapshot();
        let name = catalog.read_result.as_ref()?;
        Some(ModelTool::meta(name.clone(), Meta::ReadResult, api))
    }
}

/// One server's listing, for [`Toolbox::server_listing`].
pub(crate) struct ServerListing {
    pub(crate) client: Client,
    pub(crate) tools: Arc<Vec<mcp_proto::schema::Tool>>,
    pub(crate) filter: Filter,
    pub(crate) options: ToolOptions,
}

/// Marks servers stale again when dropped with a non-empty `stale`.
struct Remark<'a> {
    servers: &'a [ServerState],
    stale: Vec<usize>,
}

impl Drop for Remark<'_> {
    fn drop(&mut self) {
        for &i in &self.stale {
            if let Some(s) = self.servers.get(i) {
                s.forced.store(true, Ordering::Release);
            }
        }
    }
}

pub(crate) struct Inner {
    servers: Vec<ServerState>,
    on_collision: OnCollision,
    options: ToolOptions,
    results: Results,
    catalog: RwLock<Arc<Catalog>>,
    /// Held while re-listing, so concurrent callers list once.
    refresh: tokio::sync::Mutex<()>,
    me: Weak<Inner>,
}

/// The toolbox's result budgets at run time.
struct Results {
    /// The toolbox's default budget.
    default: Option<usize>,
    /// Where cut results are kept; `None` when no budget is set anywhere.
    store: Option<ResultStore>,
}

struct ServerState {
    name: String,
    prefix: String,
    filter: Filter,
    budgets: ServerBudgets,
    client: Client,
    /// `None` for servers whose tools were handed in ([`Server::listed`]).
    changes: Mutex<Option<watch::Receiver<u64>>>,
    /// Set after a "tool set changed" error or a failed listing.
    forced: AtomicBool,
    /// The open `subscriptions/listen` request, if any (dropping cancels it).
    _listen: Mutex<Option<ResponseFuture<ListenResult>>>,
}

impl ServerState {
    fn is_stale(&self) -> bool {
        self.forced.load(Ordering::Acquire)
            || self
                .changes
                .lock()
                .map(|rx| {
                    rx.as_ref()
                        .is_some_and(|rx| rx.has_changed().unwrap_or(false))
                })
                .unwrap_or(false)
    }

    /// Whether to list again; marks the change as seen.
    fn take_stale(&self) -> bool {
        let forced = self.forced.swap(false, Ordering::AcqRel);
        let changed = match self.changes.lock() {
            Ok(mut rx) => match rx.as_mut() {
                Some(rx) => {
                    let c = rx.has_changed().unwrap_or(false);
                    if c {
                        rx.borrow_and_update();
                    }
                    c
                }
                None => false,
            },
            Err(_) => false,
        };
        forced || changed
    }
}

impl Inner {
    fn snapshot(&self) -> Arc<Catalog> {
        match self.catalog.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn is_stale(&self) -> bool {
        self.servers.iter().any(ServerState::is_stale)
    }

    /// Lists again the servers that changed; returns the listing errors
    /// (those servers keep their previous tools and stay stale).
    async fn refresh_stale(&self) -> Vec<ToolboxError> {
        if !self.is_stale() {
            return Vec::new();
        }
        let _guard = self.refresh.lock().await;
        let stale: Vec<usize> = (0..self.servers.len())
            .filter(|&i| self.servers.get(i).is_some_and(ServerState::take_stale))
            .collect();
        if stale.is_empty() {
            // Another caller re-listed while we waited.
            return Vec::new();
        }
        // If this future is dropped before the new catalog is published,
        // the servers are marked stale again, so no change is lost.
        let mut remark = Remark {
            servers: &self.servers,
            stale: stale.clone(),
        };
        let mut lists = self.snapshot().lists.clone();
        let mut errors = Vec::new();
        let mut changed = false;
        for i in stale {
            let (Some(server), Some(slot)) = (self.servers.get(i), lists.get_mut(i)) else {
                continue;
            };
            tracing::debug!(server = %server.name, "listing tools again");
            match list_tools(&server.client).await {
                Ok(tools) => {
                    *slot = Arc::new(tools);
                    changed = true;
                }
                Err(source) => {
                    tracing::warn!(server = %server.name, error = %mcp_proto::error::chain(&source), "listing tools again failed; keeping the previous tools");
                    server.forced.store(true, Ordering::Release);
                    errors.push(ToolboxError::List {
                        server: server.name.clone(),
                        source,
                    });
                }
            }
        }
        if changed {
            let catalog = Catalog::build(
                &self.servers,
                lists,
                self.on_collision,
                &self.options,
                &self.results,
                &self.me,
            );
            match self.catalog.write() {
                Ok(mut g) => *g = Arc::new(catalog),
                Err(p) => *p.into_inner() = Arc::new(catalog),
            }
        }
        remark.stale.clear();
        errors
    }

    pub(crate) async fn call(
        this: &Arc<Inner>,
        name: &str,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        this.refresh_stale().await;
        let not_found = || ToolError::NotFound {
            name: name.to_owned(),
        };
        let Some(tool) = this.snapshot().get(name).cloned() else {
            return this.call_own(name, &arguments);
        };
        let mut approved = false;
        let first = match tool.attempt(&arguments, &mut approved).await {
            Ok(out) => return Ok(this.cut(name, out)),
            Err(AttemptError::Final(e)) => return Err(this.cut_error(name, e)),
            Err(AttemptError::ToolSetChanged(e)) => e,
        };
        let server = this
            .servers
            .iter()
            .find(|s| Some(&*s.name) == tool.server());
        tracing::debug!(tool = %name, server = ?tool.server(), "tool set changed; listing tools again and retrying once");
        if let Some(s) = server {
            s.forced.store(true, Ordering::Release);
        }
        let errors = this.refresh_stale().await;
        if let Some(ToolboxError::List { source, .. }) = errors.into_iter().find(
            |e| matches!(e, ToolboxError::List { server, .. } if Some(&**server) == tool.server()),
        ) {
            return Err(ToolError::Fatal {
                tool: name.to_owned(),
                source,
            });
        }
        let tool = this.snapshot().get(name).cloned().ok_or_else(not_found)?;
        match tool.attempt(&arguments, &mut approved).await {
            Ok(out) => Ok(this.cut(name, out)),
            Err(AttemptError::Final(e)) => Err(this.cut_error(name, e)),
            Err(AttemptError::ToolSetChanged(_)) => Err(fatal(name, first)),
        }
    }

    /// `out` of the tool `name` cut to its budget. A toolbox without
    /// budgets has no store: one branch, and the output as it is.
    #[inline]
    fn cut(&self, name: &str, out: ToolOutput) -> ToolOutput {
        match &self.results.store {
            None => out,
            Some(store) => self.cut_to_budget(store, name, out),
        }
    }

    #[inline(never)]
    fn cut_to_budget(&self, store: &ResultStore, name: &str, out: ToolOutput) -> ToolOutput {
        let catalog = self.snapshot();
        match (catalog.budget(name), &catalog.read_result) {
            (Some(budget), Some(read)) => crate::budget::apply(out, budget, store, read),
            _ => out,
        }
    }

    /// A failed call's explanation cut like an output.
    fn cut_error(&self, name: &str, e: ToolError) -> ToolError {
        let (Some(store), ToolError::ToolFailed { .. }) = (&self.results.store, &e) else {
            return e;
        };
        let catalog = self.snapshot();
        match (catalog.budget(name), &catalog.read_result) {
            (Some(budget), Some(read)) => crate::budget::apply_to_error(e, budget, store, read),
            _ => e,
        }
    }

    /// A name no server's tool has: one of the toolbox's own tools, or
    /// [`ToolError::NotFound`].
    fn call_own(&self, name: &str, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let catalog = self.snapshot();
        match (&catalog.read_result, &self.results.store) {
            (Some(read), Some(store)) if **read == *name => {
                crate::budget::read_result(store, read, arguments)
            }
            _ => Err(ToolError::NotFound {
                name: name.to_owned(),
            }),
        }
    }
}

fn fatal(name: &str, source: ClientError) -> ToolError {
    ToolError::Fatal {
        tool: name.to_owned(),
        source,
    }
}

struct Catalog {
    /// The tools offered to the model, then (from `offered` on) those the
    /// policy denies: still found by name, so a call gets a refusal that
    /// says why rather than "no such tool".
    tools: Vec<McpTool>,
    offered: usize,
    /// Each tool's result budget, in the order of `tools`.
    budgets: Vec<Option<usize>>,
    /// The name `read_result` got, when results are cut.
    read_result: Option<Arc<str>>,
    /// Keys shared with the tools' own names (no second copy).
    index: HashMap<Arc<str>, usize>,
    /// The search index of `tools`, built at the first search of this
    /// listing (a new listing is a new catalog, so it is never stale).
    search: OnceLock<ToolIndex>,
    /// Each server's last listing, in server order.
    lists: Vec<Arc<Vec<mcp_proto::schema::Tool>>>,
    collisions: Vec<Collision>,
}

impl Catalog {
    fn get(&self, name: &str) -> Option<&McpTool> {
        self.index.get(name).and_then(|&i| self.tools.get(i))
    }

    fn offered(&self) -> &[McpTool] {
        self.tools.get(..self.offered).unwrap_or(&self.tools)
    }

    /// The result budget of the tool the model knows as `name`.
    fn budget(&self, name: &str) -> Option<usize> {
        self.index
            .get(name)
            .and_then(|&i| self.budgets.get(i).copied().flatten())
    }

    fn build(
        servers: &[ServerState],
        lists: Vec<Arc<Vec<mcp_proto::schema::Tool>>>,
        policy: OnCollision,
        options: &ToolOptions,
        results: &Results,
        me: &Weak<Inner>,
    ) -> Catalog {
        let input: Vec<NamingInput<'_>> = servers
            .iter()
            .zip(&lists)
            .map(|(s, tools)| NamingInput {
                server: &s.name,
                prefix: &s.prefix,
                filter: &s.filter,
                tools: tools.iter().map(|t| t.name.as_str()).collect(),
                // MCP Apps: a tool for its app's UI only is never the model's.
                app_only: (0..tools.len())
                    .filter(|&i| tools.get(i).is_some_and(|t| !t.is_model_visible()))
                    .collect(),
            })
            .collect();
        // A pattern that matches nothing is said at each listing (a server
        // not listed yet, or down, has no names to judge by).
        for i in input.iter().filter(|i| !i.tools.is_empty()) {
            i.filter.warn_unmatched(i.server, i.tools.iter().copied());
        }
        let (assigned, collisions) = assign_names(&input, policy);
        let mut tools = Vec::with_capacity(assigned.len());
        let mut budgets = Vec::with_capacity(assigned.len());
        let mut index = HashMap::with_capacity(assigned.len());
        // Every tool of a server shares one copy of its name.
        let server_names: Vec<Arc<str>> = servers.iter().map(|s| Arc::from(&*s.name)).collect();
        for a in assigned {
            let (Some(server), Some(list), Some(server_name)) = (
                servers.get(a.server),
                lists.get(a.server),
                server_names.get(a.server),
            ) else {
                continue;
            };
            let name: Arc<str> = Arc::from(a.name);
            // The definition is shared with the listing, not copied.
            let Some(tool) = McpTool::build(
                server.client.clone(),
                list.clone(),
                a.tool,
                name.clone(),
                Some(server_name.clone()),
                options.clone(),
                me.clone(),
            ) else {
                continue;
            };
            index.insert(name, tools.len());
            budgets.push(server.budgets.of(tool.wire_name(), results.default));
            tools.push(tool);
        }
        // Denied tools go last (in order), out of the offered part, each
        // with its budget beside it.
        let denied = |t: &McpTool| t.verdict().is_some_and(|v| v.decision == Decision::Deny);
        let mut offered = tools.len();
        if tools.iter().any(denied) {
            let (keep, deny): (Vec<_>, Vec<_>) = tools
                .into_iter()
                .zip(budgets)
                .partition(|(t, _)| !denied(t));
            offered = keep.len();
            (tools, budgets) = keep.into_iter().chain(deny).unzip();
            index = tools
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name_arc(), i))
                .collect();
        }
        let read_result = results
            .store
            .is_some()
            .then(|| free_name(Meta::ReadResult.base_name(), |n| index.contains_key(n)));
        Catalog {
            tools,
            offered,
            budgets,
            read_result,
            index,
            search: OnceLock::new(),
            lists,
            collisions,
        }
    }

    /// The search index, built once per catalog: the tools, with their
    /// servers' names and instructions.
    fn search_index(&self) -> &ToolIndex {
        self.search.get_or_init(|| {
            let mut b = ToolIndex::builder();
            let mut current: Option<&str> = None;
            // Only what the model may be offered: a denied tool is never a hit.
            for (i, tool) in self.offered().iter().enumerate() {
                if current != tool.server() {
                    current = tool.server();
                    let info = tool.client().server();
                    let name = match &info {
                        Some(i) => format!("{} {}", current.unwrap_or(""), i.implementation.name),
                        None => current.unwrap_or("").to_owned(),
                    };
                    b.server(&name, info.as_ref().and_then(|i| i.instructions.as_deref()));
                }
                b.tool(i, tool.definition());
            }
            b.build()
        })
    }
}
