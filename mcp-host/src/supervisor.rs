//! One server's supervisor: start it, serve it, restart it, until the host
//! stops it. It alone writes the server's status and live state, but for
//! [`Host::approve`](crate::Host::approve), which sorts a ready server's
//! listing again (under the slot's `sorting` lock, as the supervisor's
//! re-listing) and updates the tool counts of its `Ready` status.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

use mcp_client::{Client, ListKind, ResponseFuture};
use mcp_proto::Era;
use mcp_proto::error::chain;
use mcp_proto::schema::{SubscriptionFilter, Tool};
use tokio::sync::watch;

use crate::cache::CacheTarget;
use crate::host::Shared;
use crate::slot::{Desired, Done, Slot};
use crate::spec::{LaunchError, ServerSpec, reason};
use crate::status::ServerStatus;
use crate::trust::Sorted;

/// A started server: its client, its tools, and what keeps it current.
struct Started {
    client: Client,
    tools: Sorted,
    from_cache: bool,
    changes: watch::Receiver<u64>,
    /// The open `subscriptions/listen` request (2026-07-28), if any.
    _listen: Option<ResponseFuture<mcp_proto::schema::ListenResult>>,
}

/// Launches, connects and lists (through the cache).
async fn start(shared: &Shared, spec: &ServerSpec) -> Result<Started, LaunchError> {
    let client = spec.launcher.launch().await?;
    // Subscribe before listing: a change during the listing is seen.
    let changes = client.list_changed(ListKind::Tools);
    let (tools, from_cache) = list_tools(shared, spec, &client).await?;
    // Tools not as approved are held back; a pin store that cannot be
    // read starts nothing.
    let tools = crate::trust::sort(shared.pins.as_ref(), spec, Arc::new(tools))
        .await
        .map_err(|e| format!("its pinned tool definitions: {}", chain(&e)))?;
    let listen = client.server().and_then(|info| {
        // The changes the server announces, on a 2026-07-28 stream (legacy
        // servers send them unasked).
        let caps = &info.capabilities;
        let on = |c: Option<bool>| c.unwrap_or(false);
        let mut filter = SubscriptionFilter::new();
        if on(caps.tools.as_ref().and_then(|c| c.list_changed)) {
            filter = filter.with_tools_list_changed();
        }
        if on(caps.prompts.as_ref().and_then(|c| c.list_changed)) {
            filter = filter.with_prompts_list_changed();
        }
        if on(caps.resources.as_ref().and_then(|c| c.list_changed)) {
            filter = filter.with_resources_list_changed();
        }
        (info.era() == Era::Modern && filter != SubscriptionFilter::new())
            .then(|| client.listen(filter))
    });
    Ok(Started {
        client,
        tools,
        from_cache,
        changes,
        _listen: listen,
    })
}

/// The server's tools the host offers, from the cache while fresh.
async fn list_tools(
    shared: &Shared,
    spec: &ServerSpec,
    client: &Client,
) -> Result<(Vec<Tool>, bool), LaunchError> {
    if client
        .server()
        .is_some_and(|info| info.capabilities.tools.is_none())
    {
        return Ok((Vec::new(), false));
    }
    let (all, from_cache) = match &shared.cache {
        Some(cache) => {
            let target = target_of(spec);
            match cache.cached_list::<Tool>(&target) {
                Some(tools) => (tools, true),
                None => (cache.list_all::<Tool>(client, &target).await?, false),
            }
        }
        None => (client.list_all::<Tool>().await?, false),
    };
    warn_unmatched(spec, &all);
    Ok((
        all.into_iter().filter(|t| spec.allows(&t.name)).collect(),
        from_cache,
    ))
}

/// Logs each include or exclude pattern of `spec` that matches none of the
/// server's tools (a typo, a renamed tool, another glob dialect's syntax),
/// as the toolbox does for its own filters.
fn warn_unmatched(spec: &ServerSpec, all: &[Tool]) {
    let names = all.iter().map(|t| t.name.as_str());
    if !spec.include.is_empty() {
        mcp_tools::Filter::include(spec.include.iter().cloned())
            .warn_unmatched(&spec.name, names.clone());
    }
    if !spec.exclude.is_empty() {
        mcp_tools::Filter::exclude(spec.exclude.iter().cloned()).warn_unmatched(&spec.name, names);
    }
}

