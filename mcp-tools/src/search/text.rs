//! Text to index terms: words split the way tool names and prose are
//! written, lowercased, stop words dropped, a light English stemmer.

use super::bytes::{HIGH, ONES, first_of, zeros};

/// The most terms taken from one field of one tool (a description longer
/// than this is indexed by its beginning: memory stays bounded whatever a
/// server sends).
pub const MAX_FIELD_TERMS: usize = 512;

/// Calls `f` with each word of `text`, lowercased, until `f` says stop
/// (returns `false`): split at every character that is neither a letter
/// nor a digit, at a camelCase step (`listIssues`, `HTMLParser` → `html
/// parser`), and, for a word mixing letters and digits (`s3`, `base64`),
/// given whole and also by its letter runs (`s3`, `s`).
///
/// The text is read a byte at a time, and a run of lowercase letters
/// (most of every word) eight bytes at a time; a word already lowercase
/// (most words of prose and of snake_case names) is handed over as a slice
/// of `text`, not copied, one of ASCII letters is lowercased in a buffer,
/// and only a word with a character beyond ASCII is read by characters.
pub(crate) fn words(text: &str, f: impl FnMut(&str) -> bool) {
    words_with(text, &mut String::new(), f);
}

/// [`words`], lowercasing in `word` (whatever it holds; for a caller that
/// reads many texts, one buffer for all).
pub(crate) fn words_with(text: &str, word: &mut String, mut f: impl FnMut(&str) -> bool) {
    let b = text.as_bytes();
    let mut i = 0;
    // Whether a separator was a hyphen (see `joined`).
    let mut hyphen = false;
    while i < b.len() {
        // The next word: from its first letter or digit to the byte before
        // the next separator or camelCase step.
        while let Some(&c) = b.get(i)
            && CLASS[usize::from(c)] == OTHER
        {
            hyphen |= c == b'-';
            i += 1;
        }
        let start = i;
        let mut seen = 0u8;
        // A capital may begin a word (`Lists`, `listIssues`): then its
        // lowercase letters, at once.
        if b.get(i).is_some_and(|&c| CLASS[usize::from(c)] == UPPER) {
            seen = UPPER;
            i += 1;
        }
        let run = lowercase_len(b.get(i..).unwrap_or_default());
        if run > 0 {
            seen |= LOWER;
            i += run;
        }
        while let Some(&c) = b.get(i) {
            let class = CLASS[usize::from(c)];
            if class == OTHER {
                break;
            }
            if class == WIDE {
                // The rest of the run of letters, digits and characters
                // beyond ASCII, read by characters.
                while b.get(i).is_some_and(|&c| CLASS[usize::from(c)] != OTHER) {
                    i += 1;
                }
                seen = WIDE;
                break;
            }
            if class == UPPER && i > start {
                let p = CLASS[usize::from(b[i - 1])];
                let camel = p == LOWER
                    || p == DIGIT
                    || (p == UPPER
                        && b.get(i + 1)
                            .is_some_and(|&n| CLASS[usize::from(n)] == LOWER));
                if camel {
                    break;
                }
            }
            seen |= class;
            i += 1;
        }
        // `start` and `i` are at ASCII bytes (or the ends): character
        // boundaries.
        let raw = &text[start..i];
        let w = if seen == LOWER {
            raw
        } else if seen & (DIGIT | WIDE) == 0 && !raw.is_empty() {
            word.clear();
            word.push_str(raw);
            word.make_ascii_lowercase();
            word.as_str()
        } else {
            let go_on = if raw.is_empty() {
                true
            } else if seen == WIDE {
                unicode_words(raw, word, &mut f)
            } else if seen & UPPER == 0 {
                digit_words(raw, &mut f)
            } else {
                emit(raw, word, &mut f)
            };
            if !go_on {
                return;
            }
            continue;
        };
        if !f(w) {
            return;
        }
    }
    // Every hyphen is in a separator: `hyphen` says whether `text` has one.
    if hyphen && text.len() <= MAX_JOINED {
        joined(text, &mut f);
    }
}

/// How many bytes `b` begins with that are ASCII lowercase letters, eight
/// at a time.
fn lowercase_len(b: &[u8]) -> usize {
    first_of(b, |x| {
        // The high bit of each byte from `a` to `z`: at least `a` (0x61 +
        // 0x1f reaches 0x80), at most `z` (0x7a + 0x05 does not), below
        // 0x80. A byte's sum may carry into the next only when it is no
        // lowercase letter, so the lowest byte that is not one is exact.
        let lower = x.wrapping_add(ONES * 0x1f) & !x.wrapping_add(ONES * 0x05) & !x & HIGH;
        !lower & HIGH
    })
}

