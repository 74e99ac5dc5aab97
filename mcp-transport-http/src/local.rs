//! Endpoints: an `http(s)://` URL, or a server on this machine reached
//! without TCP, through a Unix domain socket or a Windows named pipe, in
//! the URL forms VS Code's `mcp.json` accepts.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use http::Uri;
use http::uri::PathAndQuery;

use crate::error::{HttpError, UrlProblem};
use crate::pool::Io;

/// A local socket an MCP server listens on: Streamable HTTP (HTTP/1.1)
/// runs over it exactly as over TCP.
///
/// Written in a URL as VS Code writes it (its MCP configuration reference,
/// "HTTP and Server-Sent Events (SSE) servers"): the socket's path is the
/// URL's path, and the HTTP request path is the fragment.
///
/// | URL | connects to | requests go to |
/// |---|---|---|
/// | `unix:///run/app/mcp.sock#/mcp` | the Unix socket `/run/app/mcp.sock` | `http://localhost/mcp` |
/// | `unix:///tmp/s.sock` | `/tmp/s.sock` | `http://localhost/` |
/// | `unix:///tmp/my%20app.sock#/mcp?x=1` | `/tmp/my app.sock` | `http://localhost/mcp?x=1` |
/// | `pipe:///pipe/app-mcp#/mcp` | the named pipe `\\.\pipe\app-mcp` (Windows) | `http://localhost/mcp` |
///
/// Requests carry `Host: localhost`, as VS Code sends them. To send
/// another `Host` (a proxy routing by it), give an `http://` URL and the
/// socket separately with
/// [`HttpTransportBuilder::unix_socket`](crate::HttpTransportBuilder::unix_socket),
/// or set a `Host` header with
/// [`header`](crate::HttpTransportBuilder::header).
///
/// Unix sockets work on Unix systems; named pipes are written for Windows
/// only and are not built or tested on the systems this crate's tests run
/// on (Linux); a URL of the other kind is refused when the transport is
/// built ([`UrlProblem::SocketUnsupported`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LocalSocket {
    /// A Unix domain socket at this path (`unix:///path`).
    Unix(PathBuf),
    /// A Windows named pipe by its full name, `\\.\pipe\NAME`
    /// (`pipe:///pipe/NAME`).
    NamedPipe(String),
}

impl LocalSocket {
    /// Whether this system can connect to it (Unix sockets on Unix, named
    /// pipes on Windows).
    pub fn is_supported(&self) -> bool {
        match self {
            LocalSocket::Unix(_) => cfg!(unix),
            LocalSocket::NamedPipe(_) => cfg!(windows),
        }
    }

    /// Opens a connection to it, as the transport does for each new
    /// connection of its pool: for code that speaks HTTP to the same
    /// server by other means (`mcp-auth` fetches a socket server's OAuth
    /// metadata through it). Fails with [`io::ErrorKind::Unsupported`]
    /// where [`is_supported`](Self::is_supported) is false.
    pub async fn connect(&self) -> io::Result<Box<dyn Io>> {
        Ok(Box::new(crate::pool::open_local(self).await?))
    }

    fn unsupported(&self) -> UrlProblem {
        UrlProblem::SocketUnsupported(match self {
            LocalSocket::Unix(_) => "Unix domain sockets (unix://) need a Unix system",
            LocalSocket::NamedPipe(_) => "named pipes (pipe://) exist only on Windows",
        })
    }
}

/// `unix socket /run/app/mcp.sock`, `named pipe \\.\pipe\app-mcp`: for
/// messages.
impl fmt::Display for LocalSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalSocket::Unix(p) => write!(f, "unix socket {}", p.display()),
            LocalSocket::NamedPipe(n) => write!(f, "named pipe {n}"),
        }
    }
}

/// Where a transport sends its requests: the `http(s)` URL they carry
/// (its host is the `Host` header, its path the request path; redirects,
/// OAuth's resource identifier and tokens go by it) and, for a local
/// server, the socket the bytes travel through.
///
/// ```
/// use mcp_transport_http::{Endpoint, LocalSocket};
///
/// let e: Endpoint = "unix:///run/app/mcp.sock#/mcp".parse()?;
/// assert_eq!(e.url(), "http://localhost/mcp");
/// assert_eq!(e.socket(), Some(&LocalSocket::Unix("/run/app/mcp.sock".into())));
///
/// let e: Endpoint = "https://mcp.example.com/mcp".parse()?;
/// assert_eq!(e.socket(), None);
/// # Ok::<(), mcp_transport_http::HttpError>(())
/// ```
///
/// # The resource identifier of a socket
///
/// The MCP authorization specification identifies a server by its
/// canonical URI (RFC 8707's `resource`, RFC 9728's protected resource
/// metadata), which must be an absolute `http(s)` URL without a fragment:
/// `unix:///…#/mcp` cannot be one. A server on a socket is identified by
/// [`url`](Self::url), the URL its requests carry (`http://localhost/mcp`:
/// the `Host` header and path the server sees), and its metadata is
/// fetched through the same socket. The socket itself is part of where
/// credentials are kept (see `mcp-auth`), so two servers on different
/// sockets that both call themselves `http://localhost/mcp` never share a
/// token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    url: Uri,
    socket: Option<LocalSocket>,
}

