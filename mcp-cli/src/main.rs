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
//! trust`; kept by path and content hash): see the `trust` module. After
//! that, the `policy` module checks before anything is sent: the managed
//! policy (may the server start), a configured server's pinned tool
//! definitions (is the tool as approved: `mcp trust --pending`,
//! `--approve`, in the `approve` module), and the tool policy (allow, ask
//! on the terminal or `--yes`, deny).
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
//! results stay [`RawValue`](serde_json::value::RawValue) text and are only re-indented
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
//!
//! A configured server with `"sandboxEnabled": true` runs confined
//! (mcp-sandbox): `mcp` itself is the launcher (`mcp_sandbox::hook()` is
//! the first thing `main` does); where no sandbox can be had it is not
//! started and `mcp` says why.

mod approve;
mod args;
mod bridge;
mod cassette;
mod commands;
mod config;
mod connect;
mod definitions;
mod failure;
mod fleet;
#[cfg(unix)]
mod form;
mod handler;
mod hosts;
mod human;
mod own_stdio;
mod policy;
mod progress;
mod search;
mod tasks;
#[cfg(feature = "otel")]
mod telemetry;
mod tool_list;
mod trust;
mod typed_args;
#[cfg(feature = "otel")]
mod w3c;

/// Without the `otel` feature: the log lines of `-v` only.
#[cfg(not(feature = "otel"))]
mod telemetry {
    pub(crate) struct Telemetry;

    pub(crate) fn init(verbose: u8, _traced: bool) -> Telemetry {
        if verbose > 0 {
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
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .init();
        }
        Telemetry
    }

    impl Telemetry {
        pub(crate) fn run_span(&self, _command: &str) -> tracing::Span {
            tracing::Span::none()
        }
        pub(crate) fn shutdown(self) {}
    }
}

/// Without termios and poll the terminal form is not built: requests for
/// input are declined with a line saying so.
#[cfg(not(unix))]
mod form {
    use mcp_proto::schema::{ElicitFormParams, ElicitResult, ElicitUrlParams};

    pub(crate) fn asking() -> bool {
        false
    }
    pub(crate) fn cancel_active() -> bool {
        false
    }
    pub(crate) fn user_time() -> (Option<std::time::Instant>, std::time::Duration) {
        (None, std::time::Duration::ZERO)
    }
    pub(crate) async fn ask_form(_: String, _: ElicitFormParams) -> ElicitResult {
        eprintln!("mcp: declined the server's request for input: forms need a Unix terminal");
        ElicitResult::decline()
    }
    pub(crate) async fn ask_url(_: String, _: ElicitUrlParams) -> ElicitResult {
        eprintln!("mcp: declined the server's request to open a URL: this needs a Unix terminal");
        ElicitResult::decline()
    }
    pub(crate) async fn confirm(_: String, _: String) -> bool {
        eprintln!(
            "mcp: cannot ask on this terminal (this needs a Unix terminal); pass --yes to approve"
        );
        false
    }
}

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_proto::transport::BoxTransport;
use tokio::task::JoinHandle;

use crate::args::{Command, Options, Server};
use crate::commands::command;
use crate::connect::{LOGIN_TIMEOUT, max_request_time, transport};
use crate::failure::{Failure, report};

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

/// Longest the `server/discover` probe waits before the session falls
/// back to `initialize` (a legacy server that ignores the probe), and at
/// most half of `--timeout`, so the fallback has the other half.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a stdio server of ours (bridge, replay) waits at exit for the
/// blocked read of a stdin its host has not closed.
const STDIN_SHUTDOWN: Duration = Duration::from_millis(100);

/// Exit status for Ctrl-C (128 + SIGINT).
const EXIT_INTERRUPTED: u8 = 130;
/// Exit status for SIGTERM (128 + SIGTERM).
const EXIT_TERMINATED: u8 = 143;

