//! A task's protocol state, without IO: what a requester knows about a task
//! the server runs, and when it may next ask. Both wire forms: the
//! 2025-11-25 core tasks and the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks` ([`TaskTracker::for_era`]).
//!
//! [`TaskTracker`] takes every status the server reports (a `tasks/get`
//! answer, or a `notifications/tasks/status` / `notifications/tasks`), and
//! says what to do next ([`TaskTracker::next`]): wait until an instant, poll
//! now, fetch the result (2025-11-25) or answer the server's input requests
//! (2026-07-28), or give up. Its owner does the IO and passes the time in,
//! so every state and transition is testable without a clock or a server.
//!
//! Invariants:
//! - Polls are never closer together than the server's `pollInterval`
//!   (or [`DEFAULT_POLL_INTERVAL`] when it gave none, never below
//!   [`MIN_POLL_INTERVAL`]); each poll that brings no change stretches the
//!   interval by half, up to [`MAX_POLL_INTERVAL`] (or the server's
//!   interval if that is longer). A change sets it back to the server's.
//! - A terminal status (`completed`, `failed`, `cancelled`) is final: a
//!   later report of another status is ignored.
//! - A report for another task id, or an id that is empty or longer than
//!   [`MAX_TASK_ID_LEN`], is refused: the state does not change.
//! - The caller's deadline and the task's `ttl` (counted from when the
//!   tracker learned of the task) bound the wait: past either,
//!   [`TaskNext::DeadlinePassed`] / [`TaskNext::Expired`].
//! - The tracker holds one [`Task`] (the latest): a flood of status reports
//!   costs time, not memory.
//! - 2026-07-28: a terminal report carries its outcome inline (`completed`
//!   its `result`, `failed` its `error`); one without is refused
//!   ([`TaskReportError::NoOutcome`]). Each `inputRequests` key is handed out
//!   once over the task's life ([`TaskTracker::take_input_requests`]; the
//!   spec makes keys unique per task, and a server repeats outstanding ones
//!   on every poll until its state reflects the answer); at most
//!   [`MAX_TASK_INPUT_KEYS`] keys per task are remembered, and a task that
//!   asks for more is refused ([`TaskReportError::TooManyInputRequests`]).

use std::time::{Duration, Instant};

use std::collections::HashSet;

use mcp_proto::Era;
use mcp_proto::schema::{InputRequest, Task, TaskStatus};

/// The interval between polls when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest interval between polls, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest interval backoff reaches (unless the server asks for longer).
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);
/// The longest task id accepted from a server, in bytes.
pub const MAX_TASK_ID_LEN: usize = 1024;
/// How many distinct `inputRequests` keys one task (2026-07-28) may use
/// over its life: the keys already answered are remembered so that none is
/// put to the user twice.
pub const MAX_TASK_INPUT_KEYS: usize = 1024;

/// What to do next about a task.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskNext {
    /// Nothing before this instant (unless a status notification arrives).
    WaitUntil(Instant),
    /// Ask the server for the task's status now (`tasks/get`).
    Poll,
    /// The task needs input (`input_required`, 2025-11-25): ask for its
    /// result (`tasks/result`), which is how the server delivers its requests.
    FetchInput,
    /// The task needs input (`input_required`, 2026-07-28) and named
    /// requests not answered yet: take them with
    /// [`TaskTracker::take_input_requests`], answer them and send the
    /// answers with `tasks/update`.
    AnswerInput,
    /// The task finished with this status: fetch its result (`completed`,
    /// `failed`) or report it (`cancelled`).
    Finished(TaskStatus),
    /// The caller's deadline passed before the task finished: cancel it.
    DeadlinePassed,
    /// The task's ttl passed before it finished: the server may have
    /// deleted it.
    Expired,
}

/// Why a status report was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskReportError {
    /// The report is about another task.
    #[error("a status for task {got:?} where {expected:?} was expected")]
    OtherTask {
        /// The tracked task.
        expected: String,
        /// The id in the report (at most its first 64 characters).
        got: String,
    },
    /// The task id is empty or over [`MAX_TASK_ID_LEN`] bytes.
    #[error("a task id of {len} bytes (must be 1..={MAX_TASK_ID_LEN})")]
    BadId {
        /// The id's length in bytes.
        len: usize,
    },
    /// A 2026-07-28 task reported `completed` without its `result`, or
    /// `failed` without its `error`: its outcome is lost.
    #[error("task {task_id} reported {status} without its outcome (`result` or `error`)")]
    NoOutcome {
        /// The task.
        task_id: String,
        /// The status it reported.
        status: TaskStatus,
    },
    /// A 2026-07-28 task asked for more than [`MAX_TASK_INPUT_KEYS`]
    /// distinct input requests.
    #[error("task {task_id} asked for more than {MAX_TASK_INPUT_KEYS} input requests")]
    TooManyInputRequests {
        /// The task.
        task_id: String,
    },
}

