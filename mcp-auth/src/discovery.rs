//! Discovery: protected resource metadata (RFC 9728), authorization server
//! metadata (RFC 8414 / OpenID Connect Discovery), and the 2025-03-26
//! fallbacks.

use http::{StatusCode, Uri};
use serde::Deserialize;

use crate::challenge::BearerChallenge;
use crate::error::{AuthError, AuthErrorKind};
use crate::net::{HttpClient, checked_url};
use crate::util::{canonical_resource, origin, parse_url, path_no_slash};

/// Protected resource metadata (RFC 9728 §2), the fields the flow uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier.
    pub resource: String,
    /// Issuer identifiers of the authorization servers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2), the fields the flow uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct AuthServerMetadata {
    /// The issuer identifier.
    #[serde(default)]
    pub issuer: String,
    /// The authorization endpoint.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    #[serde(default)]
    pub token_endpoint: Option<String>,
    /// The dynamic client registration endpoint (RFC 7591).
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes the server supports.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types; RFC 8414 default `authorization_code`, `implicit`.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; absent means no PKCE support.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Token endpoint client authentication methods; RFC 8414 default
    /// `client_secret_basic`.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents support.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: `iss` is always in authorization responses.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// RFC 9449 §5.1: the DPoP proof algorithms the server accepts; absent
    /// when it does not advertise DPoP.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthServerMetadata {
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// The candidate protected resource metadata URLs, in the spec's order: the
/// challenge's `resource_metadata`, then the path-inserted well-known URL,
/// then the root one.
pub(crate) fn prm_urls(server: &Uri, challenge: Option<&BearerChallenge>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(u) = challenge.and_then(|c| c.resource_metadata.clone()) {
        out.push(u);
    }
    let o = origin(server);
    let path = path_no_slash(server);
    if !path.is_empty() {
        out.push(format!("{o}/.well-known/oauth-protected-resource{path}"));
    }
    out.push(format!("{o}/.well-known/oauth-protected-resource"));
    out.dedup();
    out
}

