//! Result budgets: the most tokens of a tool's result that reach the model.
//!
//! Past its budget, the text the model reads ([`ToolOutput::text`]) is cut
//! at a clean boundary and ends with a note saying how much was left out
//! and how to read on: the `read_result` tool with the result's id and the
//! offset where it stopped, the full text being kept in the toolbox's
//! bounded store; or, when the store cannot keep it, the server's resource
//! link if the result has one. [`ToolOutput::result`] is never cut.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_proto::schema::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::error::ToolError;
use crate::server::Server;
use crate::tokens::{Runs, estimate_tokens};
use crate::tool::ToolOutput;
use crate::toolbox::ToolboxBuilder;

/// The smallest budget: a smaller one is raised to it (the note alone
/// takes some 50 tokens).
pub const MIN_RESULT_BUDGET: usize = 100;
/// Default [`ToolboxBuilder::kept_results`](crate::ToolboxBuilder::kept_results):
/// how many cut results the store keeps.
pub const DEFAULT_KEPT_RESULTS: usize = 64;
/// Default bytes of text the store keeps, all results together (64 MiB).
pub const DEFAULT_KEPT_BYTES: usize = 64 << 20;

/// How a result was cut to its budget ([`ToolOutput::cut`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cut {
    /// The budget, in tokens.
    pub budget: usize,
    /// Bytes of the folded text the model reads (before the note).
    pub shown_bytes: usize,
    /// Bytes of the whole folded text.
    pub total_bytes: usize,
    /// Estimated tokens of the whole folded text.
    pub total_tokens: usize,
    /// The id `read_result` takes for the rest, if the store keeps it.
    pub id: Option<String>,
}

/// Budgets of one server: its default and per-tool ones (by the server's
/// own tool names).
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerBudgets {
    pub(crate) default: Option<usize>,
    pub(crate) tools: HashMap<String, usize>,
}

impl ServerBudgets {
    /// Whether any budget is set.
    pub(crate) fn any(&self) -> bool {
        self.default.is_some() || !self.tools.is_empty()
    }

    /// The budget of `tool`: its own, else the server's, else `fallback`.
    pub(crate) fn of(&self, tool: &str, fallback: Option<usize>) -> Option<usize> {
        self.tools
            .get(tool)
            .copied()
            .or(self.default)
            .or(fallback)
            .map(|b| b.max(MIN_RESULT_BUDGET))
    }
}

/// Cut results, kept for `read_result`: at most `max_results` of them and
/// `max_bytes` of text together; the least recently used goes first. A
/// text larger than `max_bytes` is not kept.
///
/// Ids are 64 random bits (per-process random keys hashing a counter): a
/// conversation cannot read another's results sharing the toolbox unless it
/// was shown the id.
pub(crate) struct ResultStore {
    max_results: usize,
    max_bytes: usize,
    keys: RandomState,
    counter: AtomicU64,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    /// Least recently used first.
    entries: VecDeque<Entry>,
    bytes: usize,
}

struct Entry {
    id: String,
    text: Arc<str>,
    budget: usize,
}

