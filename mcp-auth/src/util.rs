//! Small encoders: base64 (standard and url-safe), form encoding, URL pieces.

use http::Uri;

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode(input: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 with padding (HTTP Basic).
pub(crate) fn b64_std(input: &[u8]) -> String {
    encode(input, STD, true)
}

/// base64url without padding (PKCE, JWT).
pub(crate) fn b64_url(input: &[u8]) -> String {
    encode(input, URL, false)
}

/// Decodes standard or url-safe base64, ignoring whitespace and padding.
pub(crate) fn b64_decode(input: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in input.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
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

/// Parses an absolute http(s) URL.
pub(crate) fn parse_url(s: &str) -> Option<Uri> {
    let uri: Uri = s.parse().ok()?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        _ => return None,
    }
    uri.authority()?;
    Some(uri)
}

/// `scheme://authority` of a URL, lowercased scheme and host.
pub(crate) fn origin(uri: &Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https").to_ascii_lowercase(),
        uri.authority()
            .map(|a| a.as_str().to_ascii_lowercase())
            .unwrap_or_default()
    )
}

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

/// Resolves a `Location` value against the URL it came from.
pub(crate) fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    if let Some(u) = parse_url(location) {
        return Some(u);
    }
    if location.starts_with("//") {
        return parse_url(&format!("{}:{location}", base.scheme_str()?));
    }
    if location.starts_with('/') {
        return parse_url(&format!("{}{location}", origin(base)));
    }
    let path = base.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    parse_url(&format!("{}{dir}{location}", origin(base)))
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
