//! Opening one connection: TCP (with the connect timeout and `TCP_NODELAY`),
//! then TLS for `https` (rustls, ALPN); a local socket (Unix domain socket,
//! Windows named pipe); or a caller's own [`Connector`].

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::client::BoxFuture;
use crate::local::LocalSocket;

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
    #[cfg_attr(docsrs, doc(cfg(feature = "http2")))]
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
    /// `host:port`, or the local socket.
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
    /// A local socket instead of the URL's host (plain HTTP/1.1: the
    /// builder refuses `https` over one).
    Local {
        socket: LocalSocket,
        timeout: Option<Duration>,
    },
    Custom(Arc<dyn Connector>),
}

/// The stream under one hyper connection.
pub(crate) enum Stream {
    Tcp(TcpStream),
    #[cfg(feature = "rustls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
    #[cfg(windows)]
    Pipe(tokio::net::windows::named_pipe::NamedPipeClient),
    Custom(Box<dyn Io>),
}

/// `timeout` on `connect`, as the `connect_timeout` error.
async fn within<T>(
    timeout: Option<Duration>,
    connect: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    match timeout {
        Some(t) => tokio::time::timeout(t, connect).await.unwrap_or_else(|_| {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no connection within {t:?} (connect_timeout)"),
            ))
        }),
        None => connect.await,
    }
}

/// Opens a connection to a local socket.
pub(crate) async fn open_local(socket: &LocalSocket) -> io::Result<Stream> {
    match socket {
        #[cfg(unix)]
        LocalSocket::Unix(path) => Ok(Stream::Unix(tokio::net::UnixStream::connect(path).await?)),
        #[cfg(windows)]
        LocalSocket::NamedPipe(name) => Ok(Stream::Pipe(open_pipe(name).await?)),
        // The builder refuses the other kind (`Endpoint::check`).
        other => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{other} is not supported on this system"),
        )),
    }
}

/// Opens a named pipe, waiting while every instance of it is busy (the
/// server has not created the next one yet); the connect timeout bounds
/// the wait. Written for Windows, not built on the systems this crate is
/// tested on.
#[cfg(windows)]
async fn open_pipe(name: &str) -> io::Result<tokio::net::windows::named_pipe::NamedPipeClient> {
    use tokio::net::windows::named_pipe::ClientOptions;
    /// `ERROR_PIPE_BUSY` (winerror.h).
    const PIPE_BUSY: i32 = 231;
    loop {
        match ClientOptions::new().open(name) {
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) => {}
            other => return other,
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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
            Connect::Local { socket, timeout } => {
                match within(*timeout, open_local(socket)).await {
                    Ok(stream) => Ok((stream, false)),
                    Err(source) => Err(ConnectError {
                        what: "connecting to",
                        origin: socket.to_string(),
                        source,
                    }),
                }
            }
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
                let tcp = within(*timeout, TcpStream::connect((host, port)))
                    .await
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
            #[cfg(unix)]
            Stream::Unix($s) => {
                let $s = Pin::new($s);
                $e
            }
            #[cfg(windows)]
            Stream::Pipe($s) => {
                let $s = Pin::new($s);
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
            #[cfg(unix)]
            Stream::Unix(s) => s.is_write_vectored(),
            #[cfg(windows)]
            Stream::Pipe(s) => s.is_write_vectored(),
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
