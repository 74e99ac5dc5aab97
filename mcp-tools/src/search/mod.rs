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
//! - Tools are numbered by `u32`: an index holds at most 4 billion tools
//!   (memory runs out long before).

mod concepts;
mod params;
mod text;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use mcp_proto::schema::Tool;

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

/// The fields of a tool, in the order of [`WEIGHT`] and [`NORM`].
const FIELDS: usize = 4;
const NAME: usize = 0;
const TITLE: usize = 1;
const DESCRIPTION: usize = 2;
const PARAMETERS: usize = 3;
/// How much a term counts in each field.
const WEIGHT: [f32; FIELDS] = [3.0, 2.0, 1.0, 0.4];
/// How much each field's length normalizes its counts (BM25's `b`).
const NORM: [f32; FIELDS] = [0.3, 0.3, 0.75, 0.75];
/// How fast repeated matches saturate (BM25's `k1`).
const K1: f32 = 1.2;
/// How much the server's text counts beside the tool's own.
const SERVER_WEIGHT: f32 = 0.3;

/// A fast hasher for short keys (FxHash's multiply-rotate): the index
/// hashes every word of every tool, and SipHash's protection against
/// chosen collisions buys nothing here (a server's words only slow its own
/// index's build, bounded by [`MAX_FIELD_TERMS`]).
#[derive(Default, Clone, Copy)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl WordHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type Words<V> = HashMap<Box<str>, V, BuildHasherDefault<WordHasher>>;

/// Terms → postings, in compressed rows: the documents holding term `t`
/// are `docs[offsets[t]..offsets[t + 1]]`, with their scores in `values`.
#[derive(Debug, Default)]
struct Postings {
    offsets: Vec<u32>,
    docs: Vec<u32>,
    values: Vec<f32>,
    /// Inverse document frequency per term.
    idf: Vec<f32>,
}

impl Postings {
    /// `(term, doc, value)` triples as rows; `terms` is the vocabulary size.
    fn new(terms: usize, docs: usize, triples: &[(u32, u32, f32)]) -> Postings {
        let mut counts = vec![0u32; terms + 1];
        for &(t, _, _) in triples {
            counts[t as usize + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let offsets = counts.clone();
        let mut next = counts;
        let mut out_docs = vec![0u32; triples.len()];
        let mut values = vec![0f32; triples.len()];
        for &(t, d, v) in triples {
            let at = next[t as usize] as usize;
            next[t as usize] += 1;
            out_docs[at] = d;
            values[at] = v;
        }
        let n = docs as f32;
        let idf = offsets
            .windows(2)
            .map(|w| {
                let df = (w[1] - w[0]) as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        Postings {
            offsets,
            docs: out_docs,
            values,
            idf,
        }
    }

    /// The documents holding `term`, with `idf × saturated frequency`.
    fn row(&self, term: u32) -> impl Iterator<Item = (u32, f32)> + '_ {
        let t = term as usize;
        let (start, end) = match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&s), Some(&e)) => (s as usize, e as usize),
            _ => (0, 0),
        };
        let idf = self.idf.get(t).copied().unwrap_or(0.0);
        self.docs[start..end]
            .iter()
            .zip(&self.values[start..end])
            .map(move |(&d, &v)| (d, idf * v))
    }

    fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.docs.capacity()) * 4
            + (self.values.capacity() + self.idf.capacity()) * 4
    }
}

/// The saturated, length-normalized frequency of one term in one document
/// (BM25F): `tf / (k1 + tf)` scaled by `k1 + 1`, where `tf` sums each
/// field's weighted count over its normalized length.
fn saturate(counts: &[u16; FIELDS], lens: &[u32; FIELDS], avg: &[f32; FIELDS]) -> f32 {
    let mut tf = 0.0;
    for f in 0..FIELDS {
        if counts[f] == 0 {
            continue;
        }
        let norm = 1.0 - NORM[f] + NORM[f] * lens[f] as f32 / avg[f].max(1.0);
        tf += WEIGHT[f] * f32::from(counts[f]) / norm;
    }
    tf * (K1 + 1.0) / (K1 + tf)
}

