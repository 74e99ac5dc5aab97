//! `sampling/createMessage`: the server asks the client's model for a completion.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentBlock, JsonObject, Role, TaskMetadata, Tool};

string_enum! {
    /// Which servers' context to include in a sampling prompt (soft-deprecated in 2025-11-25).
    IncludeContext {
        /// `"none"`.
        None = "none",
        /// `"thisServer"`.
        ThisServer = "thisServer",
        /// `"allServers"`.
        AllServers = "allServers",
    }
}

string_enum! {
    /// How the model may use the offered tools (2025-11-25+).
    ToolChoiceMode {
        /// `"auto"`: the model decides.
        Auto = "auto",
        /// `"required"`: the model must use a tool.
        Required = "required",
        /// `"none"`: the model must not use a tool.
        None = "none",
    }
}

string_enum! {
    /// Why sampling stopped. Open set: models report their own reasons.
    StopReason {
        /// `"endTurn"`.
        EndTurn = "endTurn",
        /// `"stopSequence"`.
        StopSequence = "stopSequence",
        /// `"maxTokens"`.
        MaxTokens = "maxTokens",
        /// `"toolUse"` (2025-11-25+).
        ToolUse = "toolUse",
    }
}

/// The content of a sampling message: one block, or (2025-11-25+) several.
///
/// Sampling allows text, image, audio, `tool_use` and `tool_result` blocks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // `Single` is the common case; boxing it would cost an allocation each
pub enum SamplingContent {
    /// A single block (every revision).
    Single(ContentBlock),
    /// Several blocks (2025-11-25+), e.g. parallel tool uses.
    Multiple(Vec<ContentBlock>),
}

impl SamplingContent {
    /// The blocks, one or many, as a slice.
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(v) => v,
        }
    }
}

impl From<ContentBlock> for SamplingContent {
    fn from(b: ContentBlock) -> Self {
        SamplingContent::Single(b)
    }
}

impl From<Vec<ContentBlock>> for SamplingContent {
    fn from(v: Vec<ContentBlock>) -> Self {
        SamplingContent::Multiple(v)
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Single(b) => b.serialize(s),
            SamplingContent::Multiple(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_array() {
            Vec::<ContentBlock>::deserialize(v)
                .map(SamplingContent::Multiple)
                .map_err(serde::de::Error::custom)
        } else {
            ContentBlock::deserialize(v)
                .map(SamplingContent::Single)
                .map_err(serde::de::Error::custom)
        }
    }
}

/// A message in a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// `_meta` (2025-11-25+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SamplingMessage {
    /// A message from `role`.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> Self {
        SamplingMessage {
            role,
            content: content.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// The server's model preferences. Advisory: the client picks the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A hint for model selection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelHint {
    /// A (sub)string of a model name, e.g. `"sonnet"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// How the model may use tools (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `sampling/createMessage` (sent by the server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt the server asks for; the client may change or omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP servers' context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum tokens to sample.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may use (2025-11-25+; needs the `sampling.tools` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task (2025-11-25 tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageParams {
    /// Params sampling up to `max_tokens` after `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Result of `sampling/createMessage` (sent by the client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Normally `assistant`.
    pub role: Role,
    /// The sampled content: one block, or several (2025-11-25+, e.g. tool uses).
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageResult {
    /// A result from `model`.
    pub fn new(role: Role, content: impl Into<SamplingContent>, model: impl Into<String>) -> Self {
        CreateMessageResult {
            role,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the stop reason.
    #[must_use]
    pub fn with_stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }
}
