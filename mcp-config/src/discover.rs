//! Finding the files a user already has, and merging their servers.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::model::{ServerConfig, Source};
use crate::parse::ConfigFile;
use crate::resolve::Resolver;

/// The files [`discover`] looks for, most important first, relative to the
/// project folder (`~` is the home folder).
pub const DISCOVERED_FILES: &[&str] = &[
    ".mcp.json",
    ".vscode/mcp.json",
    ".cursor/mcp.json",
    "~/.cursor/mcp.json",
];

/// The configuration files present for `project_dir`, in precedence order
/// ([`DISCOVERED_FILES`]): the project's `.mcp.json` (Claude Code),
/// `.vscode/mcp.json`, `.cursor/mcp.json`, then `~/.cursor/mcp.json`
/// when `home` is given. Missing files are skipped, and a file reached
/// twice (the project is the home folder, or a symlink) is listed once;
/// nothing is read.
pub fn discover(project_dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    DISCOVERED_FILES
        .iter()
        .filter_map(|rel| match rel.strip_prefix("~/") {
            Some(rel) => home.map(|h| h.join(rel)),
            None => Some(project_dir.join(rel)),
        })
        .filter(|p| p.is_file())
        .filter(|p| {
            let real = p.canonicalize().unwrap_or_else(|_| p.clone());
            let new = !seen.contains(&real);
            seen.push(real);
            new
        })
        .collect()
}

/// The servers of several files merged into one list.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ServerList {
    /// One entry per name, sorted by name, from the most important file
    /// that has it.
    pub servers: Vec<ServerConfig>,
    /// Entries hidden by one of the same name in a more important file.
    pub shadowed: Vec<Shadowed>,
    /// Files that could not be read and servers that could not be resolved.
    /// A broken server still claims its name: a less important file's
    /// server of that name is shadowed, not used in its place.
    pub errors: Vec<ConfigError>,
}

/// A server left out because a more important file defines the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shadowed {
    /// The name both files use.
    pub name: String,
    /// The file whose entry is used.
    pub winner: Source,
    /// The file whose entry is ignored.
    pub loser: Source,
}

/// Loads and resolves `paths` (most important first, as [`discover`]
/// returns them) and merges them by server name: the first file that
/// defines a name wins, whole entry, fields are not mixed across files (as
/// Claude Code's scopes and Cursor's project-over-global do). Nothing
/// stops at the first error: every error is in [`ServerList::errors`].
pub fn load_all(paths: &[PathBuf], resolver: &Resolver) -> ServerList {
    merge(paths.iter().map(ConfigFile::load), resolver)
}

/// [`load_all`] for files already read (most important first): a host
/// that checked each file's trust ([`TrustStore`](crate::TrustStore))
/// resolves exactly the text it checked, without reading the files again.
pub fn resolve_all(files: &[ConfigFile], resolver: &Resolver) -> ServerList {
    merge(files.iter().map(Ok), resolver)
}

/// Merges files in precedence order; a file that could not be read is an
/// error in its place.
fn merge<F: Borrow<ConfigFile>>(
    files: impl Iterator<Item = Result<F, ConfigError>>,
    resolver: &Resolver,
) -> ServerList {
    let mut list = ServerList::default();
    let mut owner: HashMap<String, Source> = HashMap::new();
    for file in files {
        let file = match file {
            Ok(f) => f,
            Err(e) => {
                list.errors.push(e);
                continue;
            }
        };
        let file = file.borrow();
        for name in file.server_names() {
            if let Some(winner) = owner.get(name) {
                list.shadowed.push(Shadowed {
                    name: name.to_owned(),
                    winner: winner.clone(),
                    loser: file.source().clone(),
                });
                continue;
            }
            owner.insert(name.to_owned(), file.source().clone());
            match file.resolve_server(name, resolver) {
                Some(Ok(server)) => list.servers.push(server),
                Some(Err(e)) => list.errors.push(e),
                None => {}
            }
        }
    }
    list.servers.sort_by(|a, b| a.name.cmp(&b.name));
    list
}
