//! The error type.

use std::error::Error as StdError;
use std::fmt;

use http::StatusCode;

type BoxError = Box<dyn StdError + Send + Sync>;

/// Why an authorization step failed.
///
/// hyper's shape: an opaque struct with a [`kind`](Self::kind) and
/// predicates for what a caller must decide, such as
/// [`is_user_action_needed`](Self::is_user_action_needed) (a new login may
/// fix it), [`is_invalid_grant`](Self::is_invalid_grant) (the grant is
/// spent) and [`is_retryable`](Self::is_retryable) (trying later may
/// work). The underlying failure (an I/O, HTTP, TLS or JSON error) is the
/// [`source`](StdError::source); an OAuth error answer's `error` and
/// `error_description` are in [`oauth_error`](Self::oauth_error) and
/// [`oauth_error_description`](Self::oauth_error_description).
///
/// The message (its `Display`) names the URL or field at fault and what to
/// do; the cause's text is not in it but follows from
/// [`source`](StdError::source), so print the whole error with
/// `mcp_proto::error::chain`. It never contains a token or a secret. Its
/// exact wording may change: test with the kind and the predicates.
///
/// When the HTTP transport's request fails because authorization failed,
/// this error is in the caller's error chain; [`AuthError::find`] digs it
/// out:
///
/// ```
/// # fn demo(err: &(dyn std::error::Error + 'static)) {
/// if let Some(auth) = mcp_auth::AuthError::find(err) {
///     if auth.is_user_action_needed() {
///         eprintln!("authorize again: {}", mcp_proto::error::chain(auth));
///     }
/// }
/// # }
/// ```
pub struct AuthError {
    inner: Box<Inner>,
}

struct Inner {
    kind: AuthErrorKind,
    message: String,
    status: Option<StatusCode>,
    oauth: Option<(String, Option<String>)>,
    source: Option<BoxError>,
}

/// What an [`AuthError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// A URL is not usable: its syntax or scheme, or an address the
    /// [`SsrfPolicy`](crate::SsrfPolicy) refuses, or a redirect to one.
    InvalidUrl,
    /// A request of the OAuth flow failed before an answer arrived
    /// (connection, TLS, timeout, an unreadable or oversized body, too many
    /// redirects). The source says what.
    Http,
    /// Discovery found no usable metadata.
    Discovery,
    /// Metadata was found but cannot be used: not JSON of the right shape,
    /// another issuer than the one asked for (RFC 8414 §3.3), another
    /// resource than the MCP server (RFC 9728 §3.3).
    InvalidMetadata,
    /// The authorization server does not offer what the flow needs (PKCE
    /// S256, an endpoint, a grant type, a registration path).
    Unsupported,
    /// Client registration was refused or is impossible.
    Registration,
    /// The authorization server answered the authorization request with an
    /// error (e.g. `access_denied`: the user did not consent).
    AuthorizationDenied,
    /// The authorization response was discarded: its `state` or `iss` does
    /// not match, or it has no code.
    InvalidAuthorizationResponse,
    /// The token endpoint (or an identity provider's) refused the request
    /// or answered something unusable.
    Token,
    /// A refresh failed: no refresh token, a refused one, or tokens of
    /// another authorization server.
    Refresh,
    /// The user-interaction hook failed or timed out.
    Interaction,
    /// The MCP server answered `403 Forbidden` without an
    /// `insufficient_scope` challenge: the token is valid but not allowed.
    Forbidden,
    /// A retry limit was reached (step-up or re-authorization).
    RetryLimit,
    /// A DPoP proof could not be made.
    Dpop,
    /// The token store failed.
    Store,
    /// Bad configuration (e.g. an unreadable private key, a missing grant).
    Config,
}

