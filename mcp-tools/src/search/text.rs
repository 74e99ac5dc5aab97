//! Text to index terms: words split the way tool names and prose are
//! written, lowercased, stop words dropped, a light English stemmer.

/// The most terms taken from one field of one tool (a description longer
/// than this is indexed by its beginning: memory stays bounded whatever a
/// server sends).
pub const MAX_FIELD_TERMS: usize = 512;

/// Calls `f` with each word of `text`, lowercased: split at every character
/// that is neither a letter nor a digit, at a camelCase step (`listIssues`,
/// `HTMLParser` → `html parser`), and, for a word mixing letters and digits
/// (`s3`, `base64`), given whole and also by its letter runs (`s3`, `s`).
pub(crate) fn words(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            emit(&text[start..i], &mut word, &mut f);
            start = i + c.len_utf8();
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let next_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
            let camel = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower)
                || (p.is_ascii_digit() && c.is_uppercase());
            if camel {
                emit(&text[start..i], &mut word, &mut f);
                start = i;
            }
        }
        prev = Some(c);
    }
    emit(&text[start..], &mut word, &mut f);
}

/// Lowercases `raw` into `buf` and gives it to `f`; a word mixing letters
/// and digits also gives its letter runs of two letters or more.
fn emit(raw: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
    if raw.is_empty() {
        return;
    }
    buf.clear();
    buf.extend(raw.chars().flat_map(char::to_lowercase));
    f(buf);
    let has_digit = raw.bytes().any(|b| b.is_ascii_digit());
    if has_digit && raw.chars().any(char::is_alphabetic) {
        let mut run = String::new();
        for c in raw.chars().chain(std::iter::once('0')) {
            if c.is_alphabetic() {
                run.extend(c.to_lowercase());
            } else {
                if run.chars().count() >= 2 {
                    f(&run);
                }
                run.clear();
            }
        }
    }
}

/// Words that say nothing about what a tool does: English function words,
/// and the words every tool description and every question share.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "being",
    "but", "by", "can", "could", "do", "does", "doing", "done", "e", "eg", "etc", "for", "from",
    "g", "get", "gets", "given", "had", "has", "have", "how", "i", "ie", "if", "in", "into", "is",
    "it", "its", "just", "let", "me", "might", "more", "most", "must", "my", "need", "needs", "no",
    "not", "of", "on", "one", "only", "or", "other", "our", "out", "please", "should", "so",
    "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "too", "tool", "tools", "up", "us", "use", "used", "uses", "using",
    "very", "via", "want", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "whose", "why", "will", "with", "within", "would", "you", "your",
];

/// Whether `word` (lowercased) is a stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
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

/// Calls `f` with each term of `text`: its [`words`] less the stop words,
/// stemmed; at most `max` of them.
pub(crate) fn terms(text: &str, max: usize, mut f: impl FnMut(&str)) {
    let mut n = 0;
    let mut stemmed = String::new();
    words(text, |w| {
        if n >= max || is_stop_word(w) {
            return;
        }
        n += 1;
        stem(w, &mut stemmed);
        f(&stemmed);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_words(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        words(s, |w| v.push(w.to_owned()));
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
        assert_eq!(all_words("git-log.v2/run"), ["git", "log", "v2", "run"]);
        assert_eq!(all_words("listIssues"), ["list", "issues"]);
        assert_eq!(all_words("HTMLParser"), ["html", "parser"]);
        assert_eq!(all_words("getS3Object"), ["get", "s3", "object"]);
        assert_eq!(all_words("base64Encode"), ["base64", "base", "encode"]);
        assert_eq!(all_words("  Ünïcode  wörds "), ["ünïcode", "wörds"]);
        assert!(all_words("").is_empty());
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
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
