//! A small MCP server over stdin/stdout, speaking both protocol eras.
//!
//! Hand-written on top of [`mcp_proto`]'s envelope types and tokio line IO
//! (no server framework), so it doubles as a readable example of the wire
//! protocol. It answers:
//!
//! - `server/discover` (2026-07-28) with `supportedVersions` and
//!   `resultType`, and `initialize` (2024-11-05 … 2025-11-25), echoing the
//!   client's revision when it is a legacy one it knows;
//! - `tools/list` (paginated, [`TOOLS_PAGE_SIZE`] per page), `tools/call`,
//!   `resources/list`, `resources/templates/list`, `resources/read`,
//!   `prompts/list`, `prompts/get`, `ping`; `-32601` for anything else.
//!
//! A request whose `_meta` carries `io.modelcontextprotocol/protocolVersion`
//! is treated as a 2026-07-28 request (its result gets `resultType`);
//! others are legacy requests. The server keeps no per-connection era state.
//!
//! # Tools
//!
//! | tool | arguments | result |
//! |---|---|---|
//! | `echo` | `text` or `message` | the same text |
//! | `slow_sum` | `a`, `b` numbers; optional `steps` (5), `delay_ms` (200) | `a + b` as text and `{"sum"}`; progress notifications per step; honours `notifications/cancelled` |
//! | `add` | `a`, `b` | `{"sum"}` as `structuredContent` only (no text) |
//! | `fail` | optional `reason` | `isError: true` with an explanation |
//! | `image` | none | a text block, a 1×1 PNG image and a resource link |
//!
//! Requests run concurrently; `notifications/cancelled` aborts the named
//! request (no response is sent for it) and logs `cancelled <id>` to stderr
//! and, when [`LOG_ENV`] names a file, appends the same line there (the
//! CLI's tests use it to see that Ctrl-C reached the server). When stdin
//! closes, requests in flight get up to [`EOF_GRACE`] to finish, then the
//! server exits.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId, Response};
use mcp_proto::{ErrorCode, ErrorObject};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "mcp-demo-server";

/// Environment variable naming a file the server appends its event lines to
/// (`started <pid>`, `cancelled <request id>`, `exiting <pid>`).
pub const LOG_ENV: &str = "MCP_DEMO_SERVER_LOG";

/// Revisions the server speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The newest legacy revision: the `initialize` answer when the client
/// offers one the server does not know.
const LATEST_LEGACY: &str = "2025-11-25";

/// Longest accepted input line; a longer one is answered with a parse error
/// and skipped.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// How long requests in flight may still run after stdin closes.
pub const EOF_GRACE: Duration = Duration::from_secs(2);

/// Messages waiting for the writer: answers and progress notifications.
/// When it is full, request tasks wait to send and the reader waits to
/// report a parse error (stdin is read no further until the client reads
/// stdout).
pub const MAX_QUEUED_OUTGOING: usize = 256;

/// Tools per `tools/list` page (small on purpose, so clients must paginate).
pub const TOOLS_PAGE_SIZE: usize = 3;

/// Most `slow_sum` steps, and the longest delay per step.
const MAX_STEPS: u64 = 1000;
const MAX_DELAY_MS: u64 = 60_000;

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

const INSTRUCTIONS: &str = "A demo server: `echo` repeats text, `slow_sum` adds two numbers slowly \
     (with progress), `add` returns structured content, `fail` always fails, `image` returns an image.";

/// A 1×1 red PNG.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// Decoded size of [`PIXEL_PNG`] in bytes.
const PIXEL_PNG_LEN: usize = 70;

const README: &str =
    "# Demo server\n\nBuilt into the `mcp` command-line client: run `mcp tools`.\n";

/// Runs the server on this process's stdin and stdout until stdin closes.
pub async fn run() -> std::io::Result<()> {
    log_event(&format!("started {}", std::process::id()));
    let r = serve(tokio::io::stdin(), tokio::io::stdout()).await;
    log_event(&format!("exiting {}", std::process::id()));
    r
}

type InFlight = Arc<Mutex<HashMap<RequestId, AbortHandle>>>;

