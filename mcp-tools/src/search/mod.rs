//! Tool search: which tools of a large catalog answer a request written in
//! plain words.
//!
//! A [`ToolIndex`] is built from tool definitions (and, per server, its
//! name and `instructions`) and answers [`search`](ToolIndex::search) with
//! the best tools first. It does no I/O and holds no lock: build one
//! whenever the catalog changes (10,000 tools take a few milliseconds).
//! [`Toolbox::search`](crate::Toolbox::search) keeps one per listing of its
//! servers.
//!
//! ```
//! use mcp_proto::schema::Tool;
//! use mcp_tools::search::ToolIndex;
//!
//! let tool = |name: &str, description: &str| {
//!     serde_json::from_value::<Tool>(serde_json::json!({
//!         "name": name, "description": description, "inputSchema": {"type": "object"}
//!     }))
//!     .unwrap()
//! };
//! let mut index = ToolIndex::builder();
//! index.server("git", Some("Git repository interaction and automation."));
//! index.tool(0, &tool("git_reset", "Unstages all staged changes"));
//! index.tool(1, &tool("git_log", "Shows the commit logs"));
//! index.server("calendar", None);
//! index.tool(2, &tool("get_freebusy", "Returns free/busy information for a set of calendars"));
//! let index = index.build();
//!
//! assert_eq!(index.search("unstage everything", 5)[0].id, 0);
//! assert_eq!(index.search("history of commits", 5)[0].id, 1);
//! assert_eq!(index.search("am I busy tomorrow afternoon", 5)[0].id, 2);
//! ```
//!
//! # What a tool is matched on
//!
//! Everything a tool says about itself, in fields of different weight
//! (BM25F: each field's term counts are normalized by the field's length,
//! weighted, summed, then saturated once):
//!
//! | field | what | weight |
//! |---|---|---|
//! | name | the tool's name, split into words | 3 |
//! | title | `title` and `annotations.title` | 2 |
//! | description | `description` | 1 |
//! | parameters | each input property's name, title, description and string `enum` values, and those of the properties one level below | 0.4 |
//! | server | the server's name and `instructions` (scored per server and added to each of its tools) | 0.3 |
//!
//! Text becomes terms by splitting at anything that is not a letter or a
//! digit and at camelCase steps (`listIssues`, `HTMLParser`), lowercasing,
//! dropping English stop words, and a light stemmer (plurals, `-ing`,
//! `-ed`, `-er`, `-ation`, `-ment`, `-ion`) so that *deployment* meets
//! *deploy*. Query words are also matched through a table of concepts, the
//! words tools and people use for one idea (*delete*, *remove*, *erase*,
//! *drop*; *undo*, *revert*, *roll back*; *free*, *busy*, *availability*;
//! …), at a lower weight than a literal match, the best of a word's
//! alternatives counting once.
//!
//! # Limits
//!
//! - A query is read up to [`MAX_QUERY_LEN`] bytes and [`MAX_QUERY_TERMS`]
//!   terms; the rest is ignored.
//! - Each field of each tool is indexed up to [`MAX_FIELD_TERMS`] terms (a
//!   longer description is indexed by its beginning), so memory is bounded
//!   by the number of tools whatever a server sends.
//! - An index holds at most 2³¹ tools (memory runs out long before); more
//!   are left out.

mod concepts;
mod index;
mod params;
mod query;
mod text;

use mcp_proto::schema::Tool;

pub use index::{ToolIndex, ToolIndexBuilder};
pub use text::MAX_FIELD_TERMS;

/// The longest query read, in bytes (a longer one is cut at a character
/// boundary).
pub const MAX_QUERY_LEN: usize = 1024;

/// The most query terms used (after stop words are dropped).
pub const MAX_QUERY_TERMS: usize = 32;

/// One tool found by [`Toolbox::search`](crate::Toolbox::search).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SearchHit {
    /// The name the model knows the tool by (as in
    /// [`Toolbox::tools`](crate::Toolbox::tools)).
    pub name: String,
    /// The tool.
    pub tool: crate::McpTool,
    /// How well it matches (higher is better; comparable within one
    /// search only).
    pub score: f32,
}

/// One tool found by [`ToolIndex::search`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct IndexHit {
    /// The id the tool was added with ([`ToolIndexBuilder::tool`]).
    pub id: usize,
    /// How well it matches (higher is better; comparable within one
    /// search only).
    pub score: f32,
}

/// Whether a search may return `tool`: the one place that decides which
/// tools an index holds (every [`ToolIndex`], so [`Toolbox::search`](crate::Toolbox::search)
/// and `mcp tools --search` too).
pub fn is_searchable(_tool: &Tool) -> bool {
    true
}

/// The fields of a tool, in the order of [`Ranking::weight`].
const FIELDS: usize = 4;
const NAME: usize = 0;
const TITLE: usize = 1;
const DESCRIPTION: usize = 2;
const PARAMETERS: usize = 3;

/// The ranking's constants (tuned on the evaluation's dev queries, see
/// `mcp-tools/tests/search_eval.rs`). Exposed for that tuning only.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranking {
    /// How much a term counts in each field (name, title, description,
    /// parameters).
    pub weight: [f32; FIELDS],
    /// How much each field's length normalizes its counts (BM25's `b`).
    pub norm: [f32; FIELDS],
    /// How fast repeated matches saturate (BM25's `k1`).
    pub k1: f32,
    /// How much the server's text counts beside the tool's own.
    pub server: f32,
    /// How much a match through a word of the same meaning counts beside
    /// a literal one.
    pub same: f32,
    /// How much a match through a related word counts.
    pub related: f32,
    /// How much a tool matching only some of the query's words is
    /// discounted: the score is multiplied by `(matched / words)^coverage`.
    pub coverage: f32,
    /// How much a tool whose name the query says gains: the score is
    /// multiplied by `1 + name × (name words matched / name words)`.
    pub name: f32,
}

impl Default for Ranking {
    fn default() -> Self {
        Ranking {
            weight: [2.25, 4.5, 0.375, 0.05],
            norm: [1.0, 0.25, 1.0, 0.75],
            k1: 1.2,
            server: 0.7,
            same: 1.0,
            related: 0.525,
            coverage: 0.75,
            name: 0.5,
        }
    }
}

#[cfg(test)]
mod tests;