fn main() -> ExitCode {
    // `mcp` is its own sandbox launcher: started as one, this confines the
    // process and runs the server in its place (never returns).
    mcp_transport_stdio::sandbox::hook();
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
    if let Command::Approve { approve } = &opts.command {
        return match approve::command(approve) {
            Ok(()) => ExitCode::SUCCESS,
            Err(f) => report(f),
        };
    }
    let telemetry = telemetry::init(opts.verbose, opts.command != Command::DemoServer);
    let run_span = telemetry.run_span(opts.command.name());
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
    // A stdio server of ours (bridge, replay) may end while its host
    // still holds stdin open: the runtime must not wait for that read.
    let serves_stdio = matches!(
        opts.command,
        Command::Bridge { .. } | Command::Replay { .. }
    );
    let result = if opts.command == Command::DemoServer {
        runtime
            .block_on(mcp_cli::demo_server::run())
            .map_err(|e| Failure::fatal("transport error", format!("demo server: {e}")))
    } else if let Command::Replay { file } = &opts.command {
        runtime.block_on(cassette::replay::run(file))
    } else {
        use tracing::Instrument as _;
        match pick(opts) {
            // The managed policy decides whether the server may start, for a
            // bridge as for any command.
            Ok(Pick::One(opts)) => match policy::check_start(&opts) {
                Ok(()) if matches!(opts.command, Command::Bridge { .. }) => {
                    runtime.block_on(bridge::run(opts).instrument(run_span))
                }
                Ok(()) => runtime.block_on(run(opts).instrument(run_span)),
                Err(f) => Err(f),
            },
            Ok(Pick::All(opts, _)) if opts.record.is_some() => Err(Failure::Usage(
                "mcp record records one server: pick one with --server NAME".into(),
            )),
            Ok(Pick::All(opts, configured)) => {
                runtime.block_on(fleet::run(opts, configured).instrument(run_span))
            }
            Ok(Pick::Done) => Ok(()),
            Err(f) => Err(f),
        }
    };
    // Dropping the runtime drops any task still holding a transport, which
    // kills a spawned server's process group.
    if serves_stdio {
        runtime.shutdown_timeout(STDIN_SHUTDOWN);
    } else {
        drop(runtime);
    }
    // The run's spans have ended: export them (when asked to).
    telemetry.shutdown();
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
    /// Answered already (`servers` listing definitions).
    Done,
}