impl Endpoint {
    /// Reads an `http://` or `https://` URL (with a host), or a local
    /// socket URL (`unix:///path#/request-path`, `pipe:///pipe/NAME#/path`;
    /// see [`LocalSocket`]). Whether this system supports the socket is
    /// checked when a transport is built, not here.
    pub fn parse(text: &str) -> Result<Self, HttpError> {
        let invalid = |reason| HttpError::InvalidUrl {
            url: text.to_owned(),
            reason,
        };
        let scheme = text.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("unix") | Some("pipe") => parse_local(text).map_err(invalid),
            _ => {
                let url: Uri = text.parse().map_err(|e| invalid(UrlProblem::Syntax(e)))?;
                if !matches!(url.scheme_str(), Some("http" | "https")) {
                    return Err(invalid(UrlProblem::Scheme));
                }
                if url.host().is_none_or(str::is_empty) {
                    return Err(invalid(UrlProblem::NoHost));
                }
                Ok(Endpoint { url, socket: None })
            }
        }
    }

    /// The `http(s)` URL the requests carry.
    pub fn url(&self) -> &Uri {
        &self.url
    }

    /// The local socket the requests travel through, if any.
    pub fn socket(&self) -> Option<&LocalSocket> {
        self.socket.as_ref()
    }

    /// The same URL through `socket` instead of the URL's host.
    pub fn with_socket(mut self, socket: LocalSocket) -> Self {
        self.socket = Some(socket);
        self
    }

    /// Splits it into its URL and socket.
    pub fn into_parts(self) -> (Uri, Option<LocalSocket>) {
        (self.url, self.socket)
    }

    /// Whether a transport can be built for it on this system: the socket
    /// (if any) is supported here, and it is not `https` over a socket.
    pub(crate) fn check(&self) -> Result<(), UrlProblem> {
        let Some(socket) = &self.socket else {
            return Ok(());
        };
        if !socket.is_supported() {
            return Err(socket.unsupported());
        }
        if self.url.scheme_str() == Some("https") {
            return Err(UrlProblem::HttpsOverSocket);
        }
        Ok(())
    }
}

impl FromStr for Endpoint {
    type Err = HttpError;
    fn from_str(s: &str) -> Result<Self, HttpError> {
        Endpoint::parse(s)
    }
}

/// `unix:///run/app/mcp.sock#/mcp` (socket, then the request path in the
/// fragment), as VS Code writes it.
impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self.url.path_and_query().map_or("/", PathAndQuery::as_str);
        match &self.socket {
            None => write!(f, "{}", self.url),
            Some(LocalSocket::Unix(p)) => {
                write!(f, "unix://{}#{target}", encode_path(p))
            }
            Some(LocalSocket::NamedPipe(n)) => {
                let name = n.strip_prefix(PIPE_PREFIX).unwrap_or(n);
                write!(f, "pipe:///pipe/{}#{target}", encode(name))
            }
        }
    }
}

/// What a named pipe's full name starts with.
const PIPE_PREFIX: &str = r"\\.\pipe\";

/// `unix://` or `pipe://`, an empty authority, the socket's path
/// (percent-decoded), and the request target in the fragment.
fn parse_local(text: &str) -> Result<Endpoint, UrlProblem> {
    let (scheme, rest) = text.split_once(':').unwrap_or((text, ""));
    let pipe = scheme.eq_ignore_ascii_case("pipe");
    let bad = || {
        if pipe {
            UrlProblem::PipeName
        } else {
            UrlProblem::SocketPath
        }
    };
    let (location, target) = rest.split_once('#').unwrap_or((rest, ""));
    // An empty authority: `unix:///path`, so the path is absolute.
    let path = location.strip_prefix("//").ok_or_else(bad)?;
    if !path.starts_with('/') || path.contains('?') {
        return Err(bad());
    }
    let path = decode(path).ok_or_else(bad)?;
    let socket = if pipe {
        let name = path.strip_prefix("/pipe/").ok_or_else(bad)?;
        if name.is_empty() || name.contains('\\') {
            return Err(bad());
        }
        LocalSocket::NamedPipe(format!("{PIPE_PREFIX}{name}"))
    } else {
        if path.len() < 2 || path.contains('\0') {
            return Err(bad());
        }
        LocalSocket::Unix(PathBuf::from(path))
    };
    if target.starts_with("//") {
        return Err(UrlProblem::SocketTarget);
    }
    let target = if target.starts_with('/') {
        target.to_owned()
    } else {
        format!("/{target}")
    };
    let url: Uri = format!("http://localhost{target}")
        .parse()
        .map_err(|_| UrlProblem::SocketTarget)?;
    // The fragment must be only a path and query: `http::Uri` would read
    // `//host/...` or `/a#b` differently.
    if url.host() != Some("localhost")
        || url.path_and_query().map(PathAndQuery::as_str) != Some(&target)
    {
        return Err(UrlProblem::SocketTarget);
    }
    Ok(Endpoint {
        url,
        socket: Some(socket),
    })
}

