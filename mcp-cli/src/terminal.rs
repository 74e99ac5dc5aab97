//! Server text made safe for a person's terminal.
//!
//! Whatever a server sends as text (a tool's output, a description, an
//! error message, a progress or log message, an HTTP error body) may hold
//! control sequences: OSC 52 writes the clipboard, OSC 0 the window title,
//! `CSI 2K` + CR erases a line and writes a forged one over it, bidi
//! overrides reorder what is shown, tag characters hide text. Before any of
//! it reaches a terminal, [`text`] (several lines) or [`line`](fn@line) (one line)
//! replaces each such character with a visible escape, as git does for a
//! remote's sideband text and OpenSSH for a server's banner: nothing is
//! dropped silently, so the person sees that something was there.
//!
//! | character | shown as |
//! |---|---|
//! | C0 controls U+0000–U+001F except tab and newline, DEL U+007F | caret notation, as `cat -v`: `^[`, `^@`, `^M`, `^?` |
//! | C1 controls U+0080–U+009F | `<U+009B>` |
//! | bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) | `<U+202E>` |
//! | line and paragraph separators U+2028, U+2029 | `<U+2028>` |
//! | tag characters U+E0000–U+E007F (invisible text) | `<U+E0041>` |
//! | any other character that hides text from a person ([`mcp_config::hidden_chars`]: zero-width spaces and joiners out of place, soft hyphens, variation selectors smuggling bytes, BOMs, ...) | `<U+200B>` |
//!
//! A CR directly before a newline (Windows line ends) is dropped; any other
//! CR is escaped (`^M`), since a lone CR returns the cursor to overwrite
//! the line. `--json` output never goes through here: JSON text is printed
//! exactly as the server sent it (JSON itself escapes C0 controls in
//! strings).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is shown as an escape rather than as itself (tab and
/// newline excepted: [`text`] keeps them, [`line`](fn@line) turns newlines into
/// ` | `).
fn unsafe_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{2028}' | '\u{2029}'
        | '\u{e0000}'..='\u{e007f}')
}

fn escape(out: &mut String, c: char) {
    match c {
        '\u{0}'..='\u{1f}' => {
            out.push('^');
            // Caret notation: 0x00 -> '@', 0x1b -> '[', 0x0d -> 'M'.
            out.push(char::from(b'@' + c as u8));
        }
        '\u{7f}' => out.push_str("^?"),
        _ => {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        }
    }
}