/// Checks a task id a server sent.
pub fn check_task_id(id: &str) -> Result<(), TaskReportError> {
    if id.is_empty() || id.len() > MAX_TASK_ID_LEN {
        return Err(TaskReportError::BadId { len: id.len() });
    }
    Ok(())
}

/// A task's state as the requester knows it. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct TaskTracker {
    task: Task,
    /// The server's interval (clamped), the floor of every wait.
    floor: Duration,
    /// The current interval (the floor, stretched by polls without change).
    interval: Duration,
    /// When the last poll was answered, or the task learned of.
    last: Instant,
    /// When the tracker learned of the task.
    learned: Instant,
    deadline: Option<Instant>,
    expires: Option<Instant>,
    /// Set when [`TaskNext::FetchInput`] was returned for the current
    /// `input_required` spell: the result is asked for once per spell.
    input_fetched: bool,
    /// Which wire form the task speaks.
    era: Era,
    /// 2026-07-28: the `inputRequests` keys already handed out (at most
    /// [`MAX_TASK_INPUT_KEYS`]).
    answered: HashSet<String>,
}

impl TaskTracker {
    /// Starts tracking a 2025-11-25 `task` (as the server created it),
    /// learned of at `now`, to be given up at `deadline`.
    pub fn new(
        task: Task,
        now: Instant,
        deadline: Option<Instant>,
    ) -> Result<Self, TaskReportError> {
        Self::for_era(task, Era::Legacy, now, deadline)
    }

    /// Starts tracking `task` in the wire form of `era`: [`Era::Legacy`] is
    /// the 2025-11-25 core tasks, [`Era::Modern`] the 2026-07-28 extension.
    pub fn for_era(
        task: Task,
        era: Era,
        now: Instant,
        deadline: Option<Instant>,
    ) -> Result<Self, TaskReportError> {
        check_task_id(&task.task_id)?;
        check_outcome(&task, era)?;
        let floor = server_interval(&task);
        // Clamped first: a ttl of u64::MAX ms once wrapped to "now" (the
        // task looked expired at once). Past a year from `now` cannot
        // overflow; should it, the task has no known expiry.
        let expires = task
            .ttl_millis()
            .and_then(|ms| now.checked_add(server_duration(ms)));
        Ok(TaskTracker {
            task,
            floor,
            interval: floor,
            last: now,
            learned: now,
            deadline,
            expires,
            input_fetched: false,
            era,
            answered: HashSet::new(),
        })
    }

    /// The wire form the task speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The latest state the server reported.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The interval the next wait uses.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// When the tracker learned of the task.
    pub fn started(&self) -> Instant {
        self.learned
    }

    /// When the caller's deadline passes, if it set one.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// When the task's ttl runs out, if it has one.
    pub fn expires(&self) -> Option<Instant> {
        self.expires
    }

    /// Brings the expiry forward to `at` if that is sooner (a task resumed
    /// from a [ticket](crate::TaskTicket): its ttl ran from when it was
    /// created, not from when this tracker learned of it). Never later.
    pub fn expire_by(&mut self, at: Instant) {
        self.expires = Some(self.expires.map_or(at, |e| e.min(at)));
    }

    /// Takes a status report (a notification: it does not count as a
    /// poll). Returns whether the status or its message changed.
    pub fn report(&mut self, task: Task) -> Result<bool, TaskReportError> {
        if task.task_id != self.task.task_id {
            check_task_id(&task.task_id)?;
            return Err(TaskReportError::OtherTask {
                expected: self.task.task_id.clone(),
                got: task.task_id.chars().take(64).collect(),
            });
        }
        if self.task.status.is_terminal() {
            return Ok(false);
        }
        check_outcome(&task, self.era)?;
        let changed = task.status != self.task.status
            || task.status_message != self.task.status_message
            || (self.era == Era::Modern && !same_keys(&task, &self.task));
        if task.status != self.task.status {
            self.input_fetched = false;
        }
        // A later report may change the interval; never below the clamp.
        self.floor = server_interval(&task);
        if changed {
            self.interval = self.floor;
        }
        self.task = task;
        Ok(changed)
    }

