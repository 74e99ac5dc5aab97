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
//! or gives its output once it ended; [`Toolbox::task_result`] waits for
//! it instead. Both follow the ticket the one way the client has
//! ([`Client::resume_task`](mcp_client::Client::resume_task), then
//! [`TaskHandle::result`](mcp_client::TaskHandle::result)). A tool the
//! server runs at once gives its output straight away ([`ToolTask::Done`]).
//!
//! A host that must remember what it started across its own restarts
//! records the ticket (mcp-host's `Host::start_task` does, in its ticket
//! store); this layer hands it to the caller and keeps nothing.

use mcp_client::{ClientError, TaskCall, TaskHandle, TaskOptions, TaskTicket};
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
    /// output if the server ran it at once. The arguments are checked and
    /// the [policy](crate::ToolPolicy) asked as for [`call`](Self::call);
    /// `options` set the task's ttl and the caller's deadline (the ticket
    /// carries both). A tool that [may not run as a
    /// task](Self::may_run_as_task) is [called](Self::call) and its output
    /// returned.
    pub async fn start(
        &self,
        arguments: Value,
        options: TaskOptions,
    ) -> Result<ToolTask, ToolError> {
        if !self.may_run_as_task() {
            return self.call(arguments).await.map(ToolTask::Done);
        }
        let arguments = self.checked_arguments(&arguments)?;
        self.authorize(&arguments).await?;
        let call = self
            .client()
            .call_tool_as_task(self.wire_name(), arguments, options)
            .await
            .map_err(|e| self.fatal_error(e))?;
        match call {
            TaskCall::Started(handle) => Ok(ToolTask::Started(
                handle.ticket(self.server().unwrap_or_default()),
            )),
            TaskCall::Done(result) => output(&self.definition().name, result).map(ToolTask::Done),
            other => Err(self.fatal_error(ClientError::TaskExtension {
                method: format!("tools/call ({other:?})"),
            })),
        }
    }
}

impl Toolbox {
    /// Starts the tool the model knows as `name` as a task and returns at
    /// once (the crate docs' ["Long-running tools"](crate#long-running-tools-tasks));
    /// see [`McpTool::start`].
    pub async fn start(
        &self,
        name: &str,
        arguments: Value,
        options: TaskOptions,
    ) -> Result<ToolTask, ToolError> {
        let tool = self.get(name).ok_or_else(|| self.missing(name))?;
        tool.start(arguments, options).await
    }

    /// Asks where a task [`start`](Self::start)ed (by this toolbox, or one
    /// before a restart with the same server names) stands: one `tasks/get`,
    /// and its result once it ended. A task that is gone (expired, or
    /// unknown to the server) is [`ToolError::Fatal`] with the
    /// [`ClientError::Ticket`] that says why. A task waiting for the user
    /// (`input_required`) stays so between polls: its requests reach the
    /// client's handler only while [`task_result`](Self::task_result)
    /// follows it.
    pub async fn poll(&self, ticket: &TaskTicket) -> Result<TaskPoll, ToolError> {
        let (name, handle) = self.resume(ticket).await?;
        let status = handle.status();
        if !status.is_terminal() {
            return Ok(TaskPoll::Running {
                status,
                message: handle.task().status_message.clone(),
            });
        }
        finish(name, handle).await.map(TaskPoll::Done)
    }

    /// Waits for a task [`start`](Self::start)ed (by this toolbox, or one
    /// before a restart) and gives its output: the task's requests of the
    /// user (`input_required`) reach the client's handler meanwhile, and
    /// the ticket's deadline and the task's expiry bound the wait. A task
    /// that is gone is [`ToolError::Fatal`] as for [`poll`](Self::poll).
    pub async fn task_result(&self, ticket: &TaskTicket) -> Result<ToolOutput, ToolError> {
        let (name, handle) = self.resume(ticket).await?;
        finish(name, handle).await
    }

    /// The task resumed on the ticket's server's client (any of its tools
    /// offered or not), and the name its errors go by.
    async fn resume(&self, ticket: &TaskTicket) -> Result<(String, TaskHandle), ToolError> {
        let server = &ticket.server.name;
        let Some(listing) = self.server_listing(server).await else {
            return Err(ToolError::NotFound {
                name: format!("(a tool of server `{server}`)"),
            });
        };
        let name = format!("{server}: task {}", ticket.task_id);
        match listing.client.resume_task(ticket, TaskOptions::new()).await {
            Ok(handle) => Ok((name, handle)),
            Err(source) => Err(ToolError::Fatal { tool: name, source }),
        }
    }
}

/// The output of a started task (`name`: what its errors call it), once it
/// ends.
async fn finish(name: String, handle: TaskHandle) -> Result<ToolOutput, ToolError> {
    match handle.result().await {
        Ok(result) => output(&name, result),
        Err(source) => Err(ToolError::Fatal { tool: name, source }),
    }
}

/// The output of `tool`'s result, or [`ToolError::ToolFailed`] for `isError`.
fn output(tool: &str, result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let out = ToolOutput::from_result(result);
    if out.result.is_error() {
        return Err(ToolError::ToolFailed {
            tool: tool.to_owned(),
            message: out.text,
            result: Box::new(out.result),
        });
    }
    Ok(out)
}
