//! The [`Tool`] trait and [`McpTool`], its `tools/call` proxy.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use mcp_client::{Client, ClientError};
use mcp_proto::ErrorCode;
use mcp_proto::RawJson;
use mcp_proto::schema::{CallToolResult, ContentBlock, ToolAnnotations};
use serde_json::Value;

use crate::error::ToolError;
use crate::fold::fold_result;
use crate::options::ToolOptions;
use crate::policy::{ApprovalRequest, Decision, Refusal, Verdict};
use crate::schema::Checker;
use crate::toolbox::Inner as ToolboxInner;

/// The future a [`Tool::call`] returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// A tool an agent can offer a model: a name, a description, a JSON Schema
/// for the arguments, and an async call that takes the model's raw JSON
/// arguments.
///
/// Small on purpose, so an agent framework can adopt it (or adapt it to its
/// own trait) and register MCP tools next to local ones. It is
/// dyn-compatible: `Vec<Arc<dyn Tool>>` works.
///
/// ```
/// use mcp_proto::RawJson;
/// use mcp_tools::{Tool, ToolFuture, ToolOutput};
/// use serde_json::{json, Value};
///
/// struct Clock(RawJson);
/// impl Tool for Clock {
///     fn name(&self) -> &str { "clock" }
///     fn description(&self) -> Option<&str> { Some("The time of day.") }
///     fn input_schema(&self) -> &RawJson { &self.0 }
///     fn call(&self, _arguments: Value) -> ToolFuture<'_> {
///         Box::pin(async { Ok(ToolOutput::text("12:00")) })
///     }
/// }
///
/// let schema = RawJson::from_value(&json!({"type": "object"})).unwrap();
/// let tools: Vec<Box<dyn Tool>> = vec![Box::new(Clock(schema))];
/// assert_eq!(mcp_tools::anthropic_tool(tools[0].as_ref())["name"], "clock");
/// ```
pub trait Tool: Send + Sync {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> Option<&str>;
    /// The JSON Schema of the arguments (an object schema), as the model
    /// should see it: its JSON text, handed on verbatim (an MCP tool's is
    /// the server's, as received).
    fn input_schema(&self) -> &RawJson;
    /// The JSON Schema of the structured result, if the tool declares one.
    fn output_schema(&self) -> Option<&RawJson> {
        None
    }
    /// Behaviour hints (read-only, destructive, idempotent, open-world).
    fn annotations(&self) -> Option<&ToolAnnotations> {
        None
    }
    /// Calls the tool with the model's arguments (a JSON object; `null`
    /// means no arguments). Dropping the future cancels the call.
    fn call(&self, arguments: Value) -> ToolFuture<'_>;
}

/// What a successful tool call produced.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The result folded to text for the model ([`fold_result`]).
    pub text: String,
    /// The raw result, with every block and `structuredContent`.
    pub result: CallToolResult,
    /// How `text` was cut to the tool's result budget, if it was (the
    /// [`Toolbox`](crate::Toolbox)'s budgets; `result` is never cut).
    /// Boxed: an output moves through every call's futures, and most are
    /// not cut.
    pub cut: Option<Box<crate::Cut>>,
}

impl ToolOutput {
    /// An output from a raw result, folded with [`fold_result`].
    pub fn from_result(result: CallToolResult) -> Self {
        ToolOutput {
            text: fold_result(&result),
            result,
            cut: None,
        }
    }

    /// An output of one text block (for tools that are not MCP tools).
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        let mut result = empty_result();
        result.content.push(ContentBlock::text(text.clone()));
        ToolOutput {
            text,
            result,
            cut: None,
        }
    }

    /// The structured result decoded as `T`, if the tool returned one
    /// (its text is `result.structured_content`).
    pub fn structured<T: serde::de::DeserializeOwned>(&self) -> Option<serde_json::Result<T>> {
        self.result.structured()
    }
}

