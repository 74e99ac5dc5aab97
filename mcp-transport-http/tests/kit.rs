//! The transport test kit (`mcp_proto::transport::kit`) against
//! [`HttpTransport`], with a loopback hyper server answering as an MCP
//! server (2025-11-25): `initialize` opens a session, the standalone `GET`
//! stream carries what the peer sends (one SSE event per frame), every
//! other POST is what the transport sent, `DELETE` ends the session.
//! Every check runs twice: over TCP, and over a Unix socket (`unix::`).
#![allow(missing_docs, clippy::unwrap_used)]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_proto::transport::kit::{CheckFuture, DeadPeer, Failure, Harness, Outcome, Peer, Profile};
use mcp_proto::transport::{Transport, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::{CLOSE_TIMEOUT, HttpTransport};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

const MAX_EVENT: usize = 64 * 1024;
const INBOX: usize = 16;

/// The server's shared state.
struct State {
    /// What the transport sent, to the peer; dropped by `DELETE`.
    to_peer: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// The standalone stream's events, taken by the first `GET`.
    stream: Mutex<Option<mpsc::Receiver<Bytes>>>,
    /// Told when the `GET` stream is open.
    opened: Mutex<Option<oneshot::Sender<()>>>,
    /// A hung server: every request waits forever.
    stalled: AtomicBool,
}

/// An SSE body fed by the peer; hyper polls it only when the connection
/// takes more, so a full connection makes the peer's sends wait.
struct Events(mpsc::Receiver<Bytes>);

impl http_body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

type Body = http_body_util::Either<Full<Bytes>, Events>;

fn reply(status: StatusCode, body: Option<Value>) -> Response<Body> {
    let mut r = Response::builder().status(status);
    if body.is_some() {
        r = r.header("content-type", "application/json");
    }
    let text = body.map(|v| v.to_string()).unwrap_or_default();
    r.body(Body::Left(Full::new(Bytes::from(text)))).unwrap()
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    if state.stalled.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    let method = req.method().clone();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    match method {
        Method::GET => {
            let Some(events) = state.stream.lock().unwrap().take() else {
                return reply(StatusCode::METHOD_NOT_ALLOWED, None);
            };
            if let Some(tx) = state.opened.lock().unwrap().take() {
                let _ = tx.send(());
            }
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::Right(Events(events)))
                .unwrap()
        }
        Method::DELETE => {
            state.to_peer.lock().unwrap().take();
            reply(StatusCode::OK, None)
        }
        _ => {
            let text = String::from_utf8_lossy(&body).into_owned();
            let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            match v["method"].as_str() {
                Some("initialize") => {
                    let result = json!({"jsonrpc":"2.0","id":v["id"],"result":{"protocolVersion":"2025-11-25"}});
                    let mut r = reply(StatusCode::OK, Some(result));
                    r.headers_mut()
                        .insert("mcp-session-id", "kit-session".parse().unwrap());
                    r
                }
                Some("notifications/initialized") => reply(StatusCode::ACCEPTED, None),
                m => {
                    if let Some(tx) = state.to_peer.lock().unwrap().as_ref() {
                        let _ = tx.send(text);
                    }
                    match (m, v.get("id")) {
                        (Some(_), Some(id)) => reply(
                            StatusCode::OK,
                            Some(json!({"jsonrpc":"2.0","id":id,"result":{}})),
                        ),
                        _ => reply(StatusCode::ACCEPTED, None),
                    }
                }
            }
        }
    }
}

struct HttpPeer {
    state: Arc<State>,
    events: Option<mpsc::Sender<Bytes>>,
    sent_by_transport: mpsc::UnboundedReceiver<String>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Peer for HttpPeer {
    async fn send(&mut self, text: String) {
        if let Some(tx) = self.events.as_ref() {
            let _ = tx.send(Bytes::from(format!("data: {text}\n\n"))).await;
        }
    }

    async fn recv(&mut self) -> Option<String> {
        self.sent_by_transport.recv().await
    }

    async fn kill(&mut self) {
        // The accept loop owns every connection's task: aborting it drops
        // them all, the listener too.
        self.server.abort();
        let _ = (&mut self.server).await;
        self.events = None;
    }

    async fn stall(&mut self) {
        self.state.stalled.store(true, Ordering::SeqCst);
    }
}

/// Over TCP (`false`) or a Unix socket (`true`).
struct Loopback(bool);

/// Where the server listens, and the transport's URL.
enum Listener {
    Tcp(tokio::net::TcpListener),
    #[cfg(unix)]
    Unix {
        listener: tokio::net::UnixListener,
        /// Removed with the listener.
        _dir: test_support::SocketDir,
    },
}

impl Listener {
    async fn bind(unix: bool) -> (Listener, String) {
        #[cfg(unix)]
        if unix {
            let dir = test_support::SocketDir::new();
            let listener = tokio::net::UnixListener::bind(dir.path()).unwrap();
            let url = dir.url();
            return (
                Listener::Unix {
                    listener,
                    _dir: dir,
                },
                url,
            );
        }
        let _ = unix;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", l.local_addr().unwrap());
        (Listener::Tcp(l), url)
    }

