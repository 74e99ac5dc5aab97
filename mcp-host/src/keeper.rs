//! What the host's toolbox tells the model when a tool is not there or its
//! server failed it: the host is the toolbox's [`Keeper`], so every path to
//! a tool (the host's calls, a conversation's
//! [`Deferred`](mcp_tools::Deferred), an [`McpTool`] kept by an agent)
//! answers the same.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use mcp_client::ClientError;
use mcp_proto::error::chain;
use mcp_tools::{Keeper, McpTool, Refusal, Tool, ToolError};

use crate::host::Shared;
use crate::spec::reason;

/// Why the tools that are not in the toolbox are not: the tools of servers
/// that are down, and those held back until approved.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// The tools of servers that are down: tool name → server name.
    pub(crate) unavailable: HashMap<String, String>,
    /// The tools of ready servers held back until approved: tool name →
    /// (server name, whether the tool is new).
    pub(crate) held: HashMap<String, (String, bool)>,
}

impl View {
    /// The refusal of a call to `name`, a tool held back until approved.
    pub(crate) fn held_refusal(&self, name: &str) -> Option<ToolError> {
        let (server, added) = self.held.get(name)?;
        Some(ToolError::Refused {
            tool: name.to_owned(),
            server: Some(server.clone()),
            why: Refusal::Unapproved { added: *added },
        })
    }
}

/// The host, as its toolbox's keeper (weak: the host owns the toolbox).
#[derive(Debug)]
pub(crate) struct HostKeeper(pub(crate) Weak<Shared>);

impl Keeper for HostKeeper {
    /// A tool held back is refused; a down server's tool is unavailable,
    /// with the server's status as the reason.
    fn missing(&self, name: &str) -> Option<ToolError> {
        let shared = self.0.upgrade()?;
        let view = shared.view();
        if let Some(refused) = view.held_refusal(name) {
            return Some(refused);
        }
        let server = view.unavailable.get(name)?;
        let report = shared
            .status
            .borrow()
            .iter()
            .find(|r| &r.name == server)
            .cloned()?;
        Some(ToolError::Unavailable {
            tool: name.to_owned(),
            server: report.name,
            reason: report.status.to_string(),
        })
    }

    /// A connection gone during the call: the server is started again (a
    /// remote server's connection does not close by itself). Tools changed
    /// during the call: they are listed again and sorted by the pins (the
    /// toolbox does not list a host's servers itself). Either way the model
    /// is told the tool is unavailable for now.
    fn failed(&self, tool: &McpTool, error: ToolError) -> ToolError {
        let ToolError::Fatal { source, .. } = &error else {
            return error;
        };
        let (Some(shared), Some(server)) = (self.0.upgrade(), tool.server()) else {
            return error;
        };
        let slot = shared.slot(server);
        // The server's current connection, if it is the one the call used
        // (it may have been started again since).
        let current = slot.as_ref().and_then(|slot| {
            let live = slot.live();
            let client = live.client?;
            client
                .same_connection(tool.client())
                .then_some((slot.clone(), client, live.generation))
        });
        let why = if connection_lost(source) {
            let why = reason(&format!("went away during the call ({})", chain(source)));
            if let Some((slot, _, generation)) = &current {
                slot.lost.send_replace((*generation, why.clone()));
            }
            why
        } else if matches!(source, ClientError::Rpc(e) if e.is_tool_set_changed()) {
            if let (Some((slot, client, _)), Ok(rt)) =
                (current, tokio::runtime::Handle::try_current())
            {
                rt.spawn(relist(shared.clone(), slot, client));
            }
            "changed its tools during the call; they are being listed again".to_owned()
        } else {
            return error;
        };
        ToolError::Unavailable {
            tool: Tool::name(tool).to_owned(),
            server: server.to_owned(),
            reason: why,
        }
    }
}

/// Lists a server's tools again after a call found them changed.
async fn relist(shared: Arc<Shared>, slot: Arc<crate::slot::Slot>, client: mcp_client::Client) {
    if let Some((tools, held)) = crate::supervisor::relist(&shared, &slot, &client).await {
        shared.set_tool_counts(&slot, tools, held);
    }
}

/// Whether a call's error means the connection is gone: closed, or a
/// transport failure of the connection itself (refused, reset). A remote
/// server's connection does not close by itself when the server goes away;
/// the host reconnects on these. A session the server no longer knows is
/// not one: the client starts a new session itself (and closes the
/// connection, which is one, when the server ends every new one).
fn connection_lost(e: &ClientError) -> bool {
    use mcp_proto::transport::TransportErrorKind as K;
    match e {
        ClientError::Transport(t) => matches!(t.kind(), K::Io | K::Closed),
        other => other.is_closed(),
    }
}
