//! StdioTransport against real processes (the python fake server, sh).
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::*;
use mcp_proto::error::chain;
use mcp_proto::transport::{TransportErrorKind, TransportExt};
use mcp_transport_stdio::{ServerCommand, ServerExited, SpawnError, Stderr, StdioTransport};
use serde_json::json;
use test_support::eventually;

#[tokio::test]
async fn round_trip_and_clean_exit() {
    let mut t = StdioTransport::spawn(fake(&[])).unwrap();
    for id in 1..=3 {
        let r = call(&mut t, id, "echo", json!({"n": id, "s": "a\nb"})).await;
        assert_eq!(r, json!({"params": {"n": id, "s": "a\nb"}}));
    }
    assert!(t.exit_status().is_none(), "still running");
    let start = Instant::now();
    t.close().await.unwrap();
    // The server exits on stdin EOF: no escalation.
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(t.exit_status().and_then(|s| s.code()), Some(0));
    assert!(t.recv().await.is_none());
    assert!(t.send(request(9, "echo", json!({}))).await.is_err());
}

#[tokio::test]
async fn many_queued_messages_are_sent_in_one_flush() {
    use mcp_proto::transport::Transport;
    use std::future::poll_fn;
    use std::pin::Pin;

    let mut t = StdioTransport::spawn(fake(&[])).unwrap();
    for id in 0..200 {
        poll_fn(|cx| Pin::new(&mut t).poll_ready(cx)).await.unwrap();
        Pin::new(&mut t)
            .start_send(request(id, "echo", json!({ "i": id })))
            .unwrap();
    }
    poll_fn(|cx| Pin::new(&mut t).poll_flush(cx)).await.unwrap();
    for id in 0..200 {
        let m = recv(&mut t).await.unwrap().unwrap();
        assert_eq!(m.id(), Some(&id.into()), "replies arrive in order");
    }
    t.close().await.unwrap();
}

#[tokio::test]
async fn banner_lines_before_and_between_messages_are_skipped() {
    let mut t = StdioTransport::spawn(fake(&["--banner"])).unwrap();
    assert_eq!(
        call(&mut t, 1, "echo", json!({})).await,
        json!({"params": {}})
    );
    assert_eq!(call(&mut t, 2, "banner", json!({})).await, json!({}));
    assert_eq!(call(&mut t, 3, "banner", json!({})).await, json!({}));
    assert_eq!(t.skipped_lines(), 3);
    t.close().await.unwrap();
}

#[tokio::test]
async fn crash_mid_stream_reports_status_and_stderr() {
    let mut t = StdioTransport::spawn(fake(&[])).unwrap();
    assert_eq!(
        call(&mut t, 1, "echo", json!(1)).await,
        json!({"params": 1})
    );
    t.send(request(
        2,
        "crash",
        json!({"code": 3, "msg": "fatal: config missing"}),
    ))
    .await
    .unwrap();
    let err = recv(&mut t).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::Closed);
    assert!(err.is_terminal());
    let exited = err.cause().unwrap().downcast_ref::<ServerExited>().unwrap();
    assert_eq!(exited.status().and_then(|s| s.code()), Some(3));
    assert_eq!(exited.stderr_tail(), ["fatal: config missing"]);
    assert_eq!(
        exited.to_string(),
        "server exited with status 3: fatal: config missing"
    );
    assert!(
        chain(&err)
            .to_string()
            .contains("server exited with status 3: fatal: config missing")
    );
    assert!(recv(&mut t).await.is_none());
    assert!(recv(&mut t).await.is_none());
    t.close().await.unwrap();
}

#[tokio::test]
async fn exit_before_the_first_message() {
    let mut t = StdioTransport::spawn(fake(&["--exit-now", "1", "fatal: config missing"])).unwrap();
    let err = recv(&mut t).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::Closed);
    assert!(
        chain(&err)
            .to_string()
            .contains("server exited with status 1: fatal: config missing"),
        "{err}"
    );
    assert!(recv(&mut t).await.is_none());

    // A zero exit with nothing said is a clean close.
    let mut t = StdioTransport::spawn(ServerCommand::new("true")).unwrap();
    assert!(recv(&mut t).await.is_none());

    // Killed by a signal.
    let mut t = StdioTransport::spawn(ServerCommand::new("sh").args(["-c", "kill -9 $$"])).unwrap();
    let err = recv(&mut t).await.unwrap().unwrap_err();
    assert!(
        chain(&err)
            .to_string()
            .contains("server was killed by signal 9"),
        "{err}"
    );
}