/// Builds a [`ToolIndex`]: name a server, add its tools, name the next.
#[derive(Default)]
pub struct ToolIndexBuilder {
    vocab: Words<u32>,
    /// Per tool: its id, its server, its fields' lengths.
    docs: Vec<(usize, u32, [u32; FIELDS])>,
    /// Per tool, its terms: `(term, field)` with a count, tools one after
    /// another (`ends[i]` is where tool `i`'s end).
    entries: Vec<(u32, u8, u16)>,
    ends: Vec<u32>,
    /// Per server: its terms with counts, and its length.
    servers: Vec<(Vec<(u32, u16)>, u32)>,
    scratch: Vec<(u32, u8)>,
}

impl std::fmt::Debug for ToolIndexBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndexBuilder")
            .field("tools", &self.docs.len())
            .field("servers", &self.servers.len())
            .finish()
    }
}

impl ToolIndexBuilder {
    fn term(&mut self, t: &str) -> u32 {
        if let Some(&id) = self.vocab.get(t) {
            return id;
        }
        let id = u32::try_from(self.vocab.len()).unwrap_or(u32::MAX);
        self.vocab.insert(t.into(), id);
        id
    }

    /// Starts a server: the tools added next are its tools, and its `name`
    /// and `instructions` count for each of them. Tools added before any
    /// server belong to an unnamed one.
    pub fn server(&mut self, name: &str, instructions: Option<&str>) -> &mut Self {
        let mut counts: Vec<(u32, u16)> = Vec::new();
        let mut len = 0;
        let mut ids = Vec::new();
        for part in [Some(name), instructions].into_iter().flatten() {
            text::terms(part, MAX_FIELD_TERMS, |t| ids.push(t.to_owned()));
        }
        let mut terms: Vec<u32> = ids.iter().map(|t| self.term(t)).collect();
        terms.sort_unstable();
        for t in terms {
            len += 1;
            match counts.last_mut() {
                Some((last, c)) if *last == t => *c = c.saturating_add(1),
                _ => counts.push((t, 1)),
            }
        }
        self.servers.push((counts, len));
        self
    }

    /// Adds `tool`, which [`search`](ToolIndex::search) will return as
    /// `id`, to the current server. A tool the index does not hold
    /// ([`is_searchable`]) is left out.
    pub fn tool(&mut self, id: usize, tool: &Tool) -> &mut Self {
        if !is_searchable(tool) {
            return self;
        }
        if self.servers.is_empty() {
            self.servers.push((Vec::new(), 0));
        }
        let server = u32::try_from(self.servers.len() - 1).unwrap_or(u32::MAX);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut lens = [0u32; FIELDS];
        let mut add = |this: &mut Self, field: usize, text: &str, budget: &mut usize| {
            text::terms(text, *budget, |t| {
                let id = this.term(t);
                scratch.push((id, field as u8));
                lens[field] += 1;
                *budget -= 1;
            });
        };
        let mut budget = MAX_FIELD_TERMS;
        add(self, NAME, &tool.name, &mut budget);
        let mut budget = MAX_FIELD_TERMS;
        for title in [
            tool.title.as_deref(),
            tool.annotations.as_ref().and_then(|a| a.title.as_deref()),
        ]
        .into_iter()
        .flatten()
        {
            add(self, TITLE, title, &mut budget);
        }
        let mut budget = MAX_FIELD_TERMS;
        if let Some(d) = &tool.description {
            add(self, DESCRIPTION, d, &mut budget);
        }
        let mut budget = MAX_FIELD_TERMS;
        params::parameter_text(tool.input_schema.as_str(), |p| {
            if budget > 0 {
                add(self, PARAMETERS, p, &mut budget);
            }
        });
        // Each (term, field) once, with its count.
        scratch.sort_unstable();
        let start = self.entries.len();
        for &(t, f) in &scratch {
            let ours = self.entries.len() > start;
            match self.entries.last_mut() {
                Some((lt, lf, c)) if ours && *lt == t && *lf == f => *c = c.saturating_add(1),
                _ => self.entries.push((t, f, 1)),
            }
        }
        self.ends
            .push(u32::try_from(self.entries.len()).unwrap_or(u32::MAX));
        self.docs.push((id, server, lens));
        self.scratch = scratch;
        self
    }

