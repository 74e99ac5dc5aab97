//! [`ManagedPolicy`]: the servers an administrator allows or denies, which
//! no user or project configuration can override.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::model::{ServerConfig, TransportConfig};

/// Where [`ManagedPolicy::system`] reads the administrator's policy:
/// `/etc/mcp/managed-policy.json` on Linux and other Unix systems,
/// `/Library/Application Support/mcp/managed-policy.json` on macOS,
/// `C:\ProgramData\mcp\managed-policy.json` on Windows. Writable only by an
/// administrator on a system set up as usual; the file is optional.
#[cfg(all(unix, not(target_os = "macos")))]
pub const MANAGED_POLICY_PATH: &str = "/etc/mcp/managed-policy.json";
/// Where [`ManagedPolicy::system`] reads the administrator's policy (see
/// the Linux value for the others).
#[cfg(target_os = "macos")]
pub const MANAGED_POLICY_PATH: &str = "/Library/Application Support/mcp/managed-policy.json";
/// Where [`ManagedPolicy::system`] reads the administrator's policy (see
/// the Linux value for the others).
#[cfg(windows)]
pub const MANAGED_POLICY_PATH: &str = r"C:\ProgramData\mcp\managed-policy.json";

/// An environment variable naming one more policy file that
/// [`ManagedPolicy::system`] applies on top of the system one (tests, a
/// user restricting themselves). It can only add restrictions: its deny
/// list is added, and a server must also pass its allow list.
pub const MANAGED_POLICY_ENV: &str = "MCP_MANAGED_POLICY";

/// Largest policy file read: 1 MiB.
pub const MAX_POLICY_SIZE: u64 = 1024 * 1024;

/// Why a policy file could not be used. A host that meets one starts no
/// server (an unreadable policy must not mean "no policy").
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file exists but could not be read.
    #[error("{}: cannot read the managed policy", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a policy this crate reads.
    #[error("{}: not a managed policy ({reason}); no server starts until it is fixed", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// How an entry of `allowedMcpServers` / `deniedMcpServers` names servers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerMatch {
    /// `{"serverName": "github"}`: the name the configuration gives it.
    Name(String),
    /// `{"serverCommand": ["npx", "-y", "pkg"]}`: a stdio server started
    /// by exactly this program and these arguments (after `${...}`
    /// expansion), in this order.
    Command(Vec<String>),
    /// `{"serverUrl": "https://*.example.com/*"}`: a remote server whose
    /// URL matches; `*` stands for any run of characters, scheme and host
    /// compare without case.
    Url(String),
}

impl fmt::Display for ServerMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerMatch::Name(n) => write!(f, "serverName {:?}", n),
            ServerMatch::Command(c) => write!(f, "serverCommand {:?}", c),
            ServerMatch::Url(u) => write!(f, "serverUrl {:?}", u),
        }
    }
}

/// What a policy knows of a server: its configured name, and how it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerOrigin<'a> {
    /// A process: program and arguments.
    Command(&'a str, &'a [String]),
    /// A remote server's URL.
    Url(&'a str),
    /// Unknown (a host that starts it in a way of its own).
    Unknown,
}

/// Why a [`ManagedPolicy`] refuses a server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("server `{server}` is blocked by the managed policy: {reason}")]
#[non_exhaustive]
pub struct Blocked {
    /// The server's name.
    pub server: String,
    /// Which rule, in which file (`/etc/mcp/managed-policy.json denies it
    /// (deniedMcpServers: serverName "x")`).
    pub reason: String,
}

/// One policy file's lists.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layer {
    path: PathBuf,
    /// `None`: no allow list (everything not denied is allowed); empty:
    /// nothing is.
    allowed: Option<Vec<ServerMatch>>,
    denied: Vec<ServerMatch>,
}

