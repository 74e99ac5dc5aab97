//! The command line, parsed with clap (derive).
//!
//! Options may appear anywhere (before or after the command: they are
//! global); `--` ends them. `--name=value` and `--name value` are both
//! accepted; short flags group (`-vv`). Every mistake is one line on stderr
//! and exit status 2 (see [`parse`]).

use std::time::Duration;

use crate::tasks::TasksAction;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use clap_complete::Shell;
use mcp_client::VersionChoice;
use mcp_proto::schema::{LoggingLevel, Root};

mod values;
use values::{parse_header, parse_log_level, parse_protocol, parse_size, parse_timeout, root};

/// Default `--timeout`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

const ABOUT: &str = "\
mcp: a Model Context Protocol client

Talks to one MCP server over stdio (--stdio) or Streamable HTTP (--http),
negotiating the protocol revision (2024-11-05 ... 2026-07-28). With neither,
it talks to its built-in demo server, which it runs by spawning itself as
`mcp demo-server` over stdio.";

const AFTER_HELP: &str = "\
Command forms:
  mcp [info]                       mcp call <TOOL> [JSON_ARGS]
  mcp call <TOOL> key=value... | key:=JSON... | @FILE | -
  mcp servers [--start|--no-start] mcp tools | resources | templates | prompts
  mcp read <URI>                   mcp prompt <NAME> [JSON_ARGS]
  mcp completions bash|zsh|fish    mcp demo-server
  mcp bridge (with --http URL, --server NAME or --stdio CMD)
  mcp record FILE -- <command>     mcp replay FILE
  mcp diff [--update] FILE
  mcp trust [--revoke] [FILE]...   mcp trust --pending | --approve SERVER[/TOOL]...

Project config files (.mcp.json, .vscode/mcp.json, .cursor/mcp.json in the
current directory) start nothing until you trusted them: mcp shows what such
a file would run and asks on a terminal; without one it starts nothing and
says how to trust it. `mcp trust [FILE]...` trusts files (default: the
project files here), remembered by path and content until the file changes,
in $MCP_TRUST_FILE or ~/.config/mcp/trusted-configs.json; `--config FILE`
trusts the file it names for that run. Files in your home folder are yours.

A configured server's tools are pinned at its first use (in
$MCP_PINS_FILE or ~/.config/mcp/pinned-tools.json): a tool whose definition
changes later, or a new one, is held back (not listed, not called) until you
review it with `mcp trust --pending` and approve it with `mcp trust
--approve SERVER[/TOOL]`. Hidden characters (zero-width, bidi, tag, control)
in what a server sends are shown as <U+XXXX> and flagged. A config entry's
\"toolPolicy\": {\"allow\": [...], \"ask\": [...], \"deny\": [...]} (tool globs)
decides which calls run, ask first, or are refused; a tool the server marks
destructive asks: on a terminal mcp asks, without one it refuses unless
--yes. An administrator's /etc/mcp/managed-policy.json (allowedMcpServers,
deniedMcpServers: by serverName, serverCommand or serverUrl) keeps servers
from starting at all; MCP_MANAGED_POLICY names one more such file.

--from SOURCES reads the servers other hosts keep for you instead:
claude-code (~/.claude.json, and its servers kept for this directory),
claude-desktop, codex (~/.codex/config.toml), cursor (~/.cursor/mcp.json),
gemini (~/.gemini/settings.json), goose (config.yaml), vscode (the user
profile's mcp.json), windsurf, zed (settings.json), project (the files
above), or all; comma-separated, the first to name a server wins.
`mcp servers --from ...` lists what each file defines and starts nothing
(--start starts them and shows their status); `tools`, `call` and the
others start only the servers they need, once trusted: Claude Code's
servers for one project are trusted like a project file (`mcp trust`
here). A key a host's format does not document gets a warning line.

`mcp call TOOL key=value ...` types each value by the tool's inputSchema
(string, number, integer, boolean, enum; an array by repeating the key;
a.b=value inside an object), `key:=JSON` takes raw JSON, `@FILE` a JSON
object from a file and `-` one from stdin; a key or value the schema does
not take is refused before anything is sent (exit 2).

