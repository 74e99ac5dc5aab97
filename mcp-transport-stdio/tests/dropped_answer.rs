//! Answers a real process sends that the codec must drop: the head of a
//! valid answer followed by bytes forever, and an answer with an invalid
//! UTF-8 byte. Each fails the request it answers at once (a `Decode` error
//! scoped to its id, naming the limit and the size seen), not at its
//! timeout; the connection goes on where it can.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_proto::transport::{TransportErrorKind, TransportExt};
use mcp_transport_stdio::{Dropped, JsonLineCodecError, StdioTransport};
use serde_json::json;

/// Longest a dropped answer may take to be reported: the process start and
/// 1 MiB of pipe traffic on a busy machine, far below any call timeout.
const PROMPT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn an_endless_answer_fails_its_request_when_the_limit_is_crossed() {
    let limit = 1 << 20;
    let mut t = StdioTransport::spawn(fake(&[]).max_message_size(limit)).unwrap();
    t.send(request(7, "endless", json!({}))).await.unwrap();
    let started = Instant::now();
    let got = tokio::time::timeout(PROMPT, t.recv()).await;
    let err = got
        .expect("the endless answer was not reported: its call would wait for its timeout")
        .unwrap()
        .unwrap_err();
    eprintln!("reported after {:?}: {err}", started.elapsed());
    assert_eq!(err.kind(), TransportErrorKind::Decode);
    assert!(err.is_dropped_answer() && !err.is_terminal());
    assert_eq!(err.request_id(), Some(&7.into()));
    let cause = err.cause().unwrap().downcast_ref::<JsonLineCodecError>();
    let Some(JsonLineCodecError::LineTooLong {
        limit: l,
        len,
        ended: false,
        dropped: Dropped::Answer(_),
    }) = cause
    else {
        panic!("{cause:?}")
    };
    assert_eq!(*l, limit);
    assert!(*len > limit as u64, "{len}");
    let text = mcp_proto::error::chain(&err).to_string();
    assert!(
        text.contains("1 MiB limit") && text.contains("at least"),
        "{text}"
    );
    t.close().await.unwrap();
}

#[tokio::test]
async fn an_answer_with_invalid_utf8_fails_its_request_and_the_next_call_works() {
    let mut t = StdioTransport::spawn(fake(&[])).unwrap();
    t.send(request(3, "not_utf8", json!({}))).await.unwrap();
    let err = tokio::time::timeout(PROMPT, t.recv())
        .await
        .expect("the invalid answer was skipped as noise: its call would wait for its timeout")
        .unwrap()
        .unwrap_err();
    assert!(err.is_dropped_answer() && !err.is_terminal(), "{err:?}");
    assert_eq!(err.request_id(), Some(&3.into()));
    assert!(
        matches!(
            err.cause().unwrap().downcast_ref::<JsonLineCodecError>(),
            Some(JsonLineCodecError::UndecodableAnswer { .. })
        ),
        "{err:?}"
    );
    assert_eq!(
        call(&mut t, 4, "echo", json!("after")).await,
        json!({"params": "after"})
    );
    t.close().await.unwrap();
}
