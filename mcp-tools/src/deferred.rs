//! Deferred loading: the model sees a few tools and a `search_tools` tool,
//! and loads the rest by searching.
//!
//! A [`Deferred`] is one conversation's view of a shared [`Toolbox`]: what
//! it has loaded belongs to that conversation. Each turn, the model is
//! offered ([`Deferred::definitions`]) the always-loaded tools (by name or
//! glob, [`DeferredOptions::always`]), the tools it has loaded, and
//! `search_tools`. Calling `search_tools` with what it wants to do runs
//! [`Toolbox::search`] and returns the best matches' definitions, which are
//! loaded for the following turns. It is just a tool: it works with any
//! model API.
//!
//! **The loaded set is bounded** by a count ([`DeferredOptions::max_loaded`])
//! and by the estimated tokens of its definitions
//! ([`DeferredOptions::max_loaded_tokens`]). Past either, the least
//! recently used tool is unloaded first: a tool counts as used when a
//! search returns it (the best match last) and when it is called. An
//! unloaded tool can be found again.
//!
//! **Native forms.** Anthropic's Messages API and OpenAI's Responses API
//! (gpt-5.4 and later) search tools themselves: send every tool with
//! `defer_loading: true` and their tool search tool
//! ([`Deferred::native_definitions`]); the model then sees only the
//! always-loaded tools until the provider's search loads others. OpenAI's
//! Chat Completions API has no such form: use `search_tools`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::error::ToolError;
use crate::export::{ModelApi, ModelTool, NativeSearch};
use crate::meta::{Meta, free_name};
use crate::names::Glob;
use crate::tool::{Tool, ToolOutput};
use crate::toolbox::Toolbox;

/// Default [`DeferredOptions::max_loaded`].
pub const DEFAULT_MAX_LOADED: usize = 20;
/// Default [`DeferredOptions::max_loaded_tokens`].
pub const DEFAULT_MAX_LOADED_TOKENS: usize = 8_000;
/// Default number of tools one `search_tools` call loads.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;
/// The most tools one `search_tools` call loads, whatever the model asks.
pub const MAX_SEARCH_LIMIT: usize = 20;

/// How a [`Deferred`] loads tools.
#[derive(Debug, Clone)]
#[must_use]
pub struct DeferredOptions {
    always: Vec<Glob>,
    max_loaded: usize,
    max_loaded_tokens: usize,
}

impl Default for DeferredOptions {
    fn default() -> Self {
        DeferredOptions {
            always: Vec::new(),
            max_loaded: DEFAULT_MAX_LOADED,
            max_loaded_tokens: DEFAULT_MAX_LOADED_TOKENS,
        }
    }
}

impl DeferredOptions {
    /// The defaults: no always-loaded tool, at most
    /// [`DEFAULT_MAX_LOADED`] loaded tools of [`DEFAULT_MAX_LOADED_TOKENS`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Tools the model always sees, by model-facing name or [`Glob`]
    /// (`"read_file"`, `"git_*"`): the few it needs on most turns. See
    /// [`fit_tools`](crate::fit_tools) to pick them by a token budget.
    pub fn always<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, patterns: I) -> Self {
        self.always.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// The most tools loaded at once (at least 1).
    pub fn max_loaded(mut self, n: usize) -> Self {
        self.max_loaded = n.max(1);
        self
    }

    /// The most estimated tokens of loaded definitions together.
    pub fn max_loaded_tokens(mut self, tokens: usize) -> Self {
        self.max_loaded_tokens = tokens;
        self
    }
}

/// One conversation's tools with deferred loading (see the
/// [module](crate::deferred)). Made by [`Toolbox::deferred`]; cheap, and
/// meant to live as long as the conversation. Its methods take `&self`: a
/// turn's tool calls may run concurrently.
#[derive(Debug)]
pub struct Deferred {
    toolbox: Toolbox,
    options: DeferredOptions,
    /// Least recently used first: (model-facing name, estimated tokens).
    loaded: Mutex<VecDeque<(Arc<str>, usize)>>,
}

impl Toolbox {
    /// A conversation's view of this toolbox with deferred loading.
    pub fn deferred(&self, options: DeferredOptions) -> Deferred {
        Deferred {
            toolbox: self.clone(),
            options,
            loaded: Mutex::new(VecDeque::new()),
        }
    }
}

impl Deferred {
    /// The name `search_tools` goes by: the first of `search_tools`,
    /// `search_tools_2`, … that no tool of the toolbox has.
    pub fn search_tool_name(&self) -> Arc<str> {
        free_name(Meta::SearchTools.base_name(), |n| {
            self.toolbox.get(n).is_some() || self.own_name(n)
        })
    }

    fn own_name(&self, name: &str) -> bool {
        self.toolbox
            .own_definitions(ModelApi::Anthropic)
            .is_some_and(|t| t.name() == name)
    }

