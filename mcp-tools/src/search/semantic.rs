//! The meaning of tools and queries: each tool's words as one vector (the
//! word vectors of [`embed`](super::embed), weighted by field and by how
//! rare each word is in the catalog), compared with the query's by cosine.
//! Without word vectors (the `semantic` feature off) nothing here does
//! anything: the ranking is lexical alone.

use super::embed::{WordVectors, normalize};
use super::{FIELDS, MAX_QUERY_LEN, MAX_QUERY_TERMS, Ranking, text};

/// The word vectors the index uses, if the crate has them.
type Vectors = Option<&'static WordVectors>;

/// The builder's side: one vector per term (from the word it was first met
/// as).
pub(crate) struct Meanings {
    vectors: Vectors,
    /// `dims` values per term, in term order.
    terms: Vec<f32>,
}

impl Default for Meanings {
    fn default() -> Self {
        Meanings {
            vectors: WordVectors::minilm(),
            terms: Vec::new(),
        }
    }
}

impl Meanings {
    /// Meanings from other word vectors than the crate's.
    pub(crate) fn with(vectors: WordVectors) -> Meanings {
        Meanings {
            vectors: Some(Box::leak(Box::new(vectors))),
            terms: Vec::new(),
        }
    }

    /// Gives the next term the meaning of `word` (zero if it has none).
    pub(crate) fn add_term(&mut self, word: &str) {
        if let Some(v) = self.vectors {
            let start = self.terms.len();
            self.terms.resize(start + v.dims(), 0.0);
            let out = &mut self.terms[start..];
            if v.add_word(word, 1.0, out) {
                normalize(out);
            }
        }
    }

    /// Each tool's meaning: the sum of its terms' vectors, each weighted by
    /// its inverse document frequency and [`Ranking::meaning_fields`] of the
    /// fields it is in, normalized and quantized to int8. `ends` and
    /// `entries` are the builder's: tool `i`'s terms, with their count per
    /// field, end at `ends[i]`.
    pub(crate) fn tools(
        &self,
        r: &Ranking,
        ends: &[u32],
        entries: &[(u32, [u16; FIELDS])],
        idf: &[f32],
    ) -> Meaning {
        let Some(v) = self.vectors else {
            return Meaning::default();
        };
        let dims = v.dims();
        let mut values = Vec::with_capacity(ends.len() * dims);
        let mut scales = Vec::with_capacity(ends.len());
        let mut sum = vec![0f32; dims];
        // One tool's terms that have a meaning: their vector, and its
        // weight.
        let mut weighted: Vec<(&[f32], f32)> = Vec::new();
        let mut start = 0;
        for &end in ends {
            weighted.clear();
            for &(t, counts) in entries.get(start..end as usize).unwrap_or_default() {
                let field: f32 = (0..FIELDS)
                    .map(|f| r.meaning_fields[f] * f32::from(counts[f]))
                    .sum();
                let t = t as usize;
                if field > 0.0
                    && let Some(&idf) = idf.get(t)
                    && let Some(vector) = self.terms.get(t * dims..(t + 1) * dims)
                {
                    weighted.push((vector, field * idf));
                }
            }
            start = end as usize;
            sum_weighted(&mut sum, &weighted);
            normalize(&mut sum);
            scales.push(quantize(&sum, &mut values));
        }
        let n = ends.len() as f32;
        Meaning {
            vectors: Some(v),
            values,
            scales,
            rare: (1.0 + (n + 0.5) / 0.5).ln(),
        }
    }
}

/// The index's side: each tool's meaning, and the query's.
#[derive(Default)]
pub(crate) struct Meaning {
    vectors: Vectors,
    /// `dims` int8 values per tool.
    values: Vec<i8>,
    /// Per tool: what one unit of its values is worth.
    scales: Vec<f32>,
    /// The inverse document frequency of a word no tool says.
    rare: f32,
}

impl Meaning {
    /// The heap the tools' meanings hold, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.values.capacity() + self.scales.capacity() * 4
    }

    /// The meaning of `query`: its words' vectors, each weighted by `idf`
    /// of its term (a word no tool says counts as the rarest, or not at all
    /// if it is no whole wordpiece of the model), normalized
    /// and quantized as the tools' are. `None` without word vectors or when
    /// no word of the query has one.
    pub(crate) fn query(
        &self,
        query: &str,
        idf: impl Fn(&str) -> Option<f32>,
    ) -> Option<QueryMeaning> {
        let v = self.vectors?;
        let mut end = query.len().min(MAX_QUERY_LEN);
        while !query.is_char_boundary(end) {
            end -= 1;
        }
        let mut out = vec![0f32; v.dims()];
        let mut stem = String::new();
        let mut n = 0;
        let mut any = false;
        text::words(&query[..end], |w| {
            if let Some(t) = text::term(w, &mut stem) {
                // A word no tool says counts as the rarest, if the model
                // knows it whole: one it only knows in pieces (`zzzqqq`)
                // means nothing it can tell.
                let weight = idf(t).or_else(|| v.knows(w).then_some(self.rare));
                if let Some(weight) = weight {
                    any |= v.add_word(w, weight, &mut out);
                }
                n += 1;
            }
            n < MAX_QUERY_TERMS
        });
        if !any || normalize(&mut out) == 0.0 {
            return None;
        }
        let mut values = Vec::with_capacity(out.len());
        let scale = quantize(&out, &mut values);
        Some(QueryMeaning {
            values: values.into_iter().map(i16::from).collect(),
            scale,
        })
    }

    /// The cosine of `query` (from [`query`](Self::query)) and tool `d`.
    pub(crate) fn closeness(&self, query: &QueryMeaning, d: usize) -> f32 {
        let dims = query.values.len();
        let (Some(values), Some(scale)) = (
            self.values.get(d * dims..(d + 1) * dims),
            self.scales.get(d),
        ) else {
            return 0.0;
        };
        // In integers: their sum does not depend on its order, so the
        // compiler adds many side by side.
        let dot: i32 = values
            .iter()
            .zip(&query.values)
            .map(|(&v, &q)| i32::from(v) * i32::from(q))
            .sum();
        dot as f32 * scale * query.scale
    }
}