/// Runs the server over any reader and writer (newline-delimited JSON-RPC)
/// until `reader` reaches end of file and the requests in flight finished
/// (or [`EOF_GRACE`] passed; the rest are aborted).
pub async fn serve<R, W>(reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, rx) = mpsc::channel::<Message>(MAX_QUEUED_OUTGOING);
    #[cfg(feature = "chaos")]
    let writer_task = match crate::chaos::Chaos::from_env() {
        Some(chaos) => tokio::spawn(chaos.write_loop(rx, writer)),
        None => tokio::spawn(write_loop(rx, writer)),
    };
    #[cfg(not(feature = "chaos"))]
    let writer_task = tokio::spawn(write_loop(rx, writer));
    let in_flight: InFlight = Arc::default();
    let mut reader = BufReader::new(reader);
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            break;
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            skip_rest_of_line(&mut reader).await?;
            let err = ErrorObject::new(
                ErrorCode::PARSE_ERROR,
                format!("message longer than {MAX_LINE} bytes; skipped"),
            );
            let _ = out.send(ErrorResponse::new(None, err).into()).await;
            continue;
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match Message::from_slice(text) {
            Ok(Message::Request(req)) => start_request(req, &out, &in_flight),
            Ok(Message::Notification(n)) => on_notification(&n, &in_flight),
            Ok(_) => {} // responses: this server never sends requests
            Err(e) => {
                let err = ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string());
                let _ = out.send(ErrorResponse::new(None, err).into()).await;
            }
        }
    }
    // Stdin closed: let requests in flight finish (a piped
    // `echo '{..}' | mcp demo-server` gets its answer), for a bounded time.
    let deadline = tokio::time::Instant::now() + EOF_GRACE;
    while in_flight.lock().is_ok_and(|m| !m.is_empty()) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if let Ok(mut map) = in_flight.lock() {
        for (_, h) in map.drain() {
            h.abort();
        }
    }
    drop(out);
    writer_task.await.unwrap_or(Ok(()))
}