    /// The index.
    pub fn build(self) -> ToolIndex {
        let n = self.docs.len();
        let mut avg = [0f32; FIELDS];
        for (_, _, lens) in &self.docs {
            for f in 0..FIELDS {
                avg[f] += lens[f] as f32;
            }
        }
        for a in &mut avg {
            *a /= n.max(1) as f32;
        }
        let mut triples = Vec::with_capacity(self.entries.len());
        let mut start = 0usize;
        for (d, (&end, (_, _, lens))) in self.ends.iter().zip(&self.docs).enumerate() {
            let entries = &self.entries[start..end as usize];
            start = end as usize;
            let mut i = 0;
            while i < entries.len() {
                let term = entries[i].0;
                let mut counts = [0u16; FIELDS];
                while let Some(&(t, f, c)) = entries.get(i)
                    && t == term
                {
                    counts[f as usize] = c;
                    i += 1;
                }
                triples.push((term, d as u32, saturate(&counts, lens, &avg)));
            }
        }
        let terms = self.vocab.len();
        let tools = Postings::new(terms, n, &triples);
        // Servers are documents of their own, one field each.
        let server_avg =
            self.servers.iter().map(|s| s.1 as f32).sum::<f32>() / self.servers.len().max(1) as f32;
        let mut server_triples = Vec::new();
        for (s, (counts, len)) in self.servers.iter().enumerate() {
            for &(t, c) in counts {
                let mut fc = [0u16; FIELDS];
                fc[DESCRIPTION] = c;
                let mut lens = [0u32; FIELDS];
                lens[DESCRIPTION] = *len;
                let mut a = [1f32; FIELDS];
                a[DESCRIPTION] = server_avg;
                server_triples.push((t, s as u32, saturate(&fc, &lens, &a)));
            }
        }
        let servers = Postings::new(terms, self.servers.len(), &server_triples);
        ToolIndex {
            vocab: self.vocab,
            ids: self.docs.iter().map(|d| d.0).collect(),
            tool_server: self.docs.iter().map(|d| d.1).collect(),
            tools,
            servers,
        }
    }
}

/// A searchable index of tools (see the [module docs](self)).
#[derive(Default)]
pub struct ToolIndex {
    vocab: Words<u32>,
    /// The caller's id of each tool.
    ids: Vec<usize>,
    /// Each tool's server.
    tool_server: Vec<u32>,
    tools: Postings,
    servers: Postings,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.ids.len())
            .field("terms", &self.vocab.len())
            .finish()
    }
}

/// One query word's ways to match: terms (a phrase is several), each with
/// a weight. A tool scores the best of them.
type Alternatives = Vec<(Vec<u32>, f32)>;

