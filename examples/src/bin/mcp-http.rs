//! `mcp-http`: starts a local Streamable HTTP endpoint serving the built-in
//! demo server, then connects to it with the client over HTTP, lists the
//! tools and calls one. Offline; loopback only.
//!
//! ```text
//! cargo run --bin mcp-http
//! cargo run --bin mcp-http -- --serve   # only serve: prints the URL, runs until killed
//! ```
//!
//! `--serve` is the server `cargo xtask bridge-bench` puts behind the
//! bridges it compares: cheap enough that what a bridge adds shows.
//!
//! The endpoint is deliberately small: every POST carries one JSON-RPC
//! message; a request is answered with `application/json` (the final
//! response), a notification with `202 Accepted`. No sessions, so it serves
//! both the 2026-07-28 era and stateless legacy clients.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_client::Client;
use mcp_proto::error::chain;
use mcp_proto::{Message, RequestId};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex as AsyncMutex, oneshot};

type Waiters = Arc<Mutex<HashMap<RequestId, oneshot::Sender<Bytes>>>>;

/// The demo server behind an in-memory pipe, with replies routed by id.
struct Backend {
    to_server: AsyncMutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    waiters: Waiters,
}

impl Backend {
    fn start() -> Arc<Self> {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (server_r, server_w) = tokio::io::split(theirs);
        tokio::spawn(examples::demo_server::serve(server_r, server_w));
        let (r, w) = tokio::io::split(ours);
        let waiters: Waiters = Arc::default();
        let w2 = waiters.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(r).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(msg) = Message::from_slice(line.as_bytes()) else {
                    continue;
                };
                // Notifications (progress) are not forwarded in this JSON-only endpoint.
                let Some(id) = msg.id().cloned().filter(|_| msg.method().is_none()) else {
                    continue;
                };
                let tx = w2.lock().ok().and_then(|mut m| m.remove(&id));
                if let Some(tx) = tx {
                    let _ = tx.send(Bytes::from(line));
                }
            }
        });
        Arc::new(Backend {
            to_server: AsyncMutex::new(w),
            waiters,
        })
    }

    async fn handle(&self, body: Bytes) -> Response<Full<Bytes>> {
        let msg = match Message::from_slice(&body) {
            Ok(m) => m,
            Err(e) => return plain(StatusCode::BAD_REQUEST, e.to_string()),
        };
        let rx = match &msg {
            Message::Request(r) => {
                let (tx, rx) = oneshot::channel();
                if let Ok(mut m) = self.waiters.lock() {
                    m.insert(r.id.clone(), tx);
                }
                Some(rx)
            }
            _ => None,
        };
        let mut line = msg.to_vec();
        line.push(b'\n');
        if self.to_server.lock().await.write_all(&line).await.is_err() {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the demo server is gone".into(),
            );
        }
        match rx {
            None => Response::builder()
                .status(StatusCode::ACCEPTED)
                .body(Full::new(Bytes::new()))
                .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))),
            Some(rx) => match rx.await {
                Ok(reply) => Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(reply))
                    .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))),
                Err(_) => plain(StatusCode::SERVICE_UNAVAILABLE, "no reply".into()),
            },
        }
    }
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r
}

async fn route(
    backend: Arc<Backend>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(plain(StatusCode::NOT_FOUND, "not found".into()));
    }
    if req.method() != Method::POST {
        return Ok(plain(StatusCode::METHOD_NOT_ALLOWED, "POST only".into()));
    }
    match Limited::new(req.into_body(), 16 << 20).collect().await {
        Ok(body) => Ok(backend.handle(body.to_bytes()).await),
        Err(e) => Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, chain(&*e).to_string())),
    }
}

/// Serves the demo server at `http://127.0.0.1:PORT/mcp`; returns the URL.
async fn start_endpoint() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let backend = Backend::start();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let backend = backend.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| route(backend.clone(), req));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(url)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = start_endpoint().await?;
    if std::env::args().nth(1).as_deref() == Some("--serve") {
        println!("{url}");
        std::future::pending::<()>().await;
    }
    println!("endpoint: {url}");
    let transport = mcp_transport_http::HttpTransport::new(&url)?;
    let client = Client::builder("mcp-http-example", env!("CARGO_PKG_VERSION"))
        .connect(transport)
        .await?;
    let info = client.server().ok_or("no server info")?;
    println!(
        "connected to {} {} over Streamable HTTP, protocol {}",
        info.implementation.name, info.implementation.version, info.protocol_version
    );
    for tool in client.list_all::<mcp_proto::schema::Tool>().await? {
        println!(
            "  tool {}: {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }
    let result = client
        .call_tool("echo", json!({"text": "hello over HTTP"}))
        .await?;
    let text: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
    println!("echo -> {}", text.join("\n"));
    client.close().await;
    Ok(())
}
