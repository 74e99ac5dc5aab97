//! [`OAuthProvider`]: the [`AuthProvider`] that runs the OAuth flows.

mod sender_constrained;
mod workload;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use mcp_transport_http::{AuthProvider, BoxFuture, Unauthorized};

use crate::challenge::{BearerChallenge, split_scopes};
use crate::crypto::{Es256Key, Pkce, now_secs, random_token};
use crate::discovery::{Discovered, discover};
use crate::dpop::Dpop;
use crate::error::AuthError;
use crate::interaction::Interaction;
use crate::jwt_bearer::{AssertionSource, GRANT_JWT_BEARER};
use crate::net::{
    DEFAULT_HTTP_TIMEOUT, HttpClient, SsrfPolicy, check_url, checked_url, is_loopback_host,
};
use crate::store::{ClientCredentials, MemoryStore, StoredAuth, TokenSet, TokenStore};
use crate::util::{b64_std, canonical_resource, form, parse_query, parse_url, pct};

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

const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ASSERTION_TYPE_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Enterprise-managed authorization (SEP-990, "cross-app access"): an ID
/// token from the enterprise identity provider is exchanged there for an
/// ID-JAG (RFC 8693), which the MCP authorization server takes as a JWT
/// bearer grant (RFC 7523).
#[derive(Clone)]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// The user's ID token from the identity provider.
    pub id_token: String,
    /// The client id at the identity provider.
    pub idp_client_id: String,
    /// The client secret at the identity provider, if any.
    pub idp_client_secret: Option<String>,
}

impl fmt::Debug for IdentityAssertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityAssertion")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("id_token", &"<redacted>")
            .field("idp_client_id", &self.idp_client_id)
            .finish_non_exhaustive()
    }
}

/// How tokens are obtained.
enum Grant {
    /// Authorization code with PKCE, through the user-interaction hook.
    AuthorizationCode(Arc<dyn Interaction>),
    /// `client_credentials` (the client acts on its own behalf).
    ClientCredentials,
    /// SEP-990 token exchange + JWT bearer grant.
    IdentityAssertion(IdentityAssertion),
    /// SEP-1933 workload identity: the JWT bearer grant with the
    /// workload's own JWT.
    JwtBearer(Arc<dyn AssertionSource>),
}

/// Builds an [`OAuthProvider`]. Start with [`OAuthProvider::builder`].
#[must_use = "call .build()"]
pub struct OAuthProviderBuilder {
    server: String,
    grant: Option<Grant>,
    client: Option<ClientCredentials>,
    client_metadata_url: Option<String>,
    client_name: String,
    private_key: Option<Es256Key>,
    dpop: Option<Es256Key>,
    store: Option<Arc<dyn TokenStore>>,
    policy: Option<SsrfPolicy>,
    timeout: Duration,
    offline_access: bool,
    max_step_ups: usize,
    scopes: Option<Vec<String>>,
}

