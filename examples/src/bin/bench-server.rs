//! `bench-server`: the reference server of the per-call benchmark (`cargo
//! xtask bench`). Written by hand on serde_json and hyper, with no MCP
//! library, so that it costs every client the same, and as little as
//! possible: the echoed text is the request's JSON string token copied
//! verbatim (never unescaped or escaped again), every other answer is a
//! constant.
//!
//! ```text
//! bench-server [--stdio] [--modern]          newline-delimited JSON-RPC on stdin/stdout
//! bench-server --http PORT [--modern]        Streamable HTTP on http://127.0.0.1:PORT/mcp
//! ```
//!
//! - `initialize`: the client's protocol version when it is one of
//!   2024-11-05 … 2025-11-25, else 2025-06-18; capabilities
//!   `{"tools":{"listChanged":false}}`. Over HTTP it hands out an
//!   `Mcp-Session-Id`, which every later request of the session carries
//!   (an unknown one is 404; `DELETE` ends it, `GET` is 405).
//! - `tools/list`: one tool, `echo`, one page. `tools/call echo`:
//!   `{"content":[{"type":"text","text":T}]}`. `ping`: `{}`. A
//!   notification or a response: nothing (HTTP 202). Anything else: -32601.
//! - `--modern` adds the 2026-07-28 revision beside the legacy one:
//!   `server/discover`, and requests whose `_meta` names protocol
//!   2026-07-28 (over HTTP without a session, and checked against their
//!   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, the
//!   name plain, as `echo` needs no Base64: a mismatch is HTTP 400). Their results carry `"resultType":"complete"`.
//!   Without it, `server/discover` is -32601, as from a legacy server.
//!
//! stdio runs on one thread with blocking IO and writes its answers only
//! when no further complete request is buffered: answers to concurrent
//! requests go out in one write, and a lone request's at once. It exits at
//! the end of its input. HTTP runs hyper (HTTP/1.1, keep-alive,
//! `TCP_NODELAY`) on a current-thread runtime; with `--http 0` it picks a
//! free port, and either way prints `bench-server: listening on
//! http://ADDR/mcp` on stderr.

use std::borrow::Cow;
use std::collections::HashSet;
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;

const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";
const INSTRUCTIONS: &str = "Reference server for MCP client benchmarks";

const TOOLS: &str = r#"[{"name":"echo","description":"Echoes the text argument back unchanged","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"Text to echo"}},"required":["text"]}}]"#;

/// The legacy answers' constant results.
fn tools_list() -> String {
    format!(r#"{{"tools":{TOOLS}}}"#)
}

fn modern_tools_list() -> String {
    format!(r#"{{"resultType":"complete","tools":{TOOLS},"ttlMs":3600000,"cacheScope":"public"}}"#)
}

fn discover() -> String {
    format!(
        r#"{{"resultType":"complete","supportedVersions":["2024-11-05","2025-03-26","2025-06-18","2025-11-25","{MODERN}"],"capabilities":{{"tools":{{"listChanged":false}}}},"instructions":"{INSTRUCTIONS}","ttlMs":3600000,"cacheScope":"public","_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"bench-server","version":"0.1.0"}}}}}}"#
    )
}

/// A received message, as far as the server reads it.
#[derive(Deserialize)]
struct Received<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(borrow, default, rename = "protocolVersion")]
    protocol_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "io.modelcontextprotocol/clientCapabilities")]
    client_capabilities: Option<&'a RawValue>,
}

/// The 2026-07-28 headers of an HTTP request (`None` on stdio).
struct Headers<'a> {
    version: Option<&'a str>,
    method: Option<&'a str>,
    name: Option<&'a str>,
}

/// What answering one message gave.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// Nothing to send (a notification or a response).
    None,
    /// A JSON-RPC response.
    Json(Vec<u8>),
    /// A successful `initialize` (HTTP: a new session).
    Initialized(Vec<u8>),
    /// A 2026-07-28 request the server refuses with HTTP 400.
    BadRequest(Vec<u8>),
    /// A 2026-07-28 request: no session over HTTP.
    Stateless(Vec<u8>),
}

fn result(id: &RawValue, result: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(result.len() + 40);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}

fn error(id: Option<&RawValue>, code: i32, message: &str) -> Vec<u8> {
    let id = id.map_or("null", RawValue::get);
    let message = serde_json::Value::from(message);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
        .into_bytes()
}

/// `tools/call echo`: the text token copied as it came.
fn echo(id: &RawValue, params: &Params<'_>, modern: bool) -> Vec<u8> {
    if params.name.as_deref() != Some("echo") {
        return error(Some(id), -32602, "unknown tool: only `echo` exists");
    }
    let Some(text) = params
        .arguments
        .as_ref()
        .and_then(|a| a.text)
        .filter(|t| t.get().starts_with('"'))
    else {
        return error(Some(id), -32602, "echo needs a string argument `text`");
    };
    let head: &[u8] = if modern {
        br#","result":{"resultType":"complete","content":[{"type":"text","text":"#
    } else {
        br#","result":{"content":[{"type":"text","text":"#
    };
    let mut out = Vec::with_capacity(text.get().len() + 100);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(head);
    out.extend_from_slice(text.get().as_bytes());
    out.extend_from_slice(b"}]}}");
    out
}

