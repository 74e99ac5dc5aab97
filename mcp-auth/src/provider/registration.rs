//! Which client identity to use: pre-registered credentials, a Client ID
//! Metadata Document, a stored dynamic registration, or a new one.

use super::Inner;
use crate::discovery::Discovered;
use crate::error::{AuthError, AuthErrorKind};
use crate::net::checked_url;
use crate::ssrf::is_loopback_host;
use crate::store::ClientCredentials;
use crate::util::parse_url;

impl Inner {
    /// Registration in the spec's order: pre-registered, CIMD, stored
    /// dynamic registration, dynamic registration.
    pub(super) async fn client_for(
        &self,
        disc: &Discovered,
        redirect_uri: &str,
    ) -> Result<ClientCredentials, AuthError> {
        if let Some(c) = &self.client {
            let mut s = self.lock();
            match &s.preregistered_at {
                Some(iss) if *iss != disc.meta.issuer => {
                    return Err(AuthError::new(
                        AuthErrorKind::Registration,
                        format!(
                            "the pre-registered client {:?} belongs to {iss}, but the server now names the authorization server {}; configure credentials registered there",
                            c.client_id, disc.meta.issuer
                        ),
                    ));
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
            return Err(AuthError::new(
                AuthErrorKind::Registration,
                format!(
                    "{} supports neither Client ID Metadata Documents{} nor dynamic registration; configure pre-registered client credentials",
                    disc.meta.issuer,
                    if self.client_metadata_url.is_none() {
                        " (none configured)"
                    } else {
                        ""
                    }
                ),
            ));
        };
        let url = checked_url(reg, self.http.policy())?;
        let native = parse_url(redirect_uri)
            .and_then(|u| u.host().map(|h| is_loopback_host(h, self.http.policy())))
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
            return Err(AuthError::refused(
                AuthErrorKind::Registration,
                "the client registration",
                &url,
                resp.status,
                &resp.body,
            ));
        }
        let v = resp.json().unwrap_or_default();
        let client_id = v.get("client_id").and_then(|x| x.as_str()).ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::Registration,
                format!("{url} returned no client_id"),
            )
        })?;
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
}
