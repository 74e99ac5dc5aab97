//! The transport for the server the options name: the seam where each
//! server kind plugs in.

use std::time::Duration;

use mcp_config::{Prepared, ServerConfig};
use mcp_proto::error::chain;
use mcp_proto::transport::BoxTransport;
use mcp_transport_http::{HttpError, HttpTransport, HttpTransportBuilder};
use mcp_transport_stdio::{ServerCommand, StdioTransport};

use crate::args::{Command, Options, Server};
use crate::failure::Failure;

/// Builds the transport the options ask for, recording into `mcp
/// record`'s cassette when there is one. The seam where each server kind
/// plugs in.
pub(crate) async fn transport(opts: &Options) -> Result<(BoxTransport, Option<OAuth>), Failure> {
    let (t, oauth) = open(opts).await?;
    Ok((crate::cassette::tap(t, opts)?, oauth))
}

async fn open(opts: &Options) -> Result<(BoxTransport, Option<OAuth>), Failure> {
    let t = match &opts.server {
        Server::Demo => {
            let exe = std::env::current_exe().map_err(|e| {
                Failure::fatal(
                    "connection error",
                    format!(
                        "cannot find the mcp binary to run its demo server: {}",
                        chain(&e)
                    ),
                )
            })?;
            spawn(ServerCommand::new(exe).arg("demo-server"), opts)
        }
        Server::Stdio(line) => {
            let cmd = ServerCommand::parse_shell_words(line)
                .map_err(|e| Failure::Usage(format!("--stdio {line:?}: {e}")))?;
            spawn(cmd, opts)
        }
        Server::Http(url) => return http_transport(url, opts).await,
        Server::Configured(cfg) => configured_transport(cfg, opts),
        Server::Config { .. } => Err(Failure::Usage(
            "no server picked from the configuration: use --server NAME".into(),
        )),
    }?;
    Ok((t, None))
}

/// The transport for a server of a host's configuration (`env`, `envFile`,
/// `cwd`, `headers` applied by mcp-config, then the options' limits).
/// Errors name the server.
pub(crate) fn configured_transport(
    cfg: &ServerConfig,
    opts: &Options,
) -> Result<BoxTransport, Failure> {
    cfg.transport_with(|prepared| adjust(prepared, opts))
        .map_err(|e| Failure::fatal("connection error", chain(&e).to_string()))
}

/// What the options change on a configured server's transport:
/// `--max-message-size`, and over HTTP the transport's backstop on a
/// request's time. Used for one server (`--server`) and for all of them
/// (`mcp servers`, `mcp tools`).
pub(crate) fn adjust(prepared: Prepared, opts: &Options) -> Prepared {
    match prepared {
        Prepared::Stdio(cmd) => Prepared::Stdio(stdio_limits(cmd, opts)),
        Prepared::Http(b) => {
            Prepared::Http(http_limits(b, opts).request_timeout(Some(max_request_time(opts))))
        }
        other => other,
    }
}

/// `--timeout` × 10: the cap on a request's total time however much progress it reports.
pub(crate) fn max_request_time(opts: &Options) -> Duration {
    opts.timeout.saturating_mul(10)
}

/// `--max-message-size` on a stdio server: its longest line.
fn stdio_limits(cmd: ServerCommand, opts: &Options) -> ServerCommand {
    match opts.max_message_size {
        Some(n) => cmd.max_message_size(n),
        None => cmd,
    }
}

/// `--max-message-size` on an HTTP server: its largest JSON body and SSE event.
fn http_limits(b: HttpTransportBuilder, opts: &Options) -> HttpTransportBuilder {
    match opts.max_message_size {
        Some(n) => b.max_body_size(n).max_sse_event_size(n),
        None => b,
    }
}

fn spawn(cmd: ServerCommand, opts: &Options) -> Result<BoxTransport, Failure> {
    StdioTransport::spawn(stdio_limits(cmd, opts))
        .map(|t| Box::pin(t) as BoxTransport)
        .map_err(|e| Failure::fatal("connection error", chain(&e).to_string()))
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
    let mut b = http_limits(HttpTransport::builder(url), opts)
        .request_timeout(Some(max_request_time(opts)));
    for (name, value) in &opts.headers {
        b = b.header(name, value);
    }
    let has_auth_header = opts
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
    let oauth = if opts.oauth && !has_auth_header {
        let o = oauth(url, opts).await?;
        b = b.auth(o.provider.clone());
        Some(o)
    } else {
        None
    };
    match b.build() {
        Ok(t) => Ok((Box::pin(t), oauth)),
        // Also an invalid --header (the builder reports it this way).
        Err(e @ HttpError::InvalidUrl { .. }) => Err(Failure::Usage(chain(&e).to_string())),
        Err(e) => Err(Failure::fatal(
            "connection error",
            format!("--http {url}: {}", chain(&e)),
        )),
    }
}

