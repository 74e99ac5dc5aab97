//! [`Resolver`]: `${...}` expansion with the values the host supplies.

use std::collections::HashMap;
use std::fmt;
use std::path::{MAIN_SEPARATOR_STR, PathBuf};
use std::sync::Mutex;

use crate::entry::{RawServer, RawTransport};
use crate::error::ConfigError;
use crate::model::{
    Expanded, Format, InputSpec, RemoteConfig, SandboxConfig, ServerConfig, StdioConfig,
    TransportConfig,
};
use crate::parse::ConfigFile;

/// Asks the user for an input (`${input:ID}`). The CLI prompts on the
/// terminal, hiding what is typed when [`InputSpec::password`] is set; an
/// IDE shows a dialog. Each id is asked at most once per [`Resolver`].
///
/// A closure `Fn(&InputSpec) -> Result<String, InputError>` is one.
pub trait InputProvider: Send + Sync {
    /// The value for `input`, or why there is none (e.g. the user cancelled).
    fn provide(&self, input: &InputSpec) -> Result<String, InputError>;
}

impl<F> InputProvider for F
where
    F: Fn(&InputSpec) -> Result<String, InputError> + Send + Sync,
{
    fn provide(&self, input: &InputSpec) -> Result<String, InputError> {
        self(input)
    }
}

/// Why an [`InputProvider`] gave no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(String);

impl InputError {
    /// An error with this reason.
    pub fn new(reason: impl Into<String>) -> Self {
        InputError(reason.into())
    }
}

/// Why an input has no value ([`ConfigError::Input`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputMissing {
    /// The [`Resolver`] has no [`InputProvider`] to ask.
    #[error("nobody can answer it: give the Resolver an InputProvider")]
    NoProvider,
    /// The provider gave no value (e.g. the user cancelled).
    #[error(transparent)]
    Refused(#[from] InputError),
}

