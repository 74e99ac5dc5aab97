//! Durable tasks: a `TaskTicket` written down, read back and resumed. The
//! ticket's deadline and expiry are wall-clock times; what is left of them
//! bounds the resumed handle (tokio's clock is paused, so a bound that did
//! not hold would show as a wait of the task's whole ttl). A ticket that
//! cannot be followed is a typed error, without a request where none is
//! needed.

use std::time::{SystemTime, UNIX_EPOCH};

use mcp_client::{TaskEra, TaskOptions, TaskTicket, TicketError};
use tokio::time::Instant;

use super::tasks::{create, fail, started, task, text_result};
use super::*;

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A ticket as a program that restarted reads it back.
fn ticket(id: &str, deadline_in: Option<i64>, expires_in: Option<i64>) -> TaskTicket {
    let now = unix_ms() as i64;
    let mut json = json!({
        "format": 1,
        "server": {"name": "research", "implementation": "fake", "version": "1"},
        "taskId": id,
        "era": "2025-11-25",
        "startedAtMs": now - 10_000,
        "ttlMs": 60_000,
    });
    if let Some(d) = deadline_in {
        json["deadlineAtMs"] = json!(now + d);
    }
    if let Some(e) = expires_in {
        json["expiresAtMs"] = json!(now + e);
    }
    serde_json::from_value(json).unwrap()
}

/// A handle's ticket carries the server's identity, the deadline and the
/// expiry as wall-clock times, and survives JSON; resumed, it follows the
/// task to its result.
#[tokio::test(start_paused = true)]
async fn a_ticket_written_down_is_resumed_to_the_result() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        create(&mut server, json!({"pollInterval": 100, "ttl": 60_000})).await;
        let r = next_request(&mut server).await;
        assert_eq!(
            (&*r.method, &params(&r)["taskId"]),
            ("tasks/get", &json!("t1"))
        );
        respond(&mut server, r.id, task("t1", "completed", json!({}))).await;
        let r = next_request(&mut server).await;
        assert_eq!(r.method, "tasks/result");
        respond(&mut server, r.id, text_result("resumed")).await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let before = unix_ms();
    let handle = started(
        &client,
        TaskOptions::new().deadline(Duration::from_secs(600)),
    )
    .await;
    let written = serde_json::to_string(&handle.ticket("research")).unwrap();
    drop(handle);
    let after = unix_ms();
    let ticket: TaskTicket = serde_json::from_str(&written).unwrap();
    assert_eq!(ticket.server.name, "research");
    assert_eq!(ticket.server.implementation.as_deref(), Some("fake"));
    assert_eq!(ticket.server.version.as_deref(), Some("1"));
    assert_eq!((ticket.task_id.as_str(), ticket.era), ("t1", TaskEra::Core));
    assert_eq!(ticket.ttl_ms, Some(60_000));
    let deadline = ticket.deadline_at_ms.unwrap();
    assert!(
        (before + 600_000..=after + 600_000).contains(&deadline),
        "{ticket:?}"
    );
    let expires = ticket.expires_at_ms.unwrap();
    assert!(
        (before + 60_000..=after + 60_000).contains(&expires),
        "{ticket:?}"
    );
    let handle = client
        .resume_task(&ticket, TaskOptions::new())
        .await
        .unwrap();
    assert_eq!(
        handle.result().await.unwrap().content[0].as_text(),
        Some("resumed")
    );
    srv.await.unwrap();
}

/// The ttl ran from the task's creation, before the restart: a resumed
/// task still `working` ends at the ticket's expiry (2 s left), not a
/// fresh ttl (60 s) later.
#[tokio::test(start_paused = true)]
async fn a_resumed_task_expires_when_the_ticket_says_not_a_ttl_later() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        loop {
            let Some(Ok(Message::Request(r))) = server.recv().await else {
                return;
            };
            // At the expiry the client tells the server to stop.
            if r.method == "tasks/cancel" {
                respond(&mut server, r.id, task("t1", "cancelled", json!({}))).await;
                continue;
            }
            assert_eq!(r.method, "tasks/get");
            let working = task("t1", "working", json!({"pollInterval": 500, "ttl": 60_000}));
            respond(&mut server, r.id, working).await;
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let t0 = Instant::now();
    let mut handle = client
        .resume_task(&ticket("t1", None, Some(2_000)), TaskOptions::new())
        .await
        .unwrap();
    // Bounded, so a bound that does not hold fails instead of hanging.
    let err = tokio::time::timeout(Duration::from_secs(120), handle.wait())
        .await
        .expect("the resumed wait outlived the ticket's expiry")
        .unwrap_err();
    assert!(matches!(err, ClientError::TaskExpired { .. }), "{err:?}");
    let waited = t0.elapsed();
    assert!(waited <= Duration::from_millis(2_100), "waited {waited:?}");
    client.close().await;
    srv.await.unwrap();
}

