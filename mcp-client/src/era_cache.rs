//! [`EraCache`]: which era each server speaks, remembered across connections.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::session::EraHint;

/// Default cap on the servers one [`EraCache`] remembers.
pub const DEFAULT_ERA_CACHE_ENTRIES: usize = 1024;

/// Remembers, per server, which protocol era it speaks, so that the next
/// connection skips detection.
///
/// Detecting the era costs a `server/discover` probe on every connection, and
/// against a legacy server that ignores unknown requests the probe only fails
/// after [`probe_timeout`](crate::ClientBuilder::probe_timeout) (5 s by
/// default). The spec (2026-07-28, `basic/versioning`): "The era determination
/// is a property of the server, not of an individual request. Clients
/// **SHOULD** cache the result for the lifetime of the server process (stdio)
/// or origin (HTTP), and **MAY** persist it across restarts of the same server
/// configuration, re-probing if the cached assumption later fails."
///
/// Give one cache and the server's key to every
/// [`ClientBuilder`](crate::ClientBuilder) that connects to that server
/// ([`ClientBuilder::era_cache`](crate::ClientBuilder::era_cache)):
///
/// - a **legacy** server is sent `initialize` at once with the revision it
///   negotiated last time;
/// - a **modern** server's `server/discover` answer is reused without a probe
///   while it is fresh (its `ttlMs`); once stale it is probed again, since
///   its capabilities may have changed;
/// - a remembered era that proves wrong (the server was upgraded or
///   replaced) is forgotten and the era detected again, once, within the same
///   connection; calls that failed because of it are re-sent once. See the
///   session's [remembered eras](crate::session#remembered-eras).
///
/// # Keys
///
/// The key names one server configuration; the cache does not interpret it.
/// For Streamable HTTP use the endpoint's origin and path
/// (`https://example.com/mcp`); for stdio the command line (program and
/// arguments). A modern entry holds the server's `server/discover` answer
/// (capabilities, instructions): if that answer can differ per user
/// (`cacheScope: "private"`), make the key include the user or token
/// identity too.
///
/// The cache is in memory, cheap to clone (clones share the entries) and
/// safe to share across threads. It holds at most
/// [`DEFAULT_ERA_CACHE_ENTRIES`] servers unless built
/// [`with_max_entries`](EraCache::with_max_entries); beyond that the least
/// recently used entry is dropped.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// # fn transport() -> mcp_proto::transport::channel::ChannelTransport { unimplemented!() }
/// use mcp_client::{Client, EraCache};
///
/// let eras = EraCache::new();
/// for _ in 0..2 {
///     // The second connection skips the `server/discover` probe.
///     let client = Client::builder("my-agent", "1.0.0")
///         .era_cache(eras.clone(), "https://example.com/mcp")
///         .connect(transport())
///         .await?;
///     client.close().await;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct EraCache {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    /// Key → (hint, last use).
    entries: HashMap<String, (EraHint, u64)>,
    max_entries: usize,
    clock: u64,
}

impl Inner {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }
}

impl Default for EraCache {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for EraCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.lock();
        f.debug_map()
            .entries(
                g.entries
                    .iter()
                    .map(|(k, (h, _))| (k, h.protocol_version())),
            )
            .finish()
    }
}

impl EraCache {
    /// An empty cache holding up to [`DEFAULT_ERA_CACHE_ENTRIES`] servers.
    pub fn new() -> Self {
        Self::with_max_entries(DEFAULT_ERA_CACHE_ENTRIES)
    }

    /// An empty cache holding up to `max_entries` servers (`0`: remembers nothing).
    pub fn with_max_entries(max_entries: usize) -> Self {
        EraCache {
            inner: Arc::new(Mutex::new(Inner {
                entries: HashMap::new(),
                max_entries,
                clock: 0,
            })),
        }
    }

    /// What is remembered about the server `key`.
    pub fn get(&self, key: &str) -> Option<EraHint> {
        let mut g = self.lock();
        let now = g.tick();
        let (hint, used) = g.entries.get_mut(key)?;
        *used = now;
        Some(hint.clone())
    }

    /// Remembers `hint` for the server `key` (clients given this cache do
    /// this themselves after each handshake; call it to seed the cache, e.g.
    /// from persisted state).
    pub fn insert(&self, key: impl Into<String>, hint: EraHint) {
        let key = key.into();
        let mut g = self.lock();
        if g.max_entries == 0 {
            return;
        }
        if !g.entries.contains_key(&key) && g.entries.len() >= g.max_entries {
            let oldest = g
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                g.entries.remove(&k);
            }
        }
        let now = g.tick();
        g.entries.insert(key, (hint, now));
    }

    /// Forgets the server `key`; its next connection detects the era again.
    pub fn remove(&self, key: &str) -> Option<EraHint> {
        self.lock().entries.remove(key).map(|(h, _)| h)
    }

    /// Forgets every server.
    pub fn clear(&self) {
        self.lock().entries.clear();
    }

    /// How many servers are remembered.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no server is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The map stays consistent even if a holder panicked: every update is
        // a single insert or remove.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use mcp_proto::ProtocolVersion;

    use super::*;

    fn legacy(v: ProtocolVersion) -> EraHint {
        EraHint::Legacy(v)
    }

    #[test]
    fn clones_share_entries_and_the_least_recently_used_goes_first() {
        let a = EraCache::with_max_entries(2);
        let b = a.clone();
        a.insert("one", legacy(ProtocolVersion::V2025_06_18));
        b.insert("two", legacy(ProtocolVersion::V2025_11_25));
        assert_eq!(
            a.get("two").map(|h| h.protocol_version()),
            Some(ProtocolVersion::V2025_11_25)
        );
        // "one" was used least recently: it makes room for "three".
        a.get("two");
        b.insert("three", legacy(ProtocolVersion::V2024_11_05));
        assert_eq!(a.len(), 2);
        assert!(a.get("one").is_none());
        assert!(a.get("two").is_some() && a.get("three").is_some());
        // Replacing an entry never evicts another.
        a.insert("three", legacy(ProtocolVersion::V2025_03_26));
        assert_eq!(a.len(), 2);
        assert!(a.remove("two").is_some());
        assert_eq!(b.len(), 1);
        b.clear();
        assert!(a.is_empty());
    }

    #[test]
    fn zero_entries_remembers_nothing() {
        let c = EraCache::with_max_entries(0);
        c.insert("x", legacy(ProtocolVersion::V2025_11_25));
        assert!(c.get("x").is_none());
    }
}
