//! Response caching (SEP-2549, 2026-07-28): cacheable answers kept while
//! their `ttlMs` says they are fresh.
//!
//! - [`ResponseCache`]: the front a host uses. Lists (`tools/list`,
//!   `resources/list`, `resources/templates/list`, `prompts/list`, every
//!   page merged into one entry) and `resources/read`, answered from the
//!   cache while fresh, fetched and stored otherwise.
//! - [`CacheStore`]: where entries live. [`MemoryStore`] (the default) or
//!   [`FileStore`](crate::FileStore), so a host that restarts starts warm.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_client::{Client, ClientError, ListKind};
use mcp_proto::schema::{CacheScope, PageItem, ReadResourceResult};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest a server's `ttlMs` is honoured (24 hours); larger values are
/// clamped, so a typo on the server does not pin an answer for a year.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How many entries a store keeps by default ([`MemoryStore::new`],
/// [`FileStore::open`](crate::FileStore::open)); beyond it, the entries that
/// expire soonest go first.
pub const DEFAULT_MAX_ENTRIES: usize = 1024;

/// What a cached answer is the answer to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CacheKey {
    /// The server's identity (see [`CacheTarget::new`]).
    pub server: String,
    /// The method, e.g. `tools/list`.
    pub method: String,
    /// The parameters that select the answer: empty for a whole list, the
    /// `uri` for `resources/read`.
    pub params: String,
    /// `None` for a public answer; the principal's partition for a private one.
    pub partition: Option<String>,
}

impl CacheKey {
    /// A key.
    pub fn new(
        server: impl Into<String>,
        method: impl Into<String>,
        params: impl Into<String>,
        partition: Option<String>,
    ) -> Self {
        CacheKey {
            server: server.into(),
            method: method.into(),
            params: params.into(),
            partition,
        }
    }
}

/// A cached answer and until when it is fresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CacheEntry {
    /// The answer: a list's merged items (a JSON array), or a whole result.
    pub value: Value,
    /// When it stops being fresh, in milliseconds since the Unix epoch (wall
    /// time, so it means the same after a restart).
    pub expires_at_ms: u64,
}

impl CacheEntry {
    /// An entry.
    pub fn new(value: Value, expires_at_ms: u64) -> Self {
        CacheEntry {
            value,
            expires_at_ms,
        }
    }

    /// Whether it is still fresh at `now_ms` (milliseconds since the epoch).
    pub fn is_fresh(&self, now_ms: u64) -> bool {
        now_ms < self.expires_at_ms
    }
}

/// Where a [`ResponseCache`] keeps its entries. Implement it to put the cache
/// elsewhere (a database, a shared service); calls are short and must not
/// block for long (they run on the async runtime's threads).
pub trait CacheStore: Send + Sync + fmt::Debug {
    /// The entry under `key`, fresh or not.
    fn get(&self, key: &CacheKey) -> Option<CacheEntry>;
    /// Stores `entry` under `key`, replacing any.
    fn put(&self, key: CacheKey, entry: CacheEntry);
    /// Drops every entry of `server` for `method`, in every partition and
    /// for every parameter.
    fn invalidate(&self, server: &str, method: &str);
    /// Drops everything.
    fn clear(&self);
}

/// The entries of a store, bounded: expired ones are dropped on insert, and
/// beyond the bound the ones that expire soonest go first.
#[derive(Debug)]
pub(crate) struct Entries {
    pub(crate) map: HashMap<CacheKey, CacheEntry>,
    max_entries: usize,
}

impl Entries {
    pub(crate) fn new(max_entries: usize) -> Self {
        Entries {
            map: HashMap::new(),
            max_entries,
        }
    }

    pub(crate) fn insert(&mut self, key: CacheKey, entry: CacheEntry, now_ms: u64) {
        self.map.insert(key, entry);
        self.trim(now_ms);
    }

    pub(crate) fn trim(&mut self, now_ms: u64) {
        self.map.retain(|_, e| e.is_fresh(now_ms));
        if self.map.len() > self.max_entries {
            let mut by_expiry: Vec<(u64, CacheKey)> = self
                .map
                .iter()
                .map(|(k, e)| (e.expires_at_ms, k.clone()))
                .collect();
            by_expiry.sort_by_key(|(at, _)| *at);
            let excess = self.map.len() - self.max_entries;
            for (_, k) in by_expiry.into_iter().take(excess) {
                self.map.remove(&k);
            }
        }
    }

    pub(crate) fn invalidate(&mut self, server: &str, method: &str) -> bool {
        let before = self.map.len();
        self.map
            .retain(|k, _| !(k.server == server && k.method == method));
        self.map.len() != before
    }
}

