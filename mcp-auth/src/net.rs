//! The small HTTP client of the OAuth flow: https except for loopback, an
//! SSRF policy checked on the URL and again on every DNS answer (so on every
//! redirect hop too), bounded bodies, a timeout per request.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;

use crate::error::{AuthError, AuthErrorKind};
use mcp_transport_http::LocalSocket;
use mcp_transport_http::uri::{RedirectPolicy, RedirectRefusal};

use crate::util::parse_url;

/// Largest metadata / token response body read: 256 KiB.
pub const MAX_RESPONSE_BODY: usize = 256 * 1024;
/// Redirects followed by a metadata `GET` (each hop re-checked).
pub const MAX_REDIRECTS: usize = 3;
/// Default timeout of one OAuth HTTP request.
pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Which addresses the OAuth HTTP client may reach.
///
/// Public addresses are always allowed. Private (RFC 1918, unique-local
/// `fc00::/7`, CGNAT `100.64/10`), link-local (`169.254/16` — cloud metadata
/// services — and `fe80::/10`), unspecified, multicast and broadcast
/// addresses are refused unless [`allow_private`](Self::allow_private).
/// Loopback is refused unless [`allow_loopback`](Self::allow_loopback);
/// [`crate::OAuthProvider`] allows it by default only when the MCP server
/// itself is on loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SsrfPolicy {
    /// Allow loopback addresses (`127.0.0.0/8`, `::1`, `localhost`).
    pub allow_loopback: bool,
    /// Allow private, link-local and other non-public addresses.
    pub allow_private: bool,
}

impl SsrfPolicy {
    /// Whether `ip` may be contacted.
    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        if ip.is_loopback() {
            return self.allow_loopback;
        }
        if is_private(ip) {
            return self.allow_private;
        }
        true
    }
}

fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                || o[0] == 0
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
        }
    }
}

/// Whether a host name or literal is loopback (`localhost`, `127.x`, `::1`).
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    if h.eq_ignore_ascii_case("localhost") || h.to_ascii_lowercase().ends_with(".localhost") {
        return true;
    }
    h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Checks a URL an OAuth request goes to: http(s) only, `https` unless the
/// host is loopback, literal IPs against the policy.
pub(crate) fn check_url(url: &Uri, policy: &SsrfPolicy) -> Result<(), AuthError> {
    let refused = |reason: &str| AuthError::invalid_url(url, reason);
    let host = url.host().ok_or_else(|| refused("no host"))?;
    match url.scheme_str() {
        Some("https") => {}
        Some("http") if is_loopback_host(host) => {}
        Some("http") => {
            return Err(refused(
                "authorization endpoints must use https (http is allowed only for loopback)",
            ));
        }
        _ => return Err(refused("only http(s) URLs are allowed")),
    }
    if is_loopback_host(host) && !policy.allow_loopback {
        return Err(refused(
            "loopback address refused by the SSRF policy (allow it with allow_loopback when the server is local)",
        ));
    }
    let h = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = h.parse::<IpAddr>()
        && !policy.allows(ip)
    {
        return Err(refused(
            "private or link-local address refused by the SSRF policy (allow it with allow_private_addresses)",
        ));
    }
    Ok(())
}

/// A DNS resolver that drops addresses the policy refuses, so a name that
/// resolves (or re-resolves, on a redirect) to an internal address cannot be
/// reached.
#[derive(Clone, Debug)]
pub(crate) struct CheckedResolver {
    policy: SsrfPolicy,
}

impl tower_service::Service<Name> for CheckedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let policy = self.policy;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{host} resolves only to addresses refused by the SSRF policy ({:?})",
                        all.iter().map(|a| a.ip()).collect::<Vec<_>>()
                    ),
                ));
            }
            Ok(allowed.into_iter())
        })
    }
}

type Connector = hyper_rustls::HttpsConnector<HttpConnector<CheckedResolver>>;

