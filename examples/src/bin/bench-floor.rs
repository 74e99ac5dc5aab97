//! `bench-floor`: the floor of the per-call benchmark (`cargo xtask
//! bench`): an MCP client with no framework, tokio, serde_json and hyper
//! by hand, doing only what every client must. It speaks the contract of
//! `examples::bench`, as `bench-client` does through the library.
//!
//! Per call it still does the real work: serializes the request (escaping
//! the payload), parses the response (borrowing the text from the read
//! buffer) and compares the text. What it leaves out is everything a
//! library is for: no request builder, no routing of server requests, no
//! timeouts, no cancellation, no limits.
//!
//! - **stdio**: one task on a current-thread runtime owns the child's
//!   pipes. It keeps C calls in flight; the JSON-RPC id names the worker
//!   slot (`id % C`), so an answer finds its call without a map. Requests
//!   are written once no complete answer is waiting in the read buffer
//!   (one write for a burst).
//! - **HTTP**: one keep-alive HTTP/1.1 connection per worker (hyper's
//!   connection API, no pool), each worker a task taking call indices from
//!   a shared counter.
//! - `--era modern`: `server/discover` (2026-07-28 must be supported),
//!   then every request carries `_meta` (protocol version, client
//!   capabilities, client info) and, over HTTP, the `MCP-Protocol-Version`,
//!   `Mcp-Method` and `Mcp-Name` headers, with no session; a result's
//!   `resultType` must be absent or `complete`.

use std::borrow::Cow;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use examples::bench::{Args, Histogram, Measured, cpu_ticks, payload};
use serde::{Deserialize, Serialize};
use serde_json::Value;

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

type Res<T = ()> = Result<T, String>;

// ---- the messages ----

#[derive(Serialize)]
struct Call<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'static str,
    params: CallParams<'a>,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'static str,
    arguments: Text<'a>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Meta>,
}

#[derive(Serialize)]
struct Text<'a> {
    text: &'a str,
}

/// A 2026-07-28 request's `_meta`.
#[derive(Serialize, Clone, Copy)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: &'static str,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    capabilities: Empty,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    info: Info,
}

#[derive(Serialize, Clone, Copy)]
struct Empty {}

#[derive(Serialize, Clone, Copy)]
struct Info {
    name: &'static str,
    version: &'static str,
}

const META: Meta = Meta {
    version: MODERN,
    capabilities: Empty {},
    info: Info {
        name: "bench-floor",
        version: "0.1.0",
    },
};

fn encode_call(out: &mut Vec<u8>, id: u64, text: &str, modern: bool) -> Res {
    let call = Call {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: CallParams {
            name: "echo",
            arguments: Text { text },
            meta: modern.then_some(META),
        },
    };
    serde_json::to_writer(out, &call).map_err(|e| format!("encode: {e}"))
}

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(borrow, default)]
    result: Option<CallResult<'a>>,
    #[serde(borrow, default)]
    error: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default, rename = "resultType")]
    result_type: Option<Cow<'a, str>>,
    #[serde(default, rename = "isError")]
    is_error: bool,
    #[serde(borrow)]
    content: Vec<Content<'a>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// Parses and verifies one `tools/call` answer; its id.
fn verify(bytes: &[u8], payload: &str) -> Res<u64> {
    let a: Answer<'_> = serde_json::from_slice(bytes).map_err(|e| format!("answer: {e}"))?;
    if let Some(e) = a.error {
        return Err(format!("error answer: {}", e.get()));
    }
    let r = a.result.ok_or("an answer without a result")?;
    if r.is_error {
        return Err("the tool reported isError".into());
    }
    if r.result_type.as_deref().is_some_and(|t| t != "complete") {
        return Err("resultType is not \"complete\"".into());
    }
    match r.content.first() {
        Some(c) if c.kind == "text" && c.text.as_deref() == Some(payload) => {}
        _ => return Err("content[0] is not the payload as text".into()),
    }
    a.id.ok_or_else(|| "an answer without a numeric id".into())
}

/// A handshake request (`initialize`, `server/discover`, `tools/list`).
fn request(id: &str, method: &str, modern: bool) -> String {
    let mut params = match method {
        "initialize" => serde_json::json!({
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench-floor", "version": "0.1.0"},
        }),
        _ => serde_json::json!({}),
    };
    if modern {
        params["_meta"] = serde_json::to_value(META).unwrap_or_default();
    }
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Checks a handshake answer: `initialize` names a version, discovery
/// offers 2026-07-28, the tool list has `echo`.
fn check_handshake(method: &str, text: &[u8]) -> Res {
    let v: Value = serde_json::from_slice(text).map_err(|e| format!("{method}: {e}"))?;
    let r = &v["result"];
    let ok = match method {
        "initialize" => r["protocolVersion"].is_string(),
        "server/discover" => r["supportedVersions"]
            .as_array()
            .is_some_and(|vs| vs.iter().any(|v| v == MODERN)),
        _ => r["tools"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|t| t["name"] == "echo")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{method}: unexpected answer {v}"))
    }
}

/// The handshake's steps: (method, is a notification).
fn handshake(modern: bool) -> &'static [(&'static str, bool)] {
    if modern {
        &[("server/discover", false), ("tools/list", false)]
    } else {
        &[
            ("initialize", false),
            ("notifications/initialized", true),
            ("tools/list", false),
        ]
    }
}

