//! A scriptable loopback hyper server with fault modes, for the transport tests.
#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used)]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Rec {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    /// 0-based index among all requests this server got.
    pub index: usize,
    /// 1-based number of the TCP connection it came on.
    pub conn: usize,
    pub version: http::Version,
}

impl Rec {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }
    pub fn id(&self) -> Value {
        self.body.get("id").cloned().unwrap_or(Value::Null)
    }
}

/// One piece of a streamed body.
#[derive(Debug, Clone)]
pub enum Piece {
    Data(String),
    /// Raw bytes (not necessarily UTF-8).
    Bytes(Vec<u8>),
    /// Last: this data again and again, as fast as the client reads, until
    /// it goes away (a body or an SSE line that never ends). Produced when
    /// hyper polls the body, so memory stays flat however long it runs.
    Repeat(String),
    Sleep(u64),
    /// Abort the connection mid-body (a dropped stream).
    Fail,
    /// Send `: keep-alive` comments every 20 ms until the client goes away.
    KeepAliveForever,
}

pub enum Reply {
    Json(StatusCode, String),
    /// Status, content type, body.
    Raw(StatusCode, &'static str, String),
    Sse(Vec<Piece>),
    /// Status, content type, a body streamed in pieces (no `Content-Length`).
    Stream(StatusCode, &'static str, Vec<Piece>),
    /// An SSE body fed by the test.
    SseChannel(mpsc::UnboundedReceiver<Piece>),
    Accepted,
    /// Never answers (the request's headers never come).
    Hang,
    Redirect(StatusCode, String),
    /// An SSE body made as the connection asks for it (see [`Generated`]).
    SseGenerated(Generated),
}

/// An SSE body of `count` events `make(i)` (each a whole event, `data:`
/// line and blank line included), produced only when hyper polls the body,
/// that is when the connection can take more: `produced` counts what the
/// server managed to hand over for writing, so it stops growing when the
/// client stops reading. `dropped` is set when hyper drops the body (the
/// client went away).
#[derive(Clone)]
pub struct Generated {
    pub count: usize,
    pub make: Arc<dyn Fn(usize) -> String + Send + Sync>,
    pub produced: Arc<AtomicUsize>,
    pub dropped: Arc<AtomicBool>,
}

impl Generated {
    pub fn new(count: usize, make: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        Generated {
            count,
            make: Arc::new(make),
            produced: Arc::new(AtomicUsize::new(0)),
            dropped: Arc::new(AtomicBool::new(false)),
        }
    }
    pub fn produced(&self) -> usize {
        self.produced.load(Ordering::SeqCst)
    }
    pub fn dropped(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }
}

pub struct GenBody {
    g: Generated,
    next: usize,
}

impl Drop for GenBody {
    fn drop(&mut self) {
        self.g.dropped.store(true, Ordering::SeqCst);
    }
}

impl Body for GenBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if self.next >= self.g.count {
            return Poll::Ready(None);
        }
        let data = (self.g.make)(self.next);
        self.next += 1;
        self.g.produced.store(self.next, Ordering::SeqCst);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(data)))))
    }
}

/// The server's response body: fed by a channel, or generated on demand.
pub enum ServerBody {
    Chan(ChanBody),
    Gen(GenBody),
}

impl Body for ServerBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            ServerBody::Chan(b) => Pin::new(b).poll_frame(cx),
            ServerBody::Gen(b) => Pin::new(b).poll_frame(cx),
        }
    }
}

pub struct Reply2 {
    pub reply: Reply,
    pub headers: Vec<(&'static str, String)>,
}

impl From<Reply> for Reply2 {
    fn from(reply: Reply) -> Self {
        Reply2 {
            reply,
            headers: Vec::new(),
        }
    }
}

pub type Handler = Arc<dyn Fn(&Rec) -> Reply2 + Send + Sync>;

pub struct Server {
    pub url: String,
    pub port: u16,
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<Mutex<Vec<Rec>>>,
    /// Set when a streamed body noticed the client went away.
    pub streams_closed_by_client: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub fn requests(&self) -> Vec<Rec> {
        self.requests.lock().unwrap().clone()
    }
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
    pub fn closed_streams(&self) -> usize {
        self.streams_closed_by_client.load(Ordering::SeqCst)
    }
}

pub async fn serve(handler: impl Fn(&Rec) -> Reply2 + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_with(handler, None, Listener::Tcp(listener)).await
}

/// Where a test server listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// `127.0.0.1`, a free port: `http://127.0.0.1:PORT/mcp`.
    Tcp,
    /// A Unix socket: `unix:///…/mcp.sock#/mcp`.
    #[cfg(unix)]
    Unix,
}

impl On {
    /// The `Host` header the transport sends to `server`.
    pub fn host(self, server: &Server) -> String {
        match self {
            On::Tcp => format!("127.0.0.1:{}", server.port),
            #[cfg(unix)]
            On::Unix => "localhost".into(),
        }
    }
}

