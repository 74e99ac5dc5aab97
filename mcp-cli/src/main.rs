//! `mcp`: a command-line client for Model Context Protocol servers.
//!
//! The interface is fixed by the workspace's CLI contract (`mcp --help`):
//! pick a server (`--stdio "<command line>"`, `--http <URL>`, a configured
//! one with `--config PATH` / the project's `.mcp.json`, `.vscode/mcp.json`
//! or `.cursor/mcp.json` and `--server NAME`, or none of these for the
//! built-in demo server), then a command (`info`, `servers`, `tools`,
//! `call`, `resources`, `templates`, `read`, `prompts`, `prompt`,
//! `completions`, `demo-server`, `trust`).
//!
//! Project config files found in the current directory start nothing until
//! the user trusted them (shown in full, asked on a terminal, or `mcp
//! trust`; kept by path and content hash): see the `trust` module.
//!
//! Over every configured server (`servers`, and `tools` without
//! `--server`), `--json` prints an array of one object per server
//! (`name`, `transport`, `status`, `protocolVersion`, `tools`,
//! `startSeconds`, `error`, `source`), or of one per tool
//! (`{"server", "name": "<server>/<tool>", "tool": <as sent>}`).
//!
//! # Output
//!
//! With `--json`, stdout is one JSON document. Lists are the objects exactly
//! as the server sent them, all pages concatenated; `call`, `read` and
//! `prompt` print the result object as received. Nothing the server sent
//! goes through `serde_json::Value` on the way out (the workspace builds
//! `serde_json` without `preserve_order`, so `Value` would sort keys):
//! results stay [`RawValue`] text and are only re-indented
//! ([`mcp_cli::raw_json`]).
//!
//! # Exit status
//!
//! 0 success; 1 the tool reported `isError: true`; 2 usage error (bad flags,
//! bad JSON in JSON_ARGS); 3 connection, transport, protocol or timeout error
//! (one line on stderr says which and why); 4 the server answered with a
//! JSON-RPC error (unknown tool, invalid arguments, method not found: its
//! code and message quoted); 130 interrupted by Ctrl-C (the request in
//! flight is cancelled on the server first); 143 on SIGTERM.
//!
//! # Processes
//!
//! A spawned stdio server runs in its own process group and never outlives
//! `mcp`: every exit path closes the client (stdin EOF, then SIGTERM, then
//! SIGKILL to the group), and a dropped transport kills the group.

mod args;
mod config;
mod connect;
mod failure;
mod fleet;
mod human;
mod progress;
mod trust;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ClientError, ClientHandler, ListKind};
use mcp_proto::Notification;
use mcp_proto::RawJson;
use mcp_proto::schema::{
    CallToolResult, LoggingMessageParams, ProgressParams, ResourceContents, ResourceUpdatedParams,
    ServerCapabilities,
};
use mcp_proto::transport::BoxTransport;
use serde_json::value::RawValue;
use tokio::task::JoinHandle;

use crate::args::{Command, Options, Server};
use crate::connect::{LOGIN_TIMEOUT, max_request_time, transport};
use crate::failure::{Failure, report};
use crate::progress::ProgressBar;
use mcp_cli::raw_json::{Object, array_text, pretty};

/// How long closing the client may take before `mcp` gives up waiting (the
/// transport's own escalation to SIGKILL is shorter than this).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(6);

/// How long the server has to exit after a timeout or Ctrl-C (the
/// cancellation is written first) before its process group is killed.
const CLOSE_AFTER_CANCEL: Duration = Duration::from_millis(500);

/// Whether the server is a process `mcp` spawns.
fn spawned(server: &Server) -> bool {
    match server {
        Server::Demo | Server::Stdio(_) => true,
        Server::Configured(cfg) => matches!(cfg.transport, mcp_config::TransportConfig::Stdio(_)),
        Server::Http(_) | Server::Config { .. } => false,
    }
}

/// Extra time the handshake may take beyond `--timeout` (the
/// `server/discover` probe of a legacy server that never answers it).
const PROBE_ALLOWANCE: Duration = Duration::from_secs(5);

