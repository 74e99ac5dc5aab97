//! The session's output: what to hand to the transport ([`Transmit`]), what
//! its owner must learn ([`Event`]), and what the telemetry records, kept
//! together in [`Output`].

use std::collections::VecDeque;

use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId, Response};
use mcp_proto::schema::{InputRequest, ProgressParams};
use mcp_proto::{ErrorObject, ProtocolVersion, RawJson};

use super::CallId;
use super::calls::Trace;
use crate::error::{ClientError, CloseReason};
use crate::telemetry::{self, Outcome};

/// Something to hand to the transport.
#[derive(Debug)]
#[non_exhaustive]
pub enum Transmit {
    /// Send this message.
    Message(Message),
    /// Tell the transport the revision now in use
    /// ([`Transport::set_protocol_version`](mcp_proto::transport::Transport::set_protocol_version)).
    ProtocolVersion(ProtocolVersion),
}

/// Something the session's owner must act on.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// Negotiation finished; [`Session::server`](super::Session::server) is available.
    Ready,
    /// A call finished: its raw result or an error.
    Completed {
        /// The call.
        call: CallId,
        /// The raw `result`, or why it failed.
        result: Result<RawJson, ClientError>,
    },
    /// A `tools/call` the server answered with a task handle (2026-07-28,
    /// `resultType: "task"`; only when the client declares the
    /// `io.modelcontextprotocol/tasks` extension, see
    /// [`SessionConfig::tasks_extension`](super::SessionConfig::tasks_extension)).
    /// The call is over for the session: its outcome comes from following
    /// the task (`tasks/get`), which is the owner's to do.
    TaskCreated {
        /// The call.
        call: CallId,
        /// The raw result: the task handle (a `Task` with `resultType`).
        handle: RawJson,
    },
    /// A call reported progress.
    Progress {
        /// The call.
        call: CallId,
        /// The notification's params.
        progress: ProgressParams,
    },
    /// The server needs input before the call can finish (2026-07-28 MRTR).
    /// Answer with [`Session::provide_input`](super::Session::provide_input).
    InputRequired {
        /// The call.
        call: CallId,
        /// Key → request (`elicitation/create`, `sampling/createMessage`, `roots/list`).
        requests: Vec<(String, InputRequest)>,
    },
    /// A server-to-client request (legacy era) the owner must answer with
    /// [`Session::respond`](super::Session::respond). (`ping` is answered by
    /// the session itself; beyond
    /// [`max_server_requests`](super::SessionConfig::max_server_requests)
    /// unanswered ones, the session answers "busy" itself.)
    ServerRequest(Request),
    /// The server cancelled its request `id` (`notifications/cancelled`):
    /// stop working on it; the session will not send an answer to it. The
    /// notification itself follows as [`Event::Notification`].
    ServerRequestCancelled(mcp_proto::jsonrpc::RequestId),
    /// A request of the server's that could not be read (the transport
    /// dropped it but learned its `id`): the session has answered it with
    /// `error` itself (-32700 or -32600, as JSON-RPC asks). For the owner
    /// to tell the user what was wrong with it.
    ServerRequestRefused {
        /// The server's request.
        id: mcp_proto::jsonrpc::RequestId,
        /// The error it was answered with.
        error: mcp_proto::ErrorObject,
    },
    /// A notification from the server (progress for our own calls is routed
    /// as [`Event::Progress`] instead).
    Notification(Notification),
    /// The session is closed; every call has completed.
    Closed(CloseReason),
}

/// The session's output.
///
/// Invariant: `answers` is the number of responses and errors in
/// `transmit` (the answers the session owes the server); only
/// [`answer`](Self::answer) queues one. While it is at `limit` the session
/// takes no input ([`accepts_input`](Self::accepts_input)), and the owner's
/// notification is refused when `limit` messages wait, so the queue is
/// bounded by what the session itself sends. `events` is bounded by the
/// calls in flight and the input taken.
#[derive(Debug)]
pub(super) struct Output {
    transmit: VecDeque<Transmit>,
    answers: usize,
    limit: usize,
    events: VecDeque<Event>,
    /// The spans and metrics of the session and its calls.
    telemetry: telemetry::Conn,
}