// ---- stdio ----

mod stdio {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    pub(super) async fn run(a: &Args, text: &str, hist: &Histogram) -> Res<Phases> {
        let start = Instant::now();
        let (program, words) = a.server_words()?;
        let mut child = tokio::process::Command::new(&program)
            .args(&words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn {program}: {e}"))?;
        let mut w = child.stdin.take().ok_or("no stdin")?;
        let mut r = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);
        let mut line = Vec::with_capacity(64 * 1024);
        let io = |e: std::io::Error| format!("server pipe: {e}");
        for (method, notification) in handshake(a.modern) {
            let msg = if *notification {
                format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#)
            } else {
                request("h", method, a.modern)
            };
            w.write_all(format!("{msg}\n").as_bytes())
                .await
                .map_err(io)?;
            w.flush().await.map_err(io)?;
            if !notification {
                line.clear();
                if r.read_until(b'\n', &mut line).await.map_err(io)? == 0 {
                    return Err(format!("{method}: the server closed its output"));
                }
                check_handshake(method, &line)?;
            }
        }
        let connect = start.elapsed();

        // Worker slot s runs the calls with ids ≡ s (mod C), each id once:
        // round r of slot s is id r·C + s.
        let workers = a.workers();
        let mut slots = vec![(Instant::now(), 0u64); workers];
        let mut out = Vec::with_capacity(64 * 1024);
        let mut next = 0;
        let cpu0 = cpu_ticks();
        let t0 = Instant::now();
        for (slot, (at, _)) in slots.iter_mut().enumerate() {
            *at = Instant::now();
            encode_call(&mut out, slot as u64, text, a.modern)?;
            out.push(b'\n');
            next += 1;
        }
        let mut done = 0;
        while done < a.calls {
            if !out.is_empty() && !r.buffer().contains(&b'\n') {
                w.write_all(&out).await.map_err(io)?;
                w.flush().await.map_err(io)?;
                out.clear();
            }
            line.clear();
            if r.read_until(b'\n', &mut line).await.map_err(io)? == 0 {
                return Err(format!("call {done}: the server closed its output"));
            }
            let id = verify(&line, text).map_err(|e| format!("call {done}: {e}"))?;
            let slot = usize::try_from(id).map_err(|e| e.to_string())? % workers;
            let (at, round) = &mut slots[slot];
            hist.record(at.elapsed());
            done += 1;
            if next < a.calls {
                *at = Instant::now();
                *round += 1;
                encode_call(
                    &mut out,
                    *round * workers as u64 + slot as u64,
                    text,
                    a.modern,
                )?;
                out.push(b'\n');
                next += 1;
            }
        }
        let total = t0.elapsed();
        let cpu1 = cpu_ticks();
        // Close: the end of input; the server exits.
        drop(w);
        tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .map_err(|_| "the server did not exit at the end of its input".to_owned())?
            .map_err(io)?;
        Ok(Phases {
            connect,
            total,
            cpu: (cpu0, cpu1),
        })
    }
}

// ---- Streamable HTTP ----

mod http {
    use super::*;
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::client::conn::http1::{self, SendRequest};
    use hyper::{Request, StatusCode};
    use hyper_util::rt::TokioIo;

    type Sender = SendRequest<Full<Bytes>>;

    struct Endpoint {
        authority: String,
        path: String,
        modern: bool,
        session: Option<String>,
    }

    fn endpoint(url: &str, modern: bool) -> Res<Endpoint> {
        let rest = url
            .strip_prefix("http://")
            .ok_or("--url must be an http:// URL")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        Ok(Endpoint {
            authority: authority.to_owned(),
            path: if path.is_empty() { "/" } else { path }.to_owned(),
            modern,
            session: None,
        })
    }

