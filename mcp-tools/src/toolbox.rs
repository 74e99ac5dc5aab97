//! Many servers' tools as one set of model-facing tools.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, RwLock, Weak};

use mcp_client::{Client, ClientError};
use serde_json::Value;

use crate::budget::{ResultStore, ResultsConfig};
use crate::catalog::{Catalog, Settings};
use crate::error::{ToolError, ToolboxError};
use crate::export::{ModelApi, ModelTool};
use crate::keeper::Keeper;
use crate::meta::Meta;
use crate::names::Filter;
use crate::options::ToolOptions;
use crate::search::SearchHit;
use crate::server::{Remark, Server, ServerState, list_tools, unique};
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
    keeper: Option<Arc<dyn Keeper>>,
}

impl Default for ToolboxBuilder {
    fn default() -> Self {
        ToolboxBuilder {
            servers: Vec::new(),
            on_collision: OnCollision::default(),
            options: ToolOptions::default(),
            listen: true,
            results: ResultsConfig::default(),
            keeper: None,
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

    /// Whoever keeps the servers running (a host): asked why a name has
    /// no tool, shown the calls that failed for good (see [`Keeper`]).
    pub fn keeper(mut self, keeper: impl Keeper + 'static) -> Self {
        self.keeper = Some(Arc::new(keeper));
        self
    }

    /// Lists every server's tools and assembles the toolbox.
    pub async fn build(self) -> Result<Toolbox, ToolboxError> {
        let toolbox = self.build_now()?;
        match toolbox.inner.refresh_stale().await.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(toolbox),
        }
    }

    /// Assembles the toolbox at once, without I/O: a server given its tools
    /// ([`Server::listed`]) has them; each other server is listed at the
    /// toolbox's first use ([`tools`](Toolbox::tools), [`call`](Toolbox::call),
    /// [`search`](Toolbox::search), …) as after a `list_changed`, and one
    /// whose listing fails then has no tools until a later use lists it.
    /// For a toolbox whose servers come later ([`Toolbox::set_servers`]).
    pub fn build_now(self) -> Result<Toolbox, ToolboxError> {
        unique(&self.servers)?;
        let listen = self.listen;
        let (states, lists) = self
            .servers
            .into_iter()
            .map(|s| s.into_state(listen))
            .unzip();
        Ok(Toolbox::assemble(
            Inner {
                on_collision: self.on_collision,
                options: self.options,
                listen,
                results: self.results,
                store: OnceLock::new(),
                keeper: self.keeper,
                catalog: RwLock::default(),
                refresh: tokio::sync::Mutex::new(()),
                me: Weak::new(),
            },
            states,
            lists,
        ))
    }
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
/// - **One live set.** [`set_servers`](Toolbox::set_servers) changes the
///   servers in place: every clone, every [`Deferred`](crate::Deferred)
///   conversation and every [`McpTool`] handed out (which calls through the
///   toolbox by name) sees the new ones at once, and the results kept for
///   `read_result` stay readable.
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
                &catalog.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("tools", &catalog.offered().len())
            .finish()
    }
}

/// A toolbox of no servers (what a host offers before any is ready).
impl Default for Toolbox {
    fn default() -> Self {
        ToolboxBuilder::default()
            .build_now()
            .unwrap_or_else(|e| unreachable!("a toolbox of no servers: {e}"))
    }
}

impl Toolbox {
    /// A builder.
    pub fn builder() -> ToolboxBuilder {
        ToolboxBuilder::default()
    }

    /// The toolbox of `inner`'s settings, with the servers `states` whose
    /// tools are `lists` (in the same order).
    fn assemble(
        inner: Inner,
        states: Vec<Arc<ServerState>>,
        lists: Vec<Arc<Vec<mcp_proto::schema::Tool>>>,
    ) -> Toolbox {
        let inner = Arc::new_cyclic(|me: &Weak<Inner>| {
            let inner = Inner {
                me: me.clone(),
                ..inner
            };
            inner.publish(Catalog::build(states, lists, &inner.settings()));
            inner
        });
        Toolbox { inner }
    }

