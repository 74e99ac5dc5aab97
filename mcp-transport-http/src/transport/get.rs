//! `GET` streams: resuming a response stream with `Last-Event-ID`, the
//! standalone server-to-client stream, and the reconnection backoff.

use std::time::SystemTime;

use crate::pool::ResponseBody;
use bytes::Bytes;
use http::header::ACCEPT;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use tokio::sync::watch;

use super::exchange::{content_type, read_limited};
use super::sse_read::{StreamEnd, read_sse};
use super::{ACCEPT_SSE, ERROR_BODY_LIMIT, LAST_EVENT_ID, SESSION_ID, Shared, lock};
use crate::backoff::{Reconnects, retry_at};
use crate::error::{HttpError, excerpt};
use crate::sse::SseDecoder;

/// `GET` with `Last-Event-ID`. `Ok(None)`: the server does not offer it (405).
pub(super) async fn resume_get(
    shared: &Shared,
    last_event_id: &str,
) -> Result<Option<ResponseBody>, HttpError> {
    let mut headers = shared.base_headers();
    headers.insert(ACCEPT, ACCEPT_SSE);
    if let Ok(v) = HeaderValue::from_str(last_event_id) {
        headers.insert(LAST_EVENT_ID, v);
    }
    get_stream(shared, headers).await
}

pub(super) async fn get_stream(
    shared: &Shared,
    headers: HeaderMap,
) -> Result<Option<ResponseBody>, HttpError> {
    let sent_session = headers.get(SESSION_ID).cloned();
    let resp = shared
        .exchange(Method::GET, &shared.cfg.url, &headers, Bytes::new())
        .await?;
    let status = resp.status();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Ok(None);
    }
    if status == StatusCode::NOT_FOUND
        && let Some(session) = sent_session
    {
        return Err(shared.lose_session(&session));
    }
    let ct = content_type(&resp);
    if !status.is_success() {
        let retry_at = retry_at(resp.headers(), SystemTime::now());
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            // The reconnection loop waits at least as long as asked.
            return Err(HttpError::Throttled {
                status,
                retry_at,
                not_retried: None,
            });
        }
        return Err(HttpError::Status {
            status,
            excerpt: excerpt(&bytes),
        });
    }
    if !ct.starts_with("text/event-stream") {
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        return Err(HttpError::UnexpectedContentType {
            status,
            content_type: ct,
            excerpt: excerpt(&bytes),
        });
    }
    Ok(Some(resp.into_body()))
}

/// The optional standalone `GET` stream (legacy era): server requests and
/// notifications. Reconnects with `Last-Event-ID` within the budget.
/// `ready` is dropped once the server answered the first GET (with the
/// stream, 405, or an error): the messages queued behind it go out then.
pub(super) async fn standalone_stream(shared: &Shared, ready: watch::Sender<bool>) {
    let mut dec = SseDecoder::new().with_max_event_size(shared.cfg.max_sse_event_size);
    let mut reconnects = Reconnects::new(shared.cfg.max_resume_attempts);
    let mut ready = Some(ready);
    // The stream belongs to this session: once it is gone (or replaced by a
    // new one, whose `initialized` opens a stream of its own), it ends.
    let session = lock(&shared.state).session_id.clone();
    loop {
        if lock(&shared.state).session_id != session {
            tracing::debug!("standalone GET stream: its session is gone");
            return;
        }
        let mut headers = shared.base_headers();
        headers.insert(ACCEPT, ACCEPT_SSE);
        if !dec.last_event_id().is_empty()
            && let Ok(v) = HeaderValue::from_str(dec.last_event_id())
        {
            headers.insert(LAST_EVENT_ID, v);
        }
        let opened = get_stream(shared, headers).await;
        // The server has registered the stream (or refused it) by the time
        // its answer's headers arrive.
        if let Some(r) = ready.take() {
            let _ = r.send(true);
        }
        let mut asked = None;
        let progress = match opened {
            Ok(None) => {
                tracing::debug!("server does not offer the standalone GET stream (405)");
                return;
            }
            Ok(Some(body)) => match read_sse(shared, body, &mut dec, None, false).await {
                StreamEnd::Ended { progress } | StreamEnd::Broken { progress, .. } => progress,
                StreamEnd::Answered => true,
                StreamEnd::Gone => return,
            },
            Err(e @ HttpError::SessionExpired { .. }) => {
                tracing::debug!(error = %mcp_proto::error::chain(&e), "standalone GET stream: session gone");
                return;
            }
            Err(e) => {
                tracing::debug!(error = %mcp_proto::error::chain(&e), "standalone GET stream failed");
                asked = e.retry_after();
                false
            }
        };
        let Some(delay) = reconnects.next(progress, dec.retry(), asked) else {
            tracing::warn!(
                "standalone GET stream: giving up after {} reconnections without progress",
                shared.cfg.max_resume_attempts
            );
            return;
        };
        tokio::time::sleep(delay).await;
    }
}
