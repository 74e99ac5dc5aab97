//! Token estimates: how much of a model's context a text takes, without a
//! tokenizer.
//!
//! A model's tokenizer (a BPE vocabulary of 100,000 to 200,000 pieces) is
//! megabytes of data and differs between models; a budget needs an
//! estimate that is cheap, the same everywhere, and rarely low. This one
//! reads the text once as runs of one kind of character and counts each
//! run the way BPE tokenizers split it:
//!
//! | run | tokens |
//! |---|---|
//! | ASCII letters | one per camelCase piece, plus one per [`WORD_PIECE`] letters past its first |
//! | digits | one per 3 (BPE vocabularies group digits by three) |
//! | whitespace | none for one space before a word (it joins the word), else 1 plus one per [`WHITESPACE_RUN`] characters |
//! | ASCII punctuation | one per [`PUNCTUATION_RUN`] characters (`":"`, `{"` are one token each); none for one `_`, `.` or `-` that joins two words |
//! | CJK and Hangul | three per four characters |
//! | other letters (accented Latin, Cyrillic, Greek, ...) | one per [`OTHER_LETTERS`] letters |
//! | anything else (symbols, emoji) | one per character |
//!
//! Every run counts at most one token per byte, so an estimate never
//! exceeds the text's length in bytes (a text of `n` bytes with `n` under a
//! budget needs no counting at all).
//!
//! **How close it is.** Against OpenAI's `o200k_base` (tiktoken, GPT-4o and
//! later), measured by `tests/tokens.rs` on this repository's texts: the
//! catalog of real tool definitions (`examples/catalog/shapes.json`) 1.08×
//! the real count together, each definition within 0.91×–1.13×; English
//! prose and tables 1.03×–1.04×, Rust and Python source 1.06×–1.12×,
//! pretty JSON 1.09×, a sample of seven languages 1.15×; all together
//! 1.04×. `cl100k_base` (GPT-4) gives the same counts within 1 % on
//! English, code and JSON, and some 30 % more on other languages (where
//! the estimate is then 0.87×). Anthropic's and other vocabularies are not
//! public the same way; expect the same order of error, and leave a margin
//! under a hard context limit.

/// Letters of one camelCase piece counted as one token beyond its first:
/// most English words are one token, long ones two or three.
pub const WORD_PIECE: usize = 10;
/// ASCII punctuation characters per token.
pub const PUNCTUATION_RUN: usize = 3;
/// Whitespace characters per token beyond a run's first (indentation is a
/// few tokens however wide).
pub const WHITESPACE_RUN: usize = 16;
/// Letters outside ASCII and CJK per token.
pub const OTHER_LETTERS: usize = 4;

/// The estimated tokens of `text` (see the [module](self) for how, and how
/// close to a real tokenizer it is). Never more than `text.len()`.
///
/// ```
/// use mcp_tools::estimate_tokens;
/// assert_eq!(estimate_tokens(""), 0);
/// assert_eq!(estimate_tokens("Lists the files of a directory."), 7);
/// assert!(estimate_tokens(r#"{"type":"object","properties":{"path":{"type":"string"}}}"#) <= 20);
/// ```
pub fn estimate_tokens(text: &str) -> usize {
    Runs::new(text).map(|r| r.tokens).sum()
}

/// One run of a text: bytes `start..end`, `tokens` estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) tokens: usize,
}

/// The runs of a text, in order; their tokens add up to [`estimate_tokens`].
pub(crate) struct Runs<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Runs<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Runs { text, at: 0 }
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x9FFF      // CJK radicals, kana, CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF00..=0xFFEF    // half- and full-width forms
        | 0x20000..=0x3FFFF) // CJK extensions
}

