//! The envelope's fast path: one validating pass over a message's text that
//! records where each envelope member's value is, without building anything.
//!
//! `serde_json` must also skip a `result` or `params` value to find the
//! members after it, and its skipping runs at ~2.4 instructions per byte of
//! string content; the typed decode then reads the same bytes again. Here
//! string content is skipped with `memchr` (SIMD) plus a branch-free check for
//! control characters, so a 1 MiB result costs a fraction of a pass.
//!
//! The scanner accepts a subset of what `serde_json` accepts, never more:
//! plain JSON (RFC 8259) with the same string rules as `serde_json`'s
//! skipping (escapes checked, `\u` needs four hex digits, no raw control
//! characters), nesting up to [`SCAN_DEPTH`]. Anything else (escaped or
//! repeated envelope keys, non-integer ids, invalid JSON) returns `None` and
//! the caller decodes with `serde_json`, which gives the precise error. A
//! property test checks that both paths agree on every message they decode.

use std::ops::Range;

// The envelope's members, as the `serde_json` path names them.
use super::decode::Field as Member;

/// Strings are scanned two words at a time this far before `memchr` takes
/// over (keys, ids, method names and short texts are shorter; past this,
/// SIMD's set-up cost is repaid).
const SHORT: usize = 128;

/// Deepest nesting the fast path follows; a deeper message (up to
/// [`MAX_DEPTH`](super::MAX_DEPTH)) takes the `serde_json` path.
pub(crate) const SCAN_DEPTH: usize = 100;

/// Where each envelope member's value is in the text (whitespace excluded).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Spans {
    pub(super) jsonrpc: Option<Range<usize>>,
    pub(super) id: Option<Range<usize>>,
    pub(super) method: Option<Range<usize>>,
    pub(super) params: Option<Range<usize>>,
    pub(super) result: Option<Range<usize>>,
    pub(super) error: Option<Range<usize>>,
}

/// Scans one JSON object (a JSON-RPC message) that must fill `text` (up to
/// whitespace). `None` if it is not valid JSON, not an object, or uses
/// anything this path leaves to `serde_json`.
///
/// Inlined into its one caller on the hot path: the spans (six ranges) are
/// then not moved through a return slot.
#[inline]
pub(super) fn envelope(text: &[u8]) -> Option<Spans> {
    let mut s = Scanner { b: text, i: 0 };
    let mut spans = Spans::default();
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if s.eat(b'}').is_none() {
        loop {
            s.ws();
            if s.peek()? != b'"' {
                return None;
            }
            // The envelope's own keys are compared as written (a literal
            // with no backslash is a complete string); any other key is
            // scanned as a string.
            let member = match s.known_key() {
                Some(m) => m,
                None => {
                    let (key, escaped) = s.string()?;
                    if escaped {
                        return None;
                    }
                    member_named(text.get(key)?)
                }
            };
            s.ws();
            s.eat(b':')?;
            s.ws();
            let start = s.i;
            s.value(SCAN_DEPTH - 1)?;
            let slot = match member {
                Member::Jsonrpc => &mut spans.jsonrpc,
                Member::Id => &mut spans.id,
                Member::Method => &mut spans.method,
                Member::Params => &mut spans.params,
                Member::Result => &mut spans.result,
                Member::Error => &mut spans.error,
                Member::Other => &mut None,
            };
            if slot.replace(start..s.i).is_some() {
                // A repeated member: leave the rules to serde_json.
                return None;
            }
            if !s.another_member()? {
                break;
            }
        }
    }
    s.ws();
    if s.i != text.len() {
        return None;
    }
    Some(spans)
}

fn member_named(key: &[u8]) -> Member {
    match key {
        b"jsonrpc" => Member::Jsonrpc,
        b"id" => Member::Id,
        b"method" => Member::Method,
        b"params" => Member::Params,
        b"result" => Member::Result,
        b"error" => Member::Error,
        _ => Member::Other,
    }
}

/// The content of a JSON string without escapes (`"abc"` → `abc`).
/// Inlined: see [`Scanner::value`].
#[inline(always)]
pub(super) fn plain_string(text: &[u8]) -> Option<&[u8]> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    (!inner.contains(&b'\\')).then_some(inner)
}

/// A cursor over JSON text that validates as it goes (the grammar of
/// [`envelope`]); also used by the typed fast paths (`CallToolResult`).
pub(crate) struct Scanner<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) i: usize,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `b`.
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Scanner { b, i: 0 }
    }
}