/// The servers an administrator allows and denies, in the shape of Claude
/// Code's managed settings: a JSON file with `allowedMcpServers` and
/// `deniedMcpServers`, lists of `{"serverName": …}`, `{"serverCommand":
/// […]}` or `{"serverUrl": …}` ([`ServerMatch`]).
///
/// ```json
/// {
///   "allowedMcpServers": [
///     {"serverName": "github"},
///     {"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem"]},
///     {"serverUrl": "https://*.corp.example/*"}
///   ],
///   "deniedMcpServers": [{"serverName": "shell"}]
/// }
/// ```
///
/// - `deniedMcpServers`: a server matching any entry (by name, command or
///   URL) does not start. The deny list wins over the allow list.
/// - `allowedMcpServers`: absent, every server not denied may start; a
///   list (even empty), only servers it allows. A stdio server must match a
///   `serverCommand` entry when the list has any, a remote one a
///   `serverUrl` entry when it has any; otherwise a `serverName` entry.
///
/// The policy is applied where servers start (`mcp_host::HostBuilder`'s
/// `managed_policy`, the `mcp` CLI), to every server whatever file names
/// it: nothing a user or a project writes can widen it.
///
/// ```
/// use mcp_config::{ManagedPolicy, ServerOrigin};
///
/// let policy = ManagedPolicy::parse("/etc/mcp/managed-policy.json", r#"{
///     "allowedMcpServers": [{"serverName": "github"}, {"serverUrl": "https://*.corp.example/*"}],
///     "deniedMcpServers": [{"serverCommand": ["npx", "-y", "evil"]}]
/// }"#)?;
/// assert!(policy.check("github", ServerOrigin::Command("github-mcp", &[])).is_ok());
/// assert!(policy.check("notes", ServerOrigin::Command("notes-mcp", &[])).is_err());
/// assert!(policy.check("wiki", ServerOrigin::Url("https://wiki.corp.example/mcp")).is_ok());
/// let evil = ["-y".to_owned(), "evil".to_owned()];
/// let e = policy.check("github", ServerOrigin::Command("npx", &evil)).unwrap_err();
/// assert!(e.to_string().contains("deniedMcpServers"), "{e}");
/// # Ok::<(), mcp_config::PolicyError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedPolicy {
    /// Every file's lists; a server must pass each.
    layers: Vec<Layer>,
}

impl ManagedPolicy {
    /// No restriction.
    pub fn none() -> Self {
        ManagedPolicy::default()
    }

    /// The policy in effect on this machine: [`MANAGED_POLICY_PATH`] (if
    /// present), plus the file [`MANAGED_POLICY_ENV`] names (if set),
    /// which only adds restrictions. A file that is present but unreadable
    /// or invalid is an error: start nothing then.
    pub fn system() -> Result<Self, PolicyError> {
        let mut policy = Self::load(MANAGED_POLICY_PATH)?.unwrap_or_default();
        if let Some(extra) = std::env::var_os(MANAGED_POLICY_ENV).filter(|v| !v.is_empty()) {
            // Named on purpose: a missing file is an error, not "no policy".
            let path = PathBuf::from(extra);
            let more = Self::load(&path)?.ok_or_else(|| PolicyError::Invalid {
                path: path.clone(),
                reason: format!("{MANAGED_POLICY_ENV} names it, and it does not exist"),
            })?;
            policy.layers.extend(more.layers);
        }
        Ok(policy)
    }