    /// Serves one connection with `svc`, on its own task of `set`.
    async fn accept_into(
        &self,
        set: &mut tokio::task::JoinSet<()>,
        state: Arc<State>,
    ) -> Result<(), ()> {
        fn serve<I>(set: &mut tokio::task::JoinSet<()>, io: I, state: Arc<State>)
        where
            I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
        {
            set.spawn(async move {
                let svc = service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(state, req).await) }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(io), svc)
                    .await;
            });
        }
        match self {
            Listener::Tcp(l) => serve(set, l.accept().await.map_err(drop)?.0, state),
            #[cfg(unix)]
            Listener::Unix { listener: l, .. } => {
                serve(set, l.accept().await.map_err(drop)?.0, state)
            }
        }
        Ok(())
    }
}

impl Harness for Loopback {
    type Transport = HttpTransport;
    type Peer = HttpPeer;

    async fn connect(&self) -> (HttpTransport, HttpPeer) {
        let (to_peer, sent_by_transport) = mpsc::unbounded_channel();
        let (events, stream) = mpsc::channel(1);
        let (opened, is_open) = oneshot::channel();
        let state = Arc::new(State {
            to_peer: Mutex::new(Some(to_peer)),
            stream: Mutex::new(Some(stream)),
            opened: Mutex::new(Some(opened)),
            stalled: AtomicBool::new(false),
        });
        let (listener, url) = Listener::bind(self.0).await;
        let shared = state.clone();
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while listener
                .accept_into(&mut connections, shared.clone())
                .await
                .is_ok()
            {}
        });

        let mut t = HttpTransport::builder(url)
            .standalone_stream(true)
            .max_sse_event_size(MAX_EVENT)
            .max_buffered_messages(INBOX)
            .build()
            .unwrap();
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}});
        t.send(init.to_string().parse().unwrap()).await.unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(10), t.recv()).await;
        assert!(matches!(answer, Ok(Some(Ok(_)))), "initialize: {answer:?}");
        Pin::new(&mut t).set_protocol_version(ProtocolVersion::V2025_11_25);
        let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        t.send(initialized.to_string().parse().unwrap())
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), is_open)
            .await
            .expect("the standalone GET stream did not open within 10 s")
            .unwrap();
        let peer = HttpPeer {
            state,
            events: Some(events),
            sent_by_transport,
            server,
        };
        (t, peer)
    }

    fn profile(&self) -> Profile {
        Profile::new()
            .dead_peer(DeadPeer::PerRequest)
            .max_message_size(MAX_EVENT)
            .close_bound(CLOSE_TIMEOUT + Duration::from_secs(2))
            // The inbox (16 messages), hyper's read buffer and the loopback
            // socket buffers (autotuned: a few MB).
            .recv_buffer_bound(16 * 1024 * 1024)
    }
}

fn block_on(check: CheckFuture<'_>) -> Result<Outcome, Failure> {
    tokio::runtime::Runtime::new().unwrap().block_on(check)
}

/// Each message is its own POST: nothing to fill.
macro_rules! kit_tests {
    ($harness:expr) => {
        mcp_proto::transport_kit_tests!(
            $harness,
            block_on,
            skip {
                SendBackpressure: "each message is its own POST, spawned by start_send; \
                poll_ready never waits (no connection to fill)",
            }
        );
    };
}

kit_tests!(Loopback(false));

/// The same checks over a Unix socket.
#[cfg(unix)]
mod unix {
    use super::*;

    kit_tests!(Loopback(true));
}
