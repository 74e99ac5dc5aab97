//! Newline-delimited JSON-RPC framing, sans-IO: [`JsonLineCodec`].

use bytes::{Buf, BytesMut};
use mcp_proto::{ErrorCode, Message};

use crate::line::RETAINED_READ_CAPACITY;
pub use mcp_proto::jsonrpc::Dropped;
use mcp_proto::jsonrpc::{DecodeError, FrameHead, RequestId, answered_id, peek_head};
use mcp_proto::transport::{ByteSize, TransportError, TransportErrorKind};
use serde_json::value::RawValue;

/// Default limit on one message: 16 MiB.
///
/// Large enough for big tool results (embedded images, long documents),
/// small enough that a broken or hostile server cannot exhaust memory.
/// Change it with [`JsonLineCodec::with_max_message_size`],
/// [`LineTransport::with_max_message_size`](crate::LineTransport::with_max_message_size)
/// or [`ServerCommand::max_message_size`](crate::ServerCommand::max_message_size).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// How many bytes of a skipped non-JSON line are quoted in the warning.
const NOISE_PREVIEW: usize = 120;

/// How many skipped non-JSON lines are each logged at `WARN` (later ones at
/// powers of two only).
const NOISE_WARNINGS: u64 = 10;

/// A frame the codec could not turn into a message. Every kind is scoped:
/// the codec goes on with the next line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonLineCodecError {
    /// A line was longer than the limit. It is dropped as it arrives, never
    /// buffered whole, and reported once: as soon as the limit is crossed
    /// when its first `limit` bytes name the request it answers (so that
    /// call fails at once, even if the line never ends), otherwise when it
    /// ends (its last bytes may name the request, and its size is known).
    #[error(
        "{}{}, over the {} limit; raise it with `max_message_size`",
        if *ended { "" } else { "at least " },
        ByteSize(*len),
        ByteSize(*limit as u64)
    )]
    LineTooLong {
        /// The limit in bytes that was exceeded.
        limit: usize,
        /// The line's length in bytes (without its newline) if it had
        /// `ended` when it was reported; otherwise what had arrived of it
        /// (more than `limit`).
        len: u64,
        /// Whether the line had ended when it was reported. If not, the rest
        /// of it is dropped as it arrives, without a second report.
        ended: bool,
        /// What the line was, as far as its first and last bytes tell.
        dropped: Dropped,
    },
    /// A line was JSON but not a valid JSON-RPC message.
    #[error(transparent)]
    Message(#[from] DecodeError),
    /// A line was JSON but not a valid JSON-RPC message, and it answered
    /// the request `id` (an object with that `id` and no `method`).
    #[error("{error}")]
    BrokenAnswer {
        /// The request it answered.
        id: RequestId,
        /// What is wrong with it.
        error: DecodeError,
    },
    /// A line that is not JSON (cut short, not UTF-8, broken syntax) but
    /// starts or ends like an answer: a JSON object whose first bytes say
    /// `result` or `error`, or whose first or last member is its `id`.
    /// Other lines that are not JSON are noise and skipped.
    #[error("an answer that is not JSON: {error}")]
    UndecodableAnswer {
        /// Which request it answered, as far as its bytes tell
        /// ([`Dropped::Answer`] or [`Dropped::UnknownAnswer`]).
        dropped: Dropped,
        /// What the JSON parser said (the position of the invalid byte).
        error: DecodeError,
    },
    /// A line was JSON but not a valid JSON-RPC request, and it was the
    /// server's request `id` (an object with that `id` whose `method` came
    /// first): it is answered with an error, -32600 (-32700 when it nests
    /// deeper than the limit).
    #[error("the server's request {id} is invalid: {error}")]
    BrokenRequest {
        /// The server's request.
        id: RequestId,
        /// What is wrong with it.
        error: DecodeError,
    },
    /// A line that is not JSON (cut short, not UTF-8, broken syntax) but
    /// starts like the server's request `id`: it is answered with an error,
    /// -32700.
    #[error("the server's request {id} is not JSON: {error}")]
    UndecodableRequest {
        /// The server's request.
        id: RequestId,
        /// What the JSON parser said.
        error: DecodeError,
    },
}

/// Last bytes of an oversized line kept to learn a trailing `id` from.
const TAIL_KEEP: usize = 256;