#[tokio::test]
async fn inherited_stderr_is_not_captured() {
    let cmd = fake(&[
        "--exit-now",
        "4",
        "(expected in test output: inherited stderr)",
    ])
    .stderr(Stderr::inherit());
    let mut t = StdioTransport::spawn(cmd).unwrap();
    let err = recv(&mut t).await.unwrap().unwrap_err();
    let exited = err.cause().unwrap().downcast_ref::<ServerExited>().unwrap();
    assert!(exited.stderr_tail().is_empty());
    assert_eq!(exited.to_string(), "server exited with status 4");
    assert!(t.stderr_tail().is_empty());
}

#[tokio::test]
async fn last_message_without_newline_is_delivered() {
    let script = r#"printf '{"jsonrpc":"2.0","method":"notifications/initialized"}'"#;
    let mut t = StdioTransport::spawn(ServerCommand::new("sh").args(["-c", script])).unwrap();
    let m = recv(&mut t).await.unwrap().unwrap();
    assert_eq!(m.method(), Some("notifications/initialized"));
    assert!(recv(&mut t).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_flood_does_not_deadlock() {
    let bytes = Arc::new(AtomicU64::new(0));
    let lines = Arc::new(AtomicU64::new(0));
    let (b, l) = (bytes.clone(), lines.clone());
    let cmd = fake(&[]).stderr(Stderr::forward_to(move |line| {
        b.fetch_add(line.len() as u64 + 1, Ordering::Relaxed);
        l.fetch_add(1, Ordering::Relaxed);
    }));
    let mut t = StdioTransport::spawn(cmd).unwrap();
    let start = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        call(&mut t, 1, "stderr_flood", json!({"mib": 50})),
    )
    .await
    .expect("deadlocked on a full stderr pipe");
    assert_eq!(r, json!({"flooded": 50 * 1024 * 1024}));
    // Keep talking while the tail of the flood is still being read.
    assert_eq!(
        call(&mut t, 2, "echo", json!(2)).await,
        json!({"params": 2})
    );
    t.close().await.unwrap();
    eprintln!("50 MiB of stderr in {:?}", start.elapsed());
    assert_eq!(bytes.load(Ordering::Relaxed), 50 * 1024 * 1024);
    assert_eq!(lines.load(Ordering::Relaxed), 50 * 1024 * 1024 / 100);

    // Discard mode drains too.
    let mut t = StdioTransport::spawn(fake(&[]).stderr(Stderr::discard())).unwrap();
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        call(&mut t, 1, "stderr_flood", json!({"mib": 50})),
    )
    .await
    .expect("deadlocked on a full stderr pipe");
    assert_eq!(r, json!({"flooded": 50 * 1024 * 1024}));
    t.close().await.unwrap();
}

async fn grandchild(t: &mut StdioTransport, hold_pipes: bool) -> u32 {
    let r = call(
        t,
        1,
        "spawn_grandchild",
        json!({ "hold_pipes": hold_pipes }),
    )
    .await;
    let pid = r["pid"].as_u64().unwrap() as u32;
    assert!(!process_gone(pid), "grandchild {pid} should be running");
    pid
}

#[tokio::test]
async fn grandchild_is_killed_on_close() {
    for hold_pipes in [false, true] {
        let mut t = StdioTransport::spawn(fake(&[])).unwrap();
        let server = t.pid().unwrap();
        let pid = grandchild(&mut t, hold_pipes).await;
        let start = Instant::now();
        t.close().await.unwrap();
        // The server itself exits on EOF; the orphan is swept right away.
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        assert!(
            eventually(Duration::from_secs(2), || process_gone(pid)).await,
            "grandchild {pid} survived close (hold_pipes={hold_pipes})"
        );
        assert!(eventually(Duration::from_secs(2), || process_reaped(server)).await);
    }
}

