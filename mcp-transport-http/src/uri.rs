//! URL references and redirects: the one place in the workspace that
//! resolves a `Location` (or an HTTP+SSE `endpoint`) against the URL it came
//! from, compares origins and decides whether a redirect is followed.
//! `mcp-auth` uses the same functions, so the transport and OAuth agree on
//! which origin a URL (and so a token) belongs to.
//!
//! # Why not the `url` crate
//!
//! Measured with `cargo tree -p mcpio-client -p mcpio-transport-stdio -p
//! mcp-transport-http -e normal --prefix none | sort -u`: a dependent of the
//! client, both transports and rustls pulls 63 third-party crates; with
//! `url` 2.5 (IDNA through ICU4X) it pulls 92. Reference resolution
//! (RFC 3986 §5.2) on top of [`http::Uri`], which the transport already
//! parses with, is the sixty lines below.

use http::{Method, StatusCode, Uri};

/// Redirects followed per request (each target checked again).
pub const MAX_REDIRECTS: u32 = 5;

/// Resolves `reference` (absolute URL, `//host/path`, `/path`, `path`,
/// `?query`, with `.`/`..` segments) against `base` as RFC 3986 §5.2 says.
/// The fragment is dropped. `None` unless the result is an `http` or `https`
/// URL with a host.
///
/// ```
/// # use mcp_transport_http::uri::resolve;
/// let base = "https://a.example/x/y?q".parse().unwrap();
/// assert_eq!(resolve(&base, "../z").unwrap(), "https://a.example/z");
/// assert_eq!(resolve(&base, "//b.example/q").unwrap(), "https://b.example/q");
/// assert_eq!(resolve(&base, "?r").unwrap(), "https://a.example/x/y?r");
/// assert!(resolve(&base, "ftp://c.example/").is_none());
/// ```
pub fn resolve(base: &Uri, reference: &str) -> Option<Uri> {
    let reference = reference.trim();
    let reference = reference.split_once('#').map_or(reference, |(r, _)| r);
    let (scheme, rest) = match reference.split_once(':') {
        Some((s, rest))
            if s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (s.to_ascii_lowercase(), rest)
        }
        _ => (base.scheme_str()?.to_owned(), reference),
    };
    let (authority, rest, from_base) = match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find(['/', '?']).unwrap_or(r.len());
            (r[..end].to_owned(), &r[end..], false)
        }
        None if reference.len() != rest.len() => return None, // `scheme:path`
        None => (base.authority()?.as_str().to_owned(), rest, true),
    };
    let (path, query) = rest
        .split_once('?')
        .map_or((rest, None), |(p, q)| (p, Some(q)));
    let keep_query = from_base && path.is_empty();
    let path = if !from_base || path.starts_with('/') {
        remove_dot_segments(path)
    } else if path.is_empty() {
        base.path().to_owned()
    } else {
        let dir = base.path().rfind('/').map_or("/", |i| &base.path()[..=i]);
        remove_dot_segments(&format!("{dir}{path}"))
    };
    let query = match query {
        Some(q) => Some(q),
        None if keep_query => base.query(),
        None => None,
    };
    let text = match query {
        Some(q) => format!("{scheme}://{authority}{path}?{q}"),
        None => format!("{scheme}://{authority}{path}"),
    };
    let uri: Uri = text.parse().ok()?;
    (matches!(uri.scheme_str(), Some("http" | "https"))
        && uri.host().is_some_and(|h| !h.is_empty()))
    .then_some(uri)
}

