//! The index: terms to postings with precomputed BM25F values, per tool
//! and per server, and the search over them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use mcp_proto::schema::Tool;

use super::memo::WordMemo;
use super::query::groups;
use super::semantic::{Meaning, Meanings};
use super::{
    DESCRIPTION, FIELDS, IndexHit, MAX_FIELD_TERMS, NAME, PARAMETERS, Ranking, SUMMARY, TITLE,
    is_searchable, params, text,
};

/// A fast hasher for short keys (FxHash's multiply-rotate): the index
/// hashes every word of every tool, and SipHash's protection against
/// chosen collisions buys nothing here (a server's words only slow its own
/// index's build, bounded by [`MAX_FIELD_TERMS`]).
#[derive(Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // The last bytes as one word, their count in its top byte (so
            // that `ab` and `ab\0` differ).
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            b[7] |= (rest.len() as u8) << 4;
            self.add(u64::from_le_bytes(b));
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
    /// The documents, each with [`IN_NAME`] set when the term is in its
    /// name.
    docs: Vec<u32>,
    values: Vec<f32>,
    /// Inverse document frequency per term.
    idf: Vec<f32>,
}

/// The bit of a posting's document number that says the term is in the
/// tool's name (documents are numbered below it).
const IN_NAME: u32 = 1 << 31;

/// The most terms a query word stands for as their beginning.
const MAX_PREFIXED: usize = 4;

/// The most tools an index holds (document numbers leave [`IN_NAME`] free).
pub(crate) const MAX_TOOLS: usize = IN_NAME as usize;

/// [`Postings`] being made, without sorting: each term's row is counted
/// first ([`new`](Self::new)), then each posting is put in its row's next
/// place ([`put`](Self::put)), in the order given.
struct PostingsBuilder {
    offsets: Vec<u32>,
    /// Per term, where its next posting goes.
    next: Vec<u32>,
    docs: Vec<u32>,
    values: Vec<f32>,
}

impl PostingsBuilder {
    /// Rows for `terms` terms, holding the postings whose terms
    /// `each_term` gives (each once per posting to [`put`](Self::put)).
    fn new(terms: usize, each_term: impl Iterator<Item = u32>) -> PostingsBuilder {
        let mut offsets = vec![0u32; terms + 1];
        for t in each_term {
            offsets[t as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let total = offsets.last().copied().unwrap_or(0) as usize;
        PostingsBuilder {
            next: offsets.clone(),
            offsets,
            docs: vec![0u32; total],
            values: vec![0f32; total],
        }
    }

    /// Puts `doc` (with [`IN_NAME`]) and its `value` in term `t`'s row.
    #[inline]
    fn put(&mut self, t: u32, doc: u32, value: f32) {
        let Some(next) = self.next.get_mut(t as usize) else {
            return;
        };
        let at = *next as usize;
        *next += 1;
        if let (Some(d), Some(v)) = (self.docs.get_mut(at), self.values.get_mut(at)) {
            *d = doc;
            *v = value;
        }
    }

    /// The postings, with each term's inverse document frequency among
    /// `docs` documents.
    fn finish(self, docs: usize) -> Postings {
        let n = docs as f32;
        let idf = self
            .offsets
            .windows(2)
            .map(|w| {
                let df = (w[1] - w[0]) as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        Postings {
            offsets: self.offsets,
            docs: self.docs,
            values: self.values,
            idf,
        }
    }
}

impl Postings {
    /// The documents holding `term`, with `idf × saturated frequency` and
    /// whether the term is in the document's name.
    fn row(&self, term: u32) -> impl Iterator<Item = (u32, f32, bool)> + '_ {
        let t = term as usize;
        let (start, end) = match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&s), Some(&e)) => (s as usize, e as usize),
            _ => (0, 0),
        };
        let idf = self.idf.get(t).copied().unwrap_or(0.0);
        self.docs[start..end]
            .iter()
            .zip(&self.values[start..end])
            .map(move |(&d, &v)| (d & !IN_NAME, idf * v, d & IN_NAME != 0))
    }

    fn heap_bytes(&self) -> usize {
        (self.offsets.capacity() + self.docs.capacity()) * 4
            + (self.values.capacity() + self.idf.capacity()) * 4
    }
}

