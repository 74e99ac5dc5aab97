//! The provider's DPoP side (RFC 9449, SEP-1932): proofs on MCP requests
//! and at the token endpoint, nonces, and the `use_dpop_nonce` retries.
//! The proofs themselves are [`crate::dpop`]'s.

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use mcp_transport_http::Unauthorized;

use super::Inner;
use crate::challenge::BearerChallenge;
use crate::discovery::Discovered;
use crate::dpop::{DPOP, USE_DPOP_NONCE, supported_by};
use crate::error::AuthError;
use crate::net::HttpResponse;
use crate::store::TokenSet;

impl Inner {
    /// The headers of one MCP request: `Authorization: DPoP <token>` and a
    /// fresh proof bound to the token (`ath`) for a DPoP-bound token, else
    /// `Authorization: Bearer <token>`; nothing without a token.
    pub(super) async fn request_headers(&self, method: &Method, url: &Uri) -> HeaderMap {
        let mut h = HeaderMap::new();
        let Some(tokens) = self.current_tokens().await else {
            return h;
        };
        let bound = tokens.dpop_jkt.is_some();
        if let (true, Some(dpop)) = (bound, &self.dpop) {
            match dpop.proof_header(method, url, Some(&tokens.access_token)) {
                Ok(proof) => {
                    h.insert(DPOP, proof);
                }
                Err(e) => {
                    tracing::warn!(error = %mcp_proto::error::chain(&e), "could not make a DPoP proof");
                    return h;
                }
            }
        }
        if let Some(v) = authorization(&tokens) {
            h.insert(header::AUTHORIZATION, v);
        }
        h
    }

    /// Keeps the `DPoP-Nonce` the MCP server hands out (on a 401 or on any
    /// answer, RFC 9449 §9).
    pub(super) fn on_response(&self, url: &Uri, _status: StatusCode, headers: &HeaderMap) {
        if let Some(dpop) = &self.dpop {
            dpop.remember_nonce(url, headers);
        }
    }

    /// A 401 `DPoP error="use_dpop_nonce"` from the MCP server: retry with
    /// the nonce it sent ([`on_response`](Self::on_response) kept it), once
    /// more per refusal, within the transport's
    /// [`MAX_AUTH_RETRIES`](mcp_transport_http::MAX_AUTH_RETRIES). `None`: not such a
    /// refusal.
    pub(super) fn nonce_retry(&self, refusal: &Unauthorized) -> Option<bool> {
        let dpop = self.dpop.as_ref()?;
        let www = refusal.www_authenticate.as_ref()?.to_str().ok()?;
        let challenge = BearerChallenge::parse_dpop(www)?;
        if challenge.error.as_deref() != Some(USE_DPOP_NONCE) {
            return None;
        }
        let has_nonce = dpop.nonce_for(&self.server).is_some();
        if !has_nonce {
            tracing::warn!("the MCP server asks for a DPoP nonce but sent no DPoP-Nonce header");
        }
        // The transport only asks while a retry is left (MAX_AUTH_RETRIES).
        Some(has_nonce)
    }

    /// Whether token requests to this authorization server carry proofs:
    /// a key is configured and the server lists ES256 in
    /// `dpop_signing_alg_values_supported`.
    pub(super) fn uses_dpop(&self, disc: &Discovered) -> bool {
        self.dpop.is_some() && supported_by(disc.meta.dpop_signing_alg_values_supported.as_deref())
    }

    /// Adds a fresh proof for a token request to `url` (RFC 9449 §5), with
    /// the authorization server's nonce when it gave one.
    pub(super) fn add_token_proof(
        &self,
        url: &Uri,
        headers: &mut Vec<(HeaderName, HeaderValue)>,
    ) -> Result<(), AuthError> {
        let Some(dpop) = &self.dpop else {
            return Ok(());
        };
        headers.retain(|(k, _)| k != DPOP);
        headers.push((DPOP, dpop.proof_header(&Method::POST, url, None)?));
        Ok(())
    }

    /// After a token response: keeps its `DPoP-Nonce`, and says whether it
    /// is the `use_dpop_nonce` error (RFC 9449 §8) with a new nonce to retry
    /// with.
    pub(super) fn token_nonce_retry(&self, url: &Uri, resp: &HttpResponse) -> bool {
        let Some(dpop) = &self.dpop else {
            return false;
        };
        let fresh = dpop.remember_nonce(url, &resp.headers);
        fresh
            && resp.status == StatusCode::BAD_REQUEST
            && resp
                .json()
                .and_then(|v| v.get("error")?.as_str().map(|e| e == USE_DPOP_NONCE))
                .unwrap_or(false)
    }

    /// The key's thumbprint, which a DPoP-bound token from this provider is
    /// bound to.
    pub(super) fn dpop_jkt(&self) -> Option<&str> {
        self.dpop.as_ref().map(|d| d.jkt())
    }
}

/// The `Authorization` value for these tokens (`DPoP` scheme for a bound
/// token, RFC 9449 §7.1; else `Bearer`).
pub(super) fn authorization(tokens: &TokenSet) -> Option<HeaderValue> {
    let scheme = if tokens.dpop_jkt.is_some() {
        "DPoP"
    } else {
        "Bearer"
    };
    let mut v = HeaderValue::from_str(&format!("{scheme} {}", tokens.access_token)).ok()?;
    v.set_sensitive(true);
    Some(v)
}
