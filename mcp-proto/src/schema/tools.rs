//! `tools/list` and `tools/call`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use serde::de::DeserializeOwned;

use super::{ContentBlock, Icon, InputResponses, JsonObject, Page, ResultType, TaskMetadata};
use crate::{RawJson, RawObject};

/// A tool the server offers.
///
/// The schemas are kept as their JSON text ([`RawJson`]): a program hands
/// them on (to a model's tool definitions, verbatim) far more often than it
/// reads them, and a JSON Schema decoded into a `serde_json::Value` costs
/// several times its text (every object a B-tree node of some 600 bytes).
/// Decode one with [`RawJson::decode`] when you read it. `_meta`,
/// `execution` and unknown members are kept as text too ([`RawObject`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Programmatic name, used in `tools/call`.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (an object schema), verbatim;
    /// `{"type":"object"}` when the server sent none.
    pub input_schema: RawJson,
    /// JSON Schema of `structuredContent` (2025-06-18+), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<RawJson>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties such as task support (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<RawObject>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: RawObject,
}

decode_keeping_unknown_raw!(Tool "a tool object" {
    required { name: "name" }
    optional {
        title: "title",
        description: "description",
        output_schema: "outputSchema",
        annotations: "annotations",
        icons: "icons",
        execution: "execution",
        meta: "_meta",
    }
    defaulted { input_schema: "inputSchema" => empty_object_schema() }
    check schemas_are_objects
});

/// `{"type":"object"}`: the input schema of a tool that sent none.
fn empty_object_schema() -> RawJson {
    RawJson::trusted_text(r#"{"type":"object"}"#.to_owned())
}

/// A tool's schemas are JSON objects (as a `serde_json::Map` required
/// before they were kept as text).
fn schemas_are_objects(tool: &Tool) -> Result<(), &'static str> {
    let object = |s: &RawJson| s.as_bytes().trim_ascii_start().first() == Some(&b'{');
    if !object(&tool.input_schema) {
        return Err("invalid type: inputSchema is not a JSON object");
    }
    if tool.output_schema.as_ref().is_some_and(|s| !object(s)) {
        return Err("invalid type: outputSchema is not a JSON object");
    }
    Ok(())
}

impl Tool {
    /// A tool with a name and an input schema (for tests and in-process servers).
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: RawJson::from_value(&input_schema)
                .unwrap_or_else(|_| empty_object_schema()),
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
            extra: RawObject::new(),
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
}

string_enum! {
    /// Whether a tool may or must run as a task (`execution.taskSupport`,
    /// 2025-11-25): read it with [`Tool::task_support`].
    TaskSupport {
        /// `"forbidden"` (also when absent): never as a task.
        Forbidden = "forbidden",
        /// `"optional"`: as a task or as an ordinary call.
        Optional = "optional",
        /// `"required"`: only as a task (an ordinary call is refused with -32601).
        Required = "required",
    }
}

impl Tool {
    /// The tool's `execution.taskSupport`; [`TaskSupport::Forbidden`] when
    /// absent or not a string (the spec's default).
    ///
    /// ```
    /// use mcp_proto::schema::{TaskSupport, Tool};
    /// let tool: Tool = serde_json::from_str(
    ///     r#"{"name": "research", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}"#,
    /// ).unwrap();
    /// assert_eq!(tool.task_support(), TaskSupport::Required);
    /// ```
    pub fn task_support(&self) -> TaskSupport {
        match self
            .execution
            .as_ref()
            .and_then(|e| e.decode::<String>("taskSupport"))
        {
            Some(Ok(s)) => TaskSupport::from(s.as_str()),
            _ => TaskSupport::Forbidden,
        }
    }
}

/// Hints about a tool's behaviour. Untrusted unless the server is.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: RawObject,
}

decode_keeping_unknown_raw!(ToolAnnotations "a tool annotations object" {
    required {}
    optional {
        title: "title",
        read_only_hint: "readOnlyHint",
        destructive_hint: "destructiveHint",
        idempotent_hint: "idempotentHint",
        open_world_hint: "openWorldHint",
    }
});

/// Result of `tools/list`: a [`Page`] of tools.
pub type ListToolsResult = Page<Tool>;

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolParams {
    /// The tool's name.
    pub name: String,
    /// Arguments (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Answers to a previous `InputRequiredResult` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous `InputRequiredResult`'s `requestState`, verbatim (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Run as a task (2025-11-25 tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl CallToolParams {
    /// Calls `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolParams {
            name: name.into(),
            arguments: None,
            meta: None,
            input_responses: None,
            request_state: None,
            task: None,
        }
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Sets the answers and state of a multi round-trip retry (2026-07-28).
    #[must_use]
    pub fn with_input_responses(
        mut self,
        responses: InputResponses,
        request_state: Option<String>,
    ) -> Self {
        self.input_responses = Some(responses);
        self.request_state = request_state;
        self
    }

    /// Asks the server to run the call as a task (2025-11-25 tasks).
    #[must_use]
    pub fn with_task(mut self, task: TaskMetadata) -> Self {
        self.task = Some(task);
        self
    }

    /// Sets the arguments (should be a JSON object).
    #[must_use]
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

