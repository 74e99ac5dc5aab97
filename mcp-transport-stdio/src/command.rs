//! [`ServerCommand`]: what to spawn and how.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::codec::DEFAULT_MAX_MESSAGE_SIZE;
use crate::line::DEFAULT_WRITE_BUFFER_LIMIT;

/// How long [`close`](mcp_proto::transport::TransportExt::close) waits for the
/// server to exit after its stdin is closed, before `SIGTERM`: 2 s.
pub const DEFAULT_STDIN_GRACE: Duration = Duration::from_secs(2);

/// How long close waits after `SIGTERM` before `SIGKILL`: 2 s.
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(2);

/// The variables kept by
/// [`env_clear_to_allowlist`](ServerCommand::env_clear_to_allowlist): what a
/// launcher such as `npx` or `uvx` needs to find itself and its caches, and
/// nothing that usually holds a secret.
pub const DEFAULT_ENV_ALLOWLIST: &[&str] = &[
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    // Windows equivalents (absent elsewhere, so harmless).
    "SYSTEMROOT",
    "WINDIR",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "TEMP",
    "TMP",
    "PATHEXT",
    "COMSPEC",
];

/// A callback receiving each stderr line of the server (without its newline,
/// invalid UTF-8 replaced).
pub type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// What happens to the server's stderr.
///
/// The default, [`Stderr::forward`], reads it line by line and emits each line
/// as a `tracing` event at `INFO` with target `mcp_transport_stdio::stderr`
/// (the MCP spec calls stderr a log, never an error signal). In every mode
/// but [`inherit`](Stderr::inherit) stderr is drained by a background task as
/// fast as the server writes, so a chatty server never blocks on a full
/// pipe, and the last lines are kept for the error reported
/// when the server exits with a failure.
#[derive(Clone)]
pub struct Stderr(pub(crate) StderrMode);

#[derive(Clone)]
pub(crate) enum StderrMode {
    Inherit,
    Discard,
    Forward(Option<StderrCallback>),
}

impl Stderr {
    /// The server writes to this process's stderr directly. Nothing is
    /// captured: exit errors then carry no stderr lines.
    pub fn inherit() -> Self {
        Stderr(StderrMode::Inherit)
    }

    /// Read and drop everything (still captured for exit errors).
    pub fn discard() -> Self {
        Stderr(StderrMode::Discard)
    }

    /// Forward each line to `tracing` only (the default).
    pub fn forward() -> Self {
        Stderr(StderrMode::Forward(None))
    }

    /// Forward each line to `callback` and to `tracing`. The callback runs on
    /// the draining task: keep it short and non-blocking.
    pub fn forward_to(callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Stderr(StderrMode::Forward(Some(Arc::new(callback))))
    }
}

impl Default for Stderr {
    fn default() -> Self {
        Stderr::forward()
    }
}

impl fmt::Debug for Stderr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &self.0 {
            StderrMode::Inherit => "Stderr::Inherit",
            StderrMode::Discard => "Stderr::Discard",
            StderrMode::Forward(None) => "Stderr::Forward",
            StderrMode::Forward(Some(_)) => "Stderr::Forward(callback)",
        })
    }
}

/// Where the child's environment starts from.
#[derive(Debug, Clone)]
pub(crate) enum EnvBase {
    Inherit,
    Allowlist(Vec<OsString>),
}

/// A server to spawn: program, arguments, directory, environment, stderr
/// handling and limits. Built with chained calls, then passed to
/// [`StdioTransport::spawn`](crate::StdioTransport::spawn).
///
/// ```
/// use std::time::Duration;
/// use mcp_transport_stdio::{ServerCommand, Stderr};
///
/// let cmd = ServerCommand::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env_clear_to_allowlist()
///     .env("API_TOKEN", "only-this-one")
///     .stderr(Stderr::forward_to(|line| eprintln!("[server] {line}")))
///     .shutdown_timeouts(Duration::from_secs(1), Duration::from_secs(1));
/// assert_eq!(cmd.get_program(), "npx");
/// ```
#[derive(Debug, Clone)]
pub struct ServerCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env_base: EnvBase,
    /// Applied in order on top of the base: `Some` sets, `None` removes.
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) stderr: Stderr,
    pub(crate) max_message_size: usize,
    pub(crate) write_buffer_limit: usize,
    pub(crate) stdin_grace: Duration,
    pub(crate) term_grace: Duration,
    #[cfg(feature = "sandbox")]
    pub(crate) sandbox: Option<mcp_sandbox::Sandbox>,
}

