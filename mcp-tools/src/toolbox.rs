//! Many servers' tools as one set of model-facing tools.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use mcp_client::{Client, ClientError, ListKind, ResponseFuture};
use mcp_proto::Era;
use mcp_proto::schema::{ListenResult, SubscriptionFilter};
use serde_json::Value;
use tokio::sync::watch;

use crate::error::{ToolError, ToolboxError};
use crate::names::{Filter, MAX_TOOL_NAME_LEN, sanitize_name, with_suffix};
use crate::tool::{
    AttemptError, McpTool, ModelApi, ModelTool, ToolOptions, ToolOutput, anthropic_tool,
    openai_function,
};

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
}

impl Default for ToolboxBuilder {
    fn default() -> Self {
        ToolboxBuilder {
            servers: Vec::new(),
            on_collision: OnCollision::default(),
            options: ToolOptions::default(),
            listen: true,
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
///   model APIs accept ([`sanitize_name`]); [`resolve`](Toolbox::resolve)
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
            .field("tools", &catalog.tools.len())
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
    ) -> Toolbox {
        let inner = Arc::new_cyclic(|me: &Weak<Inner>| {
            let catalog = Catalog::build(&states, lists, on_collision, &options, me);
            Inner {
                servers: states,
                on_collision,
                options,
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

    /// The tools as of the last listing (no I/O).
    pub fn snapshot(&self) -> Vec<McpTool> {
        self.inner.snapshot().tools.clone()
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

    /// The name collisions of the last listing.
    pub fn collisions(&self) -> Vec<Collision> {
        self.inner.snapshot().collisions.clone()
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

    /// Every tool in the OpenAI function-calling shape ([`openai_function`]).
    pub async fn openai_tools(&self) -> Vec<Value> {
        self.tools().await.iter().map(openai_function).collect()
    }

    /// Every tool in the Anthropic tool shape ([`anthropic_tool`]).
    pub async fn anthropic_tools(&self) -> Vec<Value> {
        self.tools().await.iter().map(anthropic_tool).collect()
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

    async fn definitions(&self, api: ModelApi) -> Vec<ModelTool> {
        self.inner.refresh_stale().await;
        let catalog = self.inner.snapshot();
        catalog
            .tools
            .iter()
            .map(|t| ModelTool::new(t.clone(), api))
            .collect()
    }
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
    catalog: RwLock<Arc<Catalog>>,
    /// Held while re-listing, so concurrent callers list once.
    refresh: tokio::sync::Mutex<()>,
    me: Weak<Inner>,
}

struct ServerState {
    name: String,
    prefix: String,
    filter: Filter,
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
        let tool = this.snapshot().get(name).cloned().ok_or_else(not_found)?;
        let first = match tool.attempt(&arguments).await {
            Ok(out) => return Ok(out),
            Err(AttemptError::Final(e)) => return Err(e),
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
        match tool.attempt(&arguments).await {
            Ok(out) => Ok(out),
            Err(AttemptError::Final(e)) => Err(e),
            Err(AttemptError::ToolSetChanged(_)) => Err(fatal(name, first)),
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
    tools: Vec<McpTool>,
    /// Keys shared with the tools' own names (no second copy).
    index: HashMap<Arc<str>, usize>,
    /// Each server's last listing, in server order.
    lists: Vec<Arc<Vec<mcp_proto::schema::Tool>>>,
    collisions: Vec<Collision>,
}

impl Catalog {
    fn get(&self, name: &str) -> Option<&McpTool> {
        self.index.get(name).and_then(|&i| self.tools.get(i))
    }

    fn build(
        servers: &[ServerState],
        lists: Vec<Arc<Vec<mcp_proto::schema::Tool>>>,
        policy: OnCollision,
        options: &ToolOptions,
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
            })
            .collect();
        // A pattern that matches nothing is said at each listing (a server
        // not listed yet, or down, has no names to judge by).
        for i in input.iter().filter(|i| !i.tools.is_empty()) {
            i.filter.warn_unmatched(i.server, i.tools.iter().copied());
        }
        let (assigned, collisions) = assign_names(&input, policy);
        let mut tools = Vec::with_capacity(assigned.len());
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
            tools.push(tool);
        }
        Catalog {
            tools,
            index,
            lists,
            collisions,
        }
    }
}

/// One server's tool names, for [`assign_names`].
#[derive(Debug)]
pub(crate) struct NamingInput<'a> {
    pub(crate) server: &'a str,
    pub(crate) prefix: &'a str,
    pub(crate) filter: &'a Filter,
    pub(crate) tools: Vec<&'a str>,
}

/// A model-facing name given to `tools[tool]` of `input[server]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assigned {
    pub(crate) server: usize,
    pub(crate) tool: usize,
    pub(crate) name: String,
}

/// Names every kept tool, deterministically: servers in order, tools in
/// listing order. A first pass gives each tool its sanitized
/// `prefix + name` if still free; a second pass renames (or drops) the
/// losers, so a generated `x_2` never takes a name a real tool has.
pub(crate) fn assign_names(
    input: &[NamingInput<'_>],
    policy: OnCollision,
) -> (Vec<Assigned>, Vec<Collision>) {
    let mut taken: HashMap<String, (usize, usize)> = HashMap::new();
    let mut slots: Vec<Option<Assigned>> = Vec::new();
    let mut losers = Vec::new();
    for (si, server) in input.iter().enumerate() {
        for (ti, tool) in server.tools.iter().enumerate() {
            if !server.filter.allows(tool) {
                continue;
            }
            let name = sanitize_name(&format!("{}{}", server.prefix, tool));
            if taken.contains_key(&name) {
                losers.push((slots.len(), si, ti, name));
                slots.push(None);
            } else {
                taken.insert(name.clone(), (si, ti));
                slots.push(Some(Assigned {
                    server: si,
                    tool: ti,
                    name,
                }));
            }
        }
    }
    let mut collisions = Vec::new();
    // The next suffix to try per colliding name: k tools that share a name
    // are renamed in O(k) lookups in all, not O(k²).
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    for (slot, si, ti, name) in losers {
        let &(wsi, wti) = match taken.get(&name) {
            Some(w) => w,
            None => continue,
        };
        let renamed_to = match policy {
            OnCollision::Drop => None,
            OnCollision::Rename => {
                let n = next_suffix.entry(name.clone()).or_insert(2);
                let mut candidate = with_suffix(&name, *n);
                while taken.contains_key(&candidate) {
                    *n += 1;
                    candidate = with_suffix(&name, *n);
                }
                *n += 1;
                debug_assert!(candidate.len() <= MAX_TOOL_NAME_LEN);
                taken.insert(candidate.clone(), (si, ti));
                if let Some(s) = slots.get_mut(slot) {
                    *s = Some(Assigned {
                        server: si,
                        tool: ti,
                        name: candidate.clone(),
                    });
                }
                Some(candidate)
            }
        };
        let get = |s: usize, t: usize| {
            input
                .get(s)
                .map(|i| (i.server, i.tools.get(t).copied().unwrap_or_default()))
                .unwrap_or_default()
        };
        let (winner_server, winner_tool) = get(wsi, wti);
        let (server, tool) = get(si, ti);
        tracing::debug!(name = %name, server, tool, winner_server, winner_tool, renamed_to = ?renamed_to, "tool name collision");
        collisions.push(Collision {
            name,
            winner_server: winner_server.to_owned(),
            winner_tool: winner_tool.to_owned(),
            server: server.to_owned(),
            tool: tool.to_owned(),
            renamed_to,
        });
    }
    (slots.into_iter().flatten().collect(), collisions)
}