/// An empty `CallToolResult` (the type is `#[non_exhaustive]` and has no
/// constructor yet).
fn empty_result() -> CallToolResult {
    match serde_json::from_str("{}") {
        Ok(r) => r,
        // Every field of `CallToolResult` has a serde default.
        Err(e) => unreachable!("an empty CallToolResult always decodes: {e}"),
    }
}

/// An MCP server's tool as a [`Tool`]: calls go out as `tools/call`.
///
/// Cheap to clone. The server's definition is kept verbatim
/// ([`definition`](McpTool::definition)); the input schema the model sees is
/// the server's. A tool handed out by a [`Toolbox`](crate::Toolbox) calls
/// through the toolbox, so it follows re-listing and renames.
#[derive(Clone)]
pub struct McpTool {
    inner: Arc<ToolInner>,
}

struct ToolInner {
    /// The model-facing name.
    name: Arc<str>,
    /// Shared by every tool of the server (one copy per server).
    server: Option<Arc<str>>,
    /// The server's listing this tool is `list[index]` of, shared with
    /// every other tool of that listing (and with whoever listed it): a
    /// catalog of thousands of tools holds each definition once.
    /// Invariant: `index < list.len()` (checked at construction; the list
    /// behind an `Arc` never changes).
    list: Arc<Vec<mcp_proto::schema::Tool>>,
    index: usize,
    client: Client,
    /// Shared by every tool of the server (one copy per server).
    options: Arc<ToolOptions>,
    /// Compiled at the tool's first call, not when it is listed: a catalog
    /// of thousands of tools keeps each schema as text only (a compiled
    /// checker holds it decoded, several times its size), and most tools of
    /// a large catalog are never called. Same for `output`.
    /// Boxed: an unused checker (most tools') costs a pointer, not the
    /// checker's 32 bytes, in every tool of the catalog.
    checker: std::sync::OnceLock<Option<Box<Checker>>>,
    #[cfg(feature = "jsonschema")]
    output: std::sync::OnceLock<Option<Box<jsonschema::Validator>>>,
    /// The policy's verdict (it depends on the definition and the server
    /// only), decided at the first call or listing that needs it.
    verdict: std::sync::OnceLock<Verdict>,
    toolbox: Weak<ToolboxInner>,
}

impl ToolInner {
    fn def(&self) -> &mcp_proto::schema::Tool {
        // In bounds: the invariant on `index`.
        &self.list[self.index]
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.inner.name)
            .field("server", &self.inner.server)
            .field("wire_name", &self.inner.def().name)
            .finish()
    }
}

/// One attempt's failure: a final error, or "the tool set changed" (re-list
/// and retry once).
pub(crate) enum AttemptError {
    Final(ToolError),
    ToolSetChanged(ClientError),
}

impl McpTool {
    /// Wraps a tool `client` listed, with default [`ToolOptions`]. The model
    /// sees the server's name unchanged (see [`Toolbox`](crate::Toolbox) for
    /// prefixes and sanitizing).
    pub fn new(client: Client, definition: mcp_proto::schema::Tool) -> Self {
        Self::with_options(client, definition, ToolOptions::default())
    }

    /// Wraps a tool with options.
    pub fn with_options(
        client: Client,
        definition: mcp_proto::schema::Tool,
        options: ToolOptions,
    ) -> Self {
        let name = Arc::from(definition.name.as_str());
        Self::build(
            client,
            Arc::new(vec![definition]),
            0,
            name,
            None,
            Arc::new(options),
            Weak::new(),
        )
        .unwrap_or_else(|| unreachable!("index 0 of a list of one"))
    }

    /// Lists `client`'s tools and wraps each one a model may be offered:
    /// MCP Apps tools for their app only (`_meta.ui.visibility` without
    /// `"model"`) are left out, as from a [`Toolbox`](crate::Toolbox).
    pub async fn list(client: &Client) -> Result<Vec<McpTool>, ClientError> {
        Ok(client
            .list_all::<mcp_proto::schema::Tool>()
            .await?
            .into_iter()
            .filter(mcp_proto::schema::Tool::is_model_visible)
            .map(|t| McpTool::new(client.clone(), t))
            .collect())
    }

