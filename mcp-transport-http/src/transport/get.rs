//! `GET` streams: resuming a response stream with `Last-Event-ID`, the
//! standalone server-to-client stream, and the reconnection backoff.

use std::time::Duration;

use crate::pool::ResponseBody;
use bytes::Bytes;
use http::header::ACCEPT;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use tokio::sync::watch;

use super::exchange::{content_type, read_limited};
use super::sse_read::{StreamEnd, read_sse};
use super::{ACCEPT_SSE, ERROR_BODY_LIMIT, LAST_EVENT_ID, SESSION_ID, Shared, lock};
use crate::client::{INITIAL_BACKOFF, MAX_BACKOFF};
use crate::error::{HttpError, excerpt};
use crate::sse::SseDecoder;

/// Delay before reconnection attempt `attempt` (0-based): the server's
/// `retry` if it gave one (the spec's MUST), else capped exponential backoff;
/// never less than the server asked.
pub(super) fn backoff(attempt: u32, server_retry: Option<Duration>) -> Duration {
    let exp = INITIAL_BACKOFF
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(MAX_BACKOFF);
    match server_retry {
        Some(r) if attempt == 0 => r,
        Some(r) => r.max(exp),
        None => exp,
    }
}

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
        let mut s = lock(&shared.state);
        if s.session_id.as_ref() == Some(&session) {
            s.set_session(None);
        }
        return Err(HttpError::SessionExpired {
            session: session.to_str().unwrap_or("").to_owned(),
        });
    }
    let ct = content_type(&resp);
    if !status.is_success() {
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
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
    let mut attempts: u32 = 0;
    let mut ready = Some(ready);
    loop {
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
                false
            }
        };
        if progress {
            attempts = 0;
        }
        if attempts >= shared.cfg.max_resume_attempts {
            tracing::warn!(
                "standalone GET stream: giving up after {attempts} reconnections without progress"
            );
            return;
        }
        tokio::time::sleep(backoff(attempts, dec.retry())).await;
        attempts += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_respects_retry_and_caps() {
        assert_eq!(backoff(0, None), INITIAL_BACKOFF);
        assert_eq!(backoff(1, None), INITIAL_BACKOFF * 2);
        assert_eq!(backoff(30, None), MAX_BACKOFF);
        assert_eq!(
            backoff(0, Some(Duration::from_millis(3))),
            Duration::from_millis(3)
        );
        assert_eq!(
            backoff(3, Some(Duration::from_secs(60))),
            Duration::from_secs(60)
        );
        assert_eq!(
            backoff(2, Some(Duration::from_millis(1))),
            INITIAL_BACKOFF * 4
        );
    }
}