/// Answers one message. `modern`: `--modern`; `headers`: over HTTP.
fn answer(msg: &[u8], modern: bool, headers: Option<&Headers<'_>>) -> Answer {
    let m: Received<'_> = match serde_json::from_slice(msg) {
        Ok(m) => m,
        Err(e) => return Answer::Json(error(None, -32700, &format!("parse error: {e}"))),
    };
    let (Some(id), Some(method)) = (m.id, m.method.as_deref()) else {
        return Answer::None;
    };
    let params = m.params.unwrap_or_default();
    let meta_version = params
        .meta
        .as_ref()
        .and_then(|m| m.protocol_version.as_deref());
    let is_modern = modern
        && method != "initialize"
        && (method == "server/discover"
            || meta_version.is_some_and(|v| !LEGACY_VERSIONS.contains(&v))
            || headers.and_then(|h| h.version) == Some(MODERN));
    if is_modern {
        return modern_answer(id, method, &params, meta_version, headers);
    }
    Answer::Json(match method {
        "tools/call" => echo(id, &params, false),
        "ping" => result(id, "{}"),
        "tools/list" => result(id, &tools_list()),
        "initialize" => {
            let version = params
                .protocol_version
                .as_deref()
                .filter(|v| LEGACY_VERSIONS.contains(v))
                .unwrap_or("2025-06-18");
            let init = format!(
                r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{"listChanged":false}}}},"serverInfo":{{"name":"bench-server","version":"0.1.0"}},"instructions":"{INSTRUCTIONS}"}}"#
            );
            return Answer::Initialized(result(id, &init));
        }
        other => error(Some(id), -32601, &format!("method not found: {other}")),
    })
}

/// A 2026-07-28 request: `server/discover` as it comes; any other, its
/// headers (HTTP), then its `_meta`, then the method.
fn modern_answer(
    id: &RawValue,
    method: &str,
    params: &Params<'_>,
    version: Option<&str>,
    headers: Option<&Headers<'_>>,
) -> Answer {
    // The probe that finds the era: nothing to check it against yet.
    if method == "server/discover" {
        return Answer::Stateless(result(id, &discover()));
    }
    if let Some(h) = headers {
        let mismatch = if h.version != version {
            Some("MCP-Protocol-Version differs from the _meta protocol version")
        } else if h.method != Some(method) {
            Some("Mcp-Method differs from the method")
        } else if method == "tools/call" && h.name != params.name.as_deref() {
            Some("Mcp-Name differs from the tool's name")
        } else {
            None
        };
        if let Some(why) = mismatch {
            return Answer::BadRequest(error(Some(id), -32020, &format!("Header mismatch: {why}")));
        }
    }
    let capabilities = params
        .meta
        .as_ref()
        .and_then(|m| m.client_capabilities)
        .is_some_and(|c| c.get().starts_with('{'));
    if version.is_none() || !capabilities {
        return Answer::Json(error(
            Some(id),
            -32602,
            "_meta needs io.modelcontextprotocol/protocolVersion and clientCapabilities",
        ));
    }
    if version != Some(MODERN) {
        return Answer::BadRequest(error(Some(id), -32022, "Unsupported protocol version"));
    }
    Answer::Stateless(match method {
        "tools/call" => echo(id, params, true),
        "tools/list" => result(id, &modern_tools_list()),
        other => error(Some(id), -32601, &format!("method not found: {other}")),
    })
}

// ---- stdio ----

fn run_stdio(modern: bool) -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(256 * 1024, std::io::stdin());
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::with_capacity(64 * 1024);
    let mut out = Vec::with_capacity(64 * 1024);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let msg = line.trim_ascii();
        if !msg.is_empty() {
            match answer(msg, modern, None) {
                Answer::None => {}
                Answer::Json(a)
                | Answer::Initialized(a)
                | Answer::BadRequest(a)
                | Answer::Stateless(a) => {
                    out.extend_from_slice(&a);
                    out.push(b'\n');
                }
            }
        }
        // Write once nothing more is waiting: one write for a burst.
        if !out.is_empty() && !input.buffer().contains(&b'\n') {
            stdout.write_all(&out)?;
            stdout.flush()?;
            out.clear();
            out.shrink_to(1024 * 1024);
        }
    }
}

// ---- Streamable HTTP ----

struct Sessions {
    modern: bool,
    open: Mutex<HashSet<String>>,
    next: AtomicU64,
}

fn plain(status: StatusCode) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = status;
    r
}

