//! The session's output: what to hand to the transport, and what its owner
//! must learn.

use mcp_proto::jsonrpc::{Message, Notification, Request};
use mcp_proto::schema::{InputRequest, ProgressParams};
use mcp_proto::{ProtocolVersion, RawJson};

use super::CallId;
use crate::error::{ClientError, CloseReason};

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