    /// Takes the answer to a poll made at `now`: like [`report`](Self::report),
    /// and a poll without change stretches the interval.
    pub fn polled(&mut self, task: Task, now: Instant) -> Result<bool, TaskReportError> {
        let changed = self.report(task)?;
        self.last = now;
        if !changed {
            let stretched = self.interval.saturating_add(self.interval / 2);
            self.interval = stretched.min(MAX_POLL_INTERVAL.max(self.floor));
        }
        Ok(changed)
    }

    /// Marks the `tasks/result` call of this `input_required` spell as made
    /// (it ended without the final result): the next step is polling.
    pub fn input_fetched(&mut self, now: Instant) {
        self.input_fetched = true;
        self.last = now;
    }

    /// The input requests (2026-07-28) of the latest report not handed out
    /// before, now marked as handed out: each key is answered at most once
    /// over the task's life. Past [`MAX_TASK_INPUT_KEYS`] keys, an error
    /// (and nothing is handed out).
    pub fn take_input_requests(&mut self) -> Result<Vec<(String, InputRequest)>, TaskReportError> {
        if self.task.status != TaskStatus::InputRequired {
            return Ok(Vec::new());
        }
        let Some(requests) = &self.task.input_requests else {
            return Ok(Vec::new());
        };
        let fresh: Vec<(String, InputRequest)> = requests
            .iter()
            .filter(|(k, _)| !self.answered.contains(*k))
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        if self.answered.len() + fresh.len() > MAX_TASK_INPUT_KEYS {
            return Err(TaskReportError::TooManyInputRequests {
                task_id: self.task.task_id.clone(),
            });
        }
        self.answered.extend(fresh.iter().map(|(k, _)| k.clone()));
        Ok(fresh)
    }

    /// Whether the latest report names input requests not handed out yet.
    fn has_fresh_input(&self) -> bool {
        self.task
            .input_requests
            .as_ref()
            .is_some_and(|r| r.keys().any(|k| !self.answered.contains(k)))
    }

    /// What to do at `now`.
    pub fn next(&self, now: Instant) -> TaskNext {
        let status = &self.task.status;
        if status.is_terminal() {
            return TaskNext::Finished(status.clone());
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return TaskNext::DeadlinePassed;
        }
        if self.expires.is_some_and(|e| now >= e) {
            return TaskNext::Expired;
        }
        if *status == TaskStatus::InputRequired {
            match self.era {
                Era::Legacy if !self.input_fetched => return TaskNext::FetchInput,
                // Keys answered already wait for the server to take the
                // answers: polling goes on at the interval.
                Era::Modern if self.has_fresh_input() => return TaskNext::AnswerInput,
                _ => {}
            }
        }
        // The interval is clamped (`server_interval`): this cannot
        // overflow, so a huge `pollInterval` never makes a poll due at once.
        let Some(at) = self.last.checked_add(self.interval) else {
            return match [self.deadline, self.expires].into_iter().flatten().min() {
                Some(t) => TaskNext::WaitUntil(t),
                None => TaskNext::Poll,
            };
        };
        if now >= at {
            return TaskNext::Poll;
        }
        // Wake at the deadline or the expiry if either comes first.
        let at = [Some(at), self.deadline, self.expires]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(at);
        TaskNext::WaitUntil(at)
    }
}

/// Whether two reports name the same input requests.
fn same_keys(a: &Task, b: &Task) -> bool {
    let keys = |t: &Task| {
        t.input_requests
            .as_ref()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
    };
    keys(a) == keys(b)
}

/// A 2026-07-28 terminal report must carry its outcome inline.
fn check_outcome(task: &Task, era: Era) -> Result<(), TaskReportError> {
    let missing = era == Era::Modern
        && match task.status {
            TaskStatus::Completed => task.result.is_none(),
            TaskStatus::Failed => task.error.is_none(),
            _ => false,
        };
    if missing {
        return Err(TaskReportError::NoOutcome {
            task_id: task.task_id.chars().take(64).collect(),
            status: task.status.clone(),
        });
    }
    Ok(())
}

