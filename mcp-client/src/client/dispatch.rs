//! What the driver does with callers' commands and the session's events.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_proto::jsonrpc::Notification;
use mcp_proto::method::{
    NotificationMethod, Progress, PromptListChanged, ResourceListChanged, ToolListChanged,
};
use mcp_proto::{ErrorObject, RawJson};

use super::driver::{DriverCore, DriverState, Waiter, now};
use super::{Command, ListKind};
use crate::error::ClientError;
use crate::session::Event;
use crate::session::empty_object as empty;

/// How many server-to-client requests (legacy era) may be handled at once;
/// more are answered at once with an error (-32603, "client busy").
pub const MAX_CONCURRENT_SERVER_REQUESTS: usize = 64;

impl DriverCore {
    pub(super) fn on_command(&mut self, cmd: Command) {
        let now = now();
        match cmd {
            Command::Request {
                call,
                method,
                params,
                embedded,
                options,
                progress,
                reply,
            } => {
                match self
                    .session
                    .request_embedded(call, method, params, options, embedded, now)
                {
                    Ok(()) => {
                        self.waiters.insert(call, Waiter { reply, progress });
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
            Command::WaitReady(reply) => {
                if self.ready {
                    let _ = reply.send(Ok(empty()));
                } else if let Some(err) = self.closed_error() {
                    let _ = reply.send(Err(err));
                } else {
                    self.ready_waiters.push(reply);
                }
            }
            Command::Cancel(call, reason) => {
                if self.waiters.remove(&call).is_some() {
                    let reason = reason
                        .as_deref()
                        .unwrap_or("the caller dropped the request");
                    self.session.cancel(call, Some(reason));
                }
            }
            Command::Notify { method, params } => {
                let _ = self.session.notify(method, params);
            }
            Command::Respond { id, result } => self.session.respond(id, result),
            Command::Input { call, responses } => self.session.provide_input(call, responses, now),
            Command::SetLogLevel(level) => {
                self.session.set_log_level(level);
                self.publish_meta();
            }
            Command::Close(tx) => {
                self.close_waiters.push(tx);
                self.session.close();
            }
        }
    }

    /// Hands a notification to the handler's task (started by the first).
    fn queue_notification(&mut self, n: Notification) {
        let tx = match &self.notifications {
            Some(tx) => tx,
            None => {
                // Only the driver's poll gets here, inside the runtime.
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                runtime.spawn(super::notifications::notification_loop(
                    rx,
                    self.handler.clone(),
                    self.backlog.clone(),
                ));
                self.notifications.insert(tx)
            }
        };
        if tx.send(Box::new(n)).is_ok() {
            self.backlog.push();
        }
    }

    fn publish_meta(&self) {
        if let Some(shared) = self.shared.upgrade() {
            if let Ok(mut g) = shared.meta.write() {
                *g = self
                    .session
                    .request_meta_members()
                    .and_then(|(v, m)| super::MetaTemplate::new(v, m))
                    .map(Arc::new);
            }
        }
    }

    fn closed_error(&self) -> Option<ClientError> {
        if self.session.is_closed() {
            self.shared.upgrade().map(|s| s.closed_error())
        } else {
            None
        }
    }

    pub(super) fn on_event(&mut self, ev: Event) {
        match ev {
            Event::Ready => {
                // `ready` is set once the transport has flushed what the
                // session queued with this event (`poll_transmit`): a
                // connect over HTTP returns when the server has accepted
                // `notifications/initialized`, as the TypeScript SDK's does, and a
                // host connecting many sessions holds each one's connection
                // until then (BENCHMARKS.md, round twelve).
                self.ready_after_flush = true;
                if let (Some((cache, key)), Some(learned)) =
                    (&self.era_cache, self.session.learned_era())
                {
                    cache.insert(key.clone(), learned.clone());
                }
                self.publish_meta();
                if let (Some(shared), Some(info)) =
                    (self.shared.upgrade(), self.session.server_shared())
                {
                    if let Ok(mut g) = shared.server.write() {
                        *g = Some(info.clone());
                    }
                }
            }
            Event::Completed { call, result } => {
                if let Some(w) = self.waiters.remove(&call) {
                    let _ = w.reply.send(result);
                    self.answered += 1;
                }
            }
            Event::Progress { call, progress } => {
                match self.waiters.get(&call).and_then(|w| w.progress.clone()) {
                    // Called by `Driver::poll` once the lock is released.
                    Some(cb) => self.deferred.push((cb, progress)),
                    // No callback of its own: the handler's `on_progress`.
                    None => {
                        let params = RawJson::from_value(&progress).ok();
                        self.queue_notification(Notification::new(Progress::NAME, params));
                    }
                }
            }
            Event::InputRequired { call, requests } => {
                let handler = self.handler.clone();
                let caps = self.capabilities.clone();
                let commands = self.shared.upgrade().map(|s| s.commands.clone());
                tokio::spawn(async move {
                    let mut responses = mcp_proto::schema::InputResponses::new();
                    for (key, req) in requests {
                        let method = req.method.clone();
                        match handler
                            .clone()
                            .answer(caps.clone(), req.method, req.params)
                            .await
                        {
                            Ok(v) => {
                                responses.insert(key, v);
                            }
                            Err(e) => {
                                tracing::warn!(%method, error = %e, "could not answer an input request; retrying without it");
                            }
                        }
                    }
                    if let Some(c) = commands {
                        let _ = c.send(Box::new(Command::Input { call, responses }));
                    }
                });
            }
            Event::ServerRequest(req) => {
                if self.server_requests.load(Ordering::Acquire) >= MAX_CONCURRENT_SERVER_REQUESTS {
                    tracing::warn!(method = %req.method, "too many server requests in flight; answering busy");
                    let busy = ErrorObject::new(
                        mcp_proto::ErrorCode::INTERNAL_ERROR,
                        format!(
                            "client busy: more than {MAX_CONCURRENT_SERVER_REQUESTS} requests in flight"
                        ),
                    );
                    self.session.respond(req.id, Err(busy));
                    return;
                }
                self.server_requests.fetch_add(1, Ordering::AcqRel);
                let in_flight = self.server_requests.clone();
                let handler = self.handler.clone();
                let caps = self.capabilities.clone();
                let commands = self.shared.upgrade().map(|s| s.commands.clone());
                tokio::spawn(async move {
                    let result = handler
                        .answer(caps, req.method.into_owned(), req.params)
                        .await
                        .and_then(|v| {
                            RawJson::from_value(&v).map_err(|e| {
                                ErrorObject::new(
                                    mcp_proto::ErrorCode::INTERNAL_ERROR,
                                    e.to_string(),
                                )
                            })
                        });
                    in_flight.fetch_sub(1, Ordering::AcqRel);
                    if let Some(c) = commands {
                        let _ = c.send(Box::new(Command::Respond { id: req.id, result }));
                    }
                });
            }
            Event::Notification(n) => {
                let kind = match &*n.method {
                    ToolListChanged::NAME => Some(ListKind::Tools),
                    ResourceListChanged::NAME => Some(ListKind::Resources),
                    PromptListChanged::NAME => Some(ListKind::Prompts),
                    _ => None,
                };
                if let (Some(kind), Some(shared)) = (kind, self.shared.upgrade()) {
                    shared.changes(kind).send_modify(|v| *v += 1);
                }
                self.queue_notification(n);
            }
            Event::Closed(reason) => {
                if let Some((cache, key)) = &self.era_cache {
                    if self.used_hint && self.session.learned_era().is_none() {
                        // The remembered era failed and detection did not
                        // finish: the next connection starts from scratch.
                        cache.remove(key);
                    }
                }
                if let Some(shared) = self.shared.upgrade() {
                    shared.closed.send_replace(Some(reason.clone()));
                }
                let err = ClientError::Closed(reason);
                self.ready_after_flush = false;
                for r in self.ready_waiters.drain(..) {
                    let _ = r.send(Err(err.clone()));
                }
                for (_, w) in self.waiters.drain() {
                    let _ = w.reply.send(Err(err.clone()));
                }
                self.state = DriverState::Closing;
            }
        }
    }
}
