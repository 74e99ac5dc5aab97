//! `catalog-server`: the catalog benchmarks' MCP server (stdio), written by
//! hand on serde_json (no MCP SDK), so that it costs every client the same.
//!
//! It serves `--tools N` tools (default 2,000) in pages of `--page N`
//! (default 50) whose shapes are real servers' tools, verbatim but for the
//! name: `examples/catalog/shapes.json`, captured from server-everything,
//! the reference filesystem and git servers and FastMCP-style samples
//! (`examples/catalog/capture.py`). Tool `i` is shape `i % shapes` named
//! `{name}_{i}`. Every page is encoded once at start, so listing costs the
//! server a copy per page.
//!
//! - `initialize`: echoes the client's revision when it knows it (else
//!   2025-11-25); capabilities `{"tools":{"listChanged":false}}`.
//! - `server/discover`: -32601 (a legacy server), unless `--modern`, which
//!   answers it with 2026-07-28 among the supported versions.
//! - `tools/list`: the page the cursor names (`"p<k>"`), `nextCursor` on
//!   all but the last; an unknown cursor is -32602.
//! - `tools/call`: `{"content":[{"type":"text","text":"ok"}]}` for any tool.
//! - `ping`: `{}`; notifications: nothing; anything else: -32601.
//!
//! `--startup-ms MS` sleeps before reading stdin (a server that takes that
//! long to start); `--ready-file PATH` then appends the wall-clock time,
//! in microseconds since the Unix epoch, at which it starts reading: its
//! own readiness, which the host benchmark compares with the host's.
//! `--request-log PATH` appends the method of every request received, one
//! a line (how many round trips a client's handshake took). It exits at
//! EOF on stdin.

use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

const SHAPES: &str = include_str!("../../catalog/shapes.json");

struct Args {
    tools: usize,
    page: usize,
    modern: bool,
    startup: Duration,
    ready_file: Option<String>,
    request_log: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        tools: 2000,
        page: 50,
        modern: false,
        startup: Duration::ZERO,
        ready_file: None,
        request_log: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--modern" {
            a.modern = true;
            continue;
        }
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let n = || {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: {v:?} is not a number"))
        };
        match flag.as_str() {
            "--tools" => a.tools = usize::try_from(n()?).map_err(|e| e.to_string())?,
            "--page" => a.page = usize::try_from(n()?).map_err(|e| e.to_string())?.max(1),
            "--startup-ms" => a.startup = Duration::from_millis(n()?),
            "--ready-file" => a.ready_file = Some(v),
            "--request-log" => a.request_log = Some(v),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

/// The tool shapes, in the order of `shapes.json`.
fn shapes() -> Result<Vec<Value>, String> {
    let all: Value = serde_json::from_str(SHAPES).map_err(|e| format!("shapes.json: {e}"))?;
    let servers = all["servers"].as_array().ok_or("shapes.json: no servers")?;
    let tools: Vec<Value> = servers
        .iter()
        .filter_map(|s| s["tools"].as_array())
        .flatten()
        .cloned()
        .collect();
    if tools.is_empty() {
        return Err("shapes.json: no tools".into());
    }
    Ok(tools)
}

/// Each page's result, encoded.
fn pages(a: &Args) -> Result<Vec<String>, String> {
    let shapes = shapes()?;
    let mut pages = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + a.page).min(a.tools);
        let mut tools = Vec::with_capacity(end - start);
        for i in start..end {
            let mut t = shapes[i % shapes.len()].clone();
            let name = format!("{}_{i}", t["name"].as_str().unwrap_or("tool"));
            t["name"] = Value::String(name);
            tools.push(t);
        }
        let mut page = json!({ "tools": tools });
        if end < a.tools {
            page["nextCursor"] = Value::String(format!("p{}", pages.len() + 1));
        }
        pages.push(serde_json::to_string(&page).map_err(|e| e.to_string())?);
        if end >= a.tools {
            return Ok(pages);
        }
        start = end;
    }
}

const KNOWN: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Appends `line` to the file at `path`.
fn append(path: &str, line: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    writeln!(f, "{line}").map_err(|e| format!("{path}: {e}"))
}

fn run(a: &Args) -> Result<(), String> {
    let pages = pages(a)?;
    std::thread::sleep(a.startup);
    if let Some(path) = &a.ready_file {
        let us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_micros();
        append(path, &us.to_string())?;
    }
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(&line) {
            Ok(m) => m,
            Err(_) => {
                writeln!(
                    out,
                    r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32700,"message":"parse error"}}}}"#
                )
                .map_err(|e| e.to_string())?;
                out.flush().map_err(|e| e.to_string())?;
                continue;
            }
        };
        let Some(id) = msg.get("id").filter(|_| msg.get("method").is_some()) else {
            continue; // a notification, or a response
        };
        let id = serde_json::to_string(id).map_err(|e| e.to_string())?;
        let method = msg["method"].as_str().unwrap_or("");
        if let Some(path) = &a.request_log {
            append(path, method)?;
        }
        let result: Result<String, (i64, &str)> = match method {
            "initialize" => {
                let asked = msg["params"]["protocolVersion"].as_str().unwrap_or("");
                let version = if KNOWN.contains(&asked) {
                    asked
                } else {
                    "2025-11-25"
                };
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "catalog-server", "version": "0.1.0"}
                })
                .to_string())
            }
            "server/discover" if a.modern => Ok(json!({
                "resultType": "complete",
                "supportedVersions": ["2025-06-18", "2025-11-25", "2026-07-28"],
                "capabilities": {"tools": {"listChanged": false}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "catalog-server", "version": "0.1.0"}}
            })
            .to_string()),
            "tools/list" => {
                let k = match msg["params"]["cursor"].as_str() {
                    None => Some(0),
                    Some(c) => c.strip_prefix('p').and_then(|k| k.parse::<usize>().ok()),
                };
                k.and_then(|k| pages.get(k))
                    .cloned()
                    .ok_or((-32602, "unknown cursor"))
            }
            "tools/call" => Ok(r#"{"content":[{"type":"text","text":"ok"}]}"#.to_owned()),
            "ping" => Ok("{}".to_owned()),
            _ => Err((-32601, "method not found")),
        };
        match result {
            Ok(r) => writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#),
            Err((code, m)) => writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"{m}"}}}}"#
            ),
        }
        .map_err(|e| e.to_string())?;
        out.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("catalog-server: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("catalog-server: {e}");
            ExitCode::FAILURE
        }
    }
}
