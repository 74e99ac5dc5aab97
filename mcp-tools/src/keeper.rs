//! [`Keeper`]: whoever keeps a toolbox's servers running.

use crate::error::ToolError;
use crate::tool::McpTool;

/// Whoever keeps a [`Toolbox`](crate::Toolbox)'s servers running: a host
/// that starts, restarts and stops them and gives the toolbox each change
/// ([`Toolbox::set_servers`](crate::Toolbox::set_servers)). The toolbox asks
/// it why a name has no tool, and shows it the calls that failed for good,
/// so that every path to a tool (the toolbox's [`call`](crate::Toolbox::call),
/// a [`Deferred`](crate::Deferred) conversation, an [`McpTool`] handed out)
/// tells the model the same thing. Set with
/// [`ToolboxBuilder::keeper`](crate::ToolboxBuilder::keeper).
///
/// Both are called on a call's error path only, never on a successful call.
/// They run inside the call: keep them short and never block.
pub trait Keeper: Send + Sync + std::fmt::Debug {
    /// The error for a call to `name`, a name no tool of the toolbox has
    /// now: say, [`ToolError::Unavailable`] while its server restarts, or
    /// [`ToolError::Refused`] for a tool held back until the user approves
    /// it. `None` (the default) leaves [`ToolError::NotFound`].
    fn missing(&self, name: &str) -> Option<ToolError> {
        let _ = name;
        None
    }

    /// The error the caller gets when a call to `tool` failed with the
    /// [fatal](ToolError::is_fatal) `error` (the connection closed or
    /// failed, a protocol error, a timeout): say, a host that sees the
    /// connection gone starts the server again and answers
    /// [`ToolError::Unavailable`], which the model can act on. The default
    /// returns `error` as it is.
    fn failed(&self, tool: &McpTool, error: ToolError) -> ToolError {
        let _ = tool;
        error
    }
}
