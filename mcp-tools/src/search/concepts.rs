//! Words that mean the same thing, or one idea, to someone looking for a
//! tool.
//!
//! Two tables. [`SAME`]: words one can put for another (*delete*,
//! *remove*, *erase*; *folder*, *directory*), matched at
//! [`Ranking::same`](super::Ranking::same) of a literal match. [`RELATED`]:
//! the verbs and nouns tools and people use around one idea (*free*,
//! *busy*, *availability*; *undo*, *revert*, *restore*), matched at the lower
//! [`Ranking::related`](super::Ranking::related). A query word finds the
//! tools that say any word of its groups; the best of its alternatives
//! counts once. Groups hold words as people write them; they are stemmed
//! when the table is built, so each group needs one form of a word only. A
//! phrase (`roll back`, `pull request`) is matched as adjacent query words,
//! and a tool's phrase by all its words.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::terms;

/// Words that can stand for one another.
#[rustfmt::skip]
const SAME: &[&[&str]] = &[
    &["delete", "remove", "erase", "destroy", "rm", "unlink", "get rid of", "throw away", "forget"],
    &["create", "add", "make", "new", "insert", "append"],
    &["update", "modify", "edit", "change", "alter", "amend"],
    &["list", "enumerate", "ls"],
    &["fetch", "retrieve", "get", "read", "load"],
    &["search", "find", "lookup", "look up", "locate", "query"],
    &["undo", "revert", "rollback", "roll back", "back out"],
    &["run", "execute", "exec", "invoke", "launch", "trigger"],
    &["stop", "halt", "terminate", "kill", "abort", "cancel"],
    &["copy", "duplicate", "cp", "clone"],
    &["move", "mv", "relocate"],
    &["write", "save", "store", "persist"],
    &["send", "post", "dispatch"],
    &["directory", "folder", "dir"],
    &["picture", "image", "photo"],
    &["screenshot", "screen shot", "screen capture", "screengrab"],
    &["meeting", "event", "appointment"],
    &["issue", "ticket"],
    &["pull request", "pr", "merge request", "mr"],
    &["repository", "repo", "code base", "codebase"],
    &["website", "web site", "site", "web page", "webpage"],
    &["url", "link", "address", "uri"],
    &["kubernetes", "k8s", "kube"],
    &["database", "db"],
    &["mongodb", "mongo"],
    &["postgres", "postgresql", "psql"],
    &["email", "mail", "gmail"],
    &["spreadsheet", "sheet", "excel", "xlsx"],
    &["presentation", "slides", "deck", "powerpoint", "pptx"],
    &["wiki", "confluence"],
    &["todo", "task", "reminder"],
    &["sprint", "iteration"],
    &["tag", "label"],
    &["emoji", "reaction", "react"],
    &["user", "member", "person", "people", "account"],
    &["error", "exception", "failure", "fault"],
    &["crash", "exception"],
    &["timezone", "time zone"],
    &["flowchart", "flow diagram", "flow chart"],
    &["diagram", "chart", "graph", "plot", "visualization"],
    &["draw", "plot", "render", "visualize"],
    &["documentation", "docs", "manual", "reference"],
    &["configuration", "config", "settings", "setting"],
    &["environment variable", "env var", "env"],
    &["log in", "login", "sign in", "signin", "authenticate"],
    &["statistics", "stats", "metrics"],
    &["paper", "article", "publication"],
    &["cite", "citation", "citing", "reference"],
    &["video", "movie", "clip"],
    &["approve", "lgtm"],
    &["decline", "reject", "deny"],
    &["respond", "reply", "answer", "rsvp", "response"],
    &["comment", "remark", "note"],
    &["sum", "add up", "plus", "addition", "add"],
    &["repeat", "echo", "say back"],
    &["compress", "gzip", "zip"],
    &["forward", "port forward", "tunnel"],
    &["terminal", "shell", "console", "command line", "bash"],
    &["process", "pid", "program"],
    &["elevation", "altitude", "height above sea level"],
    &["directions", "route", "itinerary"],
    &["sla", "how long", "resolution time", "cycle time", "time to resolve"],
    &["engagement", "activity", "interaction"],
    &["slow", "performance", "latency"],
    &["mean", "meaning", "definition", "explain"],
    &["restaurant", "place", "business", "venue", "shop", "cafe"],
    &["paragraph", "block", "text block"],
    &["phone", "device", "mobile", "handset"],
    &["gps", "location", "geolocation"],
    &["rotate", "orientation", "landscape", "portrait"],
    &["tap", "click", "press"],
    &["namespace", "project"],
    &["working copy", "working tree", "working directory", "worktree"],
    &["artifact", "build output"],
];

