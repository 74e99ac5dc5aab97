//! What is checked after a configuration is trusted, before anything is
//! sent: the administrator's managed policy (may this server start at
//! all), the configured server's pinned tool definitions (is this tool as
//! you approved it), and the tool policy (does this call run, ask you
//! first, or not run). Each refusal is a usage error (exit 2) saying what
//! to do; nothing reached the server.

use std::io::IsTerminal;
use std::path::PathBuf;

use mcp_cli::terminal::line;
use mcp_client::Client;
use mcp_config::{ManagedPolicy, PinStore, ServerConfig, ServerOrigin, ToolChange};
use mcp_proto::schema::Tool;
use mcp_tools::{McpTool, Refusal, ToolError, ToolOptions, ToolPolicy};
use serde_json::value::RawValue;

use crate::args::{Options, Server};
use crate::failure::Failure;
use crate::tool_list::ToolList;

/// Where pinned tool definitions are kept: `$MCP_PINS_FILE`, else
/// `$XDG_CONFIG_HOME/mcp/pinned-tools.json`, else
/// `$HOME/.config/mcp/pinned-tools.json`.
pub(crate) fn pins_path() -> Option<PathBuf> {
    match std::env::var_os("MCP_PINS_FILE").filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => PinStore::default_path("mcp"),
    }
}

/// The pin store, when there is a place for it.
pub(crate) fn pins() -> Option<PinStore> {
    pins_path().map(PinStore::new)
}

/// A pin store error as one line, with its causes.
pub(crate) fn store_failure(e: &mcp_config::TrustError) -> Failure {
    Failure::Usage(format!(
        "pinned tool definitions: {}",
        mcp_proto::error::chain(e)
    ))
}

/// The managed policy in effect (`/etc/mcp/managed-policy.json` and
/// `$MCP_MANAGED_POLICY`); one that cannot be read starts nothing.
pub(crate) fn managed() -> Result<ManagedPolicy, Failure> {
    ManagedPolicy::system().map_err(|e| Failure::Usage(mcp_proto::error::chain(&e).to_string()))
}

/// Whether the managed policy lets the one server of `opts` start (the
/// demo server, `mcp`'s own, always may).
pub(crate) fn check_start(opts: &Options) -> Result<(), Failure> {
    let blocked = |what: String, reason: String| {
        Failure::Usage(format!(
            "{what} is blocked by the managed policy, so it was not started: {reason}"
        ))
    };
    match &opts.server {
        Server::Demo | Server::Config { .. } => Ok(()),
        Server::Configured(cfg) => {
            let policy = managed()?;
            policy
                .check_config(cfg)
                .map_err(|b| blocked(format!("server {}", line(&cfg.name)), b.reason))
        }
        Server::Stdio(command) => {
            let policy = managed()?;
            if policy.is_empty() {
                return Ok(());
            }
            let cmd = mcp_transport_stdio::ServerCommand::parse_shell_words(command)
                .map_err(|e| Failure::Usage(format!("--stdio {command:?}: {e}")))?;
            let program = cmd.get_program().to_string_lossy().into_owned();
            let args: Vec<String> = cmd
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            policy
                .check("", ServerOrigin::Command(&program, &args))
                .map_err(|b| blocked("the --stdio server".into(), b.reason))
        }
        Server::Http(url) => managed()?
            .check("", ServerOrigin::Url(url))
            .map_err(|b| blocked("the --http server".into(), b.reason)),
    }
}

/// The tools (raw, as listed) of a configured server less those its pins
/// hold back, each held one told on stderr with how to review it. First
/// use pins them all.
pub(crate) fn hold_back(
    cfg: &ServerConfig,
    items: Vec<Box<RawValue>>,
) -> Result<Vec<Box<RawValue>>, Failure> {
    let Some(store) = pins() else {
        return Ok(items);
    };
    let tools: Vec<Tool> = items
        .iter()
        .filter_map(|t| serde_json::from_str(t.get()).ok())
        .collect();
    let check = store
        .check(&mcp_config::pin_key(cfg), &tools)
        .map_err(|e| store_failure(&e))?;
    for c in &check.held {
        eprintln!("mcp: {}", held_line(&cfg.name, c));
    }
    if check.held.is_empty() {
        return Ok(items);
    }
    Ok(items
        .into_iter()
        .filter(|t| {
            let name = serde_json::from_str::<Tool>(t.get()).map(|t| t.name);
            name.is_ok_and(|n| !check.is_held(&n))
        })
        .collect())
}

/// One line saying a tool is held back and how to let it through.
pub(crate) fn held_line(server: &str, c: &ToolChange) -> String {
    let what = match c.kind {
        mcp_config::ChangeKind::Added => "is new since you approved its server's tools",
        _ => "changed since you approved it",
    };
    format!(
        "server {server}: tool {} {what}, so it is held back: review it with `mcp trust --pending`, approve it with `mcp trust --approve {server}/{}`",
        line(&c.tool),
        line(&c.tool),
        server = line(server),
    )
}