    /// The tool `list[index]`, sharing `list`; `None` if `index` is out of
    /// bounds.
    pub(crate) fn build(
        client: Client,
        list: Arc<Vec<mcp_proto::schema::Tool>>,
        index: usize,
        name: Arc<str>,
        server: Option<Arc<str>>,
        options: Arc<ToolOptions>,
        toolbox: Weak<ToolboxInner>,
    ) -> Option<Self> {
        if index >= list.len() {
            return None;
        }
        Some(McpTool {
            inner: Arc::new(ToolInner {
                name,
                server,
                list,
                index,
                client,
                options,
                checker: std::sync::OnceLock::new(),
                #[cfg(feature = "jsonschema")]
                output: std::sync::OnceLock::new(),
                verdict: std::sync::OnceLock::new(),
                toolbox,
            }),
        })
    }

    /// The server's definition, verbatim (its `name` is the wire name).
    pub fn definition(&self) -> &mcp_proto::schema::Tool {
        self.inner.def()
    }

    /// The name sent in `tools/call` (the server's own name).
    pub fn wire_name(&self) -> &str {
        &self.inner.def().name
    }

    /// The toolbox's name for the server this tool belongs to.
    pub fn server(&self) -> Option<&str> {
        self.inner.server.as_deref()
    }

    /// The client this tool calls through.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// Calls the tool: through its toolbox if it has one (re-listing and
    /// retrying once if the tool set changed), else directly.
    pub async fn call(&self, arguments: Value) -> Result<ToolOutput, ToolError> {
        if let Some(tb) = self.inner.toolbox.upgrade() {
            return ToolboxInner::call(&tb, &self.inner.name, arguments).await;
        }
        let mut approved = false;
        match self.attempt(&arguments, &mut approved).await {
            Ok(out) => Ok(out),
            Err(AttemptError::Final(e)) => Err(e),
            Err(AttemptError::ToolSetChanged(first)) => {
                // The server wants a fresh `tools/list` before it takes calls.
                tracing::debug!(tool = %self.inner.name, "tool set changed; listing tools again and retrying once");
                let fresh = self
                    .inner
                    .client
                    .list_all::<mcp_proto::schema::Tool>()
                    .await
                    .map_err(|e| self.fatal(e))?;
                let not_found = || ToolError::NotFound {
                    name: self.inner.name.to_string(),
                };
                let index = fresh
                    .iter()
                    .position(|t| t.name == self.inner.def().name)
                    .ok_or_else(not_found)?;
                let again = McpTool::build(
                    self.inner.client.clone(),
                    Arc::new(fresh),
                    index,
                    self.inner.name.clone(),
                    self.inner.server.clone(),
                    self.inner.options.clone(),
                    Weak::new(),
                )
                .ok_or_else(not_found)?;
                match again.attempt(&arguments, &mut approved).await {
                    Ok(out) => Ok(out),
                    Err(AttemptError::Final(e)) => Err(e),
                    Err(AttemptError::ToolSetChanged(_)) => Err(self.fatal(first)),
                }
            }
        }
    }

    /// Calls the tool with the arguments as the model API delivered them:
    /// a JSON text (OpenAI's `function.arguments`). Empty or blank text means
    /// no arguments; text that is not JSON is
    /// [`ToolError::InvalidArguments`] (nothing is sent).
    pub async fn call_raw(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let arguments = parse_raw_arguments(&self.inner.name, arguments).map_err(|e| *e)?;
        self.call(arguments).await
    }