impl From<JsonLineCodecError> for TransportError {
    fn from(e: JsonLineCodecError) -> Self {
        let dropped = match &e {
            JsonLineCodecError::LineTooLong { dropped, .. }
            | JsonLineCodecError::UndecodableAnswer { dropped, .. } => dropped.clone(),
            JsonLineCodecError::BrokenAnswer { id, .. } => Dropped::Answer(id.clone()),
            JsonLineCodecError::BrokenRequest { id, error } => {
                // JSON, but not a request object: -32600; nested past the
                // limit, it was never read: -32700.
                let code = match error {
                    DecodeError::TooDeep { .. } => ErrorCode::PARSE_ERROR,
                    _ => ErrorCode::INVALID_REQUEST,
                };
                let id = id.clone();
                return TransportError::new(TransportErrorKind::Decode, e)
                    .refusing_request(id, code);
            }
            JsonLineCodecError::UndecodableRequest { id, .. } => Dropped::Request(id.clone()),
            JsonLineCodecError::Message(_) => Dropped::NotAnAnswer,
        };
        dropped.scope(TransportError::new(TransportErrorKind::Decode, e))
    }
}

/// An oversized line being dropped as it arrives.
#[derive(Debug, Clone)]
struct Discard {
    head: FrameHead,
    len: u64,
    /// Already reported, as the answer its head names (at the crossing).
    reported: bool,
    /// Its last bytes so far (at most [`TAIL_KEEP`]).
    tail: Vec<u8>,
}

impl Discard {
    /// `line`: the line's first bytes (more than `limit`); only `limit` of
    /// them are scanned, so how the line was split into reads does not matter.
    fn new(line: &[u8], limit: usize) -> Self {
        let mut d = Discard {
            head: peek_head(line.get(..limit).unwrap_or(line)),
            len: 0,
            reported: false,
            tail: Vec::new(),
        };
        d.push(line);
        d
    }

    /// The report due as soon as the limit is crossed: when the line's
    /// first `limit` bytes name the request it answers (an id there decides
    /// alone: its last bytes cannot change what it was).
    fn report_early(&mut self, limit: usize) -> Option<JsonLineCodecError> {
        let dropped = Dropped::from_parts(&self.head, &[]);
        if !matches!(dropped, Dropped::Answer(_) | Dropped::Request(_)) {
            return None;
        }
        self.reported = true;
        Some(JsonLineCodecError::LineTooLong {
            limit,
            len: self.len,
            ended: false,
            dropped,
        })
    }

    fn push(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        let keep = bytes.len().min(TAIL_KEEP);
        let drop = (self.tail.len() + keep).saturating_sub(TAIL_KEEP);
        self.tail.drain(..drop.min(self.tail.len()));
        self.tail
            .extend_from_slice(bytes.get(bytes.len() - keep..).unwrap_or_default());
    }
}

