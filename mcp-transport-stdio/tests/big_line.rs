//! A 64 MiB line from a real process: a typed error, bounded memory, and the
//! stream goes on. Alone in its test binary so the peak-RSS measurement is
//! not disturbed by other tests.
#![allow(clippy::unwrap_used)]
#![cfg(target_os = "linux")]

mod common;

use common::*;
use mcp_proto::transport::{TransportErrorKind, TransportExt};
use mcp_transport_stdio::{DEFAULT_MAX_MESSAGE_SIZE, JsonLineCodecError, StdioTransport};
use serde_json::json;

#[tokio::test]
async fn a_64_mib_line_is_a_typed_error_and_memory_stays_bounded() {
    let before = peak_rss().unwrap();
    let mut t = StdioTransport::spawn(fake(&[])).unwrap();
    t.send(request(1, "big", json!({"mib": 64}))).await.unwrap();

    let err = recv(&mut t).await.unwrap().unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::Decode);
    assert!(!err.is_terminal());
    let cause = err
        .cause()
        .unwrap()
        .downcast_ref::<JsonLineCodecError>()
        .unwrap();
    assert!(matches!(
        cause,
        JsonLineCodecError::LineTooLong { limit: DEFAULT_MAX_MESSAGE_SIZE, len, .. }
            if *len >= 64 << 20
    ));
    // Resynchronised at the next newline: the reply arrives.
    let reply = recv(&mut t).await.unwrap().unwrap();
    assert_eq!(reply.id(), Some(&1.into()));
    assert_eq!(
        call(&mut t, 2, "echo", json!("after")).await,
        json!({"params": "after"})
    );

    let grown = peak_rss().unwrap().saturating_sub(before);
    eprintln!("peak RSS grew by {} KiB", grown / 1024);
    // Buffering the line whole would need ≥ 64 MiB; the limit is 16 MiB.
    assert!(
        grown < (DEFAULT_MAX_MESSAGE_SIZE as u64) * 2,
        "peak RSS grew by {grown} bytes"
    );

    // Just under the limit is accepted.
    t.send(request(3, "big", json!({"mib": 15}))).await.unwrap();
    let big = recv(&mut t).await.unwrap().unwrap();
    assert_eq!(big.method(), Some("notifications/big"));
    t.close().await.unwrap();
}
