//! Tools as model APIs take them: the OpenAI and Anthropic tool shapes.

use std::sync::Arc;

use mcp_proto::RawJson;
use serde_json::Value;

use crate::meta::Meta;
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
}

/// What a [`ModelTool`] writes.
#[derive(Debug, Clone)]
enum Entry {
    /// A server's tool.
    Mcp(McpTool),
    /// One of the toolbox's own tools, under the name it got.
    Meta(Arc<str>, Meta),
}

impl ModelTool {
    /// `tool` in `api`'s shape.
    pub fn new(tool: McpTool, api: ModelApi) -> Self {
        ModelTool {
            entry: Entry::Mcp(tool),
            api,
        }
    }

    /// One of the toolbox's own tools (`read_result`, `search_tools`).
    pub(crate) fn meta(name: Arc<str>, meta: Meta, api: ModelApi) -> Self {
        ModelTool {
            entry: Entry::Meta(name, meta),
            api,
        }
    }

    /// The name the model calls it by.
    pub fn name(&self) -> &str {
        match &self.entry {
            Entry::Mcp(t) => Tool::name(t),
            Entry::Meta(name, _) => name,
        }
    }

    /// The server's tool it is, or `None` for one of the toolbox's own
    /// tools (`read_result` for result budgets, `search_tools` for
    /// deferred loading), which [`Toolbox::call`](crate::Toolbox::call)
    /// answers itself.
    pub fn mcp_tool(&self) -> Option<&McpTool> {
        match &self.entry {
            Entry::Mcp(t) => Some(t),
            Entry::Meta(..) => None,
        }
    }

    /// The API whose shape it is written in.
    pub fn api(&self) -> ModelApi {
        self.api
    }

    /// As a `serde_json::Value` (decodes the schema: prefer serializing
    /// the `ModelTool` itself).
    pub fn to_value(&self) -> Value {
        let (name, description, schema) = self.parts();
        let mut f = serde_json::Map::new();
        f.insert("name".into(), Value::from(name));
        if let Some(d) = description {
            f.insert("description".into(), Value::from(d));
        }
        let schema = schema_value(schema);
        match self.api {
            ModelApi::OpenAiChat => {
                f.insert("parameters".into(), schema);
                serde_json::json!({"type": "function", "function": Value::Object(f)})
            }
            ModelApi::Anthropic => {
                f.insert("input_schema".into(), schema);
                Value::Object(f)
            }
        }
    }

    /// Name, description and input schema.
    fn parts(&self) -> (&str, Option<&str>, &RawJson) {
        match &self.entry {
            Entry::Mcp(t) => (Tool::name(t), Tool::description(t), Tool::input_schema(t)),
            Entry::Meta(name, m) => (name, Some(m.description()), m.schema()),
        }
    }
}

impl serde::Serialize for ModelTool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (name, description, schema) = self.parts();
        match self.api {
            ModelApi::OpenAiChat => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", "function")?;
                m.serialize_entry(
                    "function",
                    &Definition {
                        name,
                        description,
                        schema,
                        schema_key: "parameters",
                    },
                )?;
                m.end()
            }
            ModelApi::Anthropic => Definition {
                name,
                description,
                schema,
                schema_key: "input_schema",
            }
            .serialize(s),
        }
    }
}

/// `{"name", "description", <schema_key>}` with the schema verbatim.
struct Definition<'a> {
    name: &'a str,
    description: Option<&'a str>,
    schema: &'a RawJson,
    schema_key: &'static str,
}

impl serde::Serialize for Definition<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2 + usize::from(self.description.is_some())))?;
        m.serialize_entry("name", self.name)?;
        if let Some(d) = self.description {
            m.serialize_entry("description", d)?;
        }
        m.serialize_entry(self.schema_key, self.schema)?;
        m.end()
    }
}