/// [`words`] of a run of text with characters beyond ASCII and no ASCII
/// separator, by characters; whether to go on.
fn unicode_words(text: &str, word: &mut String, f: &mut impl FnMut(&str) -> bool) -> bool {
    let mut prev: Option<char> = None;
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !c.is_alphanumeric() {
            if !emit(&text[start..i], word, f) {
                return false;
            }
            start = i + c.len_utf8();
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let camel = (p.is_lowercase() && c.is_uppercase())
                || (p.is_ascii_digit() && c.is_uppercase())
                || (p.is_uppercase()
                    && c.is_uppercase()
                    && chars.peek().is_some_and(|&(_, n)| n.is_lowercase()));
            if camel {
                if !emit(&text[start..i], word, f) {
                    return false;
                }
                start = i;
            }
        }
        prev = Some(c);
    }
    emit(&text[start..], word, f)
}

/// Byte classes of text, bits so that a word's classes can be or-ed.
const OTHER: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
/// A byte of a character beyond ASCII.
const WIDE: u8 = 8;

/// The class of each byte.
static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            0x80.. => WIDE,
            _ => OTHER,
        };
        c += 1;
    }
    t
};

/// The longest text whose hyphenated words are also joined (names, titles,
/// queries; not long prose, where it costs more than it finds).
const MAX_JOINED: usize = 256;

/// Calls `f` with each lowercase word written with one hyphen and a short
/// side (`to-do`, `e-mail`, `sign-in`, `get-env`) joined: `todo`, `email`.
fn joined(text: &str, f: &mut impl FnMut(&str) -> bool) {
    let b = text.as_bytes();
    let lower = |c: &u8| c.is_ascii_lowercase();
    let mut buf = String::new();
    let mut from = 0;
    while let Some(at) = b[from..].iter().position(|&c| c == b'-').map(|p| p + from) {
        from = at + 1;
        // The lowercase letters each side of this hyphen, in a chunk of
        // lowercase letters and hyphens that has this hyphen only.
        let left = b[..at].iter().rev().take_while(|c| lower(c)).count();
        let right = b[at + 1..].iter().take_while(|c| lower(c)).count();
        let before = b[..at - left].last();
        let after = b.get(at + 1 + right);
        if left == 0
            || right == 0
            || left.min(right) > 3
            || before == Some(&b'-')
            || after == Some(&b'-')
        {
            continue;
        }
        buf.clear();
        buf.push_str(&text[at - left..at]);
        buf.push_str(&text[at + 1..at + 1 + right]);
        if !f(&buf) {
            return;
        }
    }
}

/// [`emit`] of a word of lowercase ASCII letters and digits (`s3`,
/// `base64`, `2024`), with no copy: the word, then its runs of two letters
/// or more.
fn digit_words(raw: &str, f: &mut impl FnMut(&str) -> bool) -> bool {
    if !f(raw) {
        return false;
    }
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let run = lowercase_len(&b[i..]);
        if run >= 2 && !f(&raw[i..i + run]) {
            return false;
        }
        i += run;
        i += b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    true
}

/// Lowercases `raw` into `buf` and gives it to `f`; a word mixing letters
/// and digits also gives its letter runs of two letters or more. Whether
/// to go on.
fn emit(raw: &str, buf: &mut String, f: &mut impl FnMut(&str) -> bool) -> bool {
    if raw.is_empty() {
        return true;
    }
    // A short ASCII word is lowercased on the stack (most capitalized
    // words: no allocation for a `words` call's first one).
    let mut short = [0u8; 32];
    let lowered = match short.get_mut(..raw.len()) {
        Some(dst) if raw.is_ascii() => {
            dst.copy_from_slice(raw.as_bytes());
            dst.make_ascii_lowercase();
            std::str::from_utf8(dst).ok()
        }
        _ => None,
    };
    let word = match lowered {
        Some(w) => w,
        None => {
            buf.clear();
            buf.extend(raw.chars().flat_map(char::to_lowercase));
            buf.as_str()
        }
    };
    if !f(word) {
        return false;
    }
    let has_digit = raw.bytes().any(|b| b.is_ascii_digit());
    if has_digit && raw.chars().any(char::is_alphabetic) {
        let mut run = String::new();
        for c in raw.chars().chain(std::iter::once('0')) {
            if c.is_alphabetic() {
                run.extend(c.to_lowercase());
            } else {
                if run.chars().count() >= 2 && !f(&run) {
                    return false;
                }
                run.clear();
            }
        }
    }
    true
}

