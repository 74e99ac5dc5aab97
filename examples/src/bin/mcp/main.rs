//! `mcp`: a command-line client for Model Context Protocol servers.
//!
//! The interface is fixed by the workspace's CLI contract (`mcp --help`):
//! pick a server (`--stdio "<command line>"`, `--http <URL>`, or neither for
//! the built-in demo server), then a command (`info`, `tools`, `call`,
//! `resources`, `templates`, `read`, `prompts`, `prompt`, `demo-server`).
//!
//! # Output
//!
//! With `--json`, stdout is one JSON document. Lists are the objects exactly
//! as the server sent them, all pages concatenated; `call`, `read` and
//! `prompt` print the result object as received. Nothing the server sent
//! goes through `serde_json::Value` on the way out (the workspace builds
//! `serde_json` without `preserve_order`, so `Value` would sort keys):
//! results stay [`RawValue`] text and are only re-indented
//! ([`examples::raw_json`]).
//!
//! # Exit status
//!
//! 0 success; 1 the tool reported `isError: true`; 2 usage error (bad flags,
//! bad JSON in JSON_ARGS); 3 connection, transport, protocol or timeout error
//! (one line on stderr says which and why); 130 interrupted by Ctrl-C (the
//! request in flight is cancelled on the server first); 143 on SIGTERM.
//!
//! # Processes
//!
//! A spawned stdio server runs in its own process group and never outlives
//! `mcp`: every exit path closes the client (stdin EOF, then SIGTERM, then
//! SIGKILL to the group), and a dropped transport kills the group.

mod args;
mod human;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_client::{Client, ClientError, ClientHandler, CloseReason, ListKind};
use mcp_proto::Notification;
use mcp_proto::RawJson;
use mcp_proto::schema::{
    CallToolResult, LoggingMessageParams, ProgressParams, ResourceContents, ResourceUpdatedParams,
};
use mcp_proto::transport::{BoxTransport, TransportError};
use mcp_transport_http::{HttpError, HttpTransport};
use mcp_transport_stdio::{ServerCommand, StdioTransport};
use serde_json::value::RawValue;

use crate::args::{Command, Options, Server};
use examples::raw_json::{Object, array_text, pretty};

/// How long closing the client may take before `mcp` gives up waiting (the
/// transport's own escalation to SIGKILL is shorter than this).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(6);

/// Extra time the handshake may take beyond `--timeout` (the
/// `server/discover` probe of a legacy server that never answers it).
const PROBE_ALLOWANCE: Duration = Duration::from_secs(5);

/// Exit status for Ctrl-C (128 + SIGINT).
const EXIT_INTERRUPTED: u8 = 130;
/// Exit status for SIGTERM (128 + SIGTERM).
const EXIT_TERMINATED: u8 = 143;

/// Why `mcp` stops without success.
#[derive(Debug)]
enum Failure {
    /// Exit 1: the tool ran and said `isError: true` (its output is already printed).
    ToolError,
    /// Exit 2: a usage error.
    Usage(String),
    /// Exit 3: `kind` is "connection error", "transport error", "protocol error" or "timeout".
    Fatal { kind: &'static str, message: String },
    /// Exit 130 / 143: interrupted by a signal.
    Interrupted(u8),
}

impl Failure {
    fn fatal(kind: &'static str, message: impl Into<String>) -> Self {
        Failure::Fatal {
            kind,
            message: message.into(),
        }
    }

