//! [`OAuthProvider`]: the [`AuthProvider`] that runs the OAuth flows.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use mcp_transport_http::{AuthProvider, BoxError, BoxFuture, Unauthorized};

use crate::challenge::{BearerChallenge, split_scopes};
use crate::crypto::Es256Key;
use crate::discovery::Discovered;
use crate::dpop::Dpop;
use crate::error::{AuthError, AuthErrorKind};
use crate::net::HttpClient;
use crate::store::{ClientCredentials, StoredAuth, TokenSet, TokenStore};

mod builder;
mod grant;
mod registration;
mod sender_constrained;
mod token;
mod workload;

use self::builder::Grant;
pub use self::builder::{IdentityAssertion, OAuthProviderBuilder};

/// Refresh this long before the access token expires.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// Default for [`OAuthProviderBuilder::max_step_ups`]: step-up
/// authorizations allowed within [`STEP_UP_WINDOW`].
pub const DEFAULT_MAX_STEP_UPS: usize = 3;
/// The window step-up attempts are counted in.
pub const STEP_UP_WINDOW: Duration = Duration::from_secs(600);
/// New authorizations after a 401 allowed within [`REAUTHORIZE_WINDOW`]: a
/// server that rejects every fresh token must not make the user authorize
/// on every request.
pub const MAX_REAUTHORIZATIONS: usize = 3;
/// The window of [`MAX_REAUTHORIZATIONS`].
pub const REAUTHORIZE_WINDOW: Duration = Duration::from_secs(60);

/// OAuth 2.1 for one MCP server, plugged into the HTTP transport with
/// `HttpTransport::builder(url).auth(provider)`.
///
/// On a 401 it discovers the authorization server, registers (pre-registered
/// credentials, then a Client ID Metadata Document, then dynamic
/// registration), obtains a token and has the transport retry. It refreshes
/// before expiry and once on a 401, and re-authorizes with the union of
/// scopes on a 403 `insufficient_scope` (step-up) within a retry limit. Any
/// other 403 is final: the request fails as `Unauthorized` without a new
/// authorization ([`AuthError::is_forbidden`]). Cloning shares the state.
///
/// When it cannot authorize a request, the transport's error for it carries
/// the [`AuthError`] as its source: the caller of the call that failed
/// finds it with [`AuthError::find`].
#[derive(Clone)]
pub struct OAuthProvider {
    inner: Arc<Inner>,
}

impl fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server", &self.inner.key)
            .field("has_token", &self.inner.lock().tokens.is_some())
            .finish_non_exhaustive()
    }
}

struct Inner {
    server: Uri,
    key: String,
    http: HttpClient,
    grant: Grant,
    client: Option<ClientCredentials>,
    client_metadata_url: Option<String>,
    client_name: String,
    private_key: Option<Es256Key>,
    dpop: Option<Dpop>,
    store: Arc<dyn TokenStore>,
    offline_access: bool,
    max_step_ups: usize,
    scopes: Option<Vec<String>>,
    state: Mutex<State>,
    /// Serializes flows: one authorization at a time.
    flow: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    loaded: bool,
    tokens: Option<TokenSet>,
    discovered: Option<Arc<Discovered>>,
    /// Dynamic registrations by the issuer that made them (SEP-2352: only
    /// good there).
    registered: BTreeMap<String, ClientCredentials>,
    /// The issuer pre-registered credentials were first used with: they
    /// are specific to it (SEP-2352).
    preregistered_at: Option<String>,
    /// The issuer the tokens belong to (`None`: unknown, a 2025-03-26
    /// server).
    issuer: Option<String>,
    /// Scopes asked for in the last authorization.
    requested: Vec<String>,
    step_ups: Vec<Instant>,
    reauthorizations: Vec<Instant>,
    /// The current token came from a refresh after a 401: the next 401
    /// authorizes anew instead of refreshing again.
    refreshed_on_401: bool,
    /// Bumped on every new token, so a waiter can tell another task
    /// already replaced the token it failed with.
    generation: u64,
}

impl OAuthProvider {
    /// The current tokens (e.g. to show expiry); `Debug` redacts them.
    pub fn tokens(&self) -> Option<TokenSet> {
        self.inner.load_once();
        self.inner.lock().tokens.clone()
    }