/// Newline-delimited JSON-RPC codec with a size limit, sans-IO.
///
/// [`JsonLineCodec`] turns bytes into [`Message`]s and back. It does no IO:
/// the caller appends whatever it read to a [`BytesMut`] and calls
/// [`decode`](JsonLineCodec::decode) until it returns `Ok(None)`, then reads
/// more. At end of input it calls [`decode_eof`](JsonLineCodec::decode_eof).
/// This is the shape of `tokio-util`'s `Decoder` (without the dependency), so
/// the codec can be driven by any runtime, a fuzzer or a unit test.
///
/// # Decoding states
///
/// ```text
///            newline found, line ≤ limit            newline found
///        ┌───────────────────────────────┐       ┌─────────────────┐
///        ▼                               │       ▼                 │
///   ┌─────────┐  no newline, > limit  ┌──┴─────────┐               │
///   │ framing │──────────────────────▶│ discarding │───────────────┘
///   └─────────┘  (LineTooLong, once)  └────────────┘  (back to framing)
/// ```
///
/// - **Framing.** The decoder looks for `\n` starting at `next_index`, the
///   first byte it has not scanned yet, so a long line arriving in many small
///   reads is scanned once in total, not once per read.
/// - **Discarding.** A line longer than the limit is dropped *as it
///   arrives*: the buffer is emptied after every read, so memory stays
///   bounded by the limit plus one read, whatever the line's length. Only
///   its first `limit` bytes (scanned once for the `id`) and its last
///   256 bytes (a trailing `"id"`) are looked at. It is reported once as
///   [`JsonLineCodecError::LineTooLong`], with its size, the limit and what
///   it was ([`Dropped`]): the transport turns that into an error scoped to
///   the request it answered, so that call fails at once. *When* it is
///   reported: the moment the limit is crossed if its first `limit` bytes
///   name the request it answers (the Python SDK's order; a server that
///   sends an answer's head and then bytes forever fails that call at once,
///   not at its timeout), otherwise when it ends (the TypeScript SDK puts
///   the `id` last). The next line after the newline decodes normally.
///
/// # A dropped line whose id cannot be learned
///
/// A response too large to decode whose id is neither among its first
/// `limit` bytes nor its last member ([`Dropped::UnknownAnswer`]) may have
/// answered any pending call, and the session cannot tell which. Going on
/// silently would leave one call waiting for its whole timeout for an
/// answer already thrown away; closing the connection would punish calls
/// that had nothing to do with it. So the transport error is marked
/// [`answering_unknown`](TransportError::answering_unknown) and the client
/// fails every call waiting for an answer at that moment (each with the
/// size and the limit), and the connection goes on: later calls work.
///
/// # What a line may be
///
/// | line | result |
/// |---|---|
/// | a JSON-RPC message | `Ok(Some(message))` |
/// | empty, or only whitespace (including a CRLF's `\r`) | skipped silently |
/// | not JSON at all (a banner such as `Server v1.2 listening`) | skipped, counted in [`skipped_lines`](JsonLineCodec::skipped_lines), `tracing` warning |
/// | JSON that is not a valid JSON-RPC envelope | `Err(Message(..))`, scoped: the next line decodes normally |
/// | longer than the limit | discarded as it arrives; `Err(LineTooLong { limit, len, ended, dropped })` once, naming the request it answered: when the limit is crossed if its start names it, else at its newline (or end of input) |
/// | JSON, not JSON-RPC, with an `id` and no `method` | `Err(BrokenAnswer { id, .. })`, scoped |
/// | JSON, not JSON-RPC (or nested too deep), a request of the server's (`method` first) with an `id` | `Err(BrokenRequest { id, .. })`: the client answers it with -32600 (-32700 when too deep) |
/// | not JSON, but starts like a request of the server's with its `id` | `Err(UndecodableRequest { id, .. })`: answered with -32700 |
/// | not JSON (cut short, invalid UTF-8, broken syntax) but an object that starts like an answer (`result`/`error` first) or names its `id` first or last | `Err(UndecodableAnswer { dropped, error })`, scoped: the call it answered fails now |
///
/// One trailing `\r` is stripped (CRLF is tolerated). Lines must be UTF-8;
/// a line that is not is "not JSON": skipped as noise, unless it is shaped
/// like an answer (the row above).
#[derive(Debug, Clone)]
pub struct JsonLineCodec {
    max_message_size: usize,
    /// Bytes of the buffer already searched for `\n` (framing state).
    next_index: usize,
    /// Dropping the rest of an oversized line.
    discarding: Option<Discard>,
    skipped_lines: u64,
    /// Room a line longer than one read should get at once: set when a large
    /// line was handed over with its buffer (see [`take_line`]).
    large_line_hint: usize,
}

impl Default for JsonLineCodec {
    fn default() -> Self {
        Self::new()
    }
}

enum Line {
    Message(Message),
    Skip,
    Error(JsonLineCodecError),
}

impl JsonLineCodec {
    /// A codec with the [default limit](DEFAULT_MAX_MESSAGE_SIZE).
    pub fn new() -> Self {
        JsonLineCodec {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            next_index: 0,
            discarding: None,
            skipped_lines: 0,
            large_line_hint: 0,
        }
    }

    /// Sets the largest accepted message, in bytes (the line without its
    /// `\n`). A value of 0 is treated as 1.
    #[must_use]
    pub fn with_max_message_size(mut self, limit: usize) -> Self {
        self.max_message_size = limit.max(1);
        self
    }

    /// The largest accepted message, in bytes.
    pub fn max_message_size(&self) -> usize {
        self.max_message_size
    }

    /// How many non-blank lines were skipped because they were not JSON.
    pub fn skipped_lines(&self) -> u64 {
        self.skipped_lines
    }

