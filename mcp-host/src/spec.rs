//! One server of a host: how to start it ([`Launcher`]) and its options
//! ([`ServerSpec`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_client::Client;
use mcp_proto::schema::Tool;
use mcp_tools::{Glob, Server, ToolRules};

use crate::cache::CacheTarget;
use crate::trust::Origin;

/// A boxed, sendable future.
type BoxFuture<T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'static>>;
use crate::status::Backoff;

/// Why a launch failed: any error (a spawn error, a [`ClientError`](mcp_client::ClientError)
/// from the handshake, …). Its `Display` is what the host reports.
pub type LaunchError = Box<dyn std::error::Error + Send + Sync>;

/// The longest reason a status carries (and a model is shown), in
/// characters: a server's error can hold a whole HTML error page. Longer
/// reasons are cut, and runs of whitespace (newlines) become one space.
pub const MAX_REASON_CHARS: usize = 300;

/// `why` on one line, at most [`MAX_REASON_CHARS`] characters.
pub(crate) fn reason(why: &str) -> String {
    let mut out = String::new();
    for (n, word) in why.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() > MAX_REASON_CHARS {
        out = out.chars().take(MAX_REASON_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// How long a server may take to start (launch, handshake, first listing)
/// unless its [`ServerSpec::startup_timeout`] says otherwise: 30 s.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Produces a connected [`Client`] for one server, each time it is called:
/// spawn the process or open the connection, then connect.
///
/// ```
/// use mcp_client::Client;
/// use mcp_host::Launcher;
/// # fn transport() -> Result<mcp_proto::transport::channel::ChannelTransport, std::io::Error> { Ok(mcp_proto::transport::channel::pair().0) }
///
/// // With mcp-transport-stdio: `StdioTransport::spawn(command.clone())?`.
/// let launcher = Launcher::new(|| async {
///     let transport = transport()?;
///     Ok(Client::builder("my-host", "1.0").connect(transport).await?)
/// });
/// # let _ = launcher;
/// ```
#[derive(Clone)]
pub struct Launcher(Arc<dyn Fn() -> BoxFuture<Result<Client, LaunchError>> + Send + Sync>);

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Launcher")
    }
}

impl Launcher {
    /// A launcher calling `f` for every (re)start.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Client, LaunchError>> + Send + 'static,
    {
        Launcher(Arc::new(move || Box::pin(f())))
    }

    /// Starts the server once.
    pub fn launch(&self) -> BoxFuture<Result<Client, LaunchError>> {
        (self.0)()
    }
}

/// One server of a [`Host`](crate::Host): its name, how to start it, and its options.
#[derive(Debug, Clone)]
#[must_use]
pub struct ServerSpec {
    pub(crate) name: String,
    pub(crate) launcher: Launcher,
    pub(crate) enabled: bool,
    pub(crate) startup_timeout: Duration,
    pub(crate) backoff: Backoff,
    pub(crate) prefix: String,
    pub(crate) include: Vec<Glob>,
    pub(crate) exclude: Vec<Glob>,
    pub(crate) cache_target: Option<CacheTarget>,
    /// Its key in the host's pin store (default: its name).
    pub(crate) pin_key: Option<String>,
    /// How it starts, for the managed policy.
    pub(crate) origin: Option<Origin>,
    /// Allow, ask and deny rules for its tools.
    pub(crate) tool_rules: ToolRules,
    /// The result budget of its tools, and of some tools by name.
    pub(crate) result_budget: Option<usize>,
    pub(crate) tool_result_budgets: BTreeMap<String, usize>,
    /// The configuration entry it was made from, which
    /// [`Host::apply_config`](crate::Host::apply_config) compares.
    #[cfg(feature = "config")]
    pub(crate) config: Option<mcp_config::ServerConfig>,
}

impl ServerSpec {
    /// A server called `name` (unique in the host) started by `launcher`.
    pub fn new(name: impl Into<String>, launcher: Launcher) -> Self {
        ServerSpec {
            name: name.into(),
            launcher,
            enabled: true,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            backoff: Backoff::default(),
            prefix: String::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            cache_target: None,
            pin_key: None,
            origin: None,
            tool_rules: ToolRules::new(),
            result_budget: None,
            tool_result_budgets: BTreeMap::new(),
            #[cfg(feature = "config")]
            config: None,
        }
    }

    /// Whether to start it (default yes); see [`Host::set_enabled`](crate::Host::set_enabled).
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = on;
        self
    }

    /// How long a start may take, launch to first listing (default
    /// [`DEFAULT_STARTUP_TIMEOUT`]); then it counts as failed.
    pub fn startup_timeout(mut self, t: Duration) -> Self {
        self.startup_timeout = t;
        self
    }

    /// When to try again after a failure (default [`Backoff::default`]).
    pub fn backoff(mut self, b: Backoff) -> Self {
        self.backoff = b;
        self
    }

    /// A prefix put in front of each tool name the model sees.
    pub fn prefix(mut self, p: impl Into<String>) -> Self {
        self.prefix = p.into();
        self
    }

    /// Offer only tools matching one of these globs (by the server's names).
    pub fn include<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.include = globs.into_iter().map(Into::into).collect();
        self
    }

    /// Never offer tools matching one of these globs (applied after
    /// [`include`](ServerSpec::include)).
    pub fn exclude<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.exclude = globs.into_iter().map(Into::into).collect();
        self
    }

    /// The server's identity and partition in the response cache (default:
    /// its name, partition `""`). Give it the command line or URL too, so an
    /// edited configuration does not reuse an old answer.
    pub fn cache_target(mut self, target: CacheTarget) -> Self {
        self.cache_target = Some(target);
        self
    }

    /// The server's key in the host's [pin store](crate::HostBuilder::pins)
    /// (default: its name). Give each server a key that stays the same
    /// from run to run and is its own: two hosts' servers of one name share
    /// pins if they share a key. `from_config` (feature `config`) uses
    /// the configuration file and entry name (`mcp_config::pin_key`).
    pub fn pin_key(mut self, key: impl Into<String>) -> Self {
        self.pin_key = Some(key.into());
        self
    }

    /// How the server starts, for the `serverCommand` and `serverUrl`
    /// entries of the host's [managed policy](crate::HostBuilder::managed_policy)
    /// (without it, only `serverName` entries apply).
    /// `from_config` (feature `config`) sets it from the entry.
    pub fn origin(mut self, origin: Origin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Allow, ask and deny rules for this server's tools (by its own tool
    /// names), before the host's [`ToolPolicy`](mcp_tools::ToolPolicy)'s
    /// rules for every server. `from_config` (feature `config`) takes the
    /// entry's `toolPolicy`.
    pub fn tool_rules(mut self, rules: ToolRules) -> Self {
        self.tool_rules = rules;
        self
    }

    /// The most tokens of a result of this server's tools that reach the
    /// model, over the host's [`HostBuilder::result_budget`](crate::HostBuilder::result_budget)
    /// (see [`Server::result_budget`]). A configuration entry has no key
    /// for it: the budget follows the application's model (its context,
    /// what a token costs), not the server, so the application sets it,
    /// on a spec `from_config` made too.
    pub fn result_budget(mut self, tokens: usize) -> Self {
        self.result_budget = Some(tokens);
        self
    }

    /// The result budget of one tool, by the server's own name for it,
    /// over the server's and the host's.
    pub fn tool_result_budget(mut self, tool: impl Into<String>, tokens: usize) -> Self {
        self.tool_result_budgets.insert(tool.into(), tokens);
        self
    }

    /// The server in the host's toolbox while it runs on `client` with
    /// `tools` (listed by the host: the toolbox lists nothing itself).
    pub(crate) fn toolbox_server(&self, client: Client, tools: Arc<Vec<Tool>>) -> Server {
        let mut server = Server::new(self.name.clone(), client)
            .prefix(self.prefix.clone())
            .listed(tools)
            .tool_rules(self.tool_rules.clone());
        if let Some(tokens) = self.result_budget {
            server = server.result_budget(tokens);
        }
        for (tool, &tokens) in &self.tool_result_budgets {
            server = server.tool_result_budget(tool.clone(), tokens);
        }
        server
    }

    /// The key of this server's pins.
    pub(crate) fn pins_key(&self) -> &str {
        self.pin_key.as_deref().unwrap_or(&self.name)
    }

    pub(crate) fn allows(&self, tool: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|g| g.matches(tool)))
            && !self.exclude.iter().any(|g| g.matches(tool))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_one_bounded_line() {
        assert_eq!(
            reason("HTTP 404:\n<html>\n  <p>x</p>"),
            "HTTP 404: <html> <p>x</p>"
        );
        let long = "é".repeat(1000);
        let r = reason(&long);
        assert_eq!(r.chars().count(), MAX_REASON_CHARS);
        assert!(r.ends_with('…'));
    }
}
