//! One outgoing message (`POST`) and what to do with its answer: a JSON
//! body, an SSE stream (resumed or re-issued), or a failure status.

use std::borrow::Cow;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant, SystemTime};

use crate::pool::ResponseBody;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, Uri};
use mcp_proto::jsonrpc::{ErrorResponse, Message, RequestId};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::version::{Feature, ProtocolVersion};

use super::exchange::{content_type_raw, err, is_type, kind_of_client_error, read_limited};
use super::get::resume_get;
use super::legacy_sse::open_legacy_sse;
use super::sse_read::{StreamEnd, is_answer_to, read_sse};
use super::{ACCEPT_BOTH, ERROR_BODY_LIMIT, Item, SESSION_ID, Shared, State, lock};
use crate::backoff::{Reconnects, jittered, retry_at};
use crate::client::INITIAL_BACKOFF;
use crate::error::{HttpError, NotRetried, excerpt};
use crate::headers::add_modern_headers;
use crate::sse::SseDecoder;

/// One outgoing message and what to do with its answer.
pub(super) struct Post {
    body: Bytes,
    request_id: Option<RequestId>,
    method: Option<Cow<'static, str>>,
    modern: bool,
    /// The headers of the first attempt, moved into its request (a retry
    /// or redirect builds them again: `build_headers`).
    headers: HeaderMap,
    /// The session id sent (legacy era), for a 404 that forgets it.
    sent_session: Option<HeaderValue>,
    version: Option<ProtocolVersion>,
    /// The 2024-11-05 fallback's POST endpoint; `None`: the configured URL.
    sse_endpoint: Option<Uri>,
    sse_mode: bool,
    /// When the client gives up on this request (if it said): a refusal's
    /// `Retry-After` beyond it is not waited for.
    deadline: Option<Instant>,
    /// Made while the session was lost and before a new one was started:
    /// not sent ([`Shared::lose_session`]).
    held_back: bool,
}