/// Words around one idea.
#[rustfmt::skip]
const RELATED: &[&[&str]] = &[
    &["create", "make", "add", "new", "generate", "build", "compose", "init", "initialize", "setup", "start", "open", "register", "schedule", "file", "write", "draft", "draw"],
    &["delete", "remove", "drop", "purge", "discard", "trash", "wipe", "clear", "uninstall", "tear down", "teardown", "cancel", "archive"],
    &["update", "edit", "modify", "change", "patch", "set", "replace", "rewrite", "adjust", "tweak", "rename", "fix"],
    &["list", "show", "browse", "overview", "display", "every", "which", "exist", "available", "enumerate", "all"],
    &["read", "fetch", "retrieve", "view", "open", "see", "show", "inspect", "describe", "detail", "info", "information", "look at", "content", "inside", "contents", "get"],
    &["search", "find", "query", "filter", "match", "seek", "discover", "grep", "hunt"],
    &["undo", "revert", "rollback", "restore", "reset", "previous"],
    &["unstage", "reset", "restore", "staged"],
    &["stage", "add", "staging"],
    &["free", "busy", "availability", "available", "freebusy", "free busy", "open slot"],
    &["deploy", "deployment", "release", "rollout", "roll out", "ship", "publish", "launch", "promote", "go live"],
    &["run", "execute", "invoke", "call", "trigger", "perform", "evaluate", "eval", "start", "kick off"],
    &["stop", "halt", "kill", "terminate", "cancel", "abort", "end", "shut down", "shutdown", "interrupt", "close"],
    &["send", "post", "message", "notify", "dm", "reply", "email", "tell"],
    &["write", "save", "store", "put", "persist", "record", "keep", "overwrite", "log"],
    &["move", "rename", "transfer"],
    &["download", "export", "save", "pull", "fetch", "grab"],
    &["artifact", "output", "produced", "result"],
    &["upload", "attach", "import", "push"],
    &["close", "resolve", "done", "complete", "finish", "mark", "fixed", "resolved"],
    &["merge", "combine", "join", "integrate"],
    &["difference", "diff", "compare", "changes", "changed", "modified", "delta", "uncommitted"],
    &["schedule", "book", "plan", "arrange"],
    &["share", "invite", "grant", "permission", "access", "collaborator", "permit", "allow", "permitted", "restriction"],
    &["count", "number", "how many", "total", "tally"],
    &["elevation", "altitude", "high", "height", "sea level", "tall"],
    &["resize", "smaller", "bigger", "larger", "shrink", "enlarge", "width", "dimension"],
    &["daily", "periodic", "today", "weekly"],
    &["size", "space", "storage", "bytes", "big", "large", "disk"],
    &["statistic", "metric", "usage", "utilization", "consumption", "measure", "cpu", "memory", "load"],
    &["analyze", "explain", "diagnose", "troubleshoot", "debug", "investigate", "root cause", "why", "failing"],
    &["monitor", "watch", "observe", "track", "alert", "notify"],
    &["health", "status", "state", "progress", "passing", "check", "ready"],
    &["wait", "sleep", "pause", "delay", "until"],
    &["convert", "transform", "translate", "parse", "turn into"],
    &["summarize", "summary", "digest"],
    &["assign", "give", "hand", "allocate", "owner", "assignee"],
    &["approve", "review", "accept", "lgtm"],
    &["comment", "reply", "note", "feedback", "annotation", "discussion", "thread"],
    &["remember", "memorize", "memory", "recall", "forget", "knowledge", "know", "fact", "observation", "entity"],
    &["think", "reason", "reasoning", "step by step", "thought", "problem solving"],
    &["archive", "inbox"],
    &["scale", "replicas", "resize"],
    &["drain", "cordon", "maintenance"],
    &["terminal", "console", "command", "repl", "process", "session", "cli"],
    &["log", "logs", "output", "print", "printed", "logcat"],
    &["history", "log", "past", "timeline", "changelog", "recent", "recently"],
    &["directory", "folder", "path", "tree"],
    &["file", "document", "doc", "txt"],
    &["picture", "image", "photo", "screenshot", "snapshot", "capture", "png", "jpeg"],
    &["meeting", "event", "appointment", "invitation", "invite"],
    &["calendar", "agenda", "schedule"],
    &["issue", "ticket", "bug", "task", "story", "defect", "problem", "report"],
    &["repository", "project", "codebase"],
    &["branch", "ref"],
    &["commit", "revision", "changeset"],
    &["web", "website", "page", "site", "url", "link", "webpage", "internet", "online", "http", "https", "www"],
    &["browser", "tab", "window", "page"],
    &["navigate", "go", "visit", "goto", "open", "load"],
    &["click", "press", "tap", "button", "submit"],
    &["type", "fill", "enter", "input", "form", "field", "textbox"],
    &["key", "keyboard", "keystroke"],
    &["hover", "mouse over", "mouseover", "mouse"],
    &["dropdown", "select", "option", "choose", "pick"],
    &["drag", "drop", "drag and drop"],
    &["dialog", "alert", "popup", "confirm", "prompt", "modal"],
    &["javascript", "js", "script", "code", "snippet"],
    &["kubernetes", "kubectl", "cluster", "helm"],
    &["pod", "container"],
    &["docker", "container", "image", "dockerfile", "containerize"],
    &["database", "sql", "table", "schema", "collection"],
    &["record", "row", "document", "entry", "item"],
    &["field", "column", "property", "attribute", "mapping", "schema"],
    &["index", "indexes", "indices"],
    &["time", "clock", "timezone", "hour", "date", "now"],
    &["user", "member", "person", "people", "account", "profile", "colleague", "teammate", "who", "whoami"],
    &["contact", "address book", "phone number"],
    &["error", "exception", "crash", "failure", "failing", "incident", "bug", "fault"],
    &["email", "mail", "inbox", "message", "thread", "conversation"],
    &["spreadsheet", "sheet", "csv", "cell", "range", "row"],
    &["presentation", "slide", "deck"],
    &["wiki", "knowledge base", "page", "space"],
    &["jira", "ticket", "issue", "sprint", "epic"],
    &["board", "kanban", "backlog"],
    &["worklog", "time spent", "log time", "hours", "timesheet"],
    &["transition", "status", "state", "move to", "in progress"],
    &["watcher", "watching", "follower", "subscriber"],
    &["version", "release", "tag"],
    &["tag", "label", "category", "topic"],
    &["channel", "room", "space", "conversation", "chat"],
    &["location", "place", "address", "coordinates", "latitude", "longitude", "geocode", "map", "where"],
    &["directions", "route", "drive", "travel", "distance", "commute", "navigate", "trip"],
    &["near", "nearby", "local", "around"],
    &["news", "headlines", "current events"],
    &["paper", "research", "academic", "arxiv", "citation", "scholar"],
    &["crawl", "spider", "scrape", "extract"],
    &["markdown", "md", "text"],
    &["pdf", "print"],
    &["secret", "environment", "variable", "config", "setting", "settings"],
    &["policy", "role", "iam", "permission"],
    &["alarm", "alert", "alerting", "firing", "monitor"],
    &["dashboard", "panel", "chart", "graph", "visualization", "plot"],
    &["library", "package", "dependency", "module", "framework", "sdk"],
    &["documentation", "reference", "manual", "guide", "api", "usage"],
    &["deal", "opportunity", "crm", "lead", "customer", "contact", "company"],
    &["workflow", "automation", "pipeline"],
    &["ci", "pipeline", "build", "job"],
    &["survey", "form", "questionnaire", "poll"],
    &["helm", "chart", "release"],
    &["manifest", "yaml", "spec"],
    &["node", "machine", "host", "server", "instance", "vm"],
    &["credit", "balance", "quota", "billing"],
    &["format", "formatting", "style", "bold", "color", "highlight", "font"],
    &["header", "heading", "title"],
    &["call", "engagement", "meeting", "note"],
    &["performance", "slow", "fast", "speed", "optimize", "optimizer", "plan", "latency", "load time"],
    &["video", "recording", "record", "screencast"],
];