/// Exit status for Ctrl-C (128 + SIGINT).
const EXIT_INTERRUPTED: u8 = 130;
/// Exit status for SIGTERM (128 + SIGTERM).
const EXIT_TERMINATED: u8 = 143;

fn main() -> ExitCode {
    let opts = match args::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(args::Stop::Print(text)) => {
            out(&text);
            return ExitCode::SUCCESS;
        }
        Err(args::Stop::Usage(e)) => return report(Failure::Usage(e)),
    };
    if let Command::Completions(shell) = opts.command {
        let mut text = Vec::new();
        clap_complete::generate(shell, &mut args::command(), "mcp", &mut text);
        out(&String::from_utf8_lossy(&text));
        return ExitCode::SUCCESS;
    }
    if let Command::Trust { files, revoke } = &opts.command {
        return match trust::command(files, *revoke) {
            Ok(()) => ExitCode::SUCCESS,
            Err(f) => report(f),
        };
    }
    init_tracing(opts.verbose);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return report(Failure::fatal(
                "connection error",
                format!("cannot start the async runtime: {e}"),
            ));
        }
    };
    let result = if opts.command == Command::DemoServer {
        runtime
            .block_on(mcp_cli::demo_server::run())
            .map_err(|e| Failure::fatal("transport error", format!("demo server: {e}")))
    } else {
        match pick(opts) {
            Ok(Pick::One(opts)) => runtime.block_on(run(opts)),
            Ok(Pick::All(opts, configured)) => runtime.block_on(fleet::run(opts, configured)),
            Err(f) => Err(f),
        }
    };
    // Dropping the runtime drops any task still holding a transport, which
    // kills a spawned server's process group.
    drop(runtime);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => report(f),
    }
}

/// What the command talks to.
enum Pick {
    /// One server.
    One(Options),
    /// Every configured server (`servers`, and `tools` without `--server`).
    All(Options, config::Configured),
}

/// With no `--stdio`/`--http`: reads `--config` or the project files and
/// picks the server (`--server`, the only one, or the `<server>/` of a
/// qualified tool name), every server, or the demo server when there is no
/// configuration.
fn pick(mut opts: Options) -> Result<Pick, Failure> {
    let Server::Config { file, name } = &opts.server else {
        if opts.command == Command::Servers {
            return Err(Failure::Usage(
                "`servers` lists configured servers: use --config PATH, or run mcp in a \
                 directory with .mcp.json, .vscode/mcp.json or .cursor/mcp.json"
                    .into(),
            ));
        }
        return Ok(Pick::One(opts));
    };
    let (file, name) = (file.clone(), name.clone());
    let Some(mut configured) = config::load(file.as_deref())? else {
        if name.is_some() || opts.command == Command::Servers {
            return Err(Failure::Usage(
                "no configured servers: use --config PATH, or run mcp in a directory with \
                 .mcp.json, .vscode/mcp.json or .cursor/mcp.json"
                    .into(),
            ));
        }
        opts.server = Server::Demo;
        return Ok(Pick::One(opts));
    };
    if let Some(name) = name {
        let server = configured.take(&name)?;
        if opts.command == Command::Servers {
            configured.servers = vec![server];
            return Ok(Pick::All(opts, configured));
        }
        opts.server = Server::Configured(Box::new(server));
        return Ok(Pick::One(opts));
    }
    if matches!(opts.command, Command::Servers | Command::Tools) {
        return Ok(Pick::All(opts, configured));
    }
    // `call <server>/<tool>`, as `mcp tools` lists it.
    if let Command::Call { tool, .. } = &mut opts.command
        && let Some((server, bare)) = tool.split_once('/')
        && configured.servers.iter().any(|s| s.name == server)
    {
        let (server, bare) = (server.to_owned(), bare.to_owned());
        *tool = bare;
        opts.server = Server::Configured(Box::new(configured.take(&server)?));
        return Ok(Pick::One(opts));
    }
    if configured.servers.len() == 1 {
        let only = configured.servers.remove(0);
        opts.server = Server::Configured(Box::new(only));
        return Ok(Pick::One(opts));
    }
    Err(Failure::Usage(format!(
        "{} servers are configured in {} ({}): pick one with --server NAME",
        configured.servers.len(),
        configured.file_names(),
        configured.names()
    )))
}