    /// Whether the codec is dropping the rest of an oversized line.
    pub fn is_discarding(&self) -> bool {
        self.discarding.is_some()
    }

    /// Decodes the next message from `buf`, consuming its bytes.
    ///
    /// `Ok(None)` means more input is needed; what was already scanned is
    /// remembered, so calling again after appending bytes does not rescan.
    /// An `Err` concerns one line only; call `decode` again for the next.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Message>, JsonLineCodecError> {
        loop {
            let start = self.next_index.min(buf.len());
            let newline = buf
                .get(start..)
                .and_then(|rest| memchr::memchr(b'\n', rest))
                .map(|i| start + i);

            if let Some(d) = self.discarding.as_mut() {
                match newline {
                    Some(nl) => {
                        d.push(buf.get(..nl).unwrap_or_default());
                        buf.advance(nl + 1);
                        self.next_index = 0;
                        match self.finish_discard() {
                            Some(e) => return Err(e),
                            // Reported when the limit was crossed.
                            None => continue,
                        }
                    }
                    None => {
                        d.push(&buf[..]);
                        buf.clear();
                        self.next_index = 0;
                        return Ok(None);
                    }
                }
            }

            let Some(nl) = newline else {
                if buf.len() > self.max_message_size {
                    // Already longer than allowed with no end in sight: drop
                    // what we have and the rest as it comes (its start and
                    // last bytes tell which request it answered). When its
                    // start names the request, that call fails now: the
                    // line may never end.
                    let mut d = Discard::new(buf, self.max_message_size);
                    buf.clear();
                    self.next_index = 0;
                    let early = d.report_early(self.max_message_size);
                    self.discarding = Some(d);
                    return match early {
                        Some(e) => Err(e),
                        None => Ok(None),
                    };
                }
                self.next_index = buf.len();
                return Ok(None);
            };

            self.next_index = 0;
            if nl > self.max_message_size {
                self.discarding = Some(Discard::new(
                    buf.get(..nl).unwrap_or_default(),
                    self.max_message_size,
                ));
                buf.advance(nl + 1);
                match self.finish_discard() {
                    Some(e) => return Err(e),
                    None => continue,
                }
            }
            let line = self.take_line(buf, nl);
            match self.classify(line) {
                Line::Message(m) => return Ok(Some(m)),
                Line::Error(e) => return Err(e),
                Line::Skip => {}
            }
        }
    }

    /// Like [`decode`](Self::decode), at end of input: a final line without
    /// a trailing newline is decoded too. Call until it returns `Ok(None)`;
    /// the buffer is then empty.
    pub fn decode_eof(
        &mut self,
        buf: &mut BytesMut,
    ) -> Result<Option<Message>, JsonLineCodecError> {
        if let Some(m) = self.decode(buf)? {
            return Ok(Some(m));
        }
        self.next_index = 0;
        if self.discarding.is_some() {
            // The oversized line ended with the input.
            buf.clear();
            return match self.finish_discard() {
                Some(e) => Err(e),
                None => Ok(None),
            };
        }
        if buf.is_empty() {
            return Ok(None);
        }
        // `decode` left fewer than `max_message_size` bytes with no newline.
        let line = self.take_line(buf, buf.len());
        buf.clear();
        match self.classify(line) {
            Line::Message(m) => Ok(Some(m)),
            Line::Error(e) => Err(e),
            Line::Skip => Ok(None),
        }
    }

    /// Appends `msg` as one line (compact JSON and `\n`) to `dst`.
    ///
    /// The line never contains an embedded newline: JSON escapes newlines in
    /// strings, and the insignificant whitespace a raw `params`/`result` value
    /// may carry (pretty-printed JSON) is rewritten to spaces, which does not
    /// change the JSON value.
    pub fn encode(&mut self, msg: &Message, dst: &mut Vec<u8>) {
        encode_line(msg, dst);
    }

    /// The oversized line ended: its report, with what it answered, unless
    /// it was reported when the limit was crossed.
    fn finish_discard(&mut self) -> Option<JsonLineCodecError> {
        let d = self.discarding.take()?;
        if d.reported {
            tracing::debug!(
                len = d.len,
                "the oversized answer reported earlier has ended"
            );
            return None;
        }
        Some(JsonLineCodecError::LineTooLong {
            limit: self.max_message_size,
            len: d.len,
            ended: true,
            dropped: Dropped::from_parts(&d.head, &d.tail),
        })
    }

    fn classify(&mut self, mut line: Vec<u8>) -> Line {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return Line::Skip;
        }
        // The line becomes the message's storage: its `params`/`result`
        // are read in place later, never copied out.
        let (err, line) = match String::from_utf8(line) {
            Ok(text) => match Message::try_from_string(text) {
                Ok(m) => return Line::Message(m),
                Err((e, text)) => (e, text.into_bytes()),
            },
            Err(not_utf8) => {
                let bytes = not_utf8.into_bytes();
                match Message::from_slice(&bytes) {
                    Ok(m) => return Line::Message(m),
                    Err(e) => (e, bytes),
                }
            }
        };
        self.broken_line(err, line)
    }

    /// What a line that did not decode is (out of line: an ordinary
    /// message never comes here).
    #[cold]
    #[inline(never)]
    fn broken_line(&mut self, err: DecodeError, line: Vec<u8>) -> Line {
        // Valid JSON of the wrong shape is a broken message the client
        // should hear about.
        if serde_json::from_slice::<&RawValue>(&line).is_ok() {
            return Line::Error(match answered_id(&line) {
                Some(id) => JsonLineCodecError::BrokenAnswer { id, error: err },
                None => match Dropped::learn(&line, &[]) {
                    Dropped::Request(id) => JsonLineCodecError::BrokenRequest { id, error: err },
                    _ => JsonLineCodecError::Message(err),
                },
            });
        }
        // Not JSON (cut short, not UTF-8) but shaped like an answer at
        // either end: its call fails now rather than wait for it; or like
        // the server's request: it is answered with an error.
        let tail = line.get(line.len().saturating_sub(TAIL_KEEP)..);
        let dropped = Dropped::learn(&line, tail.unwrap_or_default());
        if let Dropped::Request(id) = dropped {
            return Line::Error(JsonLineCodecError::UndecodableRequest { id, error: err });
        }
        if dropped.is_answer() {
            return Line::Error(JsonLineCodecError::UndecodableAnswer {
                dropped,
                error: err,
            });
        }
        // Anything else is noise on stdout.
        let line = &line[..];
        self.skipped_lines += 1;
        let preview = line.get(..NOISE_PREVIEW).unwrap_or(line);
        // Warn for the first few, then at powers of two: a server
        // that logs to stdout must not flood the client's logs.
        let n = self.skipped_lines;
        if n <= NOISE_WARNINGS || n.is_power_of_two() {
            tracing::warn!(
                skipped_lines = n,
                line = %String::from_utf8_lossy(preview),
                len = line.len(),
                "skipping a line on the server's stdout that is not JSON (servers must log to stderr)"
            );
        } else {
            tracing::debug!(
                skipped_lines = n,
                line = %String::from_utf8_lossy(preview),
                "skipping a non-JSON line on the server's stdout"
            );
        }
        Line::Skip
    }
}