/// The saturated, length-normalized frequency of one term in one document
/// (BM25F): `tf / (k1 + tf)` scaled by `k1 + 1`, where `tf` sums each
/// field's weighted count over its normalized length (`norms`, from
/// [`norms`]).
fn saturate(r: &Ranking, counts: &[u16; FIELDS], norms: &[f32; FIELDS]) -> f32 {
    let mut tf = 0.0;
    for f in 0..FIELDS {
        if counts[f] == 0 {
            continue;
        }
        tf += r.weight[f] * f32::from(counts[f]) / norms[f];
    }
    tf * (r.k1 + 1.0) / (r.k1 + tf)
}

/// Each field's normalized length in one document (BM25's `1 - b + b ×
/// len / avg`), for [`saturate`]: once per document, not per term.
fn norms(r: &Ranking, lens: &[u32; FIELDS], avg: &[f32; FIELDS]) -> [f32; FIELDS] {
    std::array::from_fn(|f| 1.0 - r.norm[f] + r.norm[f] * lens[f] as f32 / avg[f].max(1.0))
}

/// Builds a [`ToolIndex`]: name a server, add its tools, name the next.
#[derive(Default)]
pub struct ToolIndexBuilder {
    vocab: Words<u32>,
    /// Per tool: its id, its server, its fields' lengths.
    docs: Vec<(usize, u32, [u32; FIELDS])>,
    /// Per tool, its terms with their count in each field, tools one
    /// after another (`ends[i]` is where tool `i`'s end).
    entries: Vec<(u32, [u16; FIELDS])>,
    ends: Vec<u32>,
    /// Per term (one for each, pushed as the term is made), where it is in
    /// `entries` if the tool being added has it (an index from before that
    /// tool's start means it has not).
    slot: Vec<u32>,
    /// Per server: its terms with counts, and its length.
    servers: Vec<(Vec<(u32, u16)>, u32)>,
    /// Where words are lowercased.
    buf: String,
    /// Each word met (lowercased, as written) → its term, or [`NO_TERM`].
    words: WordMemo,
    stem: String,
    /// Each term's meaning (a vector, when the crate has them).
    meanings: Meanings,
    ranking: Ranking,
}

/// The most terms taken from the rest of a tool's description (after its
/// first sentence): what a tool does is said early; the rest weighs little
/// in the ranking and most in the build (on the evaluation's dev queries,
/// 32 terms rank as well as 128, for 14 % less of the build).
const MAX_DETAIL_TERMS: usize = 32;

/// The most terms taken from a tool's parameters: their names and
/// descriptions weigh least of all (on the evaluation's dev queries, 16
/// terms rank as well as 128, for 30 % less of the build: each term read
/// costs a walk through the input schema and a word's look-up).
const MAX_PARAMETER_TERMS: usize = 16;

/// A word with no term (a stop word, a number).
const NO_TERM: u32 = u32::MAX;

impl std::fmt::Debug for ToolIndexBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndexBuilder")
            .field("tools", &self.docs.len())
            .field("servers", &self.servers.len())
            .finish()
    }
}

impl ToolIndexBuilder {
    /// Other ranking constants (for tuning them on the evaluation).
    #[doc(hidden)]
    pub fn ranking(&mut self, ranking: Ranking) -> &mut Self {
        self.ranking = ranking;
        self
    }

    /// Other word vectors (a table in `minilm.wpe`'s format, for
    /// comparing tables on the evaluation); `None` if `bytes` is not one.
    #[doc(hidden)]
    pub fn word_vectors(&mut self, bytes: &'static [u8]) -> Option<&mut Self> {
        self.meanings = Meanings::with(super::embed::WordVectors::parse(bytes)?);
        Some(self)
    }

    /// The term of a word as written (lowercased), or `None` for a stop
    /// word or a number; each word is stemmed once per index, then looked
    /// up.
    #[inline]
    fn word(&mut self, w: &str) -> Option<u32> {
        let id = match self.words.get(w) {
            Some(id) => id,
            None => self.new_word(w),
        };
        (id != NO_TERM).then_some(id)
    }

    /// [`word`](Self::word) of a word not met before: its term (or
    /// [`NO_TERM`]), remembered.
    #[cold]
    fn new_word(&mut self, w: &str) -> u32 {
        let mut stem = std::mem::take(&mut self.stem);
        let id = text::term(w, &mut stem).map_or(NO_TERM, |t| self.term(t, w));
        self.stem = stem;
        self.words.insert(w, id);
        id
    }