When the server asks a question (elicitation), mcp asks it on the terminal
as a form on stderr: Enter takes a [default], a wrong answer is asked
again, the answers are shown before they are sent; Ctrl-D declines,
Ctrl-C cancels the question (the call goes on). A URL the server asks you
to open is shown (http and https only). Without a terminal on stdin the
question is declined with a line saying why. Server text is shown with
control characters escaped; --json output is as sent.

Exit status: 0 success, 1 the tool reported isError, 2 usage error or a
call or server refused by policy (nothing was sent),
3 connection/transport/protocol/timeout error, 4 the server answered with a
JSON-RPC error (unknown tool, invalid arguments, method not found),
130 interrupted (Ctrl-C), 143 terminated (SIGTERM).

Traces: with TRACEPARENT (and TRACESTATE, BAGGAGE) in the environment, the
run continues that trace and each request carries it to the server (in
_meta); with OTEL_EXPORTER_OTLP_ENDPOINT set, the run's spans are sent over
OTLP/HTTP when it ends. -v prints each request's duration.

Examples:
  mcp call slow_sum '{\"a\": 2, \"b\": 3}'
  mcp call slow_sum a=2 b=3        (typed by the tool's inputSchema)
  mcp --stdio \"npx -y @modelcontextprotocol/server-everything\" tools
  mcp --http https://example.com/mcp -H \"Authorization: Bearer $TOKEN\" info --json
  mcp --http unix:///run/app/mcp.sock#/mcp tools   (a server on a Unix socket)
  mcp --root . --log-level info call summarize    (roots, server log messages)
  mcp servers                      (the servers of ./.mcp.json, .vscode/mcp.json, .cursor/mcp.json)
  mcp --config ~/.config/Claude/claude_desktop_config.json --server git tools
  mcp tools --search \"unstage everything\" --limit 3   (every configured server's tools, ranked)";

/// The command line as clap parses it.
#[derive(Debug, Parser)]
#[command(
    name = "mcp",
    version,
    about = ABOUT,
    after_help = AFTER_HELP,
    max_term_width = 100,
    disable_help_subcommand = true
)]
struct Cli {
    /// Extra HTTP header on every request (repeatable)
    #[arg(
        short = 'H',
        long = "header",
        value_name = "Name: value",
        value_parser = parse_header,
        global = true
    )]
    headers: Vec<(String, String)>,

    /// Do not authorize with OAuth when an --http server answers 401
    /// (by default mcp prints an authorization URL, waits for the browser's
    /// redirect to 127.0.0.1 and caches tokens in ~/.config/mcp/tokens.json)
    #[arg(long, global = true)]
    no_oauth: bool,

    /// Let OAuth discovery reach private-network and loopback addresses (an
    /// authorization server on your network); by default only the class of
    /// the --http server's own address is allowed. Link-local addresses (cloud
    /// metadata services) stay refused
    #[arg(long, global = true)]
    oauth_allow_private: bool,

    /// Pin a protocol revision (2024-11-05 ... 2026-07-28); default auto
    #[arg(
        long,
        value_name = "VERSION|auto",
        value_parser = parse_protocol,
        default_value = "auto",
        hide_default_value = true,
        global = true
    )]
    protocol: VersionChoice,

    /// Per-request timeout in seconds, default 60 (reset by progress, capped at 10x).
    /// It bounds every wait on the server, the handshake as a whole included
    /// (probe and fallback). The user's time is not the server's: an OAuth
    /// login has 300 s of its own, counted only from when mcp prints the
    /// authorization URL, and the handshake then gets --timeout again; while
    /// the server's question is on the terminal the timeout waits, and it
    /// starts again when the answer is sent
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = parse_timeout,
        global = true
    )]
    timeout: Option<Duration>,

    /// Largest message accepted from the server: a stdio line, an HTTP
    /// JSON body or SSE event (bytes, or with a unit: 512KiB, 64MiB, 1GiB);
    /// default 16MiB. A larger answer fails its request at once, naming the limit
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = parse_size,
        global = true
    )]
    max_message_size: Option<usize>,

    /// Machine-readable output on stdout (one JSON document)
    #[arg(long, global = true)]
    json: bool,

    /// Advertise DIR as a root the server may work in (repeatable): the
    /// server's roots/list gets each as a file:// URI of its canonical
    /// path. Without it, mcp declares no roots capability
    #[arg(long = "root", value_name = "DIR", global = true)]
    roots: Vec<std::path::PathBuf>,

    /// Show the server's log messages at LEVEL and above on stderr (debug,
    /// info, notice, warning, error, critical, alert, emergency), asking
    /// the server for that level (logging/setLevel, or in 2026-07-28 each
    /// request's _meta)
    #[arg(long, value_name = "LEVEL", value_parser = parse_log_level, global = true)]
    log_level: Option<LoggingLevel>,

    /// Tracing to stderr (repeat for more), each request's duration; full descriptions in listings
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,

    /// Approve a tool call the tool policy would ask you about (a tool the
    /// server marks destructive, or a configured toolPolicy "ask" rule):
    /// without it, mcp asks on the terminal, and without a terminal refuses
    /// the call
    #[arg(short = 'y', long, global = true)]
    yes: bool,

    #[command(flatten)]
    server: ServerArgs,

    #[command(subcommand)]
    command: Option<CliCommand>,
}

