//! The error type.

/// Why an authorization step failed. Messages name the URL or field at fault
/// and what to do; they never contain a token or a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL is not usable (syntax, scheme, or an address refused by the
    /// SSRF policy).
    #[error("refused URL {url}: {reason}")]
    RefusedUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// An HTTP request of the OAuth flow failed before an answer arrived.
    #[error("request to {url} failed: {reason}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// Discovery found no usable metadata.
    #[error("authorization discovery failed: {0}")]
    Discovery(String),
    /// The protected resource metadata names another resource than the MCP
    /// server (RFC 9728 §3.3); tokens for it must not be sent there.
    #[error(
        "the protected resource metadata is for {advertised}, not for the MCP server {expected}; refusing to authorize"
    )]
    ResourceMismatch {
        /// The resource the metadata names.
        advertised: String,
        /// The MCP server's canonical URI.
        expected: String,
    },
    /// The authorization server does not offer what the flow needs
    /// (e.g. PKCE S256, a registration path, a grant type).
    #[error("the authorization server cannot be used: {0}")]
    Unsupported(String),
    /// Client registration failed.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization response was rejected (state or iss mismatch, an
    /// error from the server, no code).
    #[error("authorization failed: {0}")]
    Authorization(String),
    /// The token endpoint refused the request.
    #[error("token request failed: {0}")]
    Token(String),
    /// The user-interaction hook failed or was cancelled.
    #[error("user interaction failed: {0}")]
    Interaction(String),
    /// The MCP server answered `403 Forbidden` without an
    /// `insufficient_scope` challenge: the token is valid but not allowed to
    /// do this, and the server named no missing scope, so a new
    /// authorization cannot help (the request fails, nothing is retried).
    #[error(
        "the MCP server answered 403 Forbidden{}: the token is valid but not allowed to do this, and the server named no missing scope (no insufficient_scope challenge), so authorizing again cannot help; ask the server's operator for access",
        .error.as_deref().map(|e| format!(" (error=\"{e}\")")).unwrap_or_default()
    )]
    Forbidden {
        /// The `error` of the server's `Bearer` challenge, if it sent one
        /// (anything but `insufficient_scope`).
        error: Option<String>,
    },
    /// Step-up authorization was refused: too many attempts.
    #[error("{0}")]
    RetryLimit(String),
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
    /// Bad configuration (e.g. an unreadable private key).
    #[error("configuration: {0}")]
    Config(String),
}