impl ToolIndex {
    /// A builder.
    pub fn builder() -> ToolIndexBuilder {
        ToolIndexBuilder::default()
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The heap memory the index holds, in bytes (an estimate: the
    /// vocabulary's table is counted at its capacity).
    pub fn heap_bytes(&self) -> usize {
        let vocab = self.vocab.capacity() * (std::mem::size_of::<(Box<str>, u32)>() + 1)
            + self.vocab.keys().map(|k| k.len()).sum::<usize>();
        vocab
            + self.ids.capacity() * std::mem::size_of::<usize>()
            + self.tool_server.capacity() * 4
            + self.tools.heap_bytes()
            + self.servers.heap_bytes()
    }

    /// The tools that best match `query`, best first, at most `limit`.
    /// Tools matching no word of the query are not returned; ties keep the
    /// order the tools were added in.
    pub fn search(&self, query: &str, limit: usize) -> Vec<IndexHit> {
        if limit == 0 || self.ids.is_empty() {
            return Vec::new();
        }
        let groups = self.alternatives(query);
        let n = self.ids.len();
        let mut total = vec![0f32; n];
        let mut best = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        let servers = self.servers.offsets.len().saturating_sub(1);
        let mut server_total = vec![0f32; servers];
        let mut server_best = vec![0f32; servers];
        for group in &groups {
            for (terms, weight) in group {
                let share = weight / terms.len() as f32;
                // A phrase's words add up; alternatives take the best.
                let mut phrase: Vec<(u32, f32)> = Vec::new();
                for &t in terms {
                    for (d, s) in self.tools.row(t) {
                        phrase.push((d, s * share));
                    }
                }
                phrase.sort_unstable_by_key(|p| p.0);
                let mut i = 0;
                while i < phrase.len() {
                    let d = phrase[i].0;
                    let mut s = 0.0;
                    while let Some(&(pd, ps)) = phrase.get(i)
                        && pd == d
                    {
                        s += ps;
                        i += 1;
                    }
                    let b = &mut best[d as usize];
                    if *b == 0.0 {
                        touched.push(d);
                    }
                    if s > *b {
                        *b = s;
                    }
                }
                for &t in terms {
                    for (s, v) in self.servers.row(t) {
                        let b = &mut server_best[s as usize];
                        *b = b.max(v * share);
                    }
                }
            }
            for d in touched.drain(..) {
                total[d as usize] += best[d as usize];
                best[d as usize] = 0.0;
            }
            for (t, b) in server_total.iter_mut().zip(&mut server_best) {
                *t += *b;
                *b = 0.0;
            }
        }
        let mut hits: Vec<(f32, u32)> = Vec::new();
        for (d, &score) in total.iter().enumerate() {
            let server = self.tool_server.get(d).copied().unwrap_or(0) as usize;
            let s = score + SERVER_WEIGHT * server_total.get(server).copied().unwrap_or(0.0);
            if s > 0.0 {
                hits.push((s, d as u32));
            }
        }
        let by_rank = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, by_rank);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(by_rank);
        hits.into_iter()
            .filter_map(|(score, d)| {
                Some(IndexHit {
                    id: *self.ids.get(d as usize)?,
                    score,
                })
            })
            .collect()
    }

    /// The query's words, each with its ways to match: itself, and the
    /// words of its concepts. Two adjacent words that are a phrase of the
    /// concept table (`roll back`) are one query word: the phrase itself
    /// (its words together) or its concepts' words.
    fn alternatives(&self, query: &str) -> Vec<Alternatives> {
        let mut end = query.len().min(MAX_QUERY_LEN);
        while !query.is_char_boundary(end) {
            end -= 1;
        }
        let mut words: Vec<String> = Vec::new();
        text::terms(&query[..end], MAX_QUERY_TERMS, |t| words.push(t.to_owned()));
        let lookup = |phrase: &str| -> Option<Vec<u32>> {
            phrase
                .split(' ')
                .map(|w| self.vocab.get(w).copied())
                .collect()
        };
        let related = |key: &str, alts: &mut Alternatives| {
            for r in concepts::related(key) {
                if let Some(ids) = lookup(r) {
                    alts.push((ids, concepts::SYNONYM_WEIGHT));
                }
            }
        };
        let mut groups = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut i = 0;
        while let Some(w) = words.get(i) {
            let mut key = w.clone();
            i += 1;
            if let Some(next) = words.get(i) {
                let phrase = format!("{w} {next}");
                if concepts::is_phrase(&phrase) {
                    key = phrase;
                    i += 1;
                }
            }
            if seen.contains(&key) {
                continue;
            }
            let mut alts: Alternatives = Vec::new();
            if let Some(ids) = lookup(&key) {
                alts.push((ids, 1.0));
            }
            related(&key, &mut alts);
            seen.push(key);
            if !alts.is_empty() {
                groups.push(alts);
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests;
