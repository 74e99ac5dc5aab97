//! MCP tools as [rig](https://docs.rs/rig-core) tools (feature `rig`).
//!
//! [`to_rig`] turns an [`McpTool`] into a rig
//! [`DynamicTool`]: the same name, description
//! and input schema, and a callback that calls through the bridge (so a
//! toolbox tool keeps its re-listing and retry). The model reads the folded
//! text ([`fold_result`](crate::fold_result)). Errors keep their owner in
//! rig's terms:
//!
//! | [`ToolError`] | rig [`ToolErrorKind`](rig_core::tool::ToolErrorKind) | the model sees |
//! |---|---|---|
//! | `InvalidArguments` | `InvalidArgs` | what is wrong with the arguments |
//! | `ToolFailed` (`isError`) | `Other` | the server's explanation |
//! | `NotFound` | `NotFound` | that the tool does not exist |
//! | `InvalidOutput` | `Provider` | the error |
//! | `Fatal` (timeout / cancelled / closed or transport / other) | `Timeout` / `Cancelled` / `Network` / `Provider` | the error; the [`ToolError`] is kept as the source |
//!
//! rig-core 0.44 needs Rust 1.95 (newer rig-core releases need newer Rust).

use mcp_client::ClientError;
use rig_core::completion::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput as RigOutput};

use crate::{McpTool, Tool, ToolError, Toolbox};

/// An MCP tool as a rig tool.
pub fn to_rig(tool: McpTool) -> DynamicTool {
    // A toolbox's names are never empty; a bare `McpTool` of a broken server
    // might be, and rig rejects empty names.
    let name = match tool.name() {
        "" => "_",
        n => n,
    };
    let name = match ToolName::new(name) {
        Ok(n) => n,
        Err(_) => unreachable!("the name is not empty"),
    };
    let description = tool.description().unwrap_or_default().to_owned();
    let parameters = crate::tool::schema_value(tool.input_schema());
    DynamicTool::new(name, description, parameters, move |arguments| {
        let tool = tool.clone();
        Box::pin(async move {
            tool.call(arguments)
                .await
                .map(|out| RigOutput::text(out.text))
                .map_err(to_rig_error)
        })
    })
}

/// Every tool of a toolbox (after re-listing changed servers) as rig tools.
pub async fn rig_tools(toolbox: &Toolbox) -> Vec<DynamicTool> {
    toolbox.tools().await.into_iter().map(to_rig).collect()
}

/// A [`ToolError`] as rig's error, with the same owner.
pub fn to_rig_error(error: ToolError) -> ToolExecutionError {
    let message = error.message_for_model();
    let rig = match &error {
        ToolError::InvalidArguments { .. } => ToolExecutionError::invalid_args(message),
        ToolError::ToolFailed { .. } => ToolExecutionError::other(message),
        ToolError::NotFound { .. } => ToolExecutionError::not_found(message),
        ToolError::Fatal { source, .. } => match source {
            ClientError::Timeout { .. } => ToolExecutionError::timeout(message),
            ClientError::Closed(_) | ClientError::Transport(_) => {
                ToolExecutionError::network(message)
            }
            _ => ToolExecutionError::provider(message),
        },
        _ => ToolExecutionError::provider(message),
    };
    rig.with_source(error)
}