/// A line at least this long is not copied out of the read buffer: the
/// buffer itself becomes the message's storage.
const TAKE_LINE_MIN: usize = 32 * 1024;

/// Spare capacity a buffer holding exactly one line may have and still be
/// handed over as the line (beyond a quarter of its length).
const TAKE_SLACK: usize = 64;

impl JsonLineCodec {
    /// How much room a partial line (one longer than a read) should be
    /// given at once: the size of the last large line handed over, when
    /// that is within what an idle reader retains; 0 otherwise. The reader
    /// reserves it only once such a line starts arriving, so a large message
    /// and the next one's buffer are not both allocated while the first is
    /// still being decoded.
    pub(crate) fn large_line_hint(&self) -> usize {
        self.large_line_hint
    }

    /// Removes the first `len` bytes and the newline after them (if any)
    /// from `buf` and returns the `len` bytes.
    fn take_line(&mut self, buf: &mut BytesMut, len: usize) -> Vec<u8> {
        let after = buf.len().saturating_sub(len + 1);
        if after == 0 && len < TAKE_LINE_MIN {
            // The line is all the buffer holds (a read that brought one
            // answer). When the allocation is about the line's size it
            // becomes the line: no copy, and the reader would release the
            // empty buffer before its next read anyway. (`try_reclaim` moves
            // the line to the front of the allocation when a consumed prefix
            // is at least as long, so that `capacity` then measures the
            // whole allocation; otherwise that prefix is shorter than the line.)
            let spare = buf.capacity() - buf.len();
            let _ = buf.try_reclaim(spare.saturating_add(1));
            if buf.capacity() <= len + len / 4 + TAKE_SLACK {
                let mut line = Vec::from(std::mem::take(buf));
                line.truncate(len);
                return line;
            }
        }
        // Taking the buffer copies what follows the line into the next one:
        // only when that is small next to the line (at most half of it), so
        // the bytes copied stay a fraction of the bytes taken, however many
        // large lines one read brought in.
        if len < TAKE_LINE_MIN || after > len / 2 {
            let line = buf.get(..len).unwrap_or_default().to_vec();
            buf.advance((len + 1).min(buf.len()));
            return line;
        }
        let room = len + len / 8 + 64 * 1024;
        self.large_line_hint = if room <= RETAINED_READ_CAPACITY {
            room
        } else {
            0
        };
        let rest = buf.get(len + 1..).unwrap_or_default();
        let next = BytesMut::from(rest);
        let mut whole = std::mem::replace(buf, next);
        whole.truncate(len);
        // Zero-copy: the buffer was never shared (the codec only advances it).
        let mut line = Vec::from(whole);
        if line.capacity() - line.len() > line.len() / 4 {
            line.shrink_to_fit();
        }
        line
    }
}

