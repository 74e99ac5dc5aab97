//! The flow: discovery, scope selection, then the configured grant
//! (authorization code with PKCE, client credentials, identity assertion).

use std::sync::Arc;

use http::Uri;

use super::Inner;
use super::builder::{Grant, IdentityAssertion};
use crate::browser::check_authorization_url;
use crate::challenge::BearerChallenge;
use crate::crypto::{Pkce, random_token};
use crate::discovery::{Discovered, discover};
use crate::error::{AuthError, AuthErrorKind};
use crate::interaction::Interaction;
use crate::jwt_bearer::GRANT_JWT_BEARER;
use crate::net::checked_url;
use crate::store::TokenSet;
use crate::util::{form, parse_query};

const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

impl Inner {
    /// Discovery (cached), registration, then the configured grant.
    pub(super) async fn full_flow(
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

    pub(super) async fn discovered(
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
            // The challenge's scopes are the server's: a set keeps the
            // union linear in how many it sent.
            let mut have: std::collections::HashSet<String> = u.iter().cloned().collect();
            for s in from_challenge {
                if have.insert(s.clone()) {
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

    pub(super) fn endpoint(&self, url: Option<&String>, what: &str) -> Result<Uri, AuthError> {
        let url = url.ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::Unsupported,
                format!("the authorization server metadata has no {what}"),
            )
        })?;
        checked_url(url, self.http.policy())
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
                return Err(AuthError::new(
                    AuthErrorKind::Unsupported,
                    format!(
                        "{} does not list PKCE S256 in code_challenge_methods_supported; refusing to authorize without it",
                        meta.issuer
                    ),
                ));
            }
        }
        let auth_endpoint = meta.authorization_endpoint.as_ref().ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::Unsupported,
                "the authorization server metadata has no authorization_endpoint",
            )
        })?;
        // The user's browser goes there, not us: the SSRF policy does not
        // apply, the authorization URL rules do (http(s) only, https off
        // loopback, URL characters only). Checked before registering, and
        // the full URL again before anyone shows or opens it.
        check_authorization_url(auth_endpoint)?;
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
        check_authorization_url(&url)?;
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
            AuthError::new(
                AuthErrorKind::Config,
                "client_credentials needs client credentials",
            )
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
            AuthError::new(
                AuthErrorKind::Config,
                "identity assertion needs client credentials",
            )
        })?;
        let scope = scopes.join(" ");
        // 1. RFC 8693 token exchange at the identity provider: ID token -> ID-JAG.
        let idp = checked_url(&a.idp_token_endpoint, self.http.policy())?;
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
            return Err(AuthError::refused(
                AuthErrorKind::Token,
                "the token exchange",
                &idp,
                resp.status,
                &resp.body,
            ));
        }
        let jag = resp
            .json()
            .and_then(|v| v.get("access_token")?.as_str().map(str::to_owned))
            .ok_or_else(|| {
                AuthError::new(
                    AuthErrorKind::Token,
                    format!("the token exchange at {idp} returned no access_token"),
                )
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
                return Err(AuthError::new(
                    AuthErrorKind::InvalidAuthorizationResponse,
                    format!(
                        "the authorization response's iss {iss:?} is not the authorization server {:?} (mix-up attack?); discarding it",
                        disc.meta.issuer
                    ),
                ));
            }
            None if disc.meta.authorization_response_iss_parameter_supported => {
                return Err(AuthError::new(
                    AuthErrorKind::InvalidAuthorizationResponse,
                    "the authorization server promises an iss parameter but the response has none; discarding it",
                ));
            }
            _ => {}
        }
    }
    if get("state") != Some(state) {
        return Err(AuthError::new(
            AuthErrorKind::InvalidAuthorizationResponse,
            "the authorization response's state does not match the request's; discarding it (CSRF?)",
        ));
    }
    if let Some(err) = get("error") {
        let description = get("error_description");
        let hint = if err == "access_denied" {
            "; authorize again and approve the request"
        } else {
            ""
        };
        return Err(AuthError::new(
            AuthErrorKind::AuthorizationDenied,
            format!(
                "the authorization server refused the authorization: {err}{}{hint}",
                description.map(|d| format!(": {d}")).unwrap_or_default()
            ),
        )
        .with_oauth(err, description));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::InvalidAuthorizationResponse,
                "the authorization callback has no code",
            )
        })
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
}
