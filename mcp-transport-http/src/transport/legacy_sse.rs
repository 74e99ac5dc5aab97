//! The 2024-11-05 HTTP+SSE fallback: the `GET` stream that announces the
//! POST endpoint and carries every server message.

use std::time::Duration;

use crate::pool::ResponseBody;
use bytes::BytesMut;
use http::header::ACCEPT;
use http::{HeaderMap, StatusCode, Uri};
use http_body_util::BodyExt;
use mcp_proto::jsonrpc::Message;
use mcp_proto::transport::{TransportError, TransportErrorKind};
use tokio::sync::{mpsc, oneshot};

use super::exchange::{resolve, same_origin};
use super::get::get_stream;
use super::sse_read::{dropped_event, undecodable_event};
use super::{ACCEPT_SSE, Item, Shared, lock};
use crate::error::HttpError;
use crate::sse::SseDecoder;

/// How long the 2024-11-05 fallback waits for the `endpoint` event.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

/// The 2024-11-05 HTTP+SSE fallback: `GET` the URL, wait for `endpoint`,
/// keep reading the stream in a task. Returns the POST endpoint.
pub(super) async fn open_legacy_sse(shared: &Shared) -> Result<Uri, HttpError> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, ACCEPT_SSE);
    let Some(body) = get_stream(shared, headers).await? else {
        return Err(HttpError::Status {
            status: StatusCode::METHOD_NOT_ALLOWED,
            excerpt: "GET not allowed: not an HTTP+SSE server either".into(),
        });
    };
    let (tx, rx) = oneshot::channel();
    let inbox = shared.inbox.clone();
    let base = shared.cfg.url.clone();
    let max = shared.cfg.max_sse_event_size;
    let task = tokio::spawn(legacy_sse_reader(body, base.clone(), max, tx, inbox));
    let endpoint = match tokio::time::timeout(ENDPOINT_TIMEOUT, rx).await {
        Ok(Ok(Some(e))) => e,
        Ok(_) => {
            task.abort();
            return Err(HttpError::StreamEnded { resumes: 0 });
        }
        Err(_) => {
            task.abort();
            return Err(HttpError::Timeout {
                what: "waiting for the HTTP+SSE endpoint event",
                after: ENDPOINT_TIMEOUT,
            });
        }
    };
    if !same_origin(&base, &endpoint) {
        task.abort();
        return Err(HttpError::CrossOriginRedirect {
            location: endpoint.to_string(),
        });
    }
    // Keep the reader alive as long as the transport.
    let mut t = lock(&shared.tasks);
    let key = t.next;
    t.next += 1;
    t.all.insert(key, task.abort_handle());
    drop(t);
    lock(&shared.state).sse_endpoint = Some(endpoint.clone());
    Ok(endpoint)
}

async fn legacy_sse_reader(
    mut body: ResponseBody,
    base: Uri,
    max: usize,
    endpoint_tx: oneshot::Sender<Option<Uri>>,
    inbox: mpsc::Sender<Box<Item>>,
) {
    let mut dec = SseDecoder::new().with_max_event_size(max);
    let mut buf = BytesMut::new();
    let mut endpoint_tx = Some(endpoint_tx);
    let cause = loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                loop {
                    match dec.decode(&mut buf) {
                        Ok(Some(ev)) if ev.event == "endpoint" => {
                            if let Some(tx) = endpoint_tx.take() {
                                let _ = tx.send(resolve(&base, &ev.data));
                            }
                        }
                        Ok(Some(ev)) if ev.event == "message" && !ev.data.is_empty() => {
                            // Every answer comes on this stream: one that
                            // cannot be decoded fails its call now.
                            let item = Message::try_from_string(ev.data)
                                .map_err(|(e, text)| undecodable_event(e, &text, None).0);
                            // Waits for room (backpressure); fails only
                            // when the transport is gone.
                            if inbox.send(Box::new(item)).await.is_err() {
                                return;
                            }
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(e) => {
                            let e = TransportError::new(TransportErrorKind::Decode, e);
                            let (e, _) = dropped_event(
                                e,
                                dec.dropped_head(),
                                &[],
                                None,
                                mcp_proto::ErrorCode::PARSE_ERROR,
                            );
                            if inbox.send(Box::new(Err(e))).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
            Some(Err(e)) => break TransportError::new(TransportErrorKind::Closed, e),
            None => {
                break TransportError::new(
                    TransportErrorKind::Closed,
                    "the server closed the HTTP+SSE stream",
                );
            }
        }
    };
    if let Some(tx) = endpoint_tx.take() {
        let _ = tx.send(None);
        return;
    }
    // HTTP+SSE has no resumption: the connection is gone.
    let _ = inbox.send(Box::new(Err(cause))).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_resolution() {
        let base: Uri = "http://127.0.0.1:8080/mcp".parse().unwrap();
        assert_eq!(
            resolve(&base, "/messages?sessionId=1").unwrap().to_string(),
            "http://127.0.0.1:8080/messages?sessionId=1"
        );
        assert_eq!(
            resolve(&base, "messages?s=1").unwrap().to_string(),
            "http://127.0.0.1:8080/messages?s=1"
        );
    }
}
