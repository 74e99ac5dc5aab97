//! Static word vectors: what a word means, as a point in a small space where
//! words of close meaning lie close (*unstage* near *reset*, *busy* near
//! *availability*), so that a request and a tool that say one thing in
//! different words still meet.
//!
//! The vectors are wordpiece embeddings distilled from the sentence
//! transformer all-MiniLM-L6-v2 (model2vec's recipe; `xtask/embed/distill.py`
//! in the repository says how, `cargo xtask search-embed` makes them again),
//! shipped in the crate as `minilm.wpe` and read at the first use: nothing is
//! downloaded and no model runs. A word is split into the model's wordpieces
//! (greedy longest match, `unstage` → `un` `##sta` `##ge`) and its vector is
//! the mean of theirs.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
#[cfg(feature = "semantic")]
use std::sync::OnceLock;

use super::index::WordHasher;

/// The distilled vectors (see the module docs and the crate's
/// `src/search/minilm.wpe`): 27,558 wordpieces of all-MiniLM-L6-v2's
/// uncased vocabulary, each 128 four-bit values and a scale.
#[cfg(feature = "semantic")]
static MINILM: &[u8] = include_bytes!("minilm.wpe");

/// The longest word split into wordpieces (BERT's own limit); a longer one
/// has no vector.
const MAX_WORD: usize = 100;

/// A table of wordpiece vectors.
pub(crate) struct WordVectors {
    dims: usize,
    /// Each wordpiece (a word's continuation written `##piece`) → its row.
    pieces: HashMap<&'static str, u32, BuildHasherDefault<WordHasher>>,
    /// Row-major four-bit values (-7 to 7), `dims / 2` bytes per row, the
    /// even dimension in the low half of each byte.
    values: &'static [u8],
    scales: Vec<f32>,
}

impl std::fmt::Debug for WordVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordVectors")
            .field("dims", &self.dims)
            .field("pieces", &self.scales.len())
            .finish()
    }
}

impl WordVectors {
    /// The vectors shipped with the crate, read at the first call; `None`
    /// without the `semantic` feature.
    pub(crate) fn minilm() -> Option<&'static WordVectors> {
        #[cfg(feature = "semantic")]
        {
            static TABLE: OnceLock<Option<WordVectors>> = OnceLock::new();
            TABLE.get_or_init(|| WordVectors::parse(MINILM)).as_ref()
        }
        #[cfg(not(feature = "semantic"))]
        None
    }

    /// Reads a table in the format `distill.py` writes: `MCPWPE4\0`, `u32`
    /// dimensions (even), `u32` count, the pieces (a `u8` length and the
    /// bytes each), `count × dims / 2` bytes of four-bit values (two's
    /// complement, the even dimension in the low half), `count` `f32`
    /// scales, all little endian. `None` if `bytes` is not one.
    pub(crate) fn parse(bytes: &'static [u8]) -> Option<WordVectors> {
        let rest = bytes.strip_prefix(b"MCPWPE4\0")?;
        let u32_at = |b: &[u8], at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
        };
        let dims = u32_at(rest, 0)? as usize;
        let count = u32_at(rest, 4)? as usize;
        let mut at = 8;
        let mut pieces = HashMap::with_capacity_and_hasher(count, Default::default());
        for row in 0..count {
            let len = usize::from(*rest.get(at)?);
            let piece = std::str::from_utf8(rest.get(at + 1..at + 1 + len)?).ok()?;
            pieces.insert(piece, u32::try_from(row).ok()?);
            at += 1 + len;
        }
        let values = rest.get(at..at + count.checked_mul(dims / 2)?)?;
        at += values.len();
        let scales = rest
            .get(at..at + count * 4)?
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        (dims > 0 && dims.is_multiple_of(2)).then_some(WordVectors {
            dims,
            pieces,
            values,
            scales,
        })
    }

    /// How many values a vector has.
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Whether `word` (lowercase) is one wordpiece of the vocabulary, a
    /// word the model knows whole.
    pub(crate) fn knows(&self, word: &str) -> bool {
        self.pieces.contains_key(word)
    }

    /// Adds `weight` times the vector of `word` (lowercase) to `out` (of
    /// [`dims`](Self::dims) values); whether the word has one (every piece
    /// of it is known).
    pub(crate) fn add_word(&self, word: &str, weight: f32, out: &mut [f32]) -> bool {
        if word.is_empty() || word.len() > MAX_WORD || !word.is_ascii() {
            return false;
        }
        let mut rows = [0u32; MAX_WORD];
        let mut n = 0;
        let mut start = 0;
        let mut key = String::with_capacity(word.len() + 2);
        while start < word.len() {
            let mut end = word.len();
            let row = loop {
                if end == start {
                    return false;
                }
                key.clear();
                if start > 0 {
                    key.push_str("##");
                }
                key.push_str(&word[start..end]);
                if let Some(&row) = self.pieces.get(key.as_str()) {
                    break row;
                }
                end -= 1;
            };
            rows[n] = row;
            n += 1;
            start = end;
        }
        let share = weight / n as f32;
        let half = self.dims / 2;
        for &row in &rows[..n] {
            let at = row as usize * half;
            let scale = self.scales.get(row as usize).copied().unwrap_or(0.0) * share;
            let Some(values) = self.values.get(at..at + half) else {
                return false;
            };
            for (o, &b) in out.chunks_exact_mut(2).zip(values) {
                // Each half byte, sign-extended.
                o[0] += f32::from(((b << 4) as i8) >> 4) * scale;
                o[1] += f32::from((b as i8) >> 4) * scale;
            }
        }
        true
    }
}

/// Scales `v` to length 1 (a zero vector stays zero); its former length.
pub(crate) fn normalize(v: &mut [f32]) -> f32 {
    let len = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if len > 0.0 {
        for x in v.iter_mut() {
            *x /= len;
        }
    }
    len
}

#[cfg(all(test, feature = "semantic"))]
mod tests {
    use super::*;

    fn vector(words: &[&str]) -> Vec<f32> {
        let t = WordVectors::minilm().expect("the shipped table reads");
        let mut v = vec![0.0; t.dims()];
        for w in words {
            assert!(t.add_word(w, 1.0, &mut v), "{w}");
        }
        normalize(&mut v);
        v
    }

    fn cos(a: &[&str], b: &[&str]) -> f32 {
        vector(a).iter().zip(vector(b)).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn the_shipped_table_reads_and_splits_words_into_pieces() {
        let t = WordVectors::minilm().expect("the shipped table reads");
        assert_eq!(t.dims(), 128);
        let mut v = vec![0.0; t.dims()];
        assert!(t.add_word("unstage", 1.0, &mut v));
        assert!(v.iter().any(|x| *x != 0.0));
        assert!(!t.add_word("ünïcode", 1.0, &mut v));
        assert!(!t.add_word(&"a".repeat(MAX_WORD + 1), 1.0, &mut v));
        assert!(WordVectors::parse(b"MCPWPE4\0\x01").is_none());
    }

    #[test]
    fn words_of_close_meaning_are_close() {
        assert!(cos(&["delete"], &["remove"]) > cos(&["delete"], &["calendar"]));
        assert!(cos(&["busy"], &["available"]) > cos(&["busy"], &["repository"]));
        assert!(cos(&["rollback"], &["revert"]) > cos(&["rollback"], &["screenshot"]));
    }
}
