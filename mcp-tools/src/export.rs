//! Tools as model APIs take them: the OpenAI and Anthropic tool shapes.

use std::sync::Arc;

use mcp_proto::RawJson;
use serde_json::Value;

use crate::meta::Meta;
use crate::tokens::estimate_tokens;
use crate::tool::{McpTool, Tool, schema_value};

/// A tool in the OpenAI Chat Completions function-calling shape:
/// `{"type": "function", "function": {"name", "description", "parameters"}}`,
/// with the input schema verbatim as `parameters`. (The Responses API takes
/// the inner object's members at the top level next to `"type"`.)
pub fn openai_function<T: Tool + ?Sized>(tool: &T) -> Value {
    let mut f = serde_json::Map::new();
    f.insert("name".into(), Value::from(tool.name()));
    if let Some(d) = tool.description() {
        f.insert("description".into(), Value::from(d));
    }
    f.insert("parameters".into(), schema_value(tool.input_schema()));
    serde_json::json!({"type": "function", "function": Value::Object(f)})
}

/// A tool in the Anthropic Messages API shape:
/// `{"name", "description", "input_schema"}`, with the input schema verbatim.
pub fn anthropic_tool<T: Tool + ?Sized>(tool: &T) -> Value {
    let mut f = serde_json::Map::new();
    f.insert("name".into(), Value::from(tool.name()));
    if let Some(d) = tool.description() {
        f.insert("description".into(), Value::from(d));
    }
    f.insert("input_schema".into(), schema_value(tool.input_schema()));
    Value::Object(f)
}

/// Which model API's tool shape a [`ModelTool`] is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelApi {
    /// OpenAI Chat Completions:
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`
    /// (what [`openai_function`] builds as a `Value`).
    OpenAiChat,
    /// Anthropic Messages: `{"name", "description", "input_schema"}` (what
    /// [`anthropic_tool`] builds as a `Value`).
    Anthropic,
    /// OpenAI Responses: `{"type": "function", "name", "description",
    /// "parameters"}` (the Chat Completions members, flat).
    OpenAiResponses,
}

/// A tool as a model API takes it, ready to be serialized into the request
/// ([`Toolbox::openai_definitions`](crate::Toolbox::openai_definitions),
/// [`Toolbox::anthropic_definitions`](crate::Toolbox::anthropic_definitions)).
///
/// Serializing it writes the input schema verbatim, as the server sent it:
/// nothing is decoded. An agent sends every tool's definition on every turn;
/// building them as `serde_json::Value`s ([`openai_function`]) decodes each
/// schema into a tree and encodes it again, some ten times the cost of
/// encoding the schemas once (BENCHMARKS.md, catalogs), where this costs
/// less than that one encoding. Cheap to build and clone (it shares the
/// tool).
///
/// ```
/// # async fn f(toolbox: mcp_tools::Toolbox) -> serde_json::Result<()> {
/// let body = serde_json::json!({
///     "model": "gpt-4.1",
///     "messages": [{"role": "user", "content": "What changed in the repo?"}],
///     "tools": toolbox.openai_definitions().await,
/// });
/// let bytes = serde_json::to_vec(&body)?; // or serde_json::to_writer(socket, ...)
/// # let _ = bytes; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ModelTool {
    entry: Entry,
    api: ModelApi,
    /// `defer_loading: true` (Anthropic, OpenAI Responses).
    deferred: bool,
}

/// What a [`ModelTool`] writes.
#[derive(Debug, Clone)]
enum Entry {
    /// A server's tool.
    Mcp(McpTool),
    /// One of the toolbox's own tools, under the name it got.
    Meta(Arc<str>, Meta),
    /// A provider's own tool (its tool search), written as is.
    Native(NativeSearch),
}

/// A model provider's built-in tool search: written into the tools array as
/// the provider documents it, and run by the provider, not by the toolbox
/// ([`Deferred::native_definitions`](crate::Deferred::native_definitions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NativeSearch {
    /// Anthropic's BM25 tool search tool:
    /// `{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}`
    /// (beta header `advanced-tool-use-2025-11-20`).
    AnthropicBm25,
    /// Anthropic's regex tool search tool:
    /// `{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}`.
    AnthropicRegex,
    /// OpenAI's hosted tool search (Responses API, gpt-5.4 and later):
    /// `{"type": "tool_search"}`.
    OpenAiHosted,
}

impl NativeSearch {
    /// The model API it belongs to.
    pub fn api(self) -> ModelApi {
        match self {
            NativeSearch::AnthropicBm25 | NativeSearch::AnthropicRegex => ModelApi::Anthropic,
            NativeSearch::OpenAiHosted => ModelApi::OpenAiResponses,
        }
    }

    /// Its name in the tools array (`tool_search` for OpenAI's, which has none).
    pub fn name(self) -> &'static str {
        match self {
            NativeSearch::AnthropicBm25 => "tool_search_tool_bm25",
            NativeSearch::AnthropicRegex => "tool_search_tool_regex",
            NativeSearch::OpenAiHosted => "tool_search",
        }
    }

    /// Its entry in the tools array.
    fn json(self) -> &'static str {
        match self {
            NativeSearch::AnthropicBm25 => {
                r#"{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}"#
            }
            NativeSearch::AnthropicRegex => {
                r#"{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}"#
            }
            NativeSearch::OpenAiHosted => r#"{"type":"tool_search"}"#,
        }
    }
}

impl ModelTool {
    /// `tool` in `api`'s shape.
    pub fn new(tool: McpTool, api: ModelApi) -> Self {
        ModelTool {
            entry: Entry::Mcp(tool),
            api,
            deferred: false,
        }
    }