/// Which server: at most one of these.
#[derive(Debug, Args)]
#[command(
    next_help_heading = "Server (at most one; none = the project's config files, else the built-in demo server)"
)]
struct ServerArgs {
    /// Spawn a stdio server; the line is split like a POSIX shell splits words
    #[arg(long, value_name = "command line", global = true)]
    stdio: Option<String>,

    /// A Streamable HTTP endpoint: http:// or https://, or a server on a Unix
    /// socket as VS Code writes it, unix:///path/to/server.sock#/mcp (the
    /// request path after the #)
    #[arg(long, value_name = "URL", global = true)]
    http: Option<String>,

    /// Read the servers from a host's config file (Claude Desktop / Claude Code
    /// `mcpServers`, VS Code `servers` + `inputs`, Cursor, or mcp.json), trusted
    /// by being named; with no server option, the project files .mcp.json,
    /// .vscode/mcp.json and .cursor/mcp.json in the current directory are read
    /// when present, and start servers once trusted (see mcp trust)
    #[arg(long, value_name = "PATH", global = true)]
    config: Option<std::path::PathBuf>,

    /// The configured server the command talks to; without it, `tools` lists
    /// the tools of every configured server as SERVER/TOOL
    #[arg(long, value_name = "NAME", global = true)]
    server: Option<String>,

    /// Read the servers your hosts keep instead of the project's files:
    /// project, claude-code, claude-desktop, codex, cursor, gemini, goose,
    /// vscode, windsurf, zed, or all (comma-separated; the first to define
    /// a server name wins). `servers` then lists without starting
    #[arg(long, value_name = "SOURCES", value_parser = crate::hosts::parse, global = true)]
    from: Option<crate::hosts::Sources>,
}