/// [`serve`] or [`serve_unix`].
pub async fn serve_on(on: On, handler: impl Fn(&Rec) -> Reply2 + Send + Sync + 'static) -> Server {
    match on {
        On::Tcp => serve(handler).await,
        #[cfg(unix)]
        On::Unix => serve_unix(handler).await,
    }
}

/// Like [`serve`], over TLS with ALPN `h2` and `http/1.1`; the URL is `https`.
pub async fn serve_tls(
    handler: impl Fn(&Rec) -> Reply2 + Send + Sync + 'static,
    acceptor: tokio_rustls::TlsAcceptor,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve_with(handler, Some(acceptor), Listener::Tcp(listener)).await
}

/// Like [`serve`], on a Unix domain socket in a fresh temporary directory
/// (removed with the server); the URL is `unix:///…/mcp.sock#/mcp` and
/// `port` is 0.
#[cfg(unix)]
pub async fn serve_unix(handler: impl Fn(&Rec) -> Reply2 + Send + Sync + 'static) -> Server {
    let dir = SocketDir::new();
    let listener = tokio::net::UnixListener::bind(dir.path()).unwrap();
    serve_with(handler, None, Listener::Unix(listener, dir)).await
}

pub use test_support::SocketDir;

enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener, SocketDir),
}

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Stream for T {}

impl Listener {
    fn url(&self, tls: bool) -> (String, u16) {
        match self {
            Listener::Tcp(l) => {
                let port = l.local_addr().unwrap().port();
                let scheme = if tls { "https" } else { "http" };
                (format!("{scheme}://127.0.0.1:{port}/mcp"), port)
            }
            #[cfg(unix)]
            Listener::Unix(_, dir) => (dir.url(), 0),
        }
    }

    async fn accept(&self) -> Option<Box<dyn Stream>> {
        match self {
            Listener::Tcp(l) => Some(Box::new(l.accept().await.ok()?.0)),
            #[cfg(unix)]
            Listener::Unix(l, _) => Some(Box::new(l.accept().await.ok()?.0)),
        }
    }
}

async fn serve_with(
    handler: impl Fn(&Rec) -> Reply2 + Send + Sync + 'static,
    tls: Option<tokio_rustls::TlsAcceptor>,
    listener: Listener,
) -> Server {
    let handler: Handler = Arc::new(handler);
    let (url, port) = listener.url(tls.is_some());
    let connections = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let closed = Arc::new(AtomicUsize::new(0));
    let (c, r, cl) = (connections.clone(), requests.clone(), closed.clone());
    let task = tokio::spawn(async move {
        loop {
            let Some(stream) = listener.accept().await else {
                return;
            };
            let conn = c.fetch_add(1, Ordering::SeqCst) + 1;
            let (handler, r, cl) = (handler.clone(), r.clone(), cl.clone());
            let tls = tls.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let (handler, r, cl) = (handler.clone(), r.clone(), cl.clone());
                    async move { Ok::<_, Infallible>(handle(req, conn, &handler, &r, &cl).await) }
                });
                let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                match tls {
                    None => {
                        let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
                    }
                    Some(acceptor) => {
                        let Ok(stream) = acceptor.accept(stream).await else {
                            return;
                        };
                        let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
                    }
                }
            });
        }
    });
    Server {
        url,
        port,
        connections,
        requests,
        streams_closed_by_client: closed,
        task,
    }
}

async fn handle(
    req: Request<Incoming>,
    conn: usize,
    handler: &Handler,
    log: &Mutex<Vec<Rec>>,
    closed: &Arc<AtomicUsize>,
) -> Response<ServerBody> {
    let (parts, body) = req.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let rec = {
        let mut l = log.lock().unwrap();
        let rec = Rec {
            method: parts.method.clone(),
            path: parts
                .uri
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            headers: parts.headers.clone(),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            index: l.len(),
            conn,
            version: parts.version,
        };
        l.push(rec.clone());
        rec
    };
    let Reply2 { reply, headers } = handler(&rec);
    let (tx, rx) = mpsc::unbounded_channel::<Result<Frame<Bytes>, std::io::Error>>();
    let mut b = Response::builder();
    for (k, v) in headers {
        b = b.header(k, v);
    }
    let resp = match reply {
        Reply::Json(status, s) => {
            let _ = tx.send(Ok(Frame::data(Bytes::from(s))));
            b.status(status).header("content-type", "application/json")
        }
        Reply::Raw(status, ct, s) => {
            let _ = tx.send(Ok(Frame::data(Bytes::from(s))));
            let b = b.status(status);
            if ct.is_empty() {
                b
            } else {
                b.header("content-type", ct)
            }
        }
        Reply::Accepted => b.status(StatusCode::ACCEPTED),
        Reply::Hang => return std::future::pending().await,
        Reply::Redirect(status, loc) => b.status(status).header("location", loc),
        Reply::SseGenerated(g) => {
            return b
                .status(200)
                .header("content-type", "text/event-stream")
                .body(ServerBody::Gen(GenBody { g, next: 0 }))
                .unwrap();
        }
        Reply::Sse(pieces) => {
            return streamed(
                b,
                StatusCode::OK,
                "text/event-stream",
                pieces,
                tx,
                rx,
                closed,
            );
        }
        Reply::Stream(status, ct, pieces) => {
            return streamed(b, status, ct, pieces, tx, rx, closed);
        }
        Reply::SseChannel(mut src) => {
            let closed = closed.clone();
            tokio::spawn(async move {
                let mut pieces = Vec::new();
                while let Some(p) = src.recv().await {
                    pieces.clear();
                    pieces.push(p);
                    if !feed(pieces.drain(..), tx.clone(), closed.clone()).await {
                        return;
                    }
                }
            });
            return sse_response(b, rx);
        }
    };
    drop(tx);
    resp.body(ServerBody::Chan(ChanBody(rx, None))).unwrap()
}