/// Writes to stdout, ignoring a closed pipe (`mcp tools | head`).
fn out(s: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(s.as_bytes());
    let _ = stdout.flush();
}

fn init_tracing(verbose: u8) {
    if verbose == 0 {
        return;
    }
    let default = match verbose {
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// The client builder as the options set it up, and how long its
/// handshake may take. `login`: an OAuth login may run inside the
/// handshake.
pub(crate) fn client_builder(opts: &Options, login: bool) -> (ClientBuilder, Duration) {
    let mut builder = Client::builder("mcp", env!("CARGO_PKG_VERSION"))
        .protocol(opts.protocol)
        .request_timeout(opts.timeout)
        .max_request_time(max_request_time(opts))
        .resend_on_session_expiry(!spawned(&opts.server))
        .handler(LogNotifications);
    // A 401 during the handshake runs the browser login inside it.
    // A server slow to answer `server/discover` is handled by the session
    // (a late answer still wins over the fallback `initialize`).
    let mut handshake_wait = opts.timeout + PROBE_ALLOWANCE;
    if login {
        builder = builder
            .handshake_timeout(opts.timeout + LOGIN_TIMEOUT)
            .probe_timeout(LOGIN_TIMEOUT);
        handshake_wait += LOGIN_TIMEOUT * 2;
    }
    (builder, handshake_wait)
}

/// A client for `transport` as the options set it up, with its driver
/// running, and how long its handshake may take. `login`: an OAuth login
/// may run inside the handshake.
pub(crate) fn start_client(
    opts: &Options,
    transport: BoxTransport,
    login: bool,
) -> (Client, JoinHandle<()>, Duration) {
    let (builder, handshake_wait) = client_builder(opts, login);
    let (client, driver) = builder.build(transport);
    let driver = tokio::spawn(async move {
        let _ = driver.await;
    });
    (client, driver, handshake_wait)
}

/// Waits up to `wait` for the handshake to complete.
pub(crate) async fn handshake(client: &Client, wait: Duration) -> Result<(), Failure> {
    match tokio::time::timeout(wait, client.wait_ready()).await {
        Err(_) => Err(Failure::fatal(
            "timeout",
            format!("the server did not complete the handshake within {wait:?}"),
        )),
        Ok(Err(e)) => Err(Failure::from_client("handshake", &e)),
        Ok(Ok(())) => Ok(()),
    }
}

/// Connects, runs the command, closes. Ctrl-C or SIGTERM at any point
/// drops the command (cancelling its request on the server), then closes.
async fn run(opts: Options) -> Result<(), Failure> {
    let mut interrupts = Interrupts::listen();
    let (transport, oauth) = tokio::select! {
        r = transport(&opts) => r?,
        code = interrupts.recv() => return Err(Failure::Interrupted(code)),
    };
    let login = oauth.as_ref().is_some_and(|o| o.login_possible);
    let (client, driver, handshake_wait) = start_client(&opts, transport, login);

    let work = async {
        // An OAuth failure is in the error's chain, which the report names.
        handshake(&client, handshake_wait).await?;
        command(&client, &opts).await
    };
    let result = tokio::select! {
        r = work => r,
        code = interrupts.recv() => {
            Err(Failure::Interrupted(code))
        }
    };
    // `work` is dropped here: an unfinished request's future is gone, so the
    // client queues `notifications/cancelled` for it (a timed-out request's
    // was queued when it timed out). Closing flushes that, then shuts the
    // server down. After a timeout or a signal the user is waiting, and the
    // server may still be busy with the abandoned request: it gets
    // CLOSE_AFTER_CANCEL to exit, then its process group is killed (the
    // driver's transport dropped) instead of the full shutdown grace.
    let hurry = matches!(
        result,
        Err(Failure::Interrupted(_)
            | Failure::Fatal {
                kind: "timeout",
                ..
            })
    );
    let close_wait = if hurry {
        CLOSE_AFTER_CANCEL
    } else {
        CLOSE_TIMEOUT
    };
    if tokio::time::timeout(close_wait, client.close())
        .await
        .is_err()
        && !hurry
    {
        tracing::warn!("closing the connection took longer than {CLOSE_TIMEOUT:?}");
    }
    drop(client);
    if hurry {
        driver.abort();
    }
    let _ = tokio::time::timeout(close_wait, driver).await;
    result
}

/// Shows the server's notifications (log messages, list changes…) with `-v`.
#[derive(Debug)]
struct LogNotifications;

impl ClientHandler for LogNotifications {
    fn on_logging_message(&self, p: LoggingMessageParams) {
        let logger = p.logger.as_deref().unwrap_or("");
        tracing::info!(target: "mcp::server", level = ?p.level, logger, data = %p.data, "server log");
    }
    fn on_list_changed(&self, kind: ListKind) {
        tracing::info!(target: "mcp::server", ?kind, "server list changed");
    }
    fn on_resource_updated(&self, p: ResourceUpdatedParams) {
        tracing::info!(target: "mcp::server", uri = %p.uri, "resource updated");
    }
    fn other_notification(&self, n: Notification) {
        let params = n.params.as_ref().map_or("", |p| p.get());
        tracing::info!(target: "mcp::server", method = %n.method, params, "server notification");
    }
}

/// Ctrl-C and, on Unix, SIGTERM, listened to from before any server is
/// spawned: a signal at any moment then stops `mcp` through its own
/// shutdown (which kills the servers' process groups) instead of the
/// default action, which would leave behind a server that ignores its
/// stdin closing.
pub(crate) struct Interrupts {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    pub(crate) fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Interrupts {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        Interrupts {}
    }

    /// Resolves with the exit status when a signal arrives.
    pub(crate) async fn recv(&mut self) -> u8 {
        #[cfg(unix)]
        {
            // A signal that could not be listened to keeps its default action.
            async fn next(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                _ = next(&mut self.int) => EXIT_INTERRUPTED,
                _ = next(&mut self.term) => EXIT_TERMINATED,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            EXIT_INTERRUPTED
        }
    }
}

async fn command(client: &Client, opts: &Options) -> Result<(), Failure> {
    let verbose = opts.verbose > 0;
    match &opts.command {
        Command::Info => info(client, opts.json),
        Command::Tools => list(client, &opts.server, opts.json, verbose, Listing::Tools).await,
        Command::Resources => {
            list(client, &opts.server, opts.json, verbose, Listing::Resources).await
        }
        Command::Templates => {
            list(client, &opts.server, opts.json, verbose, Listing::Templates).await
        }
        Command::Prompts => list(client, &opts.server, opts.json, verbose, Listing::Prompts).await,
        Command::Call { tool, args } => call(client, opts.json, tool, args.as_deref()).await,
        Command::Read { uri } => read(client, opts.json, uri).await,
        Command::Prompt { name, args } => prompt(client, opts.json, name, args.as_deref()).await,
        // Handled before a server is picked.
        Command::Servers
        | Command::DemoServer
        | Command::Completions(_)
        | Command::Trust { .. } => Ok(()),
    }
}

fn info(client: &Client, json: bool) -> Result<(), Failure> {
    let Some(s) = client.server() else {
        return Err(Failure::fatal(
            "protocol error",
            "the handshake finished but the client has no server information",
        ));
    };
    // Only what the server said: `supportedVersions` of a 2026-07-28
    // `server/discover` result, as sent; `initialize` never says.
    let said = Object::parse(s.raw.get())
        .ok()
        .and_then(|o| o.get("supportedVersions").map(|v| v.get().to_owned()));
    if !json {
        let versions: Option<Vec<String>> =
            said.as_deref().and_then(|v| serde_json::from_str(v).ok());
        out(&human::info(&s, versions.as_deref()));
        return Ok(());
    }
    let mut doc = format!(
        "{{\"serverInfo\":{},\"protocolVersion\":{},\"capabilities\":{},\"instructions\":{}",
        enc(&s.implementation),
        enc(&s.protocol_version.as_str()),
        enc(&s.capabilities),
        enc(&s.instructions),
    );
    if let Some(versions) = said {
        doc.push_str(",\"supportedVersions\":");
        doc.push_str(&versions);
    }
    doc.push('}');
    out(&(pretty(&doc) + "\n"));
    Ok(())
}

/// JSON text of a value the client decoded (`serverInfo`, capabilities) for `info --json`.
fn enc<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The four paginated lists.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listing {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl Listing {
    fn method(self) -> &'static str {
        match self {
            Listing::Tools => "tools/list",
            Listing::Resources => "resources/list",
            Listing::Templates => "resources/templates/list",
            Listing::Prompts => "prompts/list",
        }
    }

    /// The result's array member.
    fn key(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Resources => "resources",
            Listing::Templates => "resourceTemplates",
            Listing::Prompts => "prompts",
        }
    }

    /// The capability a server advertises when it serves this list.
    fn capability(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Resources | Listing::Templates => "resources",
            Listing::Prompts => "prompts",
        }
    }

    fn offered(self, caps: &ServerCapabilities) -> bool {
        match self {
            Listing::Tools => caps.tools.is_some(),
            Listing::Resources | Listing::Templates => caps.resources.is_some(),
            Listing::Prompts => caps.prompts.is_some(),
        }
    }

    fn human(self, items: &[Box<RawValue>], verbose: bool) -> String {
        match self {
            Listing::Tools => human::tools(items, verbose, ""),
            Listing::Resources => human::resources(items, verbose),
            Listing::Templates => human::templates(items, verbose),
            Listing::Prompts => human::prompts(items, verbose),
        }
    }
}

/// Every page of `method`, raw, following `nextCursor` (up to the
/// client's [`max_list_pages`](Client::max_list_pages)).
async fn list_pages(client: &Client, method: &str) -> Result<Vec<RawJson>, ClientError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cursor {
        next_cursor: Option<String>,
    }
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..client.max_list_pages() {
        let params = match &cursor {
            Some(c) => RawJson::from_value(&serde_json::json!({ "cursor": c })).ok(),
            None => None,
        };
        let page = client.request_raw(method.to_owned(), params).await?;
        let next: Cursor = page.decode().map_err(|e| ClientError::Decode {
            method: method.to_owned(),
            source: e.into(),
        })?;
        pages.push(page);
        match next.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(pages),
        }
    }
    Err(ClientError::TooManyPages {
        method: method.to_owned(),
        limit: client.max_list_pages(),
    })
}