    /// Runs the flow now instead of waiting for a 401 (e.g. a CLI `login`).
    pub async fn authorize(&self) -> Result<(), AuthError> {
        let _g = self.inner.flow.lock().await;
        self.inner.full_flow(None, false).await
    }

    /// Forgets the tokens, here and in the store.
    pub fn logout(&self) -> Result<(), AuthError> {
        let mut s = self.inner.lock();
        s.tokens = None;
        s.generation += 1;
        drop(s);
        self.inner.store.clear(&self.inner.key)
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn load_once(&self) {
        let mut s = self.lock();
        if s.loaded {
            return;
        }
        s.loaded = true;
        match self.store.load(&self.key) {
            Ok(Some(stored)) => {
                s.registered = stored.registrations();
                s.tokens = stored.tokens;
                s.issuer = stored.issuer;
                // A DPoP-bound token is useless without its key.
                let jkt = self.dpop.as_ref().map(|d| d.jkt().to_owned());
                if let Some(t) = &s.tokens
                    && t.dpop_jkt.is_some()
                    && t.dpop_jkt != jkt
                {
                    tracing::info!("dropping stored tokens bound to another DPoP key");
                    s.tokens = None;
                }
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %mcp_proto::error::chain(&e), "could not load stored tokens")
            }
        }
    }

    fn set_tokens(&self, tokens: TokenSet, issuer: Option<String>) {
        let stored = {
            let mut s = self.lock();
            s.tokens = Some(tokens.clone());
            s.issuer = issuer.clone();
            s.refreshed_on_401 = false;
            s.generation += 1;
            StoredAuth {
                tokens: Some(tokens),
                issuer,
                client: None,
                clients: s.registered.clone(),
            }
        };
        if let Err(e) = self.store.save(&self.key, &stored) {
            tracing::warn!(error = %mcp_proto::error::chain(&e), "could not save tokens");
        }
    }

    async fn header(&self) -> Option<HeaderValue> {
        sender_constrained::authorization(&self.current_tokens().await?)
    }

    /// The tokens to present, refreshed first when they are about to expire.
    async fn current_tokens(&self) -> Option<TokenSet> {
        self.load_once();
        let needs_refresh = {
            let s = self.lock();
            s.tokens.as_ref().is_some_and(|t| {
                t.refresh_token.is_some() && t.expires_within(REFRESH_MARGIN.as_secs())
            })
        };
        if needs_refresh {
            let _g = self.flow.lock().await;
            // Someone may have refreshed while we waited.
            let still = self.lock().tokens.as_ref().is_some_and(|t| {
                t.refresh_token.is_some() && t.expires_within(REFRESH_MARGIN.as_secs())
            });
            if still && let Err(e) = self.refresh().await {
                tracing::info!(error = %mcp_proto::error::chain(&e), "proactive token refresh failed");
            }
        }
        self.lock().tokens.clone()
    }

    /// 401: refresh once, then authorize anew. 403 with an
    /// `insufficient_scope` challenge: step-up. Any other 403: the token is
    /// fine but not allowed; fail at once ([`AuthError::is_forbidden`]).
    async fn on_unauthorized(&self, refusal: Unauthorized) -> Result<bool, AuthError> {
        self.load_once();
        if let Some(retry) = self.nonce_retry(&refusal) {
            return Ok(retry);
        }
        if refusal.retries > 0 {
            // One new credential per request: the server refused the one
            // just obtained.
            return Ok(false);
        }
        let challenge = refusal
            .www_authenticate
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .and_then(|h| BearerChallenge::parse(h).or_else(|| BearerChallenge::parse_dpop(h)));
        if refusal.is_forbidden()
            && !challenge
                .as_ref()
                .is_some_and(BearerChallenge::is_insufficient_scope)
        {
            let error = challenge.and_then(|c| c.error);
            let mut e = AuthError::new(
                AuthErrorKind::Forbidden,
                format!(
                    "the MCP server answered 403 Forbidden{}: the token is valid but not allowed to do this, and the server named no missing scope (no insufficient_scope challenge), so authorizing again cannot help; ask the server's operator for access",
                    error
                        .as_deref()
                        .map(|e| format!(" (error=\"{e}\")"))
                        .unwrap_or_default()
                ),
            );
            if let Some(error) = &error {
                e = e.with_oauth(error, None);
            }
            tracing::warn!(error = %mcp_proto::error::chain(&e), "request forbidden");
            return Err(e);
        }
        let generation = self.lock().generation;
        let _g = self.flow.lock().await;
        if self.lock().generation != generation {
            // Another request already obtained a new token: retry with it.
            return Ok(true);
        }
        match self.handle(challenge).await {
            Ok(()) => Ok(true),
            Err(e) => {
                tracing::warn!(error = %mcp_proto::error::chain(&e), "authorization failed");
                Err(e)
            }
        }
    }

