//! Multi round-trip requests (2026-07-28): `InputRequiredResult` and its answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{JsonObject, ResultType};

/// A result asking the client for more input before the request can complete.
///
/// The client answers every entry of `input_requests` and retries the
/// original request (with a new id) carrying `inputResponses` and the exact
/// `requestState`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Always `"input_required"`.
    pub result_type: ResultType,
    /// Server-assigned key → request (`elicitation/create`, `sampling/createMessage`, `roots/list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque server state to echo back verbatim on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// One request inside [`InputRequiredResult::input_requests`]: a method and raw params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's params, raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Box<RawValue>>,
}

/// The client's answers: the same keys as the `inputRequests`, each a result object.
pub type InputResponses = BTreeMap<String, Value>;