/// An answer: status, headers, body (bounded).
#[derive(Debug)]
pub(crate) struct HttpResponse {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl HttpResponse {
    pub(crate) fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// The OAuth HTTP client.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: Client<Connector, Full<Bytes>>,
    policy: SsrfPolicy,
    timeout: Duration,
    /// An MCP server on a local socket: requests to its origin (as the
    /// transport addresses it, `http://localhost`) go through the socket.
    local: Option<(String, LocalSocket)>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("policy", &self.policy)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with this SSRF policy and per-request timeout.
    pub(crate) fn new(policy: SsrfPolicy, timeout: Duration) -> Result<Self, AuthError> {
        let mut http = HttpConnector::new_with_resolver(CheckedResolver { policy });
        http.enforce_http(false);
        http.set_connect_timeout(Some(timeout));
        http.set_nodelay(true);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(provider)
            .map_err(|e| {
                AuthError::new(
                    AuthErrorKind::Config,
                    "TLS setup for the OAuth client failed",
                )
                .with_source(e)
            })?
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(HttpClient {
            client,
            policy,
            timeout,
            local: None,
        })
    }

    /// Sends the requests to `server`'s origin through `socket`, as the
    /// transport sends the MCP requests (the server's metadata is there).
    pub(crate) fn through(mut self, server: &Uri, socket: LocalSocket) -> Self {
        self.local = Some((mcp_transport_http::uri::origin(server), socket));
        self
    }

    /// The SSRF policy.
    pub(crate) fn policy(&self) -> SsrfPolicy {
        self.policy
    }

    /// One request, no redirect following.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Uri,
        headers: &[(http::HeaderName, HeaderValue)],
        body: Option<(&'static str, Bytes)>,
    ) -> Result<HttpResponse, AuthError> {
        check_url(url, &self.policy)?;
        let mut builder = Request::builder()
            .method(method)
            .uri(url.clone())
            .header(header::ACCEPT, "application/json")
            .header(
                header::USER_AGENT,
                concat!("mcp-auth/", env!("CARGO_PKG_VERSION")),
            );
        for (k, v) in headers {
            builder = builder.header(k, v);
        }
        let body = match body {
            Some((ct, b)) => {
                builder = builder.header(header::CONTENT_TYPE, ct);
                b
            }
            None => Bytes::new(),
        };
        let req = builder
            .body(Full::new(body))
            .map_err(|e| AuthError::http(url, e))?;
        let fut = async {
            let resp = match &self.local {
                Some((origin, socket)) if mcp_transport_http::uri::origin(url) == *origin => {
                    send_local(socket, req)
                        .await
                        .map_err(|e| AuthError::http(url, e))?
                }
                _ => self
                    .client
                    .request(req)
                    .await
                    .map_err(|e| AuthError::http(url, e))?,
            };
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, MAX_RESPONSE_BODY)
                .collect()
                .await
                .map_err(|e| {
                    AuthError::new(
                        AuthErrorKind::Http,
                        format!(
                            "reading the answer of {url} failed (limit {MAX_RESPONSE_BODY} bytes)"
                        ),
                    )
                    .with_source(e)
                })?
                .to_bytes();
            Ok(HttpResponse {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(self.timeout, fut).await.map_err(|_| {
            AuthError::new(
                AuthErrorKind::Http,
                format!("request to {url} got no answer within {:?}", self.timeout),
            )
        })?
    }

    /// `GET` following up to [`MAX_REDIRECTS`] redirects, each target
    /// checked again: the workspace's redirect rule
    /// ([`RedirectPolicy`](mcp_transport_http::uri::RedirectPolicy)), any
    /// origin (these requests carry no credentials).
    pub(crate) async fn get(&self, url: &Uri) -> Result<HttpResponse, AuthError> {
        const POLICY: RedirectPolicy = RedirectPolicy {
            max: MAX_REDIRECTS as u32,
            cross_origin: true,
        };
        let mut url = url.clone();
        let mut followed = 0;
        loop {
            let resp = self.send(Method::GET, &url, &[], None).await?;
            let location = resp
                .headers
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok());
            match POLICY.next(&Method::GET, resp.status, &url, location, followed) {
                Ok(None) => return Ok(resp),
                Ok(Some(next)) => {
                    url = next;
                    followed += 1;
                }
                Err(RedirectRefusal::TooMany(_)) => {
                    return Err(AuthError::new(
                        AuthErrorKind::Http,
                        format!("request to {url} failed: more than {MAX_REDIRECTS} redirects"),
                    ));
                }
                Err(refusal) => {
                    return Err(AuthError::invalid_url(
                        location.unwrap_or_default(),
                        format_args!("unusable redirect target from {url} ({refusal:?})"),
                    ));
                }
            }
        }
    }

    /// `POST` of a form body.
    pub(crate) async fn post_form(
        &self,
        url: &Uri,
        form: String,
        headers: &[(http::HeaderName, HeaderValue)],
    ) -> Result<HttpResponse, AuthError> {
        self.send(
            Method::POST,
            url,
            headers,
            Some(("application/x-www-form-urlencoded", Bytes::from(form))),
        )
        .await
    }

    /// `POST` of a JSON body.
    pub(crate) async fn post_json(
        &self,
        url: &Uri,
        json: &serde_json::Value,
    ) -> Result<HttpResponse, AuthError> {
        let body = serde_json::to_vec(json).map_err(|e| {
            AuthError::new(
                AuthErrorKind::Config,
                "could not encode a JSON request body",
            )
            .with_source(e)
        })?;
        self.send(
            Method::POST,
            url,
            &[],
            Some(("application/json", Bytes::from(body))),
        )
        .await
    }
}

/// One request on a new connection to `socket` (HTTP/1.1, origin-form
/// target, `Host` from the URL). Metadata requests are few: no pool.
async fn send_local(
    socket: &LocalSocket,
    mut req: Request<Full<Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>, Box<dyn std::error::Error + Send + Sync>> {
    let io = hyper_util::rt::TokioIo::new(socket.connect().await?);
    let (mut tx, conn) = hyper::client::conn::http1::handshake(io).await?;
    // Ends when the response body is read (or dropped) and `tx` is gone.
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "OAuth request over a local socket: connection ended");
        }
    });
    if let Some(host) = req.uri().authority().map(|a| a.as_str().to_owned()) {
        req.headers_mut()
            .insert(header::HOST, HeaderValue::from_str(&host)?);
    }
    let target = req
        .uri()
        .path_and_query()
        .map_or_else(|| Uri::from_static("/"), |pq| Uri::from(pq.clone()));
    *req.uri_mut() = target;
    Ok(tx.send_request(req).await?)
}

