//! Tool search: which tools of a large catalog answer a request written in
//! plain words.
//!
//! A [`ToolIndex`] is built from tool definitions (and, per server, its
//! name and `instructions`) and answers [`search`](ToolIndex::search) with
//! the best tools first. It does no I/O and holds no lock: build one
//! whenever the catalog changes (about 306 M instructions, some 40 ms of
//! CPU, for 10,000 real tools; a query about 0.45 ms; BENCHMARKS.md). [`Toolbox::search`](crate::Toolbox::search)
//! builds one at the first search after each listing of its servers and
//! keeps it until the next.
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
//! weighted, summed, then saturated once, `k1` 1.2):
//!
//! | field | what | weight | length normalization |
//! |---|---|---|---|
//! | name | the tool's name, split into words | 2.5 | 0.75 |
//! | title | `title` and `annotations.title` | 10 | 0.675 |
//! | summary | the description's first sentence: what the tool does | 1.5 | full |
//! | description | the rest of it: how to use it, caveats | 0.19 | full |
//! | parameters | each input property's name, title, description and string `enum` values, and those of the properties one level below, in the schema's order, up to 16 terms | 0.085 | full |
//! | server | the server's name and `instructions`, scored as a document of their own and added to each of its tools | × 0.7 | full |
//!
//! Two factors follow: a tool matching only some of the query's words is
//! discounted (`(matched / words)^0.75`, so tools answering the whole
//! request come first), and a tool whose name the query says gains up to
//! 75 % (`create a shared calendar` → `create_calendar`).
//!
//! The weights were tuned on real catalogs: `tests/search_eval.rs` in the
//! repository measures recall@5 and MRR@10 on 48 real servers' 1,015
//! tools with 335 requests written as people ask (a dev split for tuning,
//! a held-out split to report) and four more held-out sets of 292, 168,
//! 159 and 161 requests, beside plain BM25; `cargo xtask search-eval` runs
//! it (figures in BENCHMARKS.md: on the last set written, whose requests
//! use no word of the tool's name but its product's (*jira*, *slack*),
//! recall@5 0.540 and MRR@10 0.430 with meaning, 0.530 and 0.424 by words
//! alone, 0.239 and 0.237 for plain BM25). Parameters and the description past its first
//! sentence weigh little because on that data they matched more wrong tools
//! than right ones, and they are read only so far (16 and 32 terms): on the
//! dev queries that ranks as well as reading 128 of each, and the build
//! takes a third less (the input schema is walked as text and left at the
//! 16th term or the end of its `properties`, never parsed whole).
//!
//! Text becomes terms by splitting at anything that is not a letter or a
//! digit and at camelCase steps (`listIssues`, `HTMLParser`), lowercasing,
//! joining short hyphenated words (`to-do` → `todo`), dropping English stop
//! words and numbers, and a light stemmer of our own (plurals, `-ing`,
//! `-ed`, `-er`, `-ly`, `-ation`, `-ment`, `-ion`): *deployment*,
//! *deploying* and *deployed* meet *deploy*, but no word is cut to a root
//! shared with unrelated words, as Porter's stemmer does (*organization* →
//! *organ*, *general* and *generate* → *gener*); and it is no dependency.
//!
//! Query words also match through two tables of concepts (in
//! `concepts.rs`): words that stand for one another (*delete*, *remove*,
//! *erase*; *folder*, *directory*; *issue*, *ticket*; *pull request*, *PR*,
//! *merge request*), at the weight of a literal match, and words around one
//! idea (*free*, *busy*, *availability*; *undo*, *revert*, *restore*;
//! *deploy*, *release*, *rollout*), at about half. Two-word phrases of the
//! tables (*roll back*, *pull request*) are one query word. A query word
//! of four letters or more also matches the longer terms it begins
//! (*mongo* → *mongodb*, *kube* → *kubernetes*), at the lower weight. A
//! query word counts once, by its best alternative.
//!
//! # What a tool means
//!
//! Words alone miss a request that says the tool's job in other words
//! (*am I busy* for a free/busy query). With the `semantic` feature (on by
//! default) each tool also has a meaning: a vector, the sum of its words'
//! vectors (name, title and summary at full weight, the rest of the
//! description at 0.2, parameters not at all; each word weighted by how
//! rare it is in the catalog), compared with the query's by cosine. The
//! final score is `0.6 × words + 0.4 × meaning`, each scaled to the
//! query's best (a negative cosine counts as 0); a tool matching no word of
//! the query is returned when its meaning is close enough (cosine ≥ 0.5).
//! A query word no tool says counts as the rarest word, if the model knows
//! it whole; one it only knows in pieces (`zzzqqq`) has no meaning.
//!
//! The word vectors are static: no model runs and nothing is downloaded.
//! They were distilled from the sentence transformer
//! [all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2)
//! (Apache-2.0; `src/search/minilm.wpe.LICENSE` in the crate) by
//! model2vec's recipe: each of the 27,558 wordpieces of its vocabulary
//! (ASCII words and their continuations) through the whole model as a
//! sentence of its own, the outputs reduced to 128 dimensions by PCA and
//! quantized to four bits: 2.1 MB in the crate (`src/search/minilm.wpe`),
//! read at the first search (a few milliseconds, once per process). A
//! word's vector is the mean of its wordpieces' (`unstage` → `un`
//! `##sta` `##ge`). `cargo xtask search-embed` in the repository makes the
//! file again (`xtask/embed/distill.py`, from the model as packaged on
//! PyPI, pinned in `peers/search/embed.txt`). Without the feature the
//! crate has no vectors and the ranking is words alone.
//!
//! # Limits
//!
//! - A query is read up to [`MAX_QUERY_LEN`] bytes and [`MAX_QUERY_TERMS`]
//!   terms; the rest is ignored.
//! - Each field of each tool is indexed up to [`MAX_FIELD_TERMS`] terms,
//!   the description past its first sentence up to 32 and the parameters
//!   up to 16
//!   (a longer text is indexed by its beginning), so memory and build time
//!   are bounded by the number of tools whatever a server sends.
//! - An index holds at most 2³¹ tools (memory runs out long before); more
//!   are left out.

