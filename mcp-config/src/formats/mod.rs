//! The hosts' formats beyond the four JSON ones `parse.rs` reads itself
//! (Codex, Gemini CLI, Windsurf, Zed, Goose), each turned into the same
//! [`RawServer`], and the keys every format documents, so that a key no
//! format knows is reported ([`UnknownKey`]) instead of silently dropped.
//!
//! Each module cites the host's documentation it follows.

use std::fmt;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::entry::{RawServer, ShapeProblem};
use crate::model::Format;

mod codex;
mod gemini;
mod goose;
mod windsurf;
mod zed;

/// A key of a server entry that its format does not document: the host
/// ignores it or rejects it, and so it is not read here. Reported by
/// [`ConfigFile::unknown_keys`](crate::ConfigFile::unknown_keys), so a
/// misspelt `comand` or `evn` is seen.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownKey {
    /// The file.
    pub path: PathBuf,
    /// The server whose entry has the key.
    pub server: String,
    /// The key as written.
    pub key: String,
}

/// `~/.codex/config.toml: server "x": unknown key "comand" (ignored)`.
/// The server and key are quoted and escaped, so nothing in them reaches a
/// terminal raw.
impl fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: server {:?}: unknown key {:?} (ignored)",
            self.path.display(),
            self.server,
            self.key
        )
    }
}

/// Keys this crate reads in every JSON format beyond the host's own:
/// `disabled`/`enabled` (Cline, Roo, Windsurf), `includeTools`/`excludeTools`
/// (Gemini CLI), `cwd`, and SEP-2633's `title` and `description`.
const SHARED: &[&str] = &[
    "disabled",
    "enabled",
    "includeTools",
    "excludeTools",
    "cwd",
    "title",
    "description",
];

/// Keys read in every format: VS Code's sandbox keys (a file that asks for
/// a sandbox gets one or fails, never silently none) and this crate's own
/// `toolPolicy`.
const EVERYWHERE: &[&str] = &["sandboxEnabled", "sandbox", "toolPolicy"];

/// The keys `format` documents for a server entry, beyond [`SHARED`] where
/// that applies. Documented keys this crate does not act on (a host's
/// timeouts, Gemini's `trust`) are listed too: they are known, not lost.
fn documented(format: Format) -> (&'static [&'static str], bool) {
    match format {
        // Claude Code's MCP page (`type`, `command`, `args`, `env`, `url`,
        // `headers`, `headersHelper`, `oauth`); Claude Desktop's files are
        // the same shape.
        Format::ClaudeCode => (
            &[
                "type",
                "command",
                "args",
                "env",
                "url",
                "headers",
                "headersHelper",
                "oauth",
            ],
            true,
        ),
        // VS Code's "MCP configuration reference".
        Format::VsCode => (
            &[
                "type",
                "command",
                "args",
                "env",
                "envFile",
                "url",
                "headers",
                "dev",
                "sandboxEnabled",
                "sandbox",
                "gallery",
                "version",
            ],
            true,
        ),
        // Cursor's MCP page.
        Format::Cursor => (
            &[
                "type", "command", "args", "env", "envFile", "url", "headers", "auth",
            ],
            true,
        ),
        // SEP-2633.
        Format::Standard => (
            &[
                "type", "command", "args", "env", "url", "headers", "oauth", "timeout",
            ],
            true,
        ),
        Format::Codex => (codex::KEYS, false),
        Format::Gemini => (gemini::KEYS, true),
        Format::Windsurf => (windsurf::KEYS, true),
        Format::Zed => (zed::KEYS, false),
        Format::Goose => (goose::KEYS, false),
    }
}

/// The keys of `entry` that `format` does not document, in the entry's
/// order.
pub(crate) fn unknown_keys(format: Format, entry: &Map<String, Value>) -> Vec<String> {
    let (keys, shared) = documented(format);
    entry
        .keys()
        .filter(|k| {
            let k = k.as_str();
            let known =
                keys.contains(&k) || EVERYWHERE.contains(&k) || (shared && SHARED.contains(&k));
            !known
        })
        .cloned()
        .collect()
}

/// Reads one server of a format this module owns; `None` for the four
/// formats `parse.rs` reads itself.
pub(crate) fn parse_server(
    format: Format,
    entry: &Map<String, Value>,
) -> Option<Result<RawServer, ShapeProblem>> {
    Some(match format {
        Format::Codex => codex::parse(entry),
        Format::Gemini => gemini::parse(entry),
        Format::Windsurf => windsurf::parse(entry),
        Format::Zed => zed::parse(entry),
        Format::Goose => goose::parse(entry),
        Format::ClaudeCode | Format::VsCode | Format::Cursor | Format::Standard => return None,
    })
}

/// Whether unknown keys of this entry are worth reporting: not for an
/// entry that is not a server this crate can start anyway (a Goose
/// built-in, a Zed extension's server), whose keys belong to its host.
pub(crate) fn checks_keys(format: Format, entry: &Map<String, Value>) -> bool {
    match format {
        Format::Goose => goose::is_server(entry),
        Format::Zed => zed::is_server(entry),
        _ => true,
    }
}

/// Changes the whole file makes to its entries: Gemini CLI's top-level
/// `mcp.allowed` / `mcp.excluded` lists disable servers by name.
pub(crate) fn apply_file_settings(
    format: Format,
    root: &Map<String, Value>,
    name: &str,
    server: &mut RawServer,
) {
    if format == Format::Gemini {
        gemini::apply_lists(root, name, server);
    }
}