    /// One of the toolbox's own tools (`read_result`, `search_tools`).
    pub(crate) fn meta(name: Arc<str>, meta: Meta, api: ModelApi) -> Self {
        ModelTool {
            entry: Entry::Meta(name, meta),
            api,
            deferred: false,
        }
    }

    /// A provider's tool search.
    pub(crate) fn native(search: NativeSearch) -> Self {
        ModelTool {
            entry: Entry::Native(search),
            api: search.api(),
            deferred: false,
        }
    }

    /// The same, written with `defer_loading: true` (the provider's tool
    /// search finds it; it is not in the model's context until then). Only
    /// Anthropic's and OpenAI Responses' shapes have the member; a Chat
    /// Completions tool is written as before.
    pub(crate) fn deferred(mut self) -> Self {
        self.deferred = true;
        self
    }

    /// Whether it is written with `defer_loading: true`.
    pub fn is_deferred(&self) -> bool {
        self.deferred && self.api != ModelApi::OpenAiChat
    }

    /// The name the model calls it by.
    pub fn name(&self) -> &str {
        match &self.entry {
            Entry::Mcp(t) => Tool::name(t),
            Entry::Meta(name, _) => name,
            Entry::Native(n) => n.name(),
        }
    }

    /// The server's tool it is, or `None` for one of the toolbox's own
    /// tools (`read_result` for result budgets, `search_tools` for deferred
    /// loading: [`Toolbox::call`](crate::Toolbox::call) and
    /// [`Deferred::call`](crate::Deferred::call) answer them) or a
    /// provider's tool search (the provider runs it).
    pub fn mcp_tool(&self) -> Option<&McpTool> {
        match &self.entry {
            Entry::Mcp(t) => Some(t),
            Entry::Meta(..) | Entry::Native(_) => None,
        }
    }

    /// The API whose shape it is written in.
    pub fn api(&self) -> ModelApi {
        self.api
    }

    /// Its definition's estimated tokens: [`estimate_tokens`] of the JSON
    /// it serializes to. What a model API adds around each definition (its
    /// own framing, which differs between APIs and is not published) is not
    /// counted.
    pub fn estimated_tokens(&self) -> usize {
        serde_json::to_string(self).map_or(0, |j| estimate_tokens(&j))
    }

    /// As a `serde_json::Value` (decodes the schema: prefer serializing
    /// the `ModelTool` itself).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Name, description and input schema (`None` for a provider's tool).
    fn parts(&self) -> Option<(&str, Option<&str>, &RawJson)> {
        match &self.entry {
            Entry::Mcp(t) => Some((Tool::name(t), Tool::description(t), Tool::input_schema(t))),
            Entry::Meta(name, m) => Some((name, Some(m.description()), m.schema())),
            Entry::Native(_) => None,
        }
    }
}

/// The tools of `tools` (in order of preference) whose definitions fit in
/// `max_tokens` together, by [`ModelTool::estimated_tokens`]: each is taken
/// if it still fits, so one too large is skipped and smaller ones after it
/// may still come in.
///
/// ```no_run
/// # async fn f(toolbox: mcp_tools::Toolbox) {
/// use mcp_tools::{ModelApi, fit_tools};
/// // The most-used tools first, as many as fit in 2,000 tokens.
/// let always = fit_tools(toolbox.definitions(ModelApi::Anthropic).await, 2_000);
/// # let _ = always; }
/// ```
pub fn fit_tools(tools: impl IntoIterator<Item = ModelTool>, max_tokens: usize) -> Vec<ModelTool> {
    let mut left = max_tokens;
    tools
        .into_iter()
        .filter(|t| {
            let n = t.estimated_tokens();
            let fits = n <= left;
            if fits {
                left -= n;
            }
            fits
        })
        .collect()
}

impl serde::Serialize for ModelTool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some((name, description, schema)) = self.parts() else {
            let Entry::Native(n) = &self.entry else {
                return s.serialize_unit();
            };
            let raw: &serde_json::value::RawValue =
                serde_json::from_str(n.json()).map_err(serde::ser::Error::custom)?;
            return raw.serialize(s);
        };
        let def = |kind, schema_key| Definition {
            kind,
            name,
            description,
            schema,
            schema_key,
            deferred: self.is_deferred(),
        };
        match self.api {
            ModelApi::OpenAiChat => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", "function")?;
                m.serialize_entry("function", &def(None, "parameters"))?;
                m.end()
            }
            ModelApi::OpenAiResponses => def(Some("function"), "parameters").serialize(s),
            ModelApi::Anthropic => def(None, "input_schema").serialize(s),
        }
    }
}

/// `{["type",] "name", "description", <schema_key> [, "defer_loading"]}`
/// with the schema verbatim.
struct Definition<'a> {
    kind: Option<&'static str>,
    name: &'a str,
    description: Option<&'a str>,
    schema: &'a RawJson,
    schema_key: &'static str,
    deferred: bool,
}

impl serde::Serialize for Definition<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let n = 2
            + usize::from(self.kind.is_some())
            + usize::from(self.description.is_some())
            + usize::from(self.deferred);
        let mut m = s.serialize_map(Some(n))?;
        if let Some(kind) = self.kind {
            m.serialize_entry("type", kind)?;
        }
        m.serialize_entry("name", self.name)?;
        if let Some(d) = self.description {
            m.serialize_entry("description", d)?;
        }
        m.serialize_entry(self.schema_key, self.schema)?;
        if self.deferred {
            m.serialize_entry("defer_loading", &true)?;
        }
        m.end()
    }
}
