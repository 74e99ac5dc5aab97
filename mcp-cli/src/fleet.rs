//! Every configured server at once: `mcp servers`, and `mcp tools` with no
//! `--server`. mcp-host's [`Host`] starts them concurrently, each within
//! its start-up timeout (`--timeout` plus the probe's), and returns when
//! each one's first attempt ended; one that fails is reported with why and
//! holds nobody back.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_config::{ServerConfig, TransportConfig};
use mcp_host::{Host, ServerSpec, ServerStatus};
use mcp_proto::ProtocolVersion;
use serde_json::value::RawValue;

use crate::args::{Command, Options, Search, Server};
use crate::config::Configured;
use crate::failure::Failure;
use crate::{CLOSE_TIMEOUT, Interrupts, client_builder, human, out, out_json};
use mcp_cli::raw_json::{Object, write_pretty, write_pretty_array};
use mcp_cli::terminal::line;

/// How a configured server's start went.
enum Outcome {
    Ready {
        version: ProtocolVersion,
        tools: usize,
        /// Held back: new or changed since approved.
        held: usize,
    },
    Failed(String),
    /// The managed policy keeps it from starting.
    Blocked(String),
    Disabled,
}

struct Started {
    name: String,
    config: ServerConfig,
    transport: &'static str,
    source: String,
    /// From the start to ready (handshake and first listing); zero when
    /// it is not ready.
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

/// The host's server for one configuration entry, its client set up as
/// the options say (protocol, timeouts, the probe's wait for a process).
fn spec(cfg: &ServerConfig, opts: &Options) -> ServerSpec {
    let mut opts = opts.clone();
    opts.server = Server::Configured(Box::new(cfg.clone()));
    let (_, startup) = client_builder(&opts, false);
    let limits = opts.clone();
    let factory = Arc::new(move || client_builder(&opts, false).0);
    let adjust = Arc::new(move |prepared| crate::connect::adjust(prepared, &limits));
    ServerSpec::from_config_with(cfg, factory, adjust).startup_timeout(startup)
}

/// Starts every server, runs `servers` or `tools`, closes them all.
pub(crate) async fn run(opts: Options, configured: Configured) -> Result<(), Failure> {
    let mut interrupts = Interrupts::listen();
    let began = Instant::now();
    let mut builder = Host::builder().managed_policy(crate::policy::managed()?);
    if let Some(store) = crate::policy::pins() {
        builder = builder.pins(store);
    }
    for cfg in &configured.servers {
        builder = builder.server(spec(cfg, &opts));
    }
    // Ctrl-C: dropping the host's tasks drops their transports, which
    // kills the servers' process groups.
    let host = tokio::select! {
        h = builder.start() => h.map_err(|e| Failure::Usage(e.to_string()))?,
        code = interrupts.recv() => return Err(Failure::Interrupted(code)),
    };
    let status = host.status();
    let started: Vec<Started> = configured
        .servers
        .iter()
        .map(|cfg| {
            let status = status
                .iter()
                .find(|r| r.name == cfg.name)
                .map(|r| r.status.clone());
            let (took, outcome) = match status {
                Some(ServerStatus::Ready {
                    protocol_version,
                    tools,
                    held,
                    since,
                    ..
                }) => (
                    since.saturating_duration_since(began),
                    Outcome::Ready {
                        version: protocol_version,
                        tools,
                        held,
                    },
                ),
                Some(ServerStatus::Disabled) => (Duration::ZERO, Outcome::Disabled),
                Some(ServerStatus::Blocked { why }) => (Duration::ZERO, Outcome::Blocked(why)),
                Some(ServerStatus::Failed { why, .. } | ServerStatus::Restarting { why, .. }) => {
                    (Duration::ZERO, Outcome::Failed(why))
                }
                Some(other) => (Duration::ZERO, Outcome::Failed(other.to_string())),
                None => (Duration::ZERO, Outcome::Failed("not started".into())),
            };
            Started {
                name: cfg.name.clone(),
                config: cfg.clone(),
                transport: transport_kind(cfg),
                source: cfg.source.path.display().to_string(),
                took,
                outcome,
            }
        })
        .collect();
    let result = match opts.command {
        Command::Servers { .. } => servers(&started, opts.json),
        Command::Tools(search) => {
            tools(
                &host,
                &started,
                opts.json,
                opts.verbose > 0,
                search.as_ref(),
            )
            .await
        }
        _ => Ok(()),
    };
    if tokio::time::timeout(CLOSE_TIMEOUT, host.close())
        .await
        .is_err()
    {
        tracing::warn!("closing the servers took longer than {CLOSE_TIMEOUT:?}");
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
        out_json(|w| write_pretty(w, &format!("[{}]", items.join(","))));
    } else {
        // Names come from config files (a cloned repository's .mcp.json
        // is anyone's text) and reasons quote servers: both made safe.
        let names: Vec<String> = started.iter().map(|s| line(&s.name)).collect();
        let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let mut text = String::new();
        for (s, name) in started.iter().zip(&names) {
            let took = s.took.as_secs_f64();
            let _ = match &s.outcome {
                Outcome::Ready {
                    version,
                    tools,
                    held: 0,
                } => writeln!(
                    text,
                    "{name:<width$}  {:<5}  ready  {version}  {tools} tools  started in {took:.1} s",
                    s.transport,
                ),
                Outcome::Ready {
                    version,
                    tools,
                    held,
                } => writeln!(
                    text,
                    "{name:<width$}  {:<5}  ready  {version}  {tools} tools ({held} held back: mcp trust --pending)  started in {took:.1} s",
                    s.transport,
                ),
                Outcome::Blocked(why) => writeln!(
                    text,
                    "{name:<width$}  {:<5}  blocked: {}",
                    s.transport,
                    line(why)
                ),
                Outcome::Failed(why) => writeln!(
                    text,
                    "{name:<width$}  {:<5}  failed: {}",
                    s.transport,
                    line(why)
                ),
                Outcome::Disabled => {
                    writeln!(text, "{name:<width$}  {:<5}  disabled", s.transport)
                }
            };
        }
        out(&text);
    }
    none_ready(started).map_or(Ok(()), Err)
}

fn server_json(s: &Started) -> String {
    let enc = |v: &str| serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let start = match s.outcome {
        Outcome::Ready { .. } => format!("{:.3}", s.took.as_secs_f64()),
        _ => "null".into(),
    };
    let (status, version, tools, error) = match &s.outcome {
        Outcome::Ready { version, tools, .. } => (
            "ready",
            enc(version.as_str()),
            tools.to_string(),
            "null".into(),
        ),
        Outcome::Failed(why) => ("failed", "null".into(), "null".into(), enc(why)),
        Outcome::Blocked(why) => ("blocked", "null".into(), "null".into(), enc(why)),
        Outcome::Disabled => ("disabled", "null".into(), "null".into(), "null".into()),
    };
    format!(
        "{{\"name\":{},\"transport\":{},\"status\":{},\"protocolVersion\":{version},\"tools\":{tools},\"startSeconds\":{start},\"error\":{error},\"source\":{}}}",
        enc(&s.name),
        enc(s.transport),
        enc(status),
        enc(&s.source),
    )
}

/// One ready server's tools, as `mcp tools` offers them.
struct ServerTools<'a> {
    name: &'a str,
    instructions: Option<String>,
    tools: Vec<Box<RawValue>>,
}

