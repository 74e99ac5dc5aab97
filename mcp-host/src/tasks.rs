//! Tasks the host starts, kept as [`TaskTicket`]s in its
//! [`TicketStore`](crate::TicketStore) so that a host that restarts (or was
//! killed) picks them up again.
//!
//! The host adds the record to the tools layer's one way of starting and
//! following a task, nothing else: [`Host::start_task`] is
//! [`Toolbox::start`](mcp_tools::Toolbox::start) (the policy, the pins, the
//! legacy-task rule, the arguments' check) then records the ticket;
//! [`Host::task_result`] is [`Toolbox::task_result`](mcp_tools::Toolbox::task_result)
//! then forgets the ticket once the outcome is final; [`Host::tasks`] lists
//! the recorded tickets.
//!
//! A ticket whose task is gone (expired, unknown to the server, past its
//! deadline) ends in a typed error, never a wait. Which servers keep a
//! task across a host restart (those that outlive the host: HTTP) is in
//! the [crate docs](crate#which-tasks-survive-a-host-restart).

use std::sync::Arc;

use mcp_client::{ClientError, TaskOptions, TaskTicket};
use mcp_tools::{ToolError, ToolOutput, ToolTask};
use serde_json::Value;

use crate::Host;
use crate::ticket_store::TicketStoreError;

/// Why a host task operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HostTaskError {
    /// The call or the task failed as a tool call does: refused by the
    /// policy or held back by the pins, no such tool, its server not ready
    /// ([`ToolError::Unavailable`]: the ticket is kept, try again once it
    /// is), or the client's error ([`ToolError::Fatal`]: the task's own
    /// outcome, such as cancelled, expired, past its deadline or unknown to
    /// the server, or the connection's).
    #[error("the task's tool call failed")]
    Tool(#[source] ToolError),
    /// The task started, but its ticket could not be recorded: the task
    /// runs, and here is its ticket, but a restart will not know of it.
    #[error("task {} started, but its ticket was not recorded", ticket.task_id)]
    NotRecorded {
        /// The started task's ticket.
        ticket: Box<TaskTicket>,
        /// Why the store failed.
        source: Arc<TicketStoreError>,
    },
    /// The ticket store could not be read.
    #[error("the host's task tickets could not be read")]
    Tickets(#[source] Arc<TicketStoreError>),
}

impl Host {
    /// Starts the tool the model knows as `name` as a task
    /// ([`Toolbox::start`](mcp_tools::Toolbox::start)) and records its
    /// ticket in the host's [ticket store](crate::HostBuilder::tickets), so
    /// that [`tasks`](Self::tasks) lists it (after a restart too, with a
    /// [`FileTicketStore`](crate::FileTicketStore)). A tool that [may not
    /// run as a task](mcp_tools::McpTool::may_run_as_task), or that the
    /// server runs at once, gives [`ToolTask::Done`].
    pub async fn start_task(
        &self,
        name: &str,
        arguments: Value,
        options: TaskOptions,
    ) -> Result<ToolTask, HostTaskError> {
        let started = self
            .toolbox()
            .start(name, arguments, options)
            .await
            .map_err(HostTaskError::Tool)?;
        if let ToolTask::Started(ticket) = &started {
            if let Err(e) = self.tickets().put(ticket.clone()) {
                return Err(HostTaskError::NotRecorded {
                    ticket: Box::new(ticket.clone()),
                    source: Arc::new(e),
                });
            }
        }
        Ok(started)
    }

    /// The tickets of the tasks this host (or the host before a restart,
    /// with a [`FileTicketStore`](crate::FileTicketStore)) started and has
    /// not seen end, without those past their deadline or expiry.
    pub fn tasks(&self) -> Result<Vec<TaskTicket>, HostTaskError> {
        self.tickets()
            .list()
            .map_err(|e| HostTaskError::Tickets(Arc::new(e)))
    }

    /// Waits for a recorded task's output
    /// ([`Toolbox::task_result`](mcp_tools::Toolbox::task_result)), on the
    /// ready server the ticket names (reconnected after a restart). The
    /// ticket is forgotten once the outcome is final (an output, or a task
    /// that is gone); it is kept when the server is not ready or the
    /// connection failed, to try again.
    pub async fn task_result(&self, ticket: &TaskTicket) -> Result<ToolOutput, HostTaskError> {
        let server = &ticket.server.name;
        if self.client(server).is_none() {
            return Err(HostTaskError::Tool(ToolError::Unavailable {
                tool: format!("(a task of server `{server}`)"),
                server: server.clone(),
                reason: "is not ready".into(),
            }));
        }
        let outcome = self.toolbox().task_result(ticket).await;
        let keep = match &outcome {
            Err(ToolError::Unavailable { .. }) => true,
            Err(e) => e
                .client_error()
                .is_some_and(|c| c.is_closed() || matches!(c, ClientError::Transport(_))),
            Ok(_) => false,
        };
        if !keep {
            self.forget_task(ticket);
        }
        outcome.map_err(HostTaskError::Tool)
    }

    /// Drops a ticket from the store (the application took over the task).
    /// A store that cannot be written is logged: the ticket then ends at its
    /// deadline or expiry.
    pub fn forget_task(&self, ticket: &TaskTicket) {
        if let Err(e) = self.tickets().remove(&ticket.server.name, &ticket.task_id) {
            tracing::warn!(task = %ticket.task_id, error = %mcp_proto::error::chain(&e), "could not forget a task ticket");
        }
    }
}
