//! MCP tasks (2025-11-25 core tasks and the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks`), both sides of them. Not to be confused
//! with tokio tasks: those that run the application's handler are
//! [`HandlerTasks`](super::handler_tasks::HandlerTasks).
//!
//! The requester side (this client asks the server to run a tool as a task):
//! - [`requester`]: [`TaskHandle`], [`Client::call_tool_as_task`](crate::Client::call_tool_as_task)
//!   and the typed `tasks/*` calls; the protocol state is the sans-IO
//!   [`TaskTracker`](crate::session::TaskTracker).
//! - [`follow`]: [`Client::call_tool`](crate::Client::call_tool) following
//!   the task a call turned into, to its result.
//! - [`resume`]: a handle written down as a [`TaskTicket`](crate::TaskTicket)
//!   and followed again after a restart ([`Client::resume_task`](crate::Client::resume_task)).
//!
//! The receiver side (the server asks this client to run its request as a
//! task, 2025-11-25):
//! - [`receiver`]: the tasks the client keeps for the server, and its
//!   answers to the server's `tasks/*` requests.

pub(super) mod follow;
pub(super) mod receiver;
pub(super) mod requester;
pub(super) mod resume;
