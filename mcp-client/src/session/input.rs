//! The session's input: messages, transport errors, the end of the
//! transport, and timeouts.

use std::borrow::Cow;
use std::time::Instant;

use mcp_proto::jsonrpc::{Message, RequestId};
use mcp_proto::transport::{TransportError, TransportErrorKind};

use super::calls::Purpose;
use super::core::Phase;
use super::era::HintState;
use super::wire::empty_object;
use super::{CallId, Event, Now, Session};
use crate::error::{ClientError, CloseReason, HandshakeError};
use mcp_proto::{ErrorCode, ErrorObject};

impl Session {
    // ---- input ----------------------------------------------------------

    /// Feeds one message the transport received at `now` (an [`Instant`],
    /// or a function that reads the clock: see [`Now`]).
    pub fn handle_message(&mut self, msg: Message, now: impl Now) {
        if self.is_closed() {
            return;
        }
        match msg {
            Message::Response(r) => self.on_response(r.id, Ok(r.result), now),
            Message::Error(e) => match e.id {
                Some(id) => self.on_response(id, Err(e.error), now),
                None => {
                    tracing::warn!(error = %e.error, "server sent an error response without an id; dropped")
                }
            },
            Message::Notification(n) => self.on_notification(n, now.now()),
            Message::Request(r) => {
                if r.method == "ping" {
                    self.answer(r.id, Ok(empty_object()));
                } else if self.server_requests.contains(&r.id) {
                    tracing::warn!(id = %r.id, "the server reused the id of a request still being answered; refused");
                    let e = ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        "a request with this id is still being answered",
                    );
                    self.answer(r.id, Err(e));
                } else if self.server_requests.len() >= self.config.max_server_requests {
                    tracing::warn!(method = %r.method, limit = self.config.max_server_requests, "too many server requests being answered; answering busy");
                    let busy = ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!(
                            "client busy: {} requests of the server are being answered (limit: max_server_requests)",
                            self.config.max_server_requests
                        ),
                    );
                    self.answer(r.id, Err(busy));
                } else {
                    self.server_requests.insert(r.id.clone());
                    self.events.push_back(Event::ServerRequest(r));
                }
            }
            _ => {}
        }
    }

    /// Feeds an error from the transport's receive side.
    pub fn handle_transport_error(&mut self, err: TransportError, now: Instant) {
        if self.is_closed() {
            return;
        }
        if let Some((id, code)) = err.refused_request() {
            // The server waits for an answer to its request: JSON-RPC's
            // error for what was wrong with it, the cause as its message.
            let why = match err.cause() {
                Some(c) => mcp_proto::error::chain(c).to_string(),
                None => err.to_string(),
            };
            tracing::warn!(%id, code = code.0, error = %why, "the server sent a request that could not be read; answered with an error");
            let error = ErrorObject::new(code, why);
            let id = id.clone();
            self.answer(id.clone(), Err(error.clone()));
            self.events
                .push_back(Event::ServerRequestRefused { id, error });
        } else if err.is_unknown_answer() {
            self.fail_every_waiting_call(&err, now);
        } else if let Some(id) = err.request_id().cloned() {
            self.fail_request(&id, err, now);
        } else if err.kind() == TransportErrorKind::SessionExpired {
            self.on_session_lost(err, now);
        } else if err.is_terminal() {
            self.handle_closed(CloseReason::Transport(err));
        } else {
            tracing::warn!(error = %mcp_proto::error::chain(&err), "skipped an undecodable message from the server");
        }
    }

    /// The request `id` failed in the transport (or its answer was dropped).
    fn fail_request(&mut self, id: &RequestId, err: TransportError, now: Instant) {
        {
            let Some(mut p) = self.pending.remove(id) else {
                tracing::debug!(%id, error = %mcp_proto::error::chain(&err), "transport error for an unknown request; dropped");
                return;
            };
            // Credentials are refused whatever the revision: asking again
            // with `initialize` would only run the authorization again (a
            // second browser login).
            let unauthorized = err.kind() == TransportErrorKind::Unauthorized;
            // A server that refused the probe for now (429/503, past what
            // the transport retries) said nothing about its era.
            let throttled = err.kind() == TransportErrorKind::Throttled;
            if !matches!(p.purpose, Purpose::User(_)) {
                self.fail_handshake(p.trace, &p.method, ClientError::Transport(err.clone()));
                p.trace = None;
            }
            match p.purpose {
                Purpose::Probe if unauthorized || throttled => {
                    self.handle_closed(CloseReason::Transport(err));
                }
                Purpose::Probe => {
                    tracing::debug!(error = %mcp_proto::error::chain(&err), "server/discover probe failed in the transport; falling back to initialize");
                    let cause = HandshakeError::Transport {
                        method: "server/discover",
                        error: err,
                    };
                    self.probe_failed(cause, now);
                }
                Purpose::Initialize => {
                    if self.hint == HintState::Legacy
                        && err.kind() != TransportErrorKind::Closed
                        && !unauthorized
                    {
                        self.redetect(
                            &format!(
                                "initialize failed in the transport: {}",
                                mcp_proto::error::chain(&err)
                            ),
                            now,
                        );
                    } else {
                        self.handle_closed(CloseReason::Transport(err));
                    }
                }
                Purpose::User(call) if err.is_dropped_answer() => {
                    // The server answered: nothing to retry, no era to doubt.
                    let e = ClientError::AnswerDropped {
                        method: p.method.to_string(),
                        error: err,
                    };
                    self.complete(call, p.trace, &p.method, Err(e));
                }
                Purpose::User(call) => {
                    if self.retry_if_hint_failed(
                        call,
                        &p,
                        &mcp_proto::error::chain(&err).to_string(),
                    ) {
                        self.requeue(call, p, now);
                    } else if err.kind() == TransportErrorKind::SessionExpired
                        && p.retained
                        && !p.resent
                    {
                        self.resend_after_expiry(call, p, now);
                    } else {
                        self.complete(call, p.trace, &p.method, Err(ClientError::Transport(err)));
                    }
                }
            }
        }
    }

    /// A dropped frame that may have answered any pending request (its id
    /// could not be learned): every call waiting for an answer fails with
    /// it, since any of them may have been the one and none would ever hear
    /// otherwise (see `mcp-transport-stdio`'s codec docs). A pending
    /// handshake fails as if its own answer had been dropped.
    fn fail_every_waiting_call(&mut self, err: &TransportError, now: Instant) {
        tracing::warn!(error = %mcp_proto::error::chain(err), "a dropped message may have answered any pending request; failing them all");
        let mut ids: Vec<(RequestId, CallId)> = Vec::new();
        let mut handshake = None;
        for (id, p) in &self.pending {
            match p.purpose {
                Purpose::User(call) => ids.push((id.clone(), call)),
                Purpose::Probe | Purpose::Initialize => handshake = Some(id.clone()),
            }
        }
        ids.sort_by_key(|(_, call)| *call);
        for (id, call) in ids {
            if let Some(p) = self.pending.remove(&id) {
                let e = ClientError::AnswerDropped {
                    method: p.method.to_string(),
                    error: err.clone(),
                };
                self.complete(call, p.trace, &p.method, Err(e));
            }
        }
        if let Some(id) = handshake {
            self.fail_request(&id, err.clone(), now);
        }
    }

    /// The transport's receive side ended. `None`: a clean close.
    pub fn handle_closed(&mut self, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let err = ClientError::Closed(reason.clone());
        self.phase = Phase::Closed(reason.clone());
        self.server_requests.clear();
        self.next_deadline = None;
        type Trace = Option<Box<crate::telemetry::Call>>;
        let mut calls: Vec<(CallId, Trace, Cow<'static, str>)> = Vec::new();
        for (_, p) in self.pending.drain() {
            match p.purpose {
                Purpose::User(c) => calls.push((c, p.trace, p.method)),
                _ => {
                    if let Some(t) = p.trace {
                        let outcome = crate::telemetry::Outcome::Failed(&err);
                        t.finish(&self.telemetry, &p.method, outcome);
                    }
                }
            }
        }
        calls.extend(self.queued.drain(..).map(|d| (d.call, d.trace, d.method)));
        calls.extend(
            self.awaiting_input
                .drain()
                .map(|(c, (d, _))| (c, d.trace, d.method)),
        );
        calls.sort_by_key(|(call, _, _)| *call);
        for (call, trace, method) in calls {
            self.complete(call, trace, &method, Err(err.clone()));
        }
        self.telemetry.closed(&reason);
        self.events.push_back(Event::Closed(reason));
    }

    /// Expires every deadline at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.is_closed() {
            self.next_deadline = None;
            return;
        }
        self.expire(now);
        self.next_deadline = self.earliest_deadline();
    }

    fn expire(&mut self, now: Instant) {
        let expired: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            let Some(mut p) = self.pending.remove(&id) else {
                continue;
            };
            if let (Purpose::Probe | Purpose::Initialize, Some(t)) = (p.purpose, p.trace.take()) {
                let e = ClientError::Timeout {
                    method: p.method.to_string(),
                    after: now.saturating_duration_since(p.started),
                };
                self.fail_handshake(Some(t), &p.method, e);
            }
            match p.purpose {
                Purpose::Probe => {
                    tracing::debug!(
                        "server/discover probe got no answer; falling back to initialize"
                    );
                    // A slow server may still answer it: that answer counts.
                    self.late_probe = Some(id);
                    let cause = HandshakeError::Timeout {
                        method: "server/discover",
                        after: now.saturating_duration_since(p.started),
                    };
                    self.probe_failed(cause, now);
                }
                Purpose::Initialize => {
                    self.handle_closed(CloseReason::Handshake(HandshakeError::Timeout {
                        method: "initialize",
                        after: self.config.handshake_timeout,
                    }));
                    return;
                }
                Purpose::User(call) => {
                    self.send_cancelled(id, Some("timeout".into()));
                    let e = ClientError::Timeout {
                        method: p.method.to_string(),
                        after: now.saturating_duration_since(p.started),
                    };
                    self.complete(call, p.trace, &p.method, Err(e));
                }
            }
        }
        // Calls still waiting for the session to (re)start: never sent.
        while let Some(pos) = self
            .queued
            .iter()
            .position(|d| d.deadline.is_some_and(|t| t <= now))
        {
            if let Some(d) = self.queued.remove(pos) {
                let e = ClientError::Timeout {
                    method: d.method.to_string(),
                    after: now.saturating_duration_since(d.started),
                };
                self.complete(d.call, d.trace, &d.method, Err(e));
            }
        }
    }
}
