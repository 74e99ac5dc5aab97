//! Servers from a user's configuration file (feature `config`): each
//! [`mcp_config::ServerConfig`] as a [`ServerSpec`].

use std::collections::HashSet;
use std::sync::Arc;

use mcp_client::ClientBuilder;
use mcp_config::{Prepared, ServerConfig, TransportConfig};

use crate::cache::CacheTarget;
use crate::host::{Host, HostBuilder, HostError};
use crate::spec::{Launcher, ServerSpec};
use crate::trust::Origin;
use mcp_tools::ToolRules;

/// Makes the client builder for each connection (name, version, handler,
/// timeouts of the host's choice).
///
/// Needs the `config` feature.
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub type ClientFactory = Arc<dyn Fn() -> ClientBuilder + Send + Sync>;

/// Changes a configured server's transport before it starts (see
/// [`ServerSpec::from_config_with`]).
///
/// Needs the `config` feature.
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub type TransportAdjust = Arc<dyn Fn(Prepared) -> Prepared + Send + Sync>;

impl ServerSpec {
    /// The server a configuration entry names: started through
    /// [`ServerConfig::transport`] (a process, or an HTTP connection), with
    /// the entry's `disabled`, `includeTools`, `excludeTools` and
    /// `toolPolicy` ([`tool_rules`](Self::tool_rules)), a response-cache
    /// identity made of its name and its command line or URL (secret parts
    /// left out), so an edited entry does not reuse an old answer, its
    /// [`pin_key`](Self::pin_key) (`mcp_config::pin_key`: the file and the
    /// entry's name) and its [`origin`](Self::origin) for the managed
    /// policy.
    ///
    /// An entry with `"sandboxEnabled": true` starts confined (see
    /// `mcp_config::StdioConfig::sandbox`; Linux), through the sandbox
    /// launcher: call `mcp_host::stdio::sandbox::hook()` first in `main` so
    /// that the host's own executable is the launcher. Where no sandbox can
    /// be had, each start fails (never unconfined) and the server's
    /// [`ServerStatus`](crate::ServerStatus) says why and how to opt out.
    ///
    /// Needs the `config` feature.
    ///
    /// ```no_run
    /// # fn run(server: &mcp_config::ServerConfig) {
    /// use std::sync::Arc;
    /// use mcp_client::Client;
    /// use mcp_host::ServerSpec;
    ///
    /// let spec = ServerSpec::from_config(server, Arc::new(|| Client::builder("my-host", "1.0")));
    /// # let _ = spec; }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "config")))]
    pub fn from_config(server: &ServerConfig, client: ClientFactory) -> Self {
        Self::from_config_with(server, client, Arc::new(|prepared| prepared))
    }

