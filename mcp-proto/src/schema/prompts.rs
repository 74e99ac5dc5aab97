//! `prompts/list` and `prompts/get`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ContentBlock, Icon, InputResponses, JsonObject, Page, ResultType, Role};

/// A prompt template the server offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Prompt {
    /// Programmatic name, used in `prompts/get`.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments the template accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(Prompt "a prompt object" {
    required { name: "name" }
    optional {
        title: "title",
        description: "description",
        arguments: "arguments",
        icons: "icons",
        meta: "_meta",
    }
});

/// One argument of a [`Prompt`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Name.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(PromptArgument "a prompt argument object" {
    required { name: "name" }
    optional { title: "title", description: "description", required: "required" }
});

/// Result of `prompts/list`: a [`Page`] of prompts.
pub type ListPromptsResult = Page<Prompt>;

/// Params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptParams {
    /// The prompt's name.
    pub name: String,
    /// Argument values (strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Answers to a previous `InputRequiredResult` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous `InputRequiredResult`'s `requestState`, verbatim (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl GetPromptParams {
    /// Gets prompt `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        GetPromptParams {
            name: name.into(),
            arguments: None,
            meta: None,
            input_responses: None,
            request_state: None,
        }
    }

    /// Adds one argument value.
    #[must_use]
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), value.into());
        self
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
}

/// Result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptResult {
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    #[serde(default)]
    pub messages: Vec<PromptMessage>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(GetPromptResult "a prompts/get result object" {
    required {}
    optional {
        result_type: "resultType",
        description: "description",
        messages: "messages",
        meta: "_meta",
    }
});

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: one content block.
    pub content: ContentBlock,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(PromptMessage "a prompt message object" {
    required { role: "role", content: "content" }
    optional {}
});