/// Each term (stemmed; a phrase's terms joined by a space) → the terms
/// of its groups, each marked whether it is the [`SAME`].
type Table = HashMap<Box<str>, Vec<(Box<str>, bool)>>;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = Table::new();
        for (groups, same) in [(SAME, true), (RELATED, false)] {
            for group in groups {
                let keys: Vec<Box<str>> = group.iter().filter_map(|w| key(w)).collect();
                for a in &keys {
                    let list = out.entry(a.clone()).or_default();
                    for b in keys.iter().filter(|b| *b != a) {
                        match list.iter_mut().find(|(k, _)| k == b) {
                            Some(entry) => entry.1 |= same,
                            None => list.push((b.clone(), same)),
                        }
                    }
                }
            }
        }
        out
    })
}

/// A word or phrase as the index holds it: its terms joined by a space
/// (a phrase's stop words left out: `look up` is `look`); `None` for stop
/// words alone.
fn key(phrase: &str) -> Option<Box<str>> {
    let mut out = String::new();
    terms(phrase, usize::MAX, |t| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    });
    (!out.is_empty()).then(|| out.into())
}

/// Whether `key` (stemmed terms joined by a space) is a phrase of the
/// tables.
pub(crate) fn is_phrase(key: &str) -> bool {
    key.contains(' ') && table().contains_key(key)
}

/// The terms of `term`'s groups, each with whether it is the same word.
pub(crate) fn related(term: &str) -> &'static [(Box<str>, bool)] {
    table().get(term).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_and_both_strengths() {
        let delete: Vec<&str> = related("delet").iter().map(|r| &*r.0).collect();
        assert!(
            delete.contains(&"remov") && delete.contains(&"purg"),
            "{delete:?}"
        );
        assert!(
            related("remov")
                .iter()
                .any(|(k, same)| &**k == "delet" && *same)
        );
        assert!(
            related("purg")
                .iter()
                .any(|(k, same)| &**k == "delet" && !*same)
        );
        assert!(is_phrase("roll back"));
        assert!(related("roll back").iter().any(|(k, _)| &**k == "revert"));
        // A phrase's stop words are left out.
        assert_eq!(key("how many").as_deref(), Some("many"));
        assert!(key("the").is_none());
    }
}
