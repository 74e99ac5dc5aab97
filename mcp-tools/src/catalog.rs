//! A toolbox's servers and their tools as of one listing ([`Catalog`]):
//! what every call, export and search of that moment reads. A change (a
//! server listed again, the servers replaced) builds a new catalog and
//! publishes it whole; readers keep the one they took.

use crate::tool::Tool as _;
use std::sync::{Arc, OnceLock, Weak};

use mcp_proto::schema::Tool;

use crate::meta::{Meta, free_name};
use crate::names::{NamingInput, assign_names};
use crate::options::ToolOptions;
use crate::policy::Decision;
use crate::search::ToolIndex;
use crate::server::ServerState;
use crate::tool::McpTool;
use crate::toolbox::{Collision, Inner, OnCollision};

/// The toolbox's servers and tools as of one listing.
#[derive(Default)]
pub(crate) struct Catalog {
    /// The servers, in order (earlier ones won name collisions).
    pub(crate) servers: Vec<Arc<ServerState>>,
    /// Each server's last listing, in server order.
    pub(crate) lists: Vec<Arc<Vec<Tool>>>,
    /// The tools offered to the model, then (from `offered` on) those the
    /// policy denies: still found by name, so a call gets a refusal that
    /// says why rather than "no such tool".
    pub(crate) tools: Vec<McpTool>,
    offered: usize,
    /// Each tool's result budget, in the order of `tools`.
    budgets: Vec<Option<usize>>,
    /// The name `read_result` got, when results are cut.
    pub(crate) read_result: Option<Arc<str>>,
    /// The positions of `tools` in the order of their names, for lookups
    /// by name (a binary search): a word a tool, where a hash map of
    /// shared names cost some 50 bytes a tool in every idle host.
    /// Invariant: a permutation of `0..tools.len()`.
    by_name: Vec<usize>,
    /// The search index of `tools`, built at the first search of this
    /// catalog (a new listing is a new catalog, so it is never stale).
    search: OnceLock<ToolIndex>,
    pub(crate) collisions: Vec<Collision>,
}

/// What a catalog is built from besides its servers and their listings.
pub(crate) struct Settings<'a> {
    pub(crate) on_collision: OnCollision,
    pub(crate) options: &'a ToolOptions,
    /// The toolbox's default result budget.
    pub(crate) default_budget: Option<usize>,
    /// Whether `read_result` is offered whatever the budgets: cut results
    /// are kept that a model may still read.
    pub(crate) results_kept: bool,
    pub(crate) me: &'a Weak<Inner>,
}

impl Catalog {
    pub(crate) fn get(&self, name: &str) -> Option<&McpTool> {
        self.position(name).and_then(|i| self.tools.get(i))
    }

    /// Where the tool the model knows as `name` is in `tools`.
    fn position(&self, name: &str) -> Option<usize> {
        position(&self.tools, &self.by_name, name)
    }

    pub(crate) fn offered(&self) -> &[McpTool] {
        self.tools.get(..self.offered).unwrap_or(&self.tools)
    }

    /// Whether some server said its tools changed since its last listing.
    pub(crate) fn is_stale(&self) -> bool {
        self.servers.iter().any(|s| s.is_stale())
    }

    /// The result budget of the tool the model knows as `name`.
    pub(crate) fn budget(&self, name: &str) -> Option<usize> {
        self.position(name)
            .and_then(|i| self.budgets.get(i).copied().flatten())
    }

    pub(crate) fn build(
        servers: Vec<Arc<ServerState>>,
        lists: Vec<Arc<Vec<Tool>>>,
        settings: &Settings<'_>,
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
        let (assigned, collisions) = assign_names(&input, settings.on_collision);
        let mut tools = Vec::with_capacity(assigned.len());
        let mut budgets = Vec::with_capacity(assigned.len());
        // Every tool of a server shares one copy of its name and options.
        let server_names: Vec<Arc<str>> = servers.iter().map(|s| Arc::from(&*s.name)).collect();
        let options: Vec<Arc<ToolOptions>> = servers
            .iter()
            .map(|s| Arc::new(s.options(settings.options)))
            .collect();
        for a in assigned {
            let (Some(server), Some(list), Some(server_name), Some(options)) = (
                servers.get(a.server),
                lists.get(a.server),
                server_names.get(a.server),
                options.get(a.server),
            ) else {
                continue;
            };
            // The definition is shared with the listing, not copied.
            let Some(tool) = McpTool::build(
                server.client.clone(),
                list.clone(),
                a.tool,
                Arc::from(a.name),
                Some(server_name.clone()),
                options.clone(),
                settings.me.clone(),
            ) else {
                continue;
            };
            budgets.push(server.budgets.of(tool.wire_name(), settings.default_budget));
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
        }
        let mut by_name: Vec<usize> = (0..tools.len()).collect();
        by_name.sort_unstable_by(|&a, &b| name_at(&tools, a).cmp(name_at(&tools, b)));
        let cuts = settings.results_kept
            || settings.default_budget.is_some()
            || servers.iter().any(|s| s.budgets.any());
        let read_result = cuts.then(|| {
            free_name(Meta::ReadResult.base_name(), |n| {
                position(&tools, &by_name, n).is_some()
            })
        });
        Catalog {
            servers,
            lists,
            tools,
            offered,
            budgets,
            read_result,
            by_name,
            search: OnceLock::new(),
            collisions,
        }
    }

    /// The search index, built once per catalog: the tools, with their
    /// servers' names and instructions.
    pub(crate) fn search_index(&self) -> &ToolIndex {
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

/// The name of `tools[i]` ("" past the end: not reached, `by_name` holds
/// positions of `tools` only).
fn name_at(tools: &[McpTool], i: usize) -> &str {
    tools.get(i).map_or("", |t| t.name())
}

/// Where the tool named `name` is in `tools`, found in `by_name` (its
/// positions in the order of their names).
fn position(tools: &[McpTool], by_name: &[usize], name: &str) -> Option<usize> {
    by_name
        .binary_search_by(|&i| name_at(tools, i).cmp(name))
        .ok()
        .and_then(|k| by_name.get(k).copied())
}
