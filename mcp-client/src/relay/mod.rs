//! A relay: one MCP client (the *host*) talks to one MCP server through
//! this process, over two transports of any kinds, with every message
//! passed on both ways. The `mcp bridge` command is a relay from a host on
//! stdio to a server over Streamable HTTP (or anything `mcp` connects to).
//!
//! - [`Relay`]: the sans-IO core. Messages in from either side, messages
//!   out to either side, as data: no IO, no clock, no runtime.
//! - [`RelayDriver`]: the one future that moves messages between two
//!   [`BoxTransport`](mcp_proto::transport::BoxTransport)s and the core, with backpressure both ways.
//!
//! # What passes, and how
//!
//! Everything: requests, notifications, responses and errors, both ways,
//! in order per direction, the host's and the server's requests
//! (elicitation, sampling, roots, pings), progress, cancellation, tasks
//! (both forms), logging, subscriptions. `params` and `result` are never
//! decoded or re-encoded; a message is passed on as it came except for:
//!
//! - **ids.** Each side's requests go out under ids the relay allocates
//!   (integers from 1, never reused) and their answers come back under the
//!   sender's id, so the relay can add requests of its own and a
//!   misbehaving side cannot answer a request it was never sent. A
//!   `notifications/cancelled` has its `requestId` mapped the same way; the
//!   cancelled request is forgotten, so a late answer is dropped, as the
//!   side that cancelled expects.
//! - **errors the relay answers itself**, always as a JSON-RPC error to
//!   the side whose request it was: the server's transport failed that
//!   request (an HTTP 500, a dropped answer, a lost stream: `-32603` with
//!   the transport's reason), too many requests in flight, an id already in
//!   flight, the server connection lost (every request in flight answered).
//!
//! # Protocol revisions and the era line
//!
//! The relay does not negotiate: the host does, through it, and the relay
//! watches. After a successful `initialize` it tells the server's
//! transport the revision the server chose (HTTP sends it as a header),
//! before the host's `notifications/initialized`; a 2026-07-28 request's
//! `_meta` revision is passed to the transport before the request (read
//! from `server/discover` and from each request until the server has
//! answered one at that revision: a host that moves to another revision
//! probes again first).
//!
//! Across the era line (a host that speaks only `initialize`-based
//! revisions, a server that speaks only 2026-07-28, or the reverse) the
//! relay **does not translate**: translating would mean playing a server
//! of one era and a client of the other (sessions against stateless
//! requests, `elicitation/create` against `input_required` rounds, the two
//! forms of tasks, `logging/setLevel` against `_meta`), and whatever has no
//! counterpart would be lost silently. Instead the handshake is answered
//! with a JSON-RPC error that names both revisions:
//!
//! - `initialize` refused by a server that speaks only 2026-07-28: its
//!   `-32022` and data kept, the message saying what the host offered and
//!   that the server speaks only 2026-07-28;
//! - `server/discover` refused by a legacy server: its own code kept (any
//!   code but `-32022` tells a host in auto mode to fall back to
//!   `initialize`, as it would against a legacy stdio server), the message
//!   saying the server speaks only the `initialize`-based revisions. An
//!   HTTP-level refusal (400, 404, 405 without a JSON-RPC body) becomes the
//!   `-32601` a legacy stdio server sends;
//! - a host pinned to 2026-07-28 that skips `server/discover`: an error the
//!   server gives before it has answered any request at that revision
//!   keeps its code, its message extended to say the server may speak only
//!   the `initialize`-based revisions.
//!
//! A host in auto mode therefore works against either kind of server; a
//! host pinned to one era gets an error that says what to change.
//!
//! # Sessions
//!
//! When the server ends a legacy session (Streamable HTTP answers 404,
//! reported as [`SessionExpired`](mcp_proto::transport::TransportErrorKind::SessionExpired)),
//! the relay starts a new one itself: it sends the host's `initialize`
//! again, as the host sent it, then `notifications/initialized`, and the
//! host goes on without knowing. The host's messages wait meanwhile (the
//! relay stops reading them). Requests the old session dropped are
//! answered with an error that says to send them again (the server did not
//! run them). A new session at another revision, or a refused one, ends
//! the relay ([`RelayEnd::SessionLost`]).
//!
//! # Bounds
//!
//! | what | limit | when reached |
//! |---|---|---|
//! | the host's requests in flight | [`RelayConfig::max_in_flight`] ([`DEFAULT_MAX_IN_FLIGHT`]) | answered `-32603` at once, not sent |
//! | the server's requests to the host in flight | the same | answered `-32603` at once, not sent |
//! | messages waiting inside the relay | [`QUEUE_LIMIT`] per direction | the side that feeds that queue is no longer read |
//! | bytes waiting for each side | the transport's own (stdio: 1 MiB write buffer; HTTP: its inbox and unanswered POSTs) | the driver stops handing it messages |
//!
//! So a host that stops reading its input stops the relay reading the
//! server (whose transport then stops reading, and the server is slowed by
//! TCP flow control), and a server that stops taking messages stops the
//! relay reading the host. Nothing is dropped to make room.
//!
//! # Example
//!
//! ```
//! use mcp_client::relay::{Relay, RelayConfig, ToServer};
//! use mcp_proto::jsonrpc::{Message, Request, Response};
//! use mcp_proto::RawJson;
//!
//! let mut relay = Relay::new(RelayConfig::default());
//! relay.handle_host(Request::new("a".into(), "tools/list", None).into());
//! let Some(ToServer::Message(Message::Request(sent))) = relay.poll_to_server() else {
//!     unreachable!()
//! };
//! assert_eq!(sent.id, 1.into()); // the relay's own id on the server's side
//! relay.handle_server(Response::new(sent.id, RawJson::empty_object()).into());
//! let answer = relay.poll_to_host().unwrap();
//! assert_eq!(answer.id(), Some(&"a".into())); // the host's id again
//! ```

