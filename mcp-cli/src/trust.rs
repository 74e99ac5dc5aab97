//! Project config files start nothing until the user trusted them.
//!
//! A `.mcp.json` (or `.vscode/mcp.json`, `.cursor/mcp.json`) found in the
//! current directory was written by whoever wrote the project. Before any
//! of its servers starts, the user trusts that exact file: on a terminal
//! `mcp` shows what it would run ([`mcp_config::Summary`]) and asks;
//! `mcp trust [FILE]...` trusts without asking; the decision is kept by
//! canonical path and content hash in the trust store ([`store_path`]), so
//! an edited file asks again. Without a terminal (stdin not one) an
//! untrusted file starts nothing and `mcp` says how to trust it. Files in
//! the home folder are the user's own, and `--config FILE` trusts the file
//! it names.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use mcp_config::{ConfigFile, Scope, TrustStore, discover, scope_of};

use crate::failure::Failure;

/// Where decisions are kept: `$MCP_TRUST_FILE`, else
/// `$XDG_CONFIG_HOME/mcp/trusted-configs.json`, else
/// `$HOME/.config/mcp/trusted-configs.json`.
pub(crate) fn store_path() -> Option<PathBuf> {
    match std::env::var_os("MCP_TRUST_FILE").filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => TrustStore::default_path("mcp"),
    }
}

fn home() -> Option<PathBuf> {
    ["HOME", "USERPROFILE"]
        .iter()
        .find_map(|k| std::env::var_os(k).filter(|h| !h.is_empty()))
        .map(PathBuf::from)
}

/// The path as the user would type it in a shell from the current
/// directory: bare when plain, else single-quoted (POSIX), and with any
/// control character escaped (then it is not shell input, but nothing in
/// it reaches the terminal raw).
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let rel = cwd
        .as_deref()
        .and_then(|c| path.strip_prefix(c).ok())
        .unwrap_or(path);
    let text = rel.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./~+@%,:=".contains(c))
    {
        text
    } else if text.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
        format!("'{}'", text.replace('\'', r"'\''"))
    } else {
        format!("{text:?}")
    }
}

/// The file as [`shown`], and the part of it for Claude Code's servers of
/// one project (`~/.claude.json projects["/src/app"]`).
fn described(file: &ConfigFile) -> String {
    match &file.source().section {
        Some(section) => format!(
            "{} {}",
            shown(file.path()),
            mcp_cli::terminal::line(section)
        ),
        None => shown(file.path()),
    }
}

/// A trust store error with its causes (its own text names only its part).
fn store_failure(e: mcp_config::TrustError) -> Failure {
    let mut message = format!("trust store {e}");
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        message.push_str(&format!(": {c}"));
        cause = c.source();
    }
    Failure::Usage(message)
}

/// Lets the discovered project `files` run, or says why not: every file
/// that is not the user's own must be trusted in the store, or be trusted
/// now by the user on the terminal. Without a terminal, an untrusted file
/// is a usage error naming the command that trusts it (its summary on
/// stderr first).
pub(crate) fn require(files: &[ConfigFile]) -> Result<(), Failure> {
    let home = home();
    let store = store_path().map(TrustStore::new);
    let mut untrusted = Vec::new();
    for file in files {
        if scope_of(file.path(), home.as_deref()) == Scope::User {
            continue;
        }
        let trusted = match &store {
            Some(s) => s.is_trusted(file).map_err(store_failure)?,
            None => false,
        };
        if !trusted {
            untrusted.push(file);
        }
    }
    if untrusted.is_empty() {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut err = std::io::stderr().lock();
        for file in &untrusted {
            let _ = write!(err, "{}", file.summary());
        }
        let names: Vec<String> = untrusted.iter().map(|f| described(f)).collect();
        let (it, them, once) = if names.len() == 1 {
            ("it", "is a project config file", names[0].clone())
        } else {
            ("them", "are project config files", "FILE".to_owned())
        };
        // A part of a file (Claude Code's servers of this project) is
        // trusted by `mcp trust` run here, and cannot be named as a file.
        if untrusted.iter().any(|f| f.source().section.is_some()) {
            let changes = if names.len() == 1 {
                "changes"
            } else {
                "change"
            };
            return Err(Failure::Usage(format!(
                "{} {them} not trusted yet, so no server was started: review what {it} would run (above), then trust {it} with `mcp trust` run in this directory (remembered until {it} {changes})",
                names.join(", "),
            )));
        }
        return Err(Failure::Usage(format!(
            "{} {them} not trusted yet, so no server was started: review what {it} would run (above), then trust {it} with `mcp trust {}` (remembered until the file changes), or run once with `--config {once}`",
            names.join(", "),
            names.join(" "),
        )));
    }
    for file in untrusted {
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "mcp: {} is a project config file: its servers run on this machine with your rights.\n{}mcp: trust this file and start its servers? [y/N] ",
            described(file),
            file.summary()
        );
        let _ = err.flush();
        drop(err);
        let mut answer = String::new();
        let read = stdin.lock().read_line(&mut answer);
        let yes = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
        if read.is_err() || !yes {
            return Err(Failure::Usage(format!(
                "{} not trusted, so no server was started",
                described(file)
            )));
        }
        match &store {
            Some(s) => {
                s.trust(file).map_err(store_failure)?;
                eprintln!(
                    "mcp: trusted {} until it changes (`mcp trust --revoke {0}` forgets it)",
                    shown(file.path())
                );
            }
            None => eprintln!(
                "mcp: trusted {} for this run only (no HOME or XDG_CONFIG_HOME to remember it in)",
                shown(file.path())
            ),
        }
    }
    Ok(())
}

