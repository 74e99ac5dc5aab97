//! `WWW-Authenticate: Bearer ...` parsing (RFC 6750 §3, RFC 9728 §5.1).

/// The parameters of a `Bearer` challenge that matter to the flow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected resource metadata lives.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: e.g. `invalid_token`, `insufficient_scope`.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// Parses the `Bearer` challenge of a `WWW-Authenticate` value; `None`
    /// when there is no `Bearer` challenge.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        Self::parse_scheme(header, "bearer")
    }

    /// Parses the `DPoP` challenge (RFC 9449 §7.1) of a `WWW-Authenticate`
    /// value: the same parameters as `Bearer`'s (its `algs` is not kept);
    /// `None` when there is no `DPoP` challenge.
    pub fn parse_dpop(header: &str) -> Option<BearerChallenge> {
        Self::parse_scheme(header, "dpop")
    }

    /// The parameters of the first challenge of `scheme` (lowercase).
    fn parse_scheme(header: &str, scheme: &str) -> Option<BearerChallenge> {
        let mut p = Parser {
            s: header.as_bytes(),
            i: 0,
        };
        let mut out: Option<BearerChallenge> = None;
        let mut in_bearer = false;
        loop {
            p.skip_ws_commas();
            let Some(token) = p.token() else {
                break;
            };
            if token.is_empty() {
                continue;
            }
            p.skip_ws();
            if p.peek() == Some(b'=') {
                // auth-param (or token68 padding, ignored)
                p.i += 1;
                p.skip_ws();
                let value = if p.peek() == Some(b'"') {
                    p.quoted()
                } else {
                    p.token().unwrap_or_default()
                };
                if in_bearer && let Some(c) = out.as_mut() {
                    let slot = match token.to_ascii_lowercase().as_str() {
                        "resource_metadata" => &mut c.resource_metadata,
                        "scope" => &mut c.scope,
                        "error" => &mut c.error,
                        "error_description" => &mut c.error_description,
                        _ => continue,
                    };
                    if slot.is_none() {
                        *slot = Some(value);
                    }
                }
            } else {
                // A new challenge's scheme.
                if out.is_some() && in_bearer {
                    break;
                }
                in_bearer = token.eq_ignore_ascii_case(scheme);
                if in_bearer {
                    out = Some(BearerChallenge::default());
                }
            }
        }
        out
    }

    /// The challenge's scopes, split.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref())
    }

    /// Whether this is `error="insufficient_scope"` (step-up).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

pub(crate) fn split_scopes(s: Option<&str>) -> Vec<String> {
    s.unwrap_or_default()
        .split_ascii_whitespace()
        .map(str::to_owned)
        .collect()
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }
    fn skip_ws_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/:".contains(&c) {
                self.i += 1;
            } else {
                break;
            }
        }
        if self.i == start {
            // Skip one unexpected byte so the loop always progresses.
            if self.i < self.s.len() {
                self.i += 1;
                return Some(String::new());
            }
            return None;
        }
        Some(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }
    fn quoted(&mut self) -> String {
        self.i += 1; // opening quote
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                b'"' => break,
                c => out.push(c),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sdk_challenge() {
        let c = BearerChallenge::parse(
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope, None);
    }

    #[test]
    fn parses_scope_and_insufficient_scope_any_order_and_case() {
        let c = BearerChallenge::parse(
            r#"bearer scope="mcp:basic mcp:write", resource_metadata="https://x/y", error="insufficient_scope""#,
        )
        .unwrap();
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scopes(), vec!["mcp:basic", "mcp:write"]);
    }

    #[test]
    fn picks_the_bearer_challenge_among_several() {
        let c = BearerChallenge::parse(
            r#"Basic realm="x", scope="nope", Bearer scope=a, DPoP algs="ES256""#,
        )
        .unwrap();
        assert_eq!(c.scope.as_deref(), Some("a"));
        assert!(BearerChallenge::parse(r#"Basic realm="x""#).is_none());
        assert_eq!(
            BearerChallenge::parse("Bearer"),
            Some(BearerChallenge::default())
        );
    }

    #[test]
    fn parses_the_dpop_challenge() {
        let h = r#"DPoP error="use_dpop_nonce", resource_metadata="http://localhost:1/prm""#;
        let c = BearerChallenge::parse_dpop(h).unwrap();
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://localhost:1/prm")
        );
        assert!(BearerChallenge::parse(h).is_none());
        let both = r#"Bearer scope="a", DPoP algs="ES256", error="use_dpop_nonce""#;
        assert_eq!(BearerChallenge::parse(both).unwrap().error, None);
        assert_eq!(
            BearerChallenge::parse_dpop(both).unwrap().error.as_deref(),
            Some("use_dpop_nonce")
        );
    }

    #[test]
    fn survives_garbage() {
        for s in [
            "",
            "\"",
            "Bearer ==\"",
            "Bearer scope=\"unterminated",
            "Bearer ;;;@@@ scope=x",
            "é",
        ] {
            let _ = BearerChallenge::parse(s);
        }
        let c = BearerChallenge::parse("Bearer scope=\"a\\\"b\"").unwrap();
        assert_eq!(c.scope.as_deref(), Some("a\"b"));
    }
}
