//! [`FileStore`]: a [`CacheStore`] kept in one JSON file, so a host that
//! restarts starts warm.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::cache::{CacheEntry, CacheKey, CacheStore, DEFAULT_MAX_ENTRIES, Entries, lock, now_ms};

/// The file format's version; a file with another version is ignored (an
/// empty cache), never misread.
pub const FILE_FORMAT_VERSION: u32 = 1;

/// The largest file a [`FileStore`] writes by default (8 MiB): beyond it,
/// the entries that expire soonest are left out.
pub const DEFAULT_MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// A [`CacheStore`] in memory and mirrored to a JSON file after every
/// change.
///
/// - **Atomic.** Each write goes to a temporary file beside the cache
///   file, is synced, then renamed over it: a crash leaves the old file or
///   the new one, never half of one.
/// - **Bounded.** At most `max_entries` entries ([`DEFAULT_MAX_ENTRIES`]) and
///   `max_bytes` bytes ([`DEFAULT_MAX_FILE_BYTES`]); expired entries are
///   dropped, then the soonest to expire.
/// - **Versioned.** `{"version": 1, "entries": [...]}`; a file of another
///   version, a corrupt or truncated file, or one that cannot be read is an
///   empty cache (with a warning in the log), not an error: the answers are
///   the servers' to give again. (Task tickets, which nobody can give
///   again, have a store of their own: [`FileTicketStore`](crate::FileTicketStore).
///   A `tasks` member left by files written before is ignored.)
/// - **Small writes, on the caller's thread.** Writes happen when a list is
///   fetched or invalidated, which is rare; entries are lists of tools and
///   the like (kilobytes).
///
/// Two hosts sharing a file do not corrupt it (the last write wins).
///
/// ```no_run
/// use mcp_host::{FileStore, ResponseCache};
///
/// let cache = ResponseCache::new(FileStore::open("/home/me/.cache/my-agent/mcp-cache.json"));
/// # let _ = cache;
/// ```
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    max_bytes: usize,
    entries: Mutex<Entries>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileEntry {
    #[serde(flatten)]
    key: CacheKey,
    #[serde(flatten)]
    entry: CacheEntry,
}

#[derive(Deserialize)]
struct FileHead {
    version: u32,
}

#[derive(Deserialize)]
struct FileBody {
    entries: Vec<FileEntry>,
}

impl FileStore {
    /// Opens (or starts) the cache file at `path`, with the default bounds.
    /// Never fails: an unreadable file is an empty cache.
    pub fn open(path: impl Into<PathBuf>) -> Self {
        Self::with_limits(path, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_FILE_BYTES)
    }

    /// Opens the cache file with other bounds.
    pub fn with_limits(path: impl Into<PathBuf>, max_entries: usize, max_bytes: usize) -> Self {
        let path = path.into();
        let mut entries = Entries::new(max_entries);
        for e in load(&path).entries {
            entries.map.insert(e.key, e.entry);
        }
        entries.trim(now_ms());
        FileStore {
            path,
            max_bytes,
            entries: Mutex::new(entries),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        lock(&self.entries)
    }

    /// Writes the entries (longest-lived first, within the byte bound).
    /// Called with the lock held, so writes do not interleave.
    fn persist(&self, entries: &Entries) {
        if let Err(e) = self.write(entries) {
            tracing::warn!(path = %self.path.display(), error = %e, "could not write the response cache file; the cache stays in memory");
        }
    }

    fn write(&self, entries: &Entries) -> io::Result<()> {
        let mut sorted: Vec<(&CacheKey, &CacheEntry)> = entries.map.iter().collect();
        sorted.sort_by_key(|(_, e)| std::cmp::Reverse(e.expires_at_ms));
        let mut out = format!("{{\"version\":{FILE_FORMAT_VERSION},\"entries\":[").into_bytes();
        let mut first = true;
        for (key, entry) in sorted {
            let one = serde_json::to_vec(&FileEntry {
                key: key.clone(),
                entry: entry.clone(),
            })
            .map_err(io::Error::other)?;
            if out.len() + one.len() + 3 > self.max_bytes {
                // Longest-lived first: the rest expire sooner.
                continue;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(&one);
        }
        out.extend_from_slice(b"]}");
        crate::atomic_file::write(&self.path, &out)
    }
}

/// The entries in the file; none (with a warning) if it is missing,
/// unreadable, corrupt or of another version.
fn load(path: &Path) -> FileBody {
    let empty = || FileBody {
        entries: Vec::new(),
    };
    let text = match fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return empty(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "could not read the response cache file; starting empty");
            return empty();
        }
    };
    match serde_json::from_slice::<FileHead>(&text) {
        Ok(h) if h.version == FILE_FORMAT_VERSION => {}
        Ok(h) => {
            tracing::info!(path = %path.display(), version = h.version, "response cache file of another version; starting empty");
            return empty();
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "response cache file is corrupt; starting empty");
            return empty();
        }
    }
    match serde_json::from_slice::<FileBody>(&text) {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "response cache file is corrupt; starting empty");
            empty()
        }
    }
}

