//! `429 Too Many Requests` and `503 Service Unavailable` with
//! `Retry-After`: what the server did not process is sent again after the
//! wait it asked for (seconds or an HTTP date), within the request's
//! deadline and the transport's bounds; a `tools/call` whose fate a 503
//! leaves unknown never is; a wait beyond the deadline fails at once,
//! saying when the server asked to be retried.

use super::*;
use mcp_transport_http::NotRetried;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A server that refuses the first `refusals` POSTs of each method with
/// `status` and `retry_after` (if any), then answers.
fn refusing(
    status: StatusCode,
    retry_after: Option<String>,
    refusals: usize,
) -> impl Fn(&Rec) -> Reply2 + Send + Sync + 'static {
    let seen = Arc::new(std::sync::Mutex::new(std::collections::HashMap::<
        String,
        usize,
    >::new()));
    move |r: &Rec| {
        let method = r.rpc_method().unwrap_or("").to_owned();
        let n = {
            let mut seen = seen.lock().unwrap();
            let n = seen.entry(method.clone()).or_default();
            *n += 1;
            *n
        };
        if n <= refusals {
            return Reply2 {
                reply: Reply::Raw(status, "text/plain", "slow down".into()),
                headers: retry_after
                    .iter()
                    .map(|v| ("retry-after", v.clone()))
                    .collect(),
            };
        }
        if r.body.get("id").is_none() {
            return Reply::Accepted.into();
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"attempt": n}))).into()
    }
}

fn posts(server: &Server, method: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.rpc_method() == Some(method))
        .count()
}

async fn transport(server: &Server) -> HttpTransport {
    let mut t = HttpTransport::new(&server.url).unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t
}

fn throttled(e: &TransportError) -> (&Option<NotRetried>, Option<Duration>) {
    assert_eq!(e.kind(), TransportErrorKind::Throttled, "{e:?}");
    match http_cause(e) {
        HttpError::Throttled {
            not_retried,
            retry_at,
            ..
        } => (not_retried, retry_at.map(|r| r.delay)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_even_for_tools_call() {
    let server = serve(refusing(StatusCode::TOO_MANY_REQUESTS, Some("1".into()), 1)).await;
    let mut t = transport(&server).await;
    let started = Instant::now();
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"attempt": 2}));
    let took = started.elapsed();
    // At least the second asked for, plus at most a fifth of jitter.
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert!(took < Duration::from_millis(1200 + 1000), "{took:?}");
    assert_eq!(posts(&server, "tools/call"), 2);
}

#[tokio::test]
async fn retry_after_as_an_http_date() {
    let at = std::time::SystemTime::now() + Duration::from_secs(2);
    let date = httpdate::fmt_http_date(at);
    let server = serve(refusing(StatusCode::TOO_MANY_REQUESTS, Some(date), 1)).await;
    let mut t = transport(&server).await;
    let started = Instant::now();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"attempt": 2}));
    // The date has one-second resolution: 1 to 2 s from now.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_429_without_retry_after_backs_off_and_notifications_are_retried_too() {
    let server = serve(refusing(StatusCode::TOO_MANY_REQUESTS, None, 2)).await;
    let mut t = transport(&server).await;
    // A notification's flush ends once the server accepted it.
    t.send(notif("notifications/roots/list_changed", json!({})))
        .await
        .unwrap();
    assert_eq!(posts(&server, "notifications/roots/list_changed"), 3);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"attempt": 3}));
}

#[tokio::test]
async fn a_503_is_retried_only_for_what_is_safe_to_send_twice() {
    let server = serve(refusing(
        StatusCode::SERVICE_UNAVAILABLE,
        Some("1".into()),
        1,
    ))
    .await;
    let mut t = transport(&server).await;
    // A read: retried.
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"attempt": 2}));
    // A tool call may have run behind a gateway: failed at once, not retried.
    let started = Instant::now();
    t.send(req(2, "tools/call", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(e.request_id(), Some(&2.into()));
    let (why, delay) = throttled(&e);
    assert!(
        matches!(why, Some(NotRetried::MayHaveRun { method }) if method == "tools/call"),
        "{why:?}"
    );
    assert_eq!(delay, Some(Duration::from_secs(1)));
    assert_eq!(posts(&server, "tools/call"), 1);
    let text = chain(&e).to_string();
    assert!(
        text.contains("503") && text.contains("in 1s") && text.contains("tools/call"),
        "{text}"
    );
}

#[tokio::test]
async fn a_503_without_retry_after_is_not_retried() {
    let server = serve(refusing(StatusCode::SERVICE_UNAVAILABLE, None, 1)).await;
    let mut t = transport(&server).await;
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Protocol);
    assert!(matches!(http_cause(&e), HttpError::Status { .. }), "{e:?}");
    assert_eq!(posts(&server, "tools/list"), 1);
}