    /// What the model sees this turn, in `api`'s shape: the always-loaded
    /// tools, the loaded ones (least recently used first), `search_tools`,
    /// and the toolbox's own (`read_result` when a result budget is set).
    pub async fn definitions(&self, api: ModelApi) -> Vec<ModelTool> {
        let all = self.toolbox.tools().await;
        let loaded = self.loaded_names();
        let mut out: Vec<ModelTool> = all
            .iter()
            .filter(|t| self.is_always(t.name()))
            .map(|t| ModelTool::new(t.clone(), api))
            .collect();
        out.extend(loaded.iter().filter_map(|name| {
            let t = self.toolbox.get(name)?;
            (!self.is_always(name)).then(|| ModelTool::new(t, api))
        }));
        out.push(ModelTool::meta(
            self.search_tool_name(),
            Meta::SearchTools,
            api,
        ));
        out.extend(self.toolbox.own_definitions(api));
        out
    }

    /// Every tool in `search`'s API shape for the provider to search: the
    /// always-loaded ones as usual, every other with `defer_loading: true`,
    /// then the provider's tool search tool (and the toolbox's own). The
    /// provider loads what its search finds; the model's calls come back to
    /// [`call`](Self::call) as any other.
    pub async fn native_definitions(&self, search: NativeSearch) -> Vec<ModelTool> {
        let api = search.api();
        let mut out: Vec<ModelTool> = self
            .toolbox
            .tools()
            .await
            .into_iter()
            .map(|t| {
                let always = self.is_always(t.name());
                let def = ModelTool::new(t, api);
                if always { def } else { def.deferred() }
            })
            .collect();
        out.push(ModelTool::native(search));
        out.extend(self.toolbox.own_definitions(api));
        out
    }

    /// Calls the tool the model named: `search_tools` is answered here (and
    /// loads its hits), everything else goes to [`Toolbox::call`] (and a
    /// tool of the toolbox counts as used).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
        if self.toolbox.get(name).is_none() && *self.search_tool_name() == *name {
            return self.search(name, &arguments).await;
        }
        let out = self.toolbox.call(name, arguments).await;
        if let Some(t) = self.toolbox.get(name) {
            self.load([t]);
        }
        out
    }

    /// The names of the loaded tools, least recently used first.
    pub fn loaded_names(&self) -> Vec<String> {
        self.lock().iter().map(|(n, _)| n.to_string()).collect()
    }

    fn is_always(&self, name: &str) -> bool {
        self.options.always.iter().any(|g| g.matches(name))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(Arc<str>, usize)>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `tools` used, the last most recently, and unloads the least
    /// recently used past the bounds (never the last one marked). An
    /// always-loaded tool is not in the set.
    fn load(&self, tools: impl IntoIterator<Item = crate::McpTool>) {
        let mut loaded = self.lock();
        // The always-loaded tools are offered anyway: they take no room.
        for t in tools.into_iter().filter(|t| !self.is_always(t.name())) {
            let name: Arc<str> = Arc::from(t.name());
            let tokens = ModelTool::new(t, ModelApi::Anthropic).estimated_tokens();
            loaded.retain(|(n, _)| *n != name);
            loaded.push_back((name, tokens));
        }
        let total = |l: &VecDeque<(Arc<str>, usize)>| l.iter().map(|(_, t)| t).sum::<usize>();
        while loaded.len() > 1
            && (loaded.len() > self.options.max_loaded
                || total(&loaded) > self.options.max_loaded_tokens)
        {
            loaded.pop_front();
        }
    }

    /// `search_tools`: the best matches, loaded, their definitions as text.
    async fn search(&self, name: &str, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let invalid = |message: &str| ToolError::InvalidArguments {
            tool: name.to_owned(),
            message: message.to_owned(),
        };
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty())
            .ok_or_else(|| invalid("`query` (what you want to do, in words) is required"))?;
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n >= 1)
                .ok_or_else(|| invalid("`limit` must be a whole number, at least 1"))?,
        }
        .min(MAX_SEARCH_LIMIT);
        let hits = self.toolbox.search(query, limit).await;
        if hits.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No tool matches {query:?}. Search again with other words."
            )));
        }
        let definitions: Vec<Value> = hits
            .iter()
            .map(|h| {
                let mut d = serde_json::Map::new();
                d.insert("name".into(), Value::from(h.name.as_str()));
                if let Some(desc) = h.tool.description() {
                    d.insert("description".into(), Value::from(desc));
                }
                d.insert(
                    "parameters".into(),
                    crate::tool::schema_value(h.tool.input_schema()),
                );
                Value::Object(d)
            })
            .collect();
        // The best match is the most recently used.
        self.load(hits.iter().rev().map(|h| h.tool.clone()));
        let text = format!(
            "Loaded {} tool{} for {query:?}; you can call {} from your next turn on:\n{}",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" },
            if hits.len() == 1 { "it" } else { "them" },
            serde_json::to_string(&definitions).unwrap_or_default()
        );
        Ok(ToolOutput::text(text))
    }
}
