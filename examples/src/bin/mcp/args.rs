//! Hand-written argument parsing (no clap: fast builds, exact messages).
//!
//! Options may appear anywhere (before or after the command); `--` ends
//! them. `--name=value` and `--name value` are both accepted; short flags
//! group (`-vv`). Every mistake is one line and exit status 2.

use std::time::Duration;

use mcp_client::VersionChoice;
use mcp_proto::ProtocolVersion;

/// The `--help` text.
pub(crate) const USAGE: &str = "\
mcp: a Model Context Protocol client

Usage: mcp [OPTIONS] [COMMAND]

Server (at most one; neither = the built-in demo server, which mcp runs by
spawning itself as `mcp demo-server` over stdio):
  --stdio \"<command line>\"     spawn a stdio server; the line is split like a POSIX shell splits words
  --http <URL>                 a Streamable HTTP endpoint (http:// or https://)

Options:
  -H, --header \"Name: value\"   extra HTTP header on every request (repeatable)
  --no-oauth                   do not authorize with OAuth when an --http server answers 401
                               (by default mcp prints an authorization URL, waits for the browser's
                               redirect to 127.0.0.1 and caches tokens in ~/.config/mcp/tokens.json)
  --protocol <VERSION|auto>    pin a protocol revision (2024-11-05 ... 2026-07-28); default auto
  --timeout <SECONDS>          per-request timeout, default 60 (reset by progress, capped at 10x)
  --json                       machine-readable output on stdout (one JSON document)
  -v, --verbose                tracing to stderr (repeat for more)
  -h, --help                   this text
  -V, --version                the version

Commands (default: info):
  info                         server identity, negotiated protocol revision, capabilities, instructions
  tools                        every tool, all pages
  call <TOOL> [JSON_ARGS]      call a tool; progress notifications drawn as a bar on stderr
  resources                    every resource, all pages
  templates                    every resource template, all pages
  read <URI>                   read a resource
  prompts                      every prompt, all pages
  prompt <NAME> [JSON_ARGS]    get a prompt
  demo-server                  run the built-in demo server on stdin/stdout

Exit status: 0 success, 1 the tool reported isError, 2 usage error,
3 connection/transport/protocol/timeout error, 130 interrupted (Ctrl-C).

Example:
  mcp call slow_sum '{\"a\": 2, \"b\": 3}'
  mcp --stdio \"npx -y @modelcontextprotocol/server-everything\" tools
";

/// Default `--timeout`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest accepted `--timeout` (one day), so `10 ×` it stays far from overflow.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Which server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Server {
    /// The built-in demo server (`mcp demo-server`, spawned over stdio).
    Demo,
    /// A stdio server command line.
    Stdio(String),
    /// A Streamable HTTP endpoint.
    Http(String),
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Info,
    Tools,
    Call { tool: String, args: Option<String> },
    Resources,
    Templates,
    Read { uri: String },
    Prompts,
    Prompt { name: String, args: Option<String> },
    DemoServer,
    Help,
    Version,
}

/// Parsed command line.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) server: Server,
    pub(crate) headers: Vec<(String, String)>,
    /// OAuth on a 401 from an `--http` server (off with `--no-oauth`).
    pub(crate) oauth: bool,
    pub(crate) protocol: VersionChoice,
    pub(crate) timeout: Duration,
    pub(crate) json: bool,
    pub(crate) verbose: u8,
    pub(crate) command: Command,
}

/// A usage error: one line for stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsageError(pub(crate) String);

fn usage(msg: impl Into<String>) -> UsageError {
    UsageError(msg.into())
}