/// RFC 3986 §5.2.4 on an absolute path (or the empty path, read as `/`).
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." | ".." => {
                if *segment == ".." {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

/// `scheme://host[:port]`, scheme and host lowercased, the default port left
/// out: the origin a token or a session belongs to.
pub fn origin(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
    let host = uri.host().unwrap_or_default().to_ascii_lowercase();
    match uri.port_u16() {
        Some(p) if Some(p) != default_port(&scheme) => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Whether two URLs have the same scheme, host and port (default ports
/// filled in).
pub fn same_origin(a: &Uri, b: &Uri) -> bool {
    origin(a) == origin(b)
}

/// Why a redirect was not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedirectRefusal {
    /// 301/302/303 to a request with a body: following would change the
    /// method and drop the body.
    MethodChange,
    /// No `Location`, or one that does not resolve to an http(s) URL.
    NoLocation,
    /// The target is on another origin and the request carries credentials.
    CrossOrigin(Uri),
    /// More than the policy's `max` redirects.
    TooMany(u32),
}

/// The workspace's one redirect rule. A 3xx with a `Location` is followed
/// when: the method survives it (307/308 always; 301/302/303 only for
/// `GET`/`HEAD`), the target is on the same origin unless the request
/// carries no credentials (`cross_origin`), and fewer than `max` redirects
/// were followed. The transport sends `Authorization` and session headers
/// ([`RedirectPolicy::CREDENTIALED`]); OAuth metadata fetches send none and
/// check each target against their SSRF policy ([`RedirectPolicy::PUBLIC`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedirectPolicy {
    /// Redirects followed per request.
    pub max: u32,
    /// Whether a redirect may leave the origin.
    pub cross_origin: bool,
}

impl RedirectPolicy {
    /// Same origin only, [`MAX_REDIRECTS`].
    pub const CREDENTIALED: Self = Self {
        max: MAX_REDIRECTS,
        cross_origin: false,
    };
    /// Any origin, [`MAX_REDIRECTS`] (for requests without credentials).
    pub const PUBLIC: Self = Self {
        max: MAX_REDIRECTS,
        cross_origin: true,
    };

    /// The next URL for a response with `status` and `location` to a
    /// `method` request to `from`, after `followed` redirects: `Ok(None)` when
    /// the response is not a redirect to follow (not 301/302/303/307/308).
    pub fn next(
        &self,
        method: &Method,
        status: StatusCode,
        from: &Uri,
        location: Option<&str>,
        followed: u32,
    ) -> Result<Option<Uri>, RedirectRefusal> {
        match status.as_u16() {
            307 | 308 => {}
            301..=303 if *method == Method::GET || *method == Method::HEAD => {}
            301..=303 => return Err(RedirectRefusal::MethodChange),
            _ => return Ok(None),
        }
        let target = location
            .and_then(|l| resolve(from, l))
            .ok_or(RedirectRefusal::NoLocation)?;
        if !self.cross_origin && !same_origin(from, &target) {
            return Err(RedirectRefusal::CrossOrigin(target));
        }
        if followed >= self.max {
            return Err(RedirectRefusal::TooMany(self.max));
        }
        Ok(Some(target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(base: &str, reference: &str) -> Option<String> {
        resolve(&base.parse().unwrap(), reference).map(|u| u.to_string())
    }

    #[test]
    fn rfc3986_normal_examples() {
        // RFC 3986 §5.4.1, base http://a/b/c/d;p?q (the ones http::Uri keeps).
        let b = "http://a/b/c/d;p?q";
        for (reference, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g/"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            ("g#s", "http://a/b/c/g"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g/../h", "http://a/b/c/h"),
            ("HTTPS://Other:8443/x", "https://Other:8443/x"),
        ] {
            assert_eq!(r(b, reference).as_deref(), Some(want), "{reference:?}");
        }
        assert_eq!(r(b, "mailto:x@y"), None);
        assert_eq!(r(b, "http:g"), None);
        assert_eq!(r(b, "//"), None);
    }

    #[test]
    fn origins() {
        let a: Uri = "https://H:443/x".parse().unwrap();
        assert_eq!(origin(&a), "https://h");
        assert!(same_origin(&a, &"https://h/y".parse().unwrap()));
        assert!(!same_origin(&a, &"http://h/y".parse().unwrap()));
        assert!(!same_origin(&a, &"https://h:8443/y".parse().unwrap()));
    }

    #[test]
    fn redirect_policy() {
        let from: Uri = "https://a.example/mcp".parse().unwrap();
        let p = RedirectPolicy::CREDENTIALED;
        let next = |m: Method, s: u16, l: Option<&str>, n| {
            p.next(&m, StatusCode::from_u16(s).unwrap(), &from, l, n)
        };
        assert_eq!(
            next(Method::POST, 307, Some("/v2"), 0),
            Ok(Some("https://a.example/v2".parse().unwrap()))
        );
        assert_eq!(next(Method::POST, 200, None, 0), Ok(None));
        assert_eq!(
            next(Method::POST, 302, Some("/v2"), 0),
            Err(RedirectRefusal::MethodChange)
        );
        assert!(next(Method::GET, 302, Some("/v2"), 0).is_ok());
        assert_eq!(
            next(Method::GET, 308, None, 0),
            Err(RedirectRefusal::NoLocation)
        );
        assert!(matches!(
            next(Method::GET, 308, Some("//b.example/"), 0),
            Err(RedirectRefusal::CrossOrigin(_))
        ));
        assert_eq!(
            next(Method::GET, 308, Some("/x"), 5),
            Err(RedirectRefusal::TooMany(5))
        );
        let public = RedirectPolicy::PUBLIC.next(
            &Method::GET,
            StatusCode::FOUND,
            &from,
            Some("//b.example/meta"),
            0,
        );
        assert_eq!(public, Ok(Some("https://b.example/meta".parse().unwrap())));
    }
}