/// The server's `pollInterval`, clamped to at least [`MIN_POLL_INTERVAL`]
/// and at most [`MAX_SERVER_DURATION`].
fn server_interval(task: &Task) -> Duration {
    task.poll_interval_millis()
        .map_or(DEFAULT_POLL_INTERVAL, server_duration)
        .max(MIN_POLL_INTERVAL)
}

/// The longest a duration a server sends (a task's `ttl`, its
/// `pollInterval`) is taken as: a year. Clamped before any arithmetic, so
/// adding one to a time never overflows.
pub const MAX_SERVER_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// `ms` milliseconds from a server, at most [`MAX_SERVER_DURATION`].
fn server_duration(ms: u64) -> Duration {
    Duration::from_millis(ms).min(MAX_SERVER_DURATION)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn task(id: &str, status: &str, poll: Option<u64>, ttl: Option<u64>) -> Task {
        serde_json::from_value(json!({
            "taskId": id, "status": status, "pollInterval": poll, "ttl": ttl,
            "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z",
        }))
        .unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A `ttl` or `pollInterval` of u64::MAX ms is a year: the task does
    /// not look expired at once (the sum wrapped to "now"), and the next
    /// poll is not due at once, every time.
    #[test]
    fn huge_durations_from_the_server_are_clamped_before_arithmetic() {
        let t0 = Instant::now();
        let tr = TaskTracker::new(
            task("a", "working", Some(u64::MAX), Some(u64::MAX)),
            t0,
            None,
        )
        .unwrap();
        assert_eq!(tr.next(t0), TaskNext::WaitUntil(t0 + MAX_SERVER_DURATION));
        assert_eq!(
            tr.next(t0 + Duration::from_secs(3600)),
            TaskNext::WaitUntil(t0 + MAX_SERVER_DURATION)
        );
        let deadline = t0 + Duration::from_secs(10);
        let tr = TaskTracker::new(
            task("b", "working", Some(u64::MAX), Some(u64::MAX)),
            t0,
            Some(deadline),
        )
        .unwrap();
        assert_eq!(tr.next(t0), TaskNext::WaitUntil(deadline));
    }

    #[test]
    fn every_status_and_transition() {
        let t0 = Instant::now();
        let mut tr = TaskTracker::new(task("a", "working", Some(100), None), t0, None).unwrap();
        assert_eq!(tr.next(t0), TaskNext::WaitUntil(t0 + ms(100)));
        assert_eq!(tr.next(t0 + ms(100)), TaskNext::Poll);
        // working → input_required: fetch its result once per spell.
        assert!(
            tr.polled(task("a", "input_required", Some(100), None), t0 + ms(100))
                .unwrap()
        );
        assert_eq!(tr.next(t0 + ms(100)), TaskNext::FetchInput);
        tr.input_fetched(t0 + ms(150));
        assert_eq!(tr.next(t0 + ms(150)), TaskNext::WaitUntil(t0 + ms(250)));
        // input_required → working → input_required again: a new spell.
        assert!(tr.report(task("a", "working", Some(100), None)).unwrap());
        assert!(
            tr.report(task("a", "input_required", Some(100), None))
                .unwrap()
        );
        assert_eq!(tr.next(t0 + ms(160)), TaskNext::FetchInput);
        for end in ["completed", "failed", "cancelled"] {
            let mut done = tr.clone();
            assert!(done.report(task("a", end, None, None)).unwrap());
            let status = done.task().status.clone();
            assert!(status.is_terminal());
            assert_eq!(done.next(t0 + ms(200)), TaskNext::Finished(status.clone()));
            // Terminal is final: a later report changes nothing.
            assert!(!done.report(task("a", "working", None, None)).unwrap());
            assert_eq!(done.task().status, status);
        }
    }

    #[test]
    fn polls_never_come_faster_than_the_server_asks_and_back_off_to_a_cap() {
        let t0 = Instant::now();
        let mut tr = TaskTracker::new(task("a", "working", Some(1), None), t0, None).unwrap();
        // A 1 ms interval is clamped up.
        assert_eq!(tr.interval(), MIN_POLL_INTERVAL);
        let mut now = t0;
        let mut last = Duration::ZERO;
        for _ in 0..40 {
            let TaskNext::WaitUntil(at) = tr.next(now) else {
                panic!()
            };
            assert!(at - now >= last, "interval shrank");
            last = at - now;
            now = at;
            assert_eq!(tr.next(now), TaskNext::Poll);
            assert!(!tr.polled(task("a", "working", Some(1), None), now).unwrap());
        }
        assert_eq!(tr.interval(), MAX_POLL_INTERVAL);
        // A change sets it back to the server's.
        let mut tr = TaskTracker::new(task("a", "working", None, None), t0, None).unwrap();
        assert_eq!(tr.interval(), DEFAULT_POLL_INTERVAL);
        tr.polled(task("a", "working", None, None), t0).unwrap();
        assert_eq!(tr.interval(), ms(1500));
        let mut changed = task("a", "working", Some(200), None);
        changed.status_message = Some("step 2".into());
        assert!(tr.polled(changed, t0).unwrap());
        assert_eq!(tr.interval(), ms(200));
        // A server asking for more than the cap gets it.
        let tr = TaskTracker::new(task("a", "working", Some(60_000), None), t0, None).unwrap();
        assert_eq!(tr.next(t0), TaskNext::WaitUntil(t0 + ms(60_000)));
    }

    #[test]
    fn the_deadline_and_the_ttl_end_the_wait() {
        let t0 = Instant::now();
        let tr = TaskTracker::new(
            task("a", "working", Some(1000), Some(2500)),
            t0,
            Some(t0 + ms(1500)),
        )
        .unwrap();
        assert_eq!(tr.expires(), Some(t0 + ms(2500)));
        assert_eq!(tr.next(t0 + ms(1200)), TaskNext::Poll);
        let mut tr2 = tr.clone();
        tr2.polled(task("a", "working", Some(1000), Some(2500)), t0 + ms(1200))
            .unwrap();
        // The next poll would be after the deadline: wake at the deadline.
        assert_eq!(tr2.next(t0 + ms(1200)), TaskNext::WaitUntil(t0 + ms(1500)));
        assert_eq!(tr2.next(t0 + ms(1500)), TaskNext::DeadlinePassed);
        let tr = TaskTracker::new(task("a", "working", Some(1000), Some(2500)), t0, None).unwrap();
        assert_eq!(tr.next(t0 + ms(2500)), TaskNext::Expired);
        // A finished task is finished whatever the clock says.
        let tr = TaskTracker::new(task("a", "completed", None, Some(1)), t0, Some(t0)).unwrap();
        assert_eq!(
            tr.next(t0 + ms(10)),
            TaskNext::Finished(mcp_proto::schema::TaskStatus::Completed)
        );
    }

    #[test]
    fn malformed_and_other_ids_are_refused_without_a_change() {
        let t0 = Instant::now();
        assert_eq!(
            TaskTracker::new(task("", "working", None, None), t0, None).unwrap_err(),
            TaskReportError::BadId { len: 0 }
        );
        let long = "x".repeat(MAX_TASK_ID_LEN + 1);
        assert!(TaskTracker::new(task(&long, "working", None, None), t0, None).is_err());
        let mut tr = TaskTracker::new(task("a", "working", None, None), t0, None).unwrap();
        let err = tr.report(task("b", "completed", None, None)).unwrap_err();
        assert!(matches!(err, TaskReportError::OtherTask { .. }), "{err:?}");
        assert!(tr.report(task(&long, "completed", None, None)).is_err());
        assert_eq!(tr.task().status, TaskStatus::Working);
    }

    /// A 2026-07-28 task (flat fields, `ttlMs` / `pollIntervalMs`).
    fn modern(status: &str, extra: serde_json::Value) -> Task {
        let mut t = json!({
            "taskId": "m", "status": status, "pollIntervalMs": 100, "ttlMs": 60_000,
            "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z",
        });
        if let (Some(t), serde_json::Value::Object(extra)) = (t.as_object_mut(), extra) {
            t.extend(extra);
        }
        serde_json::from_value(t).unwrap()
    }

    fn elicit(keys: &[&str]) -> serde_json::Value {
        let m: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .map(|k| {
                let r = json!({"method": "elicitation/create", "params": {"message": k, "requestedSchema": {"type": "object"}}});
                ((*k).to_owned(), r)
            })
            .collect();
        json!({ "inputRequests": m })
    }

    #[test]
    fn modern_every_status_and_transition() {
        let t0 = Instant::now();
        let mut tr =
            TaskTracker::for_era(modern("working", json!({})), Era::Modern, t0, None).unwrap();
        assert_eq!(tr.era(), Era::Modern);
        // The renamed timing fields are honoured.
        assert_eq!(tr.interval(), ms(100));
        assert_eq!(tr.expires(), Some(t0 + ms(60_000)));
        assert_eq!(tr.next(t0), TaskNext::WaitUntil(t0 + ms(100)));
        assert_eq!(tr.next(t0 + ms(100)), TaskNext::Poll);
        // working → input_required with a request: answer it (never FetchInput).
        assert!(
            tr.polled(modern("input_required", elicit(&["a"])), t0 + ms(100))
                .unwrap()
        );
        assert_eq!(tr.next(t0 + ms(100)), TaskNext::AnswerInput);
        let taken = tr.take_input_requests().unwrap();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].0, "a");
        assert_eq!(taken[0].1.method, "elicitation/create");
        tr.input_fetched(t0 + ms(120));
        // The server repeats the key until it takes the answer: poll, never re-answer.
        assert_eq!(tr.next(t0 + ms(120)), TaskNext::WaitUntil(t0 + ms(220)));
        assert!(
            !tr.polled(modern("input_required", elicit(&["a"])), t0 + ms(220))
                .unwrap()
        );
        assert!(matches!(tr.next(t0 + ms(220)), TaskNext::WaitUntil(_)));
        assert!(tr.take_input_requests().unwrap().is_empty());
        // A second request alongside: only the new key is handed out.
        assert!(
            tr.polled(modern("input_required", elicit(&["a", "b"])), t0 + ms(400))
                .unwrap()
        );
        assert_eq!(tr.next(t0 + ms(400)), TaskNext::AnswerInput);
        let taken = tr.take_input_requests().unwrap();
        assert_eq!(
            taken.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        // input_required → working → terminal, with the outcome inline.
        assert!(tr.report(modern("working", json!({}))).unwrap());
        // A key answered before stays answered over the task's life.
        assert!(tr.report(modern("input_required", elicit(&["a"]))).unwrap());
        assert!(tr.take_input_requests().unwrap().is_empty());
        let done = modern("completed", json!({"result": {"content": []}}));
        let mut c = tr.clone();
        assert!(c.report(done).unwrap());
        assert_eq!(
            c.next(t0 + ms(500)),
            TaskNext::Finished(TaskStatus::Completed)
        );
        assert!(!c.report(modern("working", json!({}))).unwrap());
        let mut f = tr.clone();
        assert!(
            f.report(modern(
                "failed",
                json!({"error": {"code": -32603, "message": "x"}})
            ))
            .unwrap()
        );
        assert_eq!(f.next(t0 + ms(500)), TaskNext::Finished(TaskStatus::Failed));
        let mut k = tr.clone();
        assert!(k.report(modern("cancelled", json!({}))).unwrap());
        assert_eq!(
            k.next(t0 + ms(500)),
            TaskNext::Finished(TaskStatus::Cancelled)
        );
    }

    #[test]
    fn modern_terminal_reports_without_their_outcome_are_refused() {
        let t0 = Instant::now();
        let mut tr =
            TaskTracker::for_era(modern("working", json!({})), Era::Modern, t0, None).unwrap();
        for bad in [modern("completed", json!({})), modern("failed", json!({}))] {
            let err = tr.report(bad).unwrap_err();
            assert!(matches!(err, TaskReportError::NoOutcome { .. }), "{err:?}");
            assert_eq!(tr.task().status, TaskStatus::Working);
        }
        // Also as the handle's first state.
        assert!(
            TaskTracker::for_era(modern("completed", json!({})), Era::Modern, t0, None).is_err()
        );
        // The legacy form carries no outcome in its status: nothing to refuse.
        assert!(TaskTracker::new(task("a", "completed", None, None), t0, None).is_ok());
    }

    #[test]
    fn modern_input_keys_are_bounded_per_task() {
        let t0 = Instant::now();
        let mut tr =
            TaskTracker::for_era(modern("working", json!({})), Era::Modern, t0, None).unwrap();
        let keys: Vec<String> = (0..MAX_TASK_INPUT_KEYS).map(|i| format!("k{i}")).collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        tr.report(modern("input_required", elicit(&refs))).unwrap();
        assert_eq!(tr.take_input_requests().unwrap().len(), MAX_TASK_INPUT_KEYS);
        tr.report(modern("input_required", elicit(&["one-more"])))
            .unwrap();
        let err = tr.take_input_requests().unwrap_err();
        assert!(
            matches!(err, TaskReportError::TooManyInputRequests { .. }),
            "{err:?}"
        );
    }
}