impl ServerCommand {
    /// A command running `program` (looked up in `PATH` if it has no slash),
    /// with no arguments, inheriting the environment and forwarding stderr to
    /// `tracing`.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ServerCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: None,
            env_base: EnvBase::Inherit,
            env: Vec::new(),
            stderr: Stderr::default(),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            write_buffer_limit: DEFAULT_WRITE_BUFFER_LIMIT,
            stdin_grace: DEFAULT_STDIN_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
            #[cfg(feature = "sandbox")]
            sandbox: None,
        }
    }

    /// Splits a command line the way a POSIX shell splits words, then builds
    /// a command from it: `'single'` and `"double"` quotes, backslash
    /// escapes, and leading `NAME=value` words as environment variables
    /// (`FOO=1 npx -y server`). No expansion (`$VAR`, `~`, globs) and no
    /// operators (`|`, `;`, `&&`) are interpreted: they stay literal.
    ///
    /// ```
    /// use mcp_transport_stdio::ServerCommand;
    /// let cmd = ServerCommand::parse_shell_words(r#"DEBUG=1 uvx "mcp server" --root '/a b'"#)?;
    /// assert_eq!(cmd.get_program(), "uvx");
    /// assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["mcp server", "--root", "/a b"]);
    /// # Ok::<(), mcp_transport_stdio::ShellWordsError>(())
    /// ```
    pub fn parse_shell_words(line: &str) -> Result<Self, ShellWordsError> {
        let words = split_shell_words(line)?;
        let mut words = words.into_iter().peekable();
        let mut env = Vec::new();
        while let Some(w) = words.next_if(|w| w.assignment.is_some()) {
            if let Some(eq) = w.assignment {
                let (name, value) = w.text.split_at(eq);
                env.push((
                    name.to_owned(),
                    value.get(1..).unwrap_or_default().to_owned(),
                ));
            }
        }
        let program = words.next().ok_or(ShellWordsError::NoProgram)?;
        let mut cmd = ServerCommand::new(program.text).args(words.map(|w| w.text));
        for (k, v) in env {
            cmd = cmd.env(k, v);
        }
        Ok(cmd)
    }

    /// Appends one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Runs the server in `dir` (default: this process's directory).
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets one environment variable for the server.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Sets several environment variables.
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }

    /// Removes one variable from the server's environment.
    #[must_use]
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Starts the server's environment from [`DEFAULT_ENV_ALLOWLIST`]
    /// instead of this process's whole environment, so API keys and tokens
    /// are not handed to a third-party server by accident. Variables set with
    /// [`env`](Self::env) are added on top, whatever the call order.
    #[must_use]
    pub fn env_clear_to_allowlist(self) -> Self {
        self.env_allowlist(DEFAULT_ENV_ALLOWLIST)
    }

    /// Like [`env_clear_to_allowlist`](Self::env_clear_to_allowlist) with
    /// your own list of inherited variable names (empty: inherit nothing).
    #[must_use]
    pub fn env_allowlist<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.env_base =
            EnvBase::Allowlist(names.into_iter().map(|n| n.as_ref().to_owned()).collect());
        self
    }

    /// Chooses what happens to the server's stderr (default
    /// [`Stderr::forward`]).
    #[must_use]
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// Sets the largest accepted message from the server, in bytes (default
    /// [`DEFAULT_MAX_MESSAGE_SIZE`], 16 MiB).
    #[must_use]
    pub fn max_message_size(mut self, limit: usize) -> Self {
        self.max_message_size = limit.max(1);
        self
    }

    /// Sets how many unsent bytes make `poll_ready` wait (default
    /// [`DEFAULT_WRITE_BUFFER_LIMIT`], 1 MiB).
    #[must_use]
    pub fn write_buffer_limit(mut self, limit: usize) -> Self {
        self.write_buffer_limit = limit.max(1);
        self
    }

    /// Sets the shutdown waits: after closing stdin (default
    /// [`DEFAULT_STDIN_GRACE`]) and after `SIGTERM` (default
    /// [`DEFAULT_TERM_GRACE`]).
    #[must_use]
    pub fn shutdown_timeouts(mut self, stdin_grace: Duration, term_grace: Duration) -> Self {
        self.stdin_grace = stdin_grace;
        self.term_grace = term_grace;
        self
    }

    /// Runs the server confined by `sandbox` (feature `sandbox`; Linux):
    /// the transport spawns the sandbox launcher, which confines itself and
    /// starts the server (see `mcp_sandbox`). Fails closed: where no
    /// sandbox can be had, [`StdioTransport::spawn`](crate::StdioTransport::spawn)
    /// returns [`SpawnError::Sandbox`] and starts nothing.
    ///
    /// A sandboxed server's environment starts from
    /// [`DEFAULT_ENV_ALLOWLIST`] unless an allowlist was chosen already
    /// ([`env_allowlist`](Self::env_allowlist)): handing it this process's
    /// whole environment would give it the secrets the sandbox keeps it
    /// from reading in `/proc`. Variables set with [`env`](Self::env) are
    /// added on top, as always.
    ///
    /// Needs the `sandbox` feature.
    ///
    /// ```no_run
    /// use mcp_transport_stdio::{ServerCommand, StdioTransport};
    /// use mcp_transport_stdio::sandbox::Sandbox;
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let cmd = ServerCommand::new("node")
    ///     .args(["/opt/servers/filesystem/index.js", "/home/me/project"])
    ///     .sandbox(
    ///         Sandbox::new()
    ///             .allow_write("/home/me/project")
    ///             .deny_read("/home/me/.ssh"),
    ///     );
    /// let server = StdioTransport::spawn(cmd)?;
    /// # drop(server); Ok(()) }
    /// ```
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    #[must_use]
    pub fn sandbox(mut self, sandbox: mcp_sandbox::Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        if matches!(self.env_base, EnvBase::Inherit) {
            self = self.env_clear_to_allowlist();
        }
        self
    }

    /// The sandbox the server runs in, if any.
    ///
    /// Needs the `sandbox` feature.
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub fn get_sandbox(&self) -> Option<&mcp_sandbox::Sandbox> {
        self.sandbox.as_ref()
    }

    /// The program to run.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments.
    pub fn get_args(&self) -> impl Iterator<Item = &OsStr> {
        self.args.iter().map(OsString::as_os_str)
    }

    /// Environment changes, in order: `Some` sets, `None` removes.
    pub fn get_envs(&self) -> impl Iterator<Item = (&OsStr, Option<&OsStr>)> {
        self.env.iter().map(|(k, v)| (k.as_os_str(), v.as_deref()))
    }

    pub(crate) fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// Applies directory and environment to `cmd` (not the arguments).
    pub(crate) fn configure(&self, cmd: &mut tokio::process::Command) {
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        if let EnvBase::Allowlist(names) = &self.env_base {
            cmd.env_clear();
            for name in names {
                if let Some(value) = std::env::var_os(name) {
                    cmd.env(name, value);
                }
            }
        }
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
    }
}

