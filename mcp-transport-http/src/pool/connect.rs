//! Opening one connection: TCP (with the connect timeout and `TCP_NODELAY`),
//! then TLS for `https` (rustls, ALPN), or a caller's own [`Connector`].

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::client::BoxFuture;

/// A byte stream to the server, as a custom [`Connector`] returns it: any
/// tokio `AsyncRead + AsyncWrite` (a TLS stream, a unix socket, a proxy
/// tunnel...).
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// An open connection from a [`Connector`], and the HTTP version to speak
/// on it.
pub struct Connected {
    pub(crate) io: Box<dyn Io>,
    pub(crate) http2: bool,
}

impl Connected {
    /// A connection that speaks HTTP/1.1.
    pub fn new(io: impl Io) -> Self {
        Connected {
            io: Box::new(io),
            http2: false,
        }
    }

    /// A connection that speaks HTTP/2 (TLS negotiated `h2` by ALPN).
    /// Needs the `http2` feature.
    #[cfg(feature = "http2")]
    pub fn http2(io: impl Io) -> Self {
        Connected {
            io: Box::new(io),
            http2: true,
        }
    }
}

impl fmt::Debug for Connected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connected")
            .field("http2", &self.http2)
            .finish_non_exhaustive()
    }
}

/// Opens the transport's connections instead of its built-in TCP + TLS
/// (a proxy, a unix socket, a custom TLS stack). Set it with
/// [`HttpTransportBuilder::connector`](crate::HttpTransportBuilder::connector).
///
/// Called once per new connection, with the URL of the request that needs
/// it (always of the configured origin: redirects to another origin are
/// refused). The transport reuses the connection for later requests while
/// it stays open; the request timeout bounds the call.
pub trait Connector: Send + Sync + 'static {
    /// A new connection to the origin of `url`.
    fn connect(&self, url: &Uri) -> BoxFuture<'static, io::Result<Connected>>;
}

/// The connection could not be opened.
#[derive(Debug)]
pub(crate) struct ConnectError {
    what: &'static str,
    origin: String,
    source: io::Error,
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} failed", self.what, self.origin)
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// How new connections are opened.
#[derive(Clone)]
pub(crate) enum Connect {
    BuiltIn {
        timeout: Option<Duration>,
        #[cfg(feature = "rustls")]
        tls: Option<tokio_rustls::TlsConnector>,
    },
    Custom(Arc<dyn Connector>),
}

/// The stream under one hyper connection.
pub(crate) enum Stream {
    Tcp(TcpStream),
    #[cfg(feature = "rustls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    Custom(Box<dyn Io>),
}

impl Connect {
    /// A new connection to `url`'s origin, and whether it speaks HTTP/2.
    pub(crate) async fn connect(&self, url: &Uri) -> Result<(Stream, bool), ConnectError> {
        let origin = || url.authority().map(|a| a.to_string()).unwrap_or_default();
        match self {
            Connect::Custom(c) => match c.connect(url).await {
                Ok(c) => Ok((Stream::Custom(c.io), c.http2)),
                Err(source) => Err(ConnectError {
                    what: "connecting (custom connector) to",
                    origin: origin(),
                    source,
                }),
            },
            Connect::BuiltIn {
                timeout,
                #[cfg(feature = "rustls")]
                tls,
            } => {
                let https = url.scheme_str() == Some("https");
                let host = url.host().unwrap_or("");
                // `[::1]` in a URL; the socket address and the TLS name
                // want the bare address.
                let host = host
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .unwrap_or(host);
                let port = url.port_u16().unwrap_or(if https { 443 } else { 80 });
                let tcp = TcpStream::connect((host, port));
                let tcp = match timeout {
                    Some(t) => tokio::time::timeout(*t, tcp).await.unwrap_or_else(|_| {
                        Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("no connection within {t:?} (connect_timeout)"),
                        ))
                    }),
                    None => tcp.await,
                }
                .map_err(|source| ConnectError {
                    what: "connecting to",
                    origin: origin(),
                    source,
                })?;
                // Requests are small and written whole: send them at once.
                let _ = tcp.set_nodelay(true);
                if !https {
                    return Ok((Stream::Tcp(tcp), false));
                }
                #[cfg(feature = "rustls")]
                if let Some(tls) = tls {
                    let name =
                        rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|e| {
                            ConnectError {
                                what: "TLS name of",
                                origin: origin(),
                                source: io::Error::new(io::ErrorKind::InvalidInput, e),
                            }
                        })?;
                    let stream = tls
                        .connect(name, tcp)
                        .await
                        .map_err(|source| ConnectError {
                            what: "TLS handshake with",
                            origin: origin(),
                            source,
                        })?;
                    let h2 = cfg!(feature = "http2")
                        && stream.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
                    return Ok((Stream::Tls(Box::new(stream)), h2));
                }
                Err(ConnectError {
                    what: "connecting to",
                    origin: origin(),
                    source: io::Error::new(
                        io::ErrorKind::Unsupported,
                        "https needs the `rustls` feature (or a custom connector)",
                    ),
                })
            }
        }
    }
}

/// The ALPN protocols offered over TLS: `h2` only with the `http2` feature.
#[cfg(feature = "rustls")]
pub(crate) fn alpn() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    if cfg!(feature = "http2") {
        v.push(b"h2".to_vec());
    }
    v.push(b"http/1.1".to_vec());
    v
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Tcp($s) => {
                let $s = Pin::new($s);
                $e
            }
            #[cfg(feature = "rustls")]
            Stream::Tls($s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
            Stream::Custom($s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        each!(self, s => s.poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        each!(self, s => s.poll_write(cx, buf))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        each!(self, s => s.poll_write_vectored(cx, bufs))
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            #[cfg(feature = "rustls")]
            Stream::Tls(s) => s.is_write_vectored(),
            Stream::Custom(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each!(self, s => s.poll_flush(cx))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each!(self, s => s.poll_shutdown(cx))
    }
}