impl Scanner<'_> {
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    pub(crate) fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    #[inline]
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// Skips JSON whitespace. Most calls find none: one comparison.
    #[inline]
    pub(crate) fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if c > b' ' || !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return;
            }
            self.i += 1;
        }
    }

    /// A string, at its opening quote (the caller checked it); returns its
    /// content's span and whether it had escapes.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Option<(Range<usize>, bool)> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            let stop = self.find_stop()?;
            self.i = stop + 1;
            match self.b.get(stop)? {
                b'"' => return Some((start..stop, escaped)),
                b'\\' => {}
                _ => return None, // a control character
            }
            escaped = true;
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.b.get(self.i..self.i + 4)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.i += 4;
                }
                _ => return None,
            }
        }
    }

    /// Where the next `"`, `\\` or control character is, from `i` on.
    /// Short strings (keys, ids, methods: most of them) are scanned 8 bytes
    /// at a time, two words a step; past [`SHORT`] bytes, `memchr` (SIMD)
    /// takes over.
    #[inline(always)]
    fn find_stop(&self) -> Option<usize> {
        let mut at = self.i;
        let end = at.saturating_add(SHORT);
        while at < end {
            let Some(pair) = self.b.get(at..at + 16) else {
                // Fewer than 16 bytes left in the text.
                let rest = self.b.get(at..)?;
                return rest.iter().position(is_special).map(|k| at + k);
            };
            let pair: &[u8; 16] = pair.try_into().ok()?;
            let (low, high) = pair.split_at(8);
            let low = special_bits(u64::from_le_bytes(low.try_into().ok()?));
            if low != 0 {
                return Some(at + (low.trailing_zeros() / 8) as usize);
            }
            let high = special_bits(u64::from_le_bytes(high.try_into().ok()?));
            if high != 0 {
                return Some(at + 8 + (high.trailing_zeros() / 8) as usize);
            }
            at += 16;
        }
        long_stop(self.b, at)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    /// Inlined: see [`value`](Self::value).
    #[inline(always)]
    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// `word` (a constant: compared as a few integer loads, no `memcmp` call).
    #[inline]
    pub(crate) fn literal<const N: usize>(&mut self, word: &[u8; N]) -> Option<()> {
        let end = self.i.checked_add(N)?;
        let got: &[u8; N] = self.b.get(self.i..end)?.try_into().ok()?;
        (got == word).then(|| self.i = end)
    }

    /// At a key's opening quote: the envelope member it names when it is
    /// one of theirs written as is (consumed, up to its closing quote);
    /// otherwise `None` and nothing consumed.
    #[inline]
    fn known_key(&mut self) -> Option<Member> {
        let (found, member) = match self.b.get(self.i + 1)? {
            b'j' => (self.literal(b"\"jsonrpc\""), Member::Jsonrpc),
            b'i' => (self.literal(b"\"id\""), Member::Id),
            b'm' => (self.literal(b"\"method\""), Member::Method),
            b'p' => (self.literal(b"\"params\""), Member::Params),
            b'r' => (self.literal(b"\"result\""), Member::Result),
            b'e' => (self.literal(b"\"error\""), Member::Error),
            _ => return None,
        };
        found.map(|()| member)
    }

    /// After an object member's value: `true` at a `,` (another member
    /// follows), `false` at the object's `}`; `None` for anything else.
    #[inline]
    pub(crate) fn another_member(&mut self) -> Option<bool> {
        self.ws();
        match self.next()? {
            b',' => Some(true),
            b'}' => Some(false),
            _ => None,
        }
    }

    /// An object member's key and its colon, at the key's opening quote.
    #[inline(always)]
    fn key(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.string()?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(())
    }

    /// One value of any kind, at most `depth` levels of arrays and objects
    /// deep. Iterative: the open containers are bits of `open` (1 for an
    /// object), so nesting costs no recursion.
    ///
    /// Inlined into each caller, as are [`number`](Self::number) and
    /// [`plain_string`]: with three callers LLVM's heuristics make all
    /// three functions of their own, which costs every answer's decode a
    /// call per value (~2 % of a small call).
    #[inline(always)]
    pub(crate) fn value(&mut self, depth: usize) -> Option<()> {
        const _: () = assert!(SCAN_DEPTH <= 128, "`open` has a bit per level");
        let mut open: u128 = 0;
        let mut level = 0usize;
        loop {
            // A value is expected here (whitespace before it skipped).
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                c @ (b'{' | b'[') => {
                    level += 1;
                    if level > depth {
                        return None;
                    }
                    let object = c == b'{';
                    open = (open << 1) | u128::from(object);
                    self.i += 1;
                    self.ws();
                    if self.peek()? != if object { b'}' } else { b']' } {
                        if object {
                            self.key()?;
                        }
                        continue;
                    }
                    self.i += 1;
                    level -= 1;
                    open >>= 1;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // After a value: the next member or element, or the ends of
            // the containers it closes.
            loop {
                if level == 0 {
                    return Some(());
                }
                self.ws();
                let object = open & 1 == 1;
                match (self.next()?, object) {
                    (b',', _) => {
                        self.ws();
                        if object {
                            self.key()?;
                        }
                        break;
                    }
                    (b'}', true) | (b']', false) => {
                        level -= 1;
                        open >>= 1;
                    }
                    _ => return None,
                }
            }
        }
    }
}

/// [`Scanner::find_stop`] past the first [`SHORT`] bytes of a string: SIMD
/// search for its end, then a vectorized check for control characters.
/// Kept out of line so the short-string path inlined at every call stays small.
#[inline(never)]
fn long_stop(b: &[u8], at: usize) -> Option<usize> {
    let tail = b.get(at..)?;
    let k = memchr::memchr2(b'"', b'\\', tail)?;
    if has_control(tail.get(..k)?) {
        return None;
    }
    Some(at + k)
}

/// The high bit of each byte of `x` that is `"`, `\\` or below 0x20 (only
/// the lowest set bit is exact: borrows can set bits above the first such
/// byte, never below it, which is all that is used).
#[inline]
pub(crate) fn special_bits(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    zero(x ^ (ONES * u64::from(b'"'))) | zero(x ^ (ONES * u64::from(b'\\'))) | below(x, 0x20)
}

pub(crate) fn is_special(b: &u8) -> bool {
    *b == b'"' || *b == b'\\' || *b < 0x20
}

/// The first `"`, `\\` or control character in `bytes`, a word of 8 bytes
/// at a time (SWAR).
#[cfg(test)]
fn find_special(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let word: [u8; 8] = chunk.try_into().ok()?;
        let hits = special_bits(u64::from_le_bytes(word));
        if hits != 0 {
            return Some(base + (hits.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(is_special)
        .map(|k| base + k)
}

/// Whether `bytes` has a byte below 0x20 (not allowed raw in a JSON string).
/// No early exit, so the compiler vectorizes the loop.
pub(crate) fn has_control(bytes: &[u8]) -> bool {
    bytes
        .chunks(64)
        .any(|chunk| chunk.iter().fold(false, |seen, &b| seen | (b < 0x20)))
}

/// Whether `bytes` has a byte JSON must escape in a string (`"`, `\\`, below
/// 0x20): a word at a time, without stopping at the first. The tail past the
/// last whole word is checked as the last 8 bytes (overlapping), and a string
/// of 4 to 7 bytes (most keys and names) as its first and last 4, so no byte
/// is looked at alone unless the string is shorter than 4.
#[inline]
pub(crate) fn needs_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 8 {
        let mut words = bytes.chunks_exact(8);
        let mut hits = 0;
        for word in &mut words {
            hits |= special_bits(u64::from_le_bytes(word.try_into().unwrap_or([b'"'; 8])));
        }
        if !words.remainder().is_empty() {
            let last = bytes.get(n - 8..).and_then(|w| w.try_into().ok());
            hits |= special_bits(u64::from_le_bytes(last.unwrap_or([b'"'; 8])));
        }
        hits != 0
    } else if n >= 4 {
        let word = |w: Option<&[u8]>| {
            let w: [u8; 4] = w.and_then(|w| w.try_into().ok()).unwrap_or([b'"'; 4]);
            // The four bytes twice: `special_bits` on a 64-bit word.
            let x = u64::from(u32::from_le_bytes(w));
            special_bits(x | (x << 32))
        };
        (word(bytes.get(..4)) | word(bytes.get(n - 4..))) != 0
    } else {
        bytes.iter().any(is_special)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn valid(s: &str) -> bool {
        let mut sc = Scanner {
            b: s.as_bytes(),
            i: 0,
        };
        sc.value(SCAN_DEPTH).is_some() && sc.i == s.len()
    }

    #[test]
    fn values_follow_the_json_grammar() {
        for ok in [
            "0",
            "-0",
            "1.5e+3",
            "-12.25E-2",
            "true",
            "null",
            "\"\"",
            "\"a\\u00e9\\n\"",
            "[]",
            "[1,[2,{}]]",
            "{\"a\":{\"b\":[true,false]}}",
            "\"é\"",
        ] {
            assert!(valid(ok), "{ok}");
            assert!(
                serde_json::from_str::<serde_json::Value>(ok).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "-",
            "tru",
            "nul",
            "\"a",
            "\"\\x\"",
            "\"\\u12g4\"",
            "\"a\tb\"",
            "[1,]",
            "[1 2]",
            "{\"a\"}",
            "{\"a\":1,}",
            "{a:1}",
            "[",
            "{",
        ] {
            assert!(!valid(bad), "{bad}");
            assert!(
                serde_json::from_str::<serde_json::Value>(bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(valid(&deep(SCAN_DEPTH)));
        assert!(!valid(&deep(SCAN_DEPTH + 1)));
    }

    #[test]
    fn envelope_members_are_located() {
        let text = br#" {"jsonrpc":"2.0", "id" : 7,"x":[1,{"y":"}"}],"result":{"a":"b\"c"} } "#;
        let s = envelope(text).unwrap();
        let at = |r: Option<Range<usize>>| std::str::from_utf8(&text[r.unwrap()]).unwrap();
        assert_eq!(at(s.jsonrpc), "\"2.0\"");
        assert_eq!(at(s.id), "7");
        assert_eq!(at(s.result), r#"{"a":"b\"c"}"#);
        assert_eq!(s.method, None);
        // Keys that start like an envelope key are other members.
        let other = br#"{"idx":1,"i":2,"jsonrpcx":3,"resultat":4,"e":5,"id":6,"result":7}"#;
        let s = envelope(other).unwrap();
        let at = |r: Option<Range<usize>>| std::str::from_utf8(&other[r.unwrap()]).unwrap();
        assert_eq!(at(s.id), "6");
        assert_eq!(at(s.result), "7");
        assert_eq!((s.jsonrpc, s.error), (None, None));
        for odd in [
            &br#"{"id":1,"id":2,"result":{}}"#[..],
            br#"{"i\u0064":1,"result":{}}"#,
            br#"{"id":1,"result":{}} x"#,
            br#"[{"id":1}]"#,
        ] {
            assert_eq!(envelope(odd), None, "{}", String::from_utf8_lossy(odd));
        }
    }

    #[test]
    fn special_bytes_are_found_at_every_position() {
        for len in 0..40 {
            let plain = vec![b'a'; len];
            assert_eq!(find_special(&plain), None);
            for at in 0..len {
                for special in [b'"', b'\\', 0x00, 0x1f] {
                    let mut v = plain.clone();
                    v[at] = special;
                    if at + 1 < len {
                        v[at + 1] = b'"';
                    }
                    assert_eq!(find_special(&v), Some(at), "{len} {at} {special}");
                }
            }
        }
        assert_eq!(
            find_special(&[0x20, 0x7f, 0x80, 0xff, b'!', b'#', b'[', b']']),
            None
        );
    }

    proptest::proptest! {
        #[test]
        fn find_special_matches_a_byte_by_byte_search(bytes in proptest::collection::vec(
            proptest::prop_oneof![0x20u8..=0xff, proptest::prelude::Just(b'"'),
                proptest::prelude::Just(b'\\'), 0u8..0x20],
            0..40,
        )) {
            let naive = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            proptest::prop_assert_eq!(find_special(&bytes), naive);
            proptest::prop_assert_eq!(needs_escape(&bytes), naive.is_some());
        }
    }

    /// Every length a short string takes (whole words, a tail, 4 to 7
    /// bytes, under 4), every position, every kind of byte to escape.
    #[test]
    fn needs_escape_sees_every_byte_of_short_strings() {
        // The non-special bytes, UTF-8 sequences included.
        let plain: Vec<u8> = (0x20..=0xffu8)
            .filter(|&b| b != b'"' && b != b'\\')
            .chain("é😀".bytes())
            .collect();
        for len in 0..40 {
            for offset in 0..plain.len() - len {
                assert!(
                    !needs_escape(&plain[offset..offset + len]),
                    "{len} {offset}"
                );
            }
            for at in 0..len {
                for bad in [b'"', b'\\', 0x00, 0x1f] {
                    let mut v = vec![b'a'; len];
                    v[at] = bad;
                    assert!(needs_escape(&v), "{len} {at} {bad}");
                }
            }
        }
    }

    #[test]
    fn control_characters_are_found_anywhere_in_long_strings() {
        let mut s = "a".repeat(1000);
        assert!(!has_control(s.as_bytes()));
        s.insert(777, '\u{1}');
        assert!(has_control(s.as_bytes()));
        // Every control byte, and nothing else (bytes of UTF-8 sequences
        // included), at every offset of a vectorized block.
        let plain: Vec<u8> = (0x20..=0xffu8).chain("é😀".bytes()).collect();
        assert!(!has_control(&plain) && !needs_escape(&plain[..2]) && !needs_escape(&plain[3..60]));
        for at in 0..70 {
            for bad in (0..0x20u8).chain([b'"', b'\\']) {
                let mut v = vec![b'a'; 70];
                v[at] = bad;
                assert!(needs_escape(&v), "{at} {bad}");
                assert_eq!(has_control(&v), bad < 0x20, "{at} {bad}");
            }
        }
    }
}