/// Checks a call of `tool` with `args` before it is sent: a configured
/// server's pins (a tool held back is refused, its change shown), then the
/// tool policy (the entry's `toolPolicy`, then the tool's annotations),
/// asking on the terminal, or approved by `--yes`. The tool's definition
/// comes from the call's shared listing ([`ToolList`]); a tool the server does not list is judged
/// by its name alone (the server will say whether it exists).
pub(crate) async fn authorize_call(
    client: &Client,
    tools: &ToolList<'_>,
    opts: &Options,
    tool: &str,
    args: Option<&RawValue>,
) -> Result<(), Failure> {
    let configured = match &opts.server {
        Server::Configured(cfg) => Some(&**cfg),
        _ => None,
    };
    let offers_tools = client
        .server()
        .is_some_and(|s| s.capabilities.tools.is_some());
    let listed = if offers_tools {
        tools.all().await
    } else {
        Ok(&[][..])
    };
    let listed = match (listed, configured) {
        (Ok(l), _) => l,
        // Without the definition a pinned server's tool cannot be checked.
        (Err(e), Some(cfg)) if pins().is_some() => {
            return Err(Failure::from_client(
                &format!("tools/list (to check {} against its pins)", line(&cfg.name)),
                e,
            ));
        }
        (Err(e), _) => {
            tracing::debug!(error = %e, "tools/list before a call failed");
            &[]
        }
    };
    if let (Some(cfg), Some(store)) = (configured, pins()) {
        let offered: Vec<Tool> = listed
            .iter()
            .filter(|t| crate::config::offers(cfg, &t.name))
            .cloned()
            .collect();
        let check = store
            .check(&mcp_config::pin_key(cfg), &offered)
            .map_err(|e| store_failure(&e))?;
        if let Some(c) = check.held.iter().find(|c| c.tool == tool) {
            eprint!("{}", c.diff());
            return Err(Failure::Usage(format!(
                "{}; nothing was sent",
                held_line(&cfg.name, c)
            )));
        }
    }
    let definition = match listed.iter().find(|t| t.name == tool) {
        Some(d) => d.clone(),
        None => serde_json::from_value(serde_json::json!({ "name": tool }))
            .map_err(|e| Failure::Usage(format!("tool name: {e}")))?,
    };
    let mut policy = ToolPolicy::new();
    if let Some(cfg) = configured {
        let p = &cfg.tool_policy;
        policy = policy
            .allow(p.allow.iter().map(String::as_str))
            .ask(p.ask.iter().map(String::as_str))
            .deny(p.deny.iter().map(String::as_str));
    }
    let server = configured.map_or_else(|| "the server".to_owned(), |c| line(&c.name));
    let mut options = ToolOptions::new().policy(policy);
    if opts.yes {
        options = options.on_ask(|_| async { true });
    } else if std::io::stdin().is_terminal() {
        let server = server.clone();
        options = options.on_ask(move |r| {
            let shown = format!(
                "mcp: tool {} of {server} asks for your approval before each call ({}).\nmcp: arguments: {}\n",
                line(&r.tool),
                r.because,
                line(&r.arguments.to_string()),
            );
            crate::form::confirm(shown, "mcp: call it? [y/N] ".into())
        });
    }
    let arguments = match args {
        Some(a) => serde_json::from_str(a.get()).map_err(|e| Failure::Usage(e.to_string()))?,
        None => serde_json::Value::Object(Default::default()),
    };
    let gate = McpTool::with_options(client.clone(), definition, options);
    match gate.authorize(&arguments).await {
        Ok(()) => Ok(()),
        Err(ToolError::Refused { why, .. }) => Err(Failure::Usage(refusal(tool, &server, &why))),
        Err(other) => Err(Failure::Usage(mcp_proto::error::chain(&other).to_string())),
    }
}

/// What to tell the user about a refused call, and what they can do.
fn refusal(tool: &str, server: &str, why: &Refusal) -> String {
    let tool = line(tool);
    match why {
        Refusal::Denied { because } => format!(
            "tool {tool} of {server} is denied by the tool policy ({because}); nothing was sent"
        ),
        Refusal::NoOneToAsk { because } => format!(
            "tool {tool} of {server} asks for your approval before each call ({because}), and stdin is not a terminal to ask on: run mcp on a terminal, or pass --yes to approve the call; nothing was sent"
        ),
        Refusal::Declined { .. } => {
            format!("you did not approve the call of tool {tool} of {server}; nothing was sent")
        }
        other => format!("tool {tool} of {server} was refused: {other}; nothing was sent"),
    }
}
