//! From a [`ServerConfig`] to a ready transport, so hosts do not rewrite it.

use std::path::Path;

use crate::error::ConfigError;
#[cfg(any(feature = "stdio", feature = "http"))]
use crate::model::Expanded;
use crate::model::{RemoteConfig, ServerConfig, StdioConfig, TransportConfig};

/// A transport not yet started, for a host that wants to adjust it
/// (stderr handling, timeouts, an auth provider) before starting it.
///
/// Its `Debug` shows only the kind and the program: the command's own
/// `Debug` would show its environment.
#[non_exhaustive]
pub enum Prepared {
    /// A stdio server: pass it to `StdioTransport::spawn`.
    ///
    /// Needs the `stdio` feature.
    #[cfg(feature = "stdio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
    Stdio(mcp_transport_stdio::ServerCommand),
    /// An http or sse server: call `build()`.
    ///
    /// Needs the `http` feature.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    Http(mcp_transport_http::HttpTransportBuilder),
}

impl std::fmt::Debug for Prepared {
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(unused_variables))]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            #[cfg(feature = "stdio")]
            Prepared::Stdio(ref cmd) => f
                .debug_struct("Prepared::Stdio")
                .field("program", &cmd.get_program())
                .finish_non_exhaustive(),
            #[cfg(feature = "http")]
            Prepared::Http(_) => f.debug_struct("Prepared::Http").finish_non_exhaustive(),
        }
    }
}

/// Why a server's transport could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The `envFile` could not be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The server's `sandbox` settings cannot be used (a domain pattern
    /// that is not one): it is not started.
    #[error("server {server:?}: {reason}")]
    Sandbox {
        /// The server.
        server: String,
        /// What is wrong.
        reason: String,
    },
    /// This kind of server needs a feature of `mcp-config` that is off.
    #[error("server {server:?}: {kind} servers need the `{feature}` feature of mcp-config")]
    FeatureOff {
        /// The server.
        server: String,
        /// `stdio`, `http` or `sse`.
        kind: &'static str,
        /// The feature to enable.
        feature: &'static str,
    },
    /// The process could not be started.
    ///
    /// Needs the `stdio` feature.
    ///
    /// The transport's error is not the [`source`](std::error::Error::source):
    /// its text names the program, which may hold an expanded secret, and a
    /// reporter prints every source. `reason` is that whole text with the
    /// secret redacted; `error` keeps it typed.
    #[cfg(feature = "stdio")]
    #[error("server {server:?}: {reason}")]
    #[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
    Spawn {
        /// The server.
        server: String,
        /// Why: the transport's error and its causes (the program is shown
        /// only when no secret was expanded into it).
        reason: String,
        /// The transport's error.
        error: mcp_transport_stdio::SpawnError,
    },
    /// The URL or a header was refused by the HTTP transport.
    ///
    /// Needs the `http` feature.
    ///
    /// As for [`Spawn`](BuildError::Spawn), the transport's error is not the
    /// [`source`](std::error::Error::source) (its text holds the URL).
    #[cfg(feature = "http")]
    #[error("server {server:?}: {reason}")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    Http {
        /// The server.
        server: String,
        /// Why: the transport's error and its causes (the URL is shown only
        /// when no secret was expanded into it).
        reason: String,
        /// The transport's error.
        error: mcp_transport_http::HttpError,
    },
}

impl ServerConfig {
    /// The transport for this server, not yet started: a
    /// `ServerCommand` (with `envFile` read, then `env` on top, `cwd`) or an
    /// `HttpTransportBuilder` (with `headers`). For `sse` servers the HTTP
    /// transport's 2024-11-05 HTTP+SSE fallback does the work: the first
    /// `initialize` POST to the SSE URL is refused, the transport then
    /// `GET`s it and posts to the endpoint it names.
    ///
    /// A stdio server inherits the host's environment with `env` on top, as
    /// Claude Code, VS Code and Cursor start it; a stricter host calls
    /// `env_clear_to_allowlist()` on the prepared command (the file's
    /// `env` and `envFile` variables are kept on top of the allowlist).
    pub fn prepare(&self) -> Result<Prepared, BuildError> {
        match &self.transport {
            TransportConfig::Stdio(s) => self.prepare_stdio(s),
            TransportConfig::Http(r) => self.prepare_http(r, "http"),
            TransportConfig::Sse(r) => self.prepare_http(r, "sse"),
        }
    }

