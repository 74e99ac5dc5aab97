//! Where a host keeps the [`TaskTicket`]s of the tasks it started, so that
//! it (or the host after it) can follow them again: a [`TicketStore`], of
//! its own, whether or not the host caches responses.
//!
//! - [`MemoryTicketStore`] (the default): tickets live as long as the host.
//! - [`FileTicketStore`]: one JSON file, written at once on every change,
//!   so a host that is killed right after starting a task finds it on the
//!   next start. A file that cannot be read is an error to report
//!   ([`TicketStoreError`], with the path and what to do), never an empty
//!   store: the tasks it names would be lost without a word.
//!
//! Every store keeps at most its bound of tickets (beyond it the oldest
//! go) and none past its deadline or expiry (dropped whenever the store
//! changes or is read).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mcp_client::TaskTicket;
use serde::{Deserialize, Serialize};

use crate::cache::{lock, now_ms};

/// How many task tickets a store keeps by default.
pub const DEFAULT_MAX_TICKETS: usize = 256;

/// The version of [`FileTicketStore`]'s file format; a file of another
/// version is [`TicketStoreError::OtherVersion`], never misread.
pub const TICKET_FILE_VERSION: u32 = 1;

/// Where a [`Host`](crate::Host) keeps its task tickets
/// ([`HostBuilder::tickets`](crate::HostBuilder::tickets)). Implement it
/// to keep them elsewhere (a database); calls are short and run on the
/// async runtime's threads.
pub trait TicketStore: Send + Sync + fmt::Debug {
    /// Records `ticket`, replacing one of the same server and task id;
    /// drops tickets past their end, then the oldest beyond the bound.
    fn put(&self, ticket: TaskTicket) -> Result<(), TicketStoreError>;
    /// Forgets the ticket of `task_id` on `server` (nothing if there is none).
    fn remove(&self, server: &str, task_id: &str) -> Result<(), TicketStoreError>;
    /// The recorded tickets, none past its deadline or expiry.
    fn list(&self) -> Result<Vec<TaskTicket>, TicketStoreError>;
}