#[tokio::test]
async fn grandchild_is_killed_on_drop() {
    for hold_pipes in [false, true] {
        let mut t = StdioTransport::spawn(fake(&[])).unwrap();
        let server = t.pid().unwrap();
        let pid = grandchild(&mut t, hold_pipes).await;
        drop(t);
        assert!(
            eventually(Duration::from_secs(2), || process_gone(pid)).await,
            "grandchild {pid} survived drop"
        );
        // The server itself is reaped, not left a zombie.
        assert!(
            eventually(Duration::from_secs(2), || process_reaped(server)).await,
            "server {server} not reaped after drop"
        );
    }
}

#[tokio::test]
async fn grandchild_of_a_launcher_is_killed_on_drop() {
    // `sh -c "python3 …; true"` forks: python is the launcher's child, as
    // node is npx's.
    let script = format!(
        "{} {}/tests/fake_server.py; true",
        python(),
        env!("CARGO_MANIFEST_DIR")
    );
    let mut t = StdioTransport::spawn(ServerCommand::new("sh").args(["-c", &script])).unwrap();
    let sleeper = grandchild(&mut t, false).await;
    drop(t);
    assert!(eventually(Duration::from_secs(2), || process_gone(sleeper)).await);
}

#[tokio::test]
async fn server_that_exits_while_a_grandchild_holds_stdout() {
    let mut t = StdioTransport::spawn(fake(&[])).unwrap();
    let pid = grandchild(&mut t, true).await;
    t.send(request(2, "crash", json!({"code": 2, "msg": "bye"})))
        .await
        .unwrap();
    // stdout stays open through the grandchild: the transport notices the
    // exit, kills the group, and reports.
    let start = Instant::now();
    let err = recv(&mut t).await.unwrap().unwrap_err();
    assert!(
        chain(&err)
            .to_string()
            .contains("server exited with status 2: bye"),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    assert!(eventually(Duration::from_secs(2), || process_gone(pid)).await);
}

#[tokio::test]
async fn shutdown_escalates_to_sigterm_for_a_server_ignoring_stdin_eof() {
    use std::os::unix::process::ExitStatusExt;
    let grace = Duration::from_millis(300);
    let mut t =
        StdioTransport::spawn(fake(&["--ignore-eof"]).shutdown_timeouts(grace, grace)).unwrap();
    call(&mut t, 1, "echo", json!({})).await;
    let start = Instant::now();
    t.close().await.unwrap();
    let took = start.elapsed();
    assert!(
        took >= grace,
        "closed after {took:?}, before the stdin grace"
    );
    assert!(took < grace + Duration::from_millis(1500), "took {took:?}");
    assert_eq!(t.exit_status().and_then(|s| s.signal()), Some(15));
}

#[tokio::test]
async fn shutdown_escalates_to_sigkill_for_a_server_ignoring_sigterm() {
    use std::os::unix::process::ExitStatusExt;
    let grace = Duration::from_millis(300);
    let mut t = StdioTransport::spawn(
        fake(&["--ignore-eof", "--ignore-term"]).shutdown_timeouts(grace, grace),
    )
    .unwrap();
    call(&mut t, 1, "echo", json!({})).await;
    let pid = grandchild(&mut t, false).await; // ignores SIGTERM too (inherited)
    let start = Instant::now();
    t.close().await.unwrap();
    let took = start.elapsed();
    assert!(
        took >= 2 * grace,
        "closed after {took:?}, before both graces"
    );
    assert!(
        took < 2 * grace + Duration::from_millis(1500),
        "took {took:?}"
    );
    assert_eq!(t.exit_status().and_then(|s| s.signal()), Some(9));
    assert!(eventually(Duration::from_secs(2), || process_gone(pid)).await);
}

#[tokio::test]
async fn close_is_resumable_after_the_future_is_dropped() {
    let grace = Duration::from_millis(300);
    let mut t =
        StdioTransport::spawn(fake(&["--ignore-eof"]).shutdown_timeouts(grace, grace)).unwrap();
    call(&mut t, 1, "echo", json!({})).await;
    let start = Instant::now();
    // Cancel the close half-way, then finish it: the timers kept running.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), t.close())
            .await
            .is_err()
    );
    t.close().await.unwrap();
    let took = start.elapsed();
    assert!(
        took >= grace && took < grace + Duration::from_millis(1500),
        "{took:?}"
    );
}

