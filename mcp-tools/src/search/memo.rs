//! The builder's memory of words: each word met (lowercased, as written)
//! with the term it gave, so that a word is stemmed and looked up once per
//! index however many tools say it.
//!
//! Almost every word of a catalog is short, and a build looks up every
//! word of every tool (a million for 10,000 tools), so a word of up to 16
//! bytes is held as two machine words in an open-addressing table: found
//! by a multiply and compared in two instructions, with no call and no
//! allocation. A longer word goes to an ordinary map.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::index::WordHasher;

/// The longest word held as a key of its own.
const SHORT: usize = 16;

/// Words → terms (`u32`, any value the caller gives).
#[derive(Default)]
pub(crate) struct WordMemo {
    /// A power of two of slots (or none), at most half of them used.
    slots: Vec<Slot>,
    used: usize,
    /// `slots.len()` is `2^bits`.
    bits: u32,
    long: HashMap<Box<str>, u32, BuildHasherDefault<WordHasher>>,
}

/// One short word (its bytes, zero-padded; `len` 0 for an empty slot) and
/// its value.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: [u64; 2],
    len: u8,
    value: u32,
}

impl WordMemo {
    /// The value remembered for `word` (inlined: it runs for every word
    /// of every tool).
    #[inline(always)]
    pub(crate) fn get(&self, word: &str) -> Option<u32> {
        if word.len() > SHORT {
            return self.long.get(word).copied();
        }
        let key = pack(word.as_bytes());
        let mask = self.slots.len().checked_sub(1)?;
        let mut at = hash(key, self.bits);
        loop {
            let slot = self.slots.get(at)?;
            if slot.len == 0 {
                return None;
            }
            if slot.key == key && usize::from(slot.len) == word.len() {
                return Some(slot.value);
            }
            at = (at + 1) & mask;
        }
    }

    /// Remembers `value` for `word` (which [`get`](Self::get) did not
    /// find).
    pub(crate) fn insert(&mut self, word: &str, value: u32) {
        if word.is_empty() {
            return;
        }
        if word.len() > SHORT {
            self.long.insert(word.into(), value);
            return;
        }
        if (self.used + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let len = u8::try_from(word.len()).unwrap_or(u8::MAX);
        self.place(Slot {
            key: pack(word.as_bytes()),
            len,
            value,
        });
        self.used += 1;
    }

    /// Puts `slot` in the first free slot from its place.
    fn place(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut at = hash(slot.key, self.bits);
        while self.slots[at].len != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
    }

    /// Twice the slots (1,024 at first), every word placed again.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        self.bits = size.trailing_zeros();
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
        for slot in old.into_iter().filter(|s| s.len != 0) {
            self.place(slot);
        }
    }
}

/// A word of at most [`SHORT`] bytes as two little-endian machine words,
/// zero-padded.
fn pack(b: &[u8]) -> [u64; 2] {
    match b.split_at_checked(8) {
        Some((first, rest)) => [load(first), load(rest)],
        None => [load(b), 0],
    }
}

/// Up to eight bytes as one little-endian machine word, zero-padded, read
/// in two overlapping pieces (no loop over the bytes).
#[inline]
fn load(b: &[u8]) -> u64 {
    let n = b.len();
    let four = |i: usize| -> u64 {
        b.get(i..i + 4).map_or(0, |p| {
            u64::from(u32::from_le_bytes([p[0], p[1], p[2], p[3]]))
        })
    };
    let one = |i: usize| b.get(i).map_or(0, |&x| u64::from(x) << (8 * i));
    match n {
        8.. => four(0) | four(4) << 32,
        4..=7 => four(0) | four(n - 4) << (8 * (n - 4)),
        1..=3 => one(0) | one(n / 2) | one(n - 1),
        0 => 0,
    }
}

/// Where a key's probe starts in a table of `2^bits` slots: the top bits of
/// a multiplicative hash (every byte of the key reaches them).
fn hash(key: [u64; 2], bits: u32) -> usize {
    let h = (key[0] ^ key[1].rotate_left(31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_words_of_every_length() {
        let mut m = WordMemo::default();
        let words: Vec<String> = (1..=40)
            .flat_map(|n| {
                [
                    "abcdefghijklmnopqrstuvwxyz0123456789abcd"[..n].to_owned(),
                    "zyxwvutsrqponmlkjihgfedcba9876543210zyxw"[..n].to_owned(),
                ]
            })
            .chain((0..5000).map(|i| format!("w{i}")))
            .collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(m.get(w), None, "{w}");
            m.insert(w, i as u32);
        }
        for (i, w) in words.iter().enumerate() {
            assert_eq!(m.get(w), Some(i as u32), "{w}");
        }
        assert_eq!(m.get("abd"), None);
        assert_eq!(m.get("abcdefghi0"), None);
        assert_eq!(pack(b"abc"), [0x63_62_61, 0]);
        assert_eq!(pack(b"abcde"), [0x65_64_63_62_61, 0]);
    }
}
