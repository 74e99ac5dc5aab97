//! `--from`: which configurations the servers come from. `project` is the
//! current directory's files (`.mcp.json`, `.vscode/mcp.json`,
//! `.cursor/mcp.json`, the default without `--from`); a host's name is the
//! file that host keeps for its user (mcp-config's `load_hosts`); `all`
//! is `project` and every host. The order given is the precedence: the
//! first source to define a server name wins.

use std::path::PathBuf;

use mcp_config::{ConfigFile, Host, Places, Scope, discover, load_hosts};

use crate::config::Read;
use crate::failure::Failure;

/// One source of servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The project files in the current directory.
    Project,
    /// A host's own file.
    Host(Host),
}

/// `--from`'s value: the sources in order (a type of its own, so clap
/// takes the list as one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sources(pub(crate) Vec<Origin>);

/// What `--from` accepts, for its help and errors.
pub(crate) fn names() -> String {
    let hosts: Vec<&str> = Host::ALL.iter().map(|h| h.id()).collect();
    format!("project, {}, all", hosts.join(", "))
}

/// `--from claude-code,codex`: the sources in order, each once; `all` is
/// `project` and every host in [`Host::ALL`]'s order.
pub(crate) fn parse(s: &str) -> Result<Sources, String> {
    let mut origins = Vec::new();
    for name in s.split(',').map(str::trim) {
        let more: Vec<Origin> = match name.to_ascii_lowercase().as_str() {
            "all" => std::iter::once(Origin::Project)
                .chain(Host::ALL.iter().copied().map(Origin::Host))
                .collect(),
            "project" => vec![Origin::Project],
            other => match Host::from_id(other) {
                Some(h) => vec![Origin::Host(h)],
                None => {
                    return Err(format!("unknown source {name:?} (known: {})", names()));
                }
            },
        };
        for o in more {
            if !origins.contains(&o) {
                origins.push(o);
            }
        }
    }
    Ok(Sources(origins))
}

/// Reads the files of `origins` in order: nothing is started or asked.
/// A file that cannot be read is a warning (the others still count); a
/// host with no file is noted in [`Read::absent`].
pub(crate) fn read(origins: &[Origin]) -> Result<Read, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::Usage(format!("cannot read the current directory: {e}")))?;
    let places = Places::from_env().map(|p| p.project(&cwd));
    let mut read = Read::new(false);
    for origin in origins {
        match origin {
            Origin::Project => {
                for path in discover(&cwd, None) {
                    match ConfigFile::load(&path) {
                        Ok(f) => read.push(f, true),
                        Err(e) => read.errors.push(e.to_string()),
                    }
                }
            }
            Origin::Host(host) => {
                let Some(places) = &places else {
                    read.errors.push(format!(
                        "{}: no home folder (HOME is not set), so its file cannot be found",
                        host.id()
                    ));
                    continue;
                };
                let found = load_hosts(&[*host], places);
                for f in found.files {
                    read.push(f.file, f.scope == Scope::Project);
                }
                read.errors.extend(
                    found
                        .errors
                        .iter()
                        .map(|e| mcp_proto::error::chain(e).to_string()),
                );
                read.absent.extend(found.absent);
            }
        }
    }
    Ok(read)
}

/// The hosts with no file, as `codex (~/.codex/config.toml)`.
pub(crate) fn absent(list: &[(Host, PathBuf)]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|(h, p)| format!("{} ({})", h.id(), crate::definitions::home_relative(p)))
        .collect();
    items.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_lists_sources_in_order_each_once() {
        assert_eq!(
            parse("codex, claude-code,codex").unwrap().0,
            [Origin::Host(Host::Codex), Origin::Host(Host::ClaudeCode)]
        );
        let all = parse("all").unwrap().0;
        assert_eq!(all.len(), 1 + Host::ALL.len());
        assert_eq!(all[0], Origin::Project);
        assert_eq!(parse("zed,all").unwrap().0[0], Origin::Host(Host::Zed));
        let e = parse("codex,emacs").unwrap_err();
        assert!(
            e.contains("\"emacs\"") && e.contains("claude-desktop"),
            "{e}"
        );
    }
}