#[tokio::test]
async fn spawn_errors_name_the_program() {
    let err = StdioTransport::spawn(ServerCommand::new("no-such-mcp-server-xyz")).unwrap_err();
    assert!(matches!(err, SpawnError::NotFound { .. }), "{err:?}");
    assert_eq!(err.program(), "no-such-mcp-server-xyz");
    assert!(
        err.to_string().contains("`no-such-mcp-server-xyz`"),
        "{err}"
    );

    let dir = std::env::temp_dir().join(format!("mcp-stdio-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("not-executable.sh");
    std::fs::write(&file, "#!/bin/sh\necho hi\n").unwrap();
    let err = StdioTransport::spawn(ServerCommand::new(&file)).unwrap_err();
    assert!(
        matches!(err, SpawnError::PermissionDenied { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("not-executable.sh"), "{err}");

    let err =
        StdioTransport::spawn(ServerCommand::new("true").cwd(dir.join("missing"))).unwrap_err();
    assert!(
        matches!(err, SpawnError::WorkingDirectory { .. }),
        "{err:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn spawn_outside_a_runtime_is_an_error_not_a_panic() {
    let err = StdioTransport::spawn(ServerCommand::new("true")).unwrap_err();
    assert!(matches!(err, SpawnError::NoRuntime { .. }), "{err:?}");
}

#[tokio::test]
async fn environment_and_working_directory() {
    let env_of = |cmd: ServerCommand| async move {
        let mut t = StdioTransport::spawn(cmd).unwrap();
        let r = call(&mut t, 1, "env", json!({})).await;
        t.close().await.unwrap();
        r["env"].as_object().unwrap().clone()
    };
    // cargo sets CARGO_MANIFEST_DIR for test processes: a stand-in secret.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());

    let env = env_of(fake(&[]).env("EXTRA", "1")).await;
    assert!(
        env.contains_key("CARGO_MANIFEST_DIR"),
        "inherited by default"
    );
    assert_eq!(env["EXTRA"], "1");

    let env = env_of(fake(&[]).env_remove("CARGO_MANIFEST_DIR")).await;
    assert!(!env.contains_key("CARGO_MANIFEST_DIR"));

    let env = env_of(fake(&[]).env("EXTRA", "2").env_clear_to_allowlist()).await;
    assert!(
        !env.contains_key("CARGO_MANIFEST_DIR"),
        "not on the allowlist"
    );
    assert_eq!(
        env["EXTRA"], "2",
        "explicit variables survive the allowlist"
    );
    assert_eq!(env["PATH"], std::env::var("PATH").unwrap());
    for key in env.keys() {
        assert!(
            key == "EXTRA"
                || mcp_transport_stdio::DEFAULT_ENV_ALLOWLIST.contains(&key.as_str())
                // python may set this itself
                || key == "LC_CTYPE",
            "unexpected variable {key}"
        );
    }

    let script = r#"printf '{"jsonrpc":"2.0","id":1,"result":{"cwd":"%s"}}\n' "$(pwd)""#;
    let mut t =
        StdioTransport::spawn(ServerCommand::new("sh").args(["-c", script]).cwd("/tmp")).unwrap();
    let m = recv(&mut t).await.unwrap().unwrap();
    let mcp_proto::Message::Response(r) = m else {
        panic!()
    };
    assert_eq!(r.result.get(), r#"{"cwd":"/tmp"}"#);
}

#[tokio::test]
async fn shell_words_command_line_runs() {
    let line = format!(
        "GREETING='hello world' {} {}/tests/fake_server.py --banner",
        python(),
        env!("CARGO_MANIFEST_DIR")
    );
    let mut t = StdioTransport::spawn(ServerCommand::parse_shell_words(&line).unwrap()).unwrap();
    let r = call(&mut t, 1, "env", json!({})).await;
    assert_eq!(r["env"]["GREETING"], "hello world");
    assert_eq!(t.skipped_lines(), 1);
    t.close().await.unwrap();
}
