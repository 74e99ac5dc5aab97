//! A misbehaving MCP server over Streamable HTTP, in-process, for the chaos
//! soak (`tests/soak/`) and the oversized-answer tests
//! (`tests/dropped_answer.rs`).
//!
//! It speaks both eras: 2025-11-25 with sessions (`Mcp-Session-Id` from
//! `initialize`, 404 for an id it does not know, `DELETE`, SSE resumption
//! by `GET` + `Last-Event-ID`) and 2026-07-28 stateless (`server/discover`,
//! `resultType`). Its one tool, `echo`, returns its `text` argument.
//!
//! With [`Mode::Chaos`], each `tools/call` rolls a die: the answer is
//! delayed (and so reordered), dropped (held, then the connection cut),
//! sent twice on its stream, also sent on another call's stream, replaced
//! by garbage, by JSON that is not JSON-RPC, by a broken SSE event, by a
//! 5xx (with or without a JSON-RPC error body) or a JSON-RPC error, cut
//! mid-body (an SSE stream with event ids, which a legacy client resumes),
//! over the client's limit (a JSON body or an SSE event), or the session
//! expires (legacy: 404). [`ChaosHttp::crash`] drops every connection and
//! session and listens again on the same port after a pause.
//!
//! It counts what it saw per call (the `text` argument is unique per call
//! in the soak): POSTs, and resumption GETs per stream, for the re-issue
//! budget check, and open connections, for the orphan check.
#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// How the server answers `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every answer well formed (JSON or SSE, alternating).
    Clean,
    /// Misbehave (see the module docs); oversized answers are `big` bytes.
    Chaos { seed: u64, big: usize },
    /// Every `tools/call` answered with a valid JSON-RPC response of `size`
    /// bytes as one JSON body (`sse: false`, with a `Content-Length`) or
    /// one SSE event.
    Big { size: usize, sse: bool },
}

/// What the server counted.
#[derive(Debug, Default)]
pub struct Counts {
    /// POSTs of `tools/call` per `text` argument.
    pub posts: HashMap<String, u32>,
    /// Resumption GETs per response stream.
    pub resumes: HashMap<u64, u32>,
    /// Chaos actions taken, by name.
    pub actions: HashMap<&'static str, u64>,
}

struct Stream {
    /// The whole answer event, sent on resumption.
    answer: String,
}

struct State {
    mode: Mode,
    rng: Mutex<u64>,
    sessions: Mutex<HashSet<String>>,
    next_id: AtomicU64,
    /// Broken legacy SSE streams a GET with `Last-Event-ID` may resume.
    streams: Mutex<HashMap<u64, Stream>>,
    /// Recent answers (whole SSE events), sent again on other streams.
    recent: Mutex<Vec<String>>,
    counts: Mutex<Counts>,
    connections: Arc<AtomicUsize>,
}

/// The running server. Dropping it stops it.
pub struct ChaosHttp {
    pub url: String,
    port: u16,
    state: Arc<State>,
    tasks: Mutex<JoinSet<()>>,
    accept: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for ChaosHttp {
    fn drop(&mut self) {
        if let Some(a) = self.accept.lock().unwrap().take() {
            a.abort();
        }
        self.tasks.lock().unwrap().abort_all();
    }
}

fn bind(port: u16) -> std::io::Result<TcpListener> {
    let s = TcpSocket::new_v4()?;
    s.set_reuseaddr(true)?;
    s.bind(([127, 0, 0, 1], port).into())?;
    s.listen(1024)
}

impl ChaosHttp {
    pub async fn start(mode: Mode) -> Arc<ChaosHttp> {
        let listener = bind(0).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seed = match mode {
            Mode::Chaos { seed, .. } => seed,
            _ => 1,
        };
        let server = Arc::new(ChaosHttp {
            url: format!("http://127.0.0.1:{port}/mcp"),
            port,
            state: Arc::new(State {
                mode,
                rng: Mutex::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
                sessions: Mutex::default(),
                next_id: AtomicU64::new(1),
                streams: Mutex::default(),
                recent: Mutex::default(),
                counts: Mutex::default(),
                connections: Arc::default(),
            }),
            tasks: Mutex::new(JoinSet::new()),
            accept: Mutex::new(None),
        });
        server.listen(listener);
        server
    }

