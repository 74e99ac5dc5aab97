//! DPoP: sender-constrained tokens (RFC 9449; the MCP DPoP extension,
//! SEP-1932), sans-IO.
//!
//! A [`Dpop`] holds the client's key and the nonces the servers handed out.
//! It makes one fresh proof per HTTP request (a `dpop+jwt` signed with ES256
//! that names the method and URL, carries the public key, a unique `jti`,
//! `iat`, the server's nonce when it gave one, and on resource requests the
//! hash of the access token, `ath`), and reads `DPoP-Nonce` off answers.
//! The provider decides when to send proofs and when to retry.

use std::collections::HashMap;
use std::sync::Mutex;

use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};

use crate::crypto::{Es256Key, now_secs, random_token};
use crate::error::{AuthError, AuthErrorKind};
use crate::util::{b64_url, origin};

/// The `DPoP` request header (RFC 9449 §4.1).
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The `DPoP-Nonce` response header (RFC 9449 §8, §9).
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");
/// The `error` a server answers when a proof lacks its nonce (RFC 9449 §8, §9).
pub(crate) const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// The signing algorithm of the proofs.
pub(crate) const DPOP_ALG: &str = "ES256";

/// Longest `DPoP-Nonce` value kept; a longer one is ignored (RFC 9449 §8.1:
/// the nonce is an opaque short string; this bounds what a server can make
/// the client store and echo back on every request).
pub const MAX_DPOP_NONCE_LEN: usize = 1024;
/// Most servers (origins) whose nonces are remembered at once; past it the
/// table starts over (a client talks to one MCP server and one
/// authorization server, so this only bounds a misbehaving peer).
pub const MAX_DPOP_NONCE_ORIGINS: usize = 16;

/// A DPoP key and the nonces per server (keyed by origin).
pub(crate) struct Dpop {
    key: Es256Key,
    jkt: String,
    nonces: Mutex<HashMap<String, String>>,
}

impl Dpop {
    pub(crate) fn new(key: Es256Key) -> Self {
        Dpop {
            jkt: key.thumbprint(),
            key,
            nonces: Mutex::new(HashMap::new()),
        }
    }

    /// The key's RFC 7638 thumbprint: what a DPoP-bound token's `cnf.jkt`
    /// names.
    pub(crate) fn jkt(&self) -> &str {
        &self.jkt
    }

    fn nonces(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.nonces.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The nonce the server at `url`'s origin handed out last, if any.
    pub(crate) fn nonce_for(&self, url: &Uri) -> Option<String> {
        self.nonces().get(&origin(url)).cloned()
    }

    /// Remembers the `DPoP-Nonce` of an answer from `url`; `true` when the
    /// answer carried a usable one.
    pub(crate) fn remember_nonce(&self, url: &Uri, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|n| !n.is_empty() && n.len() <= MAX_DPOP_NONCE_LEN)
        else {
            return false;
        };
        let mut map = self.nonces();
        let key = origin(url);
        if map.len() >= MAX_DPOP_NONCE_ORIGINS && !map.contains_key(&key) {
            map.clear();
        }
        map.insert(key, nonce.to_owned());
        true
    }

