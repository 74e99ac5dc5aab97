//! [`Sandbox`]: what a confined server may do.

use std::path::{Path, PathBuf};

use crate::domain::DomainPattern;

/// What a sandboxed server may touch: VS Code's `sandbox` object, plus
/// where the launcher is.
///
/// - **Reads** everywhere but under [`deny_read`](Self::deny_read).
/// - **Writes** only under [`allow_write`](Self::allow_write), its own
///   temporary folder (`TMPDIR`) and `/dev/null`, `/dev/zero`, `/dev/full`;
///   never under [`deny_write`](Self::deny_write).
/// - **Network**: none, unless [`allow_domain`](Self::allow_domain) lists
///   some; then only those hosts, through a filtering HTTP(S) proxy the
///   host runs (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` are set for the
///   server); [`deny_domain`](Self::deny_domain) wins over allowed.
/// - **Processes**: its own only (a private pid namespace and `/proc`): no
///   host's environment, no signal or trace of the host.
///
/// Paths must be absolute; a path that does not exist when the server
/// starts is skipped (there is nothing there to allow or protect).
///
/// ```
/// use mcp_sandbox::Sandbox;
///
/// let sandbox = Sandbox::new()
///     .allow_write("/home/me/project")
///     .deny_read("/home/me/.ssh")
///     .deny_write("/home/me/project/.git")
///     .allow_domain("api.example.com")?
///     .allow_domain("*.cdn.example.com")?;
/// assert!(sandbox.allows_host("x.cdn.example.com"));
/// assert!(!sandbox.allows_host("example.org"));
/// # Ok::<(), mcp_sandbox::DomainPatternError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Sandbox {
    pub(crate) allow_write: Vec<PathBuf>,
    pub(crate) deny_read: Vec<PathBuf>,
    pub(crate) deny_write: Vec<PathBuf>,
    pub(crate) allowed_domains: Vec<DomainPattern>,
    pub(crate) denied_domains: Vec<DomainPattern>,
    pub(crate) launcher: Option<PathBuf>,
}

impl Sandbox {
    /// Nothing writable (but the server's temporary folder), no network.
    pub fn new() -> Self {
        Sandbox::default()
    }

    /// Lets the server write under `path` (VS Code's
    /// `filesystem.allowWrite`).
    pub fn allow_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.allow_write.push(path.into());
        self
    }

    /// Hides `path` from the server (`filesystem.denyRead`): a folder
    /// reads as empty, a file as empty, and neither can be written.
    pub fn deny_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.deny_read.push(path.into());
        self
    }

    /// Keeps `path` read-only even under an allowed folder
    /// (`filesystem.denyWrite`).
    pub fn deny_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.deny_write.push(path.into());
        self
    }

    /// Lets the server reach a host through the proxy
    /// (`network.allowedDomains`; see [`DomainPattern`]).
    pub fn allow_domain(mut self, pattern: &str) -> Result<Self, crate::DomainPatternError> {
        self.allowed_domains.push(DomainPattern::parse(pattern)?);
        Ok(self)
    }

    /// Refuses a host even when allowed (`network.deniedDomains`).
    pub fn deny_domain(mut self, pattern: &str) -> Result<Self, crate::DomainPatternError> {
        self.denied_domains.push(DomainPattern::parse(pattern)?);
        Ok(self)
    }

    /// The launcher program to use instead of looking for one (see
    /// [`Launcher::find`](crate::Launcher::find)).
    pub fn launcher(mut self, path: impl Into<PathBuf>) -> Self {
        self.launcher = Some(path.into());
        self
    }

    /// The folders and files the server may write under.
    pub fn allowed_writes(&self) -> &[PathBuf] {
        &self.allow_write
    }

    /// The paths hidden from the server.
    pub fn denied_reads(&self) -> &[PathBuf] {
        &self.deny_read
    }

    /// The paths kept read-only.
    pub fn denied_writes(&self) -> &[PathBuf] {
        &self.deny_write
    }

    /// The hosts the server may reach (empty: no network).
    pub fn allowed_domains(&self) -> &[DomainPattern] {
        &self.allowed_domains
    }

    /// The hosts refused even when allowed.
    pub fn denied_domains(&self) -> &[DomainPattern] {
        &self.denied_domains
    }

    /// The explicit launcher, if set.
    pub fn launcher_path(&self) -> Option<&Path> {
        self.launcher.as_deref()
    }

    /// Whether the proxy lets the server reach `host`: denied patterns
    /// first, then allowed ones; no match is a refusal.
    pub fn allows_host(&self, host: &str) -> bool {
        self.matching_allowed(host).is_some()
    }

    /// The allowed pattern that lets `host` through, if any (and none of
    /// the denied ones matches).
    pub(crate) fn matching_allowed(&self, host: &str) -> Option<&DomainPattern> {
        if self.denied_domains.iter().any(|d| d.matches(host)) {
            return None;
        }
        self.allowed_domains.iter().find(|a| a.matches(host))
    }

    /// Whether the server gets any network (through the proxy).
    pub fn has_network(&self) -> bool {
        !self.allowed_domains.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn denied_domains_win_and_no_match_refuses() {
        let s = Sandbox::new()
            .allow_domain("*.example.com")
            .unwrap()
            .deny_domain("secret.example.com")
            .unwrap();
        assert!(s.allows_host("api.example.com"));
        assert!(!s.allows_host("secret.example.com"));
        assert!(!s.allows_host("example.com"));
        assert!(!Sandbox::new().allows_host("example.com"));
        assert!(!Sandbox::new().has_network() && s.has_network());
    }
}
