//! `REFERENCE.md` against `--help`: every command's usage line is a
//! heading there, every option `--help` prints is there (a command's own
//! options in that command's section), every exit status the help lists is
//! in its table, and the reference names no command or option the binary
//! does not have. A flag added without its entry fails here.
#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};

const REFERENCE: &str = include_str!("../REFERENCE.md");

fn help(path: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(path)
        .arg("--help")
        .stdin(Stdio::null())
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(out.status.success(), "mcp {path:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// What one command's `--help` says.
struct Help {
    /// The usage line without `Usage: ` and ` [OPTIONS]`: the heading.
    usage: String,
    /// The subcommands' names.
    commands: Vec<String>,
    /// Every option, as `--long` and `-s`.
    options: BTreeSet<String>,
}

fn parse(text: &str) -> Help {
    let usage = text
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .unwrap()
        .replace(" [OPTIONS]", "");
    let mut commands = Vec::new();
    let mut options = BTreeSet::new();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        // Entries are indented 2 (or 6: a long option without a short
        // one); their wrapped descriptions far more, and prose (the
        // text after the options) not at all.
        if !(2..=6).contains(&indent) {
            continue;
        }
        let entry = line.trim_start();
        if section == "Commands:" && indent == 2 {
            commands.push(entry.split_whitespace().next().unwrap().to_owned());
        } else if entry.starts_with('-') {
            for word in entry.split_whitespace() {
                let flag = word.trim_end_matches(',').trim_end_matches("...");
                if !flag.starts_with('-') {
                    break;
                }
                options.insert(flag.to_owned());
            }
        }
    }
    Help {
        usage,
        commands,
        options,
    }
}

/// Every command path (`[]`, `["call"]`, `["tasks", "list"]`, ...) with
/// its help.
fn every_command() -> BTreeMap<Vec<String>, Help> {
    let mut all = BTreeMap::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let h = parse(&help(&args));
        for c in &h.commands {
            let mut sub = path.clone();
            sub.push(c.clone());
            todo.push(sub);
        }
        all.insert(path, h);
    }
    all
}

/// The reference's sections: heading (the text between its backticks) →
/// body.
fn sections() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in REFERENCE.lines() {
        if line.starts_with("#") {
            if let Some((h, b)) = current.take() {
                out.insert(h, b);
            }
            if let Some(h) = line.strip_prefix("### `").and_then(|h| h.strip_suffix('`')) {
                current = Some((h.to_owned(), String::new()));
            }
            continue;
        }
        if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    if let Some((h, b)) = current {
        out.insert(h, b);
    }
    out
}

/// The options a text names in backticks: `` `--json` ``, `` `-H` ``.
fn named_options(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("`-") {
        let rest = &text[i + 1..];
        let flag: String = rest
            .chars()
            .take_while(|&c| c.is_ascii_alphanumeric() || c == '-')
            .collect();
        if flag.trim_start_matches('-').is_empty() {
            continue; // `--` alone: the end of options
        }
        out.insert(flag);
    }
    out
}

#[test]
fn every_command_and_option_is_in_the_reference_and_nothing_else() {
    let commands = every_command();
    let sections = sections();
    let global = &commands[&Vec::new()].options;
    let mut problems = Vec::new();
    let mut known = BTreeSet::new();
    for (path, h) in &commands {
        known.extend(h.options.iter().cloned());
        if path.is_empty() {
            continue;
        }
        let Some(body) = sections.get(&h.usage) else {
            problems.push(format!("no section `### `{}`` (its usage line)", h.usage));
            continue;
        };
        let documented = named_options(body);
        for o in h.options.difference(global) {
            if !documented.contains(o) {
                problems.push(format!("`{o}` of `{}` is not in its section", h.usage));
            }
        }
    }
    let everywhere = named_options(REFERENCE);
    for o in global {
        if !everywhere.contains(o) {
            problems.push(format!("the option `{o}` is not in the reference"));
        }
    }
    for o in everywhere.difference(&known) {
        problems.push(format!("the reference names `{o}`, which no --help lists"));
    }
    let usages: BTreeSet<&str> = commands.values().map(|h| h.usage.as_str()).collect();
    for heading in sections.keys() {
        if !usages.contains(heading.as_str()) {
            problems.push(format!(
                "the section `{heading}` is no command's usage line"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "REFERENCE.md is out of date:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_exit_status_is_in_the_reference() {
    let top = help(&[]);
    let paragraph: String = top
        .split("\n\n")
        .find(|p| p.starts_with("Exit status:"))
        .unwrap()
        .replace(['\n', ','], " ");
    let listed: BTreeSet<u32> = paragraph
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let table = REFERENCE.split("## Exit status").nth(1).unwrap();
    let table = table.split("\n## ").next().unwrap();
    let documented: BTreeSet<u32> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next()?.parse().ok())
        .collect();
    assert!(!listed.is_empty());
    assert_eq!(
        listed, documented,
        "--help's exit statuses vs REFERENCE.md's table"
    );
}
