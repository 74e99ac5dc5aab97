//! Tasks the host starts, kept as [`TaskTicket`]s in its store so that a
//! host that restarts (or was killed) picks them up again.
//!
//! [`Host::start_task`] calls a tool as a task and records the task's
//! ticket in the store of the host's [`ResponseCache`](crate::ResponseCache)
//! (a [`FileStore`](crate::FileStore) writes it to its file at once);
//! [`Host::tasks`] lists the recorded tickets, [`Host::task_result`] follows
//! one to its result and forgets it once the outcome is final.
//!
//! Bounds: at most [`DEFAULT_MAX_TICKETS`] tickets per store (beyond it the
//! oldest go); a ticket past its deadline or expiry is dropped whenever the
//! store changes or is opened. A ticket whose task is gone (expired,
//! unknown to the server, past its deadline) ends in a typed error, never a
//! wait. Which servers keep a task across a host restart (those that
//! outlive the host: HTTP) is in the [crate docs](crate#which-tasks-survive-a-host-restart).

use mcp_client::{ClientError, TaskCall, TaskOptions, TaskTicket};
use mcp_proto::schema::CallToolResult;
use mcp_tools::ToolError;
use serde_json::Value;

use crate::Host;
use crate::cache::now_ms;

/// How many task tickets a store keeps by default.
pub const DEFAULT_MAX_TICKETS: usize = 256;

/// What [`Host::start_task`] gave.
#[derive(Debug)]
#[non_exhaustive]
pub enum HostTask {
    /// The server runs the call as a task; its ticket is recorded.
    Started(TaskTicket),
    /// The server ran the call at once (it does not take it as a task).
    Done(CallToolResult),
}

/// Why a host task operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HostTaskError {
    /// No ready server has a tool of this name.
    #[error("there is no tool named `{0}` on a ready server")]
    UnknownTool(String),
    /// The ticket's server is not ready (starting, failed, disabled) or
    /// not configured: try again once it is (the ticket is kept).
    #[error("server `{0}` is not ready")]
    Unavailable(String),
    /// The client call failed: the task's own outcome (cancelled, expired,
    /// past its deadline, unknown to the server) or the connection's.
    #[error("the task call failed")]
    Client(#[source] ClientError),
    /// The call was refused before anything was sent: the tool policy (see
    /// [`HostBuilder::tool_options`](crate::HostBuilder::tool_options)), or
    /// a tool held back until the user approves it ([`ToolError::Refused`]).
    #[error("the task call was refused")]
    Refused(#[source] ToolError),
}

impl Host {
    /// Calls the tool the model knows as `name` as a task and records its
    /// ticket in the host's store, so that [`tasks`](Self::tasks) lists it
    /// after a restart. Without a [cache](crate::HostBuilder::cache) the
    /// ticket is returned but not kept. A tool that [may not run as a
    /// task](mcp_tools::McpTool::may_run_as_task) is called plainly and its
    /// result is [`HostTask::Done`].
    pub async fn start_task(
        &self,
        name: &str,
        arguments: Value,
        options: TaskOptions,
    ) -> Result<HostTask, HostTaskError> {
        // The policy, and the pins, before anything is sent.
        match self.toolbox().get(name) {
            Some(tool) => tool
                .authorize(&arguments)
                .await
                .map_err(HostTaskError::Refused)?,
            None => {
                if let Some(refused) = self.held_refusal(name) {
                    return Err(HostTaskError::Refused(refused));
                }
            }
        }
        if let Some(tool) = self.toolbox().get(name)
            && !tool.may_run_as_task()
        {
            let client = tool.client().clone();
            let result = client
                .call_tool(tool.wire_name(), &arguments)
                .await
                .map_err(HostTaskError::Client)?;
            return Ok(HostTask::Done(result));
        }
        let route = self
            .toolbox()
            .resolve(name)
            .ok_or_else(|| HostTaskError::UnknownTool(name.to_owned()))?;
        let client = self
            .client(&route.server)
            .ok_or_else(|| HostTaskError::Unavailable(route.server.clone()))?;
        let call = client
            .call_tool_as_task(route.tool, arguments, options)
            .await
            .map_err(HostTaskError::Client)?;
        match call {
            TaskCall::Started(handle) => {
                let ticket = handle.ticket(route.server);
                if let Some(cache) = self.cache() {
                    cache.store().put_ticket(ticket.clone());
                }
                Ok(HostTask::Started(ticket))
            }
            TaskCall::Done(result) => Ok(HostTask::Done(result)),
            other => Err(HostTaskError::Client(ClientError::TaskExtension {
                method: format!("tools/call ({other:?})"),
            })),
        }
    }

    /// The tickets of the tasks this host (or the host before a restart,
    /// with a [`FileStore`](crate::FileStore)) started and has not seen
    /// end, without those past their deadline or expiry.
    pub fn tasks(&self) -> Vec<TaskTicket> {
        let now = now_ms();
        self.cache()
            .map(|c| c.store().tickets())
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.ends_at_ms().is_none_or(|end| now < end))
            .collect()
    }

    /// Follows a recorded task to its result, on the ready server the
    /// ticket names (reconnected after a restart); see
    /// [`Client::resume_task`](mcp_client::Client::resume_task). The
    /// ticket is forgotten once the outcome is final (a result, or a task
    /// that is gone); it is kept when the server is not ready or the
    /// connection failed, to try again.
    pub async fn task_result(&self, ticket: &TaskTicket) -> Result<CallToolResult, HostTaskError> {
        let server = &ticket.server.name;
        let client = self
            .client(server)
            .ok_or_else(|| HostTaskError::Unavailable(server.clone()))?;
        let outcome = match client.resume_task(ticket, TaskOptions::new()).await {
            Ok(handle) => handle.result().await,
            Err(e) => Err(e),
        };
        let keep =
            matches!(&outcome, Err(e) if e.is_closed() || matches!(e, ClientError::Transport(_)));
        if !keep {
            self.forget_task(ticket);
        }
        outcome.map_err(HostTaskError::Client)
    }

    /// Drops a ticket from the store (the application took over the task).
    pub fn forget_task(&self, ticket: &TaskTicket) {
        if let Some(cache) = self.cache() {
            cache
                .store()
                .remove_ticket(&ticket.server.name, &ticket.task_id);
        }
    }
}