type EnvLookup = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Everything `${...}` can refer to: environment variables, the workspace
/// folder, the user's home, and the user's answers to inputs.
///
/// Keep one resolver for the host's lifetime: it remembers each input's
/// answer by id, so a second file or a reload does not ask again. It is
/// `Send + Sync`.
///
/// ```
/// use mcp_config::{ConfigFile, InputError, InputSpec, Resolver};
///
/// let file = ConfigFile::parse(".vscode/mcp.json", r#"{
///     "inputs": [{"type": "promptString", "id": "token", "password": true}],
///     "servers": {"api": {"type": "http", "url": "https://example.com/mcp",
///                         "headers": {"Authorization": "Bearer ${input:token}"}}}
/// }"#, None)?;
/// let resolver = Resolver::new()
///     .inputs(|input: &InputSpec| -> Result<String, InputError> { Ok(format!("answer-for-{}", input.id)) });
/// let servers = file.resolve(&resolver)?;
/// assert!(format!("{servers:?}").contains("<redacted>"));
/// # Ok::<(), mcp_config::ConfigError>(())
/// ```
pub struct Resolver {
    env: EnvLookup,
    workspace_folder: Option<PathBuf>,
    home: Option<PathBuf>,
    inputs: Option<Box<dyn InputProvider>>,
    answers: Mutex<HashMap<String, Expanded>>,
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("workspace_folder", &self.workspace_folder)
            .field("home", &self.home)
            .field("inputs", &self.inputs.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Resolver {
    fn default() -> Self {
        Self::new()
    }
}

impl Resolver {
    /// This process's environment, home from `HOME` (or `USERPROFILE`), no
    /// workspace folder and no input provider (an `${input:...}` is then an
    /// [`Input`](ConfigError::Input) error).
    pub fn new() -> Self {
        Resolver {
            env: Box::new(|name| std::env::var(name).ok()),
            workspace_folder: None,
            home: std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .map(PathBuf::from),
            inputs: None,
            answers: Mutex::new(HashMap::new()),
        }
    }

    /// Looks environment variables up with `lookup` instead of this
    /// process's environment.
    #[must_use]
    pub fn env(mut self, lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Box::new(lookup);
        self
    }

    /// Uses exactly these environment variables.
    #[must_use]
    pub fn env_vars<I, K, V>(self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let map: HashMap<String, String> = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.env(move |name| map.get(name).cloned())
    }

    /// The project folder: `${workspaceFolder}`, and the base of relative
    /// `cwd` and `envFile` paths.
    #[must_use]
    pub fn workspace_folder(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace_folder = Some(dir.into());
        self
    }

    /// The user's home: `${userHome}`.
    #[must_use]
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// Who answers `${input:ID}`.
    #[must_use]
    pub fn inputs(mut self, provider: impl InputProvider + 'static) -> Self {
        self.inputs = Some(Box::new(provider));
        self
    }

    pub(crate) fn resolve_server(
        &self,
        file: &ConfigFile,
        name: &str,
        raw: &RawServer,
    ) -> Result<ServerConfig, ConfigError> {
        let x = |field: &str, text: &str| self.expand(file, name, field, text);
        let transport = match &raw.transport {
            RawTransport::Stdio {
                command,
                args,
                env,
                cwd,
                env_file,
                sandbox,
            } => {
                let mut out = StdioConfig::new("");
                out.command = x("command", command)?;
                for (i, a) in args.iter().enumerate() {
                    out.args.push(x(&format!("args[{i}]"), a)?);
                }
                for (k, v) in env {
                    out.env
                        .push((k.clone(), x(&format!("env.{k}"), v.expose())?.into_secret()));
                }
                out.cwd = cwd
                    .as_ref()
                    .map(|c| x("cwd", c).map(|c| self.path(&c)))
                    .transpose()?;
                out.env_file = env_file
                    .as_ref()
                    .map(|f| x("envFile", f).map(|f| self.path(&f)))
                    .transpose()?;
                out.sandbox = sandbox
                    .as_ref()
                    .map(|sb| self.sandbox_paths(file, name, sb))
                    .transpose()?;
                TransportConfig::Stdio(out)
            }
            RawTransport::Remote {
                sse,
                url,
                headers,
                oauth,
                env_headers,
            } => {
                let mut out = RemoteConfig::new("");
                out.url = x("url", url)?;
                if file.format() != Format::VsCode && is_local_socket_url(out.url.expose()) {
                    return Err(ConfigError::Shape {
                        path: file.path().to_owned(),
                        server: Some(name.to_owned()),
                        field: "url".into(),
                        message: LOCAL_SOCKET_ONLY_VSCODE.into(),
                    });
                }
                for (k, v) in headers {
                    out.headers.push((
                        k.clone(),
                        x(&format!("headers.{k}"), v.expose())?.into_secret(),
                    ));
                }
                for h in env_headers {
                    match (self.env)(&h.var).filter(|v| !v.is_empty()) {
                        Some(v) => out
                            .headers
                            .push((h.name.clone(), Expanded::secret(format!("{}{v}", h.prefix)))),
                        None if h.optional => {}
                        None => {
                            return Err(ConfigError::MissingVariable {
                                path: file.path().to_owned(),
                                server: name.to_owned(),
                                field: format!("headers.{}", h.name),
                                variable: format!("environment variable {}", h.var),
                                hint: " (the file names it for this header: set it before starting the host)",
                            });
                        }
                    }
                }
                out.oauth = oauth.clone();
                if *sse {
                    TransportConfig::Sse(out)
                } else {
                    TransportConfig::Http(out)
                }
            }
        };
        let mut server = ServerConfig::new(name, transport, file.source().clone());
        server.disabled = raw.disabled;
        server.include_tools = raw.include_tools.clone();
        server.exclude_tools = raw.exclude_tools.clone();
        server.tool_policy = raw.tool_policy.clone();
        server.title = raw.title.clone();
        server.description = raw.description.clone();
        Ok(server)
    }

    /// The sandbox's paths expanded (VS Code expands variables in them) and
    /// joined to the workspace folder when relative; domains as written.
    fn sandbox_paths(
        &self,
        file: &ConfigFile,
        name: &str,
        raw: &SandboxConfig,
    ) -> Result<SandboxConfig, ConfigError> {
        let expand = |key: &str, paths: &[PathBuf]| -> Result<Vec<PathBuf>, ConfigError> {
            paths
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let field = format!("sandbox.filesystem.{key}[{i}]");
                    self.expand(file, name, &field, &p.to_string_lossy())
                        .map(|e| self.path(&e))
                })
                .collect()
        };
        let mut out = raw.clone();
        out.allow_write = expand("allowWrite", &raw.allow_write)?;
        out.deny_read = expand("denyRead", &raw.deny_read)?;
        out.deny_write = expand("denyWrite", &raw.deny_write)?;
        Ok(out)
    }

    fn path(&self, p: &Expanded) -> PathBuf {
        let p = PathBuf::from(p.expose());
        match &self.workspace_folder {
            Some(base) if p.is_relative() => base.join(p),
            _ => p,
        }
    }