/// An in-memory [`CacheStore`], bounded by entry count. The default.
#[derive(Debug)]
pub struct MemoryStore {
    entries: Mutex<Entries>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(DEFAULT_MAX_ENTRIES)
    }
}

impl MemoryStore {
    /// A store keeping at most `max_entries` entries.
    pub fn new(max_entries: usize) -> Self {
        MemoryStore {
            entries: Mutex::new(Entries::new(max_entries)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl CacheStore for MemoryStore {
    fn get(&self, key: &CacheKey) -> Option<CacheEntry> {
        self.lock().map.get(key).cloned()
    }

    fn put(&self, key: CacheKey, entry: CacheEntry) {
        self.lock().insert(key, entry, now_ms());
    }

    fn invalidate(&self, server: &str, method: &str) {
        self.lock().invalidate(server, method);
    }

    fn clear(&self) {
        self.lock().map.clear();
    }
}

/// Locks `m`, whatever a panicking holder left (the data stays consistent:
/// every change is one call on it).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Who asks whom: the server's cache identity and the principal's partition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheTarget {
    /// The server's identity in the cache.
    pub server: String,
    /// The partition private answers are kept under.
    pub partition: String,
}

impl CacheTarget {
    /// Answers of `server`: a stable identity for the server (for a
    /// configured server, its name and its command line or URL), with the
    /// default partition (`""`: the host's one user).
    pub fn new(server: impl Into<String>) -> Self {
        CacheTarget {
            server: server.into(),
            partition: String::new(),
        }
    }

    /// Private answers are kept under `partition`: the access token's
    /// subject, or any key that tells your users apart. Public answers are
    /// shared whatever the partition.
    #[must_use]
    pub fn partition(mut self, partition: impl Into<String>) -> Self {
        self.partition = partition.into();
        self
    }

    fn key(&self, method: &str, params: &str, scope: Scope) -> CacheKey {
        CacheKey::new(
            self.server.clone(),
            method,
            params,
            match scope {
                Scope::Public => None,
                Scope::Private => Some(self.partition.clone()),
            },
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Public,
    Private,
}

/// The scope an answer is stored under: absent is public (SEP-2549),
/// unknown is private.
fn scope_of(scope: Option<CacheScope>) -> Scope {
    match scope {
        None | Some(CacheScope::Public) => Scope::Public,
        Some(_) => Scope::Private,
    }
}

/// When an answer received at `received_ms` with `ttl_ms` expires, or
/// `None` if it is not to be stored (no TTL, or 0).
fn expiry(received_ms: u64, ttl_ms: Option<u64>) -> Option<u64> {
    let cap = u64::try_from(MAX_TTL.as_millis()).unwrap_or(u64::MAX);
    match ttl_ms {
        Some(ttl) if ttl > 0 => Some(received_ms.saturating_add(ttl.min(cap))),
        _ => None,
    }
}

/// How many lookups the cache answered and how many went to the server
/// (see [`ResponseCache::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Answers served from the cache.
    pub hits: u64,
    /// Answers fetched from the server.
    pub misses: u64,
}

/// A cache for servers' cacheable answers. Cheap to clone; clones share
/// the store.
///
/// # Rules (from the spec's "Caching" page)
///
/// - Fresh while `now < received + ttlMs`; `ttlMs` absent, `0` or negative
///   means immediately stale: nothing is stored. A merged list is fresh
///   while every one of its pages is (the earliest expiry wins). `ttlMs` is
///   capped at [`MAX_TTL`].
/// - `cacheScope: "public"` (or absent: SEP-2549 says absent is public)
///   entries are shared by every principal; `"private"` (and unknown
///   scopes) are kept per principal: the [`CacheTarget::partition`] (pass
///   the access token's subject, or any key that separates your users).
/// - `notifications/*/list_changed` invalidates: call
///   [`invalidate`](ResponseCache::invalidate) (the [`Host`](crate::Host)
///   does, for every server it supervises).
/// - The key is the server (a caller-chosen identity: the config name plus
///   the command line or URL, so an edited config does not hit an old
///   entry), the method, the parameters that select the answer (the `uri`
///   of `resources/read`; nothing for whole lists) and the partition.
///
/// A cache never fails a request: a store that cannot write logs a warning.
///
/// # Example
///
/// ```
/// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
/// use mcp_host::{CacheTarget, ResponseCache};
/// use mcp_proto::schema::Tool;
///
/// let cache = ResponseCache::memory();
/// let target = CacheTarget::new("files node server.js");
/// let tools: Vec<Tool> = cache.list_all(&client, &target).await?; // tools/list, all pages
/// let again: Vec<Tool> = cache.list_all(&client, &target).await?; // no request while fresh
/// # let _ = (tools, again); Ok(()) }
/// ```
#[derive(Clone)]
pub struct ResponseCache {
    store: Arc<dyn CacheStore>,
    stats: Arc<Mutex<CacheStats>>,
}

impl fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseCache")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Default for ResponseCache {
    fn default() -> Self {
        ResponseCache::memory()
    }
}

impl ResponseCache {
    /// A cache over `store`.
    pub fn new(store: impl CacheStore + 'static) -> Self {
        Self::from_arc(Arc::new(store))
    }

    /// A cache over a shared store.
    pub fn from_arc(store: Arc<dyn CacheStore>) -> Self {
        ResponseCache {
            store,
            stats: Arc::default(),
        }
    }

    /// An in-memory cache ([`MemoryStore`], [`DEFAULT_MAX_ENTRIES`]).
    pub fn memory() -> Self {
        Self::new(MemoryStore::default())
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn CacheStore> {
        &self.store
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> CacheStats {
        *self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, hit: bool) {
        let mut s = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        if hit {
            s.hits += 1;
        } else {
            s.misses += 1;
        }
    }

    /// The fresh answer under `method` and `params`, public first, then the
    /// target's private one.
    fn fresh(&self, target: &CacheTarget, method: &str, params: &str) -> Option<Value> {
        let now = now_ms();
        [Scope::Public, Scope::Private]
            .into_iter()
            .filter_map(|scope| self.store.get(&target.key(method, params, scope)))
            .find(|e| e.is_fresh(now))
            .map(|e| e.value)
    }

    /// The whole list of `T` (`Tool`, `Resource`, `ResourceTemplate`,
    /// `Prompt`) from the cache if fresh, without I/O; `None` otherwise. A
    /// hit counts in [`stats`](ResponseCache::stats).
    pub fn cached_list<T: PageItem + DeserializeOwned>(
        &self,
        target: &CacheTarget,
    ) -> Option<Vec<T>> {
        let items = self.lookup_list(target);
        if items.is_some() {
            self.count(true);
        }
        items
    }

    fn lookup_list<T: PageItem + DeserializeOwned>(&self, target: &CacheTarget) -> Option<Vec<T>> {
        let value = self.fresh(target, T::METHOD, "")?;
        match serde_json::from_value(value) {
            Ok(items) => Some(items),
            Err(e) => {
                tracing::debug!(server = %target.server, method = T::METHOD, error = %e, "cached list does not decode; fetching again");
                None
            }
        }
    }

    /// The whole list of `T`, every page merged: from the cache while fresh,
    /// else from `client` (following cursors), stored if every page said
    /// how long it stays fresh.
    pub async fn list_all<T>(
        &self,
        client: &Client,
        target: &CacheTarget,
    ) -> Result<Vec<T>, ClientError>
    where
        T: PageItem + Serialize + DeserializeOwned,
    {
        if let Some(items) = self.cached_list::<T>(target) {
            return Ok(items);
        }
        self.count(false);
        let mut items = Vec::new();
        // The earliest expiry of the pages so far; `None` once one page is
        // not cacheable.
        let mut expires = Some(u64::MAX);
        let mut scope = Scope::Public;
        let mut cursors = mcp_client::PageCursors::new(T::METHOD, client.max_list_pages());
        let mut cursor = None;
        loop {
            let page = client.list_page::<T>(cursor.take()).await?;
            expires = expires
                .zip(expiry(now_ms(), page.ttl_ms))
                .map(|(a, b)| a.min(b));
            if scope_of(page.cache_scope) == Scope::Private {
                scope = Scope::Private;
            }
            items.extend(page.items);
            match cursors.next(page.next_cursor)? {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        if let Some(at) = expires {
            match serde_json::to_value(&items) {
                Ok(value) => self
                    .store
                    .put(target.key(T::METHOD, "", scope), CacheEntry::new(value, at)),
                Err(e) => tracing::warn!(error = %e, "could not encode a list for the cache"),
            }
        }
        Ok(items)
    }

    /// `resources/read` of `uri`: from the cache while fresh, else from
    /// `client`, stored if the result says how long it stays fresh.
    pub async fn read_resource(
        &self,
        client: &Client,
        target: &CacheTarget,
        uri: &str,
    ) -> Result<ReadResourceResult, ClientError> {
        const METHOD: &str = "resources/read";
        if let Some(v) = self.fresh(target, METHOD, uri) {
            if let Ok(r) = serde_json::from_value(v) {
                self.count(true);
                return Ok(r);
            }
        }
        self.count(false);
        let result = client.read_resource(uri).await?;
        if let Some(at) = expiry(now_ms(), result.ttl_ms) {
            if let Ok(value) = serde_json::to_value(&result) {
                let key = target.key(METHOD, uri, scope_of(result.cache_scope));
                self.store.put(key, CacheEntry::new(value, at));
            }
        }
        Ok(result)
    }

    /// Drops what `server` said about `kind`'s list (call it on
    /// `notifications/*/list_changed`): resources also drop the templates.
    pub fn invalidate(&self, server: &str, kind: ListKind) {
        for method in methods_of(kind) {
            self.store.invalidate(server, method);
        }
    }

    /// Drops the cached `resources/read` answers of `server` (call it on
    /// `notifications/resources/updated`).
    pub fn invalidate_reads(&self, server: &str) {
        self.store.invalidate(server, "resources/read");
    }
}

/// The list methods a `list_changed` of `kind` makes stale.
fn methods_of(kind: ListKind) -> &'static [&'static str] {
    match kind {
        ListKind::Tools => &["tools/list"],
        ListKind::Prompts => &["prompts/list"],
        ListKind::Resources => &["resources/list", "resources/templates/list"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: &str) -> CacheKey {
        CacheKey::new(n, "tools/list", "", None)
    }

    #[test]
    fn expiry_follows_the_spec() {
        assert_eq!(
            expiry(1000, None),
            None,
            "absent ttlMs is immediately stale"
        );
        assert_eq!(expiry(1000, Some(0)), None, "0 is immediately stale");
        assert_eq!(expiry(1000, Some(500)), Some(1500));
        let cap = u64::try_from(MAX_TTL.as_millis()).unwrap_or(0);
        assert_eq!(expiry(1000, Some(u64::MAX)), Some(1000 + cap));
        let e = CacheEntry::new(Value::Null, 1500);
        assert!(e.is_fresh(1499));
        assert!(!e.is_fresh(1500), "fresh while now < received + ttl");
    }

    #[test]
    fn scopes_absent_is_public_unknown_is_private() {
        assert_eq!(scope_of(None), Scope::Public);
        assert_eq!(scope_of(Some(CacheScope::Public)), Scope::Public);
        assert_eq!(scope_of(Some(CacheScope::Private)), Scope::Private);
        assert_eq!(scope_of(Some(CacheScope::Unknown)), Scope::Private);
    }

    #[test]
    fn entries_drop_expired_then_soonest_expiring_beyond_the_bound() {
        let mut e = Entries::new(2);
        e.insert(key("a"), CacheEntry::new(Value::Null, 300), 100);
        e.insert(key("b"), CacheEntry::new(Value::Null, 200), 100);
        e.insert(key("c"), CacheEntry::new(Value::Null, 400), 100);
        assert!(e.map.contains_key(&key("a")) && e.map.contains_key(&key("c")));
        assert!(
            !e.map.contains_key(&key("b")),
            "the soonest to expire went first"
        );
        e.insert(key("d"), CacheEntry::new(Value::Null, 1000), 350);
        assert!(!e.map.contains_key(&key("a")), "expired at 350");
        assert_eq!(e.map.len(), 2);
    }

    #[test]
    fn private_answers_are_kept_per_partition_public_ones_shared() {
        let cache = ResponseCache::memory();
        let alice = CacheTarget::new("s").partition("alice");
        let bob = CacheTarget::new("s").partition("bob");
        let later = now_ms() + 60_000;
        cache.store.put(
            alice.key("resources/read", "u", Scope::Private),
            CacheEntry::new(Value::from("alice's"), later),
        );
        assert_eq!(
            cache.fresh(&alice, "resources/read", "u"),
            Some(Value::from("alice's"))
        );
        assert_eq!(cache.fresh(&bob, "resources/read", "u"), None);
        cache.store.put(
            bob.key("tools/list", "", Scope::Public),
            CacheEntry::new(Value::from("shared"), later),
        );
        assert_eq!(
            cache.fresh(&alice, "tools/list", ""),
            Some(Value::from("shared"))
        );
        cache.invalidate("s", ListKind::Tools);
        assert_eq!(cache.fresh(&alice, "tools/list", ""), None);
        assert!(
            cache.fresh(&alice, "resources/read", "u").is_some(),
            "only the tools list went"
        );
    }
}
