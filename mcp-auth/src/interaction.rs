//! The user-interaction hook of the authorization code flow, a loopback
//! redirect listener for CLIs and desktop apps, and a headless follower for
//! authorization servers that approve without a user.

use std::sync::Arc;
use std::time::Duration;

use http::header;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::browser::check_authorization_url;
use crate::error::{AuthError, AuthErrorKind};
use crate::net::{HttpClient, checked_url};
use crate::ssrf::SsrfPolicy;
use crate::util::resolve;
use mcp_transport_http::BoxFuture;

/// How the user takes part in the authorization code flow.
pub trait Interaction: Send + Sync + 'static {
    /// The redirect URI registered for the client and sent in the
    /// authorization request.
    fn redirect_uri(&self) -> String;

    /// "Open this URL": show `authorization_url` to the user (or open a
    /// browser), then "here is the callback": resolve to the full URL the
    /// authorization server redirected to (with `code`, `state`, maybe `iss`
    /// or `error` in its query).
    ///
    /// [`OAuthProvider`](crate::OAuthProvider) passes only URLs that
    /// [`check_authorization_url`] accepts. Open one with
    /// [`open_browser`](crate::open_browser) (no shell), never with
    /// `sh -c`, `cmd /c start` or the like.
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, AuthError>>;
}

impl<T: Interaction + ?Sized> Interaction for Arc<T> {
    fn redirect_uri(&self) -> String {
        (**self).redirect_uri()
    }
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        (**self).authorize(url)
    }
}

/// Default for [`LoopbackRedirect::timeout`]: 5 minutes for the user.
pub const DEFAULT_CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// Largest callback request head read.
const MAX_CALLBACK_REQUEST: usize = 16 * 1024;

type OpenUrl = Arc<dyn Fn(&str) + Send + Sync>;

/// A redirect listener on `127.0.0.1` (RFC 8252 §7.3): the redirect URI is
/// `http://127.0.0.1:<port>/callback`; [`authorize`](Interaction::authorize)
/// checks the URL ([`check_authorization_url`]: http(s) only, no control
/// characters), hands it to the `open` callback (print it, or launch a
/// browser with [`open_browser`](crate::open_browser), never through a
/// shell) and waits for the browser's request to the callback path.
pub struct LoopbackRedirect {
    listener: tokio::sync::Mutex<TcpListener>,
    port: u16,
    open: OpenUrl,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Binds `127.0.0.1:port` (`0`: any free port). `open` receives the
    /// authorization URL.
    pub async fn bind(
        port: u16,
        open: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<Self, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            AuthError::new(
                AuthErrorKind::Config,
                format!("cannot listen on 127.0.0.1:{port} for the authorization callback"),
            )
            .with_source(e)
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| {
                AuthError::new(
                    AuthErrorKind::Config,
                    "the callback listener has no local address",
                )
                .with_source(e)
            })?
            .port();
        Ok(LoopbackRedirect {
            listener: tokio::sync::Mutex::new(listener),
            port,
            open: Arc::new(open),
            timeout: DEFAULT_CALLBACK_TIMEOUT,
        })
    }

    /// How long to wait for the callback.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.port
    }

    async fn wait(&self) -> Result<String, AuthError> {
        let listener = self.listener.lock().await;
        loop {
            let (mut sock, _) = listener.accept().await.map_err(|e| {
                AuthError::new(
                    AuthErrorKind::Interaction,
                    "accepting the authorization callback failed",
                )
                .with_source(e)
            })?;
            let mut buf = Vec::new();
            let mut chunk = [0u8; 2048];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_CALLBACK_REQUEST {
                match sock.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let head = String::from_utf8_lossy(&buf);
            let target = head
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or("");
            if target == "/callback" || target.starts_with("/callback?") {
                let page = "<!doctype html><title>Authorized</title><p>Authorization complete. You can close this window.";
                let _ = sock
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                            page.len()
                        )
                        .as_bytes(),
                    )
                    .await;
                return Ok(format!("http://127.0.0.1:{}{target}", self.port));
            }
            let _ = sock
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    }
}