/// Words that say nothing about what a tool does: English function words,
/// and the words every tool description and every question share.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "being",
    "but", "by", "can", "could", "do", "does", "doing", "done", "e", "eg", "etc", "example",
    "examples", "for", "from", "g", "get", "gets", "given", "had", "has", "have", "how", "i", "ie",
    "if", "in", "into", "is", "it", "its", "just", "let", "me", "might", "more", "most", "must",
    "my", "need", "needs", "no", "not", "of", "on", "one", "only", "or", "other", "our", "out",
    "please", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "too", "tool", "tools", "up", "us", "use",
    "used", "uses", "using", "very", "via", "want", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whose", "will", "with", "within", "would", "you", "your",
];

/// Whether `word` (lowercased) is a stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    use std::collections::HashSet;
    use std::hash::BuildHasherDefault;
    use std::sync::OnceLock;
    type Set = HashSet<&'static str, BuildHasherDefault<super::index::WordHasher>>;
    static SET: OnceLock<Set> = OnceLock::new();
    // Every stop word is short: a long word is not looked up.
    word.len() <= 8
        && SET
            .get_or_init(|| STOP_WORDS.iter().copied().collect())
            .contains(word)
}

/// A light English stemmer for the words tools use: plurals, `-ing`,
/// `-ed`, `-er`, `-ly`, and the noun endings that name an action
/// (`-ation`, `-ment`, `-ion`), so that *deployment*, *deploying* and
/// *deployed* meet *deploy*, and *creation*, *creating* and *created* meet
/// *create*. Words of four letters or fewer, and words with a digit, are
/// kept as they are. Not Porter: it never cuts a word to an unreadable
/// root shared with unrelated words (Porter gives *organ* for
/// *organization*, *gener* for *generate* and *general*).
pub(crate) fn stem(word: &str, out: &mut String) {
    out.clear();
    out.push_str(word);
    if word.len() <= 4 || !word.is_ascii() || word.bytes().any(|b| b.is_ascii_digit()) {
        return;
    }
    // Plurals and third person.
    if out.ends_with("ies") && out.len() > 5 {
        out.truncate(out.len() - 3);
        out.push('y');
    } else if out.ends_with("sses")
        || out.ends_with("ches")
        || out.ends_with("shes")
        || out.ends_with("xes")
    {
        out.truncate(out.len() - 2);
    } else if out.ends_with('s')
        && !out.ends_with("ss")
        && !out.ends_with("us")
        && !out.ends_with("is")
    {
        out.pop();
    }
    // Verb and noun endings, longest first; the stem keeps three letters.
    for (suffix, replace) in [
        ("ations", "ate"),
        ("ation", "ate"),
        ("ments", ""),
        ("ment", ""),
        ("ings", ""),
        ("ing", ""),
        ("ied", "y"),
        ("ed", ""),
        ("ers", ""),
        ("er", ""),
        ("ly", ""),
        ("ion", ""),
    ] {
        if let Some(base) = out.strip_suffix(suffix) {
            if base.len() >= 3 && base.bytes().any(is_vowel) {
                let base_len = base.len();
                out.truncate(base_len);
                out.push_str(replace);
                undouble(out);
                break;
            }
        }
    }
    // A final silent `e` goes, so that `create` and `creat(ing)` meet.
    if out.len() > 4 && out.ends_with('e') {
        out.pop();
    }
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// `stopp` → `stop`, `committ` → `commit` (but `pull`, `pass`, `add` stay).
fn undouble(out: &mut String) {
    let b = out.as_bytes();
    if let [.., x, y] = b
        && x == y
        && !matches!(x, b'l' | b's' | b'z' | b'f')
        && !is_vowel(*x)
        && out.len() > 3
    {
        out.pop();
    }
}

/// `text` split after its first sentence: up to the first `.`, `!` or `?`
/// followed by white space, or the first line break, whichever comes
/// first (leading white space skipped).
pub(crate) fn first_sentence(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        i += first_of(&bytes[i..], |x| {
            zeros(x ^ (ONES * u64::from(b'.')))
                | zeros(x ^ (ONES * u64::from(b'!')))
                | zeros(x ^ (ONES * u64::from(b'?')))
                | zeros(x ^ (ONES * u64::from(b'\n')))
        });
        let Some(&b) = bytes.get(i) else {
            return (text, "");
        };
        if b == b'\n' || bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) {
            return (&text[..i], &text[i + 1..]);
        }
        i += 1;
    }
}

/// The term of `word` (a word of [`words`]) in `buf`, or `None` for a stop
/// word or a number (numbers say which, not what: `add 17 and 25`, `up to
/// 100 results`).
pub(crate) fn term<'a>(word: &str, buf: &'a mut String) -> Option<&'a str> {
    if is_stop_word(word) || word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem(word, buf);
    Some(buf)
}