async fn skip_rest_of_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> std::io::Result<()> {
    let mut scratch = Vec::new();
    loop {
        scratch.clear();
        let n = (&mut *reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut scratch)
            .await?;
        if n == 0 || scratch.ends_with(b"\n") {
            return Ok(());
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Message>,
    mut writer: W,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    while let Some(msg) = rx.recv().await {
        buf.clear();
        msg.write_to(&mut buf);
        buf.push(b'\n');
        // Batch whatever else is ready into the same write.
        while let Ok(more) = rx.try_recv() {
            more.write_to(&mut buf);
            buf.push(b'\n');
        }
        writer.write_all(&buf).await?;
        writer.flush().await?;
    }
    writer.shutdown().await
}

fn on_notification(n: &Notification, in_flight: &InFlight) {
    if n.method != "notifications/cancelled" {
        return; // `notifications/initialized` and others need nothing
    }
    let Some(id) = n
        .params
        .as_ref()
        .and_then(|p| p.decode::<Value>().ok())
        .and_then(|v| serde_json::from_value::<RequestId>(v.get("requestId")?.clone()).ok())
    else {
        return;
    };
    let handle = in_flight.lock().ok().and_then(|mut m| m.remove(&id));
    if let Some(h) = handle {
        h.abort();
        log_event(&format!("cancelled {id}"));
    }
}

/// Writes one event line to stderr and, if [`LOG_ENV`] is set, to that file.
fn log_event(line: &str) {
    eprintln!("[{SERVER_NAME}] {line}");
    if let Some(path) = std::env::var_os(LOG_ENV) {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        if let Ok(mut f) = file {
            let _ = writeln!(f, "{line}");
        }
    }
}

fn start_request(req: Request, out: &mpsc::Sender<Message>, in_flight: &InFlight) {
    let id = req.id.clone();
    let out = out.clone();
    let map = in_flight.clone();
    // Hold the lock while spawning so the task cannot finish (and remove
    // itself) before it is registered.
    let Ok(mut guard) = in_flight.lock() else {
        return;
    };
    let task_id = id.clone();
    let task = tokio::spawn(async move {
        let ctx = Ctx::new(&req, out.clone());
        let result = ctx.handle(&req).await;
        // A cancelled request is no longer in the map: send nothing for it.
        let still_wanted = map.lock().ok().and_then(|mut m| m.remove(&task_id));
        if still_wanted.is_none() {
            return;
        }
        let msg: Message = match result {
            Ok(raw) => Response::new(task_id, raw).into(),
            Err(e) => ErrorResponse::new(Some(task_id), e).into(),
        };
        let _ = out.send(msg).await;
    });
    guard.insert(id, task.abort_handle());
}

fn to_raw(v: &Value) -> Result<RawJson, ErrorObject> {
    RawJson::from_value(v).map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

/// What one request needs to know besides its params.
struct Ctx {
    out: mpsc::Sender<Message>,
    /// `_meta.protocolVersion` of a 2026-07-28 request.
    modern_version: Option<String>,
    progress_token: Option<Value>,
    params: Value,
}

impl Ctx {
    fn new(req: &Request, out: mpsc::Sender<Message>) -> Self {
        let params: Value = req
            .params
            .as_ref()
            .and_then(|p| p.decode().ok())
            .unwrap_or_else(|| json!({}));
        let meta = params.get("_meta");
        let modern_version = meta
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let progress_token = meta
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        Ctx {
            out,
            modern_version,
            progress_token,
            params,
        }
    }

    async fn handle(&self, req: &Request) -> Result<RawJson, ErrorObject> {
        if let Some(v) = &self.modern_version {
            if !SUPPORTED_VERSIONS.contains(&v.as_str()) {
                return Err(ErrorObject::new(
                    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                    format!("unsupported protocol version {v}"),
                )
                .with_data(json!({"supported": SUPPORTED_VERSIONS, "requested": v})));
            }
        }
        let mut result = match &*req.method {
            "server/discover" => Ok(discover()),
            "initialize" => Ok(initialize(&self.params)),
            "ping" => Ok(json!({})),
            "tools/list" => {
                // Sent as text, so the tool table keeps its member order.
                let text = list_tools(&self.params)?;
                let text = match (&self.modern_version, text.strip_prefix('{')) {
                    (Some(_), Some(rest)) => format!("{{\"resultType\":\"complete\",{rest}"),
                    _ => text,
                };
                return RawJson::from_string(text)
                    .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()));
            }
            "tools/call" => self.call_tool().await,
            "resources/list" => Ok(json!({"resources": resources()})),
            "resources/templates/list" => Ok(json!({"resourceTemplates": [{
                "uriTemplate": "demo://greeting/{name}",
                "name": "greeting",
                "description": "A greeting for {name}",
                "mimeType": "text/plain",
            }]})),
            "resources/read" => read_resource(&self.params, self.modern_version.is_some()),
            "prompts/list" => Ok(json!({"prompts": [{
                "name": "greet",
                "description": "Ask the model to greet someone",
                "arguments": [{"name": "name", "description": "Who to greet", "required": true}],
            }]})),
            "prompts/get" => get_prompt(&self.params),
            other => Err(ErrorObject::method_not_found(other)),
        }?;
        if self.modern_version.is_some() {
            if let Some(obj) = result.as_object_mut() {
                obj.entry("resultType").or_insert_with(|| json!("complete"));
            }
        }
        to_raw(&result)
    }

    fn arguments(&self) -> &Value {
        self.params.get("arguments").unwrap_or(&Value::Null)
    }

    async fn call_tool(&self) -> Result<Value, ErrorObject> {
        let name = self
            .params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_params("tools/call needs a `name` string"))?;
        let args = self.arguments();
        Ok(match name {
            "echo" => match args
                .get("text")
                .or_else(|| args.get("message"))
                .and_then(Value::as_str)
            {
                Some(t) => json!({"content": [{"type": "text", "text": t}]}),
                None => tool_error("echo needs a `text` (or `message`) string argument"),
            },
            "slow_sum" => match two_numbers(args) {
                Ok((a, b)) => {
                    let steps = args
                        .get("steps")
                        .and_then(Value::as_u64)
                        .unwrap_or(5)
                        .clamp(1, MAX_STEPS);
                    let delay = args
                        .get("delay_ms")
                        .and_then(Value::as_u64)
                        .unwrap_or(200)
                        .min(MAX_DELAY_MS);
                    for step in 1..=steps {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        self.progress(step, steps, &format!("step {step} of {steps}"))
                            .await;
                    }
                    let sum = add(&a, &b);
                    json!({
                        "content": [{"type": "text", "text": sum.to_string()}],
                        "structuredContent": {"sum": sum},
                    })
                }
                Err(e) => tool_error(&e),
            },
            "add" => match two_numbers(args) {
                Ok((a, b)) => json!({"content": [], "structuredContent": {"sum": add(&a, &b)}}),
                Err(e) => tool_error(&e),
            },
            "fail" => {
                let reason = args
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("this is what a tool error looks like");
                tool_error(&format!("the `fail` tool always fails: {reason}"))
            }
            "image" => json!({"content": [
                {"type": "text", "text": "a 1x1 red pixel"},
                {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"},
                {"type": "resource_link", "uri": "demo://logo.png", "name": "logo", "mimeType": "image/png"},
            ]}),
            other => {
                return Err(invalid_params(format!(
                    "unknown tool: {other} (list them with tools/list)"
                )));
            }
        })
    }

    async fn progress(&self, progress: u64, total: u64, message: &str) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let params = json!({
            "progressToken": token,
            "progress": progress,
            "total": total,
            "message": message,
        });
        if let Ok(raw) = RawJson::from_value(&params) {
            let _ = self
                .out
                .send(Notification::new("notifications/progress", Some(raw)).into())
                .await;
        }
    }
}

