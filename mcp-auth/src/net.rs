//! The small HTTP client of the OAuth flow: https except for loopback, the
//! [`SsrfPolicy`] checked on the URL and again on every DNS answer at
//! connect time (so on every redirect hop and every new connection too),
//! bounded bodies, a timeout per request.

use std::future::Future;
use std::net::SocketAddr;
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

use crate::ssrf::{AddressClass, Host, SsrfPolicy, check_url, parse_host};
use crate::util::parse_url;

/// Largest metadata / token response body read: 256 KiB.
pub const MAX_RESPONSE_BODY: usize = 256 * 1024;
/// Redirects followed by a metadata `GET` (each hop re-checked).
pub const MAX_REDIRECTS: usize = 3;
/// Default timeout of one OAuth HTTP request.
pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// A resolver that checks every address a name resolves to against the
/// policy and hands the connector only the allowed ones, so the address
/// checked is the address connected to: a name that resolves (or
/// re-resolves, on a redirect or a new connection) to an internal address
/// cannot be reached. `localhost` names must resolve to loopback.
#[derive(Clone, Debug)]
pub(crate) struct CheckedResolver {
    policy: SsrfPolicy,
}

/// Why the resolver refused every address of a name (the source of the
/// connection error; [`HttpClient::send`] turns it into an
/// [`AuthErrorKind::InvalidUrl`] error).
#[derive(Debug)]
struct SsrfRefusal {
    host: String,
    reasons: Vec<String>,
}

impl std::fmt::Display for SsrfRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.reasons.is_empty() {
            return write!(f, "{} resolves to no address", self.host);
        }
        // At most four reasons: a name may resolve to many addresses.
        let shown = self.reasons.iter().take(4).cloned().collect::<Vec<_>>();
        write!(
            f,
            "{} resolves only to refused addresses: {}",
            self.host,
            shown.join("; ")
        )?;
        if self.reasons.len() > shown.len() {
            write!(f, "; and {} more", self.reasons.len() - shown.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for SsrfRefusal {}

impl CheckedResolver {
    async fn checked(policy: SsrfPolicy, host: String) -> std::io::Result<Vec<SocketAddr>> {
        let parsed = parse_host(&host);
        let all = match parsed {
            // A numeric spelling hyper does not parse itself (`0x7f.1`):
            // the address the URL check classified, not a DNS question.
            Some(Host::Ip(ip)) => vec![ip],
            Some(Host::Localhost | Host::Name) => policy.resolve(&host).await?,
            None => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{host} is not a valid host"),
                ));
            }
        };
        let mut allowed = Vec::new();
        let mut reasons = Vec::new();
        for ip in all {
            if parsed == Some(Host::Localhost) && policy.classify(ip) != AddressClass::Loopback {
                reasons.push(format!(
                    "{ip} is not loopback, which a localhost name must be"
                ));
            } else if let Some(why) = policy.refusal(ip) {
                reasons.push(why);
            } else {
                allowed.push(SocketAddr::new(ip, 0));
            }
        }
        if allowed.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                SsrfRefusal { host, reasons },
            ));
        }
        Ok(allowed)
    }
}

impl tower_service::Service<Name> for CheckedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move { Ok(Self::checked(policy, host).await?.into_iter()) })
    }
}

/// The resolver's refusal in `e`'s source chain, if that is why it failed.
fn ssrf_refusal<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a SsrfRefusal> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<SsrfRefusal>() {
            return Some(r);
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && let Some(r) = io.get_ref().and_then(|i| i.downcast_ref::<SsrfRefusal>())
        {
            return Some(r);
        }
        cur = err.source();
    }
    None
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
        let mut http = HttpConnector::new_with_resolver(CheckedResolver {
            policy: policy.clone(),
        });
        http.enforce_http(false);
        http.set_connect_timeout(Some(timeout));
        http.set_nodelay(true);
        // ring is the workspace's TLS crypto (no cmake or clang to build).
        // rustls 0.23.48 deprecates its ring provider only to steer users to
        // aws-lc-rs's post-quantum key exchange: the same provider, and a
        // build with the newest dependencies stays free of warnings.
        #[allow(deprecated)]
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
    pub(crate) fn policy(&self) -> &SsrfPolicy {
        &self.policy
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
                    .map_err(|e| match ssrf_refusal(&e) {
                        Some(refusal) => AuthError::invalid_url(url, refusal),
                        None => AuthError::http(url, e),
                    })?,
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
