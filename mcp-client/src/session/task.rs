//! A task's protocol state, without IO: what a requester knows about a task
//! the server runs (2025-11-25 core tasks), and when it may next ask.
//!
//! [`TaskTracker`] takes every status the server reports (a `tasks/get`
//! answer or a `notifications/tasks/status`), and says what to do next
//! ([`TaskTracker::next`]): wait until an instant, poll now, fetch the
//! result, or give up. Its owner does the IO and passes the time in, so
//! every state and transition is testable without a clock or a server.
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

use std::time::{Duration, Instant};

use mcp_proto::schema::{Task, TaskStatus};

/// The interval between polls when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest interval between polls, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest interval backoff reaches (unless the server asks for longer).
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);
/// The longest task id accepted from a server, in bytes.
pub const MAX_TASK_ID_LEN: usize = 1024;

/// What to do next about a task.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskNext {
    /// Nothing before this instant (unless a status notification arrives).
    WaitUntil(Instant),
    /// Ask the server for the task's status now (`tasks/get`).
    Poll,
    /// The task needs input (`input_required`): ask for its result
    /// (`tasks/result`), which is how the server delivers its requests.
    FetchInput,
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
}

impl TaskTracker {
    /// Starts tracking `task` (as the server created it), learned of at
    /// `now`, to be given up at `deadline`.
    pub fn new(
        task: Task,
        now: Instant,
        deadline: Option<Instant>,
    ) -> Result<Self, TaskReportError> {
        check_task_id(&task.task_id)?;
        let floor = server_interval(&task);
        let expires = task
            .ttl_millis()
            .map(|ms| now.checked_add(Duration::from_millis(ms)).unwrap_or(now));
        Ok(TaskTracker {
            task,
            floor,
            interval: floor,
            last: now,
            learned: now,
            deadline,
            expires,
            input_fetched: false,
        })
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
        let changed =
            task.status != self.task.status || task.status_message != self.task.status_message;
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
        if *status == TaskStatus::InputRequired && !self.input_fetched {
            return TaskNext::FetchInput;
        }
        let at = self.last.checked_add(self.interval).unwrap_or(self.last);
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

/// The server's `pollInterval`, clamped to at least [`MIN_POLL_INTERVAL`].
fn server_interval(task: &Task) -> Duration {
    task.poll_interval_millis()
        .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
        .max(MIN_POLL_INTERVAL)
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
}