/// The server could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No such program (not in `PATH`, or the path does not exist).
    #[error(
        "cannot start MCP server `{program}`: program not found (check the name, or that its directory is in PATH)"
    )]
    NotFound {
        /// The program as given.
        program: String,
    },
    /// The program exists but may not be executed.
    #[error(
        "cannot start MCP server `{program}`: permission denied (is the file executable? `chmod +x` it)"
    )]
    PermissionDenied {
        /// The program as given.
        program: String,
    },
    /// The working directory does not exist or is not a directory.
    #[error(
        "cannot start MCP server `{program}`: working directory `{}` does not exist or is not a directory",
        dir.display()
    )]
    WorkingDirectory {
        /// The program as given.
        program: String,
        /// The directory asked for.
        dir: PathBuf,
    },
    /// Spawning needs a Tokio runtime (the transport starts background tasks).
    #[error(
        "cannot start MCP server `{program}`: StdioTransport::spawn must be called from within a Tokio runtime"
    )]
    NoRuntime {
        /// The program as given.
        program: String,
    },
    /// The server asked for a sandbox that cannot be had here: it was not
    /// started (the reason says why and how to opt out).
    ///
    /// Needs the `sandbox` feature.
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    #[error("cannot start MCP server `{program}` sandboxed")]
    Sandbox {
        /// The program as given.
        program: String,
        /// Why.
        #[source]
        reason: mcp_sandbox::Unavailable,
    },
    /// Any other OS error (the [`source`](std::error::Error::source)).
    #[error("cannot start MCP server `{program}`")]
    Io {
        /// The program as given.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl SpawnError {
    pub(crate) fn from_io(program: String, e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => SpawnError::NotFound { program },
            io::ErrorKind::PermissionDenied => SpawnError::PermissionDenied { program },
            _ => SpawnError::Io { program, source: e },
        }
    }

    /// The program that could not be started.
    pub fn program(&self) -> &str {
        match self {
            SpawnError::NotFound { program }
            | SpawnError::PermissionDenied { program }
            | SpawnError::WorkingDirectory { program, .. }
            | SpawnError::NoRuntime { program }
            | SpawnError::Io { program, .. } => program,
            #[cfg(feature = "sandbox")]
            SpawnError::Sandbox { program, .. } => program,
        }
    }
}