/// Several lines of server text, safe to print: tabs and newlines kept,
/// CRLF line ends made LF, every other control, bidi or invisible
/// character escaped (see the module docs). Borrowed when nothing changes.
pub fn text(s: &str) -> Cow<'_, str> {
    let mut hidden = mcp_config::hidden_chars(s).map(|h| h.offset).peekable();
    let needs =
        hidden.peek().is_some() || s.chars().any(|c| unsafe_char(c) && c != '\n' && c != '\t');
    if !needs {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let hides = hidden.next_if_eq(&i).is_some();
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek().map(|p| p.1) == Some('\n') => {}
            c if hides || unsafe_char(c) => escape(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line of server text, safe to print: trimmed, each line break
/// (LF, CRLF) shown as ` | `, every other control, bidi or invisible
/// character escaped (see the module docs).
pub fn line(s: &str) -> String {
    let s = s.trim();
    let mut hidden = mcp_config::hidden_chars(s).map(|h| h.offset).peekable();
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let hides = hidden.next_if_eq(&i).is_some();
        match c {
            '\r' if chars.peek().map(|p| p.1) == Some('\n') => {}
            '\n' => out.push_str(" | "),
            '\t' => out.push(' '),
            c if hides || unsafe_char(c) => escape(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// Whether `url` is an absolute http or https URL (nothing else is shown
/// as something to open: no `javascript:`, `file:`, `data:`).
pub fn web_url(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once(':') else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && rest.starts_with("//")
        && rest.len() > 2
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape issue 33 names, and the rest of the class.
    #[test]
    fn control_sequences_are_escaped_visibly() {
        let cases = [
            // OSC 52: write the clipboard.
            (
                "\x1b]52;c;ZWNobyBwd25lZA==\x07",
                "^[]52;c;ZWNobyBwd25lZA==^G",
            ),
            // OSC 0: the window title, with the ST terminator.
            ("\x1b]0;owned\x1b\\", "^[]0;owned^[\\"),
            // CSI 2K + CR: erase the line, forge one of ours.
            ("ok\x1b[2K\rmcp: all good", "ok^[[2K^Mmcp: all good"),
            ("a\0b", "a^@b"),
            ("bell\x07 del\x7f bs\x08", "bell^G del^? bs^H"),
            // C1 controls: CSI and OSC as single code points.
            (
                "\u{9b}31m red \u{9d}0;t\u{9c}",
                "<U+009B>31m red <U+009D>0;t<U+009C>",
            ),
            // Bidi overrides and isolates (Trojan Source).
            (
                "user\u{202e}gnp.exe\u{202c} \u{2067}x\u{2069}",
                "user<U+202E>gnp.exe<U+202C> <U+2067>x<U+2069>",
            ),
            ("\u{200f}\u{61c}", "<U+200F><U+061C>"),
            ("a\u{2028}b", "a<U+2028>b"),
            // Tag characters: invisible ASCII.
            ("hi\u{e0041}\u{e0042}", "hi<U+E0041><U+E0042>"),
        ];
        for (raw, shown) in cases {
            assert_eq!(text(raw), shown, "{raw:?}");
            assert_eq!(line(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn whatever_hides_text_is_shown() {
        for (raw, shown) in [
            ("zero\u{200b}width", "zero<U+200B>width"),
            ("soft\u{ad}hyphen", "soft<U+00AD>hyphen"),
            ("\u{feff}bom", "<U+FEFF>bom"),
            ("x\u{fe0f}\u{fe0f}\u{e0100}", "x\u{fe0f}<U+FE0F><U+E0100>"),
            ("a\u{200d}b", "a<U+200D>b"),
        ] {
            assert_eq!(text(raw), shown, "{raw:?}");
            assert_eq!(line(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn text_keeps_lines_tabs_and_plain_unicode() {
        let plain = "résumé ✅ 日本語\n\tindented\nend";
        assert!(matches!(text(plain), Cow::Borrowed(_)));
        assert_eq!(text("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(text("a\rb"), "a^Mb");
        assert_eq!(text("emoji 👍🏽 zwj 👩‍💻"), "emoji 👍🏽 zwj 👩‍💻");
    }

    #[test]
    fn line_is_one_line() {
        assert_eq!(
            line("  first\r\nsecond\nthird\t!  "),
            "first | second | third !"
        );
        let l = line("x\n\x1b[2K\rmcp: forged");
        assert!(!l.contains(['\n', '\r', '\x1b']), "{l}");
    }

    #[test]
    fn nothing_unsafe_survives() {
        // Every code point below U+3000 and the tag block: nothing a
        // terminal acts on passes through.
        let all: String = (0u32..0x3000)
            .chain(0xe0000..0xe0080)
            .filter_map(char::from_u32)
            .collect();
        for shown in [text(&all).into_owned(), line(&all)] {
            assert!(
                !shown
                    .chars()
                    .any(|c| unsafe_char(c) && c != '\n' && c != '\t'),
                "an unsafe character was printed"
            );
        }
    }

    #[test]
    fn only_web_urls_are_shown() {
        assert!(web_url("https://example.com/x?y=1"));
        assert!(web_url("HTTP://127.0.0.1:8080/"));
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,x",
            "https:",
            "https://",
            "https://a b",
            "https://a\u{1b}]8;;x",
            "ftp://x",
        ] {
            assert!(!web_url(bad), "{bad}");
        }
    }
}
