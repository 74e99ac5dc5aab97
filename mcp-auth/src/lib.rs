//! OAuth 2.1 authorization for MCP's Streamable HTTP transport
//! (`mcp-transport-http`), per the MCP authorization specification
//! (2026-07-28, with 2025-11-25 and 2025-03-26 back-compat).
//!
//! A separate crate so that clients of unprotected servers pay nothing for it:
//! [`OAuthProvider`] implements the transport's [`AuthProvider`] hook.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_auth::{LoopbackRedirect, OAuthProvider, FileStore};
//! use mcp_transport_http::HttpTransport;
//!
//! let url = "https://mcp.example.com/mcp";
//! let ui = LoopbackRedirect::bind(0, |u| eprintln!("Open this URL to authorize: {u}")).await?;
//! let auth = OAuthProvider::builder(url)
//!     .interaction(ui)
//!     .store(FileStore::new("/home/me/.config/mcp/tokens.json"))
//!     .build()?;
//! let transport = HttpTransport::builder(url).auth(auth).build()?;
//! # let _ = transport; Ok(()) }
//! ```
//!
//! What it does, on the transport's 401 (and 403):
//!
//! - **Discovery**: protected resource metadata (RFC 9728) from the
//!   challenge's `resource_metadata`, else the path-inserted, then the root
//!   well-known URL; refused when it names another resource; then
//!   authorization server metadata (RFC 8414, OpenID Connect Discovery) in
//!   the spec's order, with its `issuer` checked. Without protected resource
//!   metadata (2025-03-26 servers): the server origin's own metadata, else
//!   `/authorize`, `/token`, `/register` there.
//! - **Registration**, in the spec's priority: pre-registered credentials,
//!   a Client ID Metadata Document URL, dynamic registration (RFC 7591, with
//!   `application_type`).
//! - **Authorization code + PKCE S256** (refused when the server does not
//!   list S256), `state` and RFC 9207 `iss` checked, RFC 8707 `resource` in
//!   the authorization and token requests, token endpoint auth
//!   `client_secret_basic`, `client_secret_post`, `none` or
//!   `private_key_jwt` (ES256); scopes from the challenge, else the
//!   metadata's `scopes_supported`, else omitted; `offline_access` only when
//!   advertised.
//! - **Tokens**: refreshed before expiry and once on a 401; step-up on a 403
//!   `insufficient_scope` with the union of scopes and a retry limit; any
//!   other 403 fails the request at once ([`AuthError::is_forbidden`]:
//!   the token is valid, so authorizing again cannot help);
//!   `client_credentials`, SEP-990 identity assertions and SEP-1933
//!   workload identity (the RFC 7523 JWT-bearer grant with a platform
//!   token from an [`AssertionSource`], e.g. a [`WorkloadToken`] file) for
//!   machine clients; a [`TokenStore`] ([`MemoryStore`] by default,
//!   [`FileStore`] for CLIs).
//! - **DPoP** (RFC 9449, SEP-1932), opt-in with
//!   [`OAuthProviderBuilder::dpop`]: a fresh ES256 proof at the token
//!   endpoint and on every MCP request (`ath` binds it to the token), the
//!   `DPoP` authorization scheme for DPoP-bound tokens, and one retry with
//!   the server's nonce on `use_dpop_nonce`, at the authorization server
//!   and at the MCP server (nonces kept per server).
//! - **Authorization server binding** (SEP-2352): dynamic registrations
//!   are kept per issuer; when a refused token leads to protected resource
//!   metadata naming another authorization server, the client registers
//!   there instead of reusing the old registration, and pre-registered
//!   credentials are refused at a server they were not used with.
//! - **Safety**: https for every authorization endpoint except loopback;
//!   an [`SsrfPolicy`] checked on each URL and on every DNS answer (so on
//!   every redirect); tokens and secrets never logged (`Debug` redacts).
//!
//! **Errors**: when the provider cannot authorize a request, the request
//! fails as the transport's `Unauthorized`, and the [`AuthError`] saying
//! why is in the error chain of the call that failed (through
//! `mcp_client::ClientError`, the `TransportError` and its
//! `HttpError::Auth`): [`AuthError::find`] digs it out, and its predicates
//! ([`is_user_action_needed`](AuthError::is_user_action_needed),
//! [`is_invalid_grant`](AuthError::is_invalid_grant),
//! [`is_retryable`](AuthError::is_retryable),
//! [`is_forbidden`](AuthError::is_forbidden)) say what to do next.
//!
//! [`AuthProvider`]: mcp_transport_http::AuthProvider

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod challenge;
mod crypto;
mod discovery;
mod dpop;
mod error;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
mod interaction;
mod jwt_bearer;
mod net;
mod provider;
mod store;
mod util;

pub use challenge::BearerChallenge;
pub use crypto::{CLIENT_ASSERTION_LIFETIME_SECS, Es256Key};
pub use discovery::{AuthServerMetadata, ProtectedResourceMetadata};
pub use dpop::{MAX_DPOP_NONCE_LEN, MAX_DPOP_NONCE_ORIGINS};
pub use error::{AuthError, AuthErrorKind};
pub use interaction::{DEFAULT_CALLBACK_TIMEOUT, FollowRedirect, Interaction, LoopbackRedirect};
pub use jwt_bearer::{AssertionSource, MAX_ASSERTION_LEN, WorkloadToken};
pub use net::{DEFAULT_HTTP_TIMEOUT, MAX_REDIRECTS, MAX_RESPONSE_BODY, SsrfPolicy};
pub use provider::{
    DEFAULT_MAX_STEP_UPS, IdentityAssertion, MAX_REAUTHORIZATIONS, OAuthProvider,
    OAuthProviderBuilder, REAUTHORIZE_WINDOW, REFRESH_MARGIN, STEP_UP_WINDOW,
};
pub use store::{ClientCredentials, FileStore, MemoryStore, StoredAuth, TokenSet, TokenStore};
