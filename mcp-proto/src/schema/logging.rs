//! `logging/setLevel` (legacy era; 2026-07-28 sets the level per request in `_meta`).

use serde::{Deserialize, Serialize};

use super::{JsonObject, LoggingLevel};

/// Params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetLevelParams {
    /// The minimum level the server should send.
    pub level: LoggingLevel,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SetLevelParams {
    /// Sets the level to `level`.
    pub fn new(level: LoggingLevel) -> Self {
        SetLevelParams { level, meta: None }
    }
}