impl CacheStore for FileStore {
    fn get(&self, key: &CacheKey) -> Option<CacheEntry> {
        self.lock().map.get(key).cloned()
    }

    fn put(&self, key: CacheKey, entry: CacheEntry) {
        let mut entries = self.lock();
        entries.insert(key, entry, now_ms());
        self.persist(&entries);
    }

    fn invalidate(&self, server: &str, method: &str) {
        let mut entries = self.lock();
        if entries.invalidate(server, method) {
            self.persist(&entries);
        }
    }

    fn clear(&self) {
        let mut entries = self.lock();
        entries.map.clear();
        self.persist(&entries);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcp-host-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn key(n: &str) -> CacheKey {
        CacheKey::new(n, "tools/list", "", None)
    }

    #[test]
    fn survives_a_reopen_and_leaves_no_temporary_files() {
        let d = dir("reopen");
        let path = d.join("sub/cache.json");
        let later = now_ms() + 60_000;
        {
            let s = FileStore::open(&path);
            s.put(key("a"), CacheEntry::new(json!([{"name": "x"}]), later));
            s.put(key("b"), CacheEntry::new(json!([]), later));
            s.invalidate("b", "tools/list");
        }
        let s = FileStore::open(&path);
        assert_eq!(s.get(&key("a")).unwrap().value, json!([{"name": "x"}]));
        assert!(s.get(&key("b")).is_none());
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["cache.json"]);
        let _ = fs::remove_dir_all(d);
    }

    #[test]
    fn corrupt_truncated_or_other_version_files_are_an_empty_cache() {
        let d = dir("corrupt");
        fs::create_dir_all(&d).unwrap();
        let path = d.join("cache.json");
        let later = now_ms() + 60_000;
        let good = format!(
            r#"{{"version":1,"entries":[{{"server":"a","method":"tools/list","params":"","partition":null,"value":[],"expiresAtMs":{later}}}]}}"#
        );
        fs::write(&path, &good).unwrap();
        assert!(FileStore::open(&path).get(&key("a")).is_some());
        for bad in [
            &good[..good.len() / 2],
            "not json",
            "",
            r#"{"version":2,"entries":[]}"#,
            r#"{"version":1,"entries":{"a":1}}"#,
            r#"[1,2]"#,
        ] {
            fs::write(&path, bad).unwrap();
            let s = FileStore::open(&path);
            assert!(s.get(&key("a")).is_none(), "{bad:?}");
            // And it still works.
            s.put(key("c"), CacheEntry::new(json!([]), later));
            assert!(FileStore::open(&path).get(&key("c")).is_some());
        }
        let _ = fs::remove_dir_all(d);
    }

    #[test]
    fn expired_entries_are_dropped_and_the_byte_bound_keeps_the_longest_lived() {
        let d = dir("bounds");
        let path = d.join("cache.json");
        let now = now_ms();
        let s = FileStore::with_limits(&path, 100, 600);
        let big = json!("x".repeat(150));
        s.put(key("soon"), CacheEntry::new(big.clone(), now + 10_000));
        s.put(key("late"), CacheEntry::new(big.clone(), now + 90_000));
        s.put(key("mid"), CacheEntry::new(big, now + 50_000));
        assert!(fs::metadata(&path).unwrap().len() <= 600);
        let s2 = FileStore::open(&path);
        assert!(s2.get(&key("late")).is_some());
        assert!(s2.get(&key("mid")).is_some());
        assert!(s2.get(&key("soon")).is_none(), "left out of the file");
        // An entry that expired while the host was down is gone on open.
        s.put(
            key("stale"),
            CacheEntry::new(json!(1), now.saturating_sub(1)),
        );
        assert!(FileStore::open(&path).get(&key("stale")).is_none());
        let _ = fs::remove_dir_all(d);
    }

    #[test]
    fn a_file_with_the_tickets_it_once_held_still_reads() {
        let d = dir("old-tasks");
        fs::create_dir_all(&d).unwrap();
        let path = d.join("cache.json");
        let later = now_ms() + 60_000;
        fs::write(
            &path,
            format!(
                r#"{{"version":1,"tasks":[{{"format":1}}],"entries":[{{"server":"a","method":"tools/list","params":"","partition":null,"value":[],"expiresAtMs":{later}}}]}}"#
            ),
        )
        .unwrap();
        let s = FileStore::open(&path);
        assert!(s.get(&key("a")).is_some());
        s.invalidate("a", "tools/list");
        assert!(!fs::read_to_string(&path).unwrap().contains("tasks"));
        let _ = fs::remove_dir_all(d);
    }
}
