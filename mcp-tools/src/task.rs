//! Long-running tools (MCP tasks) for agents.
//!
//! A tool the server runs as a task (2025-11-25, `execution.taskSupport`
//! `required`; 2026-07-28, any call the server answers with a task under
//! the tasks extension) is an ordinary agent tool: [`McpTool::call`] and
//! [`Toolbox::call`] wait for its result, bounded as any call, and its
//! status messages arrive as progress ([`ToolOptions::on_progress`](crate::ToolOptions::on_progress)).
//!
//! An agent that would rather not wait (it polls, or hands the model a
//! handle) starts the tool with [`Toolbox::start`] (or [`McpTool::start`]):
//! that returns at once with a [`TaskTicket`] (serializable: it survives
//! the agent's restart), and [`Toolbox::poll`] says where the task stands,
//! or gives its output once it ended. A tool the server runs at once gives
//! its output straight away ([`ToolTask::Done`]).

use mcp_client::{ClientError, TaskCall, TaskOptions, TaskTicket};
use mcp_proto::Era;
use mcp_proto::schema::{CallToolResult, TaskStatus, TaskSupport};
use serde_json::Value;

use crate::{McpTool, ToolError, ToolOutput, Toolbox};

/// What [`Toolbox::start`] gave.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolTask {
    /// The server runs the call as a task: poll it with [`Toolbox::poll`].
    Started(TaskTicket),
    /// The server ran the call at once (it does not take it as a task).
    Done(ToolOutput),
}

/// Where a started task stands ([`Toolbox::poll`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskPoll {
    /// Still running (`working` or `input_required`).
    Running {
        /// Its status.
        status: TaskStatus,
        /// The server's status message, if any.
        message: Option<String>,
    },
    /// It ended with this output.
    Done(ToolOutput),
}

impl McpTool {
    /// Whether a call of this tool may go as a task on its connection (the
    /// one statement of the rule; the host's task calls follow it too). On
    /// a 2025-11-25 connection not when its `taskSupport` is `forbidden` (or
    /// unsaid): the spec forbids it and servers refuse it, so such a tool is
    /// called plainly. On a 2026-07-28 connection always: tools say nothing
    /// of tasks (the revision's `Tool` has no `execution`) and the server
    /// decides per call (the tasks extension).
    pub fn may_run_as_task(&self) -> bool {
        self.client().era() == Some(Era::Modern)
            || self.definition().task_support() != TaskSupport::Forbidden
    }

    /// Starts the tool as a task and returns at once: its ticket, or the
    /// output if the server ran it at once. The arguments are checked as
    /// for [`call`](Self::call). A tool that [may not run as a
    /// task](Self::may_run_as_task) is [called](Self::call) and its output
    /// returned.
    pub async fn start(&self, arguments: Value) -> Result<ToolTask, ToolError> {
        if !self.may_run_as_task() {
            return self.call(arguments).await.map(ToolTask::Done);
        }
        let arguments = self.checked_arguments(&arguments)?;
        self.authorize(&arguments).await?;
        let call = self
            .client()
            .call_tool_as_task(self.wire_name(), arguments, TaskOptions::new())
            .await
            .map_err(|e| self.fatal_error(e))?;
        match call {
            TaskCall::Started(handle) => Ok(ToolTask::Started(
                handle.ticket(self.server().unwrap_or_default()),
            )),
            TaskCall::Done(result) => self.output(result).map(ToolTask::Done),
            other => Err(self.fatal_error(ClientError::TaskExtension {
                method: format!("tools/call ({other:?})"),
            })),
        }
    }

    /// The output of a result, or [`ToolError::ToolFailed`] for `isError`.
    fn output(&self, result: CallToolResult) -> Result<ToolOutput, ToolError> {
        if result.is_error() {
            let out = ToolOutput::from_result(result);
            return Err(ToolError::ToolFailed {
                tool: self.definition().name.clone(),
                message: out.text,
                result: Box::new(out.result),
            });
        }
        Ok(ToolOutput::from_result(result))
    }
}

impl Toolbox {
    /// Starts the tool the model knows as `name` as a task and returns at
    /// once (the crate docs' ["Long-running tools"](crate#long-running-tools-tasks)).
    pub async fn start(&self, name: &str, arguments: Value) -> Result<ToolTask, ToolError> {
        let tool = self.get(name).ok_or_else(|| self.missing(name))?;
        tool.start(arguments).await
    }

    /// Asks where a task [`start`](Self::start)ed (by this toolbox, or one
    /// before a restart with the same server names) stands: one `tasks/get`,
    /// and `tasks/result` once it ended. A task that is gone (expired, or
    /// unknown to the server) is [`ToolError::Fatal`] with the
    /// [`ClientError::Ticket`] that says why.
    pub async fn poll(&self, ticket: &TaskTicket) -> Result<TaskPoll, ToolError> {
        let Some(tool) = self
            .snapshot()
            .into_iter()
            .find(|t| t.server().unwrap_or_default() == ticket.server.name)
        else {
            return Err(ToolError::NotFound {
                name: format!("(a tool of server `{}`)", ticket.server.name),
            });
        };
        let handle = tool
            .client()
            .resume_task(ticket, TaskOptions::new())
            .await
            .map_err(|e| tool.fatal_error(e))?;
        let status = handle.status();
        if !status.is_terminal() {
            return Ok(TaskPoll::Running {
                status,
                message: handle.task().status_message.clone(),
            });
        }
        let result = handle.result().await.map_err(|e| tool.fatal_error(e))?;
        tool.output(result).map(TaskPoll::Done)
    }
}
