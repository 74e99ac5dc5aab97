//! A server that exits (or closes stdin) before reading what we send: the
//! write fails with `EPIPE`, and the transport must report the exit status
//! and stderr, once, not `Broken pipe (os error 32)`.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

mod common;

use std::future::poll_fn;
use std::pin::Pin;
use std::time::{Duration, Instant};

use common::*;
use mcp_proto::error::chain;
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind, TransportExt};
use mcp_transport_stdio::{ServerCommand, ServerExited, StdioTransport};
use serde_json::json;
use test_support::eventually;

/// The tests of this file run one at a time: a child forked by a parallel
/// test holds a copy of our pipe ends until it execs, and a write into a
/// pipe whose reader is such a copy succeeds, which would make the
/// "write after exit" scenarios flaky.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn sh(script: &str) -> ServerCommand {
    ServerCommand::new("sh").arg("-c").arg(script)
}

/// Asserts `err` is the terminal `Closed` error for "exit 7" after "boom".
fn assert_exit_7(err: &TransportError) {
    assert_eq!(err.kind(), TransportErrorKind::Closed, "{err}");
    assert!(err.is_terminal());
    let exited = err
        .cause()
        .and_then(|c| c.downcast_ref::<ServerExited>())
        .unwrap_or_else(|| panic!("cause is not ServerExited: {err}"));
    assert_eq!(exited.status().and_then(|s| s.code()), Some(7));
    assert_eq!(exited.to_string(), "server exited with status 7: boom");
    assert!(!chain(err).to_string().contains("Broken pipe"), "{err}");
}

/// Waits (bounded) until the process is gone, without touching the transport.
async fn wait_gone(t: &StdioTransport) {
    let pid = t.pid().unwrap();
    assert!(eventually(Duration::from_secs(10), || process_gone(pid)).await);
}

async fn send(t: &mut StdioTransport, id: i64) -> Result<(), TransportError> {
    tokio::time::timeout(
        Duration::from_secs(20),
        t.send(request(id, "echo", json!({}))),
    )
    .await
    .expect("send timed out")
}

#[tokio::test]
async fn send_after_exit_reports_the_exit_not_broken_pipe() {
    let _serial = SERIAL.lock().await;
    let mut t = StdioTransport::spawn(sh("echo boom >&2; exit 7")).unwrap();
    wait_gone(&t).await;
    let err = send(&mut t, 1).await.unwrap_err();
    assert_exit_7(&err);
    // Reported once: the read side does not repeat it.
    assert!(recv(&mut t).await.is_none());
    assert!(recv(&mut t).await.is_none());
    // Later sends fail plainly; close still works.
    assert!(send(&mut t, 2).await.is_err());
    t.close().await.unwrap();
}

#[tokio::test]
async fn large_message_to_an_exited_server_reports_the_exit() {
    let _serial = SERIAL.lock().await;
    // More than a pipe holds: the write is partial, then EPIPE (or EPIPE at once).
    let mut t = StdioTransport::spawn(sh("echo boom >&2; exit 7")).unwrap();
    wait_gone(&t).await;
    let big = "x".repeat(1 << 20);
    let res = tokio::time::timeout(
        Duration::from_secs(20),
        t.send(request(1, "echo", json!({ "s": big }))),
    )
    .await
    .unwrap();
    assert_exit_7(&res.unwrap_err());
    assert!(recv(&mut t).await.is_none());
}

/// The race of the report: the server exits at once, the client sends at
/// once. Whichever side notices first, the first error is the exit (status
/// and stderr) and it is reported exactly once.
#[tokio::test]
async fn exit_racing_the_first_send_is_reported_once() {
    let _serial = SERIAL.lock().await;
    let (mut via_send, mut via_recv) = (0, 0);
    for round in 0..30 {
        let mut t = StdioTransport::spawn(sh("echo boom >&2; exit 7")).unwrap();
        let mut errors = Vec::new();
        if let Err(e) = send(&mut t, 1).await {
            via_send += 1;
            errors.push(e);
        } else {
            via_recv += 1;
        }
        while let Some(r) = recv(&mut t).await {
            errors.push(r.expect_err("the server sends nothing"));
        }
        assert_eq!(errors.len(), 1, "round {round}: {errors:?}");
        assert_exit_7(&errors[0]);
        t.close().await.unwrap();
    }
    eprintln!("reported by send: {via_send}, by recv: {via_recv}");
}

#[tokio::test]
async fn poll_ready_over_the_limit_reports_the_exit() {
    let _serial = SERIAL.lock().await;
    let mut t = StdioTransport::spawn(sh("echo boom >&2; exit 7").write_buffer_limit(16)).unwrap();
    wait_gone(&t).await;
    Pin::new(&mut t)
        .start_send(request(1, "echo", json!({"pad": "0123456789abcdef"})))
        .unwrap();
    let err = tokio::time::timeout(
        Duration::from_secs(20),
        poll_fn(|cx| Pin::new(&mut t).poll_ready(cx)),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert_exit_7(&err);
    assert!(recv(&mut t).await.is_none());
}

#[tokio::test]
async fn clean_exit_before_reading_is_still_a_send_error() {
    let _serial = SERIAL.lock().await;
    let mut t = StdioTransport::spawn(sh("exit 0")).unwrap();
    wait_gone(&t).await;
    let err = send(&mut t, 1).await.unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::Closed);
    let msg = chain(&err).to_string();
    assert!(msg.contains("exited (status 0) without reading"), "{msg}");
    assert!(msg.contains("Broken pipe"), "keeps the io error: {msg}");
    assert!(recv(&mut t).await.is_none());
}

#[tokio::test]
async fn server_closing_stdin_but_running_is_reported_after_a_bounded_wait() {
    let _serial = SERIAL.lock().await;
    let mut t = StdioTransport::spawn(sh("exec 0<&-; echo ready >&2; exec sleep 30")).unwrap();
    let tail_ready = eventually(Duration::from_secs(10), || {
        t.stderr_tail().iter().any(|l| l == "ready")
    })
    .await;
    assert!(tail_ready);
    let start = Instant::now();
    let err = send(&mut t, 1).await.unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(err.kind(), TransportErrorKind::Closed);
    assert!(
        chain(&err)
            .to_string()
            .contains("closed its stdin but is still running"),
        "{err}"
    );
    assert!(t.exit_status().is_none());
    let start = Instant::now();
    t.close().await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
}
