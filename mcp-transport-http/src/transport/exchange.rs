//! One HTTP exchange (auth, redirects, timeout) and the helpers every
//! request shares: headers, body limits, error kinds.

use std::borrow::Cow;
use std::pin::pin;

use crate::pool::ResponseBody;
use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, LOCATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use mcp_proto::transport::{TransportError, TransportErrorKind};

use super::{Shared, lock};
use crate::client::{MAX_AUTH_RETRIES, Unauthorized};
use crate::error::HttpError;
use crate::uri::{RedirectPolicy, RedirectRefusal};

pub(super) fn err(kind: TransportErrorKind, e: HttpError) -> TransportError {
    TransportError::new(kind, e)
}

pub(super) fn content_type(resp: &Response<ResponseBody>) -> String {
    content_type_raw(resp).to_ascii_lowercase()
}

/// The `Content-Type` as sent (`""` if missing or not text).
pub(super) fn content_type_raw(resp: &Response<ResponseBody>) -> &str {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Whether a media type starts with `prefix` (lower case), ignoring case.
pub(super) fn is_type(content_type: &str, prefix: &str) -> bool {
    content_type
        .get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

pub(super) use crate::uri::{resolve, same_origin};

pub(super) async fn read_limited(body: ResponseBody, limit: usize) -> Result<Bytes, HttpError> {
    let size = http_body::Body::size_hint(&body).exact();
    if let Some(n) = size.filter(|&n| n > limit as u64) {
        // Said up front: not worth reading.
        return Err(HttpError::BodyTooLarge {
            limit,
            size: Some(n),
            received: 0,
        });
    }
    // Frame by frame rather than `Limited` + `collect`: a body that comes
    // in one frame (most JSON answers) is handed on as that frame, with no
    // buffer list and no copy.
    let mut body = body;
    let mut first: Option<Bytes> = None;
    let mut rest: Option<BytesMut> = None;
    let mut len = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| HttpError::Client(Box::new(e)))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers: not used
        };
        len += data.len();
        if len > limit {
            return Err(HttpError::BodyTooLarge {
                limit,
                size,
                received: len as u64,
            });
        }
        match (&mut first, &mut rest) {
            (None, None) => first = Some(data),
            (Some(f), None) => {
                let mut buf = BytesMut::with_capacity(size.map_or(len, |n| n as usize).max(len));
                buf.extend_from_slice(f);
                buf.extend_from_slice(&data);
                first = None;
                rest = Some(buf);
            }
            (_, Some(buf)) => buf.extend_from_slice(&data),
        }
    }
    Ok(match (first, rest) {
        (_, Some(buf)) => buf.freeze(),
        (Some(f), None) => f,
        (None, None) => Bytes::new(),
    })
}

pub(super) fn kind_of_client_error(e: &HttpError) -> TransportErrorKind {
    match e {
        HttpError::Timeout { .. } => TransportErrorKind::Timeout,
        HttpError::Client(_) => TransportErrorKind::Io,
        HttpError::SessionExpired { .. } => TransportErrorKind::SessionExpired,
        HttpError::Auth { .. } => TransportErrorKind::Unauthorized,
        // The answer arrived and was dropped: scoped to its request, the
        // call fails with it at once (`TransportError::is_dropped_answer`).
        HttpError::BodyTooLarge { .. } => TransportErrorKind::Decode,
        _ => TransportErrorKind::Protocol,
    }
}