impl Iterator for Runs<'_> {
    type Item = Run;

    fn next(&mut self) -> Option<Run> {
        let text = self.text;
        let b = text.as_bytes();
        let start = self.at;
        let &first = b.get(start)?;
        let mut i = start;
        let tokens;
        let run_while = |i: &mut usize, f: &dyn Fn(u8) -> bool| {
            while b.get(*i).is_some_and(|&c| f(c)) {
                *i += 1;
            }
        };
        if first.is_ascii_alphabetic() {
            // camelCase pieces: a new piece where lower case meets upper.
            let mut pieces = 0;
            let mut piece = 0;
            let mut prev_lower = false;
            while let Some(&c) = b.get(i).filter(|c| c.is_ascii_alphabetic()) {
                if prev_lower && c.is_ascii_uppercase() {
                    pieces += 1 + (piece - 1) / WORD_PIECE;
                    piece = 0;
                }
                prev_lower = c.is_ascii_lowercase();
                piece += 1;
                i += 1;
            }
            tokens = pieces + 1 + (piece - 1) / WORD_PIECE;
        } else if first.is_ascii_digit() {
            run_while(&mut i, &|c| c.is_ascii_digit());
            tokens = (i - start).div_ceil(3);
        } else if first.is_ascii_whitespace() {
            run_while(&mut i, &|c| c.is_ascii_whitespace());
            let n = i - start;
            let word_next = b
                .get(i)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c >= 0x80);
            tokens = if n == 1 && first == b' ' && word_next {
                0
            } else {
                1 + n / WHITESPACE_RUN
            };
        } else if first.is_ascii() {
            run_while(&mut i, &|c| {
                c.is_ascii() && !c.is_ascii_alphanumeric() && !c.is_ascii_whitespace()
            });
            let n = i - start;
            let joins = n == 1
                && matches!(first, b'_' | b'.' | b'-')
                && b.get(i).is_some_and(u8::is_ascii_alphabetic);
            tokens = if joins {
                0
            } else {
                n.div_ceil(PUNCTUATION_RUN)
            };
        } else {
            // Not ASCII: `start` is on a char boundary (every run ends on one).
            let rest = text.get(start..).unwrap_or_default();
            let mut chars = rest.char_indices();
            let (_, c) = chars.next()?;
            let class = |c: char| {
                if is_cjk(c) {
                    1
                } else if c.is_alphabetic() {
                    2
                } else {
                    3
                }
            };
            let kind = class(c);
            let mut n: usize = 1;
            let mut end = rest.len();
            for (at, c) in chars {
                if c.is_ascii() || class(c) != kind || kind == 3 {
                    end = at;
                    break;
                }
                n += 1;
            }
            i = start + end;
            tokens = match kind {
                1 => (n * 3).div_ceil(4),
                2 => n.div_ceil(OTHER_LETTERS),
                _ => n,
            };
        }
        self.at = i;
        Some(Run {
            start,
            end: i,
            tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_the_text_and_never_count_more_than_its_bytes() {
        let samples = [
            "",
            "a",
            "readOnlyHint",
            "  \n\n    fn main() {}",
            "self.inner.refresh_stale()",
            "12345678",
            "Größenänderung der Datei",
            "これは日本語です。",
            "эмодзи 🎉🎉 и ✓",
            "{\"type\":\"object\",\"properties\":{}}",
            "x\u{301}\u{200d}",
        ];
        for s in samples {
            let runs: Vec<Run> = Runs::new(s).collect();
            let mut at = 0;
            for r in &runs {
                assert_eq!(r.start, at, "{s:?}");
                assert!(r.end > r.start && s.is_char_boundary(r.end), "{s:?}");
                assert!(r.tokens <= r.end - r.start, "{s:?}: {r:?}");
                at = r.end;
            }
            assert_eq!(at, s.len(), "{s:?}");
            assert!(estimate_tokens(s) <= s.len());
        }
    }

    #[test]
    fn words_digits_and_punctuation_count_as_bpe_splits_them() {
        assert_eq!(estimate_tokens("hello"), 1);
        assert_eq!(estimate_tokens("hello world"), 2);
        assert_eq!(estimate_tokens("readOnlyHint"), 3);
        assert_eq!(estimate_tokens("internationalization"), 2);
        assert_eq!(estimate_tokens("1234567"), 3);
        assert_eq!(estimate_tokens("refresh_stale"), 2);
        assert_eq!(estimate_tokens("\":\""), 1);
        assert_eq!(estimate_tokens("日本語です"), 4);
    }
}