/// A command line [`ServerCommand::parse_shell_words`] could not split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShellWordsError {
    /// A `'` or `"` was never closed.
    #[error("unterminated {quote} quote in command line")]
    UnterminatedQuote {
        /// The quote character.
        quote: char,
    },
    /// The line ends with a lone backslash.
    #[error("command line ends with a lone backslash")]
    TrailingBackslash,
    /// The line is empty, or holds only `NAME=value` assignments.
    #[error("command line names no program")]
    NoProgram,
}

struct Word {
    text: String,
    /// Byte offset of the `=` when the word is an unquoted `NAME=value`.
    assignment: Option<usize>,
}

fn is_assignment_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// POSIX shell word splitting (quotes and backslashes only).
///
/// Why not the `shell-words` crate (1.1, the usual choice): it returns plain
/// strings, so `'A=1' prog` (a program named `A=1`) and `A=1 prog` (an
/// environment variable) come out the same, and a shell treats them
/// differently; knowing whether the `=` was quoted is what this splitter
/// keeps ([`Word::assignment`]). It would also add one crate (63 to 64) to
/// the tree of every dependent of the stdio transport, which this issue's
/// budget (60) cannot spare.
fn split_shell_words(line: &str) -> Result<Vec<Word>, ShellWordsError> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    // Offset of the first quoted or escaped char of the current word.
    let mut first_quoted: Option<usize> = None;
    let mut chars = line.chars();

    let finish = |cur: &mut String, first_quoted: &mut Option<usize>, words: &mut Vec<Word>| {
        let text = std::mem::take(cur);
        let assignment = text
            .find('=')
            .filter(|&eq| first_quoted.is_none_or(|q| q > eq))
            .filter(|&eq| text.get(..eq).is_some_and(is_assignment_name));
        *first_quoted = None;
        words.push(Word { text, assignment });
    };

    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    finish(&mut cur, &mut first_quoted, &mut words);
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                first_quoted.get_or_insert(cur.len());
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(ShellWordsError::UnterminatedQuote { quote: '\'' }),
                    }
                }
            }
            '"' => {
                in_word = true;
                first_quoted.get_or_insert(cur.len());
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err(ShellWordsError::UnterminatedQuote { quote: '"' }),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(ShellWordsError::UnterminatedQuote { quote: '"' }),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    first_quoted.get_or_insert(cur.len());
                    cur.push(c);
                }
                None => return Err(ShellWordsError::TrailingBackslash),
            },
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        finish(&mut cur, &mut first_quoted, &mut words);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each level's Display is its own part (mcp_proto::error): the spawn
    /// errors, and a server's exit inside the transport's error.
    #[cfg(unix)]
    #[test]
    fn errors_print_each_cause_once() {
        use mcp_proto::transport::{TransportError, TransportErrorKind};
        let other = io::Error::new(io::ErrorKind::OutOfMemory, "no memory for the child");
        let errors: Vec<Box<dyn std::error::Error>> = vec![
            Box::new(SpawnError::from_io("srv".into(), other)),
            Box::new(SpawnError::from_io(
                "srv".into(),
                io::ErrorKind::NotFound.into(),
            )),
            Box::new(TransportError::new(
                TransportErrorKind::Closed,
                crate::stdio::ServerExited::for_test(1, &["fatal: config missing"]),
            )),
            Box::new(TransportError::from(
                crate::JsonLineCodecError::LineTooLong {
                    limit: 10,
                    len: 20,
                    ended: true,
                    dropped: crate::Dropped::NotAnAnswer,
                },
            )),
        ];
        for e in &errors {
            test_support::assert_causes_once(e.as_ref());
        }
        let spawn = SpawnError::from_io(
            "srv".into(),
            io::Error::new(io::ErrorKind::OutOfMemory, "no memory for the child"),
        );
        assert_eq!(
            mcp_proto::error::chain(&spawn).to_string(),
            "cannot start MCP server `srv`: no memory for the child"
        );
    }

    fn split(s: &str) -> Vec<String> {
        split_shell_words(s)
            .unwrap()
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    #[test]
    fn splits_like_a_posix_shell() {
        assert_eq!(split("npx -y  server"), ["npx", "-y", "server"]);
        assert_eq!(split("  a\tb\n c  "), ["a", "b", "c"]);
        assert_eq!(split(r#"a "b c" 'd e'"#), ["a", "b c", "d e"]);
        assert_eq!(split(r#"a"b"'c'd"#), ["abcd"]);
        assert_eq!(split(r"a\ b c\\d"), ["a b", r"c\d"]);
        assert_eq!(split(r#""a\"b\\c\$d\e""#), [r#"a"b\c$d\e"#]);
        assert_eq!(split(r"'a\b'"), [r"a\b"]);
        assert_eq!(split(r#""" ''"#), ["", ""]);
        assert_eq!(split("$HOME ~ *.js | x"), ["$HOME", "~", "*.js", "|", "x"]);
        assert_eq!(split("a\\\nb"), ["ab"]);
        assert!(split("").is_empty());
    }

    #[test]
    fn rejects_unterminated_input() {
        assert_eq!(
            split_shell_words("a 'b").err(),
            Some(ShellWordsError::UnterminatedQuote { quote: '\'' })
        );
        assert_eq!(
            split_shell_words("a \"b\\\"").err(),
            Some(ShellWordsError::UnterminatedQuote { quote: '"' })
        );
        assert_eq!(
            split_shell_words("a \\").err(),
            Some(ShellWordsError::TrailingBackslash)
        );
        assert_eq!(
            ServerCommand::parse_shell_words("  ").err(),
            Some(ShellWordsError::NoProgram)
        );
        assert_eq!(
            ServerCommand::parse_shell_words("A=1 B=2").err(),
            Some(ShellWordsError::NoProgram)
        );
    }

    #[test]
    fn leading_assignments_become_env() {
        let cmd = ServerCommand::parse_shell_words("A=1 _B='x y' uvx C=3 srv").unwrap();
        assert_eq!(cmd.get_program(), "uvx");
        assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["C=3", "srv"]);
        let env: Vec<_> = cmd.get_envs().collect();
        assert_eq!(
            env,
            [
                (OsStr::new("A"), Some(OsStr::new("1"))),
                (OsStr::new("_B"), Some(OsStr::new("x y")))
            ]
        );
        // A quoted name, or an invalid one, is not an assignment.
        for line in [
            "'A=1' prog",
            "\"A\"=1 prog",
            "1A=2 prog",
            "=x prog",
            "A-B=1 prog",
        ] {
            let cmd = ServerCommand::parse_shell_words(line).unwrap();
            assert_eq!(cmd.get_envs().count(), 0, "{line}");
            assert_ne!(cmd.get_program(), "prog", "{line}");
        }
        // Quoting after the `=` keeps it an assignment.
        let cmd = ServerCommand::parse_shell_words("A=\"x y\" prog").unwrap();
        assert_eq!(cmd.get_program(), "prog");
        assert_eq!(cmd.get_envs().count(), 1);
    }
}