/// A store's tickets: at most `max`, none past its end.
#[derive(Debug)]
pub(crate) struct Tickets {
    pub(crate) list: Vec<TaskTicket>,
    max: usize,
}

impl Tickets {
    pub(crate) fn new(max: usize) -> Self {
        Tickets {
            list: Vec::new(),
            max,
        }
    }

    /// Adds (or replaces) `ticket`; drops ended ones, then the oldest
    /// beyond the bound.
    pub(crate) fn put(&mut self, ticket: TaskTicket, now_ms: u64) {
        self.list
            .retain(|t| !(t.server.name == ticket.server.name && t.task_id == ticket.task_id));
        self.list.push(ticket);
        self.prune(now_ms);
    }

    /// Whether a ticket was removed.
    pub(crate) fn remove(&mut self, server: &str, task_id: &str) -> bool {
        let before = self.list.len();
        self.list
            .retain(|t| !(t.server.name == server && t.task_id == task_id));
        self.list.len() != before
    }

    pub(crate) fn prune(&mut self, now_ms: u64) {
        self.list
            .retain(|t| t.ends_at_ms().is_none_or(|end| now_ms < end));
        if self.list.len() > self.max {
            self.list.sort_by_key(|t| t.started_at_ms);
            let extra = self.list.len() - self.max;
            self.list.drain(..extra);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    pub(crate) fn ticket(server: &str, id: &str, started: u64, ends: Option<u64>) -> TaskTicket {
        serde_json::from_value(serde_json::json!({
            "format": 1, "server": {"name": server}, "taskId": id, "era": "2025-11-25",
            "startedAtMs": started, "expiresAtMs": ends,
        }))
        .unwrap()
    }

    #[test]
    fn tickets_are_bounded_replaced_and_pruned_at_their_end() {
        let mut t = Tickets::new(3);
        for i in 0..5 {
            t.put(ticket("s", &format!("t{i}"), i, None), 0);
        }
        let ids: Vec<_> = t.list.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["t2", "t3", "t4"], "the oldest go beyond the bound");
        t.put(ticket("s", "t3", 3, Some(100)), 0);
        assert_eq!(t.list.len(), 3, "same server and id: replaced");
        t.put(ticket("other", "t3", 9, None), 0);
        assert_eq!(t.list.len(), 3);
        t.prune(100);
        assert!(
            !t.list
                .iter()
                .any(|x| x.server.name == "s" && x.task_id == "t3"),
            "pruned at its expiry"
        );
        assert!(t.remove("other", "t3"));
        assert!(!t.remove("other", "t3"));
    }
}