    fn listen(self: &Arc<Self>, listener: TcpListener) {
        let weak = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            loop {
                let stream = match listener.accept().await {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        eprintln!("chaos http: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let Some(server) = weak.upgrade() else {
                    return;
                };
                let state = server.state.clone();
                let open = Open::new(state.connections.clone());
                server.tasks.lock().unwrap().spawn(async move {
                    let _open = open;
                    let service = service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(&state, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                // Reap finished connections so the set stays small.
                let mut tasks = server.tasks.lock().unwrap();
                while tasks.try_join_next().is_some() {}
            }
        });
        *self.accept.lock().unwrap() = Some(task);
    }

    /// Crashes: every connection cut, every session and stream forgotten,
    /// nothing listening for `down`; then the server starts again on the
    /// same port.
    pub async fn crash(self: &Arc<Self>, down: Duration) {
        let accept = self.accept.lock().unwrap().take();
        if let Some(a) = accept {
            a.abort();
            let _ = a.await;
        }
        self.tasks.lock().unwrap().abort_all();
        self.state.sessions.lock().unwrap().clear();
        self.state.streams.lock().unwrap().clear();
        self.state.recent.lock().unwrap().clear();
        tokio::time::sleep(down).await;
        loop {
            match bind(self.port) {
                Ok(l) => break self.listen(l),
                Err(e) => {
                    eprintln!("chaos http: cannot listen again on {}: {e}", self.port);
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
            }
        }
    }

    /// TCP connections open on the server side now.
    pub fn open_connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Takes the counts so far (and starts new ones).
    pub fn take_counts(&self) -> Counts {
        std::mem::take(&mut *self.state.counts.lock().unwrap())
    }

    /// Live legacy sessions.
    pub fn sessions(&self) -> usize {
        self.state.sessions.lock().unwrap().len()
    }
}

/// Counts an open connection while alive.
struct Open(Arc<AtomicUsize>);

impl Open {
    fn new(n: Arc<AtomicUsize>) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Open(n)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body fed piece by piece; an `Err` cuts the connection.
pub struct ChanBody(mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl Body for ChanBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}

/// One step of a streamed body.
enum Piece {
    Data(String),
    Sleep(Duration),
    /// Cut the connection here.
    Cut,
}

type Resp = Response<ChanBody>;

fn body_of(pieces: Vec<Piece>) -> ChanBody {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        for p in pieces {
            let sent = match p {
                Piece::Data(d) => tx.send(Ok(Bytes::from(d))).await,
                Piece::Sleep(d) => {
                    tokio::time::sleep(d).await;
                    Ok(())
                }
                Piece::Cut => {
                    // Let what was sent reach the wire first.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let _ = tx
                        .send(Err(std::io::Error::other("chaos: connection cut")))
                        .await;
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        }
    });
    ChanBody(rx)
}

fn respond(status: StatusCode, content_type: &str, pieces: Vec<Piece>) -> Resp {
    let mut b = Response::builder().status(status);
    if !content_type.is_empty() {
        b = b.header("content-type", content_type);
    }
    b.body(body_of(pieces)).unwrap()
}

fn json_resp(status: StatusCode, body: String) -> Resp {
    let len = body.len();
    let mut r = respond(status, "application/json", vec![Piece::Data(body)]);
    r.headers_mut().insert("content-length", len.into());
    r
}

fn sse_event(id: Option<String>, data: &str) -> String {
    match id {
        Some(id) => format!("id: {id}\nevent: message\ndata: {data}\n\n"),
        None => format!("event: message\ndata: {data}\n\n"),
    }
}

impl State {
    fn roll(&self, n: u64) -> u64 {
        let mut r = self.rng.lock().unwrap();
        *r ^= *r >> 12;
        *r ^= *r << 25;
        *r ^= *r >> 27;
        r.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }

    fn act(&self, name: &'static str) {
        *self.counts.lock().unwrap().actions.entry(name).or_default() += 1;
    }
}

async fn handle(state: &Arc<State>, req: Request<Incoming>) -> Resp {
    let modern = req
        .headers()
        .get("mcp-protocol-version")
        .is_some_and(|v| v.as_bytes() == b"2026-07-28");
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let last_event = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match *req.method() {
        Method::POST => {}
        Method::DELETE => {
            if let Some(s) = &session {
                state.sessions.lock().unwrap().remove(s);
            }
            return respond(StatusCode::OK, "", vec![]);
        }
        Method::GET => return resume(state, session, last_event),
        _ => return respond(StatusCode::METHOD_NOT_ALLOWED, "", vec![]),
    }
    let Ok(body) = http_body_util::Limited::new(req.into_body(), 1 << 20)
        .collect()
        .await
    else {
        return respond(StatusCode::BAD_REQUEST, "text/plain", vec![]);
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
        return respond(StatusCode::BAD_REQUEST, "text/plain", vec![]);
    };
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    let id = msg.get("id").cloned();
    let params = msg.get("params").cloned().unwrap_or(Value::Null);

    if method == "tools/call" {
        let text = params["arguments"]["text"].as_str().unwrap_or_default();
        *state
            .counts
            .lock()
            .unwrap()
            .posts
            .entry(text.to_owned())
            .or_default() += 1;
    }
    // Sessions (legacy): made by `initialize`, required after.
    let mut new_session = None;
    if !modern && method == "initialize" {
        let s = format!("chaos-{}", state.next_id.fetch_add(1, Ordering::SeqCst));
        state.sessions.lock().unwrap().insert(s.clone());
        new_session = Some(s);
    } else if !modern && method != "server/discover" {
        match &session {
            Some(s) if state.sessions.lock().unwrap().contains(s) => {}
            Some(_) => return respond(StatusCode::NOT_FOUND, "text/plain", vec![]),
            None => return respond(StatusCode::BAD_REQUEST, "text/plain", vec![]),
        }
    }
    // Chaos: the session expires under a call (legacy).
    if !modern
        && method == "tools/call"
        && matches!(state.mode, Mode::Chaos { .. })
        && state.roll(1000) < 8
    {
        // Now, or while the call was being worked on.
        if state.roll(2) == 0 {
            tokio::time::sleep(Duration::from_millis(state.roll(1500))).await;
        }
        if let Some(s) = &session {
            state.sessions.lock().unwrap().remove(s);
        }
        state.act("session expired");
        return respond(StatusCode::NOT_FOUND, "text/plain", vec![]);
    }
    let Some(id) = id.filter(|_| !method.is_empty()) else {
        // A notification or a response: accepted.
        return respond(StatusCode::ACCEPTED, "", vec![]);
    };
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": params["protocolVersion"].as_str().filter(|v| *v != "2026-07-28").unwrap_or("2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "chaos-http", "version": "1.0.0"},
        }),
        "server/discover" => json!({
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "chaos-http", "version": "1.0.0"}},
        }),
        "ping" => json!({}),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => {
            let text = params["arguments"]["text"].as_str().unwrap_or_default();
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        _ => {
            let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("no method {method}")}});
            return json_resp(StatusCode::OK, e.to_string());
        }
    };
    let mut result = result;
    if modern && let Some(o) = result.as_object_mut() {
        o.insert("resultType".into(), json!("complete"));
    }
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let mut resp = if method == "tools/call" {
        call(state, modern, &id, answer).await
    } else {
        json_resp(StatusCode::OK, answer)
    };
    if let Some(s) = new_session {
        resp.headers_mut()
            .insert("mcp-session-id", s.parse().unwrap());
    }
    resp
}

