//! Following a paginated list's cursors: [`PageCursors`].

use std::collections::HashSet;
use std::hash::BuildHasher;

use crate::error::ClientError;

/// The longest `nextCursor` a cursor loop sends back: 64 KiB.
///
/// A cursor is opaque to the client but travels both ways on every page:
/// a server's cursors are a few dozen bytes, rarely a few KiB (state encoded
/// in them). Beyond this a loop ends with [`ClientError::CursorTooLong`]
/// rather than echo megabytes per page (a hostile server sending 1 MiB
/// cursors made 400 pages cost 800 MiB of traffic).
pub const MAX_CURSOR_LEN: usize = 64 * 1024;

/// How far a loop over a paginated list has come, and whether it may go on:
/// every loop that follows `nextCursor` (such as
/// [`Client::list_all`](crate::Client::list_all)) asks it for each page's
/// successor, and it ends the loop with a typed error when the server
///
/// - sends a cursor it sent before ([`ClientError::RepeatedCursor`]: the
///   list would go round for ever, or until the page cap),
/// - sends a cursor longer than [`MAX_CURSOR_LEN`]
///   ([`ClientError::CursorTooLong`]),
/// - has more pages than the cap ([`ClientError::TooManyPages`]).
///
/// It keeps a 64-bit keyed hash of each cursor, not the cursor: eight bytes
/// a page whatever the cursors' size. (Two cursors of one list colliding is
/// about as likely as 2^-64 per pair of pages.)
///
/// ```
/// use mcp_client::PageCursors;
///
/// let mut cursors = PageCursors::new("tools/list", 1000);
/// assert_eq!(cursors.next(Some("a".into())).unwrap(), Some("a".into()));
/// assert_eq!(cursors.next(Some("b".into())).unwrap(), Some("b".into()));
/// assert!(cursors.next(Some("a".into())).is_err(), "seen before");
/// assert_eq!(PageCursors::new("tools/list", 1000).next(None).unwrap(), None);
/// ```
#[derive(Debug)]
pub struct PageCursors {
    method: String,
    max_pages: usize,
    pages: usize,
    seen: HashSet<u64>,
    keys: std::collections::hash_map::RandomState,
}

impl PageCursors {
    /// A loop over `method` that fetches at most `max_pages` pages.
    pub fn new(method: impl Into<String>, max_pages: usize) -> Self {
        PageCursors {
            method: method.into(),
            max_pages,
            pages: 0,
            seen: HashSet::new(),
            keys: Default::default(),
        }
    }

    /// Pages received so far (calls of [`next`](Self::next)).
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Call with each page's `nextCursor`, in order: `Ok(Some(cursor))` is
    /// the cursor to ask the next page with, `Ok(None)` means that page was
    /// the last, and an error ends the loop.
    pub fn next(&mut self, next_cursor: Option<String>) -> Result<Option<String>, ClientError> {
        self.pages += 1;
        let Some(cursor) = next_cursor else {
            return Ok(None);
        };
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(ClientError::CursorTooLong {
                method: self.method.clone(),
                len: cursor.len(),
                limit: MAX_CURSOR_LEN,
            });
        }
        if !self.seen.insert(self.keys.hash_one(&cursor)) {
            return Err(ClientError::RepeatedCursor {
                method: self.method.clone(),
                page: self.pages,
                cursor: shown(&cursor),
            });
        }
        if self.pages >= self.max_pages {
            return Err(ClientError::TooManyPages {
                method: self.method.clone(),
                limit: self.max_pages,
            });
        }
        Ok(Some(cursor))
    }
}

/// At most the first 64 characters of a cursor, for an error message.
fn shown(cursor: &str) -> String {
    const SHOWN: usize = 64;
    match cursor.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &cursor[..end]),
        None => cursor.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_repeated_cursor_ends_the_loop_naming_it() {
        let mut c = PageCursors::new("tools/list", 1000);
        // The empty string is a cursor like any other.
        assert_eq!(c.next(Some(String::new())).unwrap(), Some(String::new()));
        assert_eq!(c.next(Some("x".into())).unwrap(), Some("x".into()));
        let e = c.next(Some(String::new())).unwrap_err();
        assert!(
            matches!(&e, ClientError::RepeatedCursor { method, page: 3, cursor } if method == "tools/list" && cursor.is_empty()),
            "{e:?}"
        );
        // A long one is named by its start only.
        let mut c = PageCursors::new("prompts/list", 1000);
        let long = "é".repeat(1000);
        c.next(Some(long.clone())).unwrap();
        let e = c.next(Some(long)).unwrap_err();
        let ClientError::RepeatedCursor { cursor, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(cursor.chars().count(), 65);
        assert!(e.to_string().contains("prompts/list"), "{e}");
    }

    #[test]
    fn long_cursors_and_too_many_pages_end_the_loop() {
        let mut c = PageCursors::new("tools/list", 1000);
        let e = c.next(Some("x".repeat(MAX_CURSOR_LEN + 1))).unwrap_err();
        assert!(
            matches!(e, ClientError::CursorTooLong { len, limit: MAX_CURSOR_LEN, .. } if len == MAX_CURSOR_LEN + 1)
        );
        assert!(c.next(Some("x".repeat(MAX_CURSOR_LEN))).is_ok());
        // Three pages at most: the third may not name a fourth.
        let mut c = PageCursors::new("tools/list", 3);
        c.next(Some("1".into())).unwrap();
        c.next(Some("2".into())).unwrap();
        assert!(matches!(
            c.next(Some("3".into())),
            Err(ClientError::TooManyPages { limit: 3, .. })
        ));
        let mut c = PageCursors::new("tools/list", 3);
        c.next(Some("1".into())).unwrap();
        c.next(Some("2".into())).unwrap();
        assert_eq!(c.next(None).unwrap(), None);
        assert_eq!(c.pages(), 3);
    }
}
