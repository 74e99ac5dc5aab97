//! Every configured server at once: `mcp servers`, and `mcp tools` with no
//! `--server`. The servers start concurrently, each within its start-up
//! timeout (`--timeout` plus the probe allowance); one that fails is
//! reported with why and holds nobody back.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_config::{ServerConfig, TransportConfig};
use mcp_proto::ProtocolVersion;
use serde_json::value::RawValue;
use tokio::task::JoinHandle;

use crate::args::{Command, Options, Server};
use crate::config::Configured;
use crate::connect::configured_transport;
use crate::failure::Failure;
use crate::{CLOSE_TIMEOUT, handshake, human, interrupted, out, start_client};
use mcp_cli::raw_json::{Object, array_text, pretty};

/// How a configured server's start went.
enum Outcome {
    Ready {
        client: Client,
        driver: JoinHandle<()>,
        version: ProtocolVersion,
        tools: Vec<Box<RawValue>>,
    },
    Failed(String),
    Disabled,
}

struct Started {
    name: String,
    transport: &'static str,
    source: String,
    /// From the start to the end of the handshake (or the failure).
    took: Duration,
    outcome: Outcome,
}

fn transport_kind(cfg: &ServerConfig) -> &'static str {
    match cfg.transport {
        TransportConfig::Stdio(_) => "stdio",
        TransportConfig::Http(_) => "http",
        TransportConfig::Sse(_) => "sse",
        _ => "other",
    }
}

/// The failure as one line, without `mcp: `.
fn why(f: &Failure) -> String {
    match f {
        Failure::Fatal { kind, message } => {
            format!("{kind}: {}", crate::failure::one_line(message))
        }
        Failure::Usage(m) | Failure::Refused(m) => crate::failure::one_line(m),
        Failure::ToolError => "the tool failed".into(),
        Failure::Interrupted(_) => "interrupted".into(),
    }
}

/// Starts one server: transport, handshake, then its tools (all pages).
async fn start(cfg: ServerConfig, mut opts: Options) -> Started {
    let began = Instant::now();
    opts.server = Server::Configured(Box::new(cfg.clone()));
    let mut started = Started {
        name: cfg.name.clone(),
        transport: transport_kind(&cfg),
        source: cfg.source.path.display().to_string(),
        took: Duration::ZERO,
        outcome: Outcome::Disabled,
    };
    if cfg.disabled {
        return started;
    }
    let transport = match configured_transport(&cfg, &opts) {
        Ok(t) => t,
        Err(f) => {
            started.took = began.elapsed();
            started.outcome = Outcome::Failed(why(&f));
            return started;
        }
    };
    let (client, driver, wait) = start_client(&opts, transport, false);
    let ready = handshake(&client, wait).await;
    started.took = began.elapsed();
    let listed = match ready {
        Ok(()) => list_tools(&client).await,
        Err(f) => Err(f),
    };
    let version = client.server().map(|s| s.protocol_version);
    started.outcome = match (listed, version) {
        (Ok(tools), Some(version)) => Outcome::Ready {
            client,
            driver,
            version,
            tools,
        },
        (Err(f), _) => {
            driver.abort();
            Outcome::Failed(why(&f))
        }
        (Ok(_), None) => {
            driver.abort();
            Outcome::Failed("the handshake finished without server information".into())
        }
    };
    started
}

/// The server's tools, all pages; none without the `tools` capability.
async fn list_tools(client: &Client) -> Result<Vec<Box<RawValue>>, Failure> {
    if client
        .server()
        .is_some_and(|s| s.capabilities.tools.is_none())
    {
        return Ok(Vec::new());
    }
    let pages = client
        .list_all_raw("tools/list")
        .await
        .map_err(|e| Failure::from_client("tools/list", &e))?;
    let mut tools = Vec::new();
    for page in &pages {
        if let Ok(obj) = Object::parse(page.get()) {
            tools.extend(obj.array("tools").unwrap_or_default());
        }
    }
    Ok(tools)
}