    /// Makes `servers` the toolbox's servers, in order (earlier ones win
    /// name collisions), in place of those it had: every clone of this
    /// toolbox, every [`Deferred`](crate::Deferred) made from it and every
    /// [`McpTool`] it handed out sees them from when this returns. What the
    /// toolbox keeps across (its settings, the cut results `read_result`
    /// reads) stays; a search index is built for the new tools at the next
    /// search.
    ///
    /// A server given its tools ([`Server::listed`]) is not listed (a host
    /// that supervises its servers gives each change this way, without
    /// I/O); any other is listed now, and if one fails nothing changes. On
    /// [`ToolboxError::DuplicateServer`] nothing changes either.
    pub async fn set_servers(
        &self,
        servers: impl IntoIterator<Item = Server>,
    ) -> Result<(), ToolboxError> {
        let servers: Vec<Server> = servers.into_iter().collect();
        unique(&servers)?;
        let (states, mut lists): (Vec<_>, Vec<_>) = servers
            .into_iter()
            .map(|s| s.into_state(self.inner.listen))
            .unzip();
        for (state, list) in states.iter().zip(&mut lists) {
            if state.take_stale() {
                let tools =
                    list_tools(&state.client)
                        .await
                        .map_err(|source| ToolboxError::List {
                            server: state.name.clone(),
                            source,
                        })?;
                *list = Arc::new(tools);
            }
        }
        // After any re-listing in progress, which would publish the old
        // servers' tools.
        let _guard = self.inner.refresh.lock().await;
        self.inner
            .publish(Catalog::build(states, lists, &self.inner.settings()));
        Ok(())
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
        let catalog = self.inner.snapshot();
        let i = catalog.servers.iter().position(|s| s.name == server)?;
        let state = catalog.servers.get(i)?;
        Some(ServerListing {
            client: state.client.clone(),
            tools: catalog.lists.get(i)?.clone(),
            filter: state.filter.clone(),
            options: self.inner.options.clone(),
        })
    }