/// With no `--stdio`/`--http`: reads `--config`, the project files or the
/// hosts' files `--from` names, and picks the server (`--server`, the only
/// one, or the `<server>/` of a qualified tool name), every server, or the
/// demo server when there is no configuration. `servers` that starts
/// nothing ([`definitions`]) is answered here, before any trust or start.
fn pick(mut opts: Options) -> Result<Pick, Failure> {
    let is_servers = matches!(opts.command, Command::Servers { .. });
    let Server::Config { file, name, from } = &opts.server else {
        if is_servers {
            return Err(Failure::Usage(
                "`servers` lists configured servers: use --config PATH or --from SOURCES, or \
                 run mcp in a directory with .mcp.json, .vscode/mcp.json or .cursor/mcp.json"
                    .into(),
            ));
        }
        return Ok(Pick::One(opts));
    };
    let (file, name) = (file.clone(), name.clone());
    let read = if from.is_empty() {
        config::read(file.as_deref())?
    } else {
        Some(hosts::read(from)?)
    };
    if let Command::Servers { start } = opts.command
        && !start.unwrap_or(from.is_empty())
    {
        let read = read.unwrap_or_else(|| config::Read::new(true));
        read.warn();
        definitions::print(&read, name.as_deref(), opts.json);
        return Ok(Pick::Done);
    }
    let Some(read) = read else {
        if name.is_some() || is_servers {
            return Err(Failure::Usage(
                "no configured servers: use --config PATH or --from SOURCES, or run mcp in a \
                 directory with .mcp.json, .vscode/mcp.json or .cursor/mcp.json"
                    .into(),
            ));
        }
        opts.server = Server::Demo;
        return Ok(Pick::One(opts));
    };
    read.warn();
    if read.files.is_empty() {
        let looked = if read.absent.is_empty() {
            String::new()
        } else {
            format!(" (no file for {})", hosts::absent(&read.absent))
        };
        return Err(Failure::Usage(format!(
            "no configured servers in the sources --from names{looked}"
        )));
    }
    let mut configured = config::resolve(read)?;
    if let Some(name) = name {
        let server = configured.take(&name)?;
        if is_servers {
            configured.servers = vec![server];
            return Ok(Pick::All(opts, configured));
        }
        opts.server = Server::Configured(Box::new(server));
        return Ok(Pick::One(opts));
    }
    if is_servers || matches!(opts.command, Command::Tools(_)) {
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

/// Streams JSON output to stdout through a buffer (`write` gets the
/// writer), ignoring a closed pipe: the output is never built whole in
/// memory.
fn out_json(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let mut stdout = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let _ = write(&mut stdout);
    let _ = stdout.flush();
}

/// The client builder as the options set it up, and how long its
/// handshake may take: `--timeout`, the probe and its fallback included.
/// `login`: an OAuth login may run inside the handshake.
///
/// The deadline the user set is the caller's ([`handshake`]): the
/// session's own timeouts here are only what it needs to behave. With a
/// login possible they leave room for it (the session cannot see a login
/// start; the transport runs it inside a request), and [`handshake`] adds
/// [`LOGIN_TIMEOUT`] to the user's deadline only once a login has
/// actually begun.
pub(crate) fn client_builder(opts: &Options, login: bool) -> (ClientBuilder, Duration) {
    let mut builder = Client::builder("mcp", env!("CARGO_PKG_VERSION"))
        .protocol(opts.protocol)
        .request_timeout(opts.timeout)
        .max_request_time(max_request_time(opts))
        .resend_on_session_expiry(!spawned(&opts.server))
        .handshake_timeout(opts.timeout)
        // A server slow to answer `server/discover` is handled by the
        // session (a late answer still wins over the fallback `initialize`).
        .probe_timeout(PROBE_TIMEOUT.min(opts.timeout / 2))
        .handler(handler::CliHandler {
            roots: opts.roots.clone(),
            log_level: opts.log_level,
        });
    if login {
        builder = builder
            .handshake_timeout(opts.timeout + LOGIN_TIMEOUT)
            .probe_timeout(opts.timeout + LOGIN_TIMEOUT);
    }
    (builder, opts.timeout)
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

/// Waits up to `wait` (`--timeout`) for the handshake to complete. When an
/// OAuth login begins (`login` changes: mcp printed the authorization
/// URL), the deadline becomes the login's own bound ([`LOGIN_TIMEOUT`])
/// plus `wait` again from that moment: the time a person spends in the
/// browser is not the server's, and nothing else extends the deadline.
pub(crate) async fn handshake(
    client: &Client,
    wait: Duration,
    mut login: Option<tokio::sync::watch::Receiver<bool>>,
) -> Result<(), Failure> {
    let ready = client.wait_ready();
    tokio::pin!(ready);
    let deadline = tokio::time::sleep(wait);
    tokio::pin!(deadline);
    // A login began (or no login can begin any more): stop watching.
    let mut login_seen = false;
    let mut after_login = "";
    loop {
        let watching = !login_seen && login.is_some();
        let login_began = async {
            match login.as_mut() {
                Some(rx) => rx.wait_for(|began| *began).await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = &mut ready => return r.map_err(|e| Failure::from_client("handshake", &e)),
            () = &mut deadline => {
                return Err(Failure::fatal(
                    "timeout",
                    format!(
                        "the server did not complete the handshake within {:.1} s{after_login} \
                         (--timeout; a longer one may help)",
                        wait.as_secs_f64()
                    ),
                ));
            }
            began = login_began, if watching => {
                login_seen = true;
                if began {
                    after_login = " after the login";
                    deadline
                        .as_mut()
                        .reset(tokio::time::Instant::now() + LOGIN_TIMEOUT + wait);
                }
            }
        }
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
    let login_began = oauth.as_ref().map(|o| o.login_began.clone());
    let (client, driver, handshake_wait) = start_client(&opts, transport, login);

    let mut work = Box::pin(async {
        // An OAuth failure is in the error's chain, which the report names.
        handshake(&client, handshake_wait, login_began).await?;
        after_handshake(&client, &opts).await;
        command(&client, &opts).await
    });
    let result = loop {
        tokio::select! {
            r = &mut work => break r,
            code = interrupts.recv() => {
                // Ctrl-C while the server's question is on the terminal
                // cancels that question; the call goes on.
                if code == EXIT_INTERRUPTED && form::cancel_active() {
                    continue;
                }
                break Err(Failure::Interrupted(code));
            }
        }
    };
    drop(work);
    if matches!(result, Err(Failure::Interrupted(_))) {
        tasks::cancel_running(&client).await;
    }
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

/// Once the server is known: its name for the questions it may ask, and
/// the log level `--log-level` asks for.
async fn after_handshake(client: &Client, opts: &Options) {
    let Some(server) = client.server() else {
        return;
    };
    handler::set_server_name(&server.implementation.name);
    let Some(level) = opts.log_level else {
        return;
    };
    // 2026-07-28 carries the level in each request's `_meta` (nothing is
    // sent now), so it is always set; a legacy server is sent
    // `logging/setLevel` only when it declared `logging`.
    if server.capabilities.logging.is_none() {
        eprintln!(
            "mcp: the server does not declare the `logging` capability, so it may send no log \
             messages"
        );
        if server.era() != mcp_proto::Era::Modern {
            return;
        }
    }
    if let Err(e) = client.set_log_level(level).await {
        eprintln!(
            "mcp: the server refused the log level: {}",
            mcp_cli::terminal::line(&mcp_proto::error::chain(&e).to_string())
        );
    }
}