    /// Classifies a client error for the one-line report.
    fn from_client(what: &str, e: &ClientError) -> Self {
        let mut f = Self::classify(what, e);
        if let Failure::Fatal { kind, message } = &mut f {
            // Before the handshake completes, a transport failure means the
            // server could not be reached at all.
            if what == "handshake" && *kind == "transport error" {
                *kind = "connection error";
            }
            // Name the root cause when the error's own text does not
            // (e.g. hyper's "client error (Connect)" → "Connection refused").
            let mut source = match e {
                ClientError::Transport(t) | ClientError::Closed(CloseReason::Transport(t)) => {
                    std::error::Error::source(t)
                }
                other => std::error::Error::source(other),
            };
            while let Some(cause) = source {
                let text = cause.to_string();
                if !message.contains(&text) {
                    message.push_str(": ");
                    message.push_str(&text);
                }
                source = cause.source();
            }
            if let ClientError::Transport(t) | ClientError::Closed(CloseReason::Transport(t)) = e {
                if t.kind() == mcp_proto::transport::TransportErrorKind::Unauthorized {
                    message
                        .push_str("; pass credentials with -H \"Authorization: Bearer <token>\"");
                }
            }
        }
        f
    }

    fn classify(what: &str, e: &ClientError) -> Self {
        let kind = match e {
            ClientError::Transport(_) => "transport error",
            ClientError::Timeout { .. } => "timeout",
            ClientError::Closed(CloseReason::Transport(t)) => transport_kind(t),
            ClientError::Closed(CloseReason::ServerClosed | CloseReason::DriverGone) => {
                "connection error"
            }
            _ => "protocol error",
        };
        let message = match e {
            ClientError::Rpc(obj) => format!("the server answered {what} with an error: {obj}"),
            ClientError::Closed(CloseReason::ServerClosed) => {
                format!("the server closed the connection during {what}")
            }
            // The transport error says "connection closed: <why>" itself.
            ClientError::Closed(CloseReason::Transport(t)) => format!("{what}: {t}"),
            ClientError::Closed(CloseReason::Handshake(m)) => format!("{what} failed: {m}"),
            ClientError::Timeout { after, .. } => format!(
                "{what}: no response within {:.1} s (the request was cancelled on the server; \
                 a longer --timeout may help)",
                after.as_secs_f64()
            ),
            // The library names the versions; the flag to pick one is ours.
            ClientError::UnsupportedProtocolVersion { .. } => {
                format!("{what}: {e}; pick one of those with --protocol or upgrade the server")
            }
            other => format!("{what}: {other}"),
        };
        Failure::fatal(kind, message)
    }
}

fn transport_kind(t: &TransportError) -> &'static str {
    use mcp_proto::transport::TransportErrorKind as K;
    match t.kind() {
        K::Closed | K::Unauthorized => "connection error",
        K::Timeout => "timeout",
        _ => "transport error",
    }
}

fn main() -> ExitCode {
    let opts = match args::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => return report(Failure::Usage(e.0)),
    };
    match opts.command {
        Command::Help => {
            out(args::USAGE);
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            out(&format!("mcp {}\n", env!("CARGO_PKG_VERSION")));
            return ExitCode::SUCCESS;
        }
        _ => {}
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
            .block_on(examples::demo_server::run())
            .map_err(|e| Failure::fatal("transport error", format!("demo server: {e}")))
    } else {
        runtime.block_on(run(opts))
    };
    // Dropping the runtime drops any task still holding a transport, which
    // kills a spawned server's process group.
    drop(runtime);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => report(f),
    }
}

/// Prints the one-line report and picks the exit status.
fn report(f: Failure) -> ExitCode {
    let code = match &f {
        Failure::ToolError => 1,
        Failure::Usage(msg) => {
            eprintln!("mcp: {} (see mcp --help)", one_line(msg));
            2
        }
        Failure::Fatal { kind, message } => {
            eprintln!("mcp: {kind}: {}", one_line(message));
            3
        }
        Failure::Interrupted(code) => *code,
    };
    ExitCode::from(code)
}

