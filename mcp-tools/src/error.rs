//! Errors of a tool call, split by who can fix them.

use mcp_client::ClientError;
use mcp_proto::schema::CallToolResult;

/// Why a tool call did not produce a result for the model.
///
/// Errors have owners. The model owns [`InvalidArguments`](ToolError::InvalidArguments),
/// [`ToolFailed`](ToolError::ToolFailed), [`NotFound`](ToolError::NotFound),
/// [`Unavailable`](ToolError::Unavailable) and [`Refused`](ToolError::Refused):
/// show [`message_for_model`](ToolError::message_for_model) to the model and
/// let it try again (within the agent's retry budget). Everything else is
/// [`is_fatal`](ToolError::is_fatal): the connection, the protocol or the
/// server is broken, and retrying with other arguments will not help.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema: caught before
    /// sending, or rejected by the server with `-32602` (invalid params).
    /// Model-correctable.
    #[error(
        "invalid arguments for tool `{tool}`: {message}; fix the arguments and call the tool again"
    )]
    InvalidArguments {
        /// The tool's name as the model knows it.
        tool: String,
        /// What is wrong, with JSON-pointer paths.
        message: String,
    },
    /// The tool ran and reported failure (`isError: true`). `message` is the
    /// server's explanation (the result folded to text). Model-correctable.
    #[error("tool `{tool}` failed: {message}")]
    ToolFailed {
        /// The tool's name as the model knows it.
        tool: String,
        /// The server's explanation.
        message: String,
        /// The raw result.
        result: Box<CallToolResult>,
    },
    /// No tool has this name (the model made it up, or the server removed it).
    /// Model-correctable.
    #[error("there is no tool named `{name}`; call one of the tools you were given")]
    NotFound {
        /// The name the model used.
        name: String,
    },
    /// The tool's server is not running right now: it is starting,
    /// restarting after it exited, failed to start and waits for its next
    /// attempt, or was disabled. Nothing was sent (or the server went away
    /// during the call). Model-correctable: the model can use another tool
    /// or try again later.
    #[error(
        "tool `{tool}` is unavailable right now: its server `{server}` {reason}; try again later or use another tool"
    )]
    Unavailable {
        /// The tool's name as the model knows it.
        tool: String,
        /// The server's name.
        server: String,
        /// What the server is doing, e.g. "is restarting after it exited
        /// (server was killed by signal 9); next attempt in 2s".
        reason: String,
    },
    /// The call was refused before anything was sent: the
    /// [tool policy](crate::ToolPolicy) denies it, a person asked did not
    /// approve it (or there was no one to ask), or the tool is not as the
    /// user approved it. Model-correctable: the model should not call it
    /// again, but can go on without it.
    #[error("the call to tool `{tool}` was refused: {why}; do not call it again")]
    Refused {
        /// The tool's name as the model knows it.
        tool: String,
        /// Its server's name, if it has one.
        server: Option<String>,
        /// Why.
        why: crate::Refusal,
    },
    /// The server's `structuredContent` does not match the tool's own
    /// `outputSchema`. The server is at fault. Fatal.
    #[error(
        "tool `{tool}` returned structured content that does not match its output schema: {message}; report this to the server's maintainers"
    )]
    InvalidOutput {
        /// The tool's name as the model knows it.
        tool: String,
        /// What is wrong.
        message: String,
        /// The raw result.
        result: Box<CallToolResult>,
    },
    /// An app (an MCP Apps UI) asked for a tool its server does not let
    /// apps call: its `_meta.ui.visibility` leaves out `"app"`
    /// ([`Toolbox::call_from_app`](crate::Toolbox::call_from_app)). Nothing
    /// was sent. Not the model's: the host answers the app with it.
    #[error(
        "tool `{tool}` of server `{server}` is not for apps (its _meta.ui.visibility leaves out \"app\"); only the model may call it"
    )]
    NotForApp {
        /// The server's name in the toolbox.
        server: String,
        /// The tool's own name.
        tool: String,
    },
    /// The call failed below the tool: protocol error, transport failure,
    /// timeout, cancellation, closed connection. The cause is the
    /// [`source`](std::error::Error::source). Fatal.
    #[error("calling tool `{tool}` failed (the model cannot fix this)")]
    Fatal {
        /// The tool's name as the model knows it.
        tool: String,
        /// The client's error.
        source: ClientError,
    },
}

impl ToolError {
    /// Whether the model can fix this by calling again with other arguments
    /// or another tool.
    pub fn is_model_correctable(&self) -> bool {
        matches!(
            self,
            ToolError::InvalidArguments { .. }
                | ToolError::ToolFailed { .. }
                | ToolError::NotFound { .. }
                | ToolError::Unavailable { .. }
                | ToolError::Refused { .. }
        )
    }

    /// Whether the agent run should stop (or reconnect): the opposite of
    /// [`is_model_correctable`](ToolError::is_model_correctable).
    pub fn is_fatal(&self) -> bool {
        !self.is_model_correctable()
    }

    /// The text to hand the model as the tool's (failed) result. For
    /// [`ToolFailed`](ToolError::ToolFailed) it is the server's explanation
    /// verbatim; for the others, the error and each of its causes
    /// ([`mcp_proto::error::chain`]): `calling tool `echo` failed (the model
    /// cannot fix this): connection closed: server exited with status 1`.
    pub fn message_for_model(&self) -> String {
        match self {
            ToolError::ToolFailed { message, .. } => message.clone(),
            other => mcp_proto::error::chain(other).to_string(),
        }
    }

    /// The client error behind a [`Fatal`](ToolError::Fatal) error.
    pub fn client_error(&self) -> Option<&ClientError> {
        match self {
            ToolError::Fatal { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The raw result, for [`ToolFailed`](ToolError::ToolFailed) and
    /// [`InvalidOutput`](ToolError::InvalidOutput).
    pub fn result(&self) -> Option<&CallToolResult> {
        match self {
            ToolError::ToolFailed { result, .. } | ToolError::InvalidOutput { result, .. } => {
                Some(result)
            }
            _ => None,
        }
    }
}

/// Why a [`Toolbox`](crate::Toolbox) could not be built or refreshed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ToolboxError {
    /// Listing a server's tools failed.
    #[error("listing the tools of server `{server}` failed")]
    List {
        /// The server's name in the toolbox.
        server: String,
        /// The client's error.
        source: ClientError,
    },
    /// Two servers were added under the same name.
    #[error("two servers are named `{0}`; give each server a unique name")]
    DuplicateServer(String),
}
