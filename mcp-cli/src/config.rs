//! Servers from a host's configuration (mcp-config): `--config PATH` or the
//! project files in the current directory (once trusted: [`crate::trust`]),
//! `${input:...}` asked on the terminal, and the server a command talks to.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use mcp_config::{
    ConfigFile, InputError, InputSpec, Resolver, ServerConfig, discover, resolve_all,
};
use mcp_tools::Glob;

use crate::failure::Failure;

/// The servers of the configuration files read.
#[derive(Debug)]
pub(crate) struct Configured {
    /// Every server, sorted by name (the first file to name one wins).
    pub(crate) servers: Vec<ServerConfig>,
    /// The files read, most important first.
    pub(crate) files: Vec<PathBuf>,
    /// Servers left out because they could not be resolved (`--from`).
    pub(crate) errors: Vec<String>,
}

impl Configured {
    /// The server called `name`, or a usage error listing the names.
    pub(crate) fn take(&mut self, name: &str) -> Result<ServerConfig, Failure> {
        let quoted = format!("server {name:?}");
        if let Some(e) = self.errors.iter().find(|e| e.contains(&quoted)) {
            return Err(Failure::Usage(e.clone()));
        }
        match self.servers.iter().position(|s| s.name == name) {
            Some(i) => Ok(self.servers.swap_remove(i)),
            None => Err(Failure::Usage(format!(
                "no server {name:?} in {} (servers: {})",
                self.file_names(),
                self.names()
            ))),
        }
    }

    pub(crate) fn names(&self) -> String {
        let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    pub(crate) fn file_names(&self) -> String {
        let mut files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        files.dedup();
        files.join(", ")
    }
}

/// Whether the configuration lets the host offer the tool `name`
/// (`includeTools` / `excludeTools` globs, as mcp-host applies them).
pub(crate) fn offers(cfg: &ServerConfig, name: &str) -> bool {
    let matches = |pattern: &String| Glob::new(pattern.as_str()).matches(name);
    cfg.include_tools
        .as_ref()
        .is_none_or(|include| include.iter().any(matches))
        && !cfg.exclude_tools.iter().any(matches)
}

/// The tools (raw objects) the configuration lets the host offer. Each
/// `includeTools` / `excludeTools` pattern that matches none of the
/// server's tools gets a line on stderr ([`warn_unmatched`]).
pub(crate) fn offered_tools(
    cfg: &ServerConfig,
    tools: Vec<Box<serde_json::value::RawValue>>,
) -> Vec<Box<serde_json::value::RawValue>> {
    let named: Vec<(String, Box<serde_json::value::RawValue>)> = tools
        .into_iter()
        .map(|t| {
            let name = mcp_cli::raw_json::Object::parse(t.get())
                .ok()
                .and_then(|o| o.str("name"))
                .unwrap_or_default();
            (name, t)
        })
        .collect();
    warn_unmatched(cfg, named.iter().map(|(n, _)| n.as_str()));
    named
        .into_iter()
        .filter(|(name, _)| offers(cfg, name))
        .map(|(_, t)| t)
        .collect()
}

/// One line on stderr for each tool pattern of `cfg` that matches none of
/// `names` (nothing when the server has no tools to judge by), with what
/// is literal when it looks like another glob dialect (`t[0-9]*`).
fn warn_unmatched<'n>(cfg: &ServerConfig, names: impl Iterator<Item = &'n str> + Clone) {
    if names.clone().next().is_none() {
        return;
    }
    let include = cfg
        .include_tools
        .iter()
        .flatten()
        .map(|p| ("includeTools", p));
    let exclude = cfg.exclude_tools.iter().map(|p| ("excludeTools", p));
    for (field, pattern) in include.chain(exclude) {
        let glob = Glob::new(pattern.as_str());
        if glob.matches_any(names.clone()) {
            continue;
        }
        let hint = glob
            .literal_syntax_hint()
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        eprintln!(
            "mcp: server {}: {field} pattern \"{}\" matches none of its tools{hint}",
            mcp_cli::terminal::line(&cfg.name),
            mcp_cli::terminal::line(pattern)
        );
    }
}

/// The configuration files read for a run: nothing expanded, trusted or
/// started yet.
#[derive(Debug)]
pub(crate) struct Read {
    /// The files, most important first.
    pub(crate) files: Vec<ConfigFile>,
    /// For each file: whether it is a project's (trusted before its
    /// servers start).
    pub(crate) project: Vec<bool>,
    /// Files that could not be read, as lines.
    pub(crate) errors: Vec<String>,
    /// Hosts asked for (`--from`) that keep no file.
    pub(crate) absent: Vec<(mcp_config::Host, PathBuf)>,
    /// Whether an error in a file or a server stops the run (`--config` and
    /// the project files, as they always did) or is a warning (`--from`:
    /// one host's broken entry does not hide the others).
    pub(crate) strict: bool,
}

impl Read {
    pub(crate) fn new(strict: bool) -> Self {
        Read {
            files: Vec::new(),
            project: Vec::new(),
            errors: Vec::new(),
            absent: Vec::new(),
            strict,
        }
    }

    pub(crate) fn push(&mut self, file: ConfigFile, project: bool) {
        self.files.push(file);
        self.project.push(project);
    }

    /// One line on stderr per key a file's format does not document, and
    /// (when not [`strict`](Self::strict)) per file that could not be read.
    pub(crate) fn warn(&self) {
        for key in self.files.iter().flat_map(ConfigFile::unknown_keys) {
            eprintln!(
                "mcp: warning: {}",
                mcp_cli::terminal::line(&key.to_string())
            );
        }
        if !self.strict {
            for e in &self.errors {
                eprintln!("mcp: warning: {}", mcp_cli::terminal::line(e));
            }
        }
    }
}