fn one_line(s: &str) -> String {
    s.trim().replace(['\r', '\n'], " | ")
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

/// Builds the transport the options ask for. The seam where each server
/// kind plugs in.
async fn transport(opts: &Options) -> Result<(BoxTransport, Option<OAuth>), Failure> {
    let t = match &opts.server {
        Server::Demo => {
            let exe = std::env::current_exe().map_err(|e| {
                Failure::fatal(
                    "connection error",
                    format!("cannot find the mcp binary to run its demo server: {e}"),
                )
            })?;
            spawn(ServerCommand::new(exe).arg("demo-server"))
        }
        Server::Stdio(line) => {
            let cmd = ServerCommand::parse_shell_words(line)
                .map_err(|e| Failure::Usage(format!("--stdio {line:?}: {e}")))?;
            spawn(cmd)
        }
        Server::Http(url) => return http_transport(url, opts).await,
    }?;
    Ok((t, None))
}

/// `--timeout` × 10: the cap on a request's total time however much progress it reports.
fn max_request_time(opts: &Options) -> Duration {
    opts.timeout.saturating_mul(10)
}

fn spawn(cmd: ServerCommand) -> Result<BoxTransport, Failure> {
    StdioTransport::spawn(cmd)
        .map(|t| Box::pin(t) as BoxTransport)
        .map_err(|e| Failure::fatal("connection error", e.to_string()))
}

/// `--http`: the Streamable HTTP transport (every HTTP revision, with the
/// 2024-11-05 HTTP+SSE fallback), with the `--header`s on every request, and
/// OAuth (mcp-auth) unless `--no-oauth` or an `Authorization` header is given.
async fn http_transport(
    url: &str,
    opts: &Options,
) -> Result<(BoxTransport, Option<OAuth>), Failure> {
    // The client's per-request deadlines (reset by progress) govern; the
    // transport's own wait for a response is only a backstop beyond them.
    let mut b = HttpTransport::builder(url).request_timeout(Some(max_request_time(opts)));
    for (name, value) in &opts.headers {
        b = b.header(name, value);
    }
    let has_auth_header = opts
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
    let oauth = if opts.oauth && !has_auth_header {
        let o = oauth(url).await?;
        b = b.auth(o.provider.clone());
        Some(o)
    } else {
        None
    };
    match b.build() {
        Ok(t) => Ok((Box::pin(t), oauth)),
        // Also an invalid --header (the builder reports it this way).
        Err(e @ HttpError::InvalidUrl { .. }) => Err(Failure::Usage(e.to_string())),
        Err(e) => Err(Failure::fatal(
            "connection error",
            format!("--http {url}: {e}"),
        )),
    }
}

/// How long the user has to authorize in the browser when the server
/// answers 401 and no token is cached.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// OAuth for an `--http` server.
struct OAuth {
    provider: mcp_auth::OAuthProvider,
    /// No cached token: the handshake may wait for the user.
    login_possible: bool,
}

/// Where `mcp` caches OAuth tokens: `$MCP_TOKEN_FILE`, else
/// `$XDG_CONFIG_HOME/mcp/tokens.json`, else `$HOME/.config/mcp/tokens.json`.
fn token_file() -> Option<std::path::PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(f) = var("MCP_TOKEN_FILE") {
        return Some(f.into());
    }
    let config = var("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| var("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))?;
    Some(config.join("mcp").join("tokens.json"))
}

/// The OAuth provider: a loopback redirect listener that prints the
/// authorization URL, tokens cached in [`token_file`].
async fn oauth(url: &str) -> Result<OAuth, Failure> {
    let ui = mcp_auth::LoopbackRedirect::bind(0, |u| {
        eprintln!(
            "mcp: the server needs authorization; open this URL in a browser:\n  {u}\nmcp: waiting for the browser to come back to 127.0.0.1 ..."
        );
    })
    .await
    .map_err(|e| Failure::fatal("connection error", e.to_string()))?
    .timeout(LOGIN_TIMEOUT);
    let mut b = mcp_auth::OAuthProvider::builder(url)
        .client_name("mcp")
        .interaction(ui);
    if let Some(path) = token_file() {
        b = b.store(mcp_auth::FileStore::new(path));
    }
    let provider = b
        .build()
        .map_err(|e| Failure::Usage(format!("--http {url}: {e}")))?;
    let login_possible = provider.tokens().is_none();
    Ok(OAuth {
        provider,
        login_possible,
    })
}

