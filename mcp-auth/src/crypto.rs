//! PKCE S256, random `state`, and ES256 client assertions (RFC 7523), all on
//! `ring`.

use std::time::{SystemTime, UNIX_EPOCH};

use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

use crate::error::{AuthError, AuthErrorKind};
use crate::util::{b64_decode, b64_url};

/// Lifetime of a client assertion JWT.
pub const CLIENT_ASSERTION_LIFETIME_SECS: u64 = 300;

/// `n` random bytes, base64url.
pub(crate) fn random_token(n: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| AuthError::new(AuthErrorKind::Config, "the system random generator failed"))?;
    Ok(b64_url(&buf))
}

/// A PKCE pair: the verifier (43 chars, 256 bits) and its S256 challenge.
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    pub(crate) fn new() -> Result<Self, AuthError> {
        let verifier = random_token(32)?;
        let challenge = s256(&verifier);
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

/// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
pub(crate) fn s256(verifier: &str) -> String {
    b64_url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

/// An ES256 (P-256) signing key: for `private_key_jwt` client assertions
/// and for DPoP proofs.
pub struct Es256Key {
    pair: EcdsaKeyPair,
    kid: Option<String>,
}

impl std::fmt::Debug for Es256Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Es256Key")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl Es256Key {
    /// Reads a P-256 key from a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, AuthError> {
        let body: String = pem
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("-----"))
            .collect();
        if !pem.contains("BEGIN PRIVATE KEY") {
            return Err(AuthError::new(
                AuthErrorKind::Config,
                "the private key must be a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)",
            ));
        }
        let der = b64_decode(&body).ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::Config,
                "the private key PEM is not valid base64",
            )
        })?;
        Self::from_pkcs8_der(&der)
    }

    /// Reads a P-256 key from PKCS#8 DER.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, AuthError> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|e| {
                AuthError::new(
                    AuthErrorKind::Config,
                    format!("not a usable P-256 PKCS#8 key: {e}"),
                )
            })?;
        Ok(Es256Key { pair, kid: None })
    }

    /// A fresh random P-256 key, e.g. for DPoP proofs
    /// ([`OAuthProviderBuilder::dpop`](crate::OAuthProviderBuilder::dpop)),
    /// where the key only has to live as long as the tokens bound to it.
    pub fn generate() -> Result<Self, AuthError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::new(AuthErrorKind::Config, "could not generate a P-256 key"))?;
        Self::from_pkcs8_der(pkcs8.as_ref())
    }

    /// The public key as a JWK (RFC 7517, RFC 7518 §6.2.1): `kty`, `crv`,
    /// `x`, `y`, never the private part.
    pub fn public_jwk(&self) -> serde_json::Value {
        let (x, y) = self.public_xy();
        serde_json::json!({"kty": "EC", "crv": "P-256", "x": x, "y": y})
    }

    /// The RFC 7638 JWK SHA-256 thumbprint of the public key, base64url
    /// (DPoP's `jkt`, RFC 9449 §6).
    pub fn thumbprint(&self) -> String {
        let (x, y) = self.public_xy();
        // The required members in lexicographic order, no whitespace.
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        b64_url(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref())
    }

    /// `x` and `y` of the public point, base64url.
    fn public_xy(&self) -> (String, String) {
        // ring's public key is the uncompressed point: 0x04 || X || Y.
        let point = self.pair.public_key().as_ref();
        let (x, y) = point
            .get(1..)
            .unwrap_or_default()
            .split_at(point.len().saturating_sub(1) / 2);
        (b64_url(x), b64_url(y))
    }

    /// Sets the `kid` header of the assertions.
    pub fn with_key_id(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// A signed JWT with these claims (`alg: ES256`, `typ: JWT`, the `kid`
    /// if set).
    pub(crate) fn sign(&self, claims: &serde_json::Value) -> Result<String, AuthError> {
        let mut header = serde_json::json!({"alg": "ES256", "typ": "JWT"});
        if let Some(kid) = &self.kid {
            header["kid"] = kid.clone().into();
        }
        self.sign_with_header(&header, claims)
    }

    /// A signed JWT with this header (which must say `alg: ES256`) and
    /// these claims.
    pub(crate) fn sign_with_header(
        &self,
        header: &serde_json::Value,
        claims: &serde_json::Value,
    ) -> Result<String, AuthError> {
        let input = format!(
            "{}.{}",
            b64_url(header.to_string().as_bytes()),
            b64_url(claims.to_string().as_bytes())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| AuthError::new(AuthErrorKind::Config, "ES256 signing failed"))?;
        Ok(format!("{input}.{}", b64_url(sig.as_ref())))
    }

    /// A client assertion (RFC 7523 §3): `iss` = `sub` = client id, `aud` =
    /// the authorization server's issuer, short `exp`, unique `jti`.
    pub(crate) fn client_assertion(
        &self,
        client_id: &str,
        audience: &str,
    ) -> Result<String, AuthError> {
        let now = now_secs();
        self.sign(&serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + CLIENT_ASSERTION_LIFETIME_SECS,
            "jti": random_token(16)?,
        }))
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    #[test]
    fn s256_matches_rfc7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = Pkce::new().unwrap();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(s256(&p.verifier), p.challenge);
        assert_ne!(Pkce::new().unwrap().verifier, p.verifier);
    }

    #[test]
    fn es256_assertion_verifies() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            crate::util::b64_std(pkcs8.as_ref())
        );
        let key = Es256Key::from_pkcs8_pem(&pem).unwrap();
        let jwt = key.client_assertion("cid", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value =
            serde_json::from_slice(&b64_decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "cid");
        assert_eq!(claims["sub"], "cid");
        assert_eq!(claims["aud"], "https://as.example");
        let public = key.pair.public_key().as_ref().to_vec();
        let input = format!("{}.{}", parts[0], parts[1]);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public)
            .verify(input.as_bytes(), &b64_decode(parts[2]).unwrap())
            .unwrap();
        assert!(
            Es256Key::from_pkcs8_pem(
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"
            )
            .is_err()
        );
        assert!(Es256Key::from_pkcs8_pem("garbage").is_err());
    }
}