/// `mcp trust [--revoke] [FILE]...`: trusts (or forgets) the files named,
/// or the project files of the current directory, showing what each runs.
pub(crate) fn command(files: &[PathBuf], revoke: bool) -> Result<(), Failure> {
    let store = store_path().map(TrustStore::new).ok_or_else(|| {
        Failure::Usage(
            "nowhere to keep trust decisions: set HOME, XDG_CONFIG_HOME or MCP_TRUST_FILE".into(),
        )
    })?;
    // Claude Code's servers kept for this project in ~/.claude.json (its
    // local scope) are this directory's too, when no file is named.
    let mut sections = Vec::new();
    let files = if files.is_empty() {
        let cwd = std::env::current_dir()
            .map_err(|e| Failure::Usage(format!("cannot read the current directory: {e}")))?;
        if let Some(places) = mcp_config::Places::from_env() {
            let found =
                mcp_config::load_hosts(&[mcp_config::Host::ClaudeCode], &places.project(&cwd));
            sections.extend(
                found
                    .files
                    .into_iter()
                    .filter(|f| f.scope == Scope::Project)
                    .map(|f| f.file),
            );
        }
        let found = discover(&cwd, None);
        if found.is_empty() && sections.is_empty() {
            return Err(Failure::Usage(
                "no .mcp.json, .vscode/mcp.json or .cursor/mcp.json here: name the file, `mcp trust FILE`"
                    .into(),
            ));
        }
        found
    } else {
        files.to_vec()
    };
    let mut out = std::io::stdout().lock();
    for path in &files {
        if revoke {
            let had = store.revoke(path).map_err(store_failure)?;
            let _ = writeln!(
                out,
                "{} {}",
                if had { "forgot" } else { "was not trusted:" },
                shown(path)
            );
            continue;
        }
        let file = ConfigFile::load(path).map_err(|e| Failure::Usage(e.to_string()))?;
        trust_one(&store, &file, &mut out)?;
    }
    for file in &sections {
        if revoke {
            let had = store.forget(file).map_err(store_failure)?;
            let _ = writeln!(
                out,
                "{} {}",
                if had { "forgot" } else { "was not trusted:" },
                described(file)
            );
            continue;
        }
        trust_one(&store, file, &mut out)?;
    }
    Ok(())
}

/// Trusts `file`, printing what it runs.
fn trust_one(store: &TrustStore, file: &ConfigFile, out: &mut impl Write) -> Result<(), Failure> {
    store.trust(file).map_err(store_failure)?;
    let _ = write!(out, "{}", file.summary());
    let _ = writeln!(
        out,
        "trusted {} until it changes (kept in {})",
        described(file),
        shown(store.path())
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_shown_as_shell_words() {
        let s = |p: &str| shown(Path::new(p));
        assert_eq!(s(".mcp.json"), ".mcp.json");
        assert_eq!(s("my dir/.mcp.json"), "'my dir/.mcp.json'");
        assert_eq!(
            s("x$(touch pwned)/.mcp.json"),
            "'x$(touch pwned)/.mcp.json'"
        );
        assert_eq!(s("it's/.mcp.json"), r"'it'\''s/.mcp.json'");
        assert_eq!(s("a\u{1b}[2Kb/.mcp.json"), r#""a\u{1b}[2Kb/.mcp.json""#);
    }
}