#[tokio::test]
async fn a_retry_after_beyond_the_deadline_fails_at_once_saying_when() {
    let server = serve(refusing(
        StatusCode::TOO_MANY_REQUESTS,
        Some("30".into()),
        1,
    ))
    .await;
    let mut t = transport(&server).await;
    let started = Instant::now();
    Pin::new(&mut t).set_request_deadline(&1.into(), started + Duration::from_secs(5));
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(e.request_id(), Some(&1.into()));
    let (why, delay) = throttled(&e);
    assert!(
        matches!(why, Some(NotRetried::AfterDeadline { remaining }) if *remaining <= Duration::from_secs(5)),
        "{why:?}"
    );
    assert_eq!(delay, Some(Duration::from_secs(30)));
    let text = chain(&e).to_string();
    assert!(
        text.contains("429")
            && text.contains("in 30s")
            && text.contains("GMT")
            && text.contains("deadline"),
        "{text}"
    );
    // Without a deadline it is waited for (up to max_retry_wait, here 1 s:
    // over it fails at once too).
    let mut t = HttpTransport::builder(&server.url)
        .max_retry_wait(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    let (why, _) = throttled(&e);
    assert!(matches!(why, Some(NotRetried::TooLong { .. })), "{why:?}");
}

#[tokio::test]
async fn refusals_in_a_row_are_bounded() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let server = serve(move |_: &Rec| {
        c.fetch_add(1, Ordering::SeqCst);
        Reply2 {
            reply: Reply::Raw(StatusCode::TOO_MANY_REQUESTS, "text/plain", "no".into()),
            headers: vec![("retry-after", "0".into())],
        }
    })
    .await;
    let mut t = HttpTransport::builder(&server.url)
        .max_throttle_retries(2)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_11_25);
    t.send(req(1, "tools/call", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    let (why, _) = throttled(&e);
    assert!(
        matches!(why, Some(NotRetried::Attempts { attempts: 3 })),
        "{why:?}"
    );
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

/// A request refused for now whose session the server ends while it waits
/// is not sent again in that session (nor without one): it fails as not
/// processed, for the client to re-send in the new session.
#[tokio::test]
async fn a_refused_request_whose_session_ends_meanwhile_is_not_sent_again() {
    let server = serve(|r: &Rec| match r.rpc_method() {
        Some("tools/call") => Reply2 {
            reply: Reply::Raw(StatusCode::TOO_MANY_REQUESTS, "text/plain", "later".into()),
            headers: vec![("retry-after", "1".into())],
        },
        Some("notifications/roots/list_changed") => Reply::Raw(
            StatusCode::NOT_FOUND,
            "text/plain",
            "Session not found".into(),
        )
        .into(),
        _ => session_s_then_accepted(r),
    })
    .await;
    let mut t = HttpTransport::new(&server.url).unwrap();
    handshake(&mut t).await;
    t.send(req(2, "tools/call", json!({}))).await.unwrap();
    until("the call was refused", || posts(&server, "tools/call") == 1).await;
    t.send(notif("notifications/roots/list_changed", json!({})))
        .await
        .unwrap();
    let lost = recv_err(&mut t).await;
    assert_eq!(
        (lost.kind(), lost.request_id()),
        (TransportErrorKind::SessionExpired, None)
    );
    let e = recv_err(&mut t).await;
    assert_eq!(
        (e.kind(), e.request_id()),
        (TransportErrorKind::SessionExpired, Some(&2.into()))
    );
    assert_eq!(posts(&server, "tools/call"), 1);
}
