//! Who decides whether a tool call runs: allow, ask a person, or deny, per
//! tool and per server ([`ToolPolicy`]).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_proto::schema::{Tool, ToolAnnotations};
use serde_json::Value;

use crate::names::Glob;

/// What a [`ToolPolicy`] says of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Decision {
    /// Calls run.
    Allow,
    /// Each call waits for a person's approval
    /// ([`ToolOptions::on_ask`](crate::ToolOptions::on_ask)); without a way
    /// to ask, it is refused.
    Ask,
    /// Calls are refused before anything is sent, and the tool is not
    /// offered to the model.
    Deny,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        })
    }
}

/// Why a [`ToolPolicy`] decided as it did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Because {
    /// A rule given for the tool's server.
    ServerRule {
        /// The server.
        server: String,
        /// The pattern that matched.
        pattern: String,
    },
    /// A rule for every server.
    Rule {
        /// The pattern that matched.
        pattern: String,
    },
    /// The server marks the tool read-only (`readOnlyHint`).
    ReadOnlyHint,
    /// The server marks the tool destructive (`destructiveHint`).
    DestructiveHint,
    /// No rule or hint applies: the policy's
    /// [`otherwise`](ToolPolicy::otherwise).
    Default,
}

impl fmt::Display for Because {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Because::ServerRule { server, pattern } => {
                write!(f, "the rule `{pattern}` for server `{server}`")
            }
            Because::Rule { pattern } => write!(f, "the rule `{pattern}`"),
            Because::ReadOnlyHint => f.write_str("the server marks the tool read-only"),
            Because::DestructiveHint => f.write_str("the server marks the tool destructive"),
            Because::Default => f.write_str("the policy's default"),
        }
    }
}

/// A [`Decision`] and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// Why.
    pub because: Because,
}

/// Allow, ask and deny lists of [`Glob`]s over tool names (the server's own
/// names, before any prefix, as [`Filter`](crate::Filter) takes them).
/// Where a tool matches several lists, deny beats ask beats allow.
///
/// ```
/// use mcp_tools::{Decision, ToolRules};
///
/// let rules = ToolRules::new().allow(["read_*"]).ask(["write_*"]).deny(["write_passwd"]);
/// assert_eq!(rules.decide("read_file").map(|(d, _)| d), Some(Decision::Allow));
/// assert_eq!(rules.decide("write_passwd").map(|(d, _)| d), Some(Decision::Deny));
/// assert_eq!(rules.decide("move_file"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct ToolRules {
    allow: Vec<Glob>,
    ask: Vec<Glob>,
    deny: Vec<Glob>,
}

impl ToolRules {
    /// No rules.
    pub fn new() -> Self {
        ToolRules::default()
    }

    /// Tools that run without asking.
    pub fn allow<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.allow.extend(globs.into_iter().map(Into::into));
        self
    }

    /// Tools that wait for a person's approval at each call.
    pub fn ask<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.ask.extend(globs.into_iter().map(Into::into));
        self
    }

    /// Tools never called (nor offered to the model).
    pub fn deny<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.deny.extend(globs.into_iter().map(Into::into));
        self
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// The decision of the strongest list matching `tool`, and the pattern
    /// that matched; `None` when no pattern does.
    pub fn decide(&self, tool: &str) -> Option<(Decision, &Glob)> {
        [
            (Decision::Deny, &self.deny),
            (Decision::Ask, &self.ask),
            (Decision::Allow, &self.allow),
        ]
        .into_iter()
        .find_map(|(d, globs)| globs.iter().find(|g| g.matches(tool)).map(|g| (d, g)))
    }

    /// These rules and `other`'s in one (each list both lists).
    fn merge(&mut self, other: ToolRules) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
    }
}

/// Allow, ask or deny for each tool call, decided before anything is sent.
///
/// In order, the first that applies decides:
///
/// 1. the rules of the tool's server ([`server`](Self::server));
/// 2. the rules for every server ([`allow`](Self::allow),
///    [`ask`](Self::ask), [`deny`](Self::deny));
/// 3. the tool's annotations (unless [turned off](Self::annotations)):
///    `readOnlyHint: true` allows, `destructiveHint: true` asks;
/// 4. [`otherwise`](Self::otherwise): [`Decision::Allow`] unless set.
///
/// Within one set of rules, deny beats ask beats allow. Annotations are
/// the server's own claims (the specification calls them untrusted hints):
/// a rule is what holds; the hints only spare the user questions about
/// tools the server says are harmless and put one before tools it says
/// are not. A tool that says nothing is, by the specification's defaults,
/// possibly destructive; `.otherwise(Decision::Ask)` asks for those too
/// (as VS Code does).
///
/// Set it with [`ToolOptions::policy`](crate::ToolOptions::policy); asking
/// goes through [`ToolOptions::on_ask`](crate::ToolOptions::on_ask). Every
/// call path checks it before sending ([`McpTool::authorize`](crate::McpTool::authorize)):
/// [`McpTool::call`](crate::McpTool::call), [`Toolbox::call`](crate::Toolbox::call),
/// [`Toolbox::start`](crate::Toolbox::start), and the host's calls above
/// them. A denied tool is also left out of the tools offered to the model.
///
/// ```
/// use mcp_tools::{Decision, ToolPolicy, ToolRules};
///
/// let policy = ToolPolicy::new()
///     .deny(["**delete**"])
///     .server("github", ToolRules::new().allow(["get_*", "list_*"]).ask(["create_*"]));
/// let tool = |name: &str, annotations: &str| -> mcp_proto::schema::Tool {
///     serde_json::from_str(&format!(r#"{{"name": "{name}", "annotations": {annotations}}}"#)).unwrap()
/// };
/// let decide = |server, name, ann| policy.decide(Some(server), &tool(name, ann)).decision;
/// assert_eq!(decide("github", "create_issue", "{}"), Decision::Ask);
/// assert_eq!(decide("github", "delete_repo", "{}"), Decision::Deny);
/// assert_eq!(decide("files", "read_file", r#"{"readOnlyHint": true}"#), Decision::Allow);
/// assert_eq!(decide("files", "write_file", r#"{"destructiveHint": true}"#), Decision::Ask);
/// assert_eq!(decide("files", "stat", "{}"), Decision::Allow);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ToolPolicy {
    every: ToolRules,
    servers: HashMap<String, ToolRules>,
    annotations: bool,
    otherwise: Decision,
}