/// The candidate authorization server metadata URLs for an issuer, in the
/// spec's order.
pub(crate) fn as_metadata_urls(issuer: &Uri) -> Vec<String> {
    let o = origin(issuer);
    let path = path_no_slash(issuer);
    if path.is_empty() {
        vec![
            format!("{o}/.well-known/oauth-authorization-server"),
            format!("{o}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{o}/.well-known/oauth-authorization-server{path}"),
            format!("{o}/.well-known/openid-configuration{path}"),
            format!("{o}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether protected resource metadata naming `advertised` may be used for
/// the MCP server at `server`: same origin, and the advertised path is the
/// server's path or a parent of it on a segment boundary.
pub(crate) fn resource_matches(advertised: &str, server: &Uri) -> bool {
    let Some(adv) = parse_url(advertised) else {
        return false;
    };
    if adv.query().is_some() || advertised.contains('#') {
        return false;
    }
    if origin(&adv) != origin(server) {
        return false;
    }
    let ap = path_no_slash(&adv);
    let sp = path_no_slash(server);
    ap.is_empty()
        || sp == ap
        || sp
            .strip_prefix(ap)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// What discovery found out about where to authorize.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The `resource` parameter to send.
    pub(crate) resource: String,
    /// The PRM's `scopes_supported`.
    pub(crate) prm_scopes: Option<Vec<String>>,
    /// The PRM URL used (None for 2025-03-26 servers).
    pub(crate) prm_url: Option<String>,
    /// The authorization server.
    pub(crate) meta: AuthServerMetadata,
    /// Whether the server metadata was validated against an issuer (false
    /// for the 2025-03-26 paths; then there is no issuer to check `iss`
    /// against).
    pub(crate) issuer_validated: bool,
    /// 2025-03-26 default endpoints: no metadata at all.
    pub(crate) fallback_endpoints: bool,
}

async fn fetch_json<T: serde::de::DeserializeOwned>(
    http: &HttpClient,
    url: &str,
) -> Result<Option<T>, AuthError> {
    let uri = checked_url(url, http.policy())?;
    let resp = http.get(&uri).await?;
    if resp.status == StatusCode::OK {
        let v = serde_json::from_slice(&resp.body).map_err(|e| {
            AuthError::new(
                AuthErrorKind::InvalidMetadata,
                format!("{url} answered with metadata of the wrong shape; the server's operator must fix it"),
            )
            .with_source(e)
        })?;
        return Ok(Some(v));
    }
    tracing::debug!(%url, status = %resp.status, "metadata not found here");
    Ok(None)
}

/// The protected resource metadata, trying each candidate URL; `Ok(None)`
/// when none has any (a 2025-03-26 server).
pub(crate) async fn fetch_prm(
    http: &HttpClient,
    server: &Uri,
    challenge: Option<&BearerChallenge>,
) -> Result<Option<(String, ProtectedResourceMetadata)>, AuthError> {
    let mut last_err = None;
    for url in prm_urls(server, challenge) {
        match fetch_json::<ProtectedResourceMetadata>(http, &url).await {
            Ok(Some(prm)) => return Ok(Some((url, prm))),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(%url, error = %mcp_proto::error::chain(&e), "protected resource metadata");
                last_err = Some(e);
            }
        }
    }
    match last_err {
        // A refused URL is an answer in itself: do not fall back silently
        // past an SSRF refusal of the only candidates.
        Some(e) if e.kind() == AuthErrorKind::InvalidUrl => Err(e),
        _ => Ok(None),
    }
}

/// Authorization server metadata for `issuer`, validated: the document's
/// `issuer` must be identical to the one the URL was built from.
pub(crate) async fn fetch_as_metadata(
    http: &HttpClient,
    issuer: &str,
) -> Result<AuthServerMetadata, AuthError> {
    let iss = checked_url(issuer, http.policy())?;
    let mut tried = Vec::new();
    for url in as_metadata_urls(&iss) {
        if let Some(meta) = fetch_json::<AuthServerMetadata>(http, &url).await? {
            if meta.issuer != issuer {
                return Err(AuthError::new(
                    AuthErrorKind::InvalidMetadata,
                    format!(
                        "{url} names issuer {:?}, not {issuer:?}; refusing the metadata (RFC 8414 §3.3)",
                        meta.issuer
                    ),
                ));
            }
            return Ok(meta);
        }
        tried.push(url);
    }
    Err(AuthError::new(
        AuthErrorKind::Discovery,
        format!(
            "no authorization server metadata for {issuer} (tried {})",
            tried.join(", ")
        ),
    ))
}

/// Full discovery for the MCP server at `server`.
pub(crate) async fn discover(
    http: &HttpClient,
    server: &Uri,
    challenge: Option<&BearerChallenge>,
) -> Result<Discovered, AuthError> {
    if let Some((prm_url, prm)) = fetch_prm(http, server, challenge).await? {
        if !resource_matches(&prm.resource, server) {
            return Err(AuthError::new(
                AuthErrorKind::InvalidMetadata,
                format!(
                    "the protected resource metadata is for {}, not for the MCP server {}; refusing to authorize (RFC 9728 §3.3)",
                    prm.resource,
                    canonical_resource(server)
                ),
            ));
        }
        // The first authorization server with usable metadata.
        let mut found = Err(AuthError::new(
            AuthErrorKind::InvalidMetadata,
            format!("{prm_url} lists no authorization_servers"),
        ));
        for issuer in &prm.authorization_servers {
            found = fetch_as_metadata(http, issuer).await;
            if found.is_ok() {
                break;
            }
        }
        let meta = found?;
        return Ok(Discovered {
            resource: prm.resource.clone(),
            prm_scopes: prm.scopes_supported,
            prm_url: Some(prm_url),
            meta,
            issuer_validated: true,
            fallback_endpoints: false,
        });
    }
    legacy(http, server).await
}

/// 2025-03-26: the authorization server is the MCP server's origin; its
/// metadata at the root well-known URL, else `/authorize`, `/token`,
/// `/register` there.
async fn legacy(http: &HttpClient, server: &Uri) -> Result<Discovered, AuthError> {
    let o = origin(server);
    let resource = canonical_resource(server);
    let url = format!("{o}/.well-known/oauth-authorization-server");
    if let Some(meta) = fetch_json::<AuthServerMetadata>(http, &url).await? {
        return Ok(Discovered {
            resource,
            prm_scopes: None,
            prm_url: None,
            meta,
            issuer_validated: false,
            fallback_endpoints: false,
        });
    }
    Ok(Discovered {
        resource,
        prm_scopes: None,
        prm_url: None,
        meta: AuthServerMetadata {
            issuer: o.clone(),
            authorization_endpoint: Some(format!("{o}/authorize")),
            token_endpoint: Some(format!("{o}/token")),
            registration_endpoint: Some(format!("{o}/register")),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            ..AuthServerMetadata::default()
        },
        issuer_validated: false,
        fallback_endpoints: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        parse_url(s).unwrap()
    }

    #[test]
    fn prm_order_header_then_path_then_root() {
        let c = BearerChallenge {
            resource_metadata: Some("https://x.example/custom.json".into()),
            ..Default::default()
        };
        assert_eq!(
            prm_urls(&u("https://x.example/public/mcp"), Some(&c)),
            vec![
                "https://x.example/custom.json",
                "https://x.example/.well-known/oauth-protected-resource/public/mcp",
                "https://x.example/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            prm_urls(&u("https://x.example/"), None),
            vec!["https://x.example/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn as_metadata_order_with_and_without_path() {
        assert_eq!(
            as_metadata_urls(&u("https://auth.example/tenant1")),
            vec![
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            as_metadata_urls(&u("https://auth.example")),
            vec![
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_match_rules() {
        let s = u("https://mcp.example/api/mcp");
        assert!(resource_matches("https://mcp.example/api/mcp", &s));
        assert!(resource_matches("https://MCP.example/api/mcp/", &s));
        assert!(resource_matches("https://mcp.example/api", &s));
        assert!(resource_matches("https://mcp.example", &s));
        assert!(!resource_matches("https://mcp.example/ap", &s));
        assert!(!resource_matches("https://mcp.example/api/mcp/other", &s));
        assert!(!resource_matches("https://evil.example/api/mcp", &s));
        assert!(!resource_matches("http://mcp.example/api/mcp", &s));
        assert!(!resource_matches("https://mcp.example:8443/api/mcp", &s));
        assert!(!resource_matches("not a url", &s));
        assert!(!resource_matches("https://mcp.example/api/mcp#frag", &s));
    }
}
