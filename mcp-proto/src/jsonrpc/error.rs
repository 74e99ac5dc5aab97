//! What can be wrong with a message: [`DecodeError`], [`EnvelopeViolation`].

use std::fmt;

use crate::error::ErrorCode;

/// Which envelope rule a message broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeViolation {
    /// `jsonrpc` missing or not `"2.0"`.
    Version,
    /// A message with `method` and `id: null`.
    NullRequestId,
    /// A response with both `result` and `error`, or neither and no `method`.
    Shape,
    /// A response with a `result` but no `id`.
    MissingId,
    /// The top level is a JSON array (a batch); MCP does not use batches.
    Batch,
}

impl fmt::Display for EnvelopeViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnvelopeViolation::Version => "\"jsonrpc\" must be \"2.0\"",
            EnvelopeViolation::NullRequestId => "a request id must not be null",
            EnvelopeViolation::Shape => {
                "not a request, notification, result or error (check method/result/error members)"
            }
            EnvelopeViolation::MissingId => "a result response has no id",
            EnvelopeViolation::Batch => "JSON-RPC batches are not supported by MCP",
        })
    }
}

/// A message that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON, or JSON of the wrong shape (e.g. `error.code` not an integer).
    #[error("invalid JSON-RPC message: {message}")]
    Json {
        /// serde_json's description, with line and column.
        message: String,
        /// Whether the input ended early (truncated) rather than being malformed.
        eof: bool,
    },
    /// Valid JSON that breaks a JSON-RPC envelope rule.
    #[error("invalid JSON-RPC envelope: {0}")]
    Envelope(EnvelopeViolation),
    /// Arrays and objects nested deeper than `limit` levels
    /// ([`MAX_DEPTH`](super::MAX_DEPTH)).
    #[error("message nests arrays and objects deeper than {limit} levels")]
    TooDeep {
        /// The limit, [`MAX_DEPTH`](super::MAX_DEPTH).
        limit: usize,
    },
}

impl DecodeError {
    /// The JSON-RPC error a request that failed to decode this way is
    /// answered with: [`ErrorCode::PARSE_ERROR`] when its text could not be
    /// read (not JSON, or nested past the limit), [`ErrorCode::INVALID_REQUEST`]
    /// when it is JSON but not a valid request object.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            DecodeError::Json { .. } | DecodeError::TooDeep { .. } => ErrorCode::PARSE_ERROR,
            DecodeError::Envelope(_) => ErrorCode::INVALID_REQUEST,
        }
    }

    pub(super) fn from_json(e: &serde_json::Error) -> Self {
        DecodeError::Json {
            eof: e.is_eof(),
            message: e.to_string(),
        }
    }
}