/// Every page of the list, each page's array concatenated.
pub(crate) async fn list_items(
    client: &Client,
    what: Listing,
) -> Result<Vec<Box<RawValue>>, Failure> {
    let method = what.method();
    let key = what.key();
    let pages = list_pages(client, method)
        .await
        .map_err(|e| Failure::from_client(method, &e))?;
    let mut items = Vec::new();
    for page in &pages {
        let obj = Object::parse(page.get()).map_err(|e| {
            Failure::fatal(
                "protocol error",
                format!("{method} result is not an object: {e}"),
            )
        })?;
        match obj.get(key) {
            None => {}
            Some(_) => items.extend(obj.array(key).ok_or_else(|| {
                Failure::fatal(
                    "protocol error",
                    format!("{method} result's `{key}` is not an array"),
                )
            })?),
        }
    }
    Ok(items)
}

/// Prints the list (see [`list_items`]). A server that
/// did not advertise the capability is not asked: the list is empty, and
/// the human output says why.
///
/// Tools of a configured server: those its `includeTools`/`excludeTools`
/// let the host offer.
async fn list(
    client: &Client,
    server: &Server,
    json: bool,
    verbose: bool,
    what: Listing,
) -> Result<(), Failure> {
    if let Some(s) = client.server()
        && !what.offered(&s.capabilities)
    {
        if json {
            out("[]\n");
        } else {
            let cap = what.capability();
            out(&format!(
                "(none: the server does not offer {cap}; it did not advertise the `{cap}` capability)\n"
            ));
        }
        return Ok(());
    }
    let mut items = list_items(client, what).await?;
    if let (Listing::Tools, Server::Configured(cfg)) = (what, server) {
        items = config::offered_tools(cfg, items);
    }
    if json {
        out(&(pretty(&array_text(items.iter().map(|b| &**b))) + "\n"));
    } else {
        out(&what.human(&items, verbose));
    }
    Ok(())
}