    /// Starts the transport: spawns the process (needs a tokio runtime) or
    /// builds the HTTP transport. Pass it to `mcp_client::Client`'s
    /// `connect`.
    ///
    /// Needs the `stdio` or the `http` feature.
    #[cfg(any(feature = "stdio", feature = "http"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "stdio", feature = "http"))))]
    pub fn transport(&self) -> Result<mcp_proto::transport::BoxTransport, BuildError> {
        self.transport_with(|prepared| prepared)
    }

    /// Starts the transport as [`transport`](Self::transport) does, after
    /// `adjust` changed what [`prepare`](Self::prepare) made: a host's own
    /// limits or timeouts on every configured server, with this crate's
    /// errors (a secret in the command line or URL kept out of them).
    ///
    /// Needs the `stdio` or the `http` feature.
    ///
    /// ```no_run
    /// # fn run(server: &mcp_config::ServerConfig) -> Result<(), mcp_config::BuildError> {
    /// use mcp_config::Prepared;
    ///
    /// let transport = server.transport_with(|prepared| match prepared {
    ///     Prepared::Stdio(cmd) => Prepared::Stdio(cmd.max_message_size(64 << 20)),
    ///     Prepared::Http(b) => Prepared::Http(b.max_body_size(64 << 20)),
    ///     other => other,
    /// })?;
    /// # let _ = transport; Ok(()) }
    /// ```
    #[cfg(any(feature = "stdio", feature = "http"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "stdio", feature = "http"))))]
    pub fn transport_with(
        &self,
        adjust: impl FnOnce(Prepared) -> Prepared,
    ) -> Result<mcp_proto::transport::BoxTransport, BuildError> {
        match adjust(self.prepare()?) {
            #[cfg(feature = "stdio")]
            Prepared::Stdio(cmd) => mcp_transport_stdio::StdioTransport::spawn(cmd)
                .map(|t| Box::pin(t) as mcp_proto::transport::BoxTransport)
                .map_err(|error| {
                    let mut reason = mcp_proto::error::chain(&error).to_string();
                    if let TransportConfig::Stdio(s) = &self.transport {
                        if s.command.is_secret() && !s.command.expose().is_empty() {
                            reason = reason.replace(s.command.expose(), "<redacted>");
                        }
                    }
                    BuildError::Spawn {
                        server: self.name.clone(),
                        reason,
                        error,
                    }
                }),
            #[cfg(feature = "http")]
            Prepared::Http(builder) => {
                let url = match &self.transport {
                    TransportConfig::Http(r) | TransportConfig::Sse(r) => r.url.clone(),
                    TransportConfig::Stdio(_) => Expanded::plain(""),
                };
                builder
                    .build()
                    .map(|t| Box::pin(t) as mcp_proto::transport::BoxTransport)
                    .map_err(|error| self.http_error(&url, error))
            }
        }
    }

    #[cfg(feature = "http")]
    fn http_error(&self, url: &Expanded, error: mcp_transport_http::HttpError) -> BuildError {
        let reason = match &error {
            mcp_transport_http::HttpError::InvalidUrl { reason, .. } => {
                format!("invalid URL {url}: {reason}")
            }
            other => mcp_proto::error::chain(other).to_string(),
        };
        BuildError::Http {
            server: self.name.clone(),
            reason,
            error,
        }
    }

    #[cfg(feature = "stdio")]
    fn prepare_stdio(&self, s: &StdioConfig) -> Result<Prepared, BuildError> {
        let mut cmd = mcp_transport_stdio::ServerCommand::new(s.command.expose())
            .args(s.args.iter().map(Expanded::expose));
        if let Some(file) = &s.env_file {
            cmd = cmd.envs(self.read_env_file(file)?);
        }
        cmd = cmd.envs(s.env.iter().map(|(k, v)| (k, v.expose())));
        if let Some(dir) = &s.cwd {
            cmd = cmd.cwd(dir);
        }
        if let Some(sb) = &s.sandbox {
            cmd = self.sandboxed(cmd, sb)?;
        }
        Ok(Prepared::Stdio(cmd))
    }

    /// The command confined as `sb` says (feature `sandbox`).
    #[cfg(feature = "sandbox")]
    fn sandboxed(
        &self,
        cmd: mcp_transport_stdio::ServerCommand,
        sb: &crate::model::SandboxConfig,
    ) -> Result<mcp_transport_stdio::ServerCommand, BuildError> {
        use mcp_transport_stdio::sandbox::Sandbox;
        let mut sandbox = Sandbox::new();
        for p in &sb.allow_write {
            sandbox = sandbox.allow_write(p);
        }
        for p in &sb.deny_read {
            sandbox = sandbox.deny_read(p);
        }
        for p in &sb.deny_write {
            sandbox = sandbox.deny_write(p);
        }
        let bad = |field: &str, e: mcp_transport_stdio::sandbox::DomainPatternError| {
            BuildError::Sandbox {
                server: self.name.clone(),
                reason: format!("sandbox.network.{field}: {e}"),
            }
        };
        for d in &sb.allowed_domains {
            sandbox = sandbox
                .allow_domain(d)
                .map_err(|e| bad("allowedDomains", e))?;
        }
        for d in &sb.denied_domains {
            sandbox = sandbox
                .deny_domain(d)
                .map_err(|e| bad("deniedDomains", e))?;
        }
        Ok(cmd.sandbox(sandbox))
    }