impl Shared {
    /// One HTTP exchange: auth header, same-origin 307/308 redirects, the
    /// request timeout, up to [`MAX_AUTH_RETRIES`] retries after a 401/403
    /// when the auth hook asks.
    pub(super) async fn exchange(
        &self,
        method: Method,
        url: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response<ResponseBody>, HttpError> {
        self.exchange_built(method, url, None, &|| headers.clone(), body)
            .await
    }

    /// [`exchange`](Self::exchange) with this request's headers given as
    /// the map for the first attempt (sent as it is, not copied) and a way
    /// to build them again for a retry or redirect.
    ///
    /// A function returning a block rather than an `async fn`, which would
    /// keep a second copy of each argument in the future of every POST.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` keeps a second copy of each argument in its future"
    )]
    pub(super) fn exchange_built<'a>(
        &'a self,
        method: Method,
        url: &'a Uri,
        mut first: Option<HeaderMap>,
        again: &'a (dyn Fn() -> HeaderMap + Sync),
        body: Bytes,
    ) -> impl Future<Output = Result<Response<ResponseBody>, HttpError>> + Send + 'a {
        async move {
            let mut url = Cow::Borrowed(url);
            let mut redirects = 0;
            let mut auth_retries = 0;
            loop {
                // The auth hook's headers first, so that the request is built
                // and handed to `send` in one expression: a request held in a
                // variable across the `await` below would keep its space (and
                // its headers') in this future for as long as the exchange runs.
                let extra = match &self.cfg.auth {
                    Some(auth) => Some(auth.request_headers(&method, &url).await),
                    None => None,
                };
                let headers = first.take().unwrap_or_else(again);
                // Pinned where it is made: the timeout holds a pointer to it
                // instead of a copy of the whole future.
                let mut fut = pin!(self.cfg.http.send(self.request(
                    &method,
                    &url,
                    headers,
                    extra,
                    body.clone()
                )));
                let resp = match self.cfg.request_timeout {
                    Some(t) => tokio::time::timeout(t, fut.as_mut()).await.map_err(|_| {
                        HttpError::Timeout {
                            what: "waiting for the response headers",
                            after: t,
                        }
                    })?,
                    None => fut.await,
                }?;
                let status = resp.status();
                if let Some(auth) = &self.cfg.auth {
                    auth.on_response(&url, status, resp.headers());
                }
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                    if let Some(auth) = &self.cfg.auth
                        && auth_retries < MAX_AUTH_RETRIES
                    {
                        let www = resp.headers().get(WWW_AUTHENTICATE).cloned();
                        let refusal = Unauthorized::new(status, www).with_retries(auth_retries);
                        match auth.on_unauthorized(refusal).await {
                            Ok(true) => {
                                auth_retries += 1;
                                continue;
                            }
                            Ok(false) => {}
                            Err(source) => return Err(HttpError::Auth { status, source }),
                        }
                    }
                    return Ok(resp);
                }
                let location = if status.is_redirection() {
                    resp.headers().get(LOCATION).and_then(|v| v.to_str().ok())
                } else {
                    None
                };
                let next =
                    RedirectPolicy::CREDENTIALED.next(&method, status, &url, location, redirects);
                match next {
                    Ok(None) => {}
                    Ok(Some(target)) => {
                        redirects += 1;
                        // Inside a request's span, this is its `redirect` event.
                        tracing::info!(%status, location = %target, "redirect");
                        url = Cow::Owned(target);
                        continue;
                    }
                    Err(refusal) => {
                        let reason = match refusal {
                        RedirectRefusal::CrossOrigin(target) => {
                            return Err(HttpError::CrossOriginRedirect {
                                location: target.to_string(),
                            });
                        }
                        RedirectRefusal::MethodChange => "only 307 and 308 keep the method and body; point the client at the final URL".into(),
                        RedirectRefusal::NoLocation => "missing or unusable Location header".into(),
                        RedirectRefusal::TooMany(max) => format!("more than {max} redirects"),
                    };
                        return Err(HttpError::Redirect { status, reason });
                    }
                }
                return Ok(resp);
            }
        }
    }

    /// One attempt's request: the configured headers, then this request's
    /// (which replace configured ones of the same name), then the auth
    /// hook's (which replace both, marked sensitive).
    pub(super) fn request(
        &self,
        method: &Method,
        url: &Uri,
        headers: HeaderMap,
        extra: Option<HeaderMap>,
        body: Bytes,
    ) -> Request<Full<Bytes>> {
        let length = (*method == Method::POST).then(|| HeaderValue::from(body.len()));
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method.clone();
        *req.uri_mut() = url.clone();
        *req.headers_mut() = if self.cfg.headers.is_empty() {
            headers
        } else {
            let mut h = self.cfg.headers.clone();
            for (k, v) in &headers {
                // `Host` in a POST's map is the pool's default, not a
                // choice of this request: a configured one stays.
                if k == HOST && h.contains_key(HOST) {
                    continue;
                }
                h.insert(k.clone(), v.clone());
            }
            h
        };
        if let Some(extra) = extra {
            let h = req.headers_mut();
            for k in extra.keys() {
                h.remove(k);
            }
            for (k, v) in &extra {
                let mut v = v.clone();
                v.set_sensitive(true);
                h.append(k.clone(), v);
            }
        }
        if let Some(length) = length {
            // In the seat `post_headers` keeps for it.
            req.headers_mut().insert(CONTENT_LENGTH, length);
        }
        req
    }

    /// Headers common to every request after the handshake (legacy: session
    /// id and version; modern: version).
    pub(super) fn base_headers(&self) -> HeaderMap {
        lock(&self.state).base_headers()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_locations() {
        let base: Uri = "http://127.0.0.1:8080/mcp".parse().unwrap();
        assert!(same_origin(
            &base,
            &"http://127.0.0.1:8080/other".parse().unwrap()
        ));
        assert!(!same_origin(
            &base,
            &"http://127.0.0.1:8081/mcp".parse().unwrap()
        ));
        assert!(!same_origin(
            &base,
            &"https://127.0.0.1:8080/mcp".parse().unwrap()
        ));
        let https: Uri = "https://h/mcp".parse().unwrap();
        assert!(same_origin(&https, &"https://h:443/x".parse().unwrap()));
        assert_eq!(
            resolve(&base, "/x?y=1").unwrap().to_string(),
            "http://127.0.0.1:8080/x?y=1"
        );
        assert_eq!(
            resolve(&base, "//evil/x").unwrap().to_string(),
            "http://evil/x"
        );
    }
}