    /// As [`from_config`](Self::from_config), with `adjust` applied to the
    /// prepared transport at every (re)start
    /// ([`ServerConfig::transport_with`]): the host's message-size limits,
    /// timeouts or stderr handling on every configured server.
    ///
    /// Needs the `config` feature.
    ///
    /// ```no_run
    /// # fn run(server: &mcp_config::ServerConfig) {
    /// use std::sync::Arc;
    /// use mcp_client::Client;
    /// use mcp_config::Prepared;
    /// use mcp_host::ServerSpec;
    ///
    /// let spec = ServerSpec::from_config_with(
    ///     server,
    ///     Arc::new(|| Client::builder("my-host", "1.0")),
    ///     Arc::new(|prepared| match prepared {
    ///         Prepared::Stdio(cmd) => Prepared::Stdio(cmd.max_message_size(64 << 20)),
    ///         other => other,
    ///     }),
    /// );
    /// # let _ = spec; }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "config")))]
    pub fn from_config_with(
        server: &ServerConfig,
        client: ClientFactory,
        adjust: TransportAdjust,
    ) -> Self {
        let entry = server.clone();
        // A remote server may end a session (HTTP 404): the client starts a
        // new one, and sends a call the lost session refused again in it.
        let remote = !matches!(server.transport, mcp_config::TransportConfig::Stdio(_));
        let launcher = Launcher::new(move || {
            let entry = entry.clone();
            let builder = client().resend_on_session_expiry(remote);
            let adjust = adjust.clone();
            async move {
                let transport = entry.transport_with(|prepared| adjust(prepared))?;
                Ok(builder.connect(transport).await?)
            }
        });
        let mut spec = ServerSpec::new(server.name.clone(), launcher)
            .enabled(!server.disabled)
            .exclude(server.exclude_tools.iter().map(String::as_str))
            .cache_target(CacheTarget::new(identity(server)));
        if let Some(include) = &server.include_tools {
            spec = spec.include(include.iter().map(String::as_str));
        }
        let p = &server.tool_policy;
        let rules = ToolRules::new()
            .allow(p.allow.iter().map(String::as_str))
            .ask(p.ask.iter().map(String::as_str))
            .deny(p.deny.iter().map(String::as_str));
        let origin = match &server.transport {
            TransportConfig::Stdio(s) => {
                Origin::command(s.command.expose(), s.args.iter().map(|a| a.expose()))
            }
            TransportConfig::Http(r) | TransportConfig::Sse(r) => Origin::url(r.url.expose()),
            _ => Origin::url(""),
        };
        spec = spec
            .tool_rules(rules)
            .pin_key(mcp_config::pin_key(server))
            .origin(origin);
        spec.config = Some(server.clone());
        spec
    }
}

/// What [`Host::apply_config`] changed, by server name.
///
/// Needs the `config` feature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub struct ConfigChanges {
    /// Entries that are new: started.
    pub added: Vec<String>,
    /// Entries that are gone: shut down and dropped.
    pub removed: Vec<String>,
    /// Entries that changed: shut down, then started from the new entry.
    pub replaced: Vec<String>,
}

impl ConfigChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.replaced.is_empty()
    }
}

impl Host {
    /// Brings the host in line with a configuration read again (the user
    /// edited their `.mcp.json`): servers made from a configuration entry
    /// that is gone are shut down and dropped, those whose entry changed
    /// (in anything but its display `title` and `description`) are
    /// replaced, new entries are added, and unchanged ones keep running
    /// untouched (with their tools, their cache and any
    /// [`set_enabled`](Host::set_enabled) of the host). New and replaced
    /// servers come after the others, so they lose tool-name collisions to
    /// them. Servers added with [`ServerSpec::new`] are left alone. `spec` makes
    /// the spec of each new or changed entry (typically
    /// [`ServerSpec::from_config`] with the host's client factory); it is
    /// named after the entry. Returns when the removed servers have exited
    /// and the new ones' first attempts ended.
    ///
    /// An edited project file is a new trust decision: check the new text
    /// (`mcp_config::TrustStore::is_trusted`, or ask the user) before its
    /// servers reach this call (see the crate docs' "Trust").
    /// Needs the `config` feature.
    ///
    /// Calls run one at a time, each against what the one before left. A
    /// name twice in `servers`, or the name of a server not made from a
    /// configuration, changes nothing and is
    /// [`HostError::DuplicateServer`]; a closed host is
    /// [`HostError::Closed`].
    ///
    /// ```no_run
    /// # async fn run(host: &mcp_host::Host, servers: &[mcp_config::ServerConfig]) -> Result<(), mcp_host::HostError> {
    /// use std::sync::Arc;
    /// use mcp_client::Client;
    /// use mcp_host::ServerSpec;
    ///
    /// let client: mcp_host::ClientFactory = Arc::new(|| Client::builder("my-host", "1.0"));
    /// let changes = host
    ///     .apply_config(servers, |s| ServerSpec::from_config(s, client.clone()))
    ///     .await?;
    /// println!("added {:?}, removed {:?}, restarted {:?}", changes.added, changes.removed, changes.replaced);
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "config")))]
    pub async fn apply_config<'a>(
        &self,
        servers: impl IntoIterator<Item = &'a ServerConfig>,
        spec: impl Fn(&ServerConfig) -> ServerSpec,
    ) -> Result<ConfigChanges, HostError> {
        let wanted: Vec<&ServerConfig> = servers.into_iter().collect();
        let _one_at_a_time = self.applying().await;
        let running = self.slots();
        let mut names = HashSet::new();
        for w in &wanted {
            let by_hand = running
                .iter()
                .any(|r| r.spec.name == w.name && r.spec.config.is_none());
            if !names.insert(w.name.as_str()) || by_hand {
                return Err(HostError::DuplicateServer(w.name.clone()));
            }
        }
        let mut changes = ConfigChanges::default();
        let mut gone = Vec::new();
        let mut new = Vec::new();
        for slot in running.iter().filter(|r| r.spec.config.is_some()) {
            if !wanted.iter().any(|w| w.name == slot.spec.name) {
                changes.removed.push(slot.spec.name.clone());
                gone.push(slot.clone());
            }
        }
        for w in &wanted {
            match running.iter().find(|r| r.spec.name == w.name) {
                Some(r) if r.spec.config.as_ref().is_some_and(|c| same_server(c, w)) => continue,
                Some(r) => {
                    changes.replaced.push(w.name.clone());
                    gone.push(r.clone());
                }
                None => changes.added.push(w.name.clone()),
            }
            let mut s = spec(w);
            s.name = w.name.clone();
            s.config = Some((*w).clone());
            new.push(s);
        }
        if self.is_closed() {
            return Err(HostError::Closed);
        }
        self.remove_all(gone).await;
        self.add_all(new).await?;
        Ok(changes)
    }
}