fn json(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

async fn serve(
    req: Request<Incoming>,
    sessions: Arc<Sessions>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(plain(StatusCode::NOT_FOUND));
    }
    let session = header(req.headers(), "mcp-session-id").map(str::to_owned);
    let open = |s: &str| {
        sessions
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(s)
    };
    match *req.method() {
        Method::POST => {}
        Method::DELETE => {
            if let Some(s) = session {
                let mut open = sessions.open.lock().unwrap_or_else(PoisonError::into_inner);
                open.remove(&s);
            }
            return Ok(plain(StatusCode::OK));
        }
        _ => return Ok(plain(StatusCode::METHOD_NOT_ALLOWED)),
    }
    if session.as_deref().is_some_and(|s| !open(s)) {
        return Ok(plain(StatusCode::NOT_FOUND));
    }
    let (parts, body) = req.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return Ok(plain(StatusCode::BAD_REQUEST));
    };
    let headers = Headers {
        version: header(&parts.headers, "mcp-protocol-version"),
        method: header(&parts.headers, "mcp-method"),
        name: header(&parts.headers, "mcp-name"),
    };
    Ok(
        match answer(body.trim_ascii(), sessions.modern, Some(&headers)) {
            Answer::None => plain(StatusCode::ACCEPTED),
            Answer::Json(a) | Answer::Stateless(a) => json(StatusCode::OK, a),
            Answer::BadRequest(a) => json(StatusCode::BAD_REQUEST, a),
            Answer::Initialized(a) => {
                let n = sessions.next.fetch_add(1, Ordering::Relaxed);
                let id = format!("bench-{}-{n}", std::process::id());
                let mut r = json(StatusCode::OK, a);
                if let Ok(v) = HeaderValue::from_str(&id) {
                    r.headers_mut().insert("mcp-session-id", v);
                }
                let mut open = sessions.open.lock().unwrap_or_else(PoisonError::into_inner);
                open.insert(id);
                r
            }
        },
    )
}

fn run_http(port: u16, modern: bool) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        eprintln!(
            "bench-server: listening on http://{}/mcp",
            listener.local_addr()?
        );
        let sessions = Arc::new(Sessions {
            modern,
            open: Mutex::default(),
            next: AtomicU64::new(1),
        });
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let sessions = sessions.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| serve(req, sessions.clone()));
                let io = hyper_util::rt::TokioIo::new(stream);
                // A connection's error ends that connection only.
                let _ = hyper::server::conn::http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(io, svc)
                    .await;
            });
        }
    })
}

fn main() -> ExitCode {
    let mut modern = false;
    let mut http = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--stdio" => {}
            "--modern" => modern = true,
            "--http" => match args.next().and_then(|p| p.parse::<u16>().ok()) {
                Some(p) => http = Some(p),
                None => {
                    eprintln!("bench-server: --http needs a port number");
                    return ExitCode::from(2);
                }
            },
            other => {
                eprintln!(
                    "bench-server: unknown argument {other} (usage: bench-server [--stdio] [--modern] | --http PORT [--modern])"
                );
                return ExitCode::from(2);
            }
        }
    }
    let ran = match http {
        Some(port) => run_http(port, modern),
        None => run_stdio(modern),
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        // The client went away mid-answer: nothing left to answer.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-server: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(a: Answer) -> String {
        match a {
            Answer::Json(b)
            | Answer::Initialized(b)
            | Answer::BadRequest(b)
            | Answer::Stateless(b) => String::from_utf8(b).unwrap_or_default(),
            Answer::None => String::new(),
        }
    }

    #[test]
    fn echo_copies_the_token_as_it_came() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\"b\u00e9"}}}"#;
        assert_eq!(
            text(answer(call, false, None)),
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\"b\u00e9"}]}}"#
        );
    }

    #[test]
    fn the_modern_era_only_with_the_flag() {
        let discover = br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
        assert!(text(answer(discover, false, None)).contains("-32601"));
        assert!(matches!(answer(discover, true, None), Answer::Stateless(_)));
        let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        assert!(text(answer(call, true, None)).contains(r#""resultType":"complete""#));
        let wrong = Headers {
            version: Some(MODERN),
            method: Some("tools/call"),
            name: Some("other"),
        };
        assert!(matches!(
            answer(call, true, Some(&wrong)),
            Answer::BadRequest(_)
        ));
    }

    #[test]
    fn initialize_echoes_a_known_version_only() {
        let init = |v: &str| {
            let m = format!(
                r#"{{"jsonrpc":"2.0","id":"i","method":"initialize","params":{{"protocolVersion":"{v}"}}}}"#
            );
            text(answer(m.as_bytes(), true, None))
        };
        assert!(init("2025-03-26").contains(r#""protocolVersion":"2025-03-26""#));
        assert!(init("2026-07-28").contains(r#""protocolVersion":"2025-06-18""#));
    }
}