/// Parses the arguments after the program name.
pub(crate) fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Options, UsageError> {
    let mut stdio = None;
    let mut http = None;
    let mut headers = Vec::new();
    let mut protocol = VersionChoice::Auto;
    let mut timeout = DEFAULT_TIMEOUT;
    let mut json = false;
    let mut no_oauth = false;
    let mut verbose = 0u8;
    let mut help = false;
    let mut version = false;
    let mut positional = Vec::new();

    let mut it = args.into_iter();
    let mut options_done = false;
    while let Some(arg) = it.next() {
        if options_done || !arg.starts_with('-') || arg == "-" {
            positional.push(arg);
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        // `--name=value`
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if arg.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, UsageError> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .ok_or_else(|| usage(format!("{name} needs a value ({what})"))),
            }
        };
        match name.as_str() {
            "--stdio" => set_once(&mut stdio, value("a command line")?, "--stdio")?,
            "--http" => set_once(&mut http, value("a URL")?, "--http")?,
            "-H" | "--header" => headers.push(parse_header(&value("\"Name: value\"")?)?),
            "--protocol" => protocol = parse_protocol(&value("a revision or auto")?)?,
            "--timeout" => timeout = parse_timeout(&value("seconds")?)?,
            "--json" => flag(&inline, &name, &mut json)?,
            "--no-oauth" => flag(&inline, &name, &mut no_oauth)?,
            "--verbose" => {
                let mut on = false;
                flag(&inline, &name, &mut on)?;
                verbose = verbose.saturating_add(1);
            }
            "--help" => flag(&inline, &name, &mut help)?,
            "--version" => flag(&inline, &name, &mut version)?,
            short if !short.starts_with("--") => {
                // A group of short flags: -vv, -vH "x: y", -hv.
                let letters: Vec<char> = short.chars().skip(1).collect();
                for (i, c) in letters.iter().enumerate() {
                    match c {
                        'v' => verbose = verbose.saturating_add(1),
                        'h' => help = true,
                        'V' => version = true,
                        'H' => {
                            let rest: String = letters.iter().skip(i + 1).collect();
                            let v = if rest.is_empty() {
                                it.next()
                                    .ok_or_else(|| usage("-H needs a value (\"Name: value\")"))?
                            } else {
                                rest
                            };
                            headers.push(parse_header(&v)?);
                            break;
                        }
                        other => return Err(usage(format!("unknown option -{other}"))),
                    }
                }
            }
            other => return Err(usage(format!("unknown option {other}"))),
        }
    }

    let command = if help {
        Command::Help
    } else if version {
        Command::Version
    } else {
        parse_command(positional)?
    };
    let server = match (stdio, http) {
        (Some(_), Some(_)) => return Err(usage("--stdio and --http cannot be used together")),
        (Some(line), None) => Server::Stdio(line),
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(usage(format!(
                    "--http needs an http:// or https:// URL, got {url:?}"
                )));
            }
            Server::Http(url)
        }
        (None, None) => Server::Demo,
    };
    if !headers.is_empty() && !matches!(server, Server::Http(_)) {
        return Err(usage("--header only applies to an --http server"));
    }
    Ok(Options {
        server,
        headers,
        oauth: !no_oauth,
        protocol,
        timeout,
        json,
        verbose,
        command,
    })
}

fn set_once(slot: &mut Option<String>, v: String, name: &str) -> Result<(), UsageError> {
    if slot.is_some() {
        return Err(usage(format!("{name} given twice")));
    }
    *slot = Some(v);
    Ok(())
}

fn flag(inline: &Option<String>, name: &str, on: &mut bool) -> Result<(), UsageError> {
    if inline.is_some() {
        return Err(usage(format!("{name} takes no value")));
    }
    *on = true;
    Ok(())
}

fn parse_header(s: &str) -> Result<(String, String), UsageError> {
    let Some((name, value)) = s.split_once(':') else {
        return Err(usage(format!("--header needs \"Name: value\", got {s:?}")));
    };
    let name = name.trim();
    let valid_name = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid_name {
        return Err(usage(format!("invalid header name {name:?} in --header")));
    }
    let value = value.trim();
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(usage(format!("invalid header value for {name}")));
    }
    Ok((name.to_owned(), value.to_owned()))
}

fn parse_protocol(s: &str) -> Result<VersionChoice, UsageError> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(VersionChoice::Auto);
    }
    ProtocolVersion::parse(s)
        .map(VersionChoice::Pinned)
        .ok_or_else(|| {
            let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
            usage(format!(
                "unknown protocol revision {s:?} (known: {}, or auto)",
                known.join(", ")
            ))
        })
}

