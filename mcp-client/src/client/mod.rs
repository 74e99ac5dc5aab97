//! The async side: a cloneable [`Client`] handle and the [`Driver`] task that
//! owns the [`Session`](crate::session::Session) and the transport.
//!
//! - [`builder`]: [`ClientBuilder`], which configures and splits into a
//!   [`Client`] and its [`Driver`].
//! - [`handle`]: the [`Client`] handle and how a call reaches the driver.
//! - [`methods`]: the typed MCP calls (tools, resources, prompts, lists).
//! - [`request`]: [`RequestBuilder`] and the [`ResponseFuture`] it sends.
//! - [`driver`]: the [`Driver`] task: transport I/O, timers, shutdown.
//! - [`dispatch`]: what the driver does with callers' commands and the
//!   session's events (replies, server requests, notifications).
//! - [`notifications`]: the bounded queue to the handler's notification task.
//! - `skills` (feature `skills`): the Skills extension (SEP-2640).

mod builder;
mod dispatch;
mod driver;
mod handle;
mod methods;
mod notifications;
mod request;
#[cfg(feature = "skills")]
pub(crate) mod skills;

pub use builder::{ClientBuilder, DEFAULT_MAX_LIST_PAGES};
pub use dispatch::MAX_CONCURRENT_SERVER_REQUESTS;
pub use driver::Driver;
pub use handle::Client;
pub use notifications::MAX_QUEUED_NOTIFICATIONS;
pub use request::{RequestBuilder, ResponseFuture};

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, RwLock};

use mcp_proto::schema::{JsonObject, LoggingLevel, ProgressParams};
use mcp_proto::{ErrorObject, ProtocolVersion, RawJson};
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::{ClientError, CloseReason};
use crate::handler::ListKind;
use crate::session::{CallId, CallOptions, Embedded, ServerInfo};
use driver::DriverCore;

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(ProgressParams) + Send + Sync>;

type Reply = oneshot::Sender<Result<RawJson, ClientError>>;

enum Command {
    Request {
        call: CallId,
        method: Cow<'static, str>,
        params: Option<RawJson>,
        embedded: Embedded,
        options: CallOptions,
        progress: Option<ProgressFn>,
        reply: Reply,
    },
    /// Reply once the handshake finished (or failed).
    WaitReady(Reply),
    Cancel(CallId, Option<String>),
    Notify {
        method: String,
        params: Option<RawJson>,
    },
    Respond {
        id: mcp_proto::RequestId,
        result: Result<RawJson, ErrorObject>,
    },
    Input {
        call: CallId,
        responses: mcp_proto::schema::InputResponses,
    },
    SetLogLevel(Option<LoggingLevel>),
    Close(oneshot::Sender<()>),
}

/// What the driver's command channel carries. Boxed: a channel allocates
/// its slots 32 at a time up front, so an unboxed `Command` (~150 bytes)
/// would cost every connection ~5 KiB before its first command. Requests
/// normally reach the driver without the channel (see `Client::submit`).
type Queued = Box<Command>;

struct Shared {
    commands: mpsc::UnboundedSender<Queued>,
    next_call: AtomicU64,
    server: RwLock<Option<Arc<ServerInfo>>>,
    /// Made by the first subscriber or the first change, whichever comes
    /// first (a watch channel is a few hundred bytes; most connections
    /// never use all three).
    changes: [std::sync::OnceLock<watch::Sender<u64>>; 3],
    max_list_pages: usize,
    /// Why the connection closed, once it has (see [`Client::closed`]).
    closed: watch::Sender<Option<CloseReason>>,
    /// The negotiated modern revision and its per-request `_meta` members.
    meta: RwLock<Option<Arc<MetaTemplate>>>,
    /// Length of the last params encoded at send time: the next ones are
    /// encoded into a buffer of about this size, so calls with large
    /// arguments do not regrow (and copy) their buffer every time.
    params_size_hint: AtomicUsize,
    /// The driver's state, for callers that hand requests over directly
    /// (set once at build; gone when the driver is dropped).
    core: std::sync::OnceLock<std::sync::Weak<Mutex<DriverCore>>>,
}

/// What every request of the negotiated modern revision carries in `_meta`.
struct MetaTemplate {
    version: ProtocolVersion,
    members: JsonObject,
    /// `members` as one JSON object, encoded once: written verbatim as the
    /// whole `_meta` of a request with no `_meta` members of its own (most
    /// calls), instead of serializing the map again for every request.
    encoded: Box<serde_json::value::RawValue>,
}

impl MetaTemplate {
    fn new(version: ProtocolVersion, members: JsonObject) -> Option<Self> {
        let encoded = serde_json::value::to_raw_value(&members).ok()?;
        Some(MetaTemplate {
            version,
            members,
            encoded,
        })
    }
}

impl Shared {
    fn changes(&self, kind: ListKind) -> &watch::Sender<u64> {
        self.changes[kind_index(kind)].get_or_init(|| watch::Sender::new(0))
    }

    fn meta_template(&self) -> Option<Arc<MetaTemplate>> {
        self.meta.read().ok().and_then(|g| g.clone())
    }

    fn closed_error(&self) -> ClientError {
        let reason = self.closed.borrow().clone();
        ClientError::Closed(reason.unwrap_or(CloseReason::DriverGone))
    }
}

fn kind_index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Resources => 1,
        ListKind::Prompts => 2,
    }
}

fn decode<R: DeserializeOwned>(method: &str, raw: &RawJson) -> Result<R, ClientError> {
    raw.decode().map_err(|e| ClientError::Decode {
        method: method.to_owned(),
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Idle memory: the list-changed channels exist only once someone
    /// subscribes (or a change arrives), one kind at a time.
    #[test]
    fn list_changed_channels_are_made_on_first_use() {
        let (transport, _server) = mcp_proto::transport::channel::pair();
        let (client, _driver) = Client::builder("t", "1").build(transport);
        assert!(client.shared.changes.iter().all(|c| c.get().is_none()));
        let rx = client.list_changed(ListKind::Resources);
        assert_eq!(*rx.borrow(), 0);
        let made: Vec<bool> = client
            .shared
            .changes
            .iter()
            .map(|c| c.get().is_some())
            .collect();
        assert_eq!(made, [false, true, false]);
        // The change the driver publishes reaches the receiver made before.
        client
            .shared
            .changes(ListKind::Resources)
            .send_modify(|v| *v += 1);
        assert_eq!(*client.list_changed(ListKind::Resources).borrow(), 1);
        assert!(rx.has_changed().unwrap());
    }
}