fn target_of(spec: &ServerSpec) -> CacheTarget {
    spec.cache_target
        .clone()
        .unwrap_or_else(|| CacheTarget::new(spec.name.clone()))
}

/// How a served stretch ended.
enum Ended {
    /// The connection closed by itself.
    Died(String),
    /// The host asked (disable, stop); the client is closed.
    Asked,
}

/// One server's supervisor: start, serve, restart, until stopped.
pub(crate) async fn supervise(shared: Arc<Shared>, done: Done) {
    let slot = &*done.0;
    let spec = &slot.spec;
    let mut desired = slot.desired.subscribe();
    let mut failures = 0u32;
    // Whether the status already says this attempt is a retry (`Failed` or
    // `Restarting`, its `next_retry` now past). It keeps the last reason
    // while the retry runs, so an observer never sees the reason replaced
    // by a bare "starting" between two failures.
    let mut retrying = false;
    loop {
        let want = *desired.borrow_and_update();
        match want {
            Desired::Stopped => break,
            Desired::Disabled => {
                shared.set_status(slot, ServerStatus::Disabled);
                slot.set_live(|l| l.client = None);
                shared.rebuild().await;
                slot.first_attempt_ended();
                failures = 0;
                retrying = false;
                if desired.changed().await.is_err() {
                    break;
                }
                continue;
            }
            Desired::Enabled => {}
        }
        if let Some(why) = crate::trust::blocked(shared.managed.as_ref(), spec) {
            tracing::warn!(server = %spec.name, reason = %why, "the managed policy blocks the server");
            shared.set_status(slot, ServerStatus::Blocked { why });
            slot.first_attempt_ended();
            if desired.changed().await.is_err() {
                break;
            }
            continue;
        }
        if retrying {
            // Early, if woken by `restart`: the status says the retry is now.
            shared.retry_now(slot);
        } else {
            shared.set_status(slot, ServerStatus::Starting);
        }
        let attempt = tokio::select! {
            r = tokio::time::timeout(spec.startup_timeout, start(&shared, spec)) => r,
            // Disabled or stopped meanwhile: dropping the start kills it.
            _ = desired.changed() => continue,
        };
        let why = match attempt {
            Ok(Ok(started)) => {
                let since = Instant::now();
                let ended = serve(&shared, slot, started, since, &mut desired).await;
                match ended {
                    // It was ready; whatever comes next starts afresh.
                    Ended::Asked => {
                        retrying = false;
                        continue;
                    }
                    Ended::Died(why) => {
                        tracing::warn!(server = %spec.name, reason = %why, "server went away; restarting");
                        failures = if since.elapsed() >= spec.backoff.reset_after {
                            0
                        } else {
                            failures + 1
                        };
                        let (next_retry, next_retry_at) = after(spec.backoff.delay(failures));
                        shared.set_status(
                            slot,
                            ServerStatus::Restarting {
                                why: why.clone(),
                                attempt: failures + 1,
                                next_retry,
                                next_retry_at,
                            },
                        );
                        slot.set_live(|l| l.client = None);
                        shared.rebuild().await;
                        retrying = true;
                        wait_until(next_retry, &mut desired).await;
                        continue;
                    }
                }
            }
            Ok(Err(e)) => reason(&chain(&*e).to_string()),
            Err(_) => format!(
                "did not start within {:?} (startup timeout)",
                spec.startup_timeout
            ),
        };
        failures += 1;
        retrying = true;
        let (next_retry, next_retry_at) = after(spec.backoff.delay(failures));
        tracing::warn!(server = %spec.name, reason = %why, attempts = failures, "server failed to start");
        shared.set_status(
            slot,
            ServerStatus::Failed {
                why,
                attempts: failures,
                next_retry,
                next_retry_at,
            },
        );
        slot.first_attempt_ended();
        wait_until(next_retry, &mut desired).await;
    }
    slot.set_live(|l| l.client = None);
    shared.set_status(slot, ServerStatus::Stopped);
    shared.rebuild().await;
    slot.first_attempt_ended();
}

/// The moment `wait` from now, on the monotonic and on the wall clock.
fn after(wait: std::time::Duration) -> (Instant, SystemTime) {
    (Instant::now() + wait, SystemTime::now() + wait)
}

/// Sleeps until `at`, or until the desired state changes.
async fn wait_until(at: Instant, desired: &mut watch::Receiver<Desired>) {
    tokio::select! {
        _ = tokio::time::sleep_until(at.into()) => {}
        _ = desired.changed() => {}
    }
}