impl Post {
    pub(super) fn new(
        shared: &Shared,
        msg: Message,
        method: Option<Cow<'static, str>>,
        modern: bool,
        deadline: Option<Instant>,
    ) -> Self {
        let is_init = method.as_deref() == Some("initialize");
        let (headers, version, sse_endpoint, sent_session, held_back) = {
            let mut s = lock(&shared.state);
            if is_init {
                // The client starts a new session: messages may go again.
                s.lost_session = None;
            }
            let held_back = s.lost_session.is_some() && !modern && s.sse_endpoint.is_none();
            let headers = build_headers(&mut s, shared, &msg, modern);
            // What `headers` carries (taken from the state: looking a
            // custom header up in the map hashes its name).
            let sent_session = s
                .version
                .filter(|v| !modern && !is_init && v.has(Feature::HttpSession))
                .and(s.session_id.clone());
            (
                headers,
                s.version,
                s.sse_endpoint.clone(),
                sent_session,
                held_back,
            )
        };
        let request_id = match &msg {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        Post {
            body: Bytes::from(msg.to_vec()),
            request_id,
            method,
            modern,
            headers,
            sent_session,
            version,
            sse_mode: sse_endpoint.is_some(),
            sse_endpoint,
            deadline,
            held_back,
        }
    }

    /// The session this message is sent in (handshake era), as text.
    pub(super) fn sent_session(&self) -> Option<&str> {
        self.sent_session.as_ref()?.to_str().ok()
    }

    /// The request id, if this message is a request.
    pub(super) fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// Sends the message and reads its answer. Messages read from a
    /// stream go into the inbox as they come; the last item (a JSON
    /// answer, or this request's failure) is returned for the caller to
    /// deliver: pushed into the inbox by a POST's own task, handed straight
    /// to `poll_recv` by the inline POST (no queue, no wake-up).
    ///
    /// By reference: the caller's future holds the `Post` once (a `self`
    /// taken by value is kept twice in this future, as an argument and as
    /// its binding).
    pub(super) async fn run(&mut self, shared: &Shared) -> Option<Item> {
        if let Some(lost) = self.held_back(shared) {
            return match self.request_id.take() {
                Some(id) => Some(Err(
                    err(TransportErrorKind::SessionExpired, lost).with_request(id)
                )),
                None => {
                    tracing::debug!(
                        method = self.method.as_deref().unwrap_or("<response>"),
                        "not sent: its session is gone"
                    );
                    None
                }
            };
        }
        match self.exchange(shared).await {
            Ok(answer) => answer.map(Ok),
            Err(e) => match self.request_id.take() {
                Some(id) => Some(Err(e.with_request(id))),
                None => {
                    tracing::warn!(
                        method = self.method.as_deref().unwrap_or("<response>"),
                        error = %mcp_proto::error::chain(&e),
                        "a notification or response POST failed"
                    );
                    None
                }
            },
        }
    }

    /// Whether this message must not be sent because the session it
    /// belongs to is lost and the client has not started a new one yet
    /// ([`Shared::lose_session`]); then why, for a request's error (it was
    /// not sent, so it was not processed).
    fn held_back(&self, shared: &Shared) -> Option<HttpError> {
        if !self.held_back {
            return None;
        }
        let s = lock(&shared.state);
        let session = s.lost_session.as_ref().and_then(|v| v.to_str().ok());
        Some(HttpError::SessionExpired {
            session: session.unwrap_or("").to_owned(),
        })
    }

    /// The session this message was sent in, if the server has ended it
    /// since (it is no longer the current one).
    fn session_gone(&self, shared: &Shared) -> Option<HttpError> {
        let sent = self.sent_session.as_ref()?;
        if lock(&shared.state).session_id.as_ref() == Some(sent) {
            return None;
        }
        Some(HttpError::SessionExpired {
            session: sent.to_str().unwrap_or("").to_owned(),
        })
    }

    fn is(&self, m: &str) -> bool {
        self.method.as_deref() == Some(m)
    }

    /// This message's headers again, for a retry, a redirect or a re-issue
    /// (the first attempt's went with its request): decoded again from the
    /// body, which only these rare paths pay for.
    fn build_headers_again(&self, shared: &Shared) -> HeaderMap {
        let mut s = lock(&shared.state);
        match Message::from_slice(&self.body) {
            Ok(msg) => build_headers(&mut s, shared, &msg, self.modern),
            // Not possible (the body is a message this transport encoded).
            Err(_) => s.post_headers(&shared.cfg).clone(),
        }
    }

    /// The exchange, with its redirects, auth retries and re-issue. The
    /// first attempt's headers are taken from `self` here, not passed in:
    /// an `async fn` keeps two copies of each argument.
    async fn exchange(&mut self, shared: &Shared) -> Result<Option<Message>, TransportError> {
        let mut first = Some(std::mem::take(&mut self.headers));
        let mut reissued = false;
        let mut refusals: u32 = 0;
        let url = self.sse_endpoint.as_ref().unwrap_or(&shared.cfg.url);
        let again = || self.build_headers_again(shared);
        loop {
            let resp = shared
                .exchange_built(Method::POST, url, first.take(), &again, self.body.clone())
                .await
                .map_err(|e| err(kind_of_client_error(&e), e))?;
            let status = resp.status();
            if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
            {
                match Box::pin(self.on_refusal(shared, resp, refusals)).await {
                    Refusal::Retry(wait) => {
                        refusals += 1;
                        tokio::time::sleep(wait).await;
                        if let Some(lost) = self.session_gone(shared) {
                            // Not processed, and its session ended meanwhile:
                            // the client re-sends it in the new one.
                            return Err(err(TransportErrorKind::SessionExpired, lost));
                        }
                        continue;
                    }
                    Refusal::Fail(e) => return Err(err(TransportErrorKind::Throttled, e)),
                    Refusal::Status(e) => return Err(err(TransportErrorKind::Protocol, e)),
                }
            }
            if status.is_success() {
                if self.is("initialize") && !self.sse_mode {
                    capture_session(shared, &resp)?;
                }
                match self.on_success(shared, resp).await {
                    Err(Broken::Reissue) if !reissued => {
                        reissued = true;
                        tracing::info!(method = ?self.method, "response stream broke; re-issuing the request once");
                        continue;
                    }
                    Err(Broken::Reissue) => {
                        return Err(err(
                            TransportErrorKind::Io,
                            HttpError::StreamEnded { resumes: 0 },
                        ));
                    }
                    Err(Broken::Fail(e)) => return Err(e),
                    Ok(answer) => return Ok(answer),
                }
            }
            // Boxed, as the other paths off the JSON answer: the task's
            // future stays small, and it is moved when spawned.
            return Box::pin(self.on_failure(shared, resp)).await;
        }
    }

    async fn on_success(
        &self,
        shared: &Shared,
        resp: Response<ResponseBody>,
    ) -> Result<Option<Message>, Broken> {
        let status = resp.status();
        // Checked without a lower-case copy (one allocation per answer).
        let ct = content_type_raw(&resp);
        let id = match &self.request_id {
            Some(id) if !self.sse_mode => id,
            // Notifications and responses: 202 (or any 2xx) with no body.
            // HTTP+SSE: the answer comes on the GET stream. Drain what there
            // is so the connection goes back to the pool.
            _ => {
                let _ = read_limited(resp.into_body(), ERROR_BODY_LIMIT).await;
                return Ok(None);
            }
        };
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(Broken::Fail(err(
                TransportErrorKind::Protocol,
                HttpError::Status {
                    status,
                    excerpt: "a request was answered without a body".into(),
                },
            )));
        }
        if is_type(ct, "application/json") {
            let body = resp.into_body();
            let mut read = pin!(read_limited(body, shared.cfg.max_body_size));
            // A small body came with the head: read at once, without a
            // timer (made, and dropped, for nothing).
            let first = poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
            let bytes = match (first, shared.cfg.request_timeout) {
                (Poll::Ready(read), _) => read,
                (Poll::Pending, Some(t)) => tokio::time::timeout(t, read).await.map_err(|_| {
                    Broken::Fail(err(
                        TransportErrorKind::Timeout,
                        HttpError::Timeout {
                            what: "reading the JSON response body",
                            after: t,
                        },
                    ))
                })?,
                (Poll::Pending, None) => read.await,
            }
            .map_err(|e| Broken::Fail(err(kind_of_client_error(&e), e)))?;
            let msg = Message::from_slice(&bytes).map_err(|e| {
                // This POST's answer, dropped: scoped to it by `run`.
                Broken::Fail(err(
                    TransportErrorKind::Decode,
                    HttpError::InvalidBody {
                        status,
                        source: e,
                        excerpt: excerpt(&bytes),
                    },
                ))
            })?;
            let msg = if self.modern && self.is("tools/list") && is_answer_to(&msg, Some(id)) {
                shared.filter_tools(msg)
            } else {
                msg
            };
            return Ok(Some(msg));
        }
        if is_type(ct, "text/event-stream") {
            return Box::pin(self.on_stream(shared, resp.into_body(), id))
                .await
                .map(|()| None);
        }
        let ct = ct.to_ascii_lowercase();
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        Err(Broken::Fail(err(
            TransportErrorKind::Protocol,
            HttpError::UnexpectedContentType {
                status,
                content_type: ct,
                excerpt: excerpt(&bytes),
            },
        )))
    }

