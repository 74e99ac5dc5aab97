//! [`DomainPattern`]: an `allowedDomains` / `deniedDomains` entry.

use std::fmt;

/// A host name an `allowedDomains` or `deniedDomains` entry matches, with
/// VS Code's meaning (its sandbox is Anthropic's `sandbox-runtime`, whose
/// matcher this follows):
///
/// - `api.example.com` matches that host only (ASCII case ignored);
/// - `*.example.com` matches every host *under* `example.com`
///   (`a.example.com`, `a.b.example.com`) but not `example.com` itself;
/// - an IP address or `localhost` matches itself, written the same way.
///
/// Ports are not part of a pattern: an allowed host is allowed on every
/// port. Patterns broader than one registrable name (`*`, `*.com`) are
/// refused, as are URLs (`https://...`), paths and ports.
///
/// ```
/// use mcp_sandbox::DomainPattern;
///
/// let p = DomainPattern::parse("*.example.com")?;
/// assert!(p.matches("api.example.com") && p.matches("A.B.Example.COM"));
/// assert!(!p.matches("example.com") && !p.matches("evilexample.com"));
/// assert!(DomainPattern::parse("*.com").is_err());
/// # Ok::<(), mcp_sandbox::DomainPatternError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct DomainPattern {
    /// Lowercased, without the `*.` of a wildcard.
    base: String,
    wildcard: bool,
}

/// An entry that is not a domain pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{entry:?} is not a domain pattern: {reason}")]
pub struct DomainPatternError {
    entry: String,
    reason: &'static str,
}

impl DomainPattern {
    /// Reads one entry.
    pub fn parse(entry: &str) -> Result<Self, DomainPatternError> {
        let bad = |reason| DomainPatternError {
            entry: entry.to_owned(),
            reason,
        };
        let text = entry.trim();
        if text.contains("://") || text.contains('/') {
            return Err(bad("write a host name, not a URL or a path"));
        }
        if text.parse::<std::net::Ipv6Addr>().is_ok() {
            return Ok(DomainPattern {
                base: text.to_ascii_lowercase(),
                wildcard: false,
            });
        }
        if text.contains(':') {
            return Err(bad("ports are not part of a pattern"));
        }
        let (wildcard, base) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if base.contains('*') {
            return Err(bad("only a leading `*.` is a wildcard"));
        }
        let valid_label = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if base.is_empty() || !base.split('.').all(valid_label) {
            return Err(bad(
                "expected a host name like api.example.com or *.example.com",
            ));
        }
        if wildcard && !base.contains('.') {
            return Err(bad(
                "too broad: a wildcard needs at least two labels after `*.` (*.example.com)",
            ));
        }
        if !wildcard && !base.contains('.') && !base.eq_ignore_ascii_case("localhost") {
            return Err(bad(
                "expected a fully qualified host name (api.example.com), or localhost",
            ));
        }
        Ok(DomainPattern {
            base: base.to_ascii_lowercase(),
            wildcard,
        })
    }

    /// Whether `host` (as a client names it: no port, no trailing dot
    /// needed) matches.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.strip_suffix('.').unwrap_or(host);
        if self.wildcard {
            host.len() > self.base.len() + 1
                && host
                    .get(host.len() - self.base.len()..)
                    .is_some_and(|tail| tail.eq_ignore_ascii_case(&self.base))
                && host.as_bytes().get(host.len() - self.base.len() - 1) == Some(&b'.')
        } else {
            host.eq_ignore_ascii_case(&self.base)
        }
    }

    /// Whether the pattern names a loopback host itself (`localhost`,
    /// `127.0.0.1`, `::1`, ...): only such a pattern lets the proxy connect
    /// to a loopback address.
    pub fn is_loopback(&self) -> bool {
        !self.wildcard
            && (self.base == "localhost"
                || self
                    .base
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback()))
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wildcard {
            f.write_str("*.")?;
        }
        f.write_str(&self.base)
    }
}

impl fmt::Debug for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DomainPattern({self})")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn exact_and_wildcard_match_as_vs_code_does() {
        let exact = DomainPattern::parse("API.example.com").unwrap();
        assert!(exact.matches("api.example.com") && exact.matches("api.example.com."));
        assert!(!exact.matches("x.api.example.com") && !exact.matches("example.com"));
        let wild = DomainPattern::parse("*.example.com").unwrap();
        assert!(wild.matches("a.example.com") && wild.matches("a.b.example.com"));
        assert!(!wild.matches("example.com"));
        assert!(!wild.matches("badexample.com") && !wild.matches(".example.com"));
        assert!(!wild.matches("example.com.evil.org"));
        let ip = DomainPattern::parse("127.0.0.1").unwrap();
        assert!(ip.matches("127.0.0.1") && ip.is_loopback());
        assert!(DomainPattern::parse("localhost").unwrap().is_loopback());
        assert!(DomainPattern::parse("::1").unwrap().matches("::1"));
        assert!(!exact.is_loopback() && !wild.is_loopback());
    }

    #[test]
    fn broad_or_malformed_entries_are_refused() {
        for bad in [
            "*",
            "*.com",
            "*.",
            "a.*.com",
            "https://example.com",
            "example.com/path",
            "example.com:443",
            "com",
            "",
            "exa mple.com",
            "a..b",
        ] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad:?}");
        }
    }
}