impl Interaction for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        Box::pin(async move {
            check_authorization_url(&authorization_url)?;
            (self.open)(&authorization_url);
            tokio::time::timeout(self.timeout, self.wait())
                .await
                .map_err(|_| {
                    AuthError::new(
                        AuthErrorKind::Interaction,
                        format!("no authorization callback within {:?}", self.timeout),
                    )
                })?
        })
    }
}

/// Headless: fetches the authorization URL itself and follows its redirects
/// until one points at the redirect URI, which it returns without
/// requesting it. For tests, and for authorization servers that approve
/// without a user (the MCP conformance suite's).
#[derive(Debug)]
pub struct FollowRedirect {
    redirect_uri: String,
    http: HttpClient,
}

/// Redirect hops [`FollowRedirect`] follows.
const MAX_FOLLOW: usize = 5;

impl FollowRedirect {
    /// A follower announcing `redirect_uri`, reaching the authorization
    /// server under `policy`.
    pub fn new(redirect_uri: impl Into<String>, policy: SsrfPolicy) -> Result<Self, AuthError> {
        Ok(FollowRedirect {
            redirect_uri: redirect_uri.into(),
            http: HttpClient::new(policy, crate::net::DEFAULT_HTTP_TIMEOUT)?,
        })
    }
}

impl Interaction for FollowRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        Box::pin(async move {
            let mut url = checked_url(&authorization_url, self.http.policy())?;
            for _ in 0..MAX_FOLLOW {
                let resp = self.http.send(http::Method::GET, &url, &[], None).await?;
                let Some(loc) = resp
                    .headers
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                else {
                    return Err(AuthError::new(
                        AuthErrorKind::Interaction,
                        format!(
                            "{url} answered {} without a redirect; it needs a user",
                            resp.status
                        ),
                    ));
                };
                if loc.starts_with(&self.redirect_uri) {
                    return Ok(loc.to_owned());
                }
                url = resolve(&url, loc).ok_or_else(|| {
                    AuthError::new(
                        AuthErrorKind::Interaction,
                        format!("unusable redirect {loc:?}"),
                    )
                })?;
            }
            Err(AuthError::new(
                AuthErrorKind::Interaction,
                format!(
                    "no redirect to {} within {MAX_FOLLOW} hops",
                    self.redirect_uri
                ),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn loopback_listener_returns_the_callback() {
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let lr = LoopbackRedirect::bind(0, move |u| {
            let _ = tx.send(u.to_owned());
        })
        .await
        .unwrap()
        .timeout(Duration::from_secs(10));
        let port = lr.port();
        assert_eq!(
            lr.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let browser = tokio::spawn(async move {
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            s.write_all(b"GET /favicon.ico HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out).await.unwrap();
            assert!(out.starts_with(b"HTTP/1.1 404"));
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            s.write_all(b"GET /callback?code=abc&state=xyz HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out).await.unwrap();
            assert!(out.starts_with(b"HTTP/1.1 200"));
        });
        let cb = lr
            .authorize("https://as.example/authorize?x=1".into())
            .await
            .unwrap();
        assert_eq!(
            cb,
            format!("http://127.0.0.1:{port}/callback?code=abc&state=xyz")
        );
        assert_eq!(rx.recv().unwrap(), "https://as.example/authorize?x=1");
        browser.await.unwrap();
    }

    #[tokio::test]
    async fn loopback_listener_times_out() {
        let lr = LoopbackRedirect::bind(0, |_| {})
            .await
            .unwrap()
            .timeout(Duration::from_millis(50));
        let e = lr
            .authorize("https://as.example/a".into())
            .await
            .unwrap_err();
        assert!(e.to_string().contains("no authorization callback"), "{e}");
    }
}
