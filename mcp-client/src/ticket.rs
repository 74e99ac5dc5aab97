//! Durable tasks' plain data: a [`TaskTicket`] names a task (its server,
//! id, wire form, deadline and expiry as wall-clock times) so that a
//! program can write it down and resume the task after a restart
//! (`Client::resume_task`, with the `tokio` feature, in
//! `client/mcp_task/resume.rs`). No IO here.

use std::time::{SystemTime, UNIX_EPOCH};

use mcp_proto::Era;

use serde::{Deserialize, Serialize};

/// The ticket format this crate writes and reads. A ticket of another
/// format is refused ([`TicketError::Format`]), never misread.
pub const TICKET_FORMAT: u32 = 1;

/// The wire form a task follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskEra {
    /// 2025-11-25 core tasks (experimental): the `task` member of a
    /// request, `tasks/get`, `tasks/result`, `tasks/cancel`.
    #[serde(rename = "2025-11-25")]
    Core,
    /// The 2026-07-28 extension `io.modelcontextprotocol/tasks`: a result
    /// with `resultType: "task"`, `tasks/get` inlining the result.
    #[serde(rename = "io.modelcontextprotocol/tasks")]
    Extension,
}

impl TaskEra {
    /// The tasks a connection of `era` speaks.
    pub fn of(era: Era) -> Self {
        match era {
            Era::Modern => TaskEra::Extension,
            _ => TaskEra::Core,
        }
    }

    /// The protocol era whose connections speak these tasks.
    pub fn era(self) -> Era {
        match self {
            TaskEra::Core => Era::Legacy,
            TaskEra::Extension => Era::Modern,
        }
    }
}

/// Which server a task runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerIdentity {
    /// What the application calls the server (a host's server name, a
    /// config file's key): how it finds the server to reconnect to.
    pub name: String,
    /// The `serverInfo.name` the server reported; a reconnection that
    /// reports another is [`TicketError::OtherServer`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The `serverInfo.version` the server reported: shown in errors, not
    /// checked (a server upgraded in place may still keep its tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl ServerIdentity {
    /// A server known only by the application's name for it (no check of
    /// what it reports).
    pub fn new(name: impl Into<String>) -> Self {
        ServerIdentity {
            name: name.into(),
            implementation: None,
            version: None,
        }
    }

    /// How a resume's mismatch error names this server.
    #[cfg(feature = "tokio")]
    pub(crate) fn describe(&self) -> String {
        match (&self.implementation, &self.version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            _ => "(unnamed)".into(),
        }
    }
}

/// A task written down: serialize it (serde), keep it across a restart,
/// resume it with [`Client::resume_task`](crate::Client::resume_task),
/// which says what a resume checks.
///
/// It names the server (the application's name for it, and the
/// `serverInfo` name and version it reported, to check a reconnection
/// reached the same server), the task id, the wire form ([`TaskEra`]), and
/// the caller's deadline and the task's expiry as wall-clock times (Unix
/// ms): an `Instant` does not survive a restart, and a ttl counted again
/// from the resume would outlive the task.
///
/// ```
/// # fn f(handle: &mcp_client::TaskHandle) -> Result<(), serde_json::Error> {
/// let ticket = handle.ticket("research-server");
/// let json = serde_json::to_string(&ticket)?;
/// // … the program restarts …
/// let ticket: mcp_client::TaskTicket = serde_json::from_str(&json)?;
/// # let _ = ticket; Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskTicket {
    /// [`TICKET_FORMAT`] when written.
    pub format: u32,
    /// The server the task runs on.
    pub server: ServerIdentity,
    /// The task id the server gave.
    pub task_id: String,
    /// The wire form the task follows.
    pub era: TaskEra,
    /// When the requester learned of the task (Unix ms).
    pub started_at_ms: u64,
    /// When the caller gives up on the task (Unix ms): `tasks/cancel` is
    /// sent then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at_ms: Option<u64>,
    /// When the task's ttl runs out (Unix ms): the server may delete it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// The task's ttl, as the server set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// The server's suggested poll interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

