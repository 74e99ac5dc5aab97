//! Token endpoint requests: refresh, client authentication, and parsing
//! the token response and OAuth error bodies.

use http::{HeaderName, HeaderValue, Uri, header};

use super::Inner;
use super::builder::Grant;
use crate::crypto::{Es256Key, now_secs};
use crate::discovery::Discovered;
use crate::error::{AuthError, AuthErrorKind};
use crate::interaction::Interaction;
use crate::store::{ClientCredentials, TokenSet};
use crate::util::{b64_std, form, pct};

const ASSERTION_TYPE_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

impl Inner {
    pub(super) async fn refresh(&self) -> Result<(), AuthError> {
        let Some(old) = self.lock().tokens.clone() else {
            return Err(AuthError::new(
                AuthErrorKind::Refresh,
                "no tokens to refresh; authorize first",
            ));
        };
        let Some(rt) = old.refresh_token.clone() else {
            return Err(AuthError::new(
                AuthErrorKind::Refresh,
                "the authorization server issued no refresh token; authorize again",
            ));
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
            return Err(AuthError::new(
                AuthErrorKind::Refresh,
                format!(
                    "the tokens were issued by {iss}, but the server now names {}; authorize anew there",
                    disc.meta.issuer
                ),
            ));
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
                if e.kind() == AuthErrorKind::Token {
                    return Err(e.into_kind(AuthErrorKind::Refresh));
                }
                Err(e)
            }
        }
    }

    /// A token endpoint request with client authentication (none for
    /// `None`) and, when the server takes them, a DPoP proof; one retry
    /// with the server's nonce on `use_dpop_nonce` (RFC 9449 §8).
    pub(super) async fn token_request(
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
            return Err(AuthError::refused(
                AuthErrorKind::Token,
                "the token request",
                url,
                resp.status,
                &resp.body,
            ));
        }
        let jkt = if dpop { self.dpop_jkt() } else { None };
        parse_token_response(url, &resp.body, jkt)
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
                    .map_err(|e| {
                        AuthError::new(
                            AuthErrorKind::Config,
                            "the client credentials cannot be sent in a Basic header",
                        )
                        .with_source(e)
                    })?;
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

/// A token response. `dpop_jkt`: the thumbprint of the key whose proof
/// the request carried; a `token_type: DPoP` answer is bound to it, and is
/// refused when the request carried none.
fn parse_token_response(
    url: &Uri,
    body: &[u8],
    dpop_jkt: Option<&str>,
) -> Result<TokenSet, AuthError> {
    let unusable = |why: &str| {
        AuthError::new(
            AuthErrorKind::Token,
            format!("the token response from {url} {why}"),
        )
    };
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| unusable("is not JSON").with_source(e))?;
    let access_token = v
        .get("access_token")
        .and_then(|x| x.as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| unusable("has no access_token"))?;
    let token_type = v.get("token_type").and_then(|x| x.as_str());
    let bound = match token_type {
        Some(tt) if tt.eq_ignore_ascii_case("dpop") => match dpop_jkt {
            Some(jkt) => Some(jkt.to_owned()),
            None => {
                return Err(unusable(
                    "has token_type DPoP, but the request carried no DPoP proof (configure .dpop(key))",
                ));
            }
        },
        None => None,
        Some(tt) if tt.eq_ignore_ascii_case("bearer") => None,
        Some(tt) => {
            return Err(unusable(&format!(
                "has an unsupported token_type {tt:?} (Bearer{})",
                if dpop_jkt.is_some() { " or DPoP" } else { "" }
            )));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Uri {
        Uri::from_static("https://as.example/token")
    }

    #[test]
    fn token_response_parsing() {
        let t = parse_token_response(
            &url(),
            br#"{"access_token":"a","token_type":"bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}"#,
            None,
        )
        .unwrap();
        assert_eq!(t.access_token, "a");
        assert_eq!(t.refresh_token.as_deref(), Some("r"));
        assert!(t.expires_within(3700) && !t.expires_within(3500));
        assert_eq!(t.dpop_jkt, None);
        assert!(parse_token_response(&url(), br#"{"token_type":"Bearer"}"#, None).is_err());
        assert!(parse_token_response(&url(), b"nope", None).is_err());
        // DPoP: only when the request carried a proof; bound to its key.
        let dpop = br#"{"access_token":"a","token_type":"DPoP"}"#;
        assert!(parse_token_response(&url(), dpop, None).is_err());
        let t = parse_token_response(&url(), dpop, Some("jkt")).unwrap();
        assert_eq!(t.dpop_jkt.as_deref(), Some("jkt"));
        // A proof sent but a bearer token issued: a bearer token.
        let t = parse_token_response(
            &url(),
            br#"{"access_token":"a","token_type":"Bearer"}"#,
            Some("jkt"),
        );
        assert_eq!(t.unwrap().dpop_jkt, None);
        assert!(
            parse_token_response(
                &url(),
                br#"{"access_token":"a","token_type":"MAC"}"#,
                Some("j")
            )
            .is_err()
        );
    }
}
