//! What a server controls in discovery, under arbitrary input (the fuzz
//! target `fuzz/fuzz_targets/auth_parsers.rs`): the `WWW-Authenticate`
//! parser (`Bearer` and `DPoP`), the metadata documents and the URLs taken from them. Compiled
//! only for tests and `--cfg fuzzing`: not part of the API.

use std::fmt::Write as _;

use crate::challenge::BearerChallenge;
use crate::discovery::{
    AuthServerMetadata, ProtectedResourceMetadata, as_metadata_urls, prm_urls, resource_matches,
};
use crate::net::checked_url;
use crate::ssrf::SsrfPolicy;
use crate::util::{canonical_resource, origin, parse_url, resolve};

/// A challenge of `scheme` as a `WWW-Authenticate` value, every parameter quoted.
fn print(scheme: &str, c: &BearerChallenge) -> String {
    let mut out = String::from(scheme);
    for (key, value) in [
        ("resource_metadata", &c.resource_metadata),
        ("scope", &c.scope),
        ("error", &c.error),
        ("error_description", &c.error_description),
    ] {
        if let Some(v) = value {
            let v = v.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = write!(out, " {key}=\"{v}\",");
        }
    }
    out
}

/// `data` is a header value, a newline, and a JSON body. Panics if anything
/// panics, if a parsed challenge (`Bearer`, `DPoP`) does not survive
/// print → parse, or if the URLs derived from a server's URL or an issuer
/// leave its origin.
pub fn auth_parsers(data: &[u8]) {
    let (header, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let header = String::from_utf8_lossy(header);
    let challenge = BearerChallenge::parse(&header);
    if let Some(c) = &challenge {
        let printed = print("Bearer", c);
        assert_eq!(
            BearerChallenge::parse(&printed).as_ref(),
            Some(c),
            "{printed}"
        );
        let _ = (c.scopes(), c.is_insufficient_scope());
    }
    if let Some(c) = BearerChallenge::parse_dpop(&header) {
        let printed = print("DPoP", &c);
        assert_eq!(BearerChallenge::parse_dpop(&printed), Some(c), "{printed}");
    }

    // The header doubles as a server URL and a redirect `Location`.
    let server =
        parse_url(&header).unwrap_or_else(|| http::Uri::from_static("https://mcp.example.com/mcp"));
    assert!(
        resource_matches(&canonical_resource(&server), &server),
        "{server}"
    );
    let _ = resolve(&server, &header);
    let urls = prm_urls(&server, challenge.as_ref());
    assert!(
        urls.last().is_some_and(|u| u.starts_with(&origin(&server))),
        "{urls:?}"
    );

    if let Ok(prm) = serde_json::from_slice::<ProtectedResourceMetadata>(body) {
        let _ = resource_matches(&prm.resource, &server);
        for issuer in &prm.authorization_servers {
            if let Ok(iss) = checked_url(issuer, &SsrfPolicy::default()) {
                for url in as_metadata_urls(&iss) {
                    assert!(url.starts_with(&origin(&iss)), "{url} from {issuer}");
                }
            }
        }
    }
    if let Ok(meta) = serde_json::from_slice::<AuthServerMetadata>(body) {
        let _ = meta.supports_scope("mcp");
    }
}

#[cfg(test)]
mod tests {
    /// Every checked-in seed (and reproducer) of the fuzz target passes.
    #[test]
    fn the_seed_corpus_passes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/auth_parsers");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            super::auth_parsers(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
        assert!(n > 0, "no seeds in {dir}");
    }
}