    /// The policy in `path`; `None` when there is no such file.
    pub fn load(path: impl AsRef<Path>) -> Result<Option<Self>, PolicyError> {
        let path = path.as_ref();
        let io = |source| PolicyError::Io {
            path: path.to_owned(),
            source,
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        if meta.len() > MAX_POLICY_SIZE {
            return Err(PolicyError::Invalid {
                path: path.to_owned(),
                reason: format!("{} bytes, more than {MAX_POLICY_SIZE}", meta.len()),
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Self::parse(path, &text).map(Some)
    }

    /// The policy written in `text` (as if read from `path`, which names
    /// it in errors and reasons).
    pub fn parse(path: impl Into<PathBuf>, text: &str) -> Result<Self, PolicyError> {
        let path = path.into();
        let invalid = |reason: String| PolicyError::Invalid {
            path: path.clone(),
            reason,
        };
        let root: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let Value::Object(root) = root else {
            return Err(invalid("expected a JSON object".into()));
        };
        let list = |key: &str| -> Result<Option<Vec<ServerMatch>>, PolicyError> {
            match root.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        entry(item).map_err(|why| invalid(format!("{key}[{i}]: {why}")))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some),
                Some(_) => Err(invalid(format!("{key}: expected an array"))),
            }
        };
        let layer = Layer {
            allowed: list("allowedMcpServers")?,
            denied: list("deniedMcpServers")?.unwrap_or_default(),
            path,
        };
        Ok(ManagedPolicy {
            layers: vec![layer],
        })
    }

    /// Both policies at once: a server must pass each (deny lists add up,
    /// allow lists narrow).
    #[must_use]
    pub fn and(mut self, other: ManagedPolicy) -> Self {
        self.layers.extend(other.layers);
        self
    }

    /// Whether there is any rule at all.
    pub fn is_empty(&self) -> bool {
        self.layers
            .iter()
            .all(|l| l.allowed.is_none() && l.denied.is_empty())
    }

    /// Whether the server configured as `name`, started as `origin`, may
    /// start; [`Blocked`] says which rule of which file refuses it.
    pub fn check(&self, name: &str, origin: ServerOrigin<'_>) -> Result<(), Blocked> {
        let blocked = |reason: String| Blocked {
            server: name.to_owned(),
            reason,
        };
        for layer in &self.layers {
            if let Some(m) = layer.denied.iter().find(|m| matches(m, name, origin)) {
                return Err(blocked(format!(
                    "{} denies it (deniedMcpServers: {m})",
                    layer.path.display()
                )));
            }
        }
        for layer in &self.layers {
            let Some(allowed) = &layer.allowed else {
                continue;
            };
            let has = |f: fn(&ServerMatch) -> bool| allowed.iter().any(f);
            let by = match origin {
                ServerOrigin::Command(..) if has(|m| matches!(m, ServerMatch::Command(_))) => {
                    "serverCommand"
                }
                ServerOrigin::Url(_) if has(|m| matches!(m, ServerMatch::Url(_))) => "serverUrl",
                _ => "serverName",
            };
            let allows = allowed.iter().any(|m| {
                let kind = match m {
                    ServerMatch::Name(_) => "serverName",
                    ServerMatch::Command(_) => "serverCommand",
                    ServerMatch::Url(_) => "serverUrl",
                };
                kind == by && matches(m, name, origin)
            });
            if !allows {
                return Err(blocked(format!(
                    "{} allows only the servers it lists, and no {by} entry of allowedMcpServers matches it",
                    layer.path.display()
                )));
            }
        }
        Ok(())
    }

    /// [`check`](Self::check) for a configured server (its command and
    /// arguments, or URL, after `${...}` expansion).
    pub fn check_config(&self, server: &ServerConfig) -> Result<(), Blocked> {
        match &server.transport {
            TransportConfig::Stdio(s) => {
                let args: Vec<String> = s.args.iter().map(|a| a.expose().to_owned()).collect();
                self.check(
                    &server.name,
                    ServerOrigin::Command(s.command.expose(), &args),
                )
            }
            TransportConfig::Http(r) | TransportConfig::Sse(r) => {
                self.check(&server.name, ServerOrigin::Url(r.url.expose()))
            }
        }
    }
}

fn entry(item: &Value) -> Result<ServerMatch, String> {
    let Value::Object(o) = item else {
        return Err("expected an object".into());
    };
    let mut found = Vec::new();
    for (k, v) in o {
        let m = match (k.as_str(), v) {
            ("serverName", Value::String(n)) => ServerMatch::Name(n.clone()),
            ("serverUrl", Value::String(u)) => ServerMatch::Url(u.clone()),
            ("serverCommand", Value::Array(parts)) if !parts.is_empty() => ServerMatch::Command(
                parts
                    .iter()
                    .map(|p| p.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("serverCommand: expected an array of strings")?,
            ),
            ("serverName" | "serverUrl", _) => return Err(format!("{k}: expected a string")),
            ("serverCommand", _) => {
                return Err("serverCommand: expected a non-empty array of strings".into());
            }
            _ => return Err(format!("unknown member {k:?}")),
        };
        found.push(m);
    }
    match <[ServerMatch; 1]>::try_from(found) {
        Ok([m]) => Ok(m),
        Err(_) => Err("expected exactly one of serverName, serverCommand, serverUrl".into()),
    }
}

fn matches(m: &ServerMatch, name: &str, origin: ServerOrigin<'_>) -> bool {
    match (m, origin) {
        (ServerMatch::Name(n), _) => n == name,
        (ServerMatch::Command(c), ServerOrigin::Command(program, args)) => {
            c.len() == args.len() + 1
                && c.first().is_some_and(|p| p == program)
                && c.iter().skip(1).zip(args).all(|(a, b)| a == b)
        }
        (ServerMatch::Url(pattern), ServerOrigin::Url(url)) => {
            wildcard(&lower_origin(pattern), &lower_origin(url))
        }
        _ => false,
    }
}

/// `url` with its scheme and host (everything before the path) in lower
/// case.
fn lower_origin(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url
        .get(start..)
        .and_then(|rest| rest.find(['/', '?', '#']))
        .map_or(url.len(), |i| start + i);
    let (head, tail) = url.split_at(end);
    format!("{}{tail}", head.to_ascii_lowercase())
}

/// Whether `text` matches `pattern`, where `*` is any run of characters.
fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> ManagedPolicy {
        ManagedPolicy::parse("/etc/mcp/managed-policy.json", text).unwrap()
    }

    fn cmd<'a>(program: &'a str, args: &'a [String]) -> ServerOrigin<'a> {
        ServerOrigin::Command(program, args)
    }

    #[test]
    fn deny_wins_and_matches_by_name_command_or_url() {
        let p = policy(
            r#"{"allowedMcpServers": [{"serverName": "fs"}, {"serverName": "web"}],
                "deniedMcpServers": [{"serverName": "shell"}, {"serverCommand": ["npx", "-y", "evil"]},
                                     {"serverUrl": "*://*.untrusted.example/*"}]}"#,
        );
        let evil = ["-y".to_owned(), "evil".to_owned()];
        assert!(p.check("fs", cmd("fs-server", &[])).is_ok());
        assert!(
            p.check("web", ServerOrigin::Url("https://ok.example/mcp"))
                .is_ok()
        );
        // Denied by any means, even when allowed by name.
        let e = p.check("fs", cmd("npx", &evil)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "server `fs` is blocked by the managed policy: /etc/mcp/managed-policy.json denies it (deniedMcpServers: serverCommand [\"npx\", \"-y\", \"evil\"])"
        );
        assert!(p.check("shell", ServerOrigin::Unknown).is_err());
        assert!(
            p.check(
                "web",
                ServerOrigin::Url("HTTPS://Api.UNTRUSTED.example/mcp")
            )
            .is_err()
        );
        // Exact command: more, fewer or other arguments do not match.
        assert!(p.check("fs", cmd("npx", &evil[1..])).is_ok());
        // Not on the allow list.
        let e = p.check("notes", cmd("notes", &[])).unwrap_err();
        assert!(e.reason.contains("no serverName entry"), "{e}");
    }

    #[test]
    fn command_and_url_entries_bind_their_kind_of_server() {
        let p = policy(
            r#"{"allowedMcpServers": [{"serverName": "github"},
                {"serverCommand": ["uvx", "mcp-server-git"]}, {"serverUrl": "https://*.corp.example/*"}]}"#,
        );
        let git = ["mcp-server-git".to_owned()];
        assert!(p.check("anything", cmd("uvx", &git)).is_ok());
        // A stdio server must match a command entry, even if its name is listed.
        let e = p.check("github", cmd("github-mcp", &[])).unwrap_err();
        assert!(e.reason.contains("no serverCommand entry"), "{e}");
        assert!(
            p.check("x", ServerOrigin::Url("https://wiki.corp.example/mcp"))
                .is_ok()
        );
        assert!(
            p.check(
                "github",
                ServerOrigin::Url("https://evil.example/corp.example/")
            )
            .is_err()
        );
        // A server of unknown origin is allowed by name.
        assert!(p.check("github", ServerOrigin::Unknown).is_ok());
        // An empty allow list allows nothing; no allow list, everything.
        assert!(
            policy(r#"{"allowedMcpServers": []}"#)
                .check("a", ServerOrigin::Unknown)
                .is_err()
        );
        assert!(policy("{}").check("a", ServerOrigin::Unknown).is_ok());
        assert!(policy("{}").is_empty() && !p.is_empty());
    }

