//! One server of a toolbox: what the application gives ([`Server`]) and
//! what the toolbox keeps of it ([`ServerState`]): its client, its settings,
//! and whether its tools changed since they were listed.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mcp_client::{Client, ClientError, ListKind, ResponseFuture};
use mcp_proto::Era;
use mcp_proto::schema::{ListenResult, SubscriptionFilter, Tool};
use tokio::sync::watch;

use crate::budget::ServerBudgets;
use crate::error::ToolboxError;
use crate::names::Filter;
use crate::options::ToolOptions;
use crate::policy::ToolRules;

/// One server of a toolbox: a connected client, a name, an optional prefix
/// and a filter.
#[derive(Debug, Clone)]
#[must_use]
pub struct Server {
    name: String,
    client: Client,
    prefix: String,
    filter: Filter,
    listed: Option<Arc<Vec<Tool>>>,
    rules: ToolRules,
    /// Result budgets (set in `budget.rs`).
    pub(crate) budgets: ServerBudgets,
}

impl Server {
    /// A server called `name` (unique in the toolbox; used in logs, errors
    /// and [`Route`](crate::Route)s, never shown to the model) reached through `client`.
    pub fn new(name: impl Into<String>, client: Client) -> Self {
        Server {
            name: name.into(),
            client,
            prefix: String::new(),
            filter: Filter::All,
            listed: None,
            rules: ToolRules::new(),
            budgets: ServerBudgets::default(),
        }
    }

    /// The server's tools, already listed (e.g. from a cache, or by a
    /// supervisor that watches the server): the toolbox sends no
    /// `tools/list` for this server when built, and does not watch its
    /// `list_changed` either; whoever listed the tools keeps them current
    /// (giving the toolbox each new listing, [`Toolbox::set_servers`](crate::Toolbox::set_servers)).
    /// A call failing with "tool set changed" lists the server again and
    /// is retried once, unless the toolbox has a [`Keeper`](crate::Keeper):
    /// the keeper then gets the error, to list the server again its own way
    /// (a host checks the new tools against what the user approved).
    ///
    /// A `Vec<Tool>` or an `Arc<Vec<Tool>>`: the toolbox's tools share the
    /// definitions of an `Arc`'s list rather than copy them (a host that
    /// keeps each server's listing and gives the toolbox each new one,
    /// [`Toolbox::set_servers`](crate::Toolbox::set_servers), holds every definition once).
    pub fn listed(mut self, tools: impl Into<Arc<Vec<Tool>>>) -> Self {
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

    /// Allow, ask and deny rules for this server's tools (by its own
    /// names), before those of the toolbox's
    /// [policy](crate::ToolOptions::policy) (as
    /// [`ToolPolicy::server`](crate::ToolPolicy::server) for this server's
    /// name). A toolbox without a policy gets one for these rules only: a
    /// tool no rule names runs.
    pub fn tool_rules(mut self, rules: ToolRules) -> Self {
        self.rules = rules;
        self
    }

    /// Its state in a toolbox, and its tools: those it was given, or none
    /// yet (it is then listed at the toolbox's next use).
    pub(crate) fn into_state(self, listen: bool) -> (Arc<ServerState>, Arc<Vec<Tool>>) {
        let (changes, tools) = match self.listed {
            Some(tools) => (None, tools),
            // Subscribed before listing: a change during the listing is
            // then seen as a change.
            None => (
                Some(self.client.list_changed(ListKind::Tools)),
                Arc::default(),
            ),
        };
        let listen = if listen && changes.is_some() {
            open_listen(&self.client)
        } else {
            None
        };
        let state = ServerState {
            forced: AtomicBool::new(changes.is_some()),
            given: changes.is_none(),
            name: self.name,
            prefix: self.prefix,
            filter: self.filter,
            budgets: self.budgets,
            rules: self.rules,
            client: self.client,
            changes: Mutex::new(changes),
            _listen: Mutex::new(listen),
        };
        (Arc::new(state), tools)
    }
}

/// [`ToolboxError::DuplicateServer`] for the first name given twice.
pub(crate) fn unique(servers: &[Server]) -> Result<(), ToolboxError> {
    let mut seen = HashSet::new();
    match servers.iter().find(|s| !seen.insert(&s.name)) {
        Some(s) => Err(ToolboxError::DuplicateServer(s.name.clone())),
        None => Ok(()),
    }
}

/// One server of a toolbox, from its [`Server`]: kept from catalog to
/// catalog until the toolbox's servers are replaced.
pub(crate) struct ServerState {
    pub(crate) name: String,
    pub(crate) prefix: String,
    pub(crate) filter: Filter,
    pub(crate) budgets: ServerBudgets,
    pub(crate) rules: ToolRules,
    pub(crate) client: Client,
    /// Whether its tools were handed in ([`Server::listed`]): whoever
    /// listed them keeps them current.
    pub(crate) given: bool,
    /// `None` for servers whose tools were handed in.
    pub(crate) changes: Mutex<Option<watch::Receiver<u64>>>,
    /// Set after a "tool set changed" error or a failed listing, and for a
    /// server not listed yet.
    pub(crate) forced: AtomicBool,
    /// The open `subscriptions/listen` request, if any (dropping cancels it).
    pub(crate) _listen: Mutex<Option<ResponseFuture<ListenResult>>>,
}

impl ServerState {
    pub(crate) fn is_stale(&self) -> bool {
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
    pub(crate) fn take_stale(&self) -> bool {
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

    /// How its tools call it: the toolbox's options, with its own
    /// [rules](Server::tool_rules) before the policy's. A toolbox
    /// without a policy gets one for these rules only (annotations off: a
    /// tool no rule names runs, as without a policy).
    pub(crate) fn options(&self, toolbox: &ToolOptions) -> ToolOptions {
        if self.rules.is_empty() {
            return toolbox.clone();
        }
        let policy = toolbox
            .tool_policy()
            .cloned()
            .unwrap_or_else(|| crate::ToolPolicy::new().annotations(false))
            .server(self.name.clone(), self.rules.clone());
        toolbox.clone().policy(policy)
    }
}

/// Marks servers stale again when dropped with a non-empty `stale`.
pub(crate) struct Remark<'a> {
    pub(crate) servers: &'a [Arc<ServerState>],
    pub(crate) stale: Vec<usize>,
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

/// Every tool of the server; none (and no request) if the server does not
/// offer tools.
pub(crate) async fn list_tools(client: &Client) -> Result<Vec<Tool>, ClientError> {
    if client
        .server()
        .is_some_and(|info| info.capabilities.tools.is_none())
    {
        return Ok(Vec::new());
    }
    client.list_all::<Tool>().await
}

/// Opens `subscriptions/listen` for tool-list changes if the server speaks
/// 2026-07-28 and says it sends them. The returned future is kept, never
/// polled: the request stays open until the server leaves the toolbox
/// (dropping it cancels the request). The notifications it brings reach the client's
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