/// Reads `--config PATH`, or with `None` the project files present in the
/// current directory (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`).
/// `Ok(None)`: no `--config` and no project file. A file that cannot be
/// read is a usage error naming it.
pub(crate) fn read(file: Option<&Path>) -> Result<Option<Read>, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::Usage(format!("cannot read the current directory: {e}")))?;
    let paths = match file {
        Some(f) => vec![f.to_path_buf()],
        // Project files only: a user-wide file (~/.cursor/mcp.json) is not
        // this directory's configuration.
        None => discover(&cwd, None),
    };
    if paths.is_empty() {
        return Ok(None);
    }
    let mut read = Read::new(true);
    for path in &paths {
        match ConfigFile::load(path) {
            // `--config` trusts the file it names.
            Ok(f) => read.push(f, file.is_none()),
            Err(e) => read.errors.push(e.to_string()),
        }
    }
    if !read.errors.is_empty() {
        return Err(Failure::Usage(read.errors.join("; ")));
    }
    Ok(Some(read))
}

/// The servers of `read`, once its project files are trusted
/// ([`crate::trust::require`]): each file's text, as read, is the text
/// resolved, `${input:...}` asked on the terminal. An error in a server
/// (unknown variable or `type`, ...) is a usage error naming the file, the
/// server and the field; without [`Read::strict`] it is a warning and the
/// server is left out.
pub(crate) fn resolve(read: Read) -> Result<Configured, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::Usage(format!("cannot read the current directory: {e}")))?;
    let untrusted: Vec<ConfigFile> = read
        .files
        .iter()
        .zip(&read.project)
        .filter(|(_, project)| **project)
        .map(|(f, _)| f.clone())
        .collect();
    crate::trust::require(&untrusted)?;
    let resolver = Resolver::new()
        .workspace_folder(&cwd)
        .inputs(ask_on_terminal);
    let list = resolve_all(&read.files, &resolver);
    let errors: Vec<String> = list
        .errors
        .iter()
        .map(|e| mcp_proto::error::chain(e).to_string())
        .collect();
    if read.strict && !errors.is_empty() {
        return Err(Failure::Usage(errors.join("; ")));
    }
    for e in &errors {
        eprintln!("mcp: warning: {}, left out", mcp_cli::terminal::line(e));
    }
    Ok(Configured {
        servers: list.servers,
        files: read.files.iter().map(|f| f.path().to_owned()).collect(),
        errors,
    })
}

/// Asks for `${input:ID}`: on the terminal (typing hidden for passwords)
/// when stdin is one, else one line read from stdin (scripts pipe answers
/// in). The question goes to stderr.
fn ask_on_terminal(input: &InputSpec) -> Result<String, InputError> {
    let question = input.description.as_deref().unwrap_or(&input.id);
    let default = input
        .default
        .as_deref()
        .filter(|_| !input.password)
        .map(|d| format!(" [{}]", mcp_cli::terminal::line(d)))
        .unwrap_or_default();
    // The question and default come from the config file: a cloned
    // repository's text, made safe like a server's.
    let prompt = format!("mcp: {}{default}: ", mcp_cli::terminal::line(question));
    let stdin = std::io::stdin();
    let hidden = input.password && stdin.is_terminal();
    let line = if hidden {
        read_hidden(&stdin, &prompt)
    } else {
        show(&prompt);
        let mut line = String::new();
        stdin.lock().read_line(&mut line).map(|_| line)
    };
    let line = line.map_err(|e| InputError::new(format!("cannot read the answer: {e}")))?;
    if line.is_empty() {
        return Err(InputError::new(
            "no answer (stdin closed); run mcp on a terminal or pipe the answer in",
        ));
    }
    let answer = line.trim_end_matches(['\r', '\n']);
    match (&input.default, answer.is_empty()) {
        (Some(d), true) => Ok(d.clone()),
        _ => Ok(answer.to_owned()),
    }
}

/// Writes the question to stderr.
fn show(prompt: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(prompt.as_bytes());
    let _ = err.flush();
}

/// Asks `prompt` and reads one line from the terminal with echo off
/// (restored after, whatever happens). Echo goes off before the question is
/// shown: an answer typed (or pasted) the moment the question appears is
/// never echoed.
#[cfg(unix)]
fn read_hidden(stdin: &std::io::Stdin, prompt: &str) -> std::io::Result<String> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let mut lock = stdin.lock();
    let before = tcgetattr(&lock).map_err(std::io::Error::from)?;
    let mut quiet = before.clone();
    // No echo, but the Enter still moves to the next line.
    quiet.local_flags.remove(LocalFlags::ECHO);
    quiet.local_flags.insert(LocalFlags::ECHONL);
    tcsetattr(&lock, SetArg::TCSANOW, &quiet).map_err(std::io::Error::from)?;
    show(prompt);
    let mut line = String::new();
    let read = lock.read_line(&mut line);
    let restored = tcsetattr(&lock, SetArg::TCSANOW, &before).map_err(std::io::Error::from);
    read?;
    restored?;
    Ok(line)
}

/// No termios: the answer is read as typed.
#[cfg(not(unix))]
fn read_hidden(stdin: &std::io::Stdin, prompt: &str) -> std::io::Result<String> {
    show(prompt);
    let mut line = String::new();
    stdin.lock().read_line(&mut line).map(|_| line)
}