    /// A fresh proof for one request: `method` and `url` (the `htu` drops
    /// the query and fragment), `ath` when an access token is presented,
    /// the origin's nonce when there is one.
    pub(crate) fn proof(
        &self,
        method: &Method,
        url: &Uri,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let header = serde_json::json!({
            "typ": "dpop+jwt",
            "alg": DPOP_ALG,
            "jwk": self.key.public_jwk(),
        });
        let mut claims = serde_json::json!({
            "jti": random_token(16)?,
            "htm": method.as_str(),
            "htu": htu(url),
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = ath(token).into();
        }
        if let Some(nonce) = self.nonce_for(url) {
            claims["nonce"] = nonce.into();
        }
        self.key.sign_with_header(&header, &claims).map_err(|e| {
            AuthError::new(AuthErrorKind::Dpop, "could not sign a DPoP proof").with_source(e)
        })
    }

    /// [`proof`](Self::proof) as a `DPoP` header value.
    pub(crate) fn proof_header(
        &self,
        method: &Method,
        url: &Uri,
        access_token: Option<&str>,
    ) -> Result<HeaderValue, AuthError> {
        let proof = self.proof(method, url, access_token)?;
        HeaderValue::from_str(&proof).map_err(|e| {
            AuthError::new(
                AuthErrorKind::Dpop,
                "the DPoP proof is not a valid header value",
            )
            .with_source(e)
        })
    }
}

/// RFC 9449 §4.2 `htu`: the target URI without query and fragment.
pub(crate) fn htu(url: &Uri) -> String {
    format!("{}{}", origin(url), url.path())
}

/// RFC 9449 §4.2 `ath`: base64url(SHA-256(ASCII access token)).
pub(crate) fn ath(access_token: &str) -> String {
    b64_url(ring::digest::digest(&ring::digest::SHA256, access_token.as_bytes()).as_ref())
}

/// Whether the algorithms an authorization server lists
/// (`dpop_signing_alg_values_supported`) allow our proofs. Absent: the
/// server does not advertise DPoP, and no proofs are sent.
pub(crate) fn supported_by(algs: Option<&[String]>) -> bool {
    algs.is_some_and(|a| a.iter().any(|x| x == DPOP_ALG))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::b64_decode;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
    use serde_json::Value;

    /// Splits a proof, verifies its signature against the key in its own
    /// `jwk` header with ring, and returns (header, claims).
    fn verified(proof: &str) -> (Value, Value) {
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3, "{proof}");
        let header: Value = serde_json::from_slice(&b64_decode(parts[0]).unwrap()).unwrap();
        let claims: Value = serde_json::from_slice(&b64_decode(parts[1]).unwrap()).unwrap();
        let jwk = &header["jwk"];
        let mut point = vec![4u8];
        point.extend(b64_decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(b64_decode(jwk["y"].as_str().unwrap()).unwrap());
        assert_eq!(point.len(), 65);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
            .verify(
                format!("{}.{}", parts[0], parts[1]).as_bytes(),
                &b64_decode(parts[2]).unwrap(),
            )
            .expect("the proof's signature verifies with its jwk");
        (header, claims)
    }

    #[test]
    fn proof_structure_signature_and_claims() {
        let d = Dpop::new(Es256Key::generate().unwrap());
        let url: Uri = "https://MCP.example:8443/mcp/?x=1#frag".parse().unwrap();
        let p = d.proof(&Method::POST, &url, Some("tok")).unwrap();
        let (h, c) = verified(&p);
        assert_eq!(h["typ"], "dpop+jwt");
        assert_eq!(h["alg"], "ES256");
        assert_eq!(h["jwk"]["kty"], "EC");
        assert_eq!(h["jwk"]["crv"], "P-256");
        assert!(h["jwk"].get("d").is_none(), "no private key in the jwk");
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://mcp.example:8443/mcp/");
        assert!(c["jti"].as_str().unwrap().len() >= 16);
        assert!(c["iat"].as_u64().unwrap().abs_diff(now_secs()) <= 5);
        // ath = base64url(SHA-256("tok")).
        assert_eq!(c["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        assert!(c.get("nonce").is_none());
        // No token: no ath. A fresh jti each time.
        let (_, c2) = verified(&d.proof(&Method::GET, &url, None).unwrap());
        assert!(c2.get("ath").is_none());
        assert_eq!(c2["htm"], "GET");
        assert_ne!(c["jti"], c2["jti"]);
    }

    #[test]
    fn thumbprint_is_rfc7638_of_the_jwk() {
        let key = Es256Key::generate().unwrap();
        let jwk = key.public_jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":{},"y":{}}}"#,
            jwk["x"], jwk["y"]
        );
        let want =
            b64_url(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref());
        assert_eq!(Dpop::new(key).jkt(), want);
        assert_eq!(want.len(), 43);
    }

    #[test]
    fn nonces_are_per_origin_and_bounded() {
        let d = Dpop::new(Es256Key::generate().unwrap());
        let rs: Uri = "http://127.0.0.1:1/mcp".parse().unwrap();
        let rs_other_path: Uri = "http://127.0.0.1:1/other?q".parse().unwrap();
        let as_: Uri = "http://127.0.0.1:2/token".parse().unwrap();
        let mut h = HeaderMap::new();
        assert!(!d.remember_nonce(&rs, &h));
        h.insert(DPOP_NONCE, HeaderValue::from_static("n-rs"));
        assert!(d.remember_nonce(&rs, &h));
        assert_eq!(d.nonce_for(&rs_other_path).as_deref(), Some("n-rs"));
        assert_eq!(d.nonce_for(&as_), None);
        let (_, c) = verified(&d.proof(&Method::POST, &rs, Some("t")).unwrap());
        assert_eq!(c["nonce"], "n-rs");
        let (_, c) = verified(&d.proof(&Method::POST, &as_, None).unwrap());
        assert!(
            c.get("nonce").is_none(),
            "the RS nonce is not sent to the AS"
        );
        // A newer nonce replaces the old one; an oversized one is ignored.
        h.insert(DPOP_NONCE, HeaderValue::from_static("n-rs-2"));
        d.remember_nonce(&rs, &h);
        assert_eq!(d.nonce_for(&rs).as_deref(), Some("n-rs-2"));
        let long = "x".repeat(MAX_DPOP_NONCE_LEN + 1);
        h.insert(DPOP_NONCE, HeaderValue::from_str(&long).unwrap());
        assert!(!d.remember_nonce(&rs, &h));
        assert_eq!(d.nonce_for(&rs).as_deref(), Some("n-rs-2"));
        // Many origins: the table stays bounded.
        h.insert(DPOP_NONCE, HeaderValue::from_static("n"));
        for port in 10..10 + 3 * MAX_DPOP_NONCE_ORIGINS as u16 {
            let u: Uri = format!("http://127.0.0.1:{port}/").parse().unwrap();
            d.remember_nonce(&u, &h);
        }
        assert!(d.nonces().len() <= MAX_DPOP_NONCE_ORIGINS);
    }

    #[test]
    fn advertised_algorithms() {
        assert!(!supported_by(None));
        assert!(!supported_by(Some(&["RS256".into()])));
        assert!(supported_by(Some(&["RS256".into(), "ES256".into()])));
    }
}