impl fmt::Debug for OAuthProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthProviderBuilder")
            .field("server", &self.server)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl OAuthProviderBuilder {
    /// Authorization code + PKCE through this user-interaction hook (the
    /// default grant; one of this, [`client_credentials`](Self::client_credentials)
    /// or [`identity_assertion`](Self::identity_assertion) is required).
    pub fn interaction(mut self, interaction: impl Interaction) -> Self {
        self.grant = Some(Grant::AuthorizationCode(Arc::new(interaction)));
        self
    }

    /// Use the `client_credentials` grant (machine-to-machine). Needs
    /// [`client`](Self::client) with a secret or a
    /// [`private_key_jwt`](Self::private_key_jwt) key.
    pub fn client_credentials(mut self) -> Self {
        self.grant = Some(Grant::ClientCredentials);
        self
    }

    /// Use enterprise-managed authorization (SEP-990). Needs
    /// [`client`](Self::client) for the MCP authorization server.
    pub fn identity_assertion(mut self, assertion: IdentityAssertion) -> Self {
        self.grant = Some(Grant::IdentityAssertion(assertion));
        self
    }

    /// Use workload identity federation (SEP-1933): the RFC 7523
    /// JWT-bearer grant, with an assertion from `source` (a
    /// [`WorkloadToken`](crate::WorkloadToken) file or variable, or a
    /// closure) for every token request. [`client`](Self::client) is
    /// optional (client authentication as configured when given). A refused
    /// grant fails the request; no other grant is tried.
    pub fn jwt_bearer(mut self, source: impl AssertionSource) -> Self {
        self.grant = Some(Grant::JwtBearer(Arc::new(source)));
        self
    }

    /// Sender-constrained tokens with DPoP (RFC 9449, SEP-1932), signed by
    /// `key` (e.g. [`Es256Key::generate`]): when the authorization server
    /// lists ES256 in `dpop_signing_alg_values_supported`, token requests
    /// carry a proof, and a token it issues as `token_type: DPoP` is sent
    /// with the `DPoP` scheme and a fresh proof on every request; nonces
    /// the servers ask for (`use_dpop_nonce`) are remembered per server and
    /// the refused request retried with it. Other servers get bearer
    /// tokens as without it. Stored tokens bound to another key are
    /// dropped, so keep the key as long as the store when both persist.
    pub fn dpop(mut self, key: Es256Key) -> Self {
        self.dpop = Some(key);
        self
    }

    /// Pre-registered client credentials (first in the spec's registration
    /// order).
    pub fn client(mut self, client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        self.client = Some(ClientCredentials {
            client_id: client_id.into(),
            client_secret,
            token_endpoint_auth_method: None,
        });
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as
    /// its `client_id` where the authorization server supports CIMD.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// `client_name` for dynamic registration (default `mcp-rs`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Authenticate to the token endpoint with `private_key_jwt` (RFC 7523,
    /// ES256) instead of a secret.
    pub fn private_key_jwt(mut self, key: Es256Key) -> Self {
        self.private_key = Some(key);
        self
    }

    /// Where tokens are kept (default: [`MemoryStore`]).
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// The SSRF policy of the OAuth HTTP requests. Default: loopback allowed
    /// only when the MCP server is on loopback, private addresses refused.
    pub fn ssrf_policy(mut self, policy: SsrfPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Timeout of each OAuth HTTP request (default 30 s).
    pub fn http_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Ask for `offline_access` (a refresh token) when the authorization
    /// server lists it in `scopes_supported` (default `true`).
    pub fn offline_access(mut self, yes: bool) -> Self {
        self.offline_access = yes;
        self
    }

    /// Step-up authorizations allowed within [`STEP_UP_WINDOW`] (default
    /// [`DEFAULT_MAX_STEP_UPS`]).
    pub fn max_step_ups(mut self, n: usize) -> Self {
        self.max_step_ups = n;
        self
    }

    /// Scopes to request instead of the challenge's / metadata's.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The provider.
    pub fn build(self) -> Result<OAuthProvider, AuthError> {
        let server = parse_url(&self.server).ok_or_else(|| AuthError::RefusedUrl {
            url: self.server.clone(),
            reason: "the MCP server URL must be an absolute http(s) URL".into(),
        })?;
        let policy = self.policy.unwrap_or(SsrfPolicy {
            allow_loopback: server.host().is_some_and(is_loopback_host),
            allow_private: false,
        });
        let grant = self.grant.ok_or_else(|| {
            AuthError::Config(
                "choose a grant: .interaction(..), .client_credentials(), .identity_assertion(..) or .jwt_bearer(..)"
                    .into(),
            )
        })?;
        if let Some(u) = &self.client_metadata_url {
            let ok =
                parse_url(u).is_some_and(|p| p.scheme_str() == Some("https") && p.path().len() > 1);
            if !ok {
                return Err(AuthError::Config(format!(
                    "the client metadata document URL {u:?} must be https with a path"
                )));
            }
        }
        match &grant {
            Grant::ClientCredentials | Grant::IdentityAssertion(_) if self.client.is_none() => {
                return Err(AuthError::Config(
                    "client_credentials and identity assertion need .client(id, secret)".into(),
                ));
            }
            Grant::ClientCredentials
                if self.private_key.is_none()
                    && self
                        .client
                        .as_ref()
                        .is_some_and(|c| c.client_secret.is_none()) =>
            {
                return Err(AuthError::Config(
                    "client_credentials needs a client secret or .private_key_jwt(..)".into(),
                ));
            }
            _ => {}
        }
        let http = HttpClient::new(policy, self.timeout)?;
        Ok(OAuthProvider {
            inner: Arc::new(Inner {
                key: canonical_resource(&server),
                server,
                http,
                grant,
                client: self.client,
                client_metadata_url: self.client_metadata_url,
                client_name: self.client_name,
                private_key: self.private_key,
                dpop: self.dpop.map(Dpop::new),
                store: self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
                offline_access: self.offline_access,
                max_step_ups: self.max_step_ups,
                scopes: self.scopes,
                state: Mutex::new(State::default()),
                flow: tokio::sync::Mutex::new(()),
            }),
        })
    }
}

/// OAuth 2.1 for one MCP server, plugged into the HTTP transport with
/// `HttpTransport::builder(url).auth(provider)`.
///
/// On a 401 it discovers the authorization server, registers (pre-registered
/// credentials, then a Client ID Metadata Document, then dynamic
/// registration), obtains a token and has the transport retry. It refreshes
/// before expiry and once on a 401, and re-authorizes with the union of
/// scopes on a 403 `insufficient_scope` (step-up) within a retry limit. Any
/// other 403 is final: the request fails as `Unauthorized` without a new
/// authorization, and [`last_error`](Self::last_error) says why
/// ([`AuthError::Forbidden`]). Cloning shares the state.
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
    last_error: Option<String>,
    /// Bumped on every new token, so a waiter can tell another task
    /// already replaced the token it failed with.
    generation: u64,
}

impl OAuthProvider {
    /// A builder for the MCP server at `server_url` (the protected resource).
    pub fn builder(server_url: impl Into<String>) -> OAuthProviderBuilder {
        OAuthProviderBuilder {
            server: server_url.into(),
            grant: None,
            client: None,
            client_metadata_url: None,
            client_name: "mcp-rs".into(),
            private_key: None,
            dpop: None,
            store: None,
            policy: None,
            timeout: DEFAULT_HTTP_TIMEOUT,
            offline_access: true,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            scopes: None,
        }
    }

    /// Why the last authorization attempt failed, if it did.
    pub fn last_error(&self) -> Option<String> {
        self.inner.lock().last_error.clone()
    }

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
            Err(e) => tracing::warn!(error = %e, "could not load stored tokens"),
        }
    }

    fn set_tokens(&self, tokens: TokenSet, issuer: Option<String>) {
        let stored = {
            let mut s = self.lock();
            s.tokens = Some(tokens.clone());
            s.issuer = issuer.clone();
            s.refreshed_on_401 = false;
            s.generation += 1;
            s.last_error = None;
            StoredAuth {
                tokens: Some(tokens),
                issuer,
                client: None,
                clients: s.registered.clone(),
            }
        };
        if let Err(e) = self.store.save(&self.key, &stored) {
            tracing::warn!(error = %e, "could not save tokens");
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
                tracing::info!(error = %e, "proactive token refresh failed");
            }
        }
        self.lock().tokens.clone()
    }

    /// 401: refresh once, then authorize anew. 403 with an
    /// `insufficient_scope` challenge: step-up. Any other 403: the token is
    /// fine but not allowed; fail at once ([`AuthError::Forbidden`]).
    async fn on_unauthorized(&self, refusal: Unauthorized) -> bool {
        self.load_once();
        if let Some(retry) = self.nonce_retry(&refusal) {
            return retry;
        }
        if refusal.retries > 0 {
            // One new credential per request: the server refused the one
            // just obtained.
            return false;
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
            let e = AuthError::Forbidden {
                error: challenge.and_then(|c| c.error),
            };
            tracing::warn!(error = %e, "request forbidden");
            self.lock().last_error = Some(e.to_string());
            return false;
        }
        let generation = self.lock().generation;
        let _g = self.flow.lock().await;
        if self.lock().generation != generation {
            // Another request already obtained a new token: retry with it.
            return true;
        }
        let result = self.handle(challenge).await;
        match result {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "authorization failed");
                self.lock().last_error = Some(e.to_string());
                false
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
                Err(e) => tracing::info!(error = %e, "refresh failed; authorizing again"),
            }
        }
        {
            let mut s = self.lock();
            s.tokens = None;
            let now = Instant::now();
            s.reauthorizations
                .retain(|t| now.duration_since(*t) < REAUTHORIZE_WINDOW);
            if s.reauthorizations.len() >= MAX_REAUTHORIZATIONS {
                return Err(AuthError::RetryLimit(format!(
                    "the server rejected {} fresh tokens within {:?}; giving up",
                    s.reauthorizations.len(),
                    REAUTHORIZE_WINDOW
                )));
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
                return Err(AuthError::RetryLimit(format!(
                    "the server still answers insufficient_scope after {} step-up authorizations; giving up (scopes {:?})",
                    s.step_ups.len(),
                    wanted
                )));
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
                return Err(AuthError::RetryLimit(format!(
                    "the server answers insufficient_scope for scopes {wanted:?} the token already has; re-authorizing cannot help"
                )));
            }
            s.step_ups.push(now);
        }
        self.full_flow(challenge, true).await
    }

    /// Discovery (cached), registration, then the configured grant.
    async fn full_flow(
        &self,
        challenge: Option<BearerChallenge>,
        step_up: bool,
    ) -> Result<(), AuthError> {
        let disc = self.discovered(challenge.as_ref()).await?;
        let scopes = self.select_scopes(&disc, challenge.as_ref(), step_up);
        let issuer = disc.issuer_validated.then(|| disc.meta.issuer.clone());
        let tokens = match &self.grant {
            Grant::AuthorizationCode(ui) => {
                self.authorization_code(&disc, ui.as_ref(), &scopes).await?
            }
            Grant::ClientCredentials => self.client_credentials(&disc, &scopes).await?,
            Grant::IdentityAssertion(a) => self.identity_assertion(&disc, a, &scopes).await?,
            Grant::JwtBearer(source) => self.jwt_bearer(&disc, source.as_ref(), &scopes).await?,
        };
        self.lock().requested = scopes;
        self.set_tokens(tokens, issuer);
        Ok(())
    }

    async fn discovered(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<Arc<Discovered>, AuthError> {
        let cached = self.lock().discovered.clone();
        if let Some(d) = cached {
            let same = match challenge.and_then(|c| c.resource_metadata.as_deref()) {
                Some(url) => d.prm_url.as_deref() == Some(url),
                None => true,
            };
            if same {
                return Ok(d);
            }
        }
        let d = Arc::new(discover(&self.http, &self.server, challenge).await?);
        tracing::debug!(issuer = %d.meta.issuer, resource = %d.resource, "discovered the authorization server");
        self.lock().discovered = Some(d.clone());
        Ok(d)
    }

    /// The spec's scope selection: configured scopes; else (step-up) the
    /// union of the previous request and the challenge; else the
    /// challenge's; else the PRM's `scopes_supported`; else none.
    /// `offline_access` is added when wanted and advertised.
    fn select_scopes(
        &self,
        disc: &Discovered,
        challenge: Option<&BearerChallenge>,
        step_up: bool,
    ) -> Vec<String> {
        let from_challenge = challenge.map(BearerChallenge::scopes).unwrap_or_default();
        let mut scopes: Vec<String> = if let Some(s) = &self.scopes {
            s.clone()
        } else if step_up {
            let mut u = self.lock().requested.clone();
            u.retain(|s| s != "offline_access");
            for s in from_challenge {
                if !u.contains(&s) {
                    u.push(s);
                }
            }
            u
        } else if !from_challenge.is_empty() {
            from_challenge
        } else {
            disc.prm_scopes.clone().unwrap_or_default()
        };
        if self.offline_access
            && matches!(self.grant, Grant::AuthorizationCode(_))
            && !scopes.is_empty()
            && disc.meta.supports_scope("offline_access")
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
        scopes
    }

    fn endpoint(&self, url: Option<&String>, what: &str) -> Result<Uri, AuthError> {
        let url = url.ok_or_else(|| {
            AuthError::Unsupported(format!("the authorization server metadata has no {what}"))
        })?;
        checked_url(url, &self.http.policy())
    }

    /// Registration in the spec's order: pre-registered, CIMD, stored
    /// dynamic registration, dynamic registration.
    async fn client_for(
        &self,
        disc: &Discovered,
        redirect_uri: &str,
    ) -> Result<ClientCredentials, AuthError> {
        if let Some(c) = &self.client {
            let mut s = self.lock();
            match &s.preregistered_at {
                Some(iss) if *iss != disc.meta.issuer => {
                    return Err(AuthError::Registration(format!(
                        "the pre-registered client {:?} belongs to {iss}, but the server now names the authorization server {}; configure credentials registered there",
                        c.client_id, disc.meta.issuer
                    )));
                }
                Some(_) => {}
                None => s.preregistered_at = Some(disc.meta.issuer.clone()),
            }
            return Ok(c.clone());
        }
        if disc.meta.client_id_metadata_document_supported
            && let Some(url) = &self.client_metadata_url
        {
            return Ok(ClientCredentials {
                client_id: url.clone(),
                client_secret: None,
                token_endpoint_auth_method: Some("none".into()),
            });
        }
        // A registration is only good at the server that issued it.
        if let Some(c) = self.lock().registered.get(&disc.meta.issuer) {
            return Ok(c.clone());
        }
        let Some(reg) = disc.meta.registration_endpoint.as_ref() else {
            return Err(AuthError::Registration(format!(
                "{} supports neither Client ID Metadata Documents{} nor dynamic registration; configure pre-registered client credentials",
                disc.meta.issuer,
                if self.client_metadata_url.is_none() {
                    " (none configured)"
                } else {
                    ""
                }
            )));
        };
        let url = checked_url(reg, &self.http.policy())?;
        let native = parse_url(redirect_uri)
            .and_then(|u| u.host().map(is_loopback_host))
            .unwrap_or(true);
        let mut grant_types = vec!["authorization_code"];
        if self.offline_access {
            grant_types.push("refresh_token");
        }
        let body = serde_json::json!({
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": if native { "native" } else { "web" },
        });
        let resp = self.http.post_json(&url, &body).await?;
        if !resp.status.is_success() {
            return Err(AuthError::Registration(format!(
                "{url} answered {}: {}",
                resp.status,
                oauth_error(&resp.body)
            )));
        }
        let v = resp.json().unwrap_or_default();
        let client_id = v
            .get("client_id")
            .and_then(|x| x.as_str())
            .ok_or_else(|| AuthError::Registration(format!("{url} returned no client_id")))?;
        let c = ClientCredentials {
            client_id: client_id.to_owned(),
            client_secret: v
                .get("client_secret")
                .and_then(|x| x.as_str())
                .map(str::to_owned),
            token_endpoint_auth_method: v
                .get("token_endpoint_auth_method")
                .and_then(|x| x.as_str())
                .map(str::to_owned),
        };
        tracing::debug!(client = ?c, issuer = %disc.meta.issuer, "registered dynamically");
        self.lock()
            .registered
            .insert(disc.meta.issuer.clone(), c.clone());
        Ok(c)
    }

    async fn authorization_code(
        &self,
        disc: &Discovered,
        ui: &dyn Interaction,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let meta = &disc.meta;
        if !disc.fallback_endpoints {
            let s256 = meta
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == "S256"));
            if !s256 {
                return Err(AuthError::Unsupported(format!(
                    "{} does not list PKCE S256 in code_challenge_methods_supported; refusing to authorize without it",
                    meta.issuer
                )));
            }
        }
        let auth_endpoint = meta.authorization_endpoint.as_ref().ok_or_else(|| {
            AuthError::Unsupported(
                "the authorization server metadata has no authorization_endpoint".into(),
            )
        })?;
        // The user's browser goes there, not us: only the scheme rule applies.
        let auth_url = parse_url(auth_endpoint).ok_or_else(|| AuthError::RefusedUrl {
            url: auth_endpoint.clone(),
            reason: "the authorization endpoint must be an absolute http(s) URL".into(),
        })?;
        check_url(
            &auth_url,
            &SsrfPolicy {
                allow_loopback: true,
                allow_private: true,
            },
        )?;
        let token_url = self.endpoint(meta.token_endpoint.as_ref(), "token_endpoint")?;
        let redirect_uri = ui.redirect_uri();
        let client = self.client_for(disc, &redirect_uri).await?;
        let pkce = Pkce::new()?;
        let state = random_token(24)?;
        let scope = scopes.join(" ");
        let mut q: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", &client.client_id),
            ("redirect_uri", &redirect_uri),
            ("state", &state),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("resource", &disc.resource),
        ];
        if !scope.is_empty() {
            q.push(("scope", &scope));
        }
        let sep = if auth_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let url = format!("{auth_endpoint}{sep}{}", form(&q));
        let callback = ui.authorize(url).await?;
        let code = check_callback(&callback, &state, disc)?;
        let mut body = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri.clone()),
            ("code_verifier", pkce.verifier.clone()),
            ("resource", disc.resource.clone()),
        ];
        let mut tokens = self
            .token_request(&token_url, &mut body, Some(&client), disc)
            .await?;
        if tokens.scope.is_none() && !scope.is_empty() {
            tokens.scope = Some(scope);
        }
        Ok(tokens)
    }

    async fn client_credentials(
        &self,
        disc: &Discovered,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let token_url = self.endpoint(disc.meta.token_endpoint.as_ref(), "token_endpoint")?;
        let client = self.client.clone().ok_or_else(|| {
            AuthError::Config("client_credentials needs client credentials".into())
        })?;
        let scope = scopes.join(" ");
        let mut body = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("resource", disc.resource.clone()),
        ];
        if !scope.is_empty() {
            body.push(("scope", scope.clone()));
        }
        let mut t = self
            .token_request(&token_url, &mut body, Some(&client), disc)
            .await?;
        if t.scope.is_none() && !scope.is_empty() {
            t.scope = Some(scope);
        }
        Ok(t)
    }

    async fn identity_assertion(
        &self,
        disc: &Discovered,
        a: &IdentityAssertion,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let client = self.client.clone().ok_or_else(|| {
            AuthError::Config("identity assertion needs client credentials".into())
        })?;
        let scope = scopes.join(" ");
        // 1. RFC 8693 token exchange at the identity provider: ID token -> ID-JAG.
        let idp = checked_url(&a.idp_token_endpoint, &self.http.policy())?;
        let mut pairs: Vec<(&str, &str)> = vec![
            ("grant_type", GRANT_TOKEN_EXCHANGE),
            ("requested_token_type", TOKEN_TYPE_ID_JAG),
            ("subject_token", &a.id_token),
            ("subject_token_type", TOKEN_TYPE_ID_TOKEN),
            ("audience", &disc.meta.issuer),
            ("resource", &disc.resource),
            ("client_id", &a.idp_client_id),
        ];
        if let Some(s) = &a.idp_client_secret {
            pairs.push(("client_secret", s));
        }
        if !scope.is_empty() {
            pairs.push(("scope", &scope));
        }
        let resp = self.http.post_form(&idp, form(&pairs), &[]).await?;
        if !resp.status.is_success() {
            return Err(AuthError::Token(format!(
                "token exchange at {idp} answered {}: {}",
                resp.status,
                oauth_error(&resp.body)
            )));
        }
        let jag = resp
            .json()
            .and_then(|v| v.get("access_token")?.as_str().map(str::to_owned))
            .ok_or_else(|| {
                AuthError::Token(format!("token exchange at {idp} returned no access_token"))
            })?;
        // 2. RFC 7523 JWT bearer grant at the MCP authorization server.
        let token_url = self.endpoint(disc.meta.token_endpoint.as_ref(), "token_endpoint")?;
        let mut body = vec![
            ("grant_type", GRANT_JWT_BEARER.to_owned()),
            ("assertion", jag),
            ("resource", disc.resource.clone()),
        ];
        if !scope.is_empty() {
            body.push(("scope", scope));
        }
        self.token_request(&token_url, &mut body, Some(&client), disc)
            .await
    }

    async fn refresh(&self) -> Result<(), AuthError> {
        let Some(old) = self.lock().tokens.clone() else {
            return Err(AuthError::Token("no tokens to refresh".into()));
        };
        let Some(rt) = old.refresh_token.clone() else {
            return Err(AuthError::Token("no refresh token".into()));
        };
        let disc = self.discovered(None).await?;
        // Credentials are bound to their authorization server: never send a
        // refresh token to another one (the metadata may have changed).
        let stored_issuer = self.lock().issuer.clone();
        if let Some(iss) = stored_issuer
            && disc.issuer_validated
            && iss != disc.meta.issuer
        {
            self.lock().tokens = None;
            return Err(AuthError::Token(format!(
                "the tokens were issued by {iss}, but the server now names {}; authorizing anew",
                disc.meta.issuer
            )));
        }
        let token_url = self.endpoint(disc.meta.token_endpoint.as_ref(), "token_endpoint")?;
        let client = match (&self.client, &self.grant) {
            (Some(c), _) => Some(c.clone()),
            // The JWT bearer grant may run without client authentication.
            (None, Grant::JwtBearer(_)) => None,
            (None, _) => {
                let redirect = match &self.grant {
                    Grant::AuthorizationCode(ui) => ui.redirect_uri(),
                    _ => String::new(),
                };
                Some(self.client_for(&disc, &redirect).await?)
            }
        };
        let mut body = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", rt.clone()),
            ("resource", disc.resource.clone()),
        ];
        match self
            .token_request(&token_url, &mut body, client.as_ref(), &disc)
            .await
        {
            Ok(mut t) => {
                if t.refresh_token.is_none() {
                    t.refresh_token = Some(rt);
                }
                if t.scope.is_none() {
                    t.scope = old.scope;
                }
                let issuer = disc.issuer_validated.then(|| disc.meta.issuer.clone());
                self.set_tokens(t, issuer);
                Ok(())
            }
            Err(e) => {
                // The refresh token is spent or revoked.
                if let Some(t) = self.lock().tokens.as_mut() {
                    t.refresh_token = None;
                }
                Err(e)
            }
        }
    }

    /// A token endpoint request with client authentication (none for
    /// `None`) and, when the server takes them, a DPoP proof; one retry
    /// with the server's nonce on `use_dpop_nonce` (RFC 9449 §8).
    async fn token_request(
        &self,
        url: &Uri,
        body: &mut Vec<(&'static str, String)>,
        client: Option<&ClientCredentials>,
        disc: &Discovered,
    ) -> Result<TokenSet, AuthError> {
        let mut headers: Vec<(HeaderName, HeaderValue)> = Vec::new();
        if let Some(client) = client {
            self.add_client_auth(url, body, &mut headers, client, disc)?;
        }
        let pairs: Vec<(&str, &str)> = body.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let dpop = self.uses_dpop(disc);
        let mut nonce_retried = false;
        let resp = loop {
            if dpop {
                self.add_token_proof(url, &mut headers)?;
            }
            let resp = self.http.post_form(url, form(&pairs), &headers).await?;
            if dpop && !nonce_retried && self.token_nonce_retry(url, &resp) {
                nonce_retried = true;
                continue;
            }
            break resp;
        };
        if !resp.status.is_success() {
            return Err(AuthError::Token(format!(
                "{url} answered {}: {}",
                resp.status,
                oauth_error(&resp.body)
            )));
        }
        let jkt = if dpop { self.dpop_jkt() } else { None };
        parse_token_response(&resp.body, jkt).map_err(|e| AuthError::Token(format!("{url}: {e}")))
    }

    /// Client authentication of a token request: a `private_key_jwt`
    /// assertion, a secret (Basic or in the body), or only the client id.
    fn add_client_auth(
        &self,
        url: &Uri,
        body: &mut Vec<(&'static str, String)>,
        headers: &mut Vec<(HeaderName, HeaderValue)>,
        client: &ClientCredentials,
        disc: &Discovered,
    ) -> Result<(), AuthError> {
        match self.auth_method(client, disc) {
            AuthMethod::PrivateKeyJwt(key) => {
                // RFC 7523 §3: aud identifies the authorization server; its
                // issuer identifier (the token endpoint when there is none).
                let aud = if disc.meta.issuer.is_empty() {
                    url.to_string()
                } else {
                    disc.meta.issuer.clone()
                };
                body.push(("client_id", client.client_id.clone()));
                body.push(("client_assertion_type", ASSERTION_TYPE_JWT.to_owned()));
                body.push((
                    "client_assertion",
                    key.client_assertion(&client.client_id, &aud)?,
                ));
            }
            AuthMethod::Basic(secret) => {
                // RFC 6749 §2.3.1: form-encode both, then base64.
                let raw = format!("{}:{}", pct(&client.client_id), pct(secret));
                let mut v = HeaderValue::from_str(&format!("Basic {}", b64_std(raw.as_bytes())))
                    .map_err(|_| AuthError::Config("unusable client credentials".into()))?;
                v.set_sensitive(true);
                headers.push((header::AUTHORIZATION, v));
            }
            AuthMethod::Post(secret) => {
                body.push(("client_id", client.client_id.clone()));
                body.push(("client_secret", secret.to_owned()));
            }
            AuthMethod::None => body.push(("client_id", client.client_id.clone())),
        }
        Ok(())
    }

    fn auth_method<'a>(
        &'a self,
        client: &'a ClientCredentials,
        disc: &Discovered,
    ) -> AuthMethod<'a> {
        let supported = disc.meta.token_endpoint_auth_methods_supported.as_deref();
        let supports = |m: &str| supported.is_some_and(|s| s.iter().any(|x| x == m));
        if let Some(key) = &self.private_key
            && (supported.is_none() || supports("private_key_jwt"))
        {
            return AuthMethod::PrivateKeyJwt(key);
        }
        let Some(secret) = client.client_secret.as_deref() else {
            return AuthMethod::None;
        };
        match client.token_endpoint_auth_method.as_deref() {
            Some("client_secret_basic") => return AuthMethod::Basic(secret),
            Some("client_secret_post") => return AuthMethod::Post(secret),
            Some("none") => return AuthMethod::None,
            _ => {}
        }
        match supported {
            // RFC 8414: the default is client_secret_basic.
            None => AuthMethod::Basic(secret),
            Some(_) if supports("client_secret_basic") => AuthMethod::Basic(secret),
            Some(_) if supports("client_secret_post") => AuthMethod::Post(secret),
            Some(_) if supports("none") => AuthMethod::None,
            Some(_) => AuthMethod::Basic(secret),
        }
    }
}

