//! Words that mean the same thing to someone looking for a tool.
//!
//! Each group is a concept: the verbs and nouns tools and their users say
//! for one idea. A query word finds the tools that say any word of its
//! groups (at [`SYNONYM_WEIGHT`] of a literal match). Groups hold words as
//! people write them; they are stemmed when the table is built, so each
//! group needs one form of a word only. A phrase (`roll back`) is matched
//! as two adjacent query words.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::terms;

/// How much a match through a synonym counts, beside a literal one.
pub(crate) const SYNONYM_WEIGHT: f32 = 0.7;

/// The concept groups. One idea per line; a word may be in several.
const GROUPS: &[&[&str]] = &[
    // Making and unmaking.
    &[
        "create", "make", "add", "new", "insert", "register", "generate", "open",
    ],
    &[
        "delete", "remove", "erase", "drop", "destroy", "purge", "discard", "trash", "rm", "unlink",
    ],
    &[
        "update", "edit", "modify", "change", "patch", "set", "alter", "rename",
    ],
    &[
        "list",
        "show",
        "enumerate",
        "browse",
        "index",
        "ls",
        "every",
    ],
    &[
        "fetch", "read", "retrieve", "show", "view", "load", "open", "describe", "inspect",
        "detail",
    ],
    &[
        "search", "find", "query", "lookup", "look", "locate", "grep", "filter", "match",
    ],
    &[
        "undo",
        "revert",
        "rollback",
        "roll back",
        "restore",
        "reset",
    ],
    &["unstage", "reset", "restore"],
    &[
        "free",
        "busy",
        "availability",
        "available",
        "freebusy",
        "schedule",
        "slot",
    ],
    &["deploy", "release", "rollout", "ship", "publish", "launch"],
    &[
        "run", "execute", "exec", "invoke", "call", "launch", "start", "trigger",
    ],
    &[
        "stop",
        "halt",
        "kill",
        "terminate",
        "cancel",
        "abort",
        "end",
    ],
    &["send", "post", "message", "notify", "dm", "chat"],
    &["write", "save", "store", "put", "persist"],
    &["move", "mv", "rename", "relocate"],
    &["copy", "cp", "duplicate", "clone"],
    &["directory", "folder", "dir"],
    &["file", "document", "doc"],
    &["picture", "image", "photo", "screenshot", "snapshot"],
    &["meeting", "event", "appointment", "calendar"],
    &["issue", "ticket", "bug", "task"],
    &["pull request", "pr", "merge request"],
    &["repository", "repo", "project"],
    &["website", "web", "page", "site", "url", "browser"],
    &["navigate", "go", "visit", "browse", "goto"],
    &["click", "press", "tap"],
    &["type", "fill", "enter", "input"],
    &["log", "history", "commits"],
    &["difference", "diff", "changes", "compare"],
    &["kubernetes", "k8s", "kube"],
    &["container", "docker"],
    &["database", "db", "sql", "table"],
    &["time", "clock", "timezone", "zone", "date"],
    &["convert", "transform", "translate"],
    &["remember", "memory", "memorize", "note", "recall"],
    &["user", "member", "person", "people", "account"],
    &["upload", "attach"],
    &["download", "fetch", "save"],
    &["error", "exception", "crash", "failure", "issue"],
    &["sum", "total", "add"],
    &["tag", "label"],
];

/// Whether `key` (stemmed terms joined by a space) is a phrase of the
/// table.
pub(crate) fn is_phrase(key: &str) -> bool {
    key.contains(' ') && table().contains_key(key)
}

/// Each query term (stemmed) → the other terms of its groups.
pub(crate) fn related(term: &str) -> &'static [Box<str>] {
    table().get(term).map(Vec::as_slice).unwrap_or(&[])
}

fn table() -> &'static HashMap<Box<str>, Vec<Box<str>>> {
    static TABLE: OnceLock<HashMap<Box<str>, Vec<Box<str>>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out: HashMap<Box<str>, Vec<Box<str>>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<Box<str>> = group
                .iter()
                .map(|w| key(w))
                .filter(|k| !k.is_empty())
                .collect();
            for a in &stems {
                let list = out.entry(a.clone()).or_default();
                for b in &stems {
                    if a != b && !list.contains(b) {
                        list.push(b.clone());
                    }
                }
            }
        }
        out
    })
}

/// A word or phrase as the index holds it: its terms, joined by a space.
pub(crate) fn key(phrase: &str) -> Box<str> {
    let mut out = String::new();
    terms(phrase, usize::MAX, |t| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    });
    out.into()
}
