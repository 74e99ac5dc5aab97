//! [`OAuthProviderBuilder`] and the ways tokens are obtained ([`Grant`]).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{DEFAULT_MAX_STEP_UPS, Inner, OAuthProvider, State};
use crate::crypto::Es256Key;
use crate::dpop::Dpop;
use crate::error::{AuthError, AuthErrorKind};
use crate::interaction::Interaction;
use crate::jwt_bearer::AssertionSource;
use crate::net::{DEFAULT_HTTP_TIMEOUT, HttpClient};
use crate::ssrf::{Host, SsrfPolicy, parse_host};
use crate::store::{ClientCredentials, MemoryStore, TokenStore};
use crate::util::{canonical_resource, parse_url};

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
pub(super) enum Grant {
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

impl OAuthProvider {
    /// A builder for the MCP server at `server_url` (the protected
    /// resource), the URL given to the transport: `https://…`, or a local
    /// socket's (`unix:///run/app/mcp.sock#/mcp`, see
    /// [`mcp_transport_http::Endpoint`]). A socket server is identified
    /// by the URL its requests carry (`http://localhost/mcp`: RFC 8707's
    /// `resource`, and what its protected resource metadata must name),
    /// its metadata is fetched through the socket, and its tokens are
    /// stored under the socket URL, apart from every other server's.
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

    /// The SSRF policy of the OAuth HTTP requests (default
    /// [`SsrfPolicy::new`]: public addresses only). Whatever the policy,
    /// the class of the MCP server's own address is allowed when its URL
    /// names it literally or as `localhost` (a server on loopback may
    /// have its authorization server there too; one on the company network
    /// may have it on that network). A server named by a DNS name that
    /// resolves to a private address needs the class allowed here: its
    /// answer could change between the check and the connection.
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

    /// Step-up authorizations allowed within
    /// [`STEP_UP_WINDOW`](super::STEP_UP_WINDOW) (default [`DEFAULT_MAX_STEP_UPS`]).
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
        // A server on a local socket (`unix:///path#/mcp`) is the URL its
        // requests carry (`http://localhost/mcp`), reached through the socket.
        let endpoint = mcp_transport_http::Endpoint::parse(&self.server).ok();
        let socket = endpoint.as_ref().and_then(|e| e.socket().cloned());
        let server = match (&socket, &endpoint) {
            (Some(_), Some(e)) => Some(e.url().clone()),
            _ => parse_url(&self.server),
        }
        .ok_or_else(|| {
            AuthError::invalid_url(
                &self.server,
                "the MCP server URL must be an absolute http(s) URL, or a local socket's (unix:///path.sock#/mcp)",
            )
        })?;
        let policy = self.policy.unwrap_or_default();
        let policy = match server.host().and_then(parse_host) {
            Some(Host::Localhost) => policy.allow_loopback(true),
            Some(Host::Ip(ip)) => {
                let class = policy.classify(ip);
                policy.allow_class(class)
            }
            Some(Host::Name) | None => policy,
        };
        let grant = self.grant.ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::Config,
                "choose a grant: .interaction(..), .client_credentials(), .identity_assertion(..) or .jwt_bearer(..)",
            )
        })?;
        if let Some(u) = &self.client_metadata_url {
            let ok =
                parse_url(u).is_some_and(|p| p.scheme_str() == Some("https") && p.path().len() > 1);
            if !ok {
                return Err(AuthError::new(
                    AuthErrorKind::Config,
                    format!("the client metadata document URL {u:?} must be https with a path"),
                ));
            }
        }
        match &grant {
            Grant::ClientCredentials | Grant::IdentityAssertion(_) if self.client.is_none() => {
                return Err(AuthError::new(
                    AuthErrorKind::Config,
                    "client_credentials and identity assertion need .client(id, secret)",
                ));
            }
            Grant::ClientCredentials
                if self.private_key.is_none()
                    && self
                        .client
                        .as_ref()
                        .is_some_and(|c| c.client_secret.is_none()) =>
            {
                return Err(AuthError::new(
                    AuthErrorKind::Config,
                    "client_credentials needs a client secret or .private_key_jwt(..)",
                ));
            }
            _ => {}
        }
        let mut http = HttpClient::new(policy, self.timeout)?;
        // Tokens are kept per server: for a socket server, per socket too
        // (every socket server calls itself `http://localhost/...`).
        let key = match (socket, endpoint) {
            (Some(socket), Some(e)) => {
                http = http.through(&server, socket);
                e.to_string()
            }
            _ => canonical_resource(&server),
        };
        Ok(OAuthProvider {
            inner: Arc::new(Inner {
                key,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FollowRedirect;

    fn policy_for(server: &str, policy: Option<SsrfPolicy>) -> SsrfPolicy {
        let ui = FollowRedirect::new("http://127.0.0.1:9/cb", SsrfPolicy::new()).unwrap();
        let mut b = OAuthProvider::builder(server).interaction(ui);
        if let Some(p) = policy {
            b = b.ssrf_policy(p);
        }
        b.build().unwrap().inner.http.policy().clone()
    }

    #[test]
    fn the_servers_own_address_class_is_exempt() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        let p = policy_for("https://mcp.example.com/mcp", None);
        assert!(!p.allows(ip("127.0.0.1")) && !p.allows(ip("10.0.0.1")));
        for local in [
            "http://localhost:3000/mcp",
            "http://127.0.0.1/mcp",
            "http://[::1]/mcp",
        ] {
            let p = policy_for(local, None);
            assert!(p.allows(ip("127.0.0.1")), "{local}");
            assert!(!p.allows(ip("10.0.0.1")), "{local}");
            assert!(!p.allows(ip("169.254.169.254")), "{local}");
        }
        let p = policy_for("https://10.1.2.3/mcp", None);
        assert!(p.allows(ip("10.9.9.9")) && p.allows(ip("fd00::1")));
        assert!(!p.allows(ip("127.0.0.1")) && !p.allows(ip("169.254.169.254")));
        // A name is not exempt: what it resolves to may change.
        let p = policy_for("https://mcp.corp.internal/mcp", None);
        assert!(!p.allows(ip("10.9.9.9")));
        // A policy of one's own keeps its allowances, plus the exemption.
        let p = policy_for(
            "http://127.0.0.1/mcp",
            Some(SsrfPolicy::new().allow_private(true)),
        );
        assert!(p.allows(ip("10.9.9.9")) && p.allows(ip("127.0.0.1")));
    }
}
