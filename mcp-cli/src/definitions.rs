//! `mcp servers` without starting anything (`--no-start`, and the default
//! with `--from`): each server as its file defines it, with where it comes
//! from, in precedence order. Nothing is expanded (no variable is read, no
//! `${input:...}` asked) and nothing is trusted or started: what is shown
//! is the text of the files, made safe for a terminal.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use mcp_cli::terminal::line;
use mcp_config::{ConfigFile, Launch, Source};
use serde_json::{Value, json};

use crate::config::Read;
use crate::{out, out_json};

/// One server entry as written.
struct Definition<'f> {
    name: &'f str,
    source: &'f Source,
    launch: Launch,
    disabled: bool,
    /// Its file is a project's (trusted before it starts).
    project: bool,
    /// Why it cannot start, as written.
    error: Option<String>,
    /// The source of the entry of the same name that wins over this one.
    shadowed_by: Option<&'f Source>,
}

fn definitions(read: &Read) -> Vec<Definition<'_>> {
    let mut winners: HashMap<&str, &Source> = HashMap::new();
    let mut list = Vec::new();
    for (file, &project) in read.files.iter().zip(&read.project) {
        for server in file.summary().servers {
            let name = file
                .server_names()
                .find(|n| *n == server.name)
                .unwrap_or_default();
            let shadowed_by = winners.get(name).copied();
            winners.entry(name).or_insert(file.source());
            list.push(Definition {
                name,
                source: file.source(),
                error: entry_error(file, name),
                launch: server.launch,
                disabled: server.disabled,
                project,
                shadowed_by,
            });
        }
    }
    list
}

/// Why the entry cannot start, without the file and server its line
/// already shows.
fn entry_error(file: &ConfigFile, name: &str) -> Option<String> {
    let text = mcp_proto::error::chain(&file.entry_error(name)?).to_string();
    let prefix = format!("{}: server {name:?}", file.path().display());
    Some(match text.strip_prefix(&prefix) {
        Some(rest) => rest.trim_start_matches([':', ',', ' ']).to_owned(),
        None => text,
    })
}

/// `path` with the home folder written `~`.
pub(crate) fn home_relative(path: &Path) -> String {
    let home = ["HOME", "USERPROFILE"]
        .iter()
        .find_map(|k| std::env::var_os(k).filter(|h| !h.is_empty()));
    match home.and_then(|h| path.strip_prefix(h).ok().map(Path::to_owned)) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// `codex ~/.codex/config.toml`, `claude-code ~/.claude.json projects["/x"]`.
fn source_text(s: &Source) -> String {
    let mut text = String::new();
    if let Some(h) = s.host {
        text.push_str(h.id());
        text.push(' ');
    }
    text.push_str(&home_relative(&s.path));
    if let Some(section) = &s.section {
        text.push(' ');
        text.push_str(section);
    }
    line(&text)
}

/// A word of a command line as a shell would need it.
fn word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,~${}".contains(c));
    if plain {
        line(w)
    } else {
        line(&format!("'{}'", w.replace('\'', r"'\''")))
    }
}

fn transport(launch: &Launch) -> &'static str {
    match launch {
        Launch::Stdio { .. } => "stdio",
        Launch::Remote { sse: true, .. } => "sse",
        Launch::Remote { .. } => "http",
        _ => "-",
    }
}

/// Prints the definitions of `read` (human or `--json`); with `name`
/// (`--server`), only the entries of that name.
pub(crate) fn print(read: &Read, name: Option<&str>, json: bool) {
    let mut list = definitions(read);
    if let Some(name) = name {
        list.retain(|d| d.name == name);
    }
    if json {
        let items: Vec<Value> = list.iter().map(to_json).collect();
        let text = serde_json::to_string(&items).unwrap_or_else(|_| "[]".into());
        out_json(|w| mcp_cli::raw_json::write_pretty(w, &text));
        return;
    }
    if list.is_empty() {
        let mut text = "(no servers".to_owned();
        if !read.absent.is_empty() {
            let _ = write!(text, ": no file for {}", crate::hosts::absent(&read.absent));
        }
        text.push_str(")\n");
        out(&text);
        return;
    }
    let names: Vec<String> = list.iter().map(|d| line(d.name)).collect();
    let sources: Vec<String> = list.iter().map(|d| source_text(d.source)).collect();
    let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let source_width = sources.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let mut text = String::new();
    for ((d, name), source) in list.iter().zip(&names).zip(&sources) {
        let what = match (&d.error, &d.launch) {
            (Some(e), _) => format!("cannot start: {}", line(e)),
            (None, Launch::Stdio { command, args, .. }) => std::iter::once(command)
                .chain(args)
                .map(|w| word(w))
                .collect::<Vec<_>>()
                .join(" "),
            (None, Launch::Remote { url, .. }) => line(url),
            (None, _) => "cannot start".into(),
        };
        let mut notes = Vec::new();
        if d.disabled {
            notes.push("disabled".to_owned());
        }
        if let Some(winner) = d.shadowed_by {
            notes.push(format!("shadowed by {}", source_text(winner)));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join("; "))
        };
        let _ = writeln!(
            text,
            "{name:<name_width$}  {:<5}  {source:<source_width$}  {what}{notes}",
            transport(&d.launch)
        );
    }
    out(&text);
}

fn to_json(d: &Definition<'_>) -> Value {
    let (command, args, url) = match &d.launch {
        Launch::Stdio { command, args, .. } => (json!(command), json!(args), Value::Null),
        Launch::Remote { url, .. } => (Value::Null, Value::Null, json!(url)),
        _ => (Value::Null, Value::Null, Value::Null),
    };
    let transport = match transport(&d.launch) {
        "-" => Value::Null,
        t => json!(t),
    };
    json!({
        "name": d.name,
        "transport": transport,
        "command": command,
        "args": args,
        "url": url,
        "host": d.source.host.map(|h| h.id()),
        "source": d.source.path.display().to_string(),
        "section": d.source.section,
        "project": d.project,
        "disabled": d.disabled,
        "shadowedBy": d.shadowed_by.map(ToString::to_string),
        "error": d.error,
    })
}