/// Percent-decodes a URL path; `None` if an escape is malformed or the
/// result is not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes what a URL path cannot hold as is (`/` kept).
fn encode_path(p: &Path) -> String {
    encode(&p.to_string_lossy())
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn socket_of(url: &str) -> Result<(String, LocalSocket), String> {
        match Endpoint::parse(url) {
            Ok(e) => {
                let (u, s) = e.into_parts();
                Ok((u.to_string(), s.expect("a socket")))
            }
            Err(HttpError::InvalidUrl { reason, .. }) => Err(reason.to_string()),
            Err(e) => Err(format!("unexpected: {e}")),
        }
    }

    #[test]
    fn vs_code_forms() {
        let unix = |p: &str| LocalSocket::Unix(PathBuf::from(p));
        for (url, want_url, want_socket) in [
            (
                "unix:///tmp/server.sock#/mcp/subpath",
                "http://localhost/mcp/subpath",
                unix("/tmp/server.sock"),
            ),
            (
                "unix:///tmp/s.sock",
                "http://localhost/",
                unix("/tmp/s.sock"),
            ),
            (
                "unix:///tmp/s.sock#",
                "http://localhost/",
                unix("/tmp/s.sock"),
            ),
            (
                "UNIX:///tmp/s.sock#mcp",
                "http://localhost/mcp",
                unix("/tmp/s.sock"),
            ),
            (
                "unix:///tmp/my%20app.sock#/mcp?x=1",
                "http://localhost/mcp?x=1",
                unix("/tmp/my app.sock"),
            ),
            (
                "pipe:///pipe/named-pipe#/mcp",
                "http://localhost/mcp",
                LocalSocket::NamedPipe(r"\\.\pipe\named-pipe".into()),
            ),
        ] {
            assert_eq!(
                socket_of(url),
                Ok((want_url.to_owned(), want_socket)),
                "{url}"
            );
        }
    }

    #[test]
    fn display_round_trips() {
        for url in [
            "unix:///tmp/my%20app.sock#/mcp?x=1",
            "unix:///tmp/s.sock#/",
            "pipe:///pipe/app-mcp#/mcp",
            "http://127.0.0.1:8080/mcp",
        ] {
            let e = Endpoint::parse(url).unwrap();
            assert_eq!(e.to_string(), url);
            assert_eq!(Endpoint::parse(&e.to_string()).unwrap(), e);
        }
    }

    #[test]
    fn malformed_socket_urls_are_refused() {
        for (url, why) in [
            ("unix:/tmp/s.sock#/mcp", UrlProblem::SocketPath),
            ("unix://tmp/s.sock#/mcp", UrlProblem::SocketPath),
            ("unix://localhost/tmp/s.sock", UrlProblem::SocketPath),
            ("unix:///", UrlProblem::SocketPath),
            ("unix:///tmp/s.sock?x=1#/mcp", UrlProblem::SocketPath),
            ("unix:///tmp/%zz.sock", UrlProblem::SocketPath),
            ("unix:///tmp/%ff.sock", UrlProblem::SocketPath),
            ("unix:///tmp/%00.sock", UrlProblem::SocketPath),
            (
                "unix:///tmp/s.sock#//evil.example/mcp",
                UrlProblem::SocketTarget,
            ),
            ("unix:///tmp/s.sock#/a b", UrlProblem::SocketTarget),
            ("pipe:///named-pipe#/mcp", UrlProblem::PipeName),
            ("pipe:///pipe/#/mcp", UrlProblem::PipeName),
            ("pipe:///pipe/a%5Cb", UrlProblem::PipeName),
            ("pipe://server/pipe/x", UrlProblem::PipeName),
        ] {
            assert_eq!(socket_of(url), Err(why.to_string()), "{url}");
        }
    }

    #[test]
    fn http_urls_have_no_socket() {
        let e = Endpoint::parse("https://mcp.example.com/mcp").unwrap();
        assert_eq!(e.socket(), None);
        assert!(e.check().is_ok());
        assert!(matches!(
            Endpoint::parse("ftp://x/"),
            Err(HttpError::InvalidUrl {
                reason: UrlProblem::Scheme,
                ..
            })
        ));
    }

    #[test]
    fn only_this_systems_socket_kind_builds() {
        let unix = Endpoint::parse("unix:///tmp/s.sock#/mcp").unwrap();
        let pipe = Endpoint::parse("pipe:///pipe/x#/mcp").unwrap();
        assert_eq!(unix.check().is_ok(), cfg!(unix));
        assert_eq!(pipe.check().is_ok(), cfg!(windows));
        let https = Endpoint::parse("https://h/mcp")
            .unwrap()
            .with_socket(LocalSocket::Unix("/tmp/s.sock".into()));
        if cfg!(unix) {
            assert!(matches!(https.check(), Err(UrlProblem::HttpsOverSocket)));
        }
    }
}
