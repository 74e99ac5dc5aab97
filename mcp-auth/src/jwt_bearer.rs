//! Workload identity federation (SEP-1933): the RFC 7523 JWT-bearer grant
//! with a JWT the platform issued to the workload (a Kubernetes projected
//! service-account token, a cloud instance identity token, a CI job's OIDC
//! token...).
//!
//! The assertion comes from an [`AssertionSource`], asked afresh for every
//! token request (platform tokens rotate): a file ([`WorkloadToken::file`]),
//! an environment variable ([`WorkloadToken::env`]), a fixed value
//! ([`WorkloadToken::fixed`]), or any closure / implementation of the trait.
//! When the authorization server refuses the grant the error is returned as
//! it is: no other grant is tried and the request is not repeated.

use std::fmt;
use std::path::PathBuf;

use mcp_transport_http::BoxFuture;

use crate::error::{AuthError, AuthErrorKind};

/// `grant_type` of the RFC 7523 §2.1 JWT-bearer grant.
pub(crate) const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Longest assertion accepted from a source (64 KiB): platform JWTs are a
/// few KiB; a file that is larger is not one.
pub const MAX_ASSERTION_LEN: usize = 64 * 1024;

/// Supplies the workload's JWT for the JWT-bearer grant, once per token
/// request.
///
/// Closures `Fn() -> Result<String, AuthError>` implement it:
///
/// ```
/// # fn demo() -> Result<(), mcp_auth::AuthError> {
/// use mcp_auth::{AuthError, AuthErrorKind, OAuthProvider};
///
/// let auth = OAuthProvider::builder("https://mcp.example.com/mcp")
///     .jwt_bearer(|| {
///         std::env::var("MY_WORKLOAD_JWT").map_err(|e| {
///             AuthError::new(AuthErrorKind::Config, "set MY_WORKLOAD_JWT").with_source(e)
///         })
///     })
///     .build()?;
/// # let _ = auth; Ok(()) }
/// ```
pub trait AssertionSource: Send + Sync + 'static {
    /// The current assertion (a compact JWT).
    fn assertion(&self) -> BoxFuture<'_, Result<String, AuthError>>;
}

impl<F> AssertionSource for F
where
    F: Fn() -> Result<String, AuthError> + Send + Sync + 'static,
{
    fn assertion(&self) -> BoxFuture<'_, Result<String, AuthError>> {
        let r = self();
        Box::pin(async move { r })
    }
}

/// The usual places a platform puts a workload token.
#[derive(Clone)]
pub struct WorkloadToken(Source);

#[derive(Clone)]
enum Source {
    File(PathBuf),
    Env(String),
    Fixed(String),
}

impl fmt::Debug for WorkloadToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::File(p) => f.debug_tuple("WorkloadToken::file").field(p).finish(),
            Source::Env(v) => f.debug_tuple("WorkloadToken::env").field(v).finish(),
            Source::Fixed(_) => f.write_str("WorkloadToken::fixed(<redacted>)"),
        }
    }
}

impl WorkloadToken {
    /// Read from this file on every token request (e.g.
    /// `/var/run/secrets/tokens/mcp`); surrounding whitespace is trimmed.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        WorkloadToken(Source::File(path.into()))
    }

    /// Read from this environment variable on every token request.
    pub fn env(var: impl Into<String>) -> Self {
        WorkloadToken(Source::Env(var.into()))
    }

    /// Always this JWT (it stops working when it expires).
    pub fn fixed(jwt: impl Into<String>) -> Self {
        WorkloadToken(Source::Fixed(jwt.into()))
    }

    fn read(&self) -> Result<String, AuthError> {
        let (raw, from) = match &self.0 {
            Source::File(p) => {
                let meta = std::fs::metadata(p).map_err(|e| {
                    AuthError::new(
                        AuthErrorKind::Config,
                        format!("cannot read the workload token file {}", p.display()),
                    )
                    .with_source(e)
                })?;
                if meta.len() > MAX_ASSERTION_LEN as u64 {
                    return Err(AuthError::new(
                        AuthErrorKind::Config,
                        format!(
                            "the workload token file {} has {} bytes, more than a JWT ({MAX_ASSERTION_LEN} at most)",
                            p.display(),
                            meta.len()
                        ),
                    ));
                }
                let s = std::fs::read_to_string(p).map_err(|e| {
                    AuthError::new(
                        AuthErrorKind::Config,
                        format!("cannot read the workload token file {}", p.display()),
                    )
                    .with_source(e)
                })?;
                (s, format!("the file {}", p.display()))
            }
            Source::Env(v) => {
                let s = std::env::var(v).map_err(|e| {
                    AuthError::new(
                        AuthErrorKind::Config,
                        format!("the workload token variable {v} is not usable"),
                    )
                    .with_source(e)
                })?;
                (s, format!("the variable {v}"))
            }
            Source::Fixed(s) => (s.clone(), "the configured value".to_owned()),
        };
        checked_assertion(raw, &from)
    }
}