impl AuthError {
    /// An error of `kind` saying `message` (what happened and what to do),
    /// e.g. from a [`TokenStore`](crate::TokenStore) or an
    /// [`Interaction`](crate::Interaction) of one's own; add the cause with
    /// [`with_source`](Self::with_source).
    ///
    /// ```
    /// use mcp_auth::{AuthError, AuthErrorKind};
    ///
    /// let e = std::env::var("MY_WORKLOAD_JWT").map_err(|e| {
    ///     AuthError::new(AuthErrorKind::Config, "set MY_WORKLOAD_JWT").with_source(e)
    /// });
    /// # let _ = e;
    /// ```
    pub fn new(kind: AuthErrorKind, message: impl Into<String>) -> Self {
        AuthError {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                status: None,
                oauth: None,
                source: None,
            }),
        }
    }

    /// Adds the underlying cause (the [`source`](StdError::source); a
    /// reporter prints its text after the message).
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.inner.source = Some(source.into());
        self
    }

    /// A URL refused for `reason`.
    /// The URL is shown escaped and shortened ([`short`]): a refused URL
    /// may carry terminal control sequences.
    pub(crate) fn invalid_url(url: impl fmt::Display, reason: impl fmt::Display) -> Self {
        Self::new(
            AuthErrorKind::InvalidUrl,
            format!("refused URL {}: {reason}", short(&url.to_string())),
        )
    }

    /// A request to `url` that got no answer because of `source`.
    pub(crate) fn http(url: impl fmt::Display, source: impl Into<BoxError>) -> Self {
        Self::new(AuthErrorKind::Http, format!("request to {url} failed")).with_source(source)
    }

    /// `what` (e.g. "token request") at `url` answered with an error status;
    /// `body` is parsed as an OAuth error answer (RFC 6749 §5.2).
    pub(crate) fn refused(
        kind: AuthErrorKind,
        what: &str,
        url: impl fmt::Display,
        status: StatusCode,
        body: &[u8],
    ) -> Self {
        let oauth = oauth_error_body(body);
        let detail = match &oauth {
            Some((e, Some(d))) => format!("{e}: {d}"),
            Some((e, None)) => e.clone(),
            None => excerpt(body),
        };
        let hint = match oauth.as_ref().map(|(e, _)| e.as_str()) {
            Some("invalid_grant") => "; the grant is invalid, expired or revoked: authorize again",
            Some("invalid_client" | "unauthorized_client") => {
                "; the authorization server does not accept this client: check its credentials or registration"
            }
            Some("temporarily_unavailable" | "server_error") => "; try again later",
            _ if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS => {
                "; try again later"
            }
            _ => "",
        };
        let mut e = Self::new(
            kind,
            format!("{what} at {url} was refused (HTTP {status}): {detail}{hint}"),
        );
        e.inner.status = Some(status);
        e.inner.oauth = oauth;
        e
    }

    /// An error `error` (with `error_description`) in a response that is
    /// not an HTTP error, such as the authorization redirect.
    pub(crate) fn with_oauth(mut self, error: &str, description: Option<&str>) -> Self {
        self.inner.oauth = Some((error.to_owned(), description.map(str::to_owned)));
        self
    }

    /// The same error as another kind (e.g. a token error while refreshing).
    pub(crate) fn into_kind(mut self, kind: AuthErrorKind) -> Self {
        self.inner.kind = kind;
        self
    }

    /// What failed.
    pub fn kind(&self) -> AuthErrorKind {
        self.inner.kind
    }

    /// The HTTP status of the answer that refused the request, if one did.
    pub fn status(&self) -> Option<StatusCode> {
        self.inner.status
    }

    /// The OAuth `error` code the server answered with (RFC 6749 §4.1.2.1,
    /// §5.2), e.g. `invalid_grant`, `access_denied`; for
    /// [`Forbidden`](AuthErrorKind::Forbidden), the `error` of the MCP
    /// server's challenge.
    pub fn oauth_error(&self) -> Option<&str> {
        self.inner.oauth.as_ref().map(|(e, _)| e.as_str())
    }

    /// The server's `error_description`, if it sent one.
    pub fn oauth_error_description(&self) -> Option<&str> {
        self.inner.oauth.as_ref().and_then(|(_, d)| d.as_deref())
    }

    /// The authorization grant (an authorization code, a refresh token, an
    /// assertion) is invalid, expired or revoked (`invalid_grant`): it must
    /// not be used again; a new authorization is needed.
    pub fn is_invalid_grant(&self) -> bool {
        self.oauth_error() == Some("invalid_grant")
    }

    /// Only a person can fix this: authorize again interactively (consent
    /// was denied or not given in time, the grant or refresh token is no
    /// longer valid, the server asks for a login). Trying again without the
    /// user does not help.
    pub fn is_user_action_needed(&self) -> bool {
        matches!(
            self.kind(),
            AuthErrorKind::AuthorizationDenied
                | AuthErrorKind::Interaction
                | AuthErrorKind::Refresh
        ) || self.is_invalid_grant()
            || matches!(
                self.oauth_error(),
                Some("login_required" | "consent_required" | "interaction_required")
            )
    }

    /// Trying the same thing later may succeed: the request got no answer
    /// (network, timeout), or the server answered that it is overloaded or
    /// failing (HTTP 429 or 5xx, `temporarily_unavailable`, `server_error`).
    pub fn is_retryable(&self) -> bool {
        self.kind() == AuthErrorKind::Http
            || self
                .status()
                .is_some_and(|s| s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS)
            || matches!(
                self.oauth_error(),
                Some("temporarily_unavailable" | "server_error")
            )
    }

    /// The MCP server refused a valid token (`403 Forbidden` without an
    /// `insufficient_scope` challenge): authorizing again cannot help; the
    /// server's operator must grant access.
    pub fn is_forbidden(&self) -> bool {
        self.kind() == AuthErrorKind::Forbidden
    }

    /// The first `AuthError` in `err`'s chain (`err` itself, then its
    /// [`source`](StdError::source)s), e.g. the cause of a client call that
    /// failed because authorization failed.
    pub fn find<'a>(err: &'a (dyn StdError + 'static)) -> Option<&'a AuthError> {
        let mut cur = Some(err);
        while let Some(e) = cur {
            if let Some(a) = e.downcast_ref::<AuthError>() {
                return Some(a);
            }
            cur = e.source();
        }
        None
    }
}

