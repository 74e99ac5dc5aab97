//! What the driver does with the session's events.

use mcp_proto::jsonrpc::Notification;
use mcp_proto::method::{
    NotificationMethod, Progress, PromptListChanged, ResourceListChanged, ToolListChanged,
};
use mcp_proto::{ProtocolVersion, RawJson};

use super::driver::Io;
use super::mcp_task::receiver::Served;
use super::mcp_task::requester::{TASK_STATUS, TASK_STATUS_MODERN, on_status_notification};
use super::{Answer, Inner, ListKind, State};
use crate::error::ClientError;
use crate::session::Event;

impl Io {
    /// Acts on every event the session has queued.
    pub(super) fn drain_events(&mut self, inner: &Inner, st: &mut State) {
        while let Some(ev) = st.session.poll_event() {
            self.on_event(inner, st, ev);
        }
    }

    fn on_event(&mut self, inner: &Inner, st: &mut State, ev: Event) {
        match ev {
            Event::Ready => {
                if let Some((cache, key, _)) = &self.era_cache {
                    if let Some(learned) = st.session.learned_era() {
                        cache.insert(key.clone(), learned.clone());
                    }
                }
                for r in st.ready_waiters.drain(..) {
                    let _ = r.send(Ok(()));
                }
            }
            Event::Completed { call, result } => {
                if let Some(w) = st.waiters.get_mut(&call) {
                    self.wakes.extend(w.answer(Answer::of(result)));
                }
            }
            Event::TaskCreated { call, handle } => {
                if let Some(w) = st.waiters.get_mut(&call) {
                    self.wakes.extend(w.answer(Answer::Task(handle)));
                }
            }
            Event::Progress { call, progress } => {
                match st.waiters.get(&call).and_then(|w| w.progress.clone()) {
                    // Called once the lock is released.
                    Some(cb) => self.deferred.push((cb, progress)),
                    // No callback of its own: the handler's `on_progress`.
                    None => {
                        let params = RawJson::from_value(&progress).ok();
                        self.handler_tasks
                            .notify(Notification::new(Progress::NAME, params));
                    }
                }
            }
            Event::InputRequired { call, requests } => self.handler_tasks.input(call, requests),
            Event::ServerRequest(req) => {
                let tasks_era = st
                    .session
                    .server()
                    .is_some_and(|s| s.protocol_version == ProtocolVersion::V2025_11_25);
                match self
                    .task_receiver
                    .serve(req, tasks_era, &mut self.handler_tasks)
                {
                    Served::Plain(req) => self.handler_tasks.answer(req),
                    Served::Answered { answers, status } => {
                        for (id, answer) in answers {
                            st.session.respond(id, answer);
                        }
                        if let Some(status) = status {
                            // Optional in the spec: dropped if the outbound backlog is full.
                            let _ = st.session.notify(TASK_STATUS, Some(status));
                        }
                    }
                }
            }
            Event::ServerRequestCancelled(id) => {
                if !self.handler_tasks.cancel(&id) {
                    // A `tasks/result` waiting for its task, if anything.
                    self.task_receiver.forget_waiter(&id);
                }
            }
            Event::ServerRequestRefused { error, .. } => self.handler_tasks.refused(error),
            Event::Notification(n) => {
                let kind = match &*n.method {
                    ToolListChanged::NAME => Some(ListKind::Tools),
                    ResourceListChanged::NAME => Some(ListKind::Resources),
                    PromptListChanged::NAME => Some(ListKind::Prompts),
                    _ => None,
                };
                if let Some(kind) = kind {
                    inner.changes(kind).send_modify(|v| *v += 1);
                } else if (n.method == TASK_STATUS || n.method == TASK_STATUS_MODERN)
                    && !st.task_watch.is_empty()
                {
                    on_status_notification(st, n.params.as_ref());
                }
                self.handler_tasks.notify(n);
            }
            Event::Closed(reason) => {
                if let Some((cache, key, used_hint)) = &self.era_cache {
                    if *used_hint && st.session.learned_era().is_none() {
                        // The remembered era failed and detection did not
                        // finish: the next connection starts from scratch.
                        cache.remove(key);
                    }
                }
                let err = ClientError::Closed(reason);
                for r in st.ready_waiters.drain(..) {
                    let _ = r.send(Err(err.clone()));
                }
                // Calls waiting for room fail now; the session already
                // failed every call it had.
                inner.slots.close();
                // Handles waiting for a status notification poll instead.
                st.task_watch.clear();
                inner.closed.notify_waiters();
            }
        }
    }
}
