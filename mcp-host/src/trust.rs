//! What the user trusts of each server once it runs: its tools as approved
//! ([pins](crate::HostBuilder::pins)), the administrator's
//! [managed policy](crate::HostBuilder::managed_policy), and the allow,
//! ask and deny rules for its tools ([`ServerSpec::tool_rules`]).

use std::sync::Arc;

use mcp_config::{ManagedPolicy, PinStore, ServerOrigin, ToolChange, TrustError};
use mcp_proto::schema::Tool;

use crate::host::{Host, HostError};
use crate::spec::ServerSpec;

/// How a server starts, for the `serverCommand` and `serverUrl` entries of
/// a [`ManagedPolicy`] ([`ServerSpec::origin`]). Its `Debug` shows the
/// program, or the URL up to its host: arguments and the rest of a URL
/// can hold secrets.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A process.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A remote server.
    Url(String),
}

impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Command { program, args } => {
                write!(f, "Command({program:?} and {} arguments)", args.len())
            }
            Origin::Url(u) => {
                // Scheme and host only: no user information, path or query.
                let (scheme, rest) = u.split_once("://").unwrap_or(("", u));
                let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
                let host = authority.rsplit('@').next().unwrap_or_default();
                write!(f, "Url(\"{scheme}://{host}/…\")")
            }
        }
    }
}

impl Origin {
    /// A process started as `program` with `args`.
    pub fn command(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Origin::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// A remote server at `url`.
    pub fn url(url: impl Into<String>) -> Self {
        Origin::Url(url.into())
    }

    fn for_policy(&self) -> ServerOrigin<'_> {
        match self {
            Origin::Command { program, args } => ServerOrigin::Command(program, args),
            Origin::Url(u) => ServerOrigin::Url(u),
        }
    }
}

/// Why the managed policy keeps `spec` from starting, if it does.
pub(crate) fn blocked(policy: Option<&ManagedPolicy>, spec: &ServerSpec) -> Option<String> {
    let origin = spec
        .origin
        .as_ref()
        .map_or(ServerOrigin::Unknown, Origin::for_policy);
    policy?.check(&spec.name, origin).err().map(|b| b.reason)
}

/// A server's listing (after include/exclude) sorted by its pins.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sorted {
    /// Every tool of the listing the host would offer.
    pub(crate) listed: Arc<Vec<Tool>>,
    /// Those offered: as approved (the same `Arc` as `listed` when none is
    /// held).
    pub(crate) tools: Arc<Vec<Tool>>,
    /// Those held back: new, or changed since approved.
    pub(crate) held: Arc<Vec<ToolChange>>,
}

/// Sorts `listed` by `spec`'s pins in `pins` (everything passes without a
/// store). The store's file is read (and written when something changed)
/// off the runtime's threads.
pub(crate) async fn sort(
    pins: Option<&PinStore>,
    spec: &ServerSpec,
    listed: Arc<Vec<Tool>>,
) -> Result<Sorted, TrustError> {
    let Some(store) = pins else {
        return Ok(Sorted {
            tools: listed.clone(),
            listed,
            held: Arc::default(),
        });
    };
    let (store, key, list) = (store.clone(), spec.pins_key().to_owned(), listed.clone());
    let check = tokio::task::spawn_blocking(move || store.check(&key, &list))
        .await
        .map_err(unfinished)??;
    if check.first_use {
        tracing::info!(server = %spec.name, tools = listed.len(), "first use: pinned the server's tool definitions");
    }
    for c in &check.held {
        tracing::warn!(server = %spec.name, tool = %mcp_config::reveal(&c.tool), kind = ?c.kind, "tool held back: not as the user approved it");
    }
    let tools = if check.held.is_empty() {
        listed.clone()
    } else {
        Arc::new(
            listed
                .iter()
                .filter(|t| !check.is_held(&t.name))
                .cloned()
                .collect(),
        )
    };
    Ok(Sorted {
        listed,
        tools,
        held: Arc::new(check.held),
    })
}

impl Host {
    /// Every tool held back now, across servers: new, or changed since the
    /// user approved its server's tools (with [pins](crate::HostBuilder::pins)
    /// only). Show each one's [`diff`](ToolChange::diff) and pass the
    /// approved ones to [`approve`](Self::approve). A held tool is not in
    /// [`tools`](Self::tools), and [`call`](Self::call) refuses it
    /// ([`Refusal::Unapproved`](mcp_tools::Refusal::Unapproved)).
    pub fn held(&self) -> Vec<ToolChange> {
        self.slots()
            .iter()
            .flat_map(|s| s.live().held.iter().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// Approves what `change` shows (its [`after`](ToolChange::after)
    /// definition) in the pin store; once it returns, a server that still
    /// offers exactly that has the tool in the toolbox. A server that
    /// changed the tool again meanwhile has it held again, with the new
    /// change. Fails without a [pin store](crate::HostBuilder::pins), or
    /// when the store cannot be written.
    pub async fn approve(&self, change: &ToolChange) -> Result<(), HostError> {
        let shared = self.shared();
        let store = shared.pins.clone().ok_or(HostError::NoPinStore)?;
        let c = change.clone();
        let write = store.clone();
        tokio::task::spawn_blocking(move || write.approve(&c))
            .await
            .map_err(unfinished)
            .and_then(|r| r)
            .map_err(|e| HostError::Pins(Arc::new(e)))?;
        for slot in self
            .slots()
            .into_iter()
            .filter(|s| s.spec.pins_key() == change.server)
        {
            // One sort at a time per server: the supervisor re-lists under
            // the same lock.
            let _sorting = slot.sorting.lock().await;
            let Some(listed) = slot.live().listed else {
                continue;
            };
            let sorted = sort(Some(&store), &slot.spec, listed)
                .await
                .map_err(|e| HostError::Pins(Arc::new(e)))?;
            let (tools, held) = (sorted.tools.len(), sorted.held.len());
            slot.set_live(|l| l.sorted(sorted));
            shared.rebuild().await;
            shared.set_tool_counts(&slot, tools, held);
        }
        Ok(())
    }
}

/// A blocking pin-store task that did not finish (it panicked, or the
/// runtime is shutting down), as the store's error.
fn unfinished(e: tokio::task::JoinError) -> TrustError {
    TrustError::Io {
        path: Default::default(),
        what: "the pin store's task did not finish",
        source: std::io::Error::other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_show_no_secrets() {
        let o = Origin::url("https://user:s3cret@api.example:8443/mcp?token=s3cret");
        assert_eq!(format!("{o:?}"), r#"Url("https://api.example:8443/…")"#);
        let o = Origin::command("npx", ["--token", "s3cret"]);
        assert_eq!(format!("{o:?}"), r#"Command("npx" and 2 arguments)"#);
    }
}
