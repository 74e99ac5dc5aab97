//! Durable tasks: a [`TaskHandle`] as a [`TaskTicket`], a plain serde value
//! a program writes down and follows again with [`Client::resume_task`],
//! the one way back to a task (after a restart, or known only by its id:
//! [`TaskTicket::new`]).
//!
//! What a resume checks is on [`Client::resume_task`]; the ticket's
//! fields on [`TaskTicket`].

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_proto::ErrorCode;

use super::requester::{TaskHandle, TaskOptions};
use crate::client::{Client, now};
use crate::error::ClientError;
use crate::session::task::check_task_id;
use crate::ticket::{ServerIdentity, TICKET_FORMAT, TaskEra, TaskTicket, TicketError};

/// How long the `tasks/cancel` sent for a ticket past its deadline may take.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// Now, as Unix milliseconds.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `at` (on the monotonic clock) as Unix ms, given that `now` is `now_ms`.
fn wall_ms(at: Instant, now: Instant, now_ms: u64) -> u64 {
    if at >= now {
        now_ms.saturating_add(millis(at - now))
    } else {
        now_ms.saturating_sub(millis(now - at))
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl TaskHandle {
    /// The task as a [`TaskTicket`], to resume it (after a restart too) with
    /// [`Client::resume_task`]; `server` is the application's name for
    /// the server (how it will reconnect). The handle goes on as before.
    pub fn ticket(&self, server: impl Into<String>) -> TaskTicket {
        let (t, t_ms) = (now(), unix_ms());
        let implementation = self.client.server().map(|s| s.implementation.clone());
        let task = self.tracker.task();
        TaskTicket {
            format: TICKET_FORMAT,
            server: ServerIdentity {
                name: server.into(),
                implementation: implementation.as_ref().map(|i| i.name.clone()),
                version: implementation.map(|i| i.version),
            },
            task_id: task.task_id.clone(),
            era: TaskEra::of(self.era()),
            started_at_ms: wall_ms(self.tracker.started(), t, t_ms),
            deadline_at_ms: self.tracker.deadline().map(|d| wall_ms(d, t, t_ms)),
            expires_at_ms: self.tracker.expires().map(|e| wall_ms(e, t, t_ms)),
            ttl_ms: task.ttl_millis(),
            poll_interval_ms: task.poll_interval_millis(),
        }
    }
}

impl Client {
    /// Follows the task a [`TaskTicket`] names, on this connection (to the
    /// server the ticket names, reconnected after a restart): asks the
    /// server for its state now, and returns a handle that follows it. A
    /// ticket comes from [`TaskHandle::ticket`], or from
    /// [`TaskTicket::new`] for a task known only by its id. Never waits
    /// on a task that is gone:
    /// - past its expiry, the ticket fails at once
    ///   ([`TicketError::Expired`]), without a request;
    /// - past its deadline, `tasks/cancel` is sent and the resume fails
    ///   with [`ClientError::TaskDeadline`];
    /// - a server that does not know the task (`tasks/get` answered
    ///   `-32602`, which the 2025-11-25 spec requires for an unknown id)
    ///   gives [`TicketError::Unknown`];
    /// - a connection to another server (its `serverInfo` name
    ///   differs from the ticket's), in a revision without the ticket's
    ///   tasks, or a ticket of another format: [`TicketError::OtherServer`],
    ///   [`TicketError::OtherEra`], [`TicketError::Format`].
    ///
    /// The handle it returns is bounded by what is left of the ticket's
    /// deadline and by the task's expiry as the ticket says (never later
    /// than the ttl the server reports now). `options`' deadline and ttl
    /// are ignored (the ticket's hold); its status callback is used.
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client, json: &str) -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_client::{TaskOptions, TaskTicket};
    ///
    /// let ticket: TaskTicket = serde_json::from_str(json)?; // written down before a restart
    /// let handle = client.resume_task(&ticket, TaskOptions::new()).await?;
    /// let result = handle.result().await?;
    /// # let _ = result; Ok(()) }
    /// ```
    pub async fn resume_task(
        &self,
        ticket: &TaskTicket,
        options: TaskOptions,
    ) -> Result<TaskHandle, ClientError> {
        let fail = |e| Err(ClientError::Ticket(e));
        if ticket.format != TICKET_FORMAT {
            return fail(TicketError::Format {
                found: ticket.format,
            });
        }
        if check_task_id(&ticket.task_id).is_err() {
            return fail(TicketError::BadId);
        }
        self.check_server(ticket)?;
        let (t, t_ms) = (now(), unix_ms());
        if let Some(expired_at_ms) = ticket.expires_at_ms.filter(|e| t_ms >= *e) {
            return fail(TicketError::Expired {
                task_id: ticket.task_id.clone(),
                expired_at_ms,
            });
        }
        let after = ticket
            .deadline_at_ms
            .map(|d| Duration::from_millis(d.saturating_sub(ticket.started_at_ms)));
        if ticket.deadline_at_ms.is_some_and(|d| t_ms >= d) {
            let cancel = self
                .cancel_task(ticket.task_id.clone())
                .timeout(CANCEL_WAIT)
                .max_time(CANCEL_WAIT);
            if let Err(e) = cancel.await {
                tracing::debug!(task = %ticket.task_id, error = %mcp_proto::error::chain(&e), "tasks/cancel for a ticket past its deadline failed");
            }
            return Err(ClientError::TaskDeadline {
                task_id: ticket.task_id.clone(),
                after: after.unwrap_or_default(),
            });
        }
        // What is left of the ticket's bounds bounds this request too.
        let left = ticket
            .ends_at_ms()
            .map(|end| Duration::from_millis(end.saturating_sub(t_ms).max(1)));
        let mut get = self.get_task(ticket.task_id.clone());
        if let Some(left) = left {
            get = get.timeout(left).max_time(left);
        }
        let got = match get.await {
            Ok(got) => got,
            Err(ClientError::Rpc(e)) if e.code == ErrorCode::INVALID_PARAMS => {
                return fail(TicketError::Unknown {
                    task_id: ticket.task_id.clone(),
                    message: e.message.chars().take(200).collect(),
                });
            }
            Err(e) => return Err(e),
        };
        let mut options = options;
        if let Some(d) = ticket.deadline_at_ms {
            options = options.deadline(Duration::from_millis(d.saturating_sub(t_ms)));
        }
        let mut handle = TaskHandle::new(self.clone(), got.task, ticket.era.era(), options)?;
        handle.deadline = after;
        if let Some(e) = ticket.expires_at_ms {
            let left = Duration::from_millis(e.saturating_sub(t_ms));
            handle.tracker.expire_by(t.checked_add(left).unwrap_or(t));
        }
        Ok(handle)
    }

    /// The ticket's server and era against this connection's.
    fn check_server(&self, ticket: &TaskTicket) -> Result<(), ClientError> {
        let Some(server) = self.server() else {
            // Not connected: the request will say so.
            return Ok(());
        };
        let i = &server.implementation;
        let id = &ticket.server;
        // The name only: a server upgraded in place reports another version
        // and may still keep the task (it answers -32602 if not: `Unknown`).
        let same = id.implementation.as_ref().is_none_or(|n| *n == i.name);
        if !same {
            return Err(ClientError::Ticket(TicketError::OtherServer {
                name: id.name.clone(),
                expected: id.describe(),
                found: format!("{} {}", i.name, i.version),
            }));
        }
        let version = server.protocol_version;
        if version.era() != ticket.era.era() {
            return Err(ClientError::Ticket(TicketError::OtherEra {
                era: ticket.era,
                version: version.to_string(),
            }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn wall_clock_conversion_keeps_the_distance_both_ways() {
        let t = Instant::now();
        assert_eq!(wall_ms(t + Duration::from_secs(5), t, 1_000_000), 1_005_000);
        assert_eq!(wall_ms(t, t + Duration::from_secs(5), 1_000_000), 995_000);
        assert_eq!(wall_ms(t, t + Duration::from_secs(5), 10), 0);
    }
}