/// Calls `f` with each term of `text`: its [`words`] less the stop words,
/// stemmed; at most `max` of them.
pub(crate) fn terms(text: &str, max: usize, mut f: impl FnMut(&str)) {
    let mut n = 0;
    let mut stemmed = String::new();
    if max == 0 {
        return;
    }
    words(text, |w| {
        if let Some(t) = term(w, &mut stemmed) {
            n += 1;
            f(t);
        }
        n < max
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_words(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        words(s, |w| {
            v.push(w.to_owned());
            true
        });
        v
    }

    fn stemmed(s: &str) -> String {
        let mut out = String::new();
        stem(s, &mut out);
        out
    }

    #[test]
    fn splits_names_as_they_are_written() {
        assert_eq!(all_words("list_issues"), ["list", "issues"]);
        assert_eq!(
            all_words("git-log.v2/run"),
            ["git", "log", "v2", "run", "gitlog"]
        );
        assert_eq!(all_words("my to-dos"), ["my", "to", "dos", "todos"]);
        assert_eq!(all_words("listIssues"), ["list", "issues"]);
        assert_eq!(all_words("HTMLParser"), ["html", "parser"]);
        assert_eq!(all_words("getS3Object"), ["get", "s3", "object"]);
        assert_eq!(all_words("base64Encode"), ["base64", "base", "encode"]);
        assert_eq!(all_words("  Ünïcode  wörds "), ["ünïcode", "wörds"]);
        assert_eq!(
            all_words("listÉtats—sortBy café’s naïveCamel x"),
            [
                "list", "états", "sort", "by", "café", "s", "naïve", "camel", "x"
            ]
        );
        assert!(all_words("").is_empty());
    }

    #[test]
    fn words_with_digits_as_emit_gives_them() {
        for raw in [
            "s3", "base64", "2024", "a1b22cd3", "x86yz", "ab12cd", "1a", "a1",
        ] {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            digit_words(raw, &mut |w| {
                fast.push(w.to_owned());
                true
            });
            emit(raw, &mut String::new(), &mut |w| {
                slow.push(w.to_owned());
                true
            });
            assert_eq!(fast, slow, "{raw}");
        }
    }

    #[test]
    fn lowercase_runs_end_at_any_other_byte() {
        for text in [
            "",
            "abc",
            "abcdefgh",
            "abcdefghijklmnopq",
            "abcdefghIjk",
            "abcdefgh ijk",
            "zzzzzzz{zzz",
            "`aaaaaaaaaa",
            "abcdefg\u{80}",
            "abcdé\u{ff}fghij",
            "azAZ09az",
        ] {
            let slow = text.bytes().take_while(u8::is_ascii_lowercase).count();
            assert_eq!(lowercase_len(text.as_bytes()), slow, "{text}");
        }
        for at in 0..17 {
            for c in 0..=255u8 {
                let mut b = *b"abcdefghijklmnopqrstuvwxyz";
                b[at] = c;
                b[at + 1] = 255 - c;
                let slow = b.iter().take_while(|c| c.is_ascii_lowercase()).count();
                assert_eq!(lowercase_len(&b), slow, "{c} at {at}");
            }
        }
    }

    #[test]
    fn first_sentence_is_what_the_tool_does() {
        assert_eq!(
            first_sentence("  Lists issues. Use e.g. filters.\nMore."),
            ("Lists issues", " Use e.g. filters.\nMore.")
        );
        assert_eq!(
            first_sentence("Reads v1.2 files\nthen"),
            ("Reads v1.2 files", "then")
        );
        assert_eq!(first_sentence("No end"), ("No end", ""));
        assert_eq!(
            first_sentence("Version 1.2.3 of it is fine!"),
            ("Version 1.2.3 of it is fine", "")
        );
        assert_eq!(first_sentence("What? Yes"), ("What", " Yes"));
        assert_eq!(
            first_sentence("a.b.c.d.e.f.g.h.i\tj"),
            ("a.b.c.d.e.f.g.h.i\tj", "")
        );
        assert_eq!(first_sentence("abcdefghijk.\tl"), ("abcdefghijk", "\tl"));
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| w.len() <= 8 && is_stop_word(w)));
        assert!(!is_stop_word("deploy"));
    }

    #[test]
    fn stems_meet_across_forms() {
        for group in [
            &[
                "deploy",
                "deploys",
                "deployed",
                "deploying",
                "deployment",
                "deployments",
            ][..],
            &["create", "creates", "created", "creating", "creation"],
            &["commit", "commits", "committed", "committing"],
            &["branch", "branches"],
            &["entry", "entries"],
            &["update", "updates", "updated", "updating"],
            &["stop", "stopped", "stopping"],
        ] {
            let first = stemmed(group[0]);
            for w in group {
                assert_eq!(stemmed(w), first, "{w} vs {}", group[0]);
            }
        }
        assert_eq!(stemmed("status"), "status");
        assert_eq!(stemmed("pull"), "pull");
        assert_eq!(stemmed("s3"), "s3");
    }
}