mod driver;
mod era;
mod requests;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use mcp_proto::error::chain;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{Era, ErrorCode, ErrorObject, ProtocolVersion, RawJson};

pub use driver::RelayDriver;
use era::Agreed;
use requests::{Kind, Requests};

/// Default of [`RelayConfig::max_in_flight`]: 1024 requests each way.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// Most messages waiting inside the relay for one side before the other
/// side is no longer read (the transports' own buffers come after this).
pub const QUEUE_LIMIT: usize = 64;

/// How a [`Relay`] behaves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RelayConfig {
    /// Most requests in flight in each direction (the host's to the server,
    /// the server's to the host). One more is answered with an error at
    /// once and not passed on.
    pub max_in_flight: usize,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

impl RelayConfig {
    /// Sets [`max_in_flight`](Self::max_in_flight) (at least 1).
    #[must_use]
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }
}

/// What the relay has for the server's transport.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToServer {
    /// A message to send.
    Message(Message),
    /// Tell the transport this revision is now spoken
    /// ([`Transport::set_protocol_version`](mcp_proto::transport::Transport::set_protocol_version)),
    /// before the messages that follow.
    ProtocolVersion(ProtocolVersion),
}

/// Why a relay ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RelayEnd {
    /// The host closed its side (end of its input, or its side broke).
    HostClosed,
    /// The server's side ended: cleanly (`None`) or with this error. The
    /// host's requests in flight were answered with an error.
    ServerClosed(Option<TransportError>),
    /// The server ended the session and a new one could not be started (it
    /// was refused, or chose another revision than the host agreed on).
    SessionLost(ErrorObject),
}

/// The sans-IO core of a relay: see the [module docs](self).
///
/// Feed it with [`handle_host`](Self::handle_host) /
/// [`handle_server`](Self::handle_server) (and their `_error` and
/// `_closed` forms); take what it has with
/// [`poll_to_server`](Self::poll_to_server) and
/// [`poll_to_host`](Self::poll_to_host); read a side only while
/// [`wants_host`](Self::wants_host) / [`wants_server`](Self::wants_server)
/// say so (that is the backpressure).
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    /// The host's requests to the server.
    upstream: Requests,
    /// The server's requests to the host.
    downstream: Requests,
    agreed: Agreed,
    /// The params of the host's `initialize` in flight, kept for a renewal.
    initialize_params: Option<RawJson>,
    /// A new session is being started: the host waits.
    renewing: bool,
    to_server: VecDeque<ToServer>,
    to_host: VecDeque<Message>,
    host_done: bool,
    server_done: bool,
    end: Option<RelayEnd>,
}