    /// Expands every `${...}` of `text`. Expanded values are not scanned
    /// again.
    fn expand(
        &self,
        file: &ConfigFile,
        server: &str,
        field: &str,
        text: &str,
    ) -> Result<Expanded, ConfigError> {
        let at = At {
            file,
            server,
            field,
        };
        // Gemini CLI also expands `$NAME` without braces.
        let bare = file.format() == Format::Gemini;
        let mut out = String::with_capacity(text.len());
        let mut secret = false;
        let mut rest = text;
        while let Some(start) = rest.find('$') {
            let after = &rest[start + 1..];
            let (value, taken) = if let Some(braced) = after.strip_prefix('{') {
                let Some(len) = braced.find('}') else {
                    break;
                };
                (self.variable(&at, &braced[..len])?, 2 + len + 1)
            } else if let Some(name) = bare.then(|| identifier_prefix(after)).flatten() {
                (self.posix(&at, name)?, 1 + name.len())
            } else {
                (None, 1)
            };
            out.push_str(&rest[..start]);
            match value {
                Some(v) => {
                    secret |= v.is_secret();
                    out.push_str(v.expose());
                }
                None => out.push_str(&rest[start..start + taken]),
            }
            rest = &rest[start + taken..];
        }
        out.push_str(rest);
        Ok(Expanded::new(out, secret))
    }

    /// One `${inner}`: its value, `None` to keep it as written, or why not.
    fn variable(&self, at: &At<'_>, inner: &str) -> Result<Option<Expanded>, ConfigError> {
        match at.file.format() {
            Format::ClaudeCode | Format::Gemini => self.posix(at, inner),
            Format::VsCode | Format::Cursor => self.vscode(at, inner).map(Some),
            Format::Standard => self.standard(at, inner).map(Some),
            Format::Windsurf => self.windsurf(at, inner).map(Some),
            // These hosts expand nothing: the text is the value.
            Format::Codex | Format::Zed | Format::Goose => Ok(None),
        }
    }

    /// Windsurf's `${env:NAME}`.
    fn windsurf(&self, at: &At<'_>, inner: &str) -> Result<Expanded, ConfigError> {
        let Some(name) = inner.strip_prefix("env:") else {
            return Err(at.unsupported(inner, "${env:NAME}"));
        };
        (self.env)(name).map(Expanded::secret).ok_or_else(|| {
            at.missing(
                format!("environment variable {name}"),
                " (set it before starting the host)",
            )
        })
    }

    /// `${NAME}` and `${NAME:-default}`; anything else stays as written.
    fn posix(&self, at: &At<'_>, inner: &str) -> Result<Option<Expanded>, ConfigError> {
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if !is_identifier(name) {
            return Ok(None);
        }
        match ((self.env)(name), default) {
            (Some(v), Some(d)) if v.is_empty() => Ok(Some(Expanded::plain(d))),
            (Some(v), _) => Ok(Some(Expanded::secret(v))),
            (None, Some(d)) => Ok(Some(Expanded::plain(d))),
            (None, None) => Err(at.missing(
                format!("environment variable {name}"),
                " (set it before starting the host, or write ${NAME:-default})",
            )),
        }
    }

    /// VS Code's and Cursor's variables.
    fn vscode(&self, at: &At<'_>, inner: &str) -> Result<Expanded, ConfigError> {
        let vscode = at.file.format() == Format::VsCode;
        let supported = if vscode {
            "${env:NAME}, ${input:ID}, ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator}, ${/}"
        } else {
            "${env:NAME}, ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator}, ${/}"
        };
        let folder = |what: &str, dir: &Option<PathBuf>, hint| {
            dir.as_ref()
                .map(|d| d.to_string_lossy().into_owned())
                .ok_or_else(|| at.missing(what.to_owned(), hint))
        };
        const NO_WORKSPACE: &str = " (no workspace folder is known: pass it to Resolver::workspace_folder, or open the project)";
        let plain = match inner {
            "workspaceFolder" => {
                folder("${workspaceFolder}", &self.workspace_folder, NO_WORKSPACE)?
            }
            "workspaceFolderBasename" => {
                let f = folder(
                    "${workspaceFolderBasename}",
                    &self.workspace_folder,
                    NO_WORKSPACE,
                )?;
                PathBuf::from(f)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }
            "userHome" => folder(
                "${userHome}",
                &self.home,
                " (HOME is not set: pass Resolver::home)",
            )?,
            "pathSeparator" | "/" => MAIN_SEPARATOR_STR.to_owned(),
            _ => {
                if let Some(name) = inner.strip_prefix("env:") {
                    return (self.env)(name).map(Expanded::secret).ok_or_else(|| {
                        at.missing(
                            format!("environment variable {name}"),
                            " (set it before starting the host)",
                        )
                    });
                }
                if let Some(id) = inner.strip_prefix("input:").filter(|_| vscode) {
                    let Some(spec) = at.file.inputs().iter().find(|i| i.id == id) else {
                        return Err(ConfigError::UnknownInput {
                            path: at.file.path().to_owned(),
                            server: at.server.to_owned(),
                            field: at.field.to_owned(),
                            id: id.to_owned(),
                        });
                    };
                    return self.input(at, spec);
                }
                return Err(at.unsupported(inner, supported));
            }
        };
        Ok(Expanded::plain(plain))
    }