/// A body of `pieces` fed by a task, then (if the last piece is
/// [`Piece::Repeat`]) its data forever.
fn streamed(
    b: http::response::Builder,
    status: StatusCode,
    content_type: &'static str,
    mut pieces: Vec<Piece>,
    tx: mpsc::UnboundedSender<Result<Frame<Bytes>, std::io::Error>>,
    rx: mpsc::UnboundedReceiver<Result<Frame<Bytes>, std::io::Error>>,
    closed: &Arc<AtomicUsize>,
) -> Response<ServerBody> {
    let repeat = match pieces.last() {
        Some(Piece::Repeat(s)) => Some(Bytes::from(s.clone())),
        _ => None,
    };
    if repeat.is_some() {
        pieces.pop();
    }
    let closed = closed.clone();
    tokio::spawn(async move { feed(pieces.into_iter(), tx, closed).await });
    b.status(status)
        .header("content-type", content_type)
        .body(ServerBody::Chan(ChanBody(rx, repeat)))
        .unwrap()
}

fn sse_response(
    b: http::response::Builder,
    rx: mpsc::UnboundedReceiver<Result<Frame<Bytes>, std::io::Error>>,
) -> Response<ServerBody> {
    b.status(200)
        .header("content-type", "text/event-stream")
        .body(ServerBody::Chan(ChanBody(rx, None)))
        .unwrap()
}

/// Feeds pieces; returns false once the stream is over (failed or client gone).
async fn feed(
    pieces: impl Iterator<Item = Piece>,
    tx: mpsc::UnboundedSender<Result<Frame<Bytes>, std::io::Error>>,
    closed: Arc<AtomicUsize>,
) -> bool {
    for p in pieces {
        match p {
            Piece::Data(s) => {
                if tx.send(Ok(Frame::data(Bytes::from(s)))).is_err() {
                    closed.fetch_add(1, Ordering::SeqCst);
                    return false;
                }
            }
            Piece::Bytes(b) => {
                if tx.send(Ok(Frame::data(Bytes::from(b)))).is_err() {
                    closed.fetch_add(1, Ordering::SeqCst);
                    return false;
                }
            }
            // Taken off the end by `handle` (the body repeats it itself).
            Piece::Repeat(_) => {}
            Piece::Sleep(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            Piece::Fail => {
                let _ = tx.send(Err(std::io::Error::other("injected failure")));
                return false;
            }
            Piece::KeepAliveForever => loop {
                if tx
                    .send(Ok(Frame::data(Bytes::from_static(b": keep-alive\n\n"))))
                    .is_err()
                {
                    closed.fetch_add(1, Ordering::SeqCst);
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            },
        }
    }
    true
}

/// A body fed by a channel; then, if set, the same bytes forever.
pub struct ChanBody(
    mpsc::UnboundedReceiver<Result<Frame<Bytes>, std::io::Error>>,
    Option<Bytes>,
);

impl Body for ChanBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.0.poll_recv(cx) {
            Poll::Ready(None) => match &self.1 {
                Some(b) => Poll::Ready(Some(Ok(Frame::data(b.clone())))),
                None => Poll::Ready(None),
            },
            other => other,
        }
    }
}

/// A JSON-RPC result for `id`.
pub fn result(id: &Value, result: Value) -> String {
    serde_json::json!({"jsonrpc":"2.0","id":id,"result":result}).to_string()
}

/// An SSE `data:` event.
pub fn event(json: &str) -> Piece {
    Piece::Data(format!("data: {json}\n\n"))
}

pub fn event_id(id: &str, json: &str) -> Piece {
    Piece::Data(format!("id: {id}\ndata: {json}\n\n"))
}

/// Waits until `done()` holds (`test_support::eventually`); panics naming `what`
/// after 5 s. For what the transport does in the background (a POST it
/// started, a stream it dropped): a fixed sleep would be too short on a
/// machine whose cores are busy.
pub async fn until(what: &str, done: impl FnMut() -> bool) {
    assert!(
        test_support::eventually(Duration::from_secs(5), done).await,
        "{what}: not within 5 s"
    );
}