impl fmt::Debug for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("AuthError");
        d.field("kind", &self.inner.kind);
        d.field("message", &self.inner.message);
        if let Some(s) = self.inner.status {
            d.field("status", &s);
        }
        if let Some(o) = &self.inner.oauth {
            d.field("oauth", o);
        }
        if let Some(s) = &self.inner.source {
            d.field("source", s);
        }
        d.finish()
    }
}

/// The message alone: what failed and what to do. The cause is the
/// [`source`](StdError::source).
impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl StdError for AuthError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

/// `error` and `error_description` of an OAuth error body, if it is one.
fn oauth_error_body(body: &[u8]) -> Option<(String, Option<String>)> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let e = v.get("error")?.as_str()?;
    let d = v.get("error_description").and_then(|x| x.as_str());
    Some((short(e), d.map(short)))
}

/// At most 200 characters of server text, for a message.
/// `s` made safe to show: its first 200 characters, with control
/// characters (C0, DEL, C1) and bidirectional-text controls written as
/// `\u{..}` escapes, so a server's text cannot move the cursor, set the
/// window title or the clipboard, or reorder what the user reads.
pub(crate) fn short(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().take(200) {
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    if s.chars().count() > 200 {
        out.push('…');
    }
    out
}

fn excerpt(body: &[u8]) -> String {
    let s = short(String::from_utf8_lossy(body).trim());
    if s.is_empty() {
        "<empty body>".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_keep_the_oauth_error_and_predicates_follow_it() {
        let e = AuthError::refused(
            AuthErrorKind::Token,
            "token request",
            "https://as/token",
            StatusCode::BAD_REQUEST,
            br#"{"error":"invalid_grant","error_description":"expired"}"#,
        );
        assert_eq!(
            e.to_string(),
            "token request at https://as/token was refused (HTTP 400 Bad Request): invalid_grant: expired; the grant is invalid, expired or revoked: authorize again"
        );
        assert_eq!(e.oauth_error(), Some("invalid_grant"));
        assert_eq!(e.oauth_error_description(), Some("expired"));
        assert!(e.is_invalid_grant() && e.is_user_action_needed() && !e.is_retryable());
        let busy = AuthError::refused(
            AuthErrorKind::Token,
            "token request",
            "https://as/token",
            StatusCode::SERVICE_UNAVAILABLE,
            b"",
        );
        assert!(busy.is_retryable() && !busy.is_user_action_needed());
        assert!(
            busy.to_string().ends_with("<empty body>; try again later"),
            "{busy}"
        );
    }

    #[test]
    fn the_source_is_kept_and_named_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = AuthError::http("https://as/token", io);
        // Its own part; the cause follows from source() (mcp_proto::error).
        assert_eq!(e.to_string(), "request to https://as/token failed");
        assert_eq!(
            mcp_proto::error::chain(&e).to_string(),
            "request to https://as/token failed: refused"
        );
        mcp_proto::testing::assert_causes_once(&e);
        assert!(e.is_retryable());
        assert!(
            e.source()
                .unwrap()
                .downcast_ref::<std::io::Error>()
                .is_some()
        );
        assert!(AuthError::find(e.source().unwrap()).is_none());
        // Found in a chain that wraps it.
        #[derive(Debug)]
        struct Outer(AuthError);
        impl fmt::Display for Outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("outer")
            }
        }
        impl StdError for Outer {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let outer = Outer(e);
        assert_eq!(
            AuthError::find(&outer).map(AuthError::kind),
            Some(AuthErrorKind::Http)
        );
    }
}