    async fn handle(&self, challenge: Option<BearerChallenge>) -> Result<(), AuthError> {
        if challenge
            .as_ref()
            .is_some_and(BearerChallenge::is_insufficient_scope)
        {
            return self.step_up(challenge).await;
        }
        // 401: one refresh, then the full flow. A refused token may mean the
        // server moved to another authorization server (SEP-2352): read its
        // metadata again rather than trusting the cached discovery.
        let can_refresh = {
            let mut s = self.lock();
            if s.tokens.is_some() {
                s.discovered = None;
            }
            !s.refreshed_on_401 && s.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some())
        };
        if can_refresh {
            match self.refresh().await {
                Ok(()) => {
                    self.lock().refreshed_on_401 = true;
                    return Ok(());
                }
                Err(e) => {
                    tracing::info!(error = %mcp_proto::error::chain(&e), "refresh failed; authorizing again")
                }
            }
        }
        {
            let mut s = self.lock();
            s.tokens = None;
            let now = Instant::now();
            s.reauthorizations
                .retain(|t| now.duration_since(*t) < REAUTHORIZE_WINDOW);
            if s.reauthorizations.len() >= MAX_REAUTHORIZATIONS {
                return Err(AuthError::new(
                    AuthErrorKind::RetryLimit,
                    format!(
                        "the server rejected {} fresh tokens within {:?}; giving up",
                        s.reauthorizations.len(),
                        REAUTHORIZE_WINDOW
                    ),
                ));
            }
            s.reauthorizations.push(now);
        }
        self.full_flow(challenge, false).await
    }

    async fn step_up(&self, challenge: Option<BearerChallenge>) -> Result<(), AuthError> {
        let wanted = challenge
            .as_ref()
            .map(BearerChallenge::scopes)
            .unwrap_or_default();
        {
            let mut s = self.lock();
            let now = Instant::now();
            s.step_ups
                .retain(|t| now.duration_since(*t) < STEP_UP_WINDOW);
            if s.step_ups.len() >= self.max_step_ups {
                return Err(AuthError::new(
                    AuthErrorKind::RetryLimit,
                    format!(
                        "the server still answers insufficient_scope after {} step-up authorizations; giving up (scopes {:?})",
                        s.step_ups.len(),
                        wanted
                    ),
                ));
            }
            let granted = s
                .tokens
                .as_ref()
                .map(|t| split_scopes(t.scope.as_deref()))
                .unwrap_or_default();
            if !wanted.is_empty()
                && s.tokens.is_some()
                && wanted.iter().all(|w| granted.contains(w))
                && wanted.iter().all(|w| s.requested.contains(w))
            {
                return Err(AuthError::new(
                    AuthErrorKind::RetryLimit,
                    format!(
                        "the server answers insufficient_scope for scopes {wanted:?} the token already has; re-authorizing cannot help"
                    ),
                ));
            }
            s.step_ups.push(now);
        }
        self.full_flow(challenge, true).await
    }
}

impl AuthProvider for OAuthProvider {
    fn header(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        Box::pin(self.inner.header())
    }

    fn request_headers<'a>(&'a self, method: &'a Method, url: &'a Uri) -> BoxFuture<'a, HeaderMap> {
        Box::pin(self.inner.request_headers(method, url))
    }

    fn on_response(&self, url: &Uri, status: StatusCode, headers: &HeaderMap) {
        self.inner.on_response(url, status, headers)
    }

    fn on_unauthorized(&self, refusal: Unauthorized) -> BoxFuture<'_, Result<bool, BoxError>> {
        Box::pin(async move { Ok(self.inner.on_unauthorized(refusal).await?) })
    }
}