    /// The model's arguments as the object to send: `null` is no
    /// arguments; anything but an object, or (with
    /// [`ToolOptions::validate_arguments`]) an object the input schema
    /// refuses, is [`ToolError::InvalidArguments`].
    pub(crate) fn checked_arguments(&self, arguments: &Value) -> Result<Value, ToolError> {
        let invalid = |message: String| ToolError::InvalidArguments {
            tool: self.inner.name.to_string(),
            message,
        };
        let arguments = match arguments {
            Value::Null => Value::Object(serde_json::Map::new()),
            Value::Object(_) => arguments.clone(),
            other => {
                return Err(invalid(format!(
                    "arguments must be a JSON object, got {}",
                    json_kind(other)
                )));
            }
        };
        let inner = &self.inner;
        let checker = inner.checker.get_or_init(|| {
            inner
                .options
                .validate_arguments
                .then(|| Box::new(Checker::new(&inner.def().input_schema)))
        });
        if let Some(checker) = checker {
            checker.check(&arguments).map_err(invalid)?;
        }
        Ok(arguments)
    }

    /// What the [policy](ToolOptions::policy) says of this tool (`None`
    /// without one).
    pub fn verdict(&self) -> Option<&Verdict> {
        let policy = self.inner.options.policy.as_ref()?;
        Some(
            self.inner
                .verdict
                .get_or_init(|| policy.decide(self.server(), self.definition())),
        )
    }

    /// Checks a call with `arguments` against the [policy](ToolOptions::policy)
    /// before anything is sent: allowed, approved by the person asked
    /// ([`on_ask`](ToolOptions::on_ask)), or [`ToolError::Refused`].
    /// Every call of this crate goes through it; a caller that sends
    /// `tools/call` itself (a host starting a task, a command line) calls
    /// it first.
    pub async fn authorize(&self, arguments: &Value) -> Result<(), ToolError> {
        self.authorize_once(arguments, &mut false).await
    }

    /// [`authorize`](Self::authorize), asking at most once per call:
    /// `approved` is set once a person approved it, and a retry of the
    /// same call (after the tool set changed) is not asked again.
    pub(crate) async fn authorize_once(
        &self,
        arguments: &Value,
        approved: &mut bool,
    ) -> Result<(), ToolError> {
        let Some(verdict) = self.verdict() else {
            return Ok(());
        };
        let refused = |why| ToolError::Refused {
            tool: self.inner.name.to_string(),
            server: self.server().map(str::to_owned),
            why,
        };
        let because = verdict.because.clone();
        match verdict.decision {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(refused(Refusal::Denied { because })),
            Decision::Ask if *approved => Ok(()),
            Decision::Ask => {
                let Some(ask) = &self.inner.options.on_ask else {
                    return Err(refused(Refusal::NoOneToAsk { because }));
                };
                let request = ApprovalRequest {
                    tool: self.inner.name.to_string(),
                    server: self.server().map(str::to_owned),
                    definition: self.definition().clone(),
                    arguments: arguments.clone(),
                    because: because.clone(),
                };
                if ask(request).await {
                    *approved = true;
                    Ok(())
                } else {
                    Err(refused(Refusal::Declined { because }))
                }
            }
        }
    }

    pub(crate) fn fatal_error(&self, source: ClientError) -> ToolError {
        self.fatal(source)
    }

    fn fatal(&self, source: ClientError) -> ToolError {
        ToolError::Fatal {
            tool: self.inner.name.to_string(),
            source,
        }
    }