/// A query's meaning, quantized as the tools' are (held as `i16`, which
/// multiplies in vector registers without widening each value).
pub(crate) struct QueryMeaning {
    values: Vec<i16>,
    scale: f32,
}

/// Sets `sum` to the sum of `rows`' vectors (each `sum.len()` values),
/// each times its weight, added one after another from zero: a block of
/// dimensions at a time, its sums held in registers while every row is
/// added (the same sums, in the same order, as adding each whole row to
/// `sum` in turn, for less reading and writing of it).
fn sum_weighted(sum: &mut [f32], rows: &[(&[f32], f32)]) {
    const BLOCK: usize = 32;
    let (blocks, rest) = sum.as_chunks_mut::<BLOCK>();
    for (b, out) in blocks.iter_mut().enumerate() {
        let mut acc = [0f32; BLOCK];
        for &(row, w) in rows {
            let Some(row) = row.as_chunks::<BLOCK>().0.get(b) else {
                continue;
            };
            for (a, x) in acc.iter_mut().zip(row) {
                *a += w * x;
            }
        }
        *out = acc;
    }
    rest.iter_mut().for_each(|x| *x = 0.0);
    for &(row, w) in rows {
        let row = row.as_chunks::<BLOCK>().1;
        for (s, x) in rest.iter_mut().zip(row) {
            *s += w * x;
        }
    }
}

/// Appends `v` (finite values) to `out` as int8 values; what one unit of
/// them is worth.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    // The largest magnitude, found among their bits: those of magnitudes
    // order as their values do, and integers compare four at a time.
    let max = f32::from_bits(v.iter().map(|x| x.abs().to_bits()).max().unwrap_or(0));
    let inv = if max > 0.0 { 127.0 / max } else { 0.0 };
    // Rounded half away from zero: truncated toward zero after adding a
    // half of the value's sign.
    out.extend(v.iter().map(|x| truncate(x * inv + 0.5f32.copysign(*x))));
    max / 127.0
}

/// `y` truncated toward zero, for `|y|` up to 127.5 (the values
/// [`quantize`] makes): what `y as i8` gives, in arithmetic that vector
/// registers do four values at a time (the cast does one at a time, as it
/// must saturate).
#[inline(always)]
fn truncate(y: f32) -> i8 {
    // 1.5 × 2²³: a magnitude below 2²² added to it is rounded to a whole
    // number (to even at a half), and that number is in its low bits.
    const M: f32 = 12_582_912.0;
    let a = y.abs();
    let a = if a < 127.0 { a } else { 127.0 };
    let nearest = (a + M) - M;
    let whole = if nearest > a { nearest - 1.0 } else { nearest };
    let n = ((whole + M).to_bits() as i32).wrapping_sub(M.to_bits() as i32);
    // Negated when `y` is negative (`s` all ones): `(n ^ -1) + 1`.
    let s = (y.to_bits() as i32) >> 31;
    ((n ^ s) - s) as i8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_as_the_plain_cast_rounds() {
        let plain = |v: &[f32]| -> (Vec<i8>, f32) {
            let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let inv = if max > 0.0 { 127.0 / max } else { 0.0 };
            let q = v.iter().map(|x| (x * inv + 0.5f32.copysign(*x)) as i8);
            (q.collect(), max / 127.0)
        };
        let mut seed = 0x2545_f491_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for round in 0..3000 {
            let scale = [1.0f32, 1e-3, 3.0, 1e-30, 7.5][round % 5];
            let v: Vec<f32> = (0..128)
                .map(|i| {
                    let r = next();
                    if round % 3 == 0 && i % 5 == 0 {
                        // Halves and whole numbers of the scale's units.
                        ((r % 512) as f32 - 256.0) / 2.0 * scale
                    } else {
                        ((r as f32 / u32::MAX as f32) * 2.0 - 1.0) * scale
                    }
                })
                .collect();
            let mut fast = Vec::new();
            let unit = quantize(&v, &mut fast);
            let (slow, slow_unit) = plain(&v);
            assert_eq!(fast, slow, "round {round}");
            assert_eq!(unit.to_bits(), slow_unit.to_bits());
        }
        let mut zero = Vec::new();
        assert_eq!(quantize(&[0.0, -0.0], &mut zero), 0.0);
        assert_eq!(zero, [0, 0]);
        for y in [
            -127.5f32, -127.4, -3.5, -0.5, -0.4, 0.0, 0.49, 0.5, 2.5, 126.5, 127.5,
        ] {
            assert_eq!(truncate(y), y as i8, "{y}");
        }
    }
}
