//! `catalog-floor`: the no-framework floor of the catalog benchmarks:
//! tokio + serde_json by hand (no MCP library), doing what `catalog-bench`
//! does with the library. Run by `cargo xtask catalog`, which counts its
//! instructions with callgrind beside `catalog-bench` and rmcp's.
//!
//! - `--bench list`: spawns `--server-cmd`, `initialize` (2025-11-25),
//!   `notifications/initialized`, then `tools/list` following cursors; each
//!   page is parsed with serde's derive into a tool struct that keeps the
//!   name, title and description as `String`s and the input schema, output
//!   schema and annotations as `serde_json::Value`s (what a hand-written
//!   host keeps), and all are kept.
//! - `--bench convert --turns T --shape schemas|openai|anthropic`: after
//!   listing, T times: `schemas` serializes every input schema once into one
//!   buffer (the baseline of the conversion target); `openai`/`anthropic`
//!   builds each tool's definition as a `Value` (the schema cloned in) and
//!   serializes the array.
//! - `--bench cold --starts K`: K times spawn + `initialize` +
//!   `initialized`, each connection kept.
//!
//! It prints one JSON line and exits with the catalog still held (nothing
//! is dropped: a memory profile at exit sees what is kept).

use std::io;
use std::process::{ExitCode, Stdio};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout};

struct Args {
    bench: String,
    server_cmd: String,
    turns: usize,
    shape: String,
    starts: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        bench: "list".into(),
        server_cmd: String::new(),
        turns: 1,
        shape: "schemas".into(),
        starts: 1,
    };
    examples::flags::each_flag(std::env::args().skip(1), |flag, v| {
        match flag {
            "--bench" => a.bench = v.text(),
            "--server-cmd" => a.server_cmd = v.text(),
            "--turns" => a.turns = v.number()?,
            "--shape" => a.shape = v.text(),
            "--starts" => a.starts = v.number()?,
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    if a.server_cmd.is_empty() {
        return Err("--server-cmd is required".into());
    }
    Ok(a)
}

/// A tool as a hand-written host keeps it.
#[derive(Deserialize)]
#[allow(dead_code)]
struct FloorTool {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(rename = "inputSchema")]
    input_schema: Value,
    #[serde(rename = "outputSchema", default)]
    output_schema: Option<Value>,
    #[serde(default)]
    annotations: Option<Value>,
}

#[derive(Deserialize)]
struct PageResponse {
    result: Option<Page>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Page {
    tools: Vec<FloorTool>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

struct Conn {
    _child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Conn {
    fn spawn(cmd: &str) -> io::Result<Conn> {
        let mut words = cmd.split_whitespace();
        let program = words.next().ok_or_else(|| bad("empty --server-cmd"))?;
        let mut child = tokio::process::Command::new(program)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| bad("no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| bad("no stdout"))?;
        Ok(Conn {
            _child: child,
            stdin: BufWriter::new(stdin),
            stdout: BufReader::new(stdout),
            line: String::new(),
        })
    }

    async fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        self.stdin.write_all(msg).await?;
        self.stdin.write_all(b"\n").await?;
        self.stdin.flush().await
    }

    /// The next line from the server (in `self.line`).
    async fn recv(&mut self) -> io::Result<()> {
        self.line.clear();
        if self.stdout.read_line(&mut self.line).await? == 0 {
            return Err(bad("the server closed its stdout"));
        }
        Ok(())
    }

    async fn handshake(&mut self) -> io::Result<()> {
        self.send(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"catalog-floor","version":"0.1.0"}}}"#,
        )
        .await?;
        self.recv().await?;
        let v: Value = serde_json::from_str(&self.line)?;
        if v["result"]["protocolVersion"].as_str().is_none() {
            return Err(bad(format!("initialize failed: {}", self.line.trim())));
        }
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await
    }

    async fn list_all(&mut self) -> io::Result<Vec<FloorTool>> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut id = 1u64;
        loop {
            let request = match &cursor {
                None => json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}),
                Some(c) => {
                    json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"cursor":c}})
                }
            };
            self.send(&serde_json::to_vec(&request)?).await?;
            self.recv().await?;
            let page: PageResponse = serde_json::from_str(&self.line)?;
            let page = match (page.result, page.error) {
                (Some(p), _) => p,
                (None, e) => return Err(bad(format!("tools/list failed: {e:?}"))),
            };
            tools.extend(page.tools);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(tools),
            }
            id += 1;
        }
    }
}

/// The tools as one array of model tool definitions, serialized.
fn definitions(tools: &[FloorTool], shape: &str, out: &mut Vec<u8>) -> io::Result<()> {
    out.clear();
    match shape {
        "schemas" => {
            for t in tools {
                serde_json::to_writer(&mut *out, &t.input_schema)?;
            }
        }
        "openai" => {
            let defs: Vec<Value> = tools
                .iter()
                .map(|t| {
                    let mut f = serde_json::Map::new();
                    f.insert("name".into(), Value::from(t.name.as_str()));
                    if let Some(d) = &t.description {
                        f.insert("description".into(), Value::from(d.as_str()));
                    }
                    f.insert("parameters".into(), t.input_schema.clone());
                    json!({"type": "function", "function": Value::Object(f)})
                })
                .collect();
            serde_json::to_writer(&mut *out, &defs)?;
        }
        "anthropic" => {
            let defs: Vec<Value> = tools
                .iter()
                .map(|t| {
                    let mut f = serde_json::Map::new();
                    f.insert("name".into(), Value::from(t.name.as_str()));
                    if let Some(d) = &t.description {
                        f.insert("description".into(), Value::from(d.as_str()));
                    }
                    f.insert("input_schema".into(), t.input_schema.clone());
                    Value::Object(f)
                })
                .collect();
            serde_json::to_writer(&mut *out, &defs)?;
        }
        other => {
            return Err(bad(format!(
                "--shape: {other:?} is not schemas, openai or anthropic"
            )));
        }
    }
    Ok(())
}

async fn run(a: Args) -> io::Result<()> {
    match a.bench.as_str() {
        "list" | "convert" => {
            let mut conn = Conn::spawn(&a.server_cmd)?;
            conn.handshake().await?;
            let tools = conn.list_all().await?;
            let mut bytes = 0;
            if a.bench == "convert" {
                let mut out = Vec::new();
                for _ in 0..a.turns {
                    definitions(&tools, &a.shape, &mut out)?;
                    bytes = std::hint::black_box(out.len());
                }
            }
            println!(
                r#"{{"client":"floor","bench":"{}","tools":{},"turns":{},"bytes":{bytes}}}"#,
                a.bench,
                tools.len(),
                a.turns
            );
            // Exit with the catalog (and the server's pipes) held.
            std::process::exit(0);
        }
        "cold" => {
            let mut held = Vec::with_capacity(a.starts);
            for _ in 0..a.starts {
                let mut conn = Conn::spawn(&a.server_cmd)?;
                conn.handshake().await?;
                held.push(conn);
            }
            println!(
                r#"{{"client":"floor","bench":"cold","starts":{}}}"#,
                a.starts
            );
            // Exit with every connection held (as catalog-bench does).
            std::process::exit(0);
        }
        other => Err(bad(format!(
            "--bench: {other:?} is not list, convert or cold"
        ))),
    }
}

fn main() -> ExitCode {
    examples::scale::main("catalog-floor", parse_args, |a| async move {
        run(a).await.map_err(|e| e.to_string())
    })
}