fn discover() -> Value {
    json!({
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": capabilities(),
        "instructions": INSTRUCTIONS,
        "_meta": {META_SERVER_INFO: server_info()},
    })
}

fn initialize(params: &Value) -> Value {
    let offered = params.get("protocolVersion").and_then(Value::as_str);
    let version = offered
        .filter(|v| SUPPORTED_VERSIONS.contains(v) && *v != "2026-07-28")
        .unwrap_or(LATEST_LEGACY);
    json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}, "resources": {}, "prompts": {}})
}

fn server_info() -> Value {
    json!({"name": SERVER_NAME, "title": "MCP demo server", "version": env!("CARGO_PKG_VERSION")})
}

/// The tool table as JSON text, so `tools/list` sends members in this order
/// (a `serde_json::Value` would sort them).
const TOOLS: &str = r#"[
  {
    "name": "echo",
    "description": "Returns its `text` (or `message`) argument",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "message": {"type": "string"}}}
  },
  {
    "name": "slow_sum",
    "description": "Adds `a` and `b` slowly, reporting progress (default 5 steps of 200 ms)",
    "inputSchema": {
      "type": "object",
      "properties": {
        "a": {"type": "number"},
        "b": {"type": "number"},
        "steps": {"type": "integer", "minimum": 1},
        "delay_ms": {"type": "integer", "minimum": 0}
      },
      "required": ["a", "b"]
    },
    "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
  },
  {
    "name": "add",
    "description": "Adds `a` and `b`; the result is structured content only",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
    "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
  },
  {
    "name": "fail",
    "description": "Always fails (isError: true), optionally saying `reason`",
    "inputSchema": {"type": "object", "properties": {"reason": {"type": "string"}}}
  },
  {
    "name": "image",
    "description": "Returns a text block, a 1x1 PNG image and a resource link",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": true}
  }
]"#;

fn list_tools(params: &Value) -> Result<String, ErrorObject> {
    let all: Vec<Box<RawValue>> = serde_json::from_str(&crate::raw_json::compact(TOOLS))
        .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("tool table: {e}")))?;
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => c
            .parse::<usize>()
            .ok()
            .filter(|&i| i <= all.len())
            .ok_or_else(|| invalid_params(format!("invalid cursor: {c:?}")))?,
        Some(other) => return Err(invalid_params(format!("invalid cursor: {other}"))),
    };
    let end = (start + TOOLS_PAGE_SIZE).min(all.len());
    let page: Vec<&str> = all
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .map(|t| t.get())
        .collect();
    let mut text = format!("{{\"tools\":[{}]", page.join(","));
    if end < all.len() {
        text.push_str(&format!(",\"nextCursor\":\"{end}\""));
    }
    text.push('}');
    Ok(text)
}