/// The caller's deadline survives the restart too: the resumed wait ends
/// at it, with `tasks/cancel` sent.
#[tokio::test(start_paused = true)]
async fn a_resumed_task_is_cancelled_at_the_tickets_deadline() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        loop {
            let r = next_request(&mut server).await;
            match &*r.method {
                "tasks/get" => {
                    let working = task("t1", "working", json!({"pollInterval": 500}));
                    respond(&mut server, r.id, working).await;
                }
                "tasks/cancel" => {
                    respond(&mut server, r.id, task("t1", "cancelled", json!({}))).await;
                    return;
                }
                other => panic!("unexpected {other}"),
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let t0 = Instant::now();
    let mut handle = client
        .resume_task(&ticket("t1", Some(1_500), None), TaskOptions::new())
        .await
        .unwrap();
    let err = tokio::time::timeout(Duration::from_secs(120), handle.wait())
        .await
        .expect("the resumed wait outlived the ticket's deadline")
        .unwrap_err();
    let ClientError::TaskDeadline { after, .. } = err else {
        panic!("{err:?}")
    };
    // The deadline the caller set (from the task's start), not what was left.
    assert!(after >= Duration::from_millis(11_000), "{after:?}");
    assert!(
        t0.elapsed() <= Duration::from_millis(1_600),
        "{:?}",
        t0.elapsed()
    );
    srv.await.unwrap();
}

/// Tickets that cannot be followed: each a typed error at once. An expired
/// one, one for another server, era or format sends nothing; one past its
/// deadline sends `tasks/cancel`; one the server does not know (-32602) is
/// `Unknown`.
#[tokio::test(start_paused = true)]
async fn expired_unknown_foreign_and_late_tickets_are_typed_outcomes() {
    let (client_end, mut server) = pair();
    let srv = tokio::spawn(async move {
        legacy_handshake(&mut server).await;
        // The first request the server sees is the late ticket's cancel.
        let r = next_request(&mut server).await;
        assert_eq!(
            (&*r.method, &params(&r)["taskId"]),
            ("tasks/cancel", &json!("late"))
        );
        respond(&mut server, r.id, task("late", "cancelled", json!({}))).await;
        let r = next_request(&mut server).await;
        assert_eq!(
            (&*r.method, &params(&r)["taskId"]),
            ("tasks/get", &json!("gone"))
        );
        fail(
            &mut server,
            r.id,
            ErrorCode::INVALID_PARAMS,
            "Task not found",
        )
        .await;
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    let resume = |t: TaskTicket| {
        let client = client.clone();
        async move {
            client
                .resume_task(&t, TaskOptions::new())
                .await
                .unwrap_err()
        }
    };
    let err = resume(ticket("old", None, Some(-1))).await;
    assert!(
        matches!(&err, ClientError::Ticket(TicketError::Expired { task_id, .. }) if task_id == "old"),
        "{err:?}"
    );
    let mut other = ticket("x", None, None);
    other.server.implementation = Some("someone-else".into());
    let err = resume(other).await;
    assert!(
        matches!(err, ClientError::Ticket(TicketError::OtherServer { .. })),
        "{err:?}"
    );
    let mut ext = ticket("x", None, None);
    ext.era = TaskEra::Extension;
    let err = resume(ext).await;
    assert!(
        matches!(err, ClientError::Ticket(TicketError::OtherEra { .. })),
        "{err:?}"
    );
    let mut future = ticket("x", None, None);
    future.format = 2;
    let err = resume(future).await;
    assert!(
        matches!(err, ClientError::Ticket(TicketError::Format { found: 2 })),
        "{err:?}"
    );
    let mut bad = ticket("x", None, None);
    bad.task_id = String::new();
    let err = resume(bad).await;
    assert!(
        matches!(err, ClientError::Ticket(TicketError::BadId)),
        "{err:?}"
    );
    let err = resume(ticket("late", Some(-1), None)).await;
    assert!(matches!(err, ClientError::TaskDeadline { .. }), "{err:?}");
    // Another version of the same server is asked: it may keep the task.
    let mut gone = ticket("gone", None, None);
    gone.server.version = Some("2".into());
    let err = resume(gone).await;
    assert!(
        matches!(&err, ClientError::Ticket(TicketError::Unknown { task_id, message }) if task_id == "gone" && message == "Task not found"),
        "{err:?}"
    );
    srv.await.unwrap();
}
