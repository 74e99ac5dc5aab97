//! Small encoders: base64 (standard and url-safe, through the `base64`
//! crate), form encoding, URL pieces (resolution and origins are
//! `mcp_transport_http::uri`'s, shared with the transport).

use http::Uri;

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{
    GeneralPurpose, GeneralPurposeConfig, STANDARD, URL_SAFE_NO_PAD,
};

/// Standard base64 with padding (HTTP Basic).
pub(crate) fn b64_std(input: &[u8]) -> String {
    STANDARD.encode(input)
}

/// base64url without padding (PKCE, JWT).
pub(crate) fn b64_url(input: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(input)
}

/// Decodes standard or url-safe base64, ignoring whitespace and padding
/// (PEM bodies, JWT segments).
pub(crate) fn b64_decode(input: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let normalized: String = input
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    LENIENT.decode(normalized).ok()
}

/// Percent-encodes for `application/x-www-form-urlencoded` and query strings
/// (unreserved characters kept, everything else `%XX`).
pub(crate) fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes `%XX` and `+` (form encoding); `None` on invalid UTF-8.
pub(crate) fn pct_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `k=v&k=v` with both sides percent-encoded.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", pct(k), pct(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The decoded `key=value` pairs of a query string.
pub(crate) fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((pct_decode(k)?, pct_decode(v)?))
        })
        .collect()
}

/// Parses an absolute http(s) URL of printable ASCII only (`http::Uri`
/// accepts non-ASCII bytes, C1 controls and bidirectional-text controls
/// among them; a URL of the OAuth flow never needs one: RFC 3986 URLs are
/// ASCII, with everything else percent-encoded).
pub(crate) fn parse_url(s: &str) -> Option<Uri> {
    if !s.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let uri: Uri = s.parse().ok()?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        _ => return None,
    }
    // The authority must be exactly a non-empty host and an optional valid
    // port: `http::Uri` accepts `https://:(0/a`, whose origin has no host
    // (found by the auth_parsers fuzz target); userinfo is refused too.
    let authority = uri.authority()?.as_str();
    let host = uri.host().filter(|h| !h.is_empty())?;
    let expected = match uri.port_u16() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    authority.eq_ignore_ascii_case(&expected).then_some(uri)
}

pub(crate) use mcp_transport_http::uri::{origin, resolve};

/// The canonical resource URI of an MCP server URL (RFC 8707, MCP
/// "canonical server URI"): lowercase scheme and host, no fragment, no query,
/// no trailing slash (unless the path is only `/`, which is dropped too).
pub(crate) fn canonical_resource(uri: &Uri) -> String {
    let path = uri.path().trim_end_matches('/');
    format!("{}{}", origin(uri), path)
}

/// The path of a URL without a trailing slash (`""` for the root).
pub(crate) fn path_no_slash(uri: &Uri) -> &str {
    uri.path().trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_matches_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64_std(i.as_bytes()), o);
            assert_eq!(b64_decode(o).as_deref(), Some(i.as_bytes()));
        }
        assert_eq!(b64_url(&[0xfb, 0xff]), "-_8");
        assert_eq!(b64_decode("-_8"), Some(vec![0xfb, 0xff]));
        assert_eq!(b64_decode("a*b"), None);
    }

    #[test]
    fn form_encoding_round_trips() {
        let s = form(&[("redirect_uri", "http://x/cb?a=b c"), ("scope", "a b")]);
        assert_eq!(
            s,
            "redirect_uri=http%3A%2F%2Fx%2Fcb%3Fa%3Db%20c&scope=a%20b"
        );
        let q = parse_query(&s);
        assert_eq!(q[0].1, "http://x/cb?a=b c");
        assert_eq!(
            parse_query("a=1+2&b=%zz&c"),
            vec![("a".into(), "1 2".into()), ("c".into(), "".into())]
        );
        assert_eq!(pct_decode("%4"), Some("%4".into()));
    }

    #[test]
    fn canonical_resource_drops_trailing_slash_and_query() {
        let u = parse_url("HTTPS://Example.COM/mcp/?x=1").unwrap();
        assert_eq!(canonical_resource(&u), "https://example.com/mcp");
        let u = parse_url("https://example.com/").unwrap();
        assert_eq!(canonical_resource(&u), "https://example.com");
        assert!(parse_url("ftp://x/").is_none());
        assert!(parse_url("/relative").is_none());
        // Fuzz regression: no host, a port that is not a number, userinfo.
        assert!(parse_url("https://:(0/a?").is_none());
        assert!(parse_url("https://h:x/").is_none());
        assert!(parse_url("https://user@h/").is_none());
        assert!(parse_url("https://[::1]:8080/mcp").is_some());
        assert!(parse_url("http://127.0.0.1:3000").is_some());
    }

    #[test]
    fn resolves_locations() {
        let base = parse_url("https://a.example/x/y").unwrap();
        assert_eq!(
            resolve(&base, "/z").unwrap().to_string(),
            "https://a.example/z"
        );
        assert_eq!(
            resolve(&base, "z").unwrap().to_string(),
            "https://a.example/x/z"
        );
        assert_eq!(
            resolve(&base, "//b.example/q").unwrap().to_string(),
            "https://b.example/q"
        );
    }
}