    /// Reads a response stream; resumes it (legacy) or asks for a re-issue
    /// (modern) when it ends before the answer.
    async fn on_stream(
        &self,
        shared: &Shared,
        body: ResponseBody,
        id: &RequestId,
    ) -> Result<(), Broken> {
        let tools_list = self.modern && self.is("tools/list");
        let mut dec = SseDecoder::new().with_max_event_size(shared.cfg.max_sse_event_size);
        let mut end = read_sse(shared, body, &mut dec, Some(id), tools_list).await;
        let resumable = !self.modern && self.version.is_some_and(|v| v.has(Feature::SseResumption));
        let mut reconnects = Reconnects::new(shared.cfg.max_resume_attempts);
        loop {
            let (progress, cause) = match end {
                StreamEnd::Answered | StreamEnd::Gone => return Ok(()),
                StreamEnd::Ended { progress } => (progress, None),
                StreamEnd::Broken { progress, error } => (progress, Some(error)),
            };
            if self.modern {
                let allowed = self
                    .method
                    .as_deref()
                    .is_some_and(|m| shared.cfg.reissue_methods.iter().any(|r| r == m));
                if allowed {
                    return Err(Broken::Reissue);
                }
                return Err(Broken::Fail(stream_error(cause, 0)));
            }
            if !resumable || dec.last_event_id().is_empty() {
                return Err(Broken::Fail(stream_error(cause, reconnects.total())));
            }
            let asked = cause.as_ref().and_then(HttpError::retry_after);
            let Some(delay) = reconnects.next(progress, dec.retry(), asked) else {
                return Err(Broken::Fail(stream_error(cause, reconnects.total())));
            };
            tracing::debug!(
                ?delay,
                last_event_id = dec.last_event_id(),
                "resuming SSE stream"
            );
            tokio::time::sleep(delay).await;
            end = match resume_get(shared, dec.last_event_id()).await {
                Ok(Some(body)) => read_sse(shared, body, &mut dec, Some(id), tools_list).await,
                Ok(None) => {
                    return Err(Broken::Fail(err(
                        TransportErrorKind::Protocol,
                        HttpError::StreamEnded {
                            resumes: reconnects.total(),
                        },
                    )));
                }
                Err(e) => {
                    if matches!(e, HttpError::SessionExpired { .. }) {
                        // The session ended while the answer was on its way:
                        // the request may have run, so this is not the
                        // "not processed" `SessionExpired` that is re-sent.
                        return Err(Broken::Fail(err(TransportErrorKind::Io, e)));
                    }
                    // A failed reconnection is a stream that made no progress.
                    StreamEnd::Broken {
                        progress: false,
                        error: e,
                    }
                }
            };
        }
    }

