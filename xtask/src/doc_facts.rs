//! Facts the docs state that a program can check (part of `cargo xtask
//! docs`): a sentence that says a file of the repository does something "in
//! N lines" is checked against the file (at most N lines), and every
//! feature a dependency line asks of one of our packages
//! (`mcpio-proto = { version = "0.1", features = ["framed"] }`, and a
//! `["native-roots"]` later on the same line) must be a feature of that
//! package. Read: every tracked `*.md` file and the `//!`/`///` comments of
//! every tracked `*.rs` file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::Command;

use crate::{Result, root};

/// Checks every doc (see the module docs).
pub(crate) fn check() -> Result {
    let files = tracked()?;
    let features = package_features()?;
    let mut problems = Vec::new();
    for f in &files {
        let Ok(text) = fs::read_to_string(root().join(f)) else {
            continue;
        };
        let doc = if f.ends_with(".rs") {
            doc_comments(&text)
        } else {
            text
        };
        for (n, line) in doc.lines().enumerate() {
            let at = format!("{f}:{}", n + 1);
            problems.extend(line_counts(line, &at));
            problems.extend(asked_features(line, &features, &at));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the docs say what is not so:\n  {}",
            problems.join("\n  ")
        ))
    }
}

fn tracked() -> Result<Vec<String>> {
    let out = Command::new("git")
        .args(["ls-files", "*.md", "*.rs"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// The `//!` and `///` comment lines of a source file, the rest blank (so
/// line numbers stay the file's).
fn doc_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            t.strip_prefix("//!")
                .or_else(|| t.strip_prefix("///"))
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// "`path/to/file.rs` … in N lines": the file has at most N lines.
fn line_counts(line: &str, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, _) in line.match_indices(" in ") {
        let rest = &line[i + 4..];
        let Some((n, tail)) = rest.split_once(' ') else {
            continue;
        };
        let (Ok(claimed), true) = (n.parse::<usize>(), tail.starts_with("lines")) else {
            continue;
        };
        // The last backticked path before the number.
        let Some(path) = line[..i]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|p| p.contains('/') && p.contains('.'))
            .last()
        else {
            continue;
        };
        match fs::read_to_string(root().join(path)) {
            Ok(text) if text.lines().count() > claimed => problems.push(format!(
                "{at}: `{path}` is said to be in {claimed} lines, but it has {}",
                text.lines().count()
            )),
            Ok(_) => {}
            Err(_) => problems.push(format!(
                "{at}: `{path}` (said to be in {claimed} lines) is not a file"
            )),
        }
    }
    problems
}

/// Every feature each package of the workspace has, by package name and by
/// its directory's (dependency key's) name.
fn package_features() -> Result<BTreeMap<String, BTreeSet<String>>> {
    let meta = crate::workspace_metadata()?;
    let mut all = BTreeMap::new();
    for p in meta
        .get("packages")
        .and_then(crate::json::Json::as_array)
        .unwrap_or(&[])
    {
        let name = p
            .get("name")
            .and_then(crate::json::Json::as_str)
            .unwrap_or_default();
        let features: BTreeSet<String> = match p.get("features") {
            Some(crate::json::Json::Object(m)) => m.keys().cloned().collect(),
            _ => BTreeSet::new(),
        };
        if let Some(dir) = name.strip_prefix("mcpio-") {
            all.insert(format!("mcp-{dir}"), features.clone());
        }
        all.insert(name.to_owned(), features);
    }
    Ok(all)
}

/// `NAME = …` (a dependency line, or a table cell naming one), then
/// every bracketed list of quoted names up to the next package named so on
/// the line: each a feature of package NAME.
fn asked_features(
    line: &str,
    features: &BTreeMap<String, BTreeSet<String>>,
    at: &str,
) -> Vec<String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut named: Vec<(usize, &str)> = Vec::new();
    for name in features.keys() {
        for (i, _) in line.match_indices(&format!("{name} = ")) {
            if !line[..i].ends_with(is_name) {
                named.push((i, name));
            }
        }
    }
    named.sort_unstable();
    let mut problems = Vec::new();
    for (k, &(i, name)) in named.iter().enumerate() {
        let end = named.get(k + 1).map_or(line.len(), |n| n.0);
        for list in line[i..end].split('[').skip(1) {
            let Some((inside, _)) = list.split_once(']') else {
                continue;
            };
            let asked: Vec<&str> = inside.split(',').map(str::trim).collect();
            if !asked
                .iter()
                .all(|a| a.len() > 2 && a.starts_with('"') && a.ends_with('"'))
            {
                continue; // not a list of feature names
            }
            for a in asked.iter().map(|a| a.trim_matches('"')) {
                if !features[name].contains(a) {
                    problems.push(format!("{at}: `{name}` has no feature {a:?}"));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_longer_than_the_docs_say_is_found() {
        let said = |n: usize| {
            format!("`examples/src/unix_socket.rs` in the repository is a transport in {n} lines")
        };
        assert_eq!(
            line_counts(&said(40), "x").len(),
            1,
            "{:?}",
            line_counts(&said(40), "x")
        );
        assert!(line_counts(&said(400), "x").is_empty());
        assert_eq!(line_counts("`no/such/file.rs` in 3 lines", "x").len(), 1);
    }

    #[test]
    fn a_feature_the_package_lacks_is_found() {
        let mut features = BTreeMap::new();
        features.insert(
            "mcpio-proto".to_owned(),
            BTreeSet::from(["framed".to_owned()]),
        );
        features.insert(
            "mcpio-transport-http".to_owned(),
            BTreeSet::from(["http2".to_owned()]),
        );
        let line = r#"`mcpio-proto = { version = "0.1", features = ["framed"] }` and `mcpio-transport-http = "0.1"` (`features = ["http2"]` or `["native-roots"]`)"#;
        let problems = asked_features(line, &features, "x");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("native-roots"), "{problems:?}");
        assert!(asked_features("[`mcp_proto`](mcp-proto) [1, 2]", &features, "x").is_empty());
    }
}
