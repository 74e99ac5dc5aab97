//! The server's tools as one `mcp call` sees them: listed (`tools/list`,
//! every page) the first time a step needs a definition, then shared by
//! every step (the pin check, the tool policy, typed `key=value` arguments,
//! whether the tool must run as a task, its MCP Apps UI). One call sends one
//! listing at most, and none when no step asks.

use mcp_client::{Client, ClientError};
use mcp_proto::schema::Tool;
use tokio::sync::OnceCell;

/// The tools of one connection, listed on first use.
pub(crate) struct ToolList<'c> {
    client: &'c Client,
    /// The listing, or why it failed; each step decides what a failure
    /// means to it. Steps running concurrently wait for the same listing.
    listed: OnceCell<Result<Vec<Tool>, ClientError>>,
}

impl<'c> ToolList<'c> {
    pub(crate) fn new(client: &'c Client) -> Self {
        ToolList {
            client,
            listed: OnceCell::new(),
        }
    }

    /// Every tool the server lists (listed now if no step asked before).
    pub(crate) async fn all(&self) -> Result<&[Tool], &ClientError> {
        self.listed
            .get_or_init(|| self.client.list_all::<Tool>())
            .await
            .as_ref()
            .map(Vec::as_slice)
    }

    /// The definition of `name`, if the server lists it.
    pub(crate) async fn find(&self, name: &str) -> Result<Option<&Tool>, &ClientError> {
        Ok(self.all().await?.iter().find(|t| t.name == name))
    }
}