/// Parses JSON_ARGS: must be a JSON object. Returns its text, unchanged.
fn json_args(args: Option<&str>, what: &str) -> Result<Option<Box<RawValue>>, Failure> {
    let Some(text) = args else {
        return Ok(None);
    };
    let raw: Box<RawValue> = serde_json::from_str(text)
        .map_err(|e| Failure::Usage(format!("JSON_ARGS for {what} is not valid JSON: {e}")))?;
    if !raw.get().trim_start().starts_with('{') {
        return Err(Failure::Usage(format!(
            "JSON_ARGS for {what} must be a JSON object, like '{{\"a\": 1}}'"
        )));
    }
    Ok(Some(raw))
}

/// `{"<key>": <name>, "arguments": <args>}` with the arguments' text as typed.
fn named_params(key: &str, name: &str, args: Option<&RawValue>) -> Result<RawJson, Failure> {
    let name = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".into());
    let text = match args {
        Some(a) => format!("{{\"{key}\":{name},\"arguments\":{}}}", a.get()),
        None => format!("{{\"{key}\":{name}}}"),
    };
    RawJson::from_string(text).map_err(|e| Failure::Usage(format!("bad arguments: {e}")))
}

fn result_object(method: &str, raw: &RawJson) -> Result<Object, Failure> {
    Object::parse(raw.get()).map_err(|e| {
        Failure::fatal(
            "protocol error",
            format!("the {method} result is not an object: {e}"),
        )
    })
}