    async fn open(e: &Endpoint) -> Res<Sender> {
        let tcp = tokio::net::TcpStream::connect(&e.authority)
            .await
            .map_err(|err| format!("connect {}: {err}", e.authority))?;
        tcp.set_nodelay(true).map_err(|err| err.to_string())?;
        let (sender, conn) = http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|err| format!("HTTP handshake: {err}"))?;
        tokio::spawn(conn);
        Ok(sender)
    }

    /// POSTs `body`; the answer's status, session header and body.
    async fn post(
        s: &mut Sender,
        e: &Endpoint,
        method: &str,
        tool: Option<&str>,
        body: Vec<u8>,
    ) -> Res<(StatusCode, Option<String>, Bytes)> {
        let mut req = Request::post(e.path.as_str())
            .header("host", e.authority.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if e.modern {
            req = req
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", method);
            if let Some(t) = tool {
                req = req.header("mcp-name", t);
            }
        } else if let Some(id) = &e.session {
            req = req
                .header("mcp-session-id", id.as_str())
                .header("mcp-protocol-version", LEGACY);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|err| err.to_string())?;
        s.ready().await.map_err(|err| format!("{method}: {err}"))?;
        let resp = s
            .send_request(req)
            .await
            .map_err(|err| format!("{method}: {err}"))?;
        let status = resp.status();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|err| format!("{method}: {err}"))?
            .to_bytes();
        Ok((status, session, body))
    }

    pub(super) async fn run(a: &Args, text: Arc<String>, hist: Arc<Histogram>) -> Res<Phases> {
        let start = Instant::now();
        let mut e = endpoint(a.url.as_deref().unwrap_or_default(), a.modern)?;
        let mut first = open(&e).await?;
        for (method, notification) in handshake(a.modern) {
            let msg = if *notification {
                format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#)
            } else {
                request("h", method, a.modern)
            };
            let (status, session, body) = post(&mut first, &e, method, None, msg.into()).await?;
            if *notification {
                if status != StatusCode::ACCEPTED {
                    return Err(format!("{method}: HTTP {status}"));
                }
                continue;
            }
            if status != StatusCode::OK {
                return Err(format!("{method}: HTTP {status}"));
            }
            check_handshake(method, &body)?;
            if *method == "initialize" {
                e.session = Some(session.ok_or("initialize: no Mcp-Session-Id")?);
            }
        }
        let mut senders = vec![first];
        for _ in 1..a.workers() {
            senders.push(open(&e).await?);
        }
        let connect = start.elapsed();

        let e = Arc::new(e);
        let next = Arc::new(AtomicUsize::new(0));
        let n = a.calls;
        let modern = a.modern;
        let cpu0 = cpu_ticks();
        let t0 = Instant::now();
        let mut tasks = Vec::new();
        for mut s in senders {
            let (e, next, text, hist) = (e.clone(), next.clone(), text.clone(), hist.clone());
            tasks.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return Ok::<Sender, String>(s);
                    }
                    let at = Instant::now();
                    let mut body = Vec::with_capacity(text.len() + 256);
                    encode_call(&mut body, i as u64, &text, modern)?;
                    let (status, _, answer) =
                        post(&mut s, &e, "tools/call", Some("echo"), body).await?;
                    if status != StatusCode::OK {
                        return Err(format!("call {i}: HTTP {status}"));
                    }
                    verify(&answer, &text).map_err(|err| format!("call {i}: {err}"))?;
                    hist.record(at.elapsed());
                }
            }));
        }
        let mut senders = Vec::new();
        for t in tasks {
            senders.push(t.await.map_err(|err| format!("worker: {err}"))??);
        }
        let total = t0.elapsed();
        let cpu1 = cpu_ticks();
        // Close: the session's DELETE (the 2026-07-28 era has none).
        if let (Some(s), Some(id)) = (senders.first_mut(), e.session.as_deref()) {
            let req = Request::delete(e.path.as_str())
                .header("host", e.authority.as_str())
                .header("mcp-session-id", id)
                .body(Full::new(Bytes::new()))
                .map_err(|err| err.to_string())?;
            let _ = s.send_request(req).await;
        }
        Ok(Phases {
            connect,
            total,
            cpu: (cpu0, cpu1),
        })
    }
}

/// The timed phases of a run, and the CPU time around the calls.
struct Phases {
    connect: Duration,
    total: Duration,
    cpu: (Option<u64>, Option<u64>),
}

async fn run(a: Args) -> Res<String> {
    let text = Arc::new(payload(a.payload));
    let hist = Arc::new(Histogram::default());
    let p = if a.transport == "stdio" {
        stdio::run(&a, &text, &hist).await?
    } else {
        http::run(&a, text.clone(), hist.clone()).await?
    };
    if hist.total() != a.calls as u64 {
        return Err(format!(
            "recorded {} results, expected {}",
            hist.total(),
            a.calls
        ));
    }
    let m = Measured {
        client: "floor",
        connect: p.connect,
        total: p.total,
        cpu: p.cpu,
        hist: &hist,
    };
    Ok(m.line(&a))
}

fn main() -> ExitCode {
    let a = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bench-floor: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bench-floor: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(a)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-floor: {e}");
            ExitCode::FAILURE
        }
    }
}