#[derive(Debug, Subcommand)]
enum CliCommand {
    /// Server identity, negotiated protocol revision, capabilities, instructions (the default)
    Info,
    /// Every configured server: name, transport, status, protocol revision,
    /// tools, start time; with --from (or --no-start), each server as its
    /// file defines it, with its source, and nothing started
    Servers {
        /// Start the servers to show their status (the default without --from)
        #[arg(long)]
        start: bool,
        /// Only list what the files define: start nothing, trust nothing
        /// (the default with --from)
        #[arg(long, conflicts_with = "start")]
        no_start: bool,
    },
    /// Every tool, all pages; with --search, the tools that best match a
    /// request, best first
    Tools {
        /// Rank the tools by how well they match QUERY, words as you would
        /// ask for a tool ("unstage everything", "who is free tomorrow"):
        /// name, title, description, parameters and the server's name and
        /// instructions, with stemming and synonyms (see mcp_tools::search)
        #[arg(long, value_name = "QUERY")]
        search: Option<String>,
        /// With --search: show at most K tools
        #[arg(long, value_name = "K", requires = "search", default_value_t = DEFAULT_SEARCH_LIMIT)]
        limit: usize,
    },
    /// Call a tool; progress notifications drawn as a bar on stderr. A tool
    /// whose taskSupport is `required` runs as a task (2025-11-25), as does
    /// any call a 2026-07-28 server with the tasks extension answers with a
    /// task: its status messages are drawn as progress lines, Ctrl-C
    /// cancels it on the server (tasks/cancel)
    Call {
        /// The tool's name
        #[arg(value_name = "TOOL")]
        tool: String,
        /// The arguments: one JSON object like '{"a": 1}', or key=value
        /// items typed by the tool's inputSchema (key:=JSON raw, an array
        /// by repeating the key, a.b=value inside an object), @FILE (a JSON
        /// object) or - (one from stdin)
        #[arg(value_name = "ARGS")]
        args: Vec<String>,
        /// Run the call as a task even when the tool's taskSupport is
        /// optional (a tool whose taskSupport is `required` always runs as
        /// one; 2025-11-25: in 2026-07-28 the server decides)
        #[arg(long)]
        task: bool,
    },
    /// The server's tasks: list them (2025-11-25), or get one's status,
    /// result, or cancel it (both eras)
    Tasks {
        #[command(subcommand)]
        action: TasksAction,
    },
    /// Every resource, all pages
    Resources,
    /// Every resource template, all pages
    Templates,
    /// Read a resource
    Read {
        /// The resource's URI
        #[arg(value_name = "URI")]
        uri: String,
    },
    /// Every prompt, all pages
    Prompts,
    /// Get a prompt
    Prompt {
        /// The prompt's name
        #[arg(value_name = "NAME")]
        name: String,
        /// The prompt's arguments, a JSON object like '{"name": "Ann"}'
        #[arg(value_name = "JSON_ARGS")]
        args: Option<String>,
    },
    /// Print a shell completion script (e.g. `mcp completions bash > ~/.local/share/bash-completion/completions/mcp`)
    Completions {
        /// The shell
        #[arg(value_name = "SHELL")]
        shell: Shell,
    },
    /// Serve the picked server (--http, --server, --stdio) as a stdio MCP
    /// server on stdin/stdout, for a host that speaks only stdio: every
    /// message passes both ways; an --http server's OAuth login is started
    /// here (the browser opened, the URL on stderr) and its tokens cached;
    /// a --server entry's tool rules and pins hold (its denied, held-back
    /// and left-out tools are not listed and their calls not sent)
    Bridge {
        /// Print the authorization URL on stderr only; do not open a browser
        #[arg(long)]
        no_browser: bool,
    },
    /// Record what goes over the wire during an mcp command into a
    /// cassette FILE (JSON Lines, redacted: no tokens or secrets), e.g.
    /// `mcp record s.jsonl -- --stdio "server" call echo '{"text": "hi"}'`
    Record {
        /// The cassette to write
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
        /// The mcp command to run and record, after --
        #[arg(value_name = "COMMAND", last = true, required = true)]
        command: Vec<String>,
    },
    /// Serve a cassette as a stdio MCP server on stdin/stdout: each request
    /// is answered as recorded (matched by method and params), an
    /// unrecorded one with a JSON-RPC error
    Replay {
        /// The cassette
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
    },
    /// Compare the server's tools, resources, templates and prompts with
    /// those recorded in a cassette: added, removed, changed (with what
    /// changed); exit status 1 when something differs
    Diff {
        /// The cassette
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
        /// Record the server's surface into FILE instead of comparing
        #[arg(long)]
        update: bool,
    },
    /// Run the built-in demo server on stdin/stdout
    DemoServer,
    /// Trust project config files (default: .mcp.json, .vscode/mcp.json,
    /// .cursor/mcp.json here): shows what each would run and remembers it
    /// until the file changes. With --pending or --approve: the tools held
    /// back because they are new or changed since you approved their
    /// server's tools
    Trust {
        /// Forget the files instead
        #[arg(long, conflicts_with_all = ["pending", "approve"])]
        revoke: bool,
        /// Show every tool held back, with what changed
        #[arg(long, conflicts_with = "approve")]
        pending: bool,
        /// Approve the held-back tools of SERVER, or one of them
        /// (SERVER/TOOL), as --pending shows them (repeatable)
        #[arg(long, value_name = "SERVER[/TOOL]")]
        approve: Vec<String>,
        /// The files
        #[arg(value_name = "FILE", conflicts_with_all = ["pending", "approve"])]
        files: Vec<std::path::PathBuf>,
    },
}