/// `mcp tools` over every server: `<server>/<tool>` names, the objects as
/// each server sent them; each server that failed gets one line on stderr.
/// With `--search`, the best matches over all of them, best first.
async fn tools(
    host: &Host,
    started: &[Started],
    json: bool,
    verbose: bool,
    search: Option<&Search>,
) -> Result<(), Failure> {
    // Every ready server is asked for its tools at once (each listing is a
    // round trip or more; with 30 servers, one after another added up);
    // what each answered is then read in the servers' order.
    type Listing = tokio::task::JoinHandle<Result<Vec<Box<RawValue>>, Failure>>;
    let listings: Vec<Option<(mcp_client::Client, Listing)>> = started
        .iter()
        .map(|s| {
            let client = matches!(s.outcome, Outcome::Ready { .. })
                .then(|| host.client(&s.name))
                .flatten()?;
            let c = client.clone();
            let listing = tokio::spawn(async move {
                crate::commands::list_items(&c, crate::commands::Listing::Tools).await
            });
            Some((client, listing))
        })
        .collect();
    // Each ready server's name, instructions and offered tools.
    let mut lists: Vec<ServerTools<'_>> = Vec::new();
    for (s, listing) in started.iter().zip(listings) {
        match &s.outcome {
            Outcome::Ready { .. } => {
                let Some((client, listing)) = listing else {
                    eprintln!("mcp: server {:?} went away", line(&s.name));
                    continue;
                };
                // The host sorted the listing by its pins already: a held
                // tool is said once and left out.
                let key = mcp_config::pin_key(&s.config);
                let held: Vec<mcp_config::ToolChange> = host
                    .held()
                    .into_iter()
                    .filter(|c| c.server == key)
                    .collect();
                for c in &held {
                    eprintln!("mcp: {}", crate::policy::held_line(&s.name, c));
                }
                let listed = listing.await.unwrap_or_else(|e| {
                    Err(Failure::Fatal {
                        kind: "connection error",
                        message: format!("listing its tools stopped: {e}"),
                    })
                });
                match listed {
                    Ok(t) => lists.push(ServerTools {
                        name: &s.name,
                        instructions: client.server().and_then(|i| i.instructions.clone()),
                        tools: crate::config::offered_tools(&s.config, t)
                            .into_iter()
                            .filter(|t| {
                                let name = Object::parse(t.get()).ok().and_then(|o| o.str("name"));
                                !held.iter().any(|c| Some(&c.tool) == name.as_ref())
                            })
                            .collect(),
                    }),
                    Err(f) => eprintln!("mcp: server {:?}: {}", line(&s.name), why(&f)),
                }
            }
            Outcome::Failed(why) => {
                eprintln!("mcp: server {:?} failed: {}", line(&s.name), line(why))
            }
            Outcome::Blocked(why) => {
                eprintln!("mcp: server {:?} is blocked: {}", line(&s.name), line(why))
            }
            Outcome::Disabled => {}
        }
    }
    // The (server, tool) positions to print, in order.
    let order: Vec<(usize, usize)> = match search {
        None => lists
            .iter()
            .enumerate()
            .flat_map(|(s, l)| (0..l.tools.len()).map(move |t| (s, t)))
            .collect(),
        Some(search) => {
            let listed: Vec<crate::search::Listed<'_>> = lists
                .iter()
                .map(|l| crate::search::Listed {
                    server: l.name,
                    instructions: l.instructions.as_deref(),
                    tools: &l.tools,
                })
                .collect();
            crate::search::rank(&listed, &search.query, search.limit)
        }
    };
    let picked = order
        .into_iter()
        .filter_map(|(s, t)| lists.get(s).and_then(|l| Some((l.name, l.tools.get(t)?))));
    if json {
        let enc = |v: &str| serde_json::to_string(v).unwrap_or_default();
        let raw: Vec<Box<RawValue>> = picked
            .filter_map(|(server, t)| {
                let tool_name = Object::parse(t.get())
                    .ok()
                    .and_then(|o| o.str("name"))
                    .unwrap_or_default();
                RawValue::from_string(format!(
                    "{{\"server\":{},\"name\":{},\"tool\":{}}}",
                    enc(server),
                    enc(&format!("{server}/{tool_name}")),
                    t.get()
                ))
                .ok()
            })
            .collect();
        out_json(|w| write_pretty_array(w, raw.iter().map(|b| &**b)));
    } else if search.is_none() {
        let mut text = String::new();
        for l in &lists {
            text.push_str(&human::tools(&l.tools, verbose, &format!("{}/", l.name)));
        }
        out(&text);
    } else {
        let mut text = String::new();
        for (server, t) in picked {
            let one = std::slice::from_ref(t);
            text.push_str(&human::tools(one, verbose, &format!("{server}/")));
        }
        if text.is_empty() {
            text = human::tools(&[], verbose, "");
        }
        out(&text);
    }
    none_ready(started).map_or(Ok(()), Err)
}

/// The failure as one line, without `mcp: `.
fn why(f: &Failure) -> String {
    match f {
        Failure::Fatal { kind, message } => {
            format!("{kind}: {}", crate::failure::one_line(message))
        }
        Failure::Usage(m) | Failure::Refused(m) => crate::failure::one_line(m),
        Failure::ToolError => "the tool failed".into(),
        Failure::Differs => "the surface differs".into(),
        Failure::Interrupted(_) => "interrupted".into(),
    }
}