/// Result of `tools/call`.
///
/// A tool that failed reports `is_error: true` with an explanation in
/// `content`; that is a result for the model, not a protocol error.
///
/// `content` is decoded (a program reads it: it is what a model is shown);
/// `structuredContent`, `_meta` and unknown members are kept as their JSON
/// text and decoded when read ([`structured`](Self::structured),
/// [`structured_value`](Self::structured_value), [`RawObject::get`]). A
/// `serde_json::Value` costs 10 to 100 times the text it is decoded from
/// (a 15 MiB `structuredContent` of `{}`s took 180 MiB decoded, and only
/// the text was shown); kept as text, a result costs about its size.
///
/// Decoded by hand rather than with `#[serde(flatten)]`, which would buffer
/// the whole result (every content block) before decoding it: this is the
/// hot path of every tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Unstructured content. Servers may omit it on a structured-only result.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured result: any JSON value (2025-06-18+), kept as its text;
    /// decode it with [`structured`](Self::structured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<RawJson>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: RawObject,
}

impl CallToolResult {
    /// A successful result with these content blocks (for tests and in-process servers).
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            result_type: None,
            content,
            structured_content: None,
            is_error: None,
            meta: None,
            extra: RawObject::new(),
        }
    }

    /// Sets `structuredContent` (for tests and in-process servers).
    #[must_use]
    pub fn with_structured(mut self, value: RawJson) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// `structuredContent` decoded as `T`; `None` when the result has none.
    ///
    /// ```
    /// use mcp_proto::schema::CallToolResult;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Weather { temp: f64 }
    ///
    /// let r = CallToolResult::from_json(r#"{"content":[],"structuredContent":{"temp":21.5}}"#)?;
    /// let w: Weather = r.structured().expect("structured content")?;
    /// assert_eq!(w.temp, 21.5);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn structured<T: DeserializeOwned>(&self) -> Option<serde_json::Result<T>> {
        self.structured_content.as_ref().map(RawJson::decode)
    }

    /// `structuredContent` decoded as a `serde_json::Value` (which costs
    /// many times the text: prefer [`structured`](Self::structured) into a
    /// type of your own, or the text itself, `structured_content`).
    pub fn structured_value(&self) -> Option<serde_json::Result<Value>> {
        self.structured()
    }

    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// Marks the result as a tool failure (`isError: true`).
    #[must_use]
    pub fn with_error(mut self) -> Self {
        self.is_error = Some(true);
        self
    }

    /// Whether the tool reported failure.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// Decodes a result from its JSON text: the same value (or error) as
    /// `serde_json::from_str`, faster for a result made only of text blocks
    /// (read in one validating pass without `serde_json`'s visitors; any
    /// other result goes through `serde_json`).
    ///
    /// ```
    /// use mcp_proto::schema::CallToolResult;
    /// let r = CallToolResult::from_json(r#"{"content":[{"type":"text","text":"hi"}]}"#)?;
    /// assert_eq!(r, CallToolResult::text("hi"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        match super::tool_result_fast::call_tool_result(text) {
            Some(r) => Ok(r),
            None => serde_json::from_str(text),
        }
    }

    /// Like [`from_json`](Self::from_json), from a raw value it may take
    /// the buffer of: a received result's largest text block (one without
    /// escapes) becomes that buffer, moved to its front, instead of a copy
    /// (when the buffer is not much larger than the text: the usual
    /// one-block result). The same value or error as `from_json`.
    ///
    /// ```
    /// use mcp_proto::{RawJson, schema::CallToolResult};
    /// let raw = RawJson::from_string(r#"{"content":[{"type":"text","text":"hi"}]}"#.into())?;
    /// assert_eq!(CallToolResult::from_raw(raw)?, CallToolResult::text("hi"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[inline]
    pub fn from_raw(raw: crate::RawJson) -> serde_json::Result<Self> {
        match super::tool_result_fast::call_tool_result_owned(raw) {
            Ok(r) => Ok(r),
            Err(raw) => Self::from_raw_serde(&raw),
        }
    }

    /// What the fast path does not read: out of line, so that the
    /// derived decoder is not inlined into every caller of
    /// [`from_raw`](Self::from_raw) beside the code each answer runs.
    #[cold]
    #[inline(never)]
    fn from_raw_serde(raw: &crate::RawJson) -> serde_json::Result<Self> {
        serde_json::from_str(raw.as_str())
    }
}

impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CallToolResult;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a CallToolResult object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CallToolResult, A::Error> {
                let mut r = CallToolResult::new(Vec::new());
                while let Some(key) = map.next_key::<super::content::MaybeBorrowed<'de>>()? {
                    match key.as_str() {
                        "content" => {
                            r.content = map
                                .next_value::<Option<Vec<ContentBlock>>>()?
                                .unwrap_or_default()
                        }
                        "structuredContent" => r.structured_content = map.next_value()?,
                        "isError" => r.is_error = map.next_value()?,
                        "_meta" => r.meta = map.next_value()?,
                        "resultType" => r.result_type = map.next_value()?,
                        _ => r.extra.push_next(key.as_str(), &mut map)?,
                    }
                }
                r.extra.shrink();
                Ok(r)
            }
        }
        d.deserialize_map(V)
    }
}