impl Relay {
    /// A relay with nothing in flight.
    pub fn new(config: RelayConfig) -> Self {
        Relay {
            config,
            upstream: Requests::default(),
            downstream: Requests::default(),
            agreed: Agreed::Unknown,
            initialize_params: None,
            renewing: false,
            to_server: VecDeque::new(),
            to_host: VecDeque::new(),
            host_done: false,
            server_done: false,
            end: None,
        }
    }

    /// Whether the host may be read now: its messages have somewhere to go.
    pub fn wants_host(&self) -> bool {
        !self.host_done
            && !self.server_done
            && !self.renewing
            && self.to_server.is_empty()
            && self.to_host.len() < QUEUE_LIMIT
    }

    /// Whether the server may be read now.
    pub fn wants_server(&self) -> bool {
        !self.server_done
            && !self.host_done
            && self.to_host.is_empty()
            && self.to_server.len() < QUEUE_LIMIT
    }

    /// Why the relay ended, once it has: the driver then sends what is
    /// still queued for the side that is left and closes it.
    pub fn ended(&self) -> Option<&RelayEnd> {
        self.end.as_ref()
    }

    /// The next thing for the server's transport.
    pub fn poll_to_server(&mut self) -> Option<ToServer> {
        self.to_server.pop_front()
    }

    /// The next message for the host.
    pub fn poll_to_host(&mut self) -> Option<Message> {
        self.to_host.pop_front()
    }

    /// How many of the host's requests wait for the server's answer.
    pub fn host_requests_in_flight(&self) -> usize {
        self.upstream.len()
    }

    /// A message from the host.
    pub fn handle_host(&mut self, msg: Message) {
        if self.host_done || self.server_done {
            return;
        }
        match msg {
            Message::Request(req) => self.host_request(req),
            Message::Notification(n) if n.method == "notifications/cancelled" => {
                if let Some(n) = cancel(n, &mut self.upstream) {
                    self.to_server.push_back(ToServer::Message(n.into()));
                }
            }
            Message::Notification(n) => self.to_server.push_back(ToServer::Message(n.into())),
            Message::Response(mut r) => match self.downstream.answered(&r.id) {
                Some((theirs, _)) => {
                    r.id = theirs;
                    self.to_server.push_back(ToServer::Message(r.into()));
                }
                None => {
                    tracing::debug!(id = %r.id, "the host answered a request the server no longer waits for; dropped")
                }
            },
            Message::Error(mut e) => {
                if let Some(id) = &e.id {
                    let Some((theirs, _)) = self.downstream.answered(id) else {
                        tracing::debug!(%id, "the host answered a request the server no longer waits for; dropped");
                        return;
                    };
                    e.id = Some(theirs);
                }
                self.to_server.push_back(ToServer::Message(e.into()));
            }
            // `Message` is non-exhaustive: anything new is passed on.
            other => self.to_server.push_back(ToServer::Message(other)),
        }
    }

