//! Multi round-trip requests (2026-07-28): `InputRequiredResult` and its answers.

use std::collections::BTreeMap;

use crate::RawJson;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CreateMessageResult, ElicitResult, JsonObject, ListRootsResult, ResultType};

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
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Server-assigned key → request, as in [`InputRequiredResult::input_requests`].
pub type InputRequests = BTreeMap<String, InputRequest>;

/// One request inside [`InputRequiredResult::input_requests`]: a method and raw params.
///
/// [`InputRequest::typed`] decodes it into a [`ServerRequest`](super::ServerRequest).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's params, raw.
    pub params: Option<RawJson>,
    /// Unknown members, kept.
    pub extra: JsonObject,
}

impl InputRequest {
    /// A request for `method` with typed `params`.
    pub fn new<P: Serialize>(method: impl Into<String>, params: &P) -> serde_json::Result<Self> {
        Ok(InputRequest {
            method: method.into(),
            params: Some(RawJson::from_value(params)?),
            extra: JsonObject::new(),
        })
    }

    /// Decodes the params for the method. An unknown method gives
    /// [`ServerRequest::Unknown`](super::ServerRequest::Unknown); known
    /// methods with bad params give the decode error.
    pub fn typed(&self) -> serde_json::Result<super::ServerRequest> {
        super::ServerRequest::from_parts(&self.method, self.params.as_ref())
    }
}

impl Serialize for InputRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("method", &self.method)?;
        if let Some(p) = &self.params {
            m.serialize_entry("params", p)?;
        }
        for (k, v) in &self.extra {
            if k != "method" && k != "params" {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut obj = JsonObject::deserialize(d)?;
        let method = match obj.remove("method") {
            Some(Value::String(m)) => m,
            Some(_) => return Err(D::Error::custom("`method` is not a string")),
            None => return Err(D::Error::missing_field("method")),
        };
        let params = match obj.remove("params") {
            None => None,
            Some(v) => Some(RawJson::from_value(&v).map_err(D::Error::custom)?),
        };
        Ok(InputRequest {
            method,
            params,
            extra: obj,
        })
    }
}

/// The client's answers: the same keys as the `inputRequests`, each a result object.
///
/// Build each value with `serde_json::to_value` of an [`InputResponse`] (or
/// of the result type directly).
pub type InputResponses = BTreeMap<String, Value>;

/// One answer in [`InputResponses`], typed.
///
/// Decoding looks at the shape: `action` → elicitation, `roots` → roots,
/// `model` → sampling; anything else is [`InputResponse::Unknown`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // short-lived values users match on; boxing would only add noise
pub enum InputResponse {
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Something else, kept as JSON.
    Unknown(Value),
}

impl InputResponse {
    /// The JSON value to put in [`InputResponses`].
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl Serialize for InputResponse {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InputResponse::Elicit(r) => r.serialize(s),
            InputResponse::CreateMessage(r) => r.serialize(s),
            InputResponse::ListRoots(r) => r.serialize(s),
            InputResponse::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let typed = if v.get("action").is_some() {
            ElicitResult::deserialize(&v)
                .ok()
                .map(InputResponse::Elicit)
        } else if v.get("roots").is_some() {
            ListRootsResult::deserialize(&v)
                .ok()
                .map(InputResponse::ListRoots)
        } else if v.get("model").is_some() {
            CreateMessageResult::deserialize(&v)
                .ok()
                .map(InputResponse::CreateMessage)
        } else {
            None
        };
        Ok(typed.unwrap_or(InputResponse::Unknown(v)))
    }
}

/// What a 2026-07-28 server may answer a request with: the method's result,
/// a request for more input, or (tasks extension) a task handle.
///
/// Decode with [`RequestOutcome::decode`], which reads `resultType` first;
/// an absent `resultType` (earlier revisions) means complete.
#[derive(Debug, Clone)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // decoded once per response, then matched
pub enum RequestOutcome<T> {
    /// `resultType` `"complete"` or absent: the method's result.
    Complete(T),
    /// `"input_required"`: answer the requests and retry.
    InputRequired(InputRequiredResult),
    /// `"task"`: the request runs as a task; poll `tasks/get`.
    Task(super::GetTaskResult),
    /// A `resultType` this crate does not know, with the whole result.
    Unknown {
        /// The `resultType` value.
        result_type: String,
        /// The result.
        result: Value,
    },
}

impl<T: serde::de::DeserializeOwned> RequestOutcome<T> {
    /// Decodes a raw `result` by its `resultType`.
    pub fn decode(result: &str) -> serde_json::Result<Self> {
        #[derive(Deserialize)]
        struct Peek {
            #[serde(rename = "resultType", default)]
            result_type: Option<ResultType>,
        }
        let peek: Peek = serde_json::from_str(result)?;
        Ok(match peek.result_type.unwrap_or_default() {
            ResultType::Complete => RequestOutcome::Complete(serde_json::from_str(result)?),
            ResultType::InputRequired => {
                RequestOutcome::InputRequired(serde_json::from_str(result)?)
            }
            ResultType::Task => RequestOutcome::Task(serde_json::from_str(result)?),
            ResultType::Unknown(s) => RequestOutcome::Unknown {
                result_type: s,
                result: serde_json::from_str(result)?,
            },
        })
    }
}