/// Which server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Server {
    /// The built-in demo server (`mcp demo-server`, spawned over stdio).
    Demo,
    /// A stdio server command line.
    Stdio(String),
    /// A Streamable HTTP endpoint.
    Http(String),
    /// One server of a host's configuration, picked by `--server` (or the
    /// only one configured).
    Configured(Box<mcp_config::ServerConfig>),
    /// The servers of a host's config file (`--config`), or of the project
    /// files found in the current directory (`--config` absent), with the
    /// one `--server` names.
    Config {
        /// `--config PATH`; `None`: discover the project files.
        file: Option<std::path::PathBuf>,
        /// `--server NAME`.
        name: Option<String>,
        /// `--from`: the hosts' files (and the project's) to read instead;
        /// empty: `--config` or the project files.
        from: Vec<crate::hosts::Origin>,
    },
}

/// Default `tools --limit`.
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = 10;

/// `tools --search QUERY --limit K`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Search {
    pub(crate) query: String,
    pub(crate) limit: usize,
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Info,
    /// `start`: `--start` (`Some(true)`), `--no-start` (`Some(false)`).
    Servers {
        start: Option<bool>,
    },
    /// `None`: every tool; `Some`: the best matches of a search.
    Tools(Option<Search>),
    Call {
        tool: String,
        /// The JSON form: one object, sent as typed.
        args: Option<String>,
        /// `key=value` items, typed by the tool's schema
        /// ([`crate::typed_args`]).
        typed: Vec<String>,
        /// `--task`.
        task: bool,
    },
    Tasks(TasksAction),
    Resources,
    Templates,
    Read {
        uri: String,
    },
    Prompts,
    Prompt {
        name: String,
        args: Option<String>,
    },
    DemoServer,
    /// `replay FILE`: serve a cassette on stdin/stdout.
    Replay {
        file: std::path::PathBuf,
    },
    /// `diff FILE [--update]`: the server's surface against a cassette's.
    Diff {
        file: std::path::PathBuf,
        update: bool,
    },
    /// `bridge`: relay stdin/stdout to the server.
    Bridge {
        /// `--no-browser`.
        no_browser: bool,
    },
    Completions(Shell),
    Trust {
        files: Vec<std::path::PathBuf>,
        revoke: bool,
    },
    /// `trust --pending` (empty `approve`) or `trust --approve ...`.
    Approve {
        approve: Vec<String>,
    },
}

impl Command {
    /// The command's name, as typed.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Info => "info",
            Command::Servers { .. } => "servers",
            Command::Tools(_) => "tools",
            Command::Call { .. } => "call",
            Command::Tasks(_) => "tasks",
            Command::Resources => "resources",
            Command::Templates => "templates",
            Command::Read { .. } => "read",
            Command::Prompts => "prompts",
            Command::Prompt { .. } => "prompt",
            Command::DemoServer => "demo-server",
            Command::Bridge { .. } => "bridge",
            Command::Replay { .. } => "replay",
            Command::Diff { .. } => "diff",
            Command::Completions(_) => "completions",
            Command::Trust { .. } | Command::Approve { .. } => "trust",
        }
    }
}