enum AuthMethod<'a> {
    PrivateKeyJwt(&'a Es256Key),
    Basic(&'a str),
    Post(&'a str),
    None,
}

/// Validates the authorization response (state, RFC 9207 `iss`, `error`)
/// and returns the code.
fn check_callback(callback: &str, state: &str, disc: &Discovered) -> Result<String, AuthError> {
    let query = callback
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or(q))
        .unwrap_or("");
    let params = parse_query(query);
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    // RFC 9207 §2.4, before anything else in the response is acted on.
    if disc.issuer_validated {
        match get("iss") {
            Some(iss) if iss != disc.meta.issuer => {
                return Err(AuthError::Authorization(format!(
                    "the response's iss {iss:?} is not the authorization server {:?} (mix-up attack?); discarding it",
                    disc.meta.issuer
                )));
            }
            None if disc.meta.authorization_response_iss_parameter_supported => {
                return Err(AuthError::Authorization(
                    "the authorization server promises an iss parameter but the response has none; discarding it".into(),
                ));
            }
            _ => {}
        }
    }
    if get("state") != Some(state) {
        return Err(AuthError::Authorization(
            "the response's state does not match the request's; discarding it (CSRF?)".into(),
        ));
    }
    if let Some(err) = get("error") {
        return Err(AuthError::Authorization(format!(
            "the authorization server answered {err}{}",
            get("error_description")
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| AuthError::Authorization("the callback has no code".into()))
}

/// A token response. `dpop_jkt`: the thumbprint of the key whose proof
/// the request carried; a `token_type: DPoP` answer is bound to it, and is
/// refused when the request carried none.
fn parse_token_response(body: &[u8], dpop_jkt: Option<&str>) -> Result<TokenSet, String> {
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("the token response is not JSON: {e}"))?;
    let access_token = v
        .get("access_token")
        .and_then(|x| x.as_str())
        .filter(|s| !s.is_empty())
        .ok_or("the token response has no access_token")?;
    let token_type = v.get("token_type").and_then(|x| x.as_str());
    let bound = match token_type {
        Some(tt) if tt.eq_ignore_ascii_case("dpop") => match dpop_jkt {
            Some(jkt) => Some(jkt.to_owned()),
            None => {
                return Err(
                    "token_type DPoP, but the request carried no DPoP proof (configure .dpop(key))"
                        .into(),
                );
            }
        },
        None => None,
        Some(tt) if tt.eq_ignore_ascii_case("bearer") => None,
        Some(tt) => {
            return Err(format!(
                "unsupported token_type {tt:?} (Bearer{})",
                if dpop_jkt.is_some() { " or DPoP" } else { "" }
            ));
        }
    };
    let expires_at = v
        .get("expires_in")
        .and_then(|x| x.as_u64().or_else(|| x.as_str()?.parse().ok()))
        .map(|s| now_secs().saturating_add(s));
    Ok(TokenSet {
        access_token: access_token.to_owned(),
        refresh_token: v
            .get("refresh_token")
            .and_then(|x| x.as_str())
            .map(str::to_owned),
        expires_at,
        scope: v.get("scope").and_then(|x| x.as_str()).map(str::to_owned),
        dpop_jkt: bound,
    })
}

/// `error: description` from an OAuth error body, or a short excerpt.
fn oauth_error(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body)
        && let Some(e) = v.get("error").and_then(|x| x.as_str())
    {
        return match v.get("error_description").and_then(|x| x.as_str()) {
            Some(d) => format!("{e}: {d}"),
            None => e.to_owned(),
        };
    }
    let s = String::from_utf8_lossy(body);
    s.chars().take(200).collect()
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

    fn on_unauthorized(&self, refusal: Unauthorized) -> BoxFuture<'_, bool> {
        Box::pin(self.inner.on_unauthorized(refusal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::AuthServerMetadata;

    fn disc(iss_supported: bool) -> Discovered {
        Discovered {
            resource: "https://mcp.example/mcp".into(),
            prm_scopes: None,
            prm_url: None,
            meta: AuthServerMetadata {
                issuer: "https://as.example".into(),
                authorization_response_iss_parameter_supported: iss_supported,
                ..Default::default()
            },
            issuer_validated: true,
            fallback_endpoints: false,
        }
    }

    #[test]
    fn callback_checks_state_iss_and_error() {
        let d = disc(false);
        assert_eq!(
            check_callback("http://127.0.0.1:1/cb?code=c1&state=s", "s", &d).unwrap(),
            "c1"
        );
        assert!(check_callback("http://127.0.0.1:1/cb?code=c1&state=x", "s", &d).is_err());
        assert!(check_callback("http://127.0.0.1:1/cb?code=c1", "s", &d).is_err());
        let e = check_callback(
            "http://x/cb?code=c&state=s&iss=https%3A%2F%2Fevil.example",
            "s",
            &d,
        )
        .unwrap_err();
        assert!(e.to_string().contains("mix-up"), "{e}");
        // No normalization: a trailing slash is a mismatch.
        assert!(
            check_callback(
                "http://x/cb?code=c&state=s&iss=https%3A%2F%2Fas.example%2F",
                "s",
                &d
            )
            .is_err()
        );
        assert_eq!(
            check_callback(
                "http://x/cb?code=c&state=s&iss=https%3A%2F%2Fas.example",
                "s",
                &d
            )
            .unwrap(),
            "c"
        );
        let e = check_callback("http://x/cb?code=c&state=s", "s", &disc(true)).unwrap_err();
        assert!(e.to_string().contains("iss"), "{e}");
        let e = check_callback(
            "http://x/cb?error=access_denied&error_description=no&state=s",
            "s",
            &d,
        )
        .unwrap_err();
        assert!(e.to_string().contains("access_denied: no"), "{e}");
        // A mismatched iss hides the error (not acted on or displayed).
        let e = check_callback(
            "http://x/cb?error=evil_msg&state=s&iss=https%3A%2F%2Fevil",
            "s",
            &d,
        )
        .unwrap_err();
        assert!(!e.to_string().contains("evil_msg"), "{e}");
    }

    #[test]
    fn token_response_parsing() {
        let t = parse_token_response(
            br#"{"access_token":"a","token_type":"bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}"#,
            None,
        )
        .unwrap();
        assert_eq!(t.access_token, "a");
        assert_eq!(t.refresh_token.as_deref(), Some("r"));
        assert!(t.expires_within(3700) && !t.expires_within(3500));
        assert_eq!(t.dpop_jkt, None);
        assert!(parse_token_response(br#"{"token_type":"Bearer"}"#, None).is_err());
        assert!(parse_token_response(b"nope", None).is_err());
        // DPoP: only when the request carried a proof; bound to its key.
        let dpop = br#"{"access_token":"a","token_type":"DPoP"}"#;
        assert!(parse_token_response(dpop, None).is_err());
        let t = parse_token_response(dpop, Some("jkt")).unwrap();
        assert_eq!(t.dpop_jkt.as_deref(), Some("jkt"));
        // A proof sent but a bearer token issued: a bearer token.
        let t = parse_token_response(
            br#"{"access_token":"a","token_type":"Bearer"}"#,
            Some("jkt"),
        );
        assert_eq!(t.unwrap().dpop_jkt, None);
        assert!(
            parse_token_response(br#"{"access_token":"a","token_type":"MAC"}"#, Some("j")).is_err()
        );
    }

    #[test]
    fn oauth_errors_are_summarized() {
        assert_eq!(
            oauth_error(br#"{"error":"invalid_grant","error_description":"expired"}"#),
            "invalid_grant: expired"
        );
        assert_eq!(oauth_error(b"plain"), "plain");
    }
}
