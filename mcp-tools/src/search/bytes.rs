//! Byte searches eight bytes at a time, in one machine word (SWAR): the
//! index reads every byte of the text it indexes, and most of those bytes
//! are runs that only need skipping (a word's letters, a JSON string, the
//! spaces of an indented schema).
//!
//! A search is a function that marks, in a little-endian word of eight
//! bytes, the high bit of each byte looked for; only the lowest mark need
//! be exact (marks above it may come from a borrow and are never read).

/// `0x01` in every byte.
pub(crate) const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
pub(crate) const HIGH: u64 = ONES * 0x80;

/// The high bit of each zero byte of `y` (and maybe of bytes after the
/// first zero: the lowest bit set is exact).
#[inline(always)]
pub(crate) fn zeros(y: u64) -> u64 {
    y.wrapping_sub(ONES) & !y & HIGH
}

/// How many bytes of `b` come before the first that `found` marks (see the
/// [module docs](self)); all of them if none is.
#[inline(always)]
pub(crate) fn first_of(b: &[u8], found: impl Fn(u64) -> u64) -> usize {
    let mut chunks = b.chunks_exact(8);
    let mut n = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let hits = found(u64::from_le_bytes(w));
        if hits != 0 {
            return n + (hits.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    // The rest, zero-padded: a mark in the padding is past the end.
    let rest = chunks.remainder();
    let mut w = [0u8; 8];
    w[..rest.len()].copy_from_slice(rest);
    let hits = found(u64::from_le_bytes(w));
    n + ((hits.trailing_zeros() / 8) as usize).min(rest.len())
}