    fn host_request(&mut self, mut req: Request) {
        if self.upstream.has_theirs(&req.id) {
            let e = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "mcp bridge: request id {} is already in flight; not sent",
                    req.id
                ),
            );
            self.to_host
                .push_back(ErrorResponse::new(Some(req.id), e).into());
            return;
        }
        if self.upstream.len() >= self.config.max_in_flight {
            self.to_host
                .push_back(busy(req.id, self.config.max_in_flight, "host").into());
            return;
        }
        let mut revision = None;
        let kind = match &*req.method {
            "initialize" => {
                self.initialize_params = req.params.clone();
                Kind::Initialize {
                    offered: era::string_member(req.params.as_ref(), "protocolVersion")
                        .unwrap_or_default(),
                }
            }
            "server/discover" => {
                revision = era::request_revision(req.params.as_ref());
                Kind::Discover {
                    version: revision.clone().unwrap_or_default(),
                }
            }
            _ => {
                // Each 2026-07-28 request names its revision; it is read
                // until the server has answered one at it (a host that
                // moves to another revision probes again first), so the
                // scan is not paid on every request.
                if matches!(
                    self.agreed,
                    Agreed::Unknown
                        | Agreed::Modern {
                            confirmed: false,
                            ..
                        }
                ) {
                    revision = era::request_revision(req.params.as_ref());
                }
                Kind::Other
            }
        };
        if !matches!(self.agreed, Agreed::Legacy { .. })
            && let Some(v) = revision
                .as_deref()
                .and_then(ProtocolVersion::parse)
                .filter(|v| v.era() == Era::Modern)
            && !matches!(self.agreed, Agreed::Modern { version, .. } if version == v)
        {
            self.agreed = Agreed::Modern {
                version: v,
                confirmed: false,
            };
            self.to_server.push_back(ToServer::ProtocolVersion(v));
        }
        let theirs = std::mem::replace(&mut req.id, RequestId::Number(0));
        req.id = self.upstream.insert(Some(theirs), kind);
        self.to_server.push_back(ToServer::Message(req.into()));
    }

    /// A scoped error reading the host (one frame it sent could not be
    /// decoded), or a terminal one (its side broke: as
    /// [`handle_host_closed`](Self::handle_host_closed)).
    pub fn handle_host_error(&mut self, e: TransportError) {
        if e.is_terminal() {
            tracing::debug!(error = %chain(&e), "the host's side failed");
            self.handle_host_closed();
            return;
        }
        match e.request_id().cloned() {
            // An answer to one of the server's requests, dropped: the
            // server learns its request failed.
            Some(id) if self.downstream.has_ours(&id) => {
                if let Some((theirs, _)) = self.downstream.answered(&id) {
                    let error = ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("mcp bridge: the host's answer was dropped: {}", chain(&e)),
                    );
                    self.to_server.push_back(ToServer::Message(
                        ErrorResponse::new(Some(theirs), error).into(),
                    ));
                }
            }
            // One of the host's requests (or nothing known): as a server
            // that could not read it answers.
            id => {
                let code = if id.is_some() {
                    ErrorCode::INVALID_REQUEST
                } else {
                    ErrorCode::PARSE_ERROR
                };
                let error = ErrorObject::new(code, format!("mcp bridge: {}", chain(&e)));
                self.to_host.push_back(ErrorResponse::new(id, error).into());
            }
        }
    }

    /// The host closed its side: nothing more goes to it, and the server's
    /// connection is closed once what is queued for it was sent.
    pub fn handle_host_closed(&mut self) {
        if self.host_done {
            return;
        }
        self.host_done = true;
        self.to_host.clear();
        self.downstream.drain().for_each(drop);
        self.end.get_or_insert(RelayEnd::HostClosed);
    }

    /// A message from the server.
    pub fn handle_server(&mut self, msg: Message) {
        if self.server_done || self.host_done {
            return;
        }
        match msg {
            Message::Request(mut req) => {
                if self.downstream.has_theirs(&req.id) {
                    let e = ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        format!("mcp bridge: request id {} is already in flight", req.id),
                    );
                    self.to_server.push_back(ToServer::Message(
                        ErrorResponse::new(Some(req.id), e).into(),
                    ));
                    return;
                }
                if self.downstream.len() >= self.config.max_in_flight {
                    let e = busy(req.id, self.config.max_in_flight, "server");
                    self.to_server.push_back(ToServer::Message(e.into()));
                    return;
                }
                let theirs = std::mem::replace(&mut req.id, RequestId::Number(0));
                req.id = self.downstream.insert(Some(theirs), Kind::Other);
                self.to_host.push_back(req.into());
            }
            Message::Notification(n) if n.method == "notifications/cancelled" => {
                if let Some(n) = cancel(n, &mut self.downstream) {
                    self.to_host.push_back(n.into());
                }
            }
            Message::Notification(n) => self.to_host.push_back(n.into()),
            Message::Response(mut r) => {
                let Some((theirs, kind)) = self.upstream.answered(&r.id) else {
                    tracing::debug!(id = %r.id, "the server answered a request nobody waits for; dropped");
                    return;
                };
                match kind {
                    Kind::Renewal => return self.renewed(Ok(&r.result)),
                    Kind::Initialize { .. } => self.initialized(&r.result),
                    Kind::Discover { .. } | Kind::Other => {
                        if let Agreed::Modern { confirmed, .. } = &mut self.agreed {
                            *confirmed = true;
                        }
                    }
                }
                r.id = theirs;
                self.to_host.push_back(r.into());
            }
            Message::Error(mut e) => {
                if let Some(id) = &e.id {
                    let Some((theirs, kind)) = self.upstream.answered(id) else {
                        tracing::debug!(%id, "the server answered a request nobody waits for; dropped");
                        return;
                    };
                    e.error = match kind {
                        Kind::Renewal => return self.renewed(Err(e.error)),
                        Kind::Initialize { offered } => era::initialize_refused(&offered, e.error),
                        Kind::Discover { version } => era::discover_refused(&version, e.error),
                        Kind::Other => match self.agreed {
                            Agreed::Modern {
                                version,
                                confirmed: false,
                            } => era::unconfirmed_modern(version, e.error),
                            _ => e.error,
                        },
                    };
                    e.id = Some(theirs);
                }
                self.to_host.push_back(e.into());
            }
            other => self.to_host.push_back(other),
        }
    }

    /// The server accepted the host's `initialize`: its revision goes to
    /// the transport before the host's `notifications/initialized`.
    fn initialized(&mut self, result: &RawJson) {
        let params = self.initialize_params.take();
        let chosen = era::string_member(Some(result), "protocolVersion");
        match chosen.as_deref().and_then(ProtocolVersion::parse) {
            Some(version) if version.era() == Era::Legacy => {
                self.agreed = Agreed::Legacy { version, params };
                self.to_server.push_back(ToServer::ProtocolVersion(version));
            }
            _ => tracing::warn!(
                version = chosen.as_deref().unwrap_or("none"),
                "the server's initialize result names a revision mcp does not know; the \
                 transport keeps its defaults"
            ),
        }
    }

    /// An error from the server's transport: scoped to one request (that
    /// request is answered with it), the session's end (a new one is
    /// started), or terminal (as [`handle_server_closed`](Self::handle_server_closed)).
    pub fn handle_server_error(&mut self, e: TransportError) {
        if self.server_done || self.host_done {
            return;
        }
        if e.is_unknown_answer() {
            // Any request in flight may have been the one it answered.
            let why = format!(
                "mcp bridge: an answer from the server was dropped: {}",
                chain(&e)
            );
            self.fail_upstream(&why);
            return;
        }
        if let Some(id) = e.request_id().cloned() {
            match self.upstream.answered(&id) {
                Some((theirs, kind)) => {
                    let error = match kind {
                        Kind::Renewal => {
                            let error = ErrorObject::new(
                                ErrorCode::INTERNAL_ERROR,
                                format!("the new session's initialize failed: {}", chain(&e)),
                            );
                            return self.renewed(Err(error));
                        }
                        Kind::Discover { version } if e.kind() == TransportErrorKind::Protocol => {
                            era::discover_refused_by_transport(&version, &chain(&e).to_string())
                        }
                        _ if e.kind() == TransportErrorKind::SessionExpired => ErrorObject::new(
                            ErrorCode::INTERNAL_ERROR,
                            "mcp bridge: the server ended its session before it ran this \
                             request; a new session is being started: send it again",
                        ),
                        _ => ErrorObject::new(
                            ErrorCode::INTERNAL_ERROR,
                            format!("mcp bridge: {}", chain(&e)),
                        ),
                    };
                    self.to_host
                        .push_back(ErrorResponse::new(Some(theirs), error).into());
                }
                // A request of the server's that its transport dropped:
                // the server learns it failed.
                None if e.kind() == TransportErrorKind::Decode => {
                    let error = ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        format!("mcp bridge: {}", chain(&e)),
                    );
                    self.to_server.push_back(ToServer::Message(
                        ErrorResponse::new(Some(id), error).into(),
                    ));
                }
                None => {
                    tracing::debug!(error = %chain(&e), "an error about a request nobody waits for")
                }
            }
            return;
        }
        match e.kind() {
            TransportErrorKind::SessionExpired => self.renew(),
            _ if e.is_terminal() => self.handle_server_closed(Some(e)),
            _ => tracing::warn!(error = %chain(&e), "the server's transport"),
        }
    }

    /// The server's side ended, cleanly (`None`) or not: every request the
    /// host has in flight is answered with an error, and what is queued for
    /// the host is sent before its side is closed.
    pub fn handle_server_closed(&mut self, cause: Option<TransportError>) {
        if self.server_done {
            return;
        }
        let why = match &cause {
            Some(e) => format!(
                "mcp bridge: the connection to the server was lost: {}",
                chain(e)
            ),
            None => "mcp bridge: the server closed the connection".to_owned(),
        };
        self.fail_upstream(&why);
        self.server_done = true;
        self.to_server.clear();
        self.downstream.drain().for_each(drop);
        self.end.get_or_insert(RelayEnd::ServerClosed(cause));
    }

    /// The server ended the legacy session: start a new one with the
    /// host's `initialize` as it was sent.
    fn renew(&mut self) {
        if self.renewing {
            return;
        }
        let Agreed::Legacy {
            params: Some(params),
            ..
        } = &self.agreed
        else {
            tracing::warn!(
                "the server ended a session the relay cannot start again (no initialize seen)"
            );
            return;
        };
        tracing::info!("the server ended the session; starting a new one");
        let params = params.clone();
        let id = self.upstream.insert(None, Kind::Renewal);
        self.renewing = true;
        self.to_server.push_back(ToServer::Message(
            Request::new(id, "initialize", Some(params)).into(),
        ));
    }

    /// The answer to the relay's own `initialize`.
    fn renewed(&mut self, result: Result<&RawJson, ErrorObject>) {
        self.renewing = false;
        let Agreed::Legacy { version, .. } = self.agreed else {
            return;
        };
        let failure = match result {
            Ok(raw) => {
                let got = era::string_member(Some(raw), "protocolVersion");
                if got.as_deref() == Some(version.as_str()) {
                    self.to_server.push_back(ToServer::ProtocolVersion(version));
                    self.to_server.push_back(ToServer::Message(
                        Notification::new("notifications/initialized", None).into(),
                    ));
                    return;
                }
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "the server started the new session at revision {} instead of {version}",
                        got.as_deref().unwrap_or("(none)")
                    ),
                )
            }
            Err(e) => e,
        };
        let why = format!(
            "mcp bridge: the server ended the session and refused a new one: {}",
            failure.message
        );
        self.fail_upstream(&why);
        self.server_done = true;
        self.to_server.clear();
        self.end.get_or_insert(RelayEnd::SessionLost(failure));
    }

    /// Answers every request the host has in flight with `why`.
    fn fail_upstream(&mut self, why: &str) {
        for (theirs, kind) in self.upstream.drain() {
            if kind == Kind::Renewal {
                continue;
            }
            let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, why.to_owned());
            self.to_host
                .push_back(ErrorResponse::new(Some(theirs), error).into());
        }
    }
}

/// The error for a request over [`RelayConfig::max_in_flight`].
fn busy(id: RequestId, limit: usize, side: &str) -> ErrorResponse {
    let e = ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "mcp bridge: the {side} has {limit} requests in flight (the limit); this one was \
             not sent"
        ),
    );
    ErrorResponse::new(Some(id), e)
}

/// A `notifications/cancelled` with its `requestId` mapped to the id the
/// request went out with; `None` when that request is not in flight (it
/// was answered already: nothing to cancel).
fn cancel(mut n: Notification, requests: &mut Requests) -> Option<Notification> {
    let mut params: serde_json::Map<String, serde_json::Value> =
        n.params.as_ref().and_then(|p| p.decode().ok())?;
    let theirs: RequestId = serde_json::from_value(params.get("requestId")?.clone()).ok()?;
    let ours = requests.cancelled(&theirs)?;
    params.insert("requestId".into(), ours.to_value());
    n.params = RawJson::from_value(&params).ok();
    Some(n)
}