/// Starts every server, runs `servers` or `tools`, closes them all.
pub(crate) async fn run(opts: Options, configured: Configured) -> Result<(), Failure> {
    let tasks: Vec<JoinHandle<Started>> = configured
        .servers
        .into_iter()
        .map(|cfg| tokio::spawn(start(cfg, opts.clone())))
        .collect();
    let all = async {
        let mut started = Vec::with_capacity(tasks.len());
        for task in tasks {
            if let Ok(s) = task.await {
                started.push(s);
            }
        }
        started
    };
    // Ctrl-C: dropping the tasks drops their transports, which kills the
    // servers' process groups.
    let started = tokio::select! {
        s = all => s,
        code = interrupted() => return Err(Failure::Interrupted(code)),
    };
    let result = match opts.command {
        Command::Servers => servers(&started, opts.json),
        _ => tools(&started, opts.json, opts.verbose > 0),
    };
    let closing: Vec<JoinHandle<()>> = started
        .into_iter()
        .filter_map(|s| match s.outcome {
            Outcome::Ready { client, driver, .. } => Some(tokio::spawn(async move {
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, client.close()).await;
                drop(client);
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, driver).await;
            })),
            _ => None,
        })
        .collect();
    for c in closing {
        let _ = c.await;
    }
    result
}

fn none_ready(started: &[Started]) -> Option<Failure> {
    let ready = started
        .iter()
        .any(|s| matches!(s.outcome, Outcome::Ready { .. }));
    (!ready).then(|| {
        Failure::fatal(
            "connection error",
            format!("none of the {} configured servers started", started.len()),
        )
    })
}

/// `mcp servers`.
fn servers(started: &[Started], json: bool) -> Result<(), Failure> {
    if json {
        let items: Vec<String> = started.iter().map(server_json).collect();
        out(&(pretty(&format!("[{}]", items.join(","))) + "\n"));
    } else {
        let width = started.iter().map(|s| s.name.len()).max().unwrap_or(0);
        let mut text = String::new();
        for s in started {
            let took = s.took.as_secs_f64();
            let _ = match &s.outcome {
                Outcome::Ready { version, tools, .. } => writeln!(
                    text,
                    "{:<width$}  {:<5}  ready  {version}  {} tools  started in {took:.1} s",
                    s.name,
                    s.transport,
                    tools.len()
                ),
                Outcome::Failed(why) => writeln!(
                    text,
                    "{:<width$}  {:<5}  failed after {took:.1} s: {why}",
                    s.name, s.transport
                ),
                Outcome::Disabled => {
                    writeln!(text, "{:<width$}  {:<5}  disabled", s.name, s.transport)
                }
            };
        }
        out(&text);
    }
    none_ready(started).map_or(Ok(()), Err)
}

fn server_json(s: &Started) -> String {
    let enc = |v: &str| serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let (status, version, tools, error) = match &s.outcome {
        Outcome::Ready { version, tools, .. } => (
            "ready",
            enc(version.as_str()),
            tools.len().to_string(),
            "null".into(),
        ),
        Outcome::Failed(why) => ("failed", "null".into(), "null".into(), enc(why)),
        Outcome::Disabled => ("disabled", "null".into(), "null".into(), "null".into()),
    };
    format!(
        "{{\"name\":{},\"transport\":{},\"status\":{},\"protocolVersion\":{version},\"tools\":{tools},\"startSeconds\":{:.3},\"error\":{error},\"source\":{}}}",
        enc(&s.name),
        enc(s.transport),
        enc(status),
        s.took.as_secs_f64(),
        enc(&s.source),
    )
}

/// `mcp tools` over every server: `<server>/<tool>` names; each server
/// that failed gets one line on stderr.
fn tools(started: &[Started], json: bool, verbose: bool) -> Result<(), Failure> {
    let mut listed = Vec::new();
    let mut text = String::new();
    for s in started {
        match &s.outcome {
            Outcome::Ready { tools, .. } => {
                if json {
                    for t in tools {
                        let tool_name = Object::parse(t.get())
                            .ok()
                            .and_then(|o| o.str("name"))
                            .unwrap_or_default();
                        let enc = |v: &str| serde_json::to_string(v).unwrap_or_default();
                        listed.push(format!(
                            "{{\"server\":{},\"name\":{},\"tool\":{}}}",
                            enc(&s.name),
                            enc(&format!("{}/{tool_name}", s.name)),
                            t.get()
                        ));
                    }
                } else {
                    text.push_str(&human::tools(tools, verbose, &format!("{}/", s.name)));
                }
            }
            Outcome::Failed(why) => eprintln!("mcp: server {:?} failed: {why}", s.name),
            Outcome::Disabled => {}
        }
    }
    if json {
        let raw: Vec<Box<RawValue>> = listed
            .into_iter()
            .filter_map(|l| RawValue::from_string(l).ok())
            .collect();
        out(&(pretty(&array_text(raw.iter().map(|b| &**b))) + "\n"));
    } else {
        out(&text);
    }
    none_ready(started).map_or(Ok(()), Err)
}