    #[test]
    fn every_layer_applies() {
        let system = policy(r#"{"allowedMcpServers": [{"serverName": "a"}, {"serverName": "b"}]}"#);
        let extra = ManagedPolicy::parse(
            "/tmp/extra.json",
            r#"{"allowedMcpServers": [{"serverName": "b"}, {"serverName": "c"}], "deniedMcpServers": [{"serverName": "a"}]}"#,
        )
        .unwrap();
        let both = system.and(extra);
        assert!(both.check("b", ServerOrigin::Unknown).is_ok());
        assert!(both.check("a", ServerOrigin::Unknown).is_err());
        let e = both.check("c", ServerOrigin::Unknown).unwrap_err();
        assert!(
            e.reason
                .starts_with("/etc/mcp/managed-policy.json allows only"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_policy_is_an_error_not_no_policy() {
        for (bad, why) in [
            ("not json", "expected"),
            ("[]", "expected a JSON object"),
            (
                r#"{"deniedMcpServers": {}}"#,
                "deniedMcpServers: expected an array",
            ),
            (
                r#"{"deniedMcpServers": [{"serverName": "a", "serverUrl": "b"}]}"#,
                "deniedMcpServers[0]: expected exactly one",
            ),
            (
                r#"{"deniedMcpServers": [{"name": "a"}]}"#,
                "unknown member \"name\"",
            ),
            (
                r#"{"allowedMcpServers": [{"serverCommand": []}]}"#,
                "non-empty array",
            ),
            (
                r#"{"allowedMcpServers": [{"serverCommand": ["a", 1]}]}"#,
                "array of strings",
            ),
        ] {
            let e = ManagedPolicy::parse("/p.json", bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
            assert!(e.to_string().contains("no server starts"), "{e}");
        }
        assert!(
            ManagedPolicy::load("/no/such/policy.json")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn wildcards() {
        assert!(wildcard(
            "https://*.example.com/*",
            "https://a.b.example.com/mcp"
        ));
        assert!(!wildcard(
            "https://*.example.com/*",
            "https://example.com.evil/x"
        ));
        assert!(wildcard(
            "http://localhost:*/*",
            "http://localhost:8080/mcp"
        ));
        assert!(wildcard("a*a", "aa") && !wildcard("a*a", "a"));
        assert!(wildcard("*", "") && wildcard("exact", "exact") && !wildcard("exact", "exactly"));
        assert_eq!(
            lower_origin("HTTPS://Host.X/Path?Q"),
            "https://host.x/Path?Q"
        );
    }
}