/// `tools/call`: the answer, as the mode says.
async fn call(state: &Arc<State>, modern: bool, id: &Value, answer: String) -> Resp {
    let big = match state.mode {
        Mode::Clean => None,
        Mode::Chaos { big, .. } => Some(big),
        Mode::Big { size, sse } => return big_answer(id, size, sse),
    };
    let id_json = id.to_string();
    let sse_id = || state.next_id.fetch_add(1, Ordering::SeqCst);
    let Some(big) = big else {
        return if state.roll(2) == 0 {
            json_resp(StatusCode::OK, answer)
        } else {
            respond(
                StatusCode::OK,
                "text/event-stream",
                vec![Piece::Data(sse_event(None, &answer))],
            )
        };
    };
    let event = sse_event(None, &answer);
    {
        let mut recent = state.recent.lock().unwrap();
        if recent.len() >= 8 {
            recent.remove(0);
        }
        recent.push(event.clone());
    }
    let sse = |pieces| respond(StatusCode::OK, "text/event-stream", pieces);
    match state.roll(1000) {
        // Dropped: held past the client's timeout, then the connection cut.
        0..20 => {
            state.act("dropped");
            sse(vec![Piece::Sleep(Duration::from_secs(3)), Piece::Cut])
        }
        20..40 => {
            state.act("duplicated");
            sse(vec![Piece::Data(event.clone()), Piece::Data(event)])
        }
        // Another call's answer first (already answered, or not yet).
        40..60 => {
            state.act("foreign answer");
            let other = {
                let recent = state.recent.lock().unwrap();
                recent[state.roll(recent.len() as u64) as usize].clone()
            };
            sse(vec![Piece::Data(other), Piece::Data(event)])
        }
        60..80 => {
            state.act("garbage body");
            json_resp(
                StatusCode::OK,
                "chaos: \u{1} garbage that is not JSON".into(),
            )
        }
        80..95 => {
            state.act("not JSON-RPC");
            json_resp(
                StatusCode::OK,
                format!("{{\"jsonrpc\":\"1.0\",\"id\":{id_json},\"result\":{{}}}}"),
            )
        }
        95..110 => {
            state.act("broken SSE event");
            let half = &answer[..answer.len() / 2];
            sse(vec![Piece::Data(format!(
                "event: message\ndata: {half}\n\n"
            ))])
        }
        110..170 => {
            state.act("delayed");
            let wait = Duration::from_millis(state.roll(400));
            if state.roll(2) == 0 {
                let len = answer.len();
                let mut r = respond(
                    StatusCode::OK,
                    "application/json",
                    vec![Piece::Sleep(wait), Piece::Data(answer)],
                );
                r.headers_mut().insert("content-length", len.into());
                r
            } else {
                sse(vec![Piece::Sleep(wait), Piece::Data(event)])
            }
        }
        170..190 => {
            state.act("503");
            respond(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain",
                vec![Piece::Data("chaos: overloaded".into())],
            )
        }
        190..200 => {
            state.act("500 with JSON-RPC error");
            json_resp(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"error\":{{\"code\":-32603,\"message\":\"chaos: refused\"}}}}"
                ),
            )
        }
        200..210 => {
            state.act("JSON-RPC error");
            json_resp(
                StatusCode::OK,
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"error\":{{\"code\":-32603,\"message\":\"chaos: refused\"}}}}"
                ),
            )
        }
        // Cut mid-body: a JSON body short of its Content-Length, or an SSE
        // stream after its priming event (legacy: resumable by GET).
        210..225 => {
            if state.roll(2) == 0 {
                state.act("cut JSON body");
                let len = answer.len();
                let half = answer[..len / 2].to_owned();
                let mut r = respond(
                    StatusCode::OK,
                    "application/json",
                    vec![Piece::Data(half), Piece::Cut],
                );
                r.headers_mut().insert("content-length", len.into());
                r
            } else {
                state.act("cut SSE stream");
                let n = sse_id();
                if !modern {
                    state
                        .streams
                        .lock()
                        .unwrap()
                        .insert(n, Stream { answer: event });
                }
                let half = answer[..answer.len() / 2].to_owned();
                sse(vec![
                    Piece::Data(format!("id: {n}\nretry: 50\ndata:\n\n")),
                    Piece::Data(format!("event: message\ndata: {half}")),
                    Piece::Cut,
                ])
            }
        }
        225..230 => {
            state.act("oversized JSON body");
            big_answer(id, big, false)
        }
        230..235 => {
            state.act("oversized SSE event");
            big_answer(id, big, true)
        }
        _ => {
            if state.roll(2) == 0 {
                json_resp(StatusCode::OK, answer)
            } else {
                sse(vec![Piece::Data(event)])
            }
        }
    }
}