    /// A `429` or `503` answer: when to send the message again, or why not
    /// (see [`HttpTransportBuilder::max_throttle_retries`](crate::HttpTransportBuilder::max_throttle_retries)
    /// for which statuses mean the server did not process it). `refusals`:
    /// how many came before this one.
    async fn on_refusal(
        &self,
        shared: &Shared,
        resp: Response<ResponseBody>,
        refusals: u32,
    ) -> Refusal {
        let status = resp.status();
        let arrived = Instant::now();
        let retry_at = retry_at(resp.headers(), SystemTime::now());
        // Read to its end (a few bytes) so the connection can be reused.
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        let excerpt = excerpt(&bytes);
        if status == StatusCode::SERVICE_UNAVAILABLE && retry_at.is_none() {
            // Nothing says when, nor that the server did not act.
            return Refusal::Status(HttpError::Status { status, excerpt });
        }
        let throttled = |why: NotRetried| HttpError::Throttled {
            status,
            retry_at,
            not_retried: Some(why),
        };
        if status == StatusCode::SERVICE_UNAVAILABLE && !self.safe_to_repeat(shared) {
            let method = self.method.as_deref().unwrap_or("the request").to_owned();
            return Refusal::Fail(throttled(NotRetried::MayHaveRun { method }));
        }
        if refusals >= shared.cfg.max_throttle_retries {
            return Refusal::Fail(throttled(NotRetried::Attempts {
                attempts: refusals + 1,
            }));
        }
        let wait = match retry_at {
            Some(r) => r.delay,
            // A 429 that did not say when: back off.
            None => INITIAL_BACKOFF.saturating_mul(1 << refusals.min(16)),
        };
        let remaining = self.deadline.map(|d| d.saturating_duration_since(arrived));
        if let Some(remaining) = remaining
            && wait > remaining
        {
            return Refusal::Fail(throttled(NotRetried::AfterDeadline { remaining }));
        }
        if let Some(max) = shared.cfg.max_retry_wait
            && wait > max
        {
            return Refusal::Fail(throttled(NotRetried::TooLong { max }));
        }
        // Jitter on top, but never past the deadline nor the cap.
        let mut wait = jittered(wait);
        for bound in [remaining, shared.cfg.max_retry_wait].into_iter().flatten() {
            wait = wait.min(bound);
        }
        tracing::info!(
            %status,
            method = self.method.as_deref().unwrap_or("<response>"),
            ?wait,
            "the server refused the message for now; sending it again"
        );
        Refusal::Retry(wait)
    }

    /// Whether sending this message twice does no harm, should the server
    /// have processed it the first time: the methods allowed to be
    /// re-issued (reads), `ping`, `initialize`, notifications and responses.
    fn safe_to_repeat(&self, shared: &Shared) -> bool {
        match (&self.request_id, self.method.as_deref()) {
            (None, _) => true,
            (Some(_), Some("ping" | "initialize")) => true,
            (Some(_), Some(m)) => shared.cfg.reissue_methods.iter().any(|r| r == m),
            (Some(_), None) => false,
        }
    }