impl AssertionSource for WorkloadToken {
    fn assertion(&self) -> BoxFuture<'_, Result<String, AuthError>> {
        let r = self.read();
        Box::pin(async move { r })
    }
}

/// Trims the assertion and checks it is shaped like a compact JWT (three
/// base64url parts), so a wrong file or variable shows up here, by name,
/// rather than as the server's `invalid_grant`.
pub(crate) fn checked_assertion(raw: String, from: &str) -> Result<String, AuthError> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(AuthError::new(
            AuthErrorKind::Config,
            format!("the workload token from {from} is empty"),
        ));
    }
    if s.len() > MAX_ASSERTION_LEN {
        return Err(AuthError::new(
            AuthErrorKind::Config,
            format!("the workload token from {from} is longer than {MAX_ASSERTION_LEN} bytes"),
        ));
    }
    let parts: Vec<&str> = s.split('.').collect();
    let b64url = |p: &str| {
        p.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    };
    if parts.len() != 3
        || parts[..2].iter().any(|p| p.is_empty())
        || !parts.iter().all(|p| b64url(p))
    {
        return Err(AuthError::new(
            AuthErrorKind::Config,
            format!(
                "the workload token from {from} is not a compact JWT (three base64url parts separated by dots)"
            ),
        ));
    }
    Ok(s.to_owned())
}

/// The RFC 7523 §2.1 token request body (before client authentication):
/// the grant, the assertion, the RFC 8707 `resource`, and `scope` when there
/// is one.
pub(crate) fn grant_body(
    assertion: String,
    resource: &str,
    scope: &str,
) -> Vec<(&'static str, String)> {
    let mut body = vec![
        ("grant_type", GRANT_JWT_BEARER.to_owned()),
        ("assertion", assertion),
        ("resource", resource.to_owned()),
    ];
    if !scope.is_empty() {
        body.push(("scope", scope.to_owned()));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    const JWT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3In0.c2ln";

    #[tokio::test]
    async fn sources_file_env_fixed_closure() {
        let dir = std::env::temp_dir().join(format!("mcp-auth-wif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, format!("  {JWT}\n")).unwrap();
        assert_eq!(WorkloadToken::file(&file).assertion().await.unwrap(), JWT);
        // Read afresh each time: a rotated token is picked up.
        let rotated = "eyJh.eyJi.c2ln";
        std::fs::write(&file, rotated).unwrap();
        assert_eq!(
            WorkloadToken::file(&file).assertion().await.unwrap(),
            rotated
        );
        let e = WorkloadToken::file(dir.join("missing"))
            .assertion()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        std::fs::write(&file, "x".repeat(MAX_ASSERTION_LEN + 1)).unwrap();
        let e = WorkloadToken::file(&file).assertion().await.unwrap_err();
        assert!(e.to_string().contains("more than a JWT"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();

        let var = "MCP_AUTH_TEST_WIF_UNSET_VARIABLE";
        let e = WorkloadToken::env(var).assertion().await.unwrap_err();
        assert!(e.to_string().contains(var), "{e}");

        assert_eq!(WorkloadToken::fixed(JWT).assertion().await.unwrap(), JWT);
        assert!(!format!("{:?}", WorkloadToken::fixed(JWT)).contains("eyJ"));
        let f = || Ok::<_, AuthError>(JWT.to_owned());
        assert_eq!(f.assertion().await.unwrap(), JWT);
    }

    #[test]
    fn assertions_must_look_like_jwts() {
        assert!(checked_assertion(String::new(), "x").is_err());
        assert!(checked_assertion("not a jwt".into(), "x").is_err());
        assert!(checked_assertion("a.b".into(), "x").is_err());
        assert!(checked_assertion("a.b.c.d".into(), "x").is_err());
        assert!(checked_assertion("a+.b.c".into(), "x").is_err());
        // An unsigned JWT's empty signature part is still three parts.
        assert_eq!(checked_assertion("a.b.".into(), "x").unwrap(), "a.b.");
        let e = checked_assertion("nope".into(), "the variable V").unwrap_err();
        assert!(e.to_string().contains("the variable V"), "{e}");
    }

    #[test]
    fn grant_request_body() {
        let body = grant_body(JWT.into(), "https://mcp.example/mcp", "a b");
        assert_eq!(
            body,
            vec![
                ("grant_type", GRANT_JWT_BEARER.to_owned()),
                ("assertion", JWT.to_owned()),
                ("resource", "https://mcp.example/mcp".to_owned()),
                ("scope", "a b".to_owned()),
            ]
        );
        assert!(
            grant_body(JWT.into(), "r", "")
                .iter()
                .all(|(k, _)| *k != "scope")
        );
    }
}