    /// The number of term `t`, first met as the word `w`.
    fn term(&mut self, t: &str, w: &str) -> u32 {
        if let Some(&id) = self.vocab.get(t) {
            return id;
        }
        let id = u32::try_from(self.vocab.len()).unwrap_or(u32::MAX);
        self.vocab.insert(t.into(), id);
        self.slot.push(u32::MAX);
        self.meanings.add_term(w);
        id
    }

    /// Starts a server: the tools added next are its tools, and its `name`
    /// and `instructions` count for each of them. Tools added before any
    /// server belong to an unnamed one.
    pub fn server(&mut self, name: &str, instructions: Option<&str>) -> &mut Self {
        let mut counts: Vec<(u32, u16)> = Vec::new();
        let mut len = 0;
        let mut terms = Vec::new();
        let mut buf = std::mem::take(&mut self.buf);
        for part in [Some(name), instructions].into_iter().flatten() {
            let mut n = 0;
            text::words_with(part, &mut buf, |w| {
                if let Some(t) = self.word(w) {
                    terms.push(t);
                    n += 1;
                }
                n < MAX_FIELD_TERMS
            });
        }
        self.buf = buf;
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
        if !is_searchable(tool) || self.docs.len() >= MAX_TOOLS {
            return self;
        }
        if self.servers.is_empty() {
            self.servers.push((Vec::new(), 0));
        }
        let server = u32::try_from(self.servers.len() - 1).unwrap_or(u32::MAX);
        let start = self.entries.len();
        let mut lens = [0u32; FIELDS];
        lens[NAME] = self.read(start, NAME, &tool.name, MAX_FIELD_TERMS);
        for title in [
            tool.title.as_deref(),
            tool.annotations.as_ref().and_then(|a| a.title.as_deref()),
        ]
        .into_iter()
        .flatten()
        {
            let budget = MAX_FIELD_TERMS - lens[TITLE] as usize;
            lens[TITLE] += self.read(start, TITLE, title, budget);
        }
        if let Some(d) = &tool.description {
            let (summary, rest) = text::first_sentence(d);
            lens[SUMMARY] = self.read(start, SUMMARY, summary, MAX_FIELD_TERMS);
            let budget = (MAX_FIELD_TERMS - lens[SUMMARY] as usize).min(MAX_DETAIL_TERMS);
            lens[DESCRIPTION] = self.read(start, DESCRIPTION, rest, budget);
        }
        params::parameter_text(tool.input_schema.as_str(), |p| {
            let budget = MAX_PARAMETER_TERMS - lens[PARAMETERS] as usize;
            lens[PARAMETERS] += self.read(start, PARAMETERS, p, budget);
            (lens[PARAMETERS] as usize) < MAX_PARAMETER_TERMS
        });
        self.ends
            .push(u32::try_from(self.entries.len()).unwrap_or(u32::MAX));
        self.docs.push((id, server, lens));
        self
    }

    /// Reads `text` into `field` of the tool being added (whose entries
    /// begin at `start`): at most `budget` terms; how many it read.
    fn read(&mut self, start: usize, field: usize, text: &str, budget: usize) -> u32 {
        if budget == 0 {
            return 0;
        }
        let mut buf = std::mem::take(&mut self.buf);
        let mut n = 0;
        text::words_with(text, &mut buf, |w| {
            let Some(t) = self.word(w) else {
                return true;
            };
            self.count(start, t, field);
            n += 1;
            n < budget
        });
        self.buf = buf;
        n as u32
    }