/// A valid JSON-RPC answer of about `size` bytes.
fn big_answer(id: &Value, size: usize, sse: bool) -> Resp {
    let head = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
    );
    let tail = "\"}],\"isError\":false}}";
    let pad = size.saturating_sub(head.len() + tail.len());
    // In 1 MiB pieces, so the server does not hold it all twice.
    let chunk = "x".repeat(1 << 20);
    let mut pieces = Vec::new();
    let mut prefix = String::new();
    if sse {
        prefix.push_str("event: message\ndata: ");
    }
    prefix.push_str(&head);
    pieces.push(Piece::Data(prefix));
    let mut left = pad;
    while left > 0 {
        let n = left.min(chunk.len());
        pieces.push(Piece::Data(chunk[..n].to_owned()));
        left -= n;
    }
    pieces.push(Piece::Data(if sse {
        format!("{tail}\n\n")
    } else {
        tail.to_owned()
    }));
    if sse {
        respond(StatusCode::OK, "text/event-stream", pieces)
    } else {
        let len = head.len() + pad + tail.len();
        let mut r = respond(StatusCode::OK, "application/json", pieces);
        r.headers_mut().insert("content-length", len.into());
        r
    }
}

/// `GET`: a resumption (`Last-Event-ID` of a stream we cut) gets the
/// answer, once in five cut again; anything else 405 (no standalone stream).
fn resume(state: &Arc<State>, session: Option<String>, last: Option<u64>) -> Resp {
    if let Some(s) = &session
        && !state.sessions.lock().unwrap().contains(s)
    {
        return respond(StatusCode::NOT_FOUND, "text/plain", vec![]);
    }
    let Some(n) = last else {
        return respond(StatusCode::METHOD_NOT_ALLOWED, "", vec![]);
    };
    *state.counts.lock().unwrap().resumes.entry(n).or_default() += 1;
    let answer = state
        .streams
        .lock()
        .unwrap()
        .get(&n)
        .map(|s| s.answer.clone());
    let Some(answer) = answer else {
        // Forgotten (a crash): an empty stream, which ends the resumption.
        return respond(StatusCode::OK, "text/event-stream", vec![]);
    };
    if state.roll(5) == 0 {
        state.act("resumption cut");
        return respond(
            StatusCode::OK,
            "text/event-stream",
            vec![Piece::Data(": resuming\n\n".into()), Piece::Cut],
        );
    }
    state.streams.lock().unwrap().remove(&n);
    respond(
        StatusCode::OK,
        "text/event-stream",
        vec![Piece::Data(answer)],
    )
}