impl HostBuilder {
    /// Adds every server of a configuration (see
    /// [`ServerSpec::from_config`]), in order.
    ///
    /// Needs the `config` feature.
    #[cfg_attr(docsrs, doc(cfg(feature = "config")))]
    pub fn config_servers<'a>(
        mut self,
        servers: impl IntoIterator<Item = &'a ServerConfig>,
        client: ClientFactory,
    ) -> Self {
        for s in servers {
            self = self.server(ServerSpec::from_config(s, client.clone()));
        }
        self
    }
}

/// Whether two entries start the same server: equal but for their display
/// `title` and `description`, which no server sees.
fn same_server(a: &ServerConfig, b: &ServerConfig) -> bool {
    let shown = |c: &ServerConfig| {
        let mut c = c.clone();
        c.title = None;
        c.description = None;
        c
    };
    shown(a) == shown(b)
}

/// The entry's identity for the cache: name, kind, and the command line or
/// URL, with secret values replaced (the cache file must not hold them).
fn identity(server: &ServerConfig) -> String {
    let shown = |e: &mcp_config::Expanded| {
        if e.is_secret() {
            "<secret>".to_owned()
        } else {
            e.expose().to_owned()
        }
    };
    let what = match &server.transport {
        TransportConfig::Stdio(s) => {
            let mut line = format!("stdio {}", shown(&s.command));
            for a in &s.args {
                line.push(' ');
                line.push_str(&shown(a));
            }
            line
        }
        TransportConfig::Http(r) => format!("http {}", shown(&r.url)),
        TransportConfig::Sse(r) => format!("sse {}", shown(&r.url)),
        _ => "other".to_owned(),
    };
    format!("{} {what}", server.name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use mcp_config::{ConfigFile, Resolver};

    #[test]
    fn the_cache_identity_names_the_command_and_hides_secrets() {
        let file = ConfigFile::parse(
            ".mcp.json",
            r#"{"mcpServers": {
                "git": {"command": "uvx", "args": ["mcp-server-git", "--repo", "."]},
                "api": {"type": "http", "url": "https://example.com/mcp?key=${KEY}"}
            }}"#,
            None,
        )
        .unwrap();
        let servers = file
            .resolve(&Resolver::new().env_vars([("KEY", "s3cr3t")]))
            .unwrap();
        let of = |name: &str| identity(servers.iter().find(|s| s.name == name).unwrap());
        assert_eq!(of("git"), "git stdio uvx mcp-server-git --repo .");
        assert_eq!(of("api"), "api http <secret>");
    }
}