    /// Counts term `t` once more in `field` of the tool being added (whose
    /// entries begin at `start`).
    #[inline]
    fn count(&mut self, start: usize, t: u32, field: usize) {
        let Some(slot) = self.slot.get_mut(t as usize) else {
            return;
        };
        let at = *slot as usize;
        match self.entries.get_mut(at) {
            Some((_, counts)) if at >= start => {
                counts[field] = counts[field].saturating_add(1);
            }
            _ => {
                *slot = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
                let mut counts = [0u16; FIELDS];
                counts[field] = 1;
                self.entries.push((t, counts));
            }
        }
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
        let terms = self.vocab.len();
        let mut tools = PostingsBuilder::new(terms, self.entries.iter().map(|e| e.0));
        let mut names = vec![0u16; n];
        let mut start = 0usize;
        for (d, (&end, (_, _, lens))) in self.ends.iter().zip(&self.docs).enumerate() {
            let entries = &self.entries[start..end as usize];
            start = end as usize;
            let norms = norms(&self.ranking, lens, &avg);
            for &(term, counts) in entries {
                let named = if counts[NAME] > 0 { IN_NAME } else { 0 };
                names[d] += u16::from(counts[NAME] > 0);
                tools.put(
                    term,
                    d as u32 | named,
                    saturate(&self.ranking, &counts, &norms),
                );
            }
        }
        let tools = tools.finish(n);
        // Servers are documents of their own, one field each.
        let server_avg =
            self.servers.iter().map(|s| s.1 as f32).sum::<f32>() / self.servers.len().max(1) as f32;
        let mut servers = PostingsBuilder::new(
            terms,
            self.servers.iter().flat_map(|s| s.0.iter().map(|c| c.0)),
        );
        for (s, (counts, len)) in self.servers.iter().enumerate() {
            let mut lens = [0u32; FIELDS];
            lens[DESCRIPTION] = *len;
            let mut a = [1f32; FIELDS];
            a[DESCRIPTION] = server_avg;
            let norms = norms(&self.ranking, &lens, &a);
            for &(t, c) in counts {
                let mut fc = [0u16; FIELDS];
                fc[DESCRIPTION] = c;
                servers.put(t, s as u32, saturate(&self.ranking, &fc, &norms));
            }
        }
        let servers = servers.finish(self.servers.len());
        let meaning = self
            .meanings
            .tools(&self.ranking, &self.ends, &self.entries, &tools.idf);
        ToolIndex {
            vocab: {
                let mut v: Vec<(Box<str>, u32)> = self.vocab.into_iter().collect();
                v.sort_unstable();
                v
            },
            ids: self.docs.iter().map(|d| d.0).collect(),
            tool_server: self.docs.iter().map(|d| d.1).collect(),
            names,
            tools,
            servers,
            meaning,
            ranking: self.ranking,
        }
    }
}