    /// The error for a call to `name`, which no tool has: the
    /// [`Keeper`]'s, or [`ToolError::NotFound`].
    pub(crate) fn missing(&self, name: &str) -> ToolError {
        self.inner.missing(name)
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

    /// Lists every server's tools again now (but those a [`Keeper`] was
    /// given: it lists them). On error, the failing server keeps its
    /// previous tools and is listed again on next use.
    pub async fn refresh(&self) -> Result<(), ToolboxError> {
        let keeper = self.inner.keeper.is_some();
        for s in &self.inner.snapshot().servers {
            if !(keeper && s.given) {
                s.forced.store(true, Ordering::Release);
            }
        }
        match self.inner.refresh_stale().await.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether some server said its tools changed since the last listing.
    pub fn is_stale(&self) -> bool {
        self.inner.snapshot().is_stale()
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

pub(crate) struct Inner {
    on_collision: OnCollision,
    options: ToolOptions,
    /// Whether servers the toolbox lists itself get a `subscriptions/listen`.
    listen: bool,
    results: ResultsConfig,
    /// Cut results, for `read_result`: made at the first cut, kept across
    /// catalogs.
    store: OnceLock<ResultStore>,
    keeper: Option<Arc<dyn Keeper>>,
    catalog: RwLock<Arc<Catalog>>,
    /// Held while a catalog is made from the current one (re-listing) or
    /// replaces it ([`Toolbox::set_servers`]): concurrent callers list once,
    /// and no catalog is built from servers already replaced.
    refresh: tokio::sync::Mutex<()>,
    me: Weak<Inner>,
}

impl Inner {
    pub(crate) fn snapshot(&self) -> Arc<Catalog> {
        match self.catalog.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn settings(&self) -> Settings<'_> {
        Settings {
            on_collision: self.on_collision,
            options: &self.options,
            default_budget: self.results.default,
            results_kept: self.store.get().is_some_and(|s| !s.is_empty()),
            me: &self.me,
        }
    }

    fn publish(&self, catalog: Catalog) {
        let catalog = Arc::new(catalog);
        match self.catalog.write() {
            Ok(mut g) => *g = catalog,
            Err(p) => *p.into_inner() = catalog,
        }
    }

    fn store(&self) -> &ResultStore {
        self.store.get_or_init(|| self.results.store())
    }

    /// Lists again the servers that changed; returns the listing errors
    /// (those servers keep their previous tools and stay stale).
    async fn refresh_stale(&self) -> Vec<ToolboxError> {
        if !self.snapshot().is_stale() {
            return Vec::new();
        }
        let _guard = self.refresh.lock().await;
        // Taken under the lock: its servers stay the toolbox's until the
        // new catalog is out.
        let current = self.snapshot();
        let stale: Vec<usize> = (0..current.servers.len())
            .filter(|&i| current.servers.get(i).is_some_and(|s| s.take_stale()))
            .collect();
        if stale.is_empty() {
            // Another caller re-listed while we waited.
            return Vec::new();
        }
        // If this future is dropped before the new catalog is published,
        // the servers are marked stale again, so no change is lost.
        let mut remark = Remark {
            servers: &current.servers,
            stale: stale.clone(),
        };
        let mut lists = current.lists.clone();
        let mut errors = Vec::new();
        let mut changed = false;
        for i in stale {
            let (Some(server), Some(slot)) = (current.servers.get(i), lists.get_mut(i)) else {
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
            self.publish(Catalog::build(
                current.servers.clone(),
                lists,
                &self.settings(),
            ));
        }
        remark.stale.clear();
        errors
    }

    pub(crate) async fn call(
        this: &Arc<Inner>,
        name: &str,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        let mut catalog = this.snapshot();
        if catalog.is_stale() {
            this.refresh_stale().await;
            catalog = this.snapshot();
        }
        let Some(tool) = catalog.get(name).cloned() else {
            return this.call_own(&catalog, name, &arguments);
        };
        let mut approved = false;
        let first = match tool.attempt(&arguments, &mut approved).await {
            Ok(out) => return Ok(this.cut(&catalog, name, out)),
            Err(AttemptError::Final(e)) => return Err(this.failed(&catalog, &tool, name, e)),
            Err(AttemptError::ToolSetChanged(e)) => e,
        };
        let server = catalog
            .servers
            .iter()
            .find(|s| Some(&*s.name) == tool.server());
        if this.keeper.is_some() && server.is_some_and(|s| s.given) {
            // Whoever gave the tools lists them again, its own way.
            return Err(this.failed(&catalog, &tool, name, fatal(name, first)));
        }
        tracing::debug!(tool = %name, server = ?tool.server(), "tool set changed; listing tools again and retrying once");
        if let Some(s) = server {
            s.forced.store(true, Ordering::Release);
        }
        let errors = this.refresh_stale().await;
        if let Some(ToolboxError::List { source, .. }) = errors.into_iter().find(
            |e| matches!(e, ToolboxError::List { server, .. } if Some(&**server) == tool.server()),
        ) {
            return Err(this.failed(&catalog, &tool, name, fatal(name, source)));
        }
        let catalog = this.snapshot();
        let Some(tool) = catalog.get(name).cloned() else {
            return Err(this.missing(name));
        };
        match tool.attempt(&arguments, &mut approved).await {
            Ok(out) => Ok(this.cut(&catalog, name, out)),
            Err(AttemptError::Final(e)) => Err(this.failed(&catalog, &tool, name, e)),
            Err(AttemptError::ToolSetChanged(_)) => {
                Err(this.failed(&catalog, &tool, name, fatal(name, first)))
            }
        }
    }

    /// `out` of the tool `name` cut to its budget. A catalog without
    /// budgets has no `read_result`: one branch, and the output as it is.
    #[inline]
    fn cut(&self, catalog: &Catalog, name: &str, out: ToolOutput) -> ToolOutput {
        match &catalog.read_result {
            None => out,
            Some(read) => self.cut_to_budget(catalog, read, name, out),
        }
    }

    #[inline(never)]
    fn cut_to_budget(
        &self,
        catalog: &Catalog,
        read: &str,
        name: &str,
        out: ToolOutput,
    ) -> ToolOutput {
        match catalog.budget(name) {
            Some(budget) => crate::budget::apply(out, budget, self.store(), read),
            None => out,
        }
    }

    /// What the caller of `tool` (the model's `name`) gets for `e`: a
    /// failed call's explanation cut like an output; a fatal error as the
    /// keeper says.
    fn failed(&self, catalog: &Catalog, tool: &McpTool, name: &str, e: ToolError) -> ToolError {
        match (&e, &catalog.read_result, &self.keeper) {
            (ToolError::ToolFailed { .. }, Some(read), _) => match catalog.budget(name) {
                Some(budget) => crate::budget::apply_to_error(e, budget, self.store(), read),
                None => e,
            },
            (ToolError::Fatal { .. }, _, Some(keeper)) => keeper.failed(tool, e),
            _ => e,
        }
    }

    /// A name no server's tool has: one of the toolbox's own tools, else
    /// [`missing`](Self::missing).
    fn call_own(
        &self,
        catalog: &Catalog,
        name: &str,
        arguments: &Value,
    ) -> Result<ToolOutput, ToolError> {
        match &catalog.read_result {
            Some(read) if **read == *name => {
                crate::budget::read_result(self.store(), read, arguments)
            }
            _ => Err(self.missing(name)),
        }
    }

    /// The error for a call to `name`, which no tool has: the keeper's, or
    /// [`ToolError::NotFound`].
    fn missing(&self, name: &str) -> ToolError {
        self.keeper
            .as_ref()
            .and_then(|k| k.missing(name))
            .unwrap_or_else(|| ToolError::NotFound {
                name: name.to_owned(),
            })
    }
}

fn fatal(name: &str, source: ClientError) -> ToolError {
    ToolError::Fatal {
        tool: name.to_owned(),
        source,
    }
}
