//! Cassettes: what went over the wire between `mcp` and one server,
//! recorded (`mcp record FILE -- <command>`), served again as a stdio
//! server (`mcp replay FILE`), and compared with a live server's surface
//! (`mcp diff FILE`).
//!
//! # Format (version 1)
//!
//! JSON Lines, UTF-8, one JSON object a line, written as the session goes
//! (memory stays flat however long it runs). The first line is the header:
//!
//! ```text
//! {"mcpCassette":1,"recordedBy":"mcp 0.1.0","command":["--stdio","server --port 1","tools"]}
//! ```
//!
//! `mcpCassette` is the format version: a reader refuses a version it does
//! not know. `command` is the recorded command line (after `--`), redacted.
//! Every other line is one event, `ms` after the recording started, seen
//! from the client (`mcp`):
//!
//! | line | what |
//! |---|---|
//! | `{"ms":3,"send":MESSAGE}` | a JSON-RPC message `mcp` sent the server |
//! | `{"ms":9,"recv":MESSAGE}` | a JSON-RPC message the server sent `mcp` |
//! | `{"ms":9,"version":"2025-11-25"}` | the revision `mcp` told its transport it speaks from here on |
//! | `{"ms":9,"error":"TEXT"}` | an error the transport reported instead of a message (an HTTP status, a dropped frame, the server's exit) |
//!
//! `MESSAGE` is the message exactly as sent or received (key order, ids,
//! `_meta`), except for what [redaction](redact) replaced with
//! `"[REDACTED]"`. Readers ignore members they do not know, so later
//! versions of `mcp` may add some without a new format version.
//!
//! A cassette holds JSON-RPC messages only, never HTTP headers: no
//! `Authorization`, no cookies, no session ids.

pub(crate) mod diff;
mod record;
mod redact;
pub(crate) mod replay;

use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::failure::Failure;
pub(crate) use record::tap;

/// The format version this `mcp` writes and reads.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// Longest cassette line read: 64 MiB (four times the largest message `mcp`
/// accepts by default).
const MAX_LINE: usize = 64 * 1024 * 1024;

/// One event of a cassette.
#[derive(Debug)]
pub(crate) enum Event {
    /// `mcp` sent the server this message.
    Send(Box<RawValue>),
    /// The server sent `mcp` this message.
    Recv(Box<RawValue>),
}

/// A cassette read back: its events in order (revisions and errors are
/// for people reading the file; replay and diff need only the messages).
#[derive(Debug)]
pub(crate) struct Cassette {
    pub(crate) events: Vec<Event>,
}

#[derive(Deserialize)]
struct Header {
    #[serde(rename = "mcpCassette")]
    version: Option<u64>,
}

#[derive(Deserialize)]
struct Line {
    send: Option<Box<RawValue>>,
    recv: Option<Box<RawValue>>,
}

impl Cassette {
    /// Reads the cassette at `path`; a usage error (exit 2) says what is
    /// wrong with it and where.
    pub(crate) fn load(path: &Path) -> Result<Self, Failure> {
        use std::io::{BufRead, Read};
        let bad = |what: String| Failure::Usage(format!("{}: {what}", path.display()));
        let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        let mut reader = std::io::BufReader::new(file);
        let mut buf = Vec::new();
        // One line at a time, never more than MAX_LINE of it in memory.
        let mut next_line = |n: usize| -> Result<Option<String>, Failure> {
            buf.clear();
            let limit = u64::try_from(MAX_LINE).unwrap_or(u64::MAX);
            let read = (&mut reader)
                .take(limit + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| bad(format!("cannot read it: {e}")))?;
            if read == 0 {
                return Ok(None);
            }
            if buf.len() > MAX_LINE {
                return Err(bad(format!("line {n} is over {MAX_LINE} bytes")));
            }
            String::from_utf8(std::mem::take(&mut buf))
                .map(Some)
                .map_err(|_| bad(format!("line {n} is not UTF-8")))
        };
        let header = next_line(1)?.ok_or_else(|| bad("empty: not a cassette".into()))?;
        match serde_json::from_str::<Header>(&header) {
            Ok(Header {
                version: Some(FORMAT_VERSION),
            }) => {}
            Ok(Header { version: Some(v) }) => {
                return Err(bad(format!(
                    "cassette format {v}, but this mcp reads format {FORMAT_VERSION}"
                )));
            }
            _ => {
                return Err(bad(
                    "not a cassette (its first line has no \"mcpCassette\" version)".into(),
                ));
            }
        }
        let mut events = Vec::new();
        let mut n = 1;
        while let Some(line) = next_line(n + 1)? {
            n += 1;
            if line.trim().is_empty() {
                continue;
            }
            let l: Line = serde_json::from_str(&line).map_err(|e| bad(format!("line {n}: {e}")))?;
            match (l.send, l.recv) {
                (Some(m), None) => events.push(Event::Send(m)),
                (None, Some(m)) => events.push(Event::Recv(m)),
                _ => {}
            }
        }
        Ok(Cassette { events })
    }
}