    /// Without the `sandbox` feature a server that asked for a sandbox is
    /// not started (never unconfined).
    #[cfg(all(feature = "stdio", not(feature = "sandbox")))]
    fn sandboxed(
        &self,
        _: mcp_transport_stdio::ServerCommand,
        _: &crate::model::SandboxConfig,
    ) -> Result<mcp_transport_stdio::ServerCommand, BuildError> {
        Err(BuildError::FeatureOff {
            server: self.name.clone(),
            kind: "sandboxed stdio",
            feature: "sandbox",
        })
    }

    #[cfg(not(feature = "stdio"))]
    fn prepare_stdio(&self, _: &StdioConfig) -> Result<Prepared, BuildError> {
        Err(BuildError::FeatureOff {
            server: self.name.clone(),
            kind: "stdio",
            feature: "stdio",
        })
    }

    #[cfg(feature = "http")]
    fn prepare_http(&self, r: &RemoteConfig, _kind: &'static str) -> Result<Prepared, BuildError> {
        let mut builder = mcp_transport_http::HttpTransport::builder(r.url.expose());
        for (name, value) in &r.headers {
            builder = builder.header(name, value.expose());
        }
        Ok(Prepared::Http(builder))
    }

    #[cfg(not(feature = "http"))]
    fn prepare_http(&self, _: &RemoteConfig, kind: &'static str) -> Result<Prepared, BuildError> {
        Err(BuildError::FeatureOff {
            server: self.name.clone(),
            kind,
            feature: "http",
        })
    }

    /// Reads a dotenv file: `KEY=VALUE` lines, `export ` allowed, `#`
    /// comments and blank lines skipped, values optionally in single or
    /// double quotes. No `${...}` expansion inside.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    fn read_env_file(&self, file: &Path) -> Result<Vec<(String, String)>, ConfigError> {
        let error = |reason: String, source: Option<std::io::Error>| ConfigError::EnvFile {
            path: self.source.path.clone(),
            server: self.name.clone(),
            env_file: file.to_owned(),
            reason,
            source,
        };
        let text =
            std::fs::read_to_string(file).map_err(|e| error("cannot read it".into(), Some(e)))?;
        parse_dotenv(&text).map_err(|line| {
            error(
                format!("line {line} is not KEY=VALUE (its value is not shown)"),
                None,
            )
        })
    }
}

/// `KEY=VALUE` pairs of a dotenv text, or the 1-based number of a bad line.
pub(crate) fn parse_dotenv(text: &str) -> Result<Vec<(String, String)>, usize> {
    let mut vars = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(i + 1);
        };
        let key = key.trim();
        let valid = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !valid {
            return Err(i + 1);
        }
        let value = value.trim();
        let value = match value.as_bytes() {
            [q @ (b'"' | b'\''), .., last] if last == q && value.len() >= 2 => {
                let inner = &value[1..value.len() - 1];
                if *q == b'"' {
                    inner.replace("\\n", "\n").replace("\\\"", "\"")
                } else {
                    inner.to_owned()
                }
            }
            // An unquoted value ends at ` #` (an inline comment).
            _ => match value.find(" #") {
                Some(end) => value[..end].trim_end().to_owned(),
                None => value.to_owned(),
            },
        };
        vars.push((key.to_owned(), value));
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::parse_dotenv;

    #[test]
    fn dotenv_lines() {
        let text = "# comment\n\nexport A=1\nB = two words # note\nC=\"quoted # not a comment\"\nD='single'\nE=\n";
        assert_eq!(
            parse_dotenv(text).expect("valid"),
            [
                ("A", "1"),
                ("B", "two words"),
                ("C", "quoted # not a comment"),
                ("D", "single"),
                ("E", ""),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn dotenv_bad_line_is_numbered() {
        assert_eq!(parse_dotenv("A=1\nnot a pair\n"), Err(2));
        assert_eq!(parse_dotenv("A B=1\n"), Err(1));
    }
}