/// How long the user has to authorize in the browser when the server
/// answers 401 and no token is cached.
pub(crate) const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// OAuth for an `--http` server.
pub(crate) struct OAuth {
    pub(crate) provider: mcp_auth::OAuthProvider,
    /// No cached token: the handshake may wait for the user.
    pub(crate) login_possible: bool,
    /// Becomes `true` when a browser login begins (the authorization URL
    /// is printed): from then the login has [`LOGIN_TIMEOUT`] of its own.
    pub(crate) login_began: tokio::sync::watch::Receiver<bool>,
}

/// Where `mcp` caches OAuth tokens: `$MCP_TOKEN_FILE`, else
/// `$XDG_CONFIG_HOME/mcp/tokens.json`, else `$HOME/.config/mcp/tokens.json`.
pub(crate) fn token_file() -> Option<std::path::PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(f) = var("MCP_TOKEN_FILE") {
        return Some(f.into());
    }
    let config = var("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| var("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))?;
    Some(config.join("mcp").join("tokens.json"))
}

/// The SSRF policy of OAuth discovery: mcp-auth's default (public
/// addresses, and the class of the server's own address when its URL names
/// it), plus private and loopback addresses with `--oauth-allow-private`.
fn ssrf_policy(opts: &Options) -> mcp_auth::SsrfPolicy {
    mcp_auth::SsrfPolicy::new()
        .allow_private(opts.oauth_allow_private)
        .allow_loopback(opts.oauth_allow_private)
}

/// The OAuth provider: a loopback redirect listener that prints the
/// authorization URL (checked by mcp-auth first: http(s), no control
/// characters), tokens cached in [`token_file`].
async fn oauth(url: &str, opts: &Options) -> Result<OAuth, Failure> {
    let (began, login_began) = tokio::sync::watch::channel(false);
    // The bridge's stderr is a host's log nobody watches: it opens the
    // browser too (the URL was checked by mcp-auth before this is called).
    let open_browser = matches!(opts.command, Command::Bridge { no_browser: false });
    let ui = mcp_auth::LoopbackRedirect::bind(0, move |u| {
        began.send_replace(true);
        if open_browser && let Err(e) = mcp_auth::open_browser(u) {
            eprintln!("mcp: could not open a browser: {}", chain(&e));
        }
        // The URL is built from what the server's metadata named: made
        // safe like any server text.
        eprintln!(
            "mcp: the server needs authorization; open this URL in a browser:\n  {}\nmcp: waiting for the browser to come back to 127.0.0.1 ...",
            mcp_cli::terminal::line(u)
        );
    })
    .await
    .map_err(|e| Failure::fatal("connection error", chain(&e).to_string()))?
    .timeout(LOGIN_TIMEOUT);
    let mut b = mcp_auth::OAuthProvider::builder(url)
        .client_name("mcp")
        .ssrf_policy(ssrf_policy(opts))
        .interaction(ui);
    if let Some(path) = token_file() {
        b = b.store(mcp_auth::FileStore::new(path));
    }
    let provider = b
        .build()
        .map_err(|e| Failure::Usage(format!("--http {url}: {}", chain(&e))))?;
    let login_possible = provider.tokens().is_none();
    Ok(OAuth {
        provider,
        login_possible,
        login_began,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_allow_private_opens_the_network_but_not_cloud_metadata() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        let opts = crate::args::parse(["--http".into(), "https://mcp.example/mcp".into()]).unwrap();
        let p = ssrf_policy(&opts);
        assert!(!p.allows(ip("10.1.2.3")) && !p.allows(ip("127.0.0.1")));
        let opts = crate::args::parse([
            "--http".into(),
            "https://mcp.example/mcp".into(),
            "--oauth-allow-private".into(),
        ])
        .unwrap();
        let p = ssrf_policy(&opts);
        assert!(p.allows(ip("10.1.2.3")) && p.allows(ip("fd00::1")) && p.allows(ip("127.0.0.1")));
        assert!(!p.allows(ip("169.254.169.254")));
    }
}
