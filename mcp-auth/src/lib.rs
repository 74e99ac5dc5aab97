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
//! - **Safety**: see [below](#security).
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
//! # Security
//!
//! What the MCP security best practices ask of a client (the "Server-Side
//! Request Forgery" and "OAuth Authorization URL Validation" sections), and
//! what this crate does about each. Tokens and secrets are never logged
//! (`Debug` redacts them).
//!
//! **SSRF in discovery.** Every URL the flow fetches is named by the MCP
//! server or by metadata it points to (`resource_metadata`,
//! `authorization_servers`, the token, registration and identity-provider
//! endpoints, each redirect's `Location`). Each one:
//!
//! - must be `https`, except on loopback (`localhost`, `127.0.0.0/8`,
//!   `::1`), and have no userinfo;
//! - is refused when its host is a loopback, private (RFC 1918, CGNAT,
//!   unique-local `fc00::/7`, ...), link-local (`169.254/16`, where cloud
//!   metadata services answer; `fe80::/10`) or reserved address
//!   ([`AddressClass`]), in every spelling: `2852039166`, `0xa9fea9fe`,
//!   `0251.0376.0251.0376`, `169.254.43518` are `169.254.169.254` (parsed
//!   as the WHATWG URL standard and the C resolver parse them), and IPv4
//!   addresses inside IPv6 (`::ffff:a9fe:a9fe`, `::169.254.169.254`,
//!   NAT64 `64:ff9b::a9fe:a9fe`, 6to4 `2002:a9fe:a9fe::`) are classified as
//!   the IPv4 address;
//! - is checked again at every redirect hop (at most [`MAX_REDIRECTS`]),
//!   and only `GET`s follow redirects;
//! - is checked on the address connected to: names are resolved by a
//!   resolver that checks every answer and hands the connector only the
//!   allowed addresses, for every connection, so a name whose answer
//!   changes between a check and the connection (DNS rebinding) or
//!   resolves to an internal address is refused without a connection.
//!
//! The exceptions: the class of the MCP server's own address when its URL
//! names it literally or as `localhost` (a server on `127.0.0.1` may have
//! its authorization server on localhost, as in development and the
//! conformance suite; one at `10.1.2.3` may have it on that network), and
//! what the user allows with [`OAuthProviderBuilder::ssrf_policy`]
//! ([`SsrfPolicy::allow_private`] for an authorization server on the
//! company network). [`SsrfPolicy::classifier`] replaces the address
//! classifier (tests declare `127.0.0.2` private, so that a listener on it
//! stands for an internal service), [`SsrfPolicy::lookup`] the resolver.
//!
//! **Authorization URLs.** The URL the user is sent to is built on the
//! `authorization_endpoint` of metadata a malicious server can write. It is
//! checked ([`check_authorization_url`]) before the [`Interaction`] sees
//! it: `http(s)` only (`javascript:`, `data:`, `file:`, `vbscript:` and any
//! other scheme refused), `https` except on loopback, no userinfo, no
//! fragment, and only RFC 3986 URL characters, so no terminal control
//! sequence (OSC 52, CSI, C1 controls), whitespace, bidirectional-text
//! control or other non-ASCII character reaches a terminal through it.
//! [`open_browser`] opens one by executing the platform's opener
//! (`xdg-open`, `open`, `rundll32 url.dll,FileProtocolHandler`) directly,
//! with the URL as one argument: never through a shell. Error messages
//! show refused URLs with control characters escaped.
//!
//! [`AuthProvider`]: mcp_transport_http::AuthProvider

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod browser;
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
mod ssrf;
mod store;
mod util;

pub use browser::{MAX_AUTHORIZATION_URL_LEN, check_authorization_url, open_browser, open_with};
pub use challenge::BearerChallenge;
pub use crypto::{CLIENT_ASSERTION_LIFETIME_SECS, Es256Key};
pub use discovery::{AuthServerMetadata, ProtectedResourceMetadata};
pub use dpop::{MAX_DPOP_NONCE_LEN, MAX_DPOP_NONCE_ORIGINS};
pub use error::{AuthError, AuthErrorKind};
pub use interaction::{DEFAULT_CALLBACK_TIMEOUT, FollowRedirect, Interaction, LoopbackRedirect};
pub use jwt_bearer::{AssertionSource, MAX_ASSERTION_LEN, WorkloadToken};
pub use net::{DEFAULT_HTTP_TIMEOUT, MAX_REDIRECTS, MAX_RESPONSE_BODY};
pub use provider::{
    DEFAULT_MAX_STEP_UPS, IdentityAssertion, MAX_REAUTHORIZATIONS, OAuthProvider,
    OAuthProviderBuilder, REAUTHORIZE_WINDOW, REFRESH_MARGIN, STEP_UP_WINDOW,
};
pub use ssrf::{AddressClass, LookupFuture, SsrfPolicy, classify, embedded_ipv4};
pub use store::{ClientCredentials, FileStore, MemoryStore, StoredAuth, TokenSet, TokenStore};
