//! `mcp diff FILE`: a live server's tools, resources, resource templates
//! and prompts against the ones a cassette recorded, for CI.
//!
//! The recorded surface is, for each kind, the last complete listing in
//! the cassette (every page from the first request without a cursor); a
//! kind the cassette never listed is not compared (and the output says
//! so). `mcp diff --update FILE` records the live surface into FILE: the
//! handshake and one listing of each kind the server offers.
//!
//! Items are matched by name (tools, prompts), `uri` (resources) or
//! `uriTemplate` (templates); a changed item shows each member that
//! differs as a path (`inputSchema.properties.text.type`) with its recorded
//! and live values. Exit status 0 when nothing differs, 1 when something
//! does (after printing it), as `diff` does.

use std::collections::BTreeMap;
use std::path::Path;

use mcp_client::Client;
use mcp_proto::jsonrpc::Message;
use serde_json::Value;

use super::{Cassette, Event};
use crate::commands::{Listing, list_items};
use crate::failure::Failure;

const KINDS: [Listing; 4] = [
    Listing::Tools,
    Listing::Resources,
    Listing::Templates,
    Listing::Prompts,
];

fn noun(kind: Listing) -> &'static str {
    match kind {
        Listing::Tools => "tool",
        Listing::Resources => "resource",
        Listing::Templates => "resource template",
        Listing::Prompts => "prompt",
    }
}

/// The member that names an item of `kind`.
fn identity(kind: Listing) -> &'static str {
    match kind {
        Listing::Tools | Listing::Prompts => "name",
        Listing::Resources => "uri",
        Listing::Templates => "uriTemplate",
    }
}

/// One difference.
#[derive(Debug, PartialEq)]
enum Change {
    Added {
        kind: Listing,
        name: String,
    },
    Removed {
        kind: Listing,
        name: String,
    },
    Changed {
        kind: Listing,
        name: String,
        /// `(path, recorded, live)`; `None`: absent on that side.
        members: Vec<(String, Option<Value>, Option<Value>)>,
    },
}

impl PartialEq for Listing {
    fn eq(&self, other: &Self) -> bool {
        self.method() == other.method()
    }
}

/// The recorded surface: per kind listed, the items of its last complete
/// listing.
fn recorded(c: &Cassette) -> Vec<(Listing, Vec<Value>)> {
    let mut open: BTreeMap<String, Listing> = BTreeMap::new();
    let mut building: Vec<(Listing, Vec<Value>)> = Vec::new();
    let mut done: Vec<(Listing, Vec<Value>)> = Vec::new();
    for event in &c.events {
        let (sent, raw) = match event {
            Event::Send(m) => (true, m),
            Event::Recv(m) => (false, m),
        };
        let Ok(msg) = Message::from_string(raw.get().to_owned()) else {
            continue;
        };
        match (sent, msg) {
            (true, Message::Request(r)) => {
                let Some(kind) = KINDS.into_iter().find(|k| k.method() == r.method) else {
                    continue;
                };
                let first_page = r
                    .params
                    .as_ref()
                    .and_then(|p| p.decode::<Value>().ok())
                    .is_none_or(|p| p.get("cursor").is_none());
                if first_page {
                    building.retain(|(k, _)| *k != kind);
                    building.push((kind, Vec::new()));
                }
                open.insert(r.id.to_string(), kind);
            }
            (false, Message::Response(r)) => {
                let Some(kind) = open.remove(&r.id.to_string()) else {
                    continue;
                };
                let Ok(result) = r.result.decode::<Value>() else {
                    continue;
                };
                let Some((_, items)) = building.iter_mut().find(|(k, _)| *k == kind) else {
                    continue;
                };
                if let Some(page) = result.get(kind.key()).and_then(Value::as_array) {
                    items.extend(page.iter().cloned());
                }
                if result.get("nextCursor").is_none_or(Value::is_null) {
                    if let Some(at) = building.iter().position(|(k, _)| *k == kind) {
                        let listing = building.remove(at);
                        done.retain(|(k, _)| *k != kind);
                        done.push(listing);
                    }
                }
            }
            _ => {}
        }
    }
    done
}

/// What differs between the recorded and live items of one kind.
fn compare(kind: Listing, recorded: &[Value], live: &[Value]) -> Vec<Change> {
    let key = identity(kind);
    let by_name = |items: &[Value]| -> BTreeMap<String, Value> {
        items
            .iter()
            .map(|v| {
                let name = match v.get(key) {
                    Some(Value::String(s)) => s.clone(),
                    other => other.map(Value::to_string).unwrap_or_default(),
                };
                (name, v.clone())
            })
            .collect()
    };
    let (old, new) = (by_name(recorded), by_name(live));
    let mut out = Vec::new();
    for (name, was) in &old {
        match new.get(name) {
            None => out.push(Change::Removed {
                kind,
                name: name.clone(),
            }),
            Some(now) if now != was => {
                let mut members = Vec::new();
                members_diff("", Some(was), Some(now), &mut members);
                out.push(Change::Changed {
                    kind,
                    name: name.clone(),
                    members,
                });
            }
            Some(_) => {}
        }
    }
    for name in new.keys().filter(|n| !old.contains_key(*n)) {
        out.push(Change::Added {
            kind,
            name: name.clone(),
        });
    }
    out
}