fn resources() -> Value {
    json!([
        {"uri": "demo://readme", "name": "readme", "title": "README", "mimeType": "text/markdown"},
        {"uri": "demo://logo.png", "name": "logo", "mimeType": "image/png", "size": PIXEL_PNG_LEN},
    ])
}

fn read_resource(params: &Value, modern: bool) -> Result<Value, ErrorObject> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("resources/read needs a `uri` string"))?;
    let contents = if uri == "demo://readme" {
        json!({"uri": uri, "mimeType": "text/markdown", "text": README})
    } else if uri == "demo://logo.png" {
        json!({"uri": uri, "mimeType": "image/png", "blob": PIXEL_PNG})
    } else if let Some(name) = uri.strip_prefix("demo://greeting/") {
        json!({"uri": uri, "mimeType": "text/plain", "text": format!("Hello, {name}!")})
    } else {
        // 2026-07-28 uses -32602 for a missing resource; earlier revisions -32002.
        let code = if modern {
            ErrorCode::INVALID_PARAMS
        } else {
            ErrorCode::RESOURCE_NOT_FOUND
        };
        return Err(ErrorObject::new(code, format!("resource not found: {uri}"))
            .with_data(json!({ "uri": uri })));
    };
    Ok(json!({ "contents": [contents] }))
}

fn get_prompt(params: &Value) -> Result<Value, ErrorObject> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("prompts/get needs a `name` string"))?;
    if name != "greet" {
        return Err(invalid_params(format!("unknown prompt: {name}")));
    }
    let who = params
        .get("arguments")
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("the `greet` prompt needs a `name` argument"))?;
    Ok(json!({
        "description": "Ask the model to greet someone",
        "messages": [{
            "role": "user",
            "content": {"type": "text", "text": format!("Please greet {who} warmly.")},
        }],
    }))
}

fn tool_error(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

fn two_numbers(args: &Value) -> Result<(serde_json::Number, serde_json::Number), String> {
    let get = |k: &str| match args.get(k) {
        Some(Value::Number(n)) => Ok(n.clone()),
        Some(other) => Err(format!("`{k}` must be a number, got {other}")),
        None => Err(format!("missing argument `{k}` (a number)")),
    };
    Ok((get("a")?, get("b")?))
}

/// `a + b`, exact for integers, as a float otherwise.
fn add(a: &serde_json::Number, b: &serde_json::Number) -> Value {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(s) = x.checked_add(y) {
            return json!(s);
        }
    }
    let s = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    serde_json::Number::from_f64(s).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_length_matches_its_base64() {
        let b64 = PIXEL_PNG.trim_end_matches('=');
        assert_eq!(b64.len() * 3 / 4, PIXEL_PNG_LEN);
    }

    #[test]
    fn tools_paginate() {
        let page = |cursor: Value| -> Value {
            serde_json::from_str(&list_tools(&cursor).unwrap()).unwrap()
        };
        let first = page(json!({}));
        assert_eq!(first["tools"].as_array().unwrap().len(), TOOLS_PAGE_SIZE);
        assert_eq!(first["nextCursor"], "3");
        let second = page(json!({"cursor": "3"}));
        assert_eq!(second["tools"].as_array().unwrap().len(), 2);
        assert!(second.get("nextCursor").is_none());
        assert!(list_tools(&json!({"cursor": "x"})).is_err());
    }

    #[test]
    fn sums_are_exact_for_integers() {
        let n = |v: Value| match v {
            Value::Number(n) => n,
            _ => unreachable!(),
        };
        assert_eq!(add(&n(json!(2)), &n(json!(3))), json!(5));
        assert_eq!(add(&n(json!(0.5)), &n(json!(1))), json!(1.5));
    }
}
