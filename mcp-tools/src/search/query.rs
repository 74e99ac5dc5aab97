//! A query as groups of alternatives: each query word (or phrase of the
//! concept table) with the terms that match it and how much each counts.

use super::{MAX_QUERY_LEN, MAX_QUERY_TERMS, Ranking, concepts, text};

/// The shortest query word that also matches the longer terms it begins
/// (`mongo` → `mongodb`, `kube` → `kubernetes`, `repo` → `repository`).
const MIN_PREFIX: usize = 4;

/// One query word's ways to match: terms (a phrase is several, which
/// add up), each with a weight. A tool scores the best of them.
pub(crate) type Alternatives = Vec<(Vec<u32>, f32)>;

/// The query's words, each with its ways to match: itself, the words of
/// its concepts (at [`Ranking::same`] or [`Ranking::related`]), and the
/// longer terms it begins (`prefixed`, at [`Ranking::related`]). Two
/// adjacent words that are a phrase of the concept table (`roll back`) are
/// one query word. Words matching no term of the index (`term` gives
/// `None`) are left out.
pub(crate) fn groups(
    query: &str,
    r: &Ranking,
    term: impl Fn(&str) -> Option<u32>,
    prefixed: impl Fn(&str) -> Vec<u32>,
) -> Vec<Alternatives> {
    let mut end = query.len().min(MAX_QUERY_LEN);
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    let mut words: Vec<String> = Vec::new();
    text::terms(&query[..end], MAX_QUERY_TERMS, |t| words.push(t.to_owned()));
    let lookup = |phrase: &str| -> Option<Vec<u32>> { phrase.split(' ').map(&term).collect() };
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
        for (word, same) in concepts::related(&key) {
            if let Some(ids) = lookup(word) {
                alts.push((ids, if *same { r.same } else { r.related }));
            }
        }
        if key.len() >= MIN_PREFIX && !key.contains(' ') {
            for id in prefixed(&key) {
                if !alts.iter().any(|(ids, _)| ids == &[id]) {
                    alts.push((vec![id], r.related));
                }
            }
        }
        seen.push(key);
        if !alts.is_empty() {
            groups.push(alts);
        }
    }
    groups
}