/// Lists `slot`'s tools on `client` again (the cache's copy dropped first),
/// sorts them by the pins and publishes them, under the slot's `sorting`
/// lock; returns the counts of tools offered and held. A failed listing
/// keeps the previous tools, and a connection that is no longer the slot's
/// publishes nothing (its server was started again meanwhile).
pub(crate) async fn relist(
    shared: &Shared,
    slot: &Slot,
    client: &Client,
) -> Option<(usize, usize)> {
    let spec = &slot.spec;
    if let Some(cache) = &shared.cache {
        cache.invalidate(&target_of(spec).server, ListKind::Tools);
    }
    let _sorting = slot.sorting.lock().await;
    let listed = match list_tools(shared, spec, client).await {
        Ok((tools, _)) => crate::trust::sort(shared.pins.as_ref(), spec, Arc::new(tools))
            .await
            .map_err(|e| format!("its pinned tool definitions: {}", chain(&e)).into()),
        Err(e) => Err(e),
    };
    let tools = match listed {
        Ok(tools) => tools,
        Err(e) => {
            let e: LaunchError = e;
            tracing::warn!(server = %spec.name, error = %chain(&*e), "listing tools again failed; keeping the previous tools");
            return None;
        }
    };
    let counts = (tools.tools.len(), tools.held.len());
    let mut current = false;
    slot.set_live(|l| {
        current = l.client.as_ref().is_some_and(|c| c.same_connection(client));
        if current {
            l.sorted(tools);
        }
    });
    if !current {
        return None;
    }
    shared.rebuild().await;
    Some(counts)
}

/// Serves a started server until it goes away or the host asks it to stop;
/// re-lists its tools when it says they changed.
async fn serve(
    shared: &Shared,
    slot: &Slot,
    started: Started,
    since: Instant,
    desired: &mut watch::Receiver<Desired>,
) -> Ended {
    let spec = &slot.spec;
    let Started {
        client,
        tools,
        from_cache,
        mut changes,
        _listen,
    } = started;
    let version = client
        .protocol_version()
        .unwrap_or(mcp_proto::ProtocolVersion::LATEST_LEGACY);
    let ready = |(tools, held): (usize, usize), from_cache: bool| ServerStatus::Ready {
        era: version.era(),
        protocol_version: version,
        tools,
        held,
        since,
        tools_from_cache: from_cache,
    };
    let status = ready((tools.tools.len(), tools.held.len()), from_cache);
    let generation = shared.generations.fetch_add(1, Ordering::Relaxed) + 1;
    {
        let _sorting = slot.sorting.lock().await;
        slot.set_live(|l| {
            l.client = Some(client.clone());
            l.sorted(tools);
            l.generation = generation;
        });
        shared.rebuild().await;
    }
    let mut lost = slot.lost.subscribe();
    shared.set_status(slot, status);
    slot.first_attempt_ended();
    let closed = client.closed();
    tokio::pin!(closed);
    let mut watching = true;
    // Other lists only invalidate the cache (the host keeps no copy).
    let mut resources = client.list_changed(ListKind::Resources);
    let mut prompts = client.list_changed(ListKind::Prompts);
    let invalidate = |kind: ListKind| {
        if let Some(cache) = &shared.cache {
            cache.invalidate(&target_of(spec).server, kind);
        }
    };
    loop {
        tokio::select! {
            why = &mut closed => return Ended::Died(reason(&chain(&why).to_string())),
            r = async { lost.wait_for(|(g, _)| *g == generation).await.map(|v| v.1.clone()) } => {
                let why = r.unwrap_or_default();
                tracing::warn!(server = %spec.name, reason = %why, "connection lost; reconnecting");
                client.close().await;
                return Ended::Died(why);
            }
            r = changes.changed(), if watching => {
                if r.is_err() {
                    watching = false;
                    continue;
                }
                changes.borrow_and_update();
                tracing::debug!(server = %spec.name, "tools changed; listing again");
                if let Some(counts) = relist(shared, slot, &client).await {
                    shared.set_status(slot, ready(counts, false));
                }
            }
            Ok(()) = resources.changed() => invalidate(ListKind::Resources),
            Ok(()) = prompts.changed() => invalidate(ListKind::Prompts),
            _ = desired.changed() => {
                client.close().await;
                slot.set_live(|l| l.client = None);
                shared.rebuild().await;
                return Ended::Asked;
            }
        }
    }
}
