//! The server's requests the owner is answering (legacy era): at most
//! [`SessionConfig::max_server_requests`](super::SessionConfig::max_server_requests)
//! at once, each answered at most once, none after the server cancelled it.

use std::collections::HashSet;

use mcp_proto::jsonrpc::{Request, RequestId};
use mcp_proto::{ErrorCode, ErrorObject};

use super::IdHash;

/// The ids of the server's requests handed to the owner and not answered.
#[derive(Debug)]
pub(super) struct ServerRequests {
    open: HashSet<RequestId, IdHash>,
    limit: usize,
}

/// What becomes of a request of the server's.
#[derive(Debug)]
pub(super) enum Admission {
    /// The owner answers it.
    Owner,
    /// The session answers it at once, with this.
    Answer(Result<mcp_proto::RawJson, ErrorObject>),
}

impl ServerRequests {
    pub(super) fn new(limit: usize) -> Self {
        ServerRequests {
            open: HashSet::default(),
            limit,
        }
    }

    /// Takes the server's request `r`: a `ping` the session answers itself;
    /// an id still being answered, or one request over the limit, is
    /// refused; otherwise it is the owner's to answer.
    pub(super) fn admit(&mut self, r: &Request) -> Admission {
        if r.method == "ping" {
            return Admission::Answer(Ok(mcp_proto::RawJson::empty_object()));
        }
        if self.open.contains(&r.id) {
            tracing::warn!(id = %r.id, "the server reused the id of a request still being answered; refused");
            return Admission::Answer(Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "a request with this id is still being answered",
            )));
        }
        if self.open.len() >= self.limit {
            tracing::warn!(method = %r.method, limit = self.limit, "too many server requests being answered; answering busy");
            return Admission::Answer(Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "client busy: {} requests of the server are being answered (limit: max_server_requests)",
                    self.limit
                ),
            )));
        }
        self.open.insert(r.id.clone());
        Admission::Owner
    }

    /// The owner answers `id`: whether the answer is still wanted (the
    /// server did not cancel it, and it was made).
    pub(super) fn answered(&mut self, id: &RequestId) -> bool {
        self.open.remove(id)
    }

    /// The server cancelled `id`: whether the owner was answering it.
    pub(super) fn cancelled(&mut self, id: &RequestId) -> bool {
        self.open.remove(id)
    }

    /// The session closed: nothing is answered any more.
    pub(super) fn clear(&mut self) {
        self.open.clear();
    }
}