/// Parsed command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) server: Server,
    pub(crate) headers: Vec<(String, String)>,
    /// OAuth on a 401 from an `--http` server (off with `--no-oauth`).
    pub(crate) oauth: bool,
    /// `--oauth-allow-private`: the OAuth SSRF policy allows private and
    /// loopback addresses.
    pub(crate) oauth_allow_private: bool,
    pub(crate) protocol: VersionChoice,
    pub(crate) timeout: Duration,
    /// `--max-message-size`; `None`: each transport's default (16 MiB).
    pub(crate) max_message_size: Option<usize>,
    pub(crate) json: bool,
    pub(crate) verbose: u8,
    /// `--yes`: approve what the tool policy would ask about.
    pub(crate) yes: bool,
    /// `--root`: each directory canonicalized, as a `file://` root.
    pub(crate) roots: Vec<Root>,
    /// `--log-level`.
    pub(crate) log_level: Option<LoggingLevel>,
    /// `mcp record FILE -- …` (and `mcp diff --update FILE`): the cassette
    /// the server's transport records into.
    pub(crate) record: Option<std::path::PathBuf>,
    /// The recorded command line (the words after `--`), for the
    /// cassette's header.
    pub(crate) record_command: Vec<String>,
    pub(crate) command: Command,
}

/// Why parsing stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// `--help` or `--version`: the text for stdout, exit 0.
    Print(String),
    /// A usage error: one line for stderr, exit 2.
    Usage(String),
}

fn usage(msg: impl Into<String>) -> Stop {
    Stop::Usage(msg.into())
}

/// The clap command (for completions and help).
pub(crate) fn command() -> clap::Command {
    Cli::command()
}

/// Parses the arguments after the program name.
pub(crate) fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Options, Stop> {
    let argv = std::iter::once("mcp".to_owned()).chain(args);
    let matches = command().try_get_matches_from(argv).map_err(clap_stop)?;
    let cli = Cli::from_arg_matches(&matches).map_err(clap_stop)?;
    let given = [
        ("--stdio", cli.server.stdio.is_some()),
        ("--http", cli.server.http.is_some()),
        ("--config", cli.server.config.is_some()),
        ("--from", cli.server.from.is_some()),
    ];
    let named: Vec<&str> = given.iter().filter(|g| g.1).map(|g| g.0).collect();
    if named.len() > 1 {
        return Err(usage(format!(
            "{} cannot be used together",
            named.join(" and ")
        )));
    }
    if cli.server.server.is_some() && (cli.server.stdio.is_some() || cli.server.http.is_some()) {
        return Err(usage(
            "--server names a configured server; it cannot be used with --stdio or --http",
        ));
    }
    let server = match (cli.server.stdio, cli.server.http) {
        (Some(_), Some(_)) => return Err(usage("--stdio and --http cannot be used together")),
        (Some(line), None) => Server::Stdio(line),
        (None, Some(url)) => {
            if let Err(e) = mcp_transport_http::Endpoint::parse(&url) {
                return Err(usage(format!("--http: {e}")));
            }
            Server::Http(url)
        }
        (None, None) => Server::Config {
            file: cli.server.config,
            name: cli.server.server,
            from: cli.server.from.map(|s| s.0).unwrap_or_default(),
        },
    };
    if !cli.headers.is_empty() && !matches!(server, Server::Http(_)) {
        return Err(usage("--header only applies to an --http server"));
    }
    let command = match cli.command.unwrap_or(CliCommand::Info) {
        CliCommand::Info => Command::Info,
        CliCommand::Servers { start, no_start } => Command::Servers {
            start: (start || no_start).then_some(start),
        },
        CliCommand::Tools { search, limit } => {
            Command::Tools(search.map(|query| Search { query, limit }))
        }
        CliCommand::Call { tool, args, task } => {
            // One argument that opens with `{`, or that is no typed item
            // at all, is the JSON form, as before (its mistakes are JSON's).
            let json = match args.as_slice() {
                [one] => {
                    one.trim_start().starts_with('{')
                        || (!one.contains('=') && one != "-" && !one.starts_with('@'))
                }
                _ => false,
            };
            if json {
                let args = args.into_iter().next();
                Command::Call {
                    tool,
                    args,
                    typed: Vec::new(),
                    task,
                }
            } else {
                crate::typed_args::check_syntax(&args).map_err(usage)?;
                Command::Call {
                    tool,
                    args: None,
                    typed: args,
                    task,
                }
            }
        }
        CliCommand::Tasks { action } => Command::Tasks(action),
        CliCommand::Resources => Command::Resources,
        CliCommand::Templates => Command::Templates,
        CliCommand::Read { uri } => Command::Read { uri },
        CliCommand::Prompts => Command::Prompts,
        CliCommand::Prompt { name, args } => Command::Prompt { name, args },
        CliCommand::Completions { shell } => Command::Completions(shell),
        CliCommand::DemoServer => Command::DemoServer,
        CliCommand::Bridge { no_browser } => Command::Bridge { no_browser },
        CliCommand::Replay { file } => Command::Replay { file },
        CliCommand::Diff { file, update } => Command::Diff { file, update },
        CliCommand::Record { file, command } => {
            if !given.iter().all(|g| !g.1) || !cli.headers.is_empty() {
                return Err(usage(
                    "mcp record takes the command's options after --: mcp record FILE -- \
                     --stdio \"server\" tools",
                ));
            }
            return record(file, command);
        }
        CliCommand::Trust {
            pending: true,
            approve,
            ..
        } => Command::Approve { approve },
        CliCommand::Trust { approve, .. } if !approve.is_empty() => Command::Approve { approve },
        CliCommand::Trust { revoke, files, .. } => Command::Trust { files, revoke },
    };
    let roots = cli
        .roots
        .iter()
        .map(|dir| root(dir))
        .collect::<Result<Vec<_>, _>>()?;
    if matches!(command, Command::Bridge { .. }) && cli.protocol != VersionChoice::Auto {
        return Err(usage(
            "--protocol does not apply to mcp bridge: the host negotiates the revision with \
             the server through it",
        ));
    }
    let (record, record_command) = match &command {
        Command::Diff { file, update: true } => {
            (Some(file.clone()), std::env::args().skip(1).collect())
        }
        _ => (None, Vec::new()),
    };
    Ok(Options {
        roots,
        log_level: cli.log_level,
        record,
        record_command,
        server,
        headers: cli.headers,
        oauth: !cli.no_oauth,
        oauth_allow_private: cli.oauth_allow_private,
        protocol: cli.protocol,
        timeout: cli.timeout.unwrap_or(DEFAULT_TIMEOUT),
        max_message_size: cli.max_message_size,
        json: cli.json,
        verbose: cli.verbose,
        yes: cli.yes,
        command,
    })
}