impl std::fmt::Debug for ResultStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultStore")
            .field("max_results", &self.max_results)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl ResultStore {
    pub(crate) fn new(max_results: usize, max_bytes: usize) -> Self {
        ResultStore {
            max_results,
            max_bytes,
            keys: RandomState::new(),
            counter: AtomicU64::new(0),
            kept: Mutex::new(Kept::default()),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `text`, evicting the least recently used as needed; its id, or
    /// `None` if the store keeps nothing this large.
    fn put(&self, text: Arc<str>, budget: usize) -> Option<String> {
        if self.max_results == 0 || text.len() > self.max_bytes {
            return None;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let id = format!("r{:016x}", self.keys.hash_one(n));
        let mut kept = self.kept();
        while kept.entries.len() >= self.max_results || kept.bytes + text.len() > self.max_bytes {
            let Some(old) = kept.entries.pop_front() else {
                break;
            };
            kept.bytes -= old.text.len();
        }
        kept.bytes += text.len();
        kept.entries.push_back(Entry {
            id: id.clone(),
            text,
            budget,
        });
        Some(id)
    }

    /// The text kept under `id` and its budget, now the most recently used.
    fn get(&self, id: &str) -> Option<(Arc<str>, usize)> {
        let mut kept = self.kept();
        let at = kept.entries.iter().position(|e| e.id == id)?;
        let e = kept.entries.remove(at)?;
        let found = (e.text.clone(), e.budget);
        kept.entries.push_back(e);
        Some(found)
    }

    /// Whether no result is kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.kept().entries.is_empty()
    }

    /// How many results are kept, and their bytes.
    #[cfg(test)]
    fn len_and_bytes(&self) -> (usize, usize) {
        let kept = self.kept();
        (kept.entries.len(), kept.bytes)
    }
}

/// `out` with its text cut to `budget` tokens (the whole text kept in
/// `store` for `read_name`), or unchanged if it fits.
pub(crate) fn apply(
    mut out: ToolOutput,
    budget: usize,
    store: &ResultStore,
    read_name: &str,
) -> ToolOutput {
    let link = resource_link(&out.result);
    if let Some((text, cut)) = cut_text(&out.text, budget, store, read_name, link) {
        out.text = text;
        out.cut = Some(Box::new(cut));
    }
    out
}

/// A failed call's explanation cut to `budget` like a result.
pub(crate) fn apply_to_error(
    error: ToolError,
    budget: usize,
    store: &ResultStore,
    read_name: &str,
) -> ToolError {
    match error {
        ToolError::ToolFailed {
            tool,
            message,
            result,
        } => {
            let message = cut_text(&message, budget, store, read_name, resource_link(&result))
                .map_or(message, |(text, _)| text);
            ToolError::ToolFailed {
                tool,
                message,
                result,
            }
        }
        other => other,
    }
}

/// The first resource link of a result: where the server says the whole
/// content is.
fn resource_link(result: &CallToolResult) -> Option<String> {
    result.content.iter().find_map(|b| match b {
        ContentBlock::ResourceLink(r) => Some(r.uri.clone()),
        _ => None,
    })
}

/// `text` cut to `budget` tokens with the note, or `None` if it fits.
fn cut_text(
    text: &str,
    budget: usize,
    store: &ResultStore,
    read_name: &str,
    link: Option<String>,
) -> Option<(String, Cut)> {
    // An estimate never exceeds the length in bytes.
    if text.len() <= budget {
        return None;
    }
    let total_tokens = estimate_tokens(text);
    if total_tokens <= budget {
        return None;
    }
    let whole: Arc<str> = Arc::from(text);
    let id = store.put(whole.clone(), budget);
    let page = page(&whole, 0, budget, id.as_deref(), read_name, link.as_deref());
    let cut = Cut {
        budget,
        shown_bytes: page.shown,
        total_bytes: whole.len(),
        total_tokens,
        id,
    };
    Some((page.text, cut))
}

/// One page of a kept text: the text and how far it reaches.
struct Page {
    text: String,
    shown: usize,
}

/// `text[from..]` cut to `budget` tokens, note included: up to a clean
/// boundary, then the note saying how to read on.
fn page(
    text: &str,
    from: usize,
    budget: usize,
    id: Option<&str>,
    read_name: &str,
    link: Option<&str>,
) -> Page {
    let rest = text.get(from..).unwrap_or_default();
    // Reads only as far as the budget reaches, not the whole rest.
    if fit(rest, budget) == rest.len() {
        return Page {
            text: rest.to_owned(),
            shown: text.len(),
        };
    }
    // The note with the largest numbers it can hold bounds its cost.
    let reserve = estimate_tokens(&note(
        text.len(),
        text.len(),
        text.len(),
        id,
        read_name,
        link,
    ));
    let limit = budget.saturating_sub(reserve).max(1);
    let fits = fit(rest, limit);
    // Every page moves on by a character at least.
    let end = match clean_end(rest, fits) {
        0 => fits.max(rest.chars().next().map_or(0, char::len_utf8)),
        e => e,
    };
    let end = from + end;
    let mut out = String::with_capacity(end - from + 200);
    out.push_str(text.get(from..end).unwrap_or_default());
    out.push_str(&note(from, end, text.len(), id, read_name, link));
    Page {
        text: out,
        shown: end,
    }
}

/// What the model reads after a cut page.
fn note(
    from: usize,
    end: usize,
    total: usize,
    id: Option<&str>,
    read_name: &str,
    link: Option<&str>,
) -> String {
    let shown = if from == 0 {
        format!("the first {end} of its {total} bytes")
    } else {
        format!("bytes {from} to {end} of its {total}")
    };
    let more = match (id, link) {
        (Some(id), _) => {
            format!("To read on, call {read_name} with {{\"id\": \"{id}\", \"offset\": {end}}}.")
        }
        (None, Some(uri)) => format!("The server gives the whole content as the resource {uri}."),
        (None, None) => "The rest is not available.".to_owned(),
    };
    format!("\n\n[Result cut to fit: this is {shown}. {more}]")
}

/// The end (a char boundary) of the longest prefix of `text` whose estimate
/// is at most `limit` tokens.
fn fit(text: &str, limit: usize) -> usize {
    let mut used = 0;
    for run in Runs::new(text) {
        if used + run.tokens <= limit {
            used += run.tokens;
            continue;
        }
        // Inside this run: the longest prefix of it within what is left.
        // A prefix of `k` bytes costs at least `k / 16` tokens (no run
        // counts fewer), so only that window is searched.
        let left = limit - used;
        let mut window_end = run.end.min(run.start + (left + 1) * 16);
        while !text.is_char_boundary(window_end) {
            window_end -= 1;
        }
        let piece = text.get(run.start..window_end).unwrap_or_default();
        let bounds: Vec<usize> = piece
            .char_indices()
            .map(|(i, _)| i)
            .skip(1)
            .chain(std::iter::once(piece.len()))
            .collect();
        let fits = bounds
            .partition_point(|&k| estimate_tokens(piece.get(..k).unwrap_or_default()) <= left);
        return run.start
            + fits
                .checked_sub(1)
                .and_then(|i| bounds.get(i))
                .copied()
                .unwrap_or(0);
    }
    text.len()
}

/// Where to cut `text` at or before `end`: after the last line break, else
/// at the last space, when either keeps at least half; else at `end`, moved
/// back off a combining mark, joiner or variation selector (a grapheme
/// cluster cheap to see).
fn clean_end(text: &str, end: usize) -> usize {
    if end >= text.len() {
        return text.len();
    }
    let kept = text.get(..end).unwrap_or_default();
    if let Some(nl) = kept.rfind('\n').filter(|&i| i + 1 >= end / 2 && i > 0) {
        return nl + 1;
    }
    if let Some(sp) = kept.rfind([' ', '\t']).filter(|&i| i >= end / 2 && i > 0) {
        return sp;
    }
    let mut end = end;
    while end > 0 {
        let next = text.get(end..).and_then(|s| s.chars().next());
        let prev = text.get(..end).and_then(|s| s.chars().next_back());
        if next.is_some_and(extends_cluster) || prev == Some('\u{200d}') {
            end -= prev.map_or(1, char::len_utf8);
        } else {
            break;
        }
    }
    end
}

/// Whether `c` belongs to the grapheme cluster before it: combining marks,
/// the zero-width joiner, variation selectors, emoji skin tones.
fn extends_cluster(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
        | 0x200D | 0xFE00..=0xFE0F | 0xE0100..=0xE01EF | 0x1F3FB..=0x1F3FF)
}

/// `read_result`: the next page of a kept result.
pub(crate) fn read_result(
    store: &ResultStore,
    read_name: &str,
    arguments: &Value,
) -> Result<ToolOutput, ToolError> {
    let invalid = |message: String| ToolError::InvalidArguments {
        tool: read_name.to_owned(),
        message,
    };
    let id = arguments
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("`id` (a string) is required".into()))?;
    let offset = match arguments.get("offset") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_u64()
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| invalid("`offset` must be a whole number of bytes".into()))?,
    };
    let (text, budget) = store.get(id).ok_or_else(|| {
        invalid(format!(
            "no kept result has the id {id:?}: it was never given, or it is gone (only the most recent results are kept)"
        ))
    })?;
    if offset >= text.len() {
        return Err(invalid(format!(
            "offset {offset} is past the end of the result ({} bytes)",
            text.len()
        )));
    }
    // An offset inside a character starts at that character.
    let mut from = offset;
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let page = page(&text, from, budget, Some(id), read_name, None);
    Ok(ToolOutput::text(page.text))
}