    /// SEP-2633: `${scheme:value | scheme:value ...}`, the first non-empty
    /// one wins.
    fn standard(&self, at: &At<'_>, inner: &str) -> Result<Expanded, ConfigError> {
        const SUPPORTED: &str = "${env:NAME}, ${value:TEXT}, ${input:ID}, joined by |";
        let mut unsupported = None;
        for part in inner.split('|').map(str::trim) {
            let value = match part.split_once(':') {
                Some(("env", name)) => (self.env)(name).map(Expanded::secret),
                Some(("value", text)) => Some(Expanded::plain(text)),
                Some(("input", id)) => {
                    // SEP-2633 has no `inputs` list: the client asks, and
                    // the value is treated as a secret.
                    let spec = InputSpec::new(id, true);
                    Some(self.input(at, &spec)?)
                }
                _ => {
                    unsupported.get_or_insert(part);
                    None
                }
            };
            if let Some(v) = value.filter(|v| !v.expose().is_empty()) {
                return Ok(v);
            }
        }
        match unsupported {
            Some(part) => Err(at.unsupported(part, SUPPORTED)),
            None => Err(at.missing(
                format!("`${{{inner}}}`"),
                " (none of its sources has a value; add `| value:DEFAULT` for a fallback)",
            )),
        }
    }

    fn input(&self, at: &At<'_>, spec: &InputSpec) -> Result<Expanded, ConfigError> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = answers.get(&spec.id) {
            return Ok(v.clone());
        }
        let failed = |reason: InputMissing| ConfigError::Input {
            path: at.file.path().to_owned(),
            server: at.server.to_owned(),
            field: at.field.to_owned(),
            id: spec.id.clone(),
            reason,
        };
        let Some(provider) = &self.inputs else {
            return Err(failed(InputMissing::NoProvider));
        };
        let value = provider
            .provide(spec)
            .map_err(|e| failed(InputMissing::Refused(e)))?;
        let value = Expanded::new(value, spec.password);
        answers.insert(spec.id.clone(), value.clone());
        Ok(value)
    }
}

struct At<'a> {
    file: &'a ConfigFile,
    server: &'a str,
    field: &'a str,
}

impl At<'_> {
    fn missing(&self, variable: String, hint: &'static str) -> ConfigError {
        ConfigError::MissingVariable {
            path: self.file.path().to_owned(),
            server: self.server.to_owned(),
            field: self.field.to_owned(),
            variable,
            hint,
        }
    }

    fn unsupported(&self, variable: &str, supported: &'static str) -> ConfigError {
        ConfigError::UnsupportedVariable {
            path: self.file.path().to_owned(),
            server: self.server.to_owned(),
            field: self.field.to_owned(),
            variable: variable.to_owned(),
            supported,
        }
    }
}

/// The identifier `s` starts with (`[A-Za-z_][A-Za-z0-9_]*`), if any.
fn identifier_prefix(s: &str) -> Option<&str> {
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit())))
        .map_or(s.len(), |(i, _)| i);
    (end > 0).then(|| &s[..end])
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why a `unix://` or `pipe://` URL is refused outside VS Code's format.
const LOCAL_SOCKET_ONLY_VSCODE: &str = "unix:// and pipe:// URLs (a server on a local socket) are VS Code's form: \
     write this server in .vscode/mcp.json; this format documents only http(s) URLs";

/// Whether `url` names a local socket (`unix:`, `pipe:`), which only VS
/// Code's format documents.
fn is_local_socket_url(url: &str) -> bool {
    let scheme = url.split_once(':').map_or("", |(s, _)| s);
    scheme.eq_ignore_ascii_case("unix") || scheme.eq_ignore_ascii_case("pipe")
}