mod bytes;
mod concepts;
mod embed;
mod index;
mod memo;
mod params;
mod query;
mod semantic;
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
///
/// A tool no model may be offered (MCP Apps: `_meta.ui.visibility` without
/// `"model"`, [`Tool::is_model_visible`]) is never held: a search result is
/// a model-facing surface, and `search_tools` hands its hits to the model.
pub fn is_searchable(tool: &Tool) -> bool {
    tool.is_model_visible()
}

/// The fields of a tool, in the order of [`Ranking::weight`].
const FIELDS: usize = 5;
const NAME: usize = 0;
const TITLE: usize = 1;
/// The description's first sentence: what the tool does.
const SUMMARY: usize = 2;
/// The rest of the description: how to use it, caveats, examples.
const DESCRIPTION: usize = 3;
const PARAMETERS: usize = 4;

/// The ranking's constants (tuned on the evaluation's dev queries, see
/// `mcp-tools/tests/search_eval.rs`). Exposed for that tuning only.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranking {
    /// How much a term counts in each field (name, title, summary, rest of
    /// the description, parameters).
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
    /// How much the meaning counts beside the words (0: words alone, 1:
    /// meaning alone); each is scaled to the query's best first.
    pub meaning: f32,
    /// How close in meaning (cosine) a tool matching no word of the query
    /// must be to be returned.
    pub meaning_floor: f32,
    /// How much each field's terms count in a tool's meaning.
    pub meaning_fields: [f32; FIELDS],
}

impl Default for Ranking {
    fn default() -> Self {
        Ranking {
            weight: [2.5, 10.0, 1.5, 0.1875, 0.085],
            norm: [0.75, 0.675, 1.0, 1.0, 1.0],
            k1: 1.2,
            server: 0.7,
            same: 1.0,
            related: 0.525,
            coverage: 0.75,
            name: 0.75,
            meaning: 0.4,
            meaning_floor: 0.5,
            meaning_fields: [1.0, 1.0, 1.0, 0.2, 0.0],
        }
    }
}

#[cfg(test)]
mod tests;