/// A toolbox's result budget settings, from its builder.
#[derive(Debug, Clone)]
pub(crate) struct ResultsConfig {
    pub(crate) default: Option<usize>,
    kept_results: usize,
    kept_bytes: usize,
}

impl Default for ResultsConfig {
    fn default() -> Self {
        ResultsConfig {
            default: None,
            kept_results: DEFAULT_KEPT_RESULTS,
            kept_bytes: DEFAULT_KEPT_BYTES,
        }
    }
}

impl ResultsConfig {
    /// The store for cut results.
    pub(crate) fn store(&self) -> ResultStore {
        ResultStore::new(self.kept_results, self.kept_bytes)
    }
}

impl ToolboxBuilder {
    /// The most tokens of any tool's result that reach the model (default:
    /// no limit), unless its server or the tool has its own
    /// ([`Server::result_budget`], [`Server::tool_result_budget`]). At least
    /// [`MIN_RESULT_BUDGET`]. Tokens are [estimated](crate::estimate_tokens).
    ///
    /// Past it, [`ToolOutput::text`] is cut at a line (else word) boundary
    /// and ends with a note: how much was shown, and how to read on with
    /// the `read_result` tool (id and offset), which the toolbox then
    /// offers the model and answers itself ([`Toolbox::call`](crate::Toolbox::call)).
    /// [`ToolOutput::result`] keeps the whole result; [`ToolOutput::cut`]
    /// says what was cut. A failed call's explanation
    /// ([`ToolError::ToolFailed`]) is cut the same way.
    pub fn result_budget(mut self, tokens: usize) -> Self {
        self.results.default = Some(tokens);
        self
    }

    /// How many cut results `read_result` can still read, and their bytes
    /// of text together (default [`DEFAULT_KEPT_RESULTS`] and
    /// [`DEFAULT_KEPT_BYTES`]): past either, the least recently read goes.
    /// A result larger than `max_bytes` is not kept; its note then points at
    /// the server's resource link if it has one. `0` results keeps none.
    pub fn kept_results(mut self, max_results: usize, max_bytes: usize) -> Self {
        self.results.kept_results = max_results;
        self.results.kept_bytes = max_bytes;
        self
    }
}

impl Server {
    /// The result budget of this server's tools (see
    /// [`ToolboxBuilder::result_budget`]), over the toolbox's.
    pub fn result_budget(mut self, tokens: usize) -> Self {
        self.budgets.default = Some(tokens);
        self
    }

    /// The result budget of one tool, by the server's own name for it, over
    /// the server's and the toolbox's.
    pub fn tool_result_budget(mut self, tool: impl Into<String>, tokens: usize) -> Self {
        self.budgets.tools.insert(tool.into(), tokens);
        self
    }
}

#[cfg(test)]
mod tests;
