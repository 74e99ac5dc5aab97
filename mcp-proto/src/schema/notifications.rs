//! Notifications a client sends or receives in every revision.

use super::JsonObject;
use crate::jsonrpc::RequestId;
use crate::{RawJson, RawObject};
use serde::{Deserialize, Serialize};

/// A progress token: a string or an integer, unique among active requests.
pub type ProgressToken = RequestId;

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable status (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: RawObject,
}

decode_keeping_unknown_raw!(ProgressParams "progress params" {
    required { progress_token: "progressToken", progress: "progress" }
    optional { total: "total", message: "message", meta: "_meta" }
});

impl ProgressParams {
    /// Progress `progress` (of `total`, if known) for `token`.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        ProgressParams {
            progress_token: token,
            progress,
            total,
            message: None,
            meta: None,
            extra: RawObject::new(),
        }
    }
}

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledParams {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: RawObject,
}

decode_keeping_unknown_raw!(CancelledParams "cancelled params" {
    required { request_id: "requestId" }
    optional { reason: "reason", meta: "_meta" }
});

impl CancelledParams {
    /// Cancels `request_id`, optionally saying why.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        CancelledParams {
            request_id,
            reason,
            meta: None,
            extra: RawObject::new(),
        }
    }
}

/// Severity of a log message (RFC 5424 levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LoggingLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Notice.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Alert.
    Alert,
    /// Emergency.
    Emergency,
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LoggingMessageParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Logger name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON, kept as its text (decode it with [`RawJson::decode`];
    /// its `Display` is the text).
    pub data: RawJson,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: RawObject,
}

decode_keeping_unknown_raw!(LoggingMessageParams "log message params" {
    required { level: "level", data: "data" }
    optional { logger: "logger", meta: "_meta" }
});

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceUpdatedParams {
    /// The resource that changed.
    pub uri: String,
    /// `_meta` (2026-07-28: holds the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}