/// A raw `params`/`result` at least this large is not copied into the write
/// buffer: [`encode_line_owned`] hands its bytes back to be written as they
/// are (one vectored write with the envelope).
pub(crate) const RAW_SEGMENT_MIN: usize = 32 * 1024;

/// Appends `msg` and `\n` to `dst`, never with an embedded newline.
pub(crate) fn encode_line(msg: &Message, dst: &mut Vec<u8>) {
    let start = dst.len();
    msg.write_to(dst);
    // Raw values keep their whitespace verbatim; outside strings (the only
    // place a raw CR/LF can be in valid JSON) it is insignificant.
    if let Some(written) = dst.get_mut(start..) {
        sanitize(written);
    }
    dst.push(b'\n');
}

/// How [`encode_line_owned`] encoded a message.
pub(crate) enum Encoded {
    /// The whole line was appended to `dst`.
    Inline,
    /// The envelope up to the raw value was appended to `dst`; the line goes
    /// on with `raw` (sanitized, not copied), then [`RAW_LINE_END`].
    Split {
        /// The raw value's bytes: the message's own allocation.
        raw: Vec<u8>,
    },
}

/// What follows a split-off raw value: the envelope's `}` and the newline.
pub(crate) const RAW_LINE_END: &[u8] = b"}\n";

/// Like [`encode_line`], but a large raw `params` or `result` (the bulk of a
/// big message) is moved out of `msg` instead of being copied into `dst`.
///
/// The bytes written are the same as [`Message::write_to`]'s (a unit test
/// compares them for every variant). Only the raw value is scanned for CR/LF:
/// everything else is serialized by `serde_json`, which escapes control
/// characters in strings.
pub(crate) fn encode_line_owned(msg: Message, dst: &mut Vec<u8>) -> Encoded {
    if msg.raw().is_none_or(|raw| raw.len() < RAW_SEGMENT_MIN) {
        encode_line(&msg, dst);
        return Encoded::Inline;
    }
    // The envelope up to the value is serialized by `serde_json` (strings
    // escaped: no raw CR/LF); only the value needs the rewrite.
    let Some(raw) = msg.write_split(dst) else {
        // Unreachable (the message has a raw value); keep the line framed.
        dst.push(b'\n');
        return Encoded::Inline;
    };
    // The value's own buffer, moved (copied only if it is a span of a
    // larger received message).
    let mut raw = raw.into_bytes();
    sanitize(&mut raw);
    Encoded::Split { raw }
}

/// Rewrites every CR and LF in `json` to a space. Only valid on JSON text
/// where they can only be insignificant whitespace (inside strings they are
/// always escaped).
fn sanitize(json: &mut [u8]) {
    let mut from = 0;
    while let Some(i) = json
        .get(from..)
        .and_then(|rest| memchr::memchr2(b'\n', b'\r', rest))
    {
        if let Some(b) = json.get_mut(from + i) {
            *b = b' ';
        }
        from += i + 1;
    }
}

#[cfg(test)]
mod tests;