/// Connects, runs the command, closes. Ctrl-C or SIGTERM at any point
/// drops the command (cancelling its request on the server), then closes.
async fn run(opts: Options) -> Result<(), Failure> {
    let (transport, oauth) = transport(&opts).await?;
    let login = oauth.as_ref().is_some_and(|o| o.login_possible);
    let mut builder = Client::builder("mcp", env!("CARGO_PKG_VERSION"))
        .protocol(opts.protocol)
        .request_timeout(opts.timeout)
        .max_request_time(max_request_time(&opts))
        .resend_on_session_expiry(matches!(opts.server, Server::Http(_)))
        .handler(LogNotifications);
    // A 401 during the handshake runs the browser login inside it.
    let mut handshake_wait = opts.timeout + PROBE_ALLOWANCE;
    if login {
        builder = builder
            .handshake_timeout(opts.timeout + LOGIN_TIMEOUT)
            .probe_timeout(LOGIN_TIMEOUT);
        handshake_wait += LOGIN_TIMEOUT * 2;
    }
    let (client, driver) = builder.build(transport);
    let driver = tokio::spawn(driver);

    let work = async {
        let ready = tokio::time::timeout(handshake_wait, client.wait_ready()).await;
        match ready {
            Err(_) => {
                return Err(Failure::fatal(
                    "timeout",
                    format!("the server did not complete the handshake within {handshake_wait:?}"),
                ));
            }
            Ok(Err(e)) => {
                let mut f = Failure::from_client("handshake", &e);
                if let (Failure::Fatal { message, .. }, Some(o)) = (&mut f, &oauth)
                    && let Some(why) = o.provider.last_error()
                {
                    message.push_str("; OAuth: ");
                    message.push_str(&why);
                }
                return Err(f);
            }
            Ok(Ok(())) => {}
        }
        command(&client, &opts).await
    };
    let result = tokio::select! {
        r = work => r,
        code = interrupted() => {
            Err(Failure::Interrupted(code))
        }
    };
    // `work` is dropped here: an unfinished request's future is gone, so the
    // client queues `notifications/cancelled` for it. Closing flushes that,
    // then shuts the server down.
    if tokio::time::timeout(CLOSE_TIMEOUT, client.close())
        .await
        .is_err()
    {
        tracing::warn!("closing the connection took longer than {CLOSE_TIMEOUT:?}");
    }
    drop(client);
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, driver).await;
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

/// Resolves with the exit status when Ctrl-C (or, on Unix, SIGTERM) arrives.
async fn interrupted() -> u8 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        match term {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => EXIT_INTERRUPTED,
                _ = term.recv() => EXIT_TERMINATED,
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                EXIT_INTERRUPTED
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        EXIT_INTERRUPTED
    }
}

async fn command(client: &Client, opts: &Options) -> Result<(), Failure> {
    match &opts.command {
        Command::Info => info(client, opts.json),
        Command::Tools => list(client, opts.json, "tools/list", "tools", human::tools).await,
        Command::Resources => {
            list(
                client,
                opts.json,
                "resources/list",
                "resources",
                human::resources,
            )
            .await
        }
        Command::Templates => {
            list(
                client,
                opts.json,
                "resources/templates/list",
                "resourceTemplates",
                human::templates,
            )
            .await
        }
        Command::Prompts => {
            list(client, opts.json, "prompts/list", "prompts", human::prompts).await
        }
        Command::Call { tool, args } => call(client, opts.json, tool, args.as_deref()).await,
        Command::Read { uri } => read(client, opts.json, uri).await,
        Command::Prompt { name, args } => prompt(client, opts.json, name, args.as_deref()).await,
        Command::DemoServer | Command::Help | Command::Version => Ok(()),
    }
}