/// Why a [`TicketStore`] failed. Each says what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TicketStoreError {
    /// The ticket file is not a ticket file this host can read (not JSON,
    /// truncated, a ticket that does not decode).
    #[error(
        "the task ticket file {} is corrupt ({reason}); move it aside (or delete it) to start \
         with no tickets: the tasks it names are then no longer followed",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its place in the file.
        reason: String,
    },
    /// The ticket file was written in another format version (by another
    /// version of this crate).
    #[error(
        "the task ticket file {} is of format version {found}, and this host reads version \
         {TICKET_FILE_VERSION}; run the host version that wrote it, or move the file aside to \
         start with no tickets",
        path.display()
    )]
    OtherVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// The ticket file exists but cannot be read.
    #[error("could not read the task ticket file {}; check its permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The ticket file could not be written: the change holds in memory
    /// only, and a restart loses it.
    #[error(
        "could not write the task ticket file {}; the tickets are kept in memory only until it \
         can be (check the directory's permissions and free space)",
        path.display()
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A store of the application's failed.
    #[error("the task ticket store failed")]
    Other(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A store's tickets: at most `max`, none past its end.
#[derive(Debug)]
struct Tickets {
    list: Vec<TaskTicket>,
    max: usize,
}

impl Tickets {
    fn new(max: usize) -> Self {
        Tickets {
            list: Vec::new(),
            max,
        }
    }

    /// Adds (or replaces) `ticket`; drops ended ones, then the oldest
    /// beyond the bound.
    fn put(&mut self, ticket: TaskTicket, now_ms: u64) {
        self.list
            .retain(|t| !(t.server.name == ticket.server.name && t.task_id == ticket.task_id));
        self.list.push(ticket);
        self.prune(now_ms);
    }

    /// Whether a ticket was removed.
    fn remove(&mut self, server: &str, task_id: &str) -> bool {
        let before = self.list.len();
        self.list
            .retain(|t| !(t.server.name == server && t.task_id == task_id));
        self.list.len() != before
    }

    /// Whether a ticket was dropped.
    fn prune(&mut self, now_ms: u64) -> bool {
        let before = self.list.len();
        self.list
            .retain(|t| t.ends_at_ms().is_none_or(|end| now_ms < end));
        if self.list.len() > self.max {
            self.list.sort_by_key(|t| t.started_at_ms);
            let extra = self.list.len() - self.max;
            self.list.drain(..extra);
        }
        self.list.len() != before
    }
}

/// A [`TicketStore`] in memory, bounded ([`DEFAULT_MAX_TICKETS`]): the
/// host's default. Tickets live as long as the host.
#[derive(Debug)]
pub struct MemoryTicketStore {
    tickets: Mutex<Tickets>,
}

impl Default for MemoryTicketStore {
    fn default() -> Self {
        MemoryTicketStore::new(DEFAULT_MAX_TICKETS)
    }
}

impl MemoryTicketStore {
    /// A store keeping at most `max` tickets.
    pub fn new(max: usize) -> Self {
        MemoryTicketStore {
            tickets: Mutex::new(Tickets::new(max)),
        }
    }
}

impl TicketStore for MemoryTicketStore {
    fn put(&self, ticket: TaskTicket) -> Result<(), TicketStoreError> {
        lock(&self.tickets).put(ticket, now_ms());
        Ok(())
    }

    fn remove(&self, server: &str, task_id: &str) -> Result<(), TicketStoreError> {
        lock(&self.tickets).remove(server, task_id);
        Ok(())
    }

    fn list(&self) -> Result<Vec<TaskTicket>, TicketStoreError> {
        let mut t = lock(&self.tickets);
        t.prune(now_ms());
        Ok(t.list.clone())
    }
}

/// A [`TicketStore`] in one JSON file, `{"version": 1, "tickets": [...]}`,
/// so that tasks outlive the host (see the crate docs on [which tasks
/// survive a host restart](crate#which-tasks-survive-a-host-restart)).
///
/// - **Written at once**, atomically (a temporary file beside it, synced,
///   renamed over it: a crash leaves the old file or the new one), on every
///   change: a host killed right after starting a task finds it next time.
/// - **Read once**, when opened; a missing file is an empty store. A file
///   that is corrupt, of another version or unreadable is an error that
///   names the file and what to do ([`TicketStoreError`]), never an empty
///   store.
/// - **Bounded**: at most `max` tickets ([`DEFAULT_MAX_TICKETS`]), none
///   past its deadline or expiry (dropped on open too).
///
/// A file of its own, not the response cache's: a host keeps tickets
/// whether or not it caches, and a cache file may be thrown away (a corrupt
/// one is an empty cache) where a ticket file may not.
///
/// ```no_run
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_host::{FileTicketStore, Host};
///
/// let tickets = FileTicketStore::open("/home/me/.local/state/my-agent/mcp-tasks.json")?;
/// let builder = Host::builder().tickets(tickets);
/// # let _ = builder; Ok(()) }
/// ```
#[derive(Debug)]
pub struct FileTicketStore {
    path: PathBuf,
    tickets: Mutex<Tickets>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    version: u32,
    tickets: &'a [TaskTicket],
}

#[derive(Deserialize)]
struct FileHead {
    version: u32,
}

#[derive(Deserialize)]
struct FileIn {
    tickets: Vec<TaskTicket>,
}

impl FileTicketStore {
    /// Opens the ticket file at `path` (a missing one is an empty store),
    /// keeping at most [`DEFAULT_MAX_TICKETS`].
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, TicketStoreError> {
        Self::with_limit(path, DEFAULT_MAX_TICKETS)
    }

    /// Opens the ticket file keeping at most `max` tickets.
    pub fn with_limit(path: impl Into<PathBuf>, max: usize) -> Result<Self, TicketStoreError> {
        let path = path.into();
        let mut tickets = Tickets::new(max);
        tickets.list = load(&path)?;
        tickets.prune(now_ms());
        Ok(FileTicketStore {
            path,
            tickets: Mutex::new(tickets),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the tickets; called with the lock held, so writes do not
    /// interleave.
    fn persist(&self, tickets: &Tickets) -> Result<(), TicketStoreError> {
        let write_error = |source| TicketStoreError::Write {
            path: self.path.clone(),
            source,
        };
        let bytes = serde_json::to_vec(&FileOut {
            version: TICKET_FILE_VERSION,
            tickets: &tickets.list,
        })
        .map_err(|e| write_error(io::Error::other(e)))?;
        crate::atomic_file::write(&self.path, &bytes).map_err(write_error)
    }
}

/// The tickets in the file at `path`: none if it is missing.
fn load(path: &Path) -> Result<Vec<TaskTicket>, TicketStoreError> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(TicketStoreError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let corrupt = |e: serde_json::Error| TicketStoreError::Corrupt {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let head: FileHead = serde_json::from_slice(&text).map_err(corrupt)?;
    if head.version != TICKET_FILE_VERSION {
        return Err(TicketStoreError::OtherVersion {
            path: path.to_owned(),
            found: head.version,
        });
    }
    let body: FileIn = serde_json::from_slice(&text).map_err(corrupt)?;
    Ok(body.tickets)
}

impl TicketStore for FileTicketStore {
    fn put(&self, ticket: TaskTicket) -> Result<(), TicketStoreError> {
        let mut tickets = lock(&self.tickets);
        tickets.put(ticket, now_ms());
        self.persist(&tickets)
    }

    fn remove(&self, server: &str, task_id: &str) -> Result<(), TicketStoreError> {
        let mut tickets = lock(&self.tickets);
        if tickets.remove(server, task_id) {
            self.persist(&tickets)?;
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<TaskTicket>, TicketStoreError> {
        let mut tickets = lock(&self.tickets);
        // What ended is dropped from the file too, so it does not come
        // back on the next start (a write that fails waits for the next).
        if tickets.prune(now_ms()) {
            if let Err(e) = self.persist(&tickets) {
                tracing::warn!(error = %mcp_proto::error::chain(&e), "could not drop ended task tickets from the file");
            }
        }
        Ok(tickets.list.clone())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn ticket(server: &str, id: &str, started: u64, ends: Option<u64>) -> TaskTicket {
        serde_json::from_value(json!({
            "format": 1, "server": {"name": server}, "taskId": id, "era": "2025-11-25",
            "startedAtMs": started, "expiresAtMs": ends,
        }))
        .unwrap()
    }

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("mcp-host-tickets-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn ids(s: &dyn TicketStore) -> Vec<String> {
        s.list().unwrap().into_iter().map(|t| t.task_id).collect()
    }

    #[test]
    fn tickets_are_bounded_replaced_and_pruned_at_their_end() {
        let mut t = Tickets::new(3);
        for i in 0..5 {
            t.put(ticket("s", &format!("t{i}"), i, None), 0);
        }
        let ids: Vec<_> = t.list.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["t2", "t3", "t4"], "the oldest go beyond the bound");
        t.put(ticket("s", "t3", 3, Some(100)), 0);
        assert_eq!(t.list.len(), 3, "same server and id: replaced");
        t.put(ticket("other", "t3", 9, None), 0);
        assert_eq!(t.list.len(), 3);
        assert!(t.prune(100));
        assert!(
            !t.list
                .iter()
                .any(|x| x.server.name == "s" && x.task_id == "t3"),
            "pruned at its expiry"
        );
        assert!(t.remove("other", "t3"));
        assert!(!t.remove("other", "t3"));
    }

    #[test]
    fn the_memory_store_keeps_lists_and_forgets() {
        let s = MemoryTicketStore::new(2);
        let now = now_ms();
        s.put(ticket("s", "a", now, None)).unwrap();
        s.put(ticket("s", "gone", now, Some(now - 1))).unwrap();
        s.put(ticket("s", "b", now + 1, Some(now + 60_000)))
            .unwrap();
        assert_eq!(ids(&s), ["a", "b"]);
        s.remove("s", "a").unwrap();
        assert_eq!(ids(&s), ["b"]);
    }

    #[test]
    fn the_file_store_survives_a_reopen_without_temporary_files_or_ended_tickets() {
        let d = dir("reopen");
        let path = d.join("sub/tickets.json");
        let now = now_ms();
        {
            let s = FileTicketStore::open(&path).unwrap();
            assert!(s.list().unwrap().is_empty(), "a missing file is empty");
            s.put(ticket("s", "live", now, Some(now + 60_000))).unwrap();
            s.put(ticket("s", "soon", now, Some(now + 60_000))).unwrap();
            s.put(ticket("s", "done", now, None)).unwrap();
            s.remove("s", "done").unwrap();
        }
        assert_eq!(
            ids(&FileTicketStore::open(&path).unwrap()),
            ["live", "soon"]
        );
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["tickets.json"]);
        // Ended while the host was down: gone on open.
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["version"], 1);
        v["tickets"][1]["expiresAtMs"] = json!(now - 1);
        std::fs::write(&path, v.to_string()).unwrap();
        assert_eq!(ids(&FileTicketStore::open(&path).unwrap()), ["live"]);
        let _ = std::fs::remove_dir_all(d);
    }

    /// A ticket file that cannot be read is a typed error naming the file
    /// and what to do, not an empty store (the response cache's old home
    /// for tickets dropped them without a word).
    #[test]
    fn a_corrupt_or_foreign_ticket_file_is_an_error_that_names_it() {
        let d = dir("corrupt");
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("tickets.json");
        let good = r#"{"version":1,"tickets":[{"format":1,"server":{"name":"s"},"taskId":"t","era":"2025-11-25","startedAtMs":1}]}"#;
        std::fs::write(&path, good).unwrap();
        assert_eq!(ids(&FileTicketStore::open(&path).unwrap()), ["t"]);
        for bad in [
            &good[..good.len() / 2],
            "not json",
            "",
            r#"[1,2]"#,
            r#"{"version":1,"tickets":{"a":1}}"#,
            r#"{"version":1,"tickets":[{"format":"x"}]}"#,
        ] {
            std::fs::write(&path, bad).unwrap();
            let err = FileTicketStore::open(&path).unwrap_err();
            assert!(
                matches!(&err, TicketStoreError::Corrupt { path: p, .. } if *p == path),
                "{bad:?}: {err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains(&path.display().to_string()) && text.contains("move it aside"),
                "{text}"
            );
            // The file is left as it was, for the user to look at.
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
        }
        std::fs::write(&path, r#"{"version":2,"tickets":[]}"#).unwrap();
        let err = FileTicketStore::open(&path).unwrap_err();
        assert!(
            matches!(err, TicketStoreError::OtherVersion { found: 2, .. }),
            "{err:?}"
        );
        // A directory where the file should be: unreadable.
        let err = FileTicketStore::open(&d).unwrap_err();
        assert!(matches!(err, TicketStoreError::Read { .. }), "{err:?}");
        let _ = std::fs::remove_dir_all(d);
    }
}