    /// Checks the arguments, sends `tools/call` once, and sorts the outcome
    /// by owner.
    pub(crate) async fn attempt(
        &self,
        arguments: &Value,
        approved: &mut bool,
    ) -> Result<ToolOutput, AttemptError> {
        let tool: &str = &self.inner.name;
        let invalid = |message: String| {
            AttemptError::Final(ToolError::InvalidArguments {
                tool: tool.to_owned(),
                message,
            })
        };
        let arguments = self
            .checked_arguments(arguments)
            .map_err(AttemptError::Final)?;
        self.authorize_once(&arguments, approved)
            .await
            .map_err(AttemptError::Final)?;
        // Agents' tools may run long: asking for progress lets a server that
        // reports it keep the call alive past the timeout.
        let mut request = self
            .inner
            .client
            .call_tool(&self.inner.def().name, &arguments)
            .task_support(self.inner.def().task_support())
            .progress(true);
        if let Some(f) = &self.inner.options.on_progress {
            let (f, name) = (f.clone(), self.inner.name.clone());
            request = request.on_progress(move |p| f(&name, p));
        }
        if let Some(t) = self.inner.options.timeout {
            request = request.timeout(t);
        }
        // The agent traces this tool's execution already: the MCP
        // attributes go on its span instead of a span of ours nested in it
        // (the OpenTelemetry MCP conventions).
        if let Some(span) = mcp_client::telemetry::current_tool_span() {
            request = request.in_span(span);
        }
        let result: CallToolResult = match request.await {
            Ok(r) => r,
            Err(ClientError::Rpc(e)) if e.is_tool_set_changed() => {
                return Err(AttemptError::ToolSetChanged(ClientError::Rpc(e)));
            }
            Err(ClientError::Rpc(e)) if e.code == ErrorCode::INVALID_PARAMS => {
                // The server rejected the arguments (the spec's protocol
                // error for invalid arguments): the model can fix that.
                return Err(invalid(e.message));
            }
            Err(e) => return Err(AttemptError::Final(self.fatal(e))),
        };
        if result.is_error() {
            let mut message = fold_result(&result);
            if message.trim().is_empty() {
                message = "the tool reported an error without an explanation".into();
            }
            return Err(AttemptError::Final(ToolError::ToolFailed {
                tool: tool.to_owned(),
                message,
                result: Box::new(result),
            }));
        }
        #[cfg(feature = "jsonschema")]
        let output = self.inner.output.get_or_init(|| {
            let def = self.inner.def();
            self.inner
                .options
                .validate_output
                .then(|| {
                    def.output_schema
                        .as_ref()
                        .and_then(crate::schema::output_checker)
                })
                .flatten()
        });
        #[cfg(feature = "jsonschema")]
        if let Some(v) = output {
            let problem = match &result.structured_content {
                None => Some(
                    "the tool declares an output schema but sent no structuredContent".to_owned(),
                ),
                Some(s) => match s.decode::<Value>() {
                    Err(e) => Some(format!("structuredContent does not decode: {e}")),
                    // Decoded for the check only (and dropped after it).
                    Ok(s) => {
                        let errors: Vec<String> = v
                            .iter_errors(&s)
                            .take(crate::schema::MAX_REPORTED_PROBLEMS)
                            .map(|e| {
                                let path = e.instance_path().to_string();
                                format!("{}: {}", if path.is_empty() { "/" } else { &path }, e)
                            })
                            .collect();
                        (!errors.is_empty()).then(|| errors.join("; "))
                    }
                },
            };
            if let Some(message) = problem {
                return Err(AttemptError::Final(ToolError::InvalidOutput {
                    tool: tool.to_owned(),
                    message,
                    result: Box::new(result),
                }));
            }
        }
        Ok(ToolOutput::from_result(result))
    }
}

/// Parses a model's argument text: blank means no arguments.
pub(crate) fn parse_raw_arguments(tool: &str, text: &str) -> Result<Value, Box<ToolError>> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text).map_err(|e| {
        Box::new(ToolError::InvalidArguments {
            tool: tool.to_owned(),
            message: format!("the arguments are not valid JSON ({e})"),
        })
    })
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn description(&self) -> Option<&str> {
        self.inner.def().description.as_deref()
    }

    fn input_schema(&self) -> &RawJson {
        &self.inner.def().input_schema
    }

    fn output_schema(&self) -> Option<&RawJson> {
        self.inner.def().output_schema.as_ref()
    }

    fn annotations(&self) -> Option<&ToolAnnotations> {
        self.inner.def().annotations.as_ref()
    }

    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        Box::pin(McpTool::call(self, arguments))
    }
}

/// A schema's text as a `Value` (an object schema accepting anything if it
/// does not decode, which a schema received in a message always does).
pub(crate) fn schema_value(schema: &RawJson) -> Value {
    schema
        .decode()
        .unwrap_or_else(|_| Value::Object(serde_json::Map::new()))
}