/// Parses a URL string and checks it against the policy.
pub(crate) fn checked_url(s: &str, policy: &SsrfPolicy) -> Result<Uri, AuthError> {
    let url =
        parse_url(s).ok_or_else(|| AuthError::invalid_url(s, "not an absolute http(s) URL"))?;
    check_url(&url, policy)?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_refuses_private_and_link_local_by_default() {
        let p = SsrfPolicy::default();
        for ip in [
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "fe80::1",
            "fd00::1",
            "::",
            "::ffff:10.0.0.1",
            "127.0.0.1",
            "::1",
        ] {
            assert!(!p.allows(ip.parse().unwrap()), "{ip} should be refused");
        }
        assert!(p.allows("93.184.216.34".parse().unwrap()));
        assert!(p.allows("2606:4700::1".parse().unwrap()));
        let lo = SsrfPolicy {
            allow_loopback: true,
            allow_private: false,
        };
        assert!(lo.allows("127.0.0.1".parse().unwrap()));
        assert!(!lo.allows("10.1.2.3".parse().unwrap()));
        let all = SsrfPolicy {
            allow_loopback: true,
            allow_private: true,
        };
        assert!(all.allows("169.254.169.254".parse().unwrap()));
    }

    #[test]
    fn urls_need_https_except_loopback() {
        let lo = SsrfPolicy {
            allow_loopback: true,
            allow_private: false,
        };
        assert!(checked_url("http://localhost:8080/x", &lo).is_ok());
        assert!(checked_url("http://127.0.0.1/x", &lo).is_ok());
        assert!(checked_url("http://[::1]:9/x", &lo).is_ok());
        assert!(checked_url("https://as.example/x", &lo).is_ok());
        let e = checked_url("http://as.example/x", &lo).unwrap_err();
        assert!(e.to_string().contains("https"), "{e}");
        assert!(checked_url("javascript:alert(1)", &lo).is_err());
        assert!(checked_url("https://10.0.0.1/x", &lo).is_err());
        assert!(checked_url("https://169.254.169.254/latest", &lo).is_err());
        // Loopback refused when not allowed.
        assert!(checked_url("http://localhost/x", &SsrfPolicy::default()).is_err());
    }

    #[tokio::test]
    async fn resolver_drops_refused_addresses() {
        use tower_service::Service;
        let mut r = CheckedResolver {
            policy: SsrfPolicy::default(),
        };
        let e = r.call("localhost".parse().unwrap()).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        let mut r = CheckedResolver {
            policy: SsrfPolicy {
                allow_loopback: true,
                allow_private: false,
            },
        };
        let addrs: Vec<_> = r
            .call("localhost".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()));
    }
}