async fn call(client: &Client, json: bool, tool: &str, args: Option<&str>) -> Result<(), Failure> {
    let args = json_args(args, &format!("tool {tool:?}"))?;
    let params = named_params("name", tool, args.as_deref())?;
    let bar = Arc::new(ProgressBar::new());
    let on_progress = {
        let bar = bar.clone();
        move |p: ProgressParams| bar.draw(&p)
    };
    let raw = client
        .request_raw("tools/call", Some(params))
        .on_progress(on_progress)
        .send()
        .await;
    bar.finish();
    let raw = raw.map_err(|e| Failure::from_client(&format!("tools/call {tool}"), &e))?;
    let result: CallToolResult = serde_json::from_str(raw.get()).map_err(|e| {
        Failure::fatal(
            "protocol error",
            format!("the tools/call result is malformed: {e}"),
        )
    })?;
    if json {
        out(&(pretty(raw.get()) + "\n"));
    } else {
        out(&human::call(&result));
    }
    if result.is_error() {
        Err(Failure::ToolError)
    } else {
        Ok(())
    }
}

async fn read(client: &Client, json: bool, uri: &str) -> Result<(), Failure> {
    let uri_json = serde_json::to_string(uri).unwrap_or_else(|_| "\"\"".into());
    let params = RawJson::from_string(format!("{{\"uri\":{uri_json}}}"))
        .map_err(|e| Failure::Usage(format!("bad URI: {e}")))?;
    let raw = client
        .request_raw("resources/read", Some(params))
        .send()
        .await
        .map_err(|e| Failure::from_client(&format!("resources/read {uri}"), &e))?;
    if json {
        out(&(pretty(raw.get()) + "\n"));
        return Ok(());
    }
    let obj = result_object("resources/read", &raw)?;
    let contents: Vec<ResourceContents> = obj
        .get("contents")
        .map(|c| serde_json::from_str(c.get()))
        .transpose()
        .map_err(|e| {
            Failure::fatal(
                "protocol error",
                format!("the resources/read result is malformed: {e}"),
            )
        })?
        .unwrap_or_default();
    out(&human::read(&contents));
    Ok(())
}

async fn prompt(
    client: &Client,
    json: bool,
    name: &str,
    args: Option<&str>,
) -> Result<(), Failure> {
    let args = json_args(args, &format!("prompt {name:?}"))?;
    let params = named_params("name", name, args.as_deref())?;
    let raw = client
        .request_raw("prompts/get", Some(params))
        .send()
        .await
        .map_err(|e| Failure::from_client(&format!("prompts/get {name}"), &e))?;
    if json {
        out(&(pretty(raw.get()) + "\n"));
    } else {
        out(&human::prompt(&result_object("prompts/get", &raw)?));
    }
    Ok(())
}