impl Output {
    /// `limit` is [`SessionConfig::max_outbound_backlog`](super::SessionConfig::max_outbound_backlog).
    pub(super) fn new(limit: usize, telemetry: telemetry::Conn) -> Self {
        Output {
            transmit: VecDeque::new(),
            answers: 0,
            limit,
            events: VecDeque::new(),
            telemetry,
        }
    }

    // ---- for the transport ----------------------------------------------

    /// Queues a request of ours.
    #[inline]
    pub(super) fn request(&mut self, request: Request) {
        self.transmit.push_back(Transmit::Message(request.into()));
    }

    /// Queues a notification the protocol sends (not the owner's: see
    /// [`notify`](Self::notify)).
    #[inline]
    pub(super) fn notification(&mut self, notification: Notification) {
        self.transmit
            .push_back(Transmit::Message(notification.into()));
    }

    /// Queues the owner's notification, unless `limit` messages already wait.
    pub(super) fn notify(&mut self, notification: Notification) -> Result<(), ClientError> {
        if self.transmit.len() >= self.limit {
            return Err(ClientError::Busy { limit: self.limit });
        }
        self.notification(notification);
        Ok(())
    }

    /// Queues the answer to the server's request `id`.
    pub(super) fn answer(&mut self, id: RequestId, result: Result<RawJson, ErrorObject>) {
        let msg: Message = match result {
            Ok(r) => Response::new(id, r).into(),
            Err(e) => ErrorResponse::new(Some(id), e).into(),
        };
        self.answers += 1;
        self.transmit.push_back(Transmit::Message(msg));
    }

    /// Tells the transport the revision in use from here on.
    pub(super) fn protocol_version(&mut self, v: ProtocolVersion) {
        self.transmit.push_back(Transmit::ProtocolVersion(v));
    }

    /// The next thing for the transport.
    #[inline]
    pub(super) fn pop_transmit(&mut self) -> Option<Transmit> {
        let t = self.transmit.pop_front()?;
        if let Transmit::Message(Message::Response(_) | Message::Error(_)) = &t {
            self.answers = self.answers.saturating_sub(1);
        }
        Some(t)
    }

    /// Whether nothing waits for the transport.
    #[inline]
    pub(super) fn transmit_is_empty(&self) -> bool {
        self.transmit.is_empty()
    }

    /// Whether no message waits for the transport (only revision changes,
    /// if anything).
    pub(super) fn holds_no_message(&self) -> bool {
        self.transmit
            .iter()
            .all(|t| matches!(t, Transmit::ProtocolVersion(_)))
    }

    /// Whether fewer than `limit` answers wait.
    #[inline]
    pub(super) fn accepts_input(&self) -> bool {
        self.answers < self.limit
    }

    // ---- for the owner --------------------------------------------------

    /// Tells the owner.
    #[inline]
    pub(super) fn event(&mut self, event: Event) {
        self.events.push_back(event);
    }

    /// The next event for the owner.
    #[inline]
    pub(super) fn pop_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether events wait.
    #[inline]
    pub(super) fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// A user call ended: its telemetry records the outcome, its owner is
    /// told. Inlined: only the check for telemetry and the event on the way
    /// of every answer; the recording is out of line.
    #[inline(always)]
    pub(super) fn complete(
        &mut self,
        call: CallId,
        trace: Trace,
        method: &str,
        result: Result<RawJson, ClientError>,
    ) {
        if trace.is_some() {
            self.finish(trace, method, Outcome::of(&result));
        }
        self.events.push_back(Event::Completed { call, result });
    }

    // ---- for the telemetry ----------------------------------------------

    /// A request's telemetry records how it ended.
    #[inline(never)]
    pub(super) fn finish(&self, trace: Trace, method: &str, outcome: Outcome<'_>) {
        if let Some(t) = trace {
            t.finish(&self.telemetry, method, outcome);
        }
    }

    /// The connection's telemetry.
    #[inline]
    pub(super) fn telemetry(&mut self) -> &mut telemetry::Conn {
        &mut self.telemetry
    }
}