impl TaskTicket {
    /// A ticket for a task known only by its id (printed by a tool, kept
    /// by hand): on the server the application calls `server`, speaking
    /// `era`'s tasks, learned of now, with no deadline and no expiry known
    /// (the server's ttl, as it reports it on resume, still bounds a wait).
    /// No check of the server's `serverInfo` on resume.
    pub fn new(server: impl Into<String>, task_id: impl Into<String>, era: TaskEra) -> Self {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        TaskTicket {
            format: TICKET_FORMAT,
            server: ServerIdentity::new(server),
            task_id: task_id.into(),
            era,
            started_at_ms: now_ms,
            deadline_at_ms: None,
            expires_at_ms: None,
            ttl_ms: None,
            poll_interval_ms: None,
        }
    }

    /// The first of the deadline and the expiry (Unix ms): after it the
    /// ticket is of no use (a store prunes it then).
    pub fn ends_at_ms(&self) -> Option<u64> {
        [self.deadline_at_ms, self.expires_at_ms]
            .into_iter()
            .flatten()
            .min()
    }

    /// Whether the task's ttl ran out by `now_ms` (Unix ms).
    pub fn is_expired_at(&self, now_ms: u64) -> bool {
        self.expires_at_ms.is_some_and(|e| now_ms >= e)
    }
}

/// Why a ticket's task cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TicketError {
    /// A ticket of a format this crate does not read.
    #[error("a task ticket of format {found} (this client reads {TICKET_FORMAT})")]
    Format {
        /// The ticket's format.
        found: u32,
    },
    /// The task's ttl ran out before it was resumed; nothing was sent.
    #[error("task {task_id} expired at {expired_at_ms} (Unix ms); the server may have deleted it")]
    Expired {
        /// The task.
        task_id: String,
        /// When it expired (Unix ms).
        expired_at_ms: u64,
    },
    /// The server does not know the task (`tasks/get` answered -32602):
    /// it was deleted, or the server restarted without keeping its tasks.
    #[error("the server does not know task {task_id}: {message}")]
    Unknown {
        /// The task.
        task_id: String,
        /// What the server said.
        message: String,
    },
    /// The connection reached another server than the ticket's.
    #[error("the ticket is for {expected} on server `{name}`, but the server is {found}")]
    OtherServer {
        /// The application's name for the server.
        name: String,
        /// The ticket's `serverInfo` name and version.
        expected: String,
        /// The connected server's.
        found: String,
    },
    /// The connection does not speak the ticket's tasks.
    #[error("the ticket's task follows {era:?} tasks, which this connection ({version}) does not")]
    OtherEra {
        /// The ticket's era.
        era: TaskEra,
        /// The connection's revision.
        version: String,
    },
    /// The ticket's task id is empty or too long.
    #[error("the ticket's task id is malformed")]
    BadId,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_ticket_round_trips_through_json_and_names_its_era_on_the_wire() {
        let ticket = TaskTicket {
            format: TICKET_FORMAT,
            server: ServerIdentity::new("research"),
            task_id: "t-1".into(),
            era: TaskEra::Core,
            started_at_ms: 10,
            deadline_at_ms: Some(100),
            expires_at_ms: Some(50),
            ttl_ms: Some(40),
            poll_interval_ms: None,
        };
        let json = serde_json::to_value(&ticket).unwrap();
        assert_eq!(json["era"], "2025-11-25");
        assert_eq!(json["server"], serde_json::json!({"name": "research"}));
        assert_eq!(serde_json::from_value::<TaskTicket>(json).unwrap(), ticket);
        assert_eq!(ticket.ends_at_ms(), Some(50));
        assert!(ticket.is_expired_at(50) && !ticket.is_expired_at(49));
        let ext: TaskEra = serde_json::from_str("\"io.modelcontextprotocol/tasks\"").unwrap();
        assert_eq!(ext, TaskEra::Extension);
    }
}