fn info(client: &Client, json: bool) -> Result<(), Failure> {
    let Some(s) = client.server() else {
        return Err(Failure::fatal(
            "protocol error",
            "the handshake finished but the client has no server information",
        ));
    };
    if !json {
        out(&human::info(&s));
        return Ok(());
    }
    let doc = format!(
        "{{\"serverInfo\":{},\"protocolVersion\":{},\"capabilities\":{},\"instructions\":{},\"supportedVersions\":{}}}",
        enc(&s.implementation),
        enc(&s.protocol_version.as_str()),
        enc(&s.capabilities),
        enc(&s.instructions),
        enc(&s.supported_versions),
    );
    out(&(pretty(&doc) + "\n"));
    Ok(())
}

/// JSON text of a value the client decoded (`serverInfo`, capabilities) for `info --json`.
fn enc<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// Every page of `method`, raw, following `nextCursor` (up to
/// [`mcp_client::DEFAULT_MAX_LIST_PAGES`]).
async fn list_pages(client: &Client, method: &str) -> Result<Vec<RawJson>, ClientError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cursor {
        next_cursor: Option<String>,
    }
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..mcp_client::DEFAULT_MAX_LIST_PAGES {
        let params = match &cursor {
            Some(c) => RawJson::from_value(&serde_json::json!({ "cursor": c })).ok(),
            None => None,
        };
        let page = client.request_raw(method.to_owned(), params).await?;
        let next: Cursor = page.decode().map_err(|e| ClientError::Decode {
            method: method.to_owned(),
            source: Arc::new(e),
        })?;
        pages.push(page);
        match next.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(pages),
        }
    }
    Err(ClientError::TooManyPages {
        method: method.to_owned(),
        limit: mcp_client::DEFAULT_MAX_LIST_PAGES,
    })
}

/// Every page of `method`, each page's `key` array concatenated.
async fn list(
    client: &Client,
    json: bool,
    method: &str,
    key: &str,
    show: fn(&[Box<RawValue>]) -> String,
) -> Result<(), Failure> {
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
    if json {
        out(&(pretty(&array_text(items.iter().map(|b| &**b))) + "\n"));
    } else {
        out(&show(&items));
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

/// Progress drawn on stderr: a redrawn bar on a terminal, one plain line
/// per notification otherwise (logs, pipes, tests).
#[derive(Debug)]
struct ProgressBar {
    tty: bool,
    drawn: AtomicBool,
}

/// Width of the bar in cells.
const BAR_WIDTH: usize = 30;

impl ProgressBar {
    fn new() -> Self {
        ProgressBar {
            tty: std::io::stderr().is_terminal(),
            drawn: AtomicBool::new(false),
        }
    }

    fn draw(&self, p: &ProgressParams) {
        let msg = p
            .message
            .as_deref()
            .map(|m| format!(" {}", one_line(m)))
            .unwrap_or_default();
        let count = match p.total {
            Some(t) => format!("{}/{}", fmt_num(p.progress), fmt_num(t)),
            None => fmt_num(p.progress),
        };
        let line = match p.total.filter(|t| *t > 0.0) {
            Some(total) => {
                let frac = (p.progress / total).clamp(0.0, 1.0);
                // Truncation is intended: cells fully reached.
                let filled = ((frac * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
                format!(
                    "[{}{}] {count} ({:.0}%){msg}",
                    "#".repeat(filled),
                    "-".repeat(BAR_WIDTH - filled),
                    frac * 100.0
                )
            }
            None => format!("progress {count}{msg}"),
        };
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(err, "progress: {line}");
        }
        let _ = err.flush();
        self.drawn.store(true, Ordering::Relaxed);
    }

    /// Clears a terminal bar so the result starts on a clean line.
    fn finish(&self) {
        if self.tty && self.drawn.swap(false, Ordering::Relaxed) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.finish();
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}