fn parse_timeout(s: &str) -> Result<Duration, UsageError> {
    let secs: f64 = s
        .parse()
        .map_err(|_| usage(format!("--timeout needs a number of seconds, got {s:?}")))?;
    if !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS) {
        return Err(usage(format!(
            "--timeout must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds, got {s}"
        )));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_command(positional: Vec<String>) -> Result<Command, UsageError> {
    let mut p = positional.into_iter();
    let Some(name) = p.next() else {
        return Ok(Command::Info);
    };
    let rest: Vec<String> = p.collect();
    let arity = |min: usize, max: usize, shape: &str| -> Result<(), UsageError> {
        if rest.len() < min || rest.len() > max {
            Err(usage(format!("usage: mcp {name}{shape}")))
        } else {
            Ok(())
        }
    };
    let mut rest_it = rest.clone().into_iter();
    let cmd = match name.as_str() {
        "info" => arity(0, 0, "").map(|()| Command::Info)?,
        "tools" => arity(0, 0, "").map(|()| Command::Tools)?,
        "resources" => arity(0, 0, "").map(|()| Command::Resources)?,
        "templates" => arity(0, 0, "").map(|()| Command::Templates)?,
        "prompts" => arity(0, 0, "").map(|()| Command::Prompts)?,
        "demo-server" => arity(0, 0, "").map(|()| Command::DemoServer)?,
        "help" => arity(0, 0, "").map(|()| Command::Help)?,
        "call" => {
            arity(1, 2, " <TOOL> [JSON_ARGS]")?;
            Command::Call {
                tool: rest_it.next().unwrap_or_default(),
                args: rest_it.next(),
            }
        }
        "prompt" => {
            arity(1, 2, " <NAME> [JSON_ARGS]")?;
            Command::Prompt {
                name: rest_it.next().unwrap_or_default(),
                args: rest_it.next(),
            }
        }
        "read" => {
            arity(1, 1, " <URI>")?;
            Command::Read {
                uri: rest_it.next().unwrap_or_default(),
            }
        }
        other => {
            return Err(usage(format!(
                "unknown command {other:?} (commands: info, tools, call, resources, templates, read, prompts, prompt, demo-server)"
            )));
        }
    };
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Options, UsageError> {
        parse(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn defaults() {
        let o = p(&[]).unwrap();
        assert_eq!(o.server, Server::Demo);
        assert_eq!(o.command, Command::Info);
        assert_eq!(o.timeout, DEFAULT_TIMEOUT);
        assert_eq!(o.protocol, VersionChoice::Auto);
        assert!(!o.json);
    }

    #[test]
    fn options_anywhere_and_grouped() {
        let o = p(&[
            "call",
            "slow_sum",
            "--json",
            r#"{"a":1}"#,
            "-vv",
            "--timeout=2.5",
            "--protocol",
            "2025-11-25",
        ])
        .unwrap();
        assert_eq!(
            o.command,
            Command::Call {
                tool: "slow_sum".into(),
                args: Some(r#"{"a":1}"#.into())
            }
        );
        assert!(o.json);
        assert_eq!(o.verbose, 2);
        assert_eq!(o.timeout, Duration::from_millis(2500));
        assert_eq!(
            o.protocol,
            VersionChoice::Pinned(ProtocolVersion::V2025_11_25)
        );
    }

    #[test]
    fn servers_and_headers() {
        let o = p(&[
            "--http",
            "http://127.0.0.1:1/mcp",
            "-H",
            "Authorization: Bearer x",
            "-HX-A:b",
        ])
        .unwrap();
        assert_eq!(o.server, Server::Http("http://127.0.0.1:1/mcp".into()));
        assert_eq!(
            o.headers,
            [
                ("Authorization".into(), "Bearer x".into()),
                ("X-A".into(), "b".into())
            ]
        );
        assert_eq!(
            p(&["--stdio", "npx -y x"]).unwrap().server,
            Server::Stdio("npx -y x".into())
        );
    }

    #[test]
    fn usage_errors() {
        for bad in [
            &["--stdio", "a", "--http", "http://x"][..],
            &["--http", "ftp://x"],
            &["--protocol", "2023-01-01"],
            &["--timeout", "0"],
            &["--timeout", "soon"],
            &["--stdio"],
            &["-H", "no colon", "--http", "http://x"],
            &["-H", "A: b"],
            &["call"],
            &["call", "a", "b", "c"],
            &["read"],
            &["frobnicate"],
            &["--frob"],
            &["-x"],
            &["--json=yes"],
        ] {
            assert!(p(bad).is_err(), "{bad:?} should be a usage error");
        }
    }
}