/// `mcp record FILE -- [mcp] ARGS...`: ARGS parsed as any command, recorded into FILE.
fn record(file: std::path::PathBuf, mut words: Vec<String>) -> Result<Options, Stop> {
    if words.first().is_some_and(|w| w == "mcp") {
        words.remove(0);
    }
    let mut opts = parse(words.clone())?;
    if opts.record.is_some() {
        return Err(usage("mcp record cannot record a command that records"));
    }
    if matches!(
        opts.command,
        Command::DemoServer
            | Command::Replay { .. }
            | Command::Trust { .. }
            | Command::Completions(_)
    ) {
        return Err(usage(format!(
            "mcp record records a session with a server; `{}` has none",
            opts.command.name()
        )));
    }
    opts.record = Some(file);
    opts.record_command = words;
    Ok(opts)
}

/// Help and version go to stdout; any other clap error becomes one line
/// (clap's own first line, without its `error: ` prefix and usage block).
fn clap_stop(e: clap::Error) -> Stop {
    use clap::error::ErrorKind as K;
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand => {
            Stop::Print(e.render().to_string())
        }
        _ => {
            // clap's message: up to the first blank line, lines joined.
            let text = e.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .collect();
            let mut parts = vec![parts.join(" ")];
            // "tip: ..." names a close match or the fix; keep it.
            parts.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| l.starts_with("tip:"))
                    .map(str::to_owned),
            );
            let line = parts.join("; ");
            let line = line.trim_start_matches("error: ").trim().to_owned();
            Stop::Usage(line)
        }
    }
}

#[cfg(test)]
mod tests;