    async fn on_failure(
        &self,
        shared: &Shared,
        resp: Response<ResponseBody>,
    ) -> Result<Option<Message>, TransportError> {
        let status = resp.status();
        let www = resp.headers().get(WWW_AUTHENTICATE).cloned();
        let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
            .await
            .unwrap_or_default();
        let status_err = || HttpError::Status {
            status,
            excerpt: excerpt(&bytes),
        };
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            // The auth hook already saw the challenge in `Shared::exchange`.
            if let Some(www) = www {
                tracing::debug!(www_authenticate = ?www, "request unauthorized");
            }
            return Err(err(TransportErrorKind::Unauthorized, status_err()));
        }
        // A live legacy session the server forgot: it did not process this
        // message (scoped: a request is re-sent in the new session).
        if status == StatusCode::NOT_FOUND
            && !self.modern
            && !self.sse_mode
            && let Some(session) = &self.sent_session
        {
            return Err(err(
                TransportErrorKind::SessionExpired,
                shared.lose_session(session),
            ));
        }
        // Era detection: a JSON-RPC error body is the answer.
        if let (Some(id), Ok(Message::Error(e))) = (&self.request_id, Message::from_slice(&bytes)) {
            let e = ErrorResponse::new(Some(e.id.unwrap_or_else(|| id.clone())), e.error);
            return Ok(Some(Message::Error(e)));
        }
        if self.is("initialize")
            && shared.cfg.legacy_sse_fallback
            && !self.sse_mode
            && matches!(status.as_u16(), 400 | 404 | 405)
        {
            match open_legacy_sse(shared).await {
                Ok(endpoint) => {
                    tracing::info!(%endpoint, "server speaks the 2024-11-05 HTTP+SSE transport; using it");
                    let resp = shared
                        .exchange(
                            Method::POST,
                            &endpoint,
                            &self.sse_headers(),
                            self.body.clone(),
                        )
                        .await
                        .map_err(|e| err(kind_of_client_error(&e), e))?;
                    if resp.status().is_success() {
                        return Ok(None);
                    }
                    let status = resp.status();
                    let bytes = read_limited(resp.into_body(), ERROR_BODY_LIMIT)
                        .await
                        .unwrap_or_default();
                    return Err(err(
                        TransportErrorKind::Protocol,
                        HttpError::Status {
                            status,
                            excerpt: excerpt(&bytes),
                        },
                    ));
                }
                Err(e) => {
                    tracing::debug!(error = %mcp_proto::error::chain(&e), "HTTP+SSE fallback did not work")
                }
            }
        }
        Err(err(TransportErrorKind::Protocol, status_err()))
    }

    fn sse_headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h
    }
}

/// A message's headers: every POST's (see `State::post_headers`), or the
/// handshake's, and for a 2026-07-28 message its `Mcp-*` headers.
fn build_headers(s: &mut State, shared: &Shared, msg: &Message, modern: bool) -> HeaderMap {
    let (method, params) = match msg {
        Message::Request(r) => (Some(&*r.method), r.params.as_ref()),
        Message::Notification(n) => (Some(&*n.method), n.params.as_ref()),
        _ => (None, None),
    };
    let mut headers = if method == Some("initialize") {
        let mut h = HeaderMap::with_capacity(4);
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(ACCEPT, ACCEPT_BOTH);
        h
    } else {
        s.post_headers(&shared.cfg).clone()
    };
    if modern && let Some(m) = method {
        add_modern_headers(&mut headers, m, params, &s.tool_headers);
    }
    headers
}

/// What to do about a `429`/`503` answer.
enum Refusal {
    /// Send the message again after this wait.
    Retry(Duration),
    /// Fail it: the server refused it, and it is not retried.
    Fail(HttpError),
    /// Not a refusal that says anything: an ordinary failure status.
    Status(HttpError),
}

enum Broken {
    /// Modern era: the caller allows re-issuing this method.
    Reissue,
    Fail(TransportError),
}

fn stream_error(cause: Option<HttpError>, resumes: u32) -> TransportError {
    match cause {
        Some(e) => err(TransportErrorKind::Io, e),
        None => err(
            TransportErrorKind::Protocol,
            HttpError::StreamEnded { resumes },
        ),
    }
}

fn capture_session(shared: &Shared, resp: &Response<ResponseBody>) -> Result<(), TransportError> {
    let Some(v) = resp.headers().get(SESSION_ID) else {
        return Ok(());
    };
    let ok = !v.is_empty() && v.as_bytes().iter().all(|b| (0x21..=0x7E).contains(b));
    if !ok {
        return Err(err(
            TransportErrorKind::Protocol,
            HttpError::InvalidSessionId,
        ));
    }
    // A copy, not a clone: a received header value is a slice of the
    // connection's read buffer, and keeping it for the session's life
    // would keep that whole buffer (8 KiB or more) alive with it.
    let Ok(mut v) = HeaderValue::from_bytes(v.as_bytes()) else {
        return Err(err(
            TransportErrorKind::Protocol,
            HttpError::InvalidSessionId,
        ));
    };
    v.set_sensitive(true);
    lock(&shared.state).set_session(Some(v));
    Ok(())
}
