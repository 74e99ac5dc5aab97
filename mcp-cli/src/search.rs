//! `mcp tools --search`: the listed tools ranked by mcp-tools' search
//! index ([`mcp_tools::search`]), the same ranking an agent's
//! `Toolbox::search` gives.

use mcp_proto::schema::Tool;
use mcp_tools::search::ToolIndex;
use serde_json::value::RawValue;

/// One server's tools, as listed.
pub(crate) struct Listed<'a> {
    /// The server's name (as `mcp tools` prints it).
    pub(crate) server: &'a str,
    /// Its `instructions`.
    pub(crate) instructions: Option<&'a str>,
    /// Its tools, as sent.
    pub(crate) tools: &'a [Box<RawValue>],
}

/// The best `limit` matches of `query`, best first, as (server, tool)
/// positions in `listed`. A tool object the client cannot decode is not
/// searched (`mcp tools` still lists it).
pub(crate) fn rank(listed: &[Listed<'_>], query: &str, limit: usize) -> Vec<(usize, usize)> {
    let mut index = ToolIndex::builder();
    let mut at = Vec::new();
    for (s, l) in listed.iter().enumerate() {
        index.server(l.server, l.instructions);
        for (t, raw) in l.tools.iter().enumerate() {
            let Ok(tool) = serde_json::from_str::<Tool>(raw.get()) else {
                continue;
            };
            index.tool(at.len(), &tool);
            at.push((s, t));
        }
    }
    index
        .build()
        .search(query, limit)
        .into_iter()
        .filter_map(|hit| at.get(hit.id).copied())
        .collect()
}