/// A searchable index of tools (see the [module docs](crate::search)).
#[derive(Default)]
pub struct ToolIndex {
    /// Every term with its number, sorted (exact and prefix look-ups).
    vocab: Vec<(Box<str>, u32)>,
    /// The caller's id of each tool.
    ids: Vec<usize>,
    /// Each tool's server.
    tool_server: Vec<u32>,
    /// How many distinct terms each tool's name has.
    names: Vec<u16>,
    tools: Postings,
    servers: Postings,
    /// Each tool's meaning.
    meaning: Meaning,
    ranking: Ranking,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.ids.len())
            .field("terms", &self.vocab.len())
            .finish()
    }
}

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
        let vocab = self.vocab.capacity() * std::mem::size_of::<(Box<str>, u32)>()
            + self.vocab.iter().map(|(k, _)| k.len()).sum::<usize>();
        vocab
            + self.ids.capacity() * std::mem::size_of::<usize>()
            + self.tool_server.capacity() * 4
            + self.names.capacity() * 2
            + self.tools.heap_bytes()
            + self.servers.heap_bytes()
            + self.meaning.heap_bytes()
    }

    /// The number of term `w`.
    fn term(&self, w: &str) -> Option<u32> {
        let i = self.vocab.binary_search_by(|(k, _)| (**k).cmp(w)).ok()?;
        self.vocab.get(i).map(|(_, id)| *id)
    }

    /// The terms `w` is the beginning of (`mongo` → `mongodb`), at most
    /// [`MAX_PREFIXED`], shortest first.
    fn prefixed(&self, w: &str) -> Vec<u32> {
        let start = self.vocab.partition_point(|(k, _)| &**k <= w);
        let mut found: Vec<(usize, u32)> = self.vocab[start..]
            .iter()
            .take_while(|(k, _)| k.starts_with(w))
            .map(|(k, id)| (k.len(), *id))
            .collect();
        found.sort_unstable();
        found.truncate(MAX_PREFIXED);
        found.into_iter().map(|(_, id)| id).collect()
    }

    /// The tools that best match `query`, best first, at most `limit`.
    /// Tools matching no word of the query are not returned; ties keep the
    /// order the tools were added in.
    pub fn search(&self, query: &str, limit: usize) -> Vec<IndexHit> {
        if limit == 0 || self.ids.is_empty() {
            return Vec::new();
        }
        let r = &self.ranking;
        let groups = groups(query, r, |w| self.term(w), |w| self.prefixed(w));
        let n = self.ids.len();
        let servers = self.servers.offsets.len().saturating_sub(1);
        // Per tool: its score from its own fields, and which query words
        // it matched (a bit each); the same per server.
        let mut total = vec![0f32; n];
        let mut matched = vec![0u64; n];
        let mut best = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut server_total = vec![0f32; servers];
        let mut server_matched = vec![0u64; servers];
        let mut server_best = vec![0f32; servers];
        let mut named = vec![false; n];
        let mut name_matched = vec![0u16; n];
        let mut phrase: Vec<(u32, f32, bool)> = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let bit = 1u64 << g.min(63);
            for (terms, weight) in group {
                let share = weight / terms.len() as f32;
                // A phrase's words add up; alternatives take the best.
                phrase.clear();
                for &t in terms {
                    phrase.extend(self.tools.row(t).map(|(d, s, name)| (d, s * share, name)));
                }
                if terms.len() > 1 {
                    phrase.sort_unstable_by_key(|p| p.0);
                }
                let mut i = 0;
                while i < phrase.len() {
                    let d = phrase[i].0;
                    let mut s = 0.0;
                    let mut in_name = false;
                    while let Some(&(pd, ps, pn)) = phrase.get(i)
                        && pd == d
                    {
                        s += ps;
                        in_name |= pn;
                        i += 1;
                    }
                    let b = &mut best[d as usize];
                    if *b == 0.0 {
                        touched.push(d);
                    }
                    if s > *b {
                        *b = s;
                        named[d as usize] = in_name;
                    }
                }
                for &t in terms {
                    for (s, v, _) in self.servers.row(t) {
                        let b = &mut server_best[s as usize];
                        *b = b.max(v * share);
                    }
                }
            }
            for d in touched.drain(..) {
                let d = d as usize;
                total[d] += best[d];
                matched[d] |= bit;
                name_matched[d] += u16::from(named[d]);
                best[d] = 0.0;
                named[d] = false;
            }
            for s in 0..servers {
                if server_best[s] > 0.0 {
                    server_total[s] += server_best[s];
                    server_matched[s] |= bit;
                    server_best[s] = 0.0;
                }
            }
        }
        let words = groups.len().clamp(1, 64) as f32;
        // The lexical score of each tool, in `total`.
        let mut best_lexical = 0f32;
        for (d, score) in total.iter_mut().enumerate() {
            let server = self.tool_server.get(d).copied().unwrap_or(0) as usize;
            let s = *score + r.server * server_total.get(server).copied().unwrap_or(0.0);
            *score = 0.0;
            if s > 0.0 {
                let m = matched[d] | server_matched.get(server).copied().unwrap_or(0);
                let coverage = (m.count_ones() as f32 / words).powf(r.coverage);
                // How much of the tool's name the query said.
                let name = f32::from(name_matched[d]) / f32::from(self.names[d].max(1));
                *score = s * coverage * (1.0 + r.name * name.min(1.0));
                best_lexical = best_lexical.max(*score);
            }
        }
        let mut hits: Vec<(f32, u32)> = Vec::new();
        let query_meaning = (r.meaning > 0.0)
            .then(|| {
                self.meaning.query(query, |w| {
                    let t = self.term(w)?;
                    self.tools.idf.get(t as usize).copied()
                })
            })
            .flatten();
        match query_meaning {
            Some(q) => {
                // Both signals, each scaled to this query's best: a tool
                // ranks by both, or by its meaning alone when close enough.
                let scale = 1.0 / best_lexical.max(f32::MIN_POSITIVE);
                let mut best_meaning = 0f32;
                let closeness: Vec<f32> = (0..total.len())
                    .map(|d| {
                        let c = self.meaning.closeness(&q, d).max(0.0);
                        best_meaning = best_meaning.max(c);
                        c
                    })
                    .collect();
                for (d, (&lexical, &c)) in total.iter().zip(&closeness).enumerate() {
                    if lexical > 0.0 || c >= r.meaning_floor {
                        let s = (1.0 - r.meaning) * lexical * scale
                            + r.meaning * c / best_meaning.max(f32::MIN_POSITIVE);
                        hits.push((s, d as u32));
                    }
                }
            }
            None => hits.extend(
                total
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s > 0.0)
                    .map(|(d, &s)| (s, d as u32)),
            ),
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
}
