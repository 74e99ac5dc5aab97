//! The supervisor's status while it retries, driven by launchers that fail
//! on command: no processes, no sockets, no sleeps.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime};

use mcp_host::{Backoff, Host, HostError, Launcher, ServerSpec, ServerStatus};
use tokio::sync::{Notify, mpsc};

/// A server that never starts: every attempt reports that it began, from
/// the second on waits for `gate`, then fails with "attempt N refused".
fn refusing(began: mpsc::UnboundedSender<u32>, gate: Arc<Notify>) -> Launcher {
    let count = Arc::new(AtomicU32::new(0));
    Launcher::new(move || {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        let (began, gate) = (began.clone(), gate.clone());
        async move {
            let _ = began.send(n);
            if n >= 2 {
                gate.notified().await;
            }
            Err(format!("attempt {n} refused").into())
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_keeps_the_last_failure_until_it_ends() {
    let (began_tx, mut began) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let quick = Backoff::new()
        .initial(Duration::from_millis(1))
        .max(Duration::from_millis(1));
    let spec = ServerSpec::new("flaky", refusing(began_tx, gate.clone())).backoff(quick);
    let host = Host::builder().server(spec).start().await.unwrap();
    assert_eq!(began.recv().await, Some(1));

    // The second attempt is under way (it waits for the gate): the status
    // still names the first failure, as it did when `start` returned.
    assert_eq!(began.recv().await, Some(2));
    let ServerStatus::Failed { why, attempts, .. } = host.server_status("flaky").unwrap() else {
        panic!("{:?}", host.status())
    };
    assert_eq!((why.as_str(), attempts), ("attempt 1 refused", 1));
    let ServerStatus::Failed {
        next_retry,
        next_retry_at,
        ..
    } = host.server_status("flaky").unwrap()
    else {
        unreachable!()
    };
    assert!(next_retry <= Instant::now() && next_retry_at <= SystemTime::now());

    // The retry ends: its own failure replaces the first.
    let mut watch = host.watch();
    gate.notify_one();
    let second = tokio::time::timeout(
        Duration::from_secs(30),
        watch.wait_for(
            |r| matches!(&r[0].status, ServerStatus::Failed { attempts, .. } if *attempts == 2),
        ),
    )
    .await
    .unwrap()
    .unwrap()[0]
        .status
        .clone();
    let ServerStatus::Failed { why, .. } = second else {
        unreachable!()
    };
    assert_eq!(why, "attempt 2 refused");
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_retries_a_failed_server_at_once() {
    let (began_tx, mut began) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let hour = Duration::from_secs(3600);
    let patient = Backoff::new().initial(hour).max(hour);
    let spec = ServerSpec::new("flaky", refusing(began_tx, gate.clone())).backoff(patient);
    let host = Host::builder().server(spec).start().await.unwrap();
    assert_eq!(began.recv().await, Some(1));
    let ServerStatus::Failed { next_retry, .. } = host.server_status("flaky").unwrap() else {
        panic!("{:?}", host.status())
    };
    assert!(next_retry > Instant::now() + Duration::from_secs(60));

    // Not in an hour: now. The status says so while the attempt runs.
    host.restart("flaky").unwrap();
    let second = tokio::time::timeout(Duration::from_secs(30), began.recv()).await;
    assert_eq!(second, Ok(Some(2)), "restart did not start an attempt");
    let ServerStatus::Failed {
        why, next_retry, ..
    } = host.server_status("flaky").unwrap()
    else {
        panic!("{:?}", host.status())
    };
    assert_eq!(why, "attempt 1 refused");
    assert!(next_retry <= Instant::now(), "{:?}", host.status());
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_are_added_and_removed_while_the_host_runs() {
    let host = Host::builder().start().await.unwrap();
    assert!(host.status().is_empty());
    let hour = Duration::from_secs(3600);
    let patient = Backoff::new().initial(hour).max(hour);
    let spec = |name: &str| {
        let (began, _) = mpsc::unbounded_channel();
        ServerSpec::new(name, refusing(began, Arc::new(Notify::new()))).backoff(patient)
    };

    // `add` returns once the first attempt ended, as `start` does.
    host.add(spec("a")).await.unwrap();
    host.add(spec("b").enabled(false)).await.unwrap();
    let names =
        |host: &Host| -> Vec<String> { host.status().into_iter().map(|r| r.name).collect() };
    assert_eq!(names(&host), ["a", "b"]);
    assert!(matches!(
        host.server_status("a"),
        Some(ServerStatus::Failed { .. })
    ));
    assert_eq!(host.server_status("b"), Some(ServerStatus::Disabled));
    assert!(matches!(
        host.add(spec("a")).await,
        Err(HostError::DuplicateServer(n)) if n == "a"
    ));

    host.remove("a").await.unwrap();
    assert_eq!(names(&host), ["b"]);
    assert!(matches!(
        host.remove("a").await,
        Err(HostError::UnknownServer(n)) if n == "a"
    ));
    // The name is free again; the new one comes after the others.
    host.add(spec("a")).await.unwrap();
    assert_eq!(names(&host), ["b", "a"]);

    host.close().await;
    assert!(matches!(host.add(spec("c")).await, Err(HostError::Closed)));
    let twice = Host::builder()
        .server(spec("d"))
        .server(spec("d"))
        .start()
        .await;
    assert!(matches!(twice, Err(HostError::DuplicateServer(n)) if n == "d"));
    assert_eq!(host.server_status("a"), Some(ServerStatus::Stopped));
}

/// A host outlives the runtime that ran its servers (an app that shut one
/// runtime down and closes the host from another): `close` and `remove`
/// return at once instead of waiting for supervisors that are gone.
#[test]
fn close_returns_after_the_runtime_that_ran_the_servers_is_gone() {
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let first = runtime();
    let host = first.block_on(async {
        let (began, _) = mpsc::unbounded_channel();
        let hour = Duration::from_secs(3600);
        let spec = |name: &str| {
            ServerSpec::new(name, refusing(began.clone(), Arc::new(Notify::new())))
                .backoff(Backoff::new().initial(hour).max(hour))
        };
        Host::builder()
            .server(spec("a"))
            .server(spec("b"))
            .start()
            .await
            .unwrap()
    });
    drop(first);
    let second = runtime();
    second.block_on(async {
        let within = Duration::from_secs(30);
        tokio::time::timeout(within, host.remove("a"))
            .await
            .expect("remove waited for a supervisor that is gone")
            .unwrap();
        tokio::time::timeout(within, host.close())
            .await
            .expect("close waited for a supervisor that is gone");
    });
}

/// A launch that fails three levels deep (ClientError -> TransportError ->
/// the server's exit) puts every cause in the status once, so a person or
/// a model reading it learns why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failures_reason_names_each_cause_once() {
    use mcp_client::{ClientError, CloseReason};
    use mcp_proto::transport::{TransportError, TransportErrorKind};
    let launcher = Launcher::new(|| async {
        let exit = std::io::Error::other("server exited with status 1: fatal: config missing");
        let closed = TransportError::new(TransportErrorKind::Closed, exit);
        Err(ClientError::Closed(CloseReason::Transport(closed)).into())
    });
    let host = Host::builder()
        .server(ServerSpec::new("broken", launcher))
        .start()
        .await
        .unwrap();
    let ServerStatus::Failed { why, .. } = host.server_status("broken").unwrap() else {
        panic!("{:?}", host.status())
    };
    assert_eq!(
        why,
        "connection closed: server exited with status 1: fatal: config missing"
    );
    host.close().await;
}

/// A server whose every attempt reports that it began, waits for `gate`,
/// then fails with "refused".
fn gated(began: mpsc::UnboundedSender<()>, gate: Arc<Notify>) -> Launcher {
    Launcher::new(move || {
        let (began, gate) = (began.clone(), gate.clone());
        async move {
            let _ = began.send(());
            gate.notified().await;
            Err("refused".into())
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_are_watched_from_the_first_attempt() {
    let (began_tx, mut began) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let hour = Duration::from_secs(3600);
    let spec = ServerSpec::new("gated", gated(began_tx, gate.clone()))
        .backoff(Backoff::new().initial(hour).max(hour).jitter(0.0));
    let host = Host::builder()
        .server(spec)
        .server(
            ServerSpec::new("off", Launcher::new(|| async { Err("never".into()) })).enabled(false),
        )
        .spawn()
        .unwrap();

    // Before the first attempt ended: `Starting` from the first value on.
    let mut watch = host.watch();
    let first: Vec<_> = watch
        .borrow_and_update()
        .iter()
        .map(|r| r.status.clone())
        .collect();
    assert_eq!(first, [ServerStatus::Starting, ServerStatus::Disabled]);
    assert_eq!(began.recv().await, Some(()), "the attempt is under way");
    assert_eq!(host.server_status("gated"), Some(ServerStatus::Starting));
    let started = host.started();
    tokio::pin!(started);
    assert!(
        tokio::time::timeout(Duration::from_millis(50), &mut started)
            .await
            .is_err(),
        "started() returned while the first attempt hangs"
    );

    // The attempt ends: the watcher sees its failure, `started` returns.
    gate.notify_one();
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        watch.wait_for(|r| matches!(r[0].status, ServerStatus::Failed { .. })),
    )
    .await
    .unwrap()
    .unwrap()[0]
        .status
        .clone();
    tokio::time::timeout(Duration::from_secs(30), started)
        .await
        .expect("started() after the first attempt ended");

    // Its text names the next attempt by its wall-clock time, as scheduled.
    let ServerStatus::Failed { next_retry_at, .. } = &failed else {
        unreachable!()
    };
    let expected = SystemTime::now() + hour;
    let off = expected
        .duration_since(*next_retry_at)
        .unwrap_or_else(|e| e.duration());
    assert!(off < Duration::from_secs(60), "{off:?}");
    let text = failed.to_string();
    assert!(
        text.starts_with("failed to start (refused; 1 failed attempt); next attempt at 2")
            && text.ends_with('Z'),
        "{text}"
    );
    host.close().await;
}