impl Default for ToolPolicy {
    fn default() -> Self {
        ToolPolicy {
            every: ToolRules::new(),
            servers: HashMap::new(),
            annotations: true,
            otherwise: Decision::Allow,
        }
    }
}

impl ToolPolicy {
    /// No rules; annotations decide, and otherwise calls are allowed.
    pub fn new() -> Self {
        ToolPolicy::default()
    }

    /// Tools of every server that run without asking.
    pub fn allow<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.every = self.every.allow(globs);
        self
    }

    /// Tools of every server that wait for a person's approval.
    pub fn ask<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.every = self.every.ask(globs);
        self
    }

    /// Tools of every server that are never called.
    pub fn deny<I: IntoIterator<Item = G>, G: Into<Glob>>(mut self, globs: I) -> Self {
        self.every = self.every.deny(globs);
        self
    }

    /// Rules for the tools of the server called `name` (its name in the
    /// toolbox or host), which come before the rules for every server.
    /// Given twice for a server, both apply.
    pub fn server(mut self, name: impl Into<String>, rules: ToolRules) -> Self {
        self.servers.entry(name.into()).or_default().merge(rules);
        self
    }

    /// Whether tool annotations decide where no rule does (default on).
    pub fn annotations(mut self, on: bool) -> Self {
        self.annotations = on;
        self
    }

    /// What no rule or annotation decides (default [`Decision::Allow`]).
    pub fn otherwise(mut self, decision: Decision) -> Self {
        self.otherwise = decision;
        self
    }

    /// The verdict for `tool` (its server's own definition) of the server
    /// called `server`.
    pub fn decide(&self, server: Option<&str>, tool: &Tool) -> Verdict {
        let verdict = |decision, because| Verdict { decision, because };
        if let Some(server) = server
            && let Some((d, g)) = self.servers.get(server).and_then(|r| r.decide(&tool.name))
        {
            return verdict(
                d,
                Because::ServerRule {
                    server: server.to_owned(),
                    pattern: g.to_string(),
                },
            );
        }
        if let Some((d, g)) = self.every.decide(&tool.name) {
            return verdict(
                d,
                Because::Rule {
                    pattern: g.to_string(),
                },
            );
        }
        if self.annotations {
            let hint = |f: fn(&ToolAnnotations) -> Option<bool>| {
                tool.annotations.as_ref().and_then(f) == Some(true)
            };
            // `destructiveHint` means something only when the tool is not
            // read-only (the specification).
            if hint(|a| a.read_only_hint) {
                return verdict(Decision::Allow, Because::ReadOnlyHint);
            }
            if hint(|a| a.destructive_hint) {
                return verdict(Decision::Ask, Because::DestructiveHint);
            }
        }
        verdict(self.otherwise, Because::Default)
    }
}

/// What [`ToolOptions::on_ask`](crate::ToolOptions::on_ask) is asked: a
/// call the [`ToolPolicy`] wants a person to approve.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The tool's name as the model knows it.
    pub tool: String,
    /// Its server's name, if it has one.
    pub server: Option<String>,
    /// Its definition, as the server listed it.
    pub definition: Tool,
    /// The arguments, as they will be sent (already checked against the
    /// input schema).
    pub arguments: Value,
    /// Why the policy asks.
    pub because: Because,
}

/// The future an approval callback returns: `true` approves the call.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = bool> + Send>>;

/// Asks a person to approve a call ([`ToolOptions::on_ask`](crate::ToolOptions::on_ask)).
pub type AskFn = Arc<dyn Fn(ApprovalRequest) -> ApprovalFuture + Send + Sync>;

/// Why a call was refused before anything was sent
/// ([`ToolError::Refused`](crate::ToolError::Refused)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The policy denies the tool.
    Denied {
        /// Which rule.
        because: Because,
    },
    /// A person was asked and did not approve.
    Declined {
        /// Why the policy asked.
        because: Because,
    },
    /// The policy asks for approval and there is no one to ask (no
    /// [`on_ask`](crate::ToolOptions::on_ask)).
    NoOneToAsk {
        /// Why the policy asks.
        because: Because,
    },
    /// The tool is not as the user approved it (a host's pinned tool
    /// definitions): it must be approved first.
    Unapproved {
        /// `true`: the tool is new since its server's tools were approved;
        /// `false`: its definition changed since.
        added: bool,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Denied { because } => write!(f, "the tool policy denies it ({because})"),
            Refusal::Declined { because } => {
                write!(f, "the user did not approve the call ({because}, so each call asks)")
            }
            Refusal::NoOneToAsk { because } => write!(
                f,
                "each call needs the user's approval ({because}) and there is no one to ask"
            ),
            Refusal::Unapproved { added: true } => f.write_str(
                "the tool is new since the user approved its server's tools; the user must approve it first",
            ),
            Refusal::Unapproved { added: false } => f.write_str(
                "the tool's definition changed since the user approved it; the user must approve the change first",
            ),
        }
    }
}