/// Every path under which `a` and `b` differ, objects followed member by
/// member (arrays and scalars compared whole).
fn members_diff(
    path: &str,
    a: Option<&Value>,
    b: Option<&Value>,
    out: &mut Vec<(String, Option<Value>, Option<Value>)>,
) {
    if a == b {
        return;
    }
    if let (Some(Value::Object(x)), Some(Value::Object(y))) = (a, b) {
        let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
        for k in keys {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            members_diff(&p, x.get(k), y.get(k), out);
        }
        return;
    }
    out.push((path.to_owned(), a.cloned(), b.cloned()));
}

/// Runs `mcp diff FILE` (or `--update`) over a connected client.
pub(crate) async fn run(
    client: &Client,
    file: &Path,
    update: bool,
    json: bool,
) -> Result<(), Failure> {
    let caps = client
        .server()
        .map(|s| s.capabilities.clone())
        .unwrap_or_default();
    if update {
        // The transport records into FILE as the listings pass.
        let mut counts = Vec::new();
        for kind in KINDS.into_iter().filter(|k| k.offered(&caps)) {
            let n = list_items(client, kind).await?.len();
            counts.push(format!("{}: {n}", kind.key()));
        }
        eprintln!(
            "mcp: recorded the server's surface in {}: {}",
            file.display(),
            if counts.is_empty() {
                "nothing offered".to_owned()
            } else {
                counts.join(", ")
            }
        );
        return Ok(());
    }
    let cassette = Cassette::load(file)?;
    let surface = recorded(&cassette);
    if surface.is_empty() {
        return Err(Failure::Usage(format!(
            "{} holds no complete tools/list, resources/list, resources/templates/list or \
             prompts/list: record one with mcp diff --update {}",
            file.display(),
            file.display()
        )));
    }
    let mut changes = Vec::new();
    let mut compared = Vec::new();
    for (kind, items) in &surface {
        let live: Vec<Value> = if kind.offered(&caps) {
            list_items(client, *kind)
                .await?
                .iter()
                .filter_map(|r| serde_json::from_str(r.get()).ok())
                .collect()
        } else {
            Vec::new()
        };
        compared.push(*kind);
        changes.extend(compare(*kind, items, &live));
    }
    if json {
        crate::out(&format!("{}\n", to_json(&changes)));
    } else {
        let skipped: Vec<&str> = KINDS
            .iter()
            .filter(|k| !compared.contains(k))
            .map(|k| k.method())
            .collect();
        crate::out(&human(&changes, &skipped));
    }
    if changes.is_empty() {
        Ok(())
    } else {
        Err(Failure::Differs)
    }
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".to_owned(), Value::to_string)
}

fn human(changes: &[Change], skipped: &[&str]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for c in changes {
        let _ = match c {
            Change::Added { kind, name } => writeln!(out, "+ {} {name}", noun(*kind)),
            Change::Removed { kind, name } => writeln!(out, "- {} {name}", noun(*kind)),
            Change::Changed {
                kind,
                name,
                members,
            } => {
                let _ = writeln!(out, "~ {} {name}", noun(*kind));
                for (path, was, now) in members {
                    let _ = writeln!(
                        out,
                        "    {path}: {} -> {}",
                        show(was.as_ref()),
                        show(now.as_ref())
                    );
                }
                Ok(())
            }
        };
    }
    if changes.is_empty() {
        out.push_str("no differences\n");
    }
    if !skipped.is_empty() {
        let _ = writeln!(out, "(not recorded, not compared: {})", skipped.join(", "));
    }
    mcp_cli::terminal::text(&out).into_owned()
}

fn to_json(changes: &[Change]) -> Value {
    let item = |kind: &Listing, name: &str| serde_json::json!({"kind": noun(*kind), "name": name});
    let mut added = Vec::new();
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    for c in changes {
        match c {
            Change::Added { kind, name } => added.push(item(kind, name)),
            Change::Removed { kind, name } => removed.push(item(kind, name)),
            Change::Changed {
                kind,
                name,
                members,
            } => {
                let mut v = item(kind, name);
                v["changes"] = members
                    .iter()
                    .map(|(p, a, b)| serde_json::json!({"path": p, "recorded": a, "live": b}))
                    .collect();
                changed.push(v);
            }
        }
    }
    serde_json::json!({"added": added, "removed": removed, "changed": changed})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_changed_description_added_and_removed_items_are_named() {
        let recorded = [
            json!({"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}}),
            json!({"name": "gone"}),
        ];
        let live = [
            json!({"name": "echo", "description": "Echo it back", "inputSchema": {"type": "object"}}),
            json!({"name": "new"}),
        ];
        let changes = compare(Listing::Tools, &recorded, &live);
        assert_eq!(changes.len(), 3, "{changes:?}");
        let text = human(&changes, &[]);
        assert!(
            text.contains("~ tool echo\n    description: \"Echo\" -> \"Echo it back\"\n"),
            "{text}"
        );
        assert!(
            text.contains("- tool gone") && text.contains("+ tool new"),
            "{text}"
        );
        assert!(compare(Listing::Tools, &recorded, &recorded).is_empty());
    }

    #[test]
    fn nested_schema_changes_show_their_path() {
        let a = [json!({"name": "t", "inputSchema": {"properties": {"x": {"type": "string"}}}})];
        let b = [json!({"name": "t", "inputSchema": {"properties": {"x": {"type": "number"}}}})];
        let text = human(&compare(Listing::Tools, &a, &b), &[]);
        assert!(
            text.contains("inputSchema.properties.x.type: \"string\" -> \"number\""),
            "{text}"
        );
    }
}
