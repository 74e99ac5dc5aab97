//! [`LineTransport`]: newline-delimited JSON-RPC over any byte stream pair.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::BytesMut;
use mcp_proto::Message;
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use crate::codec::{Encoded, JsonLineCodec, RAW_LINE_END, encode_line_owned};

/// Default amount of unsent bytes above which
/// [`poll_ready`](Transport::poll_ready) waits for a flush: 1 MiB.
pub const DEFAULT_WRITE_BUFFER_LIMIT: usize = 1024 * 1024;

/// The write buffer's capacity at the first message: an `initialize`
/// request with a client's usual capabilities and name fits (~200–400
/// bytes); a larger one grows it as any message does.
const FIRST_WRITE_CAPACITY: usize = 512;

/// Default bound of [`LineTransport`]'s [`poll_close`](Transport::poll_close):
/// how long it waits for the peer to take what is still unsent: 2 s.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// Size of the first read after the read buffer was released (while idle:
/// an idle connection holds no read buffer at all), and the least spare
/// capacity reserved for a read. A stack array, so its size costs no heap:
/// 8 KiB takes the answers to 32 concurrent calls (~4.3 KiB) in one read,
/// where 4 KiB took two system calls per round.
pub(crate) const MIN_READ: usize = 8 * 1024;

/// Most spare capacity reserved for one read: the reserve doubles from
/// [`MIN_READ`] up to this while reads keep filling it (a burst of answers,
/// a large line).
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// Most buffers handed to one vectored write.
const MAX_WRITE_SLICES: usize = 64;

/// Reads per `poll_recv` call before yielding to the scheduler, so a stream
/// of skipped lines cannot starve other tasks.
const READS_PER_POLL: usize = 32;

/// An idle write buffer larger than this is released after a flush, so a
/// burst of messages does not pin its memory for the transport's lifetime
/// (large raw values are written from their own buffers, not this one).
const RETAINED_WRITE_CAPACITY: usize = READ_CHUNK;

/// An empty read buffer larger than this is released before the next read
/// (after a big message, or an oversized line that was discarded).
pub(crate) const RETAINED_READ_CAPACITY: usize = 4 * 1024 * 1024;

/// The largest read buffer kept at a read that finds nothing while answers
/// are due (see [`ReadHalf::on_quiet`]); a larger one is released as when idle.
pub(crate) const KEPT_READ_CAPACITY: usize = READ_CHUNK;

/// Newline-delimited JSON-RPC over any `AsyncRead` + `AsyncWrite` pair: a
/// TCP or Unix socket's halves, `tokio::io::duplex`, a child's pipes.
///
/// Reading uses [`JsonLineCodec`] (size limit, banner skipping, CRLF). Writing
/// is batched: [`start_send`](Transport::start_send) only appends the encoded
/// line to a buffer, and [`poll_flush`](Transport::poll_flush) writes all
/// queued messages with as few `write` calls as the writer accepts (one, for
/// a handful of small messages on a pipe). [`poll_ready`](Transport::poll_ready)
/// applies backpressure once more than
/// [`write_buffer_limit`](Self::with_write_buffer_limit) bytes are unsent.
///
/// [`poll_close`](Transport::poll_close) flushes, shuts the writer down and
/// drops it; afterwards `poll_recv` returns `None`. `None` from `poll_recv`
/// before that means the reader reached end of input. Closing is bounded:
/// a peer that takes nothing for [`close_timeout`](Self::with_close_timeout)
/// (default [`DEFAULT_CLOSE_TIMEOUT`]) gets the rest dropped, and `poll_close`
/// returns a [`Timeout`](TransportErrorKind::Timeout) error (informational:
/// the transport is closed). The wait needs tokio's time driver; a close
/// that finishes at once does not. On a connection the peer already closed
/// (broken pipe, reset) `poll_close` returns `Ok`: nothing is left to shut
/// down.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_proto::jsonrpc::Request;
/// use mcp_proto::transport::TransportExt;
/// use mcp_transport_stdio::LineTransport;
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// let (ours, theirs) = tokio::io::duplex(4096);
/// let (r, w) = tokio::io::split(ours);
/// let mut t = LineTransport::new(r, w);
/// t.send(Request::new(1.into(), "ping", None).into()).await?;
///
/// let (theirs_r, mut theirs_w) = tokio::io::split(theirs);
/// let mut line = String::new();
/// BufReader::new(theirs_r).read_line(&mut line).await?;
/// assert_eq!(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
/// theirs_w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await?;
/// let reply = t.recv().await.expect("a reply")?;
/// assert_eq!(reply.id(), Some(&1.into()));
/// # Ok(()) }
/// ```
pub struct LineTransport<R, W> {
    pub(crate) read: ReadHalf<R>,
    pub(crate) write: WriteHalf<W>,
    closed: bool,
    close_timeout: Duration,
    /// Started when a close first has to wait for the peer.
    close_deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<R, W> fmt::Debug for LineTransport<R, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineTransport")
            .field("codec", &self.read.codec)
            .field("read_state", &self.read.state)
            .field("buffered_in", &self.read.buf.len())
            .field("unsent", &self.write.unsent())
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadState {
    Open,
    /// The reader returned end of input; the buffer may hold a last line.
    Eof,
    /// Nothing more will be read.
    Done,
}

pub(crate) struct ReadHalf<R> {
    io: R,
    buf: BytesMut,
    /// Spare room to reserve before the next read (see [`MIN_READ`]).
    read_size: usize,
    /// A request was queued since the last read that found nothing, and in
    /// the interval before that: its answer is due (see [`Self::on_quiet`]).
    asked: bool,
    asked_before: bool,
    /// Messages (and scoped errors) returned since `poll_recv` last returned
    /// `Pending`.
    brought: usize,
    pub(crate) codec: JsonLineCodec,
    pub(crate) state: ReadState,
}

pub(crate) struct WriteHalf<W> {
    io: Option<W>,
    /// Sealed chunks, written before `buf`, oldest first: the large raw
    /// value of a message (its own allocation, moved, not copied) and the
    /// bytes queued before it. Empty unless a large message was queued.
    chunks: VecDeque<Vec<u8>>,
    /// Total length of `chunks`.
    chunked: usize,
    /// The open chunk that small messages (and envelope ends) are encoded
    /// into; written after `chunks`.
    buf: Vec<u8>,
    /// Bytes of the first unwritten chunk (`chunks`' front, else `buf`)
    /// already written.
    pos: usize,
    limit: usize,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    /// A transport reading messages from `reader` and writing to `writer`,
    /// with the [default limit](crate::DEFAULT_MAX_MESSAGE_SIZE).
    pub fn new(reader: R, writer: W) -> Self {
        LineTransport {
            read: ReadHalf {
                io: reader,
                buf: BytesMut::new(),
                read_size: MIN_READ,
                asked: false,
                asked_before: false,
                brought: 0,
                codec: JsonLineCodec::new(),
                state: ReadState::Open,
            },
            write: WriteHalf {
                io: Some(writer),
                chunks: VecDeque::new(),
                chunked: 0,
                // Room for the first message (the handshake's) at once,
                // rather than a growth and copy for each piece of its
                // envelope written into an empty buffer (~600 instructions
                // of a cold start's ~40 k); the buffer is kept after a flush
                // and would grow to about this anyway.
                buf: Vec::with_capacity(FIRST_WRITE_CAPACITY),
                pos: 0,
                limit: DEFAULT_WRITE_BUFFER_LIMIT,
            },
            closed: false,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            close_deadline: None,
        }
    }

    /// Sets the largest accepted incoming message, in bytes
    /// (default [`DEFAULT_MAX_MESSAGE_SIZE`](crate::DEFAULT_MAX_MESSAGE_SIZE)).
    #[must_use]
    pub fn with_max_message_size(mut self, limit: usize) -> Self {
        self.read.codec = self.read.codec.with_max_message_size(limit);
        self
    }

    /// Sets how many unsent bytes make `poll_ready` wait for a flush
    /// (default [`DEFAULT_WRITE_BUFFER_LIMIT`]). A single message larger than
    /// this is still accepted: the limit only stops further queueing.
    #[must_use]
    pub fn with_write_buffer_limit(mut self, limit: usize) -> Self {
        self.write.limit = limit.max(1);
        self
    }

    /// Sets how long [`poll_close`](Transport::poll_close) waits for the
    /// peer to take what is unsent (default [`DEFAULT_CLOSE_TIMEOUT`]).
    #[must_use]
    pub fn with_close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Queues `msg` for the next flush; a request marks its answer as due
    /// (the read buffer is kept meanwhile: [`ReadHalf::on_quiet`]).
    pub(crate) fn queue(&mut self, msg: Message) -> Result<(), TransportError> {
        let request = matches!(msg, Message::Request(_));
        self.write.start_send(msg)?;
        if request {
            self.read.note_request();
        }
        Ok(())
    }

    /// How many non-JSON lines (banners, stray prints) were skipped.
    pub fn skipped_lines(&self) -> u64 {
        self.read.codec.skipped_lines()
    }

    /// Bytes queued by `start_send` and not yet written.
    pub fn unsent_bytes(&self) -> usize {
        self.write.unsent()
    }

    /// Capacity of the read buffer, in bytes. It stays near the message
    /// limit plus one read (64 KiB) whatever the peer sends, and is 0 while
    /// the connection is idle (nothing partial buffered and no answer due:
    /// the buffer is released, and allocated again when something arrives).
    /// While a request's answer is due, a buffer of up to 64 KiB is kept
    /// between reads.
    pub fn read_buffer_capacity(&self) -> usize {
        self.read.buf.capacity()
    }
}

impl<R: AsyncRead + Unpin> ReadHalf<R> {
    /// Next message, scoped decode error, terminal IO error, or end of input.
    pub(crate) fn poll_recv(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let mut reads = 0;
        loop {
            match self.state {
                ReadState::Done => return Poll::Ready(None),
                ReadState::Eof => {
                    return Poll::Ready(match self.codec.decode_eof(&mut self.buf) {
                        Ok(Some(m)) => Some(Ok(m)),
                        Err(e) => Some(Err(e.into())),
                        Ok(None) => {
                            self.state = ReadState::Done;
                            None
                        }
                    });
                }
                ReadState::Open => {}
            }
            match self.codec.decode(&mut self.buf) {
                Ok(Some(m)) => {
                    self.brought += 1;
                    return Poll::Ready(Some(Ok(m)));
                }
                Err(e) => {
                    self.brought += 1;
                    return Poll::Ready(Some(Err(e.into())));
                }
                Ok(None) => {}
            }
            if reads == READS_PER_POLL {
                // A `Pending` all the same: what came before it is counted
                // no more, as by a reader that counts what it got between
                // two `Pending`s (see `on_quiet`).
                self.brought = 0;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            reads += 1;
            let filled = match self.poll_fill(cx) {
                Poll::Ready(r) => r,
                Poll::Pending => {
                    self.on_quiet();
                    return Poll::Pending;
                }
            };
            match filled {
                Ok(0) => self.state = ReadState::Eof,
                Ok(_) => {}
                Err(e) => {
                    self.state = ReadState::Done;
                    self.buf = BytesMut::new();
                    return Poll::Ready(Some(Err(e.into())));
                }
            }
        }
    }

    /// One read into the spare end of the buffer.
    ///
    /// The read goes straight into the buffer's spare capacity, which is not
    /// zeroed first (tokio's `read_buf` hands it to the reader as
    /// uninitialised memory; no `unsafe` here). The capacity grows
    /// geometrically (`Vec`'s doubling), so a 1 MiB line costs a handful of
    /// reallocations, once; and a consumed prefix is reclaimed before the
    /// buffer grows, so a line is accumulated from the start of the buffer.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.buf.capacity() == 0 {
            return self.poll_fill_released(cx);
        }
        // Move the unconsumed bytes to the front of the allocation when the
        // consumed prefix is at least as long as they are (a short partial
        // line, usually nothing): cheap, never allocates, and it gives back
        // the whole allocation to the next line. Without it the next line
        // starts where the previous one ended and, if long, is copied to the
        // front once the end of the allocation is reached. (`capacity()`
        // counts from the first unconsumed byte: only after this does it
        // measure the whole allocation.)
        let unused = self.buf.capacity() - self.buf.len();
        let _ = self.buf.try_reclaim(unused.saturating_add(1));
        if self.buf.is_empty() && self.buf.capacity() > RETAINED_READ_CAPACITY {
            self.buf = BytesMut::new();
        }
        // A line longer than one read is arriving (complete lines were all
        // decoded before this read): give it the room the last large line
        // took, at once, instead of doubling towards it (each doubling
        // copies the partial line).
        let hint = self.codec.large_line_hint();
        if !self.buf.is_empty() && hint > self.buf.capacity() {
            self.buf.reserve(hint - self.buf.len());
        }
        if self.buf.capacity() - self.buf.len() < self.read_size {
            self.buf.reserve(self.read_size);
        }
        let spare = self.buf.capacity() - self.buf.len();
        let read = pin!(self.io.read_buf(&mut self.buf));
        let n = ready!(read.poll(cx))?;
        if n == spare {
            // The read filled all the room it had: more is likely waiting.
            self.read_size = (self.read_size * 2).min(READ_CHUNK);
        }
        Poll::Ready(Ok(n))
    }

    /// The first read after the buffer was released (or used up to its
    /// end): into a [`MIN_READ`]-byte array on the stack, so that waiting
    /// for input holds no heap memory. What arrived is then copied into a
    /// buffer of just its size (a small answer: one allocation the size of
    /// the answer, which the allocator serves from its per-thread cache).
    fn poll_fill_released(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let mut room = [std::mem::MaybeUninit::<u8>::uninit(); MIN_READ];
        let mut first = ReadBuf::uninit(&mut room);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut first))?;
        let got = first.filled();
        if got.len() == MIN_READ {
            // More is likely waiting: room for the next read at once, or
            // for all of a line as long as the last large one (the heap
            // path would otherwise grow to it, copying the whole buffer).
            let room = (MIN_READ + self.read_size).max(self.codec.large_line_hint());
            self.buf = BytesMut::with_capacity(room);
            self.buf.extend_from_slice(got);
            self.read_size = (self.read_size * 2).min(READ_CHUNK);
        } else if !got.is_empty() {
            self.buf = BytesMut::from(got);
        }
        Poll::Ready(Ok(got.len()))
    }

    /// A request was queued: its answer is due.
    pub(crate) fn note_request(&mut self) {
        self.asked = true;
    }

    /// A read found nothing. The buffer (up to [`KEPT_READ_CAPACITY`]) is
    /// kept while answers are due, else released
    /// ([`release_if_idle`](Self::release_if_idle)) as on an idle
    /// connection. Answers are due when a request was queued since the last
    /// such read and one message at most came meanwhile (none: the answers
    /// are still to come; two or more: a round of answers, more to come), or
    /// when two or more messages came and a request was queued in the
    /// interval before (a client with calls in flight reads a round of
    /// answers and only then queues the next requests).
    ///
    /// So after a read that brought two or more messages, the reader must
    /// read once more after acting on them (mcp-client's driver does): that
    /// read finds nothing, and releases the buffer, unless the requests the
    /// messages led to were queued meanwhile. A read that brought one message
    /// and no request since keeps nothing: at one call in flight each answer
    /// is one read, whose buffer becomes the answer's storage anyway.
    fn on_quiet(&mut self) {
        let round = self.brought >= 2;
        let due = (self.asked && self.brought != 1) || (self.asked_before && round);
        self.asked_before = std::mem::take(&mut self.asked);
        self.brought = 0;
        if !due || self.buf.capacity() > KEPT_READ_CAPACITY {
            self.release_if_idle();
        }
    }

    /// Nothing to read and nothing partial buffered: gives the read buffer
    /// back, so an idle connection holds none (the next read goes through
    /// [`poll_fill_released`](Self::poll_fill_released)).
    fn release_if_idle(&mut self) {
        if self.buf.is_empty() {
            if self.buf.capacity() > MIN_READ {
                self.read_size = MIN_READ;
            }
            self.buf = BytesMut::new();
        }
    }

    /// Reads and drops everything until end of input or `Pending`, so a
    /// peer blocked writing to us can make progress (used while closing).
    pub(crate) fn poll_drain(&mut self, cx: &mut Context<'_>) {
        while let Poll::Ready(Some(_)) = self.poll_recv(cx) {}
    }
}

impl<W> WriteHalf<W> {
    fn unsent(&self) -> usize {
        (self.chunked + self.buf.len()).saturating_sub(self.pos)
    }

    /// Marks `n` more bytes as written.
    fn advance(&mut self, mut n: usize) {
        while let Some(front) = self.chunks.front() {
            let left = front.len().saturating_sub(self.pos);
            if n < left {
                self.pos += n;
                return;
            }
            n -= left;
            self.chunked -= front.len();
            self.chunks.pop_front();
            self.pos = 0;
        }
        self.pos += n;
    }
}

impl<W: AsyncWrite + Unpin> WriteHalf<W> {
    /// Whether `poll_ready` must flush before more is queued.
    pub(crate) fn is_full(&self) -> bool {
        self.unsent() >= self.limit
    }

    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.is_full() {
            ready!(self.poll_flush(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    pub(crate) fn start_send(&mut self, msg: Message) -> Result<(), TransportError> {
        if self.io.is_none() {
            return Err(TransportError::new(
                TransportErrorKind::Closed,
                "cannot send: the transport is closed",
            ));
        }
        if let Encoded::Split { raw } = encode_line_owned(msg, &mut self.buf) {
            // The envelope so far (and anything queued before it) is sealed,
            // the raw value follows as its own chunk, then the envelope's end.
            let head = std::mem::take(&mut self.buf);
            self.chunked += head.len() + raw.len();
            if !head.is_empty() {
                self.chunks.push_back(head);
            }
            self.chunks.push_back(raw);
            self.buf.extend_from_slice(RAW_LINE_END);
        }
        Ok(())
    }

    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.io.is_none() {
            if self.unsent() == 0 {
                return Poll::Ready(Ok(()));
            }
            return Poll::Ready(Err(TransportError::new(
                TransportErrorKind::Closed,
                "cannot flush: the transport is closed",
            )));
        }
        while self.unsent() > 0 {
            let Some(io) = self.io.as_mut() else {
                break;
            };
            if self.chunks.is_empty() {
                // Only the line buffer (every small message): one `write`,
                // without setting up the slices below.
                let part = self.buf.get(self.pos..).unwrap_or_default();
                let n = ready!(Pin::new(&mut *io).poll_write(cx, part))?;
                if n == 0 {
                    return Poll::Ready(Err(io::Error::from(io::ErrorKind::WriteZero).into()));
                }
                self.advance(n);
                continue;
            }
            // Straight from the queued chunks, nothing is copied: with a
            // large message, envelope + raw value + end go in one `writev`.
            let mut slices = [IoSlice::new(&[]); MAX_WRITE_SLICES];
            let mut count = 0;
            let mut skip = self.pos;
            for chunk in self.chunks.iter().chain(std::iter::once(&self.buf)) {
                let Some(slot) = slices.get_mut(count) else {
                    break;
                };
                let part = chunk.get(skip..).unwrap_or_default();
                skip = 0;
                if !part.is_empty() {
                    *slot = IoSlice::new(part);
                    count += 1;
                }
            }
            let pending = slices.get(..count).unwrap_or_default();
            let n = match pending {
                [one] => ready!(Pin::new(&mut *io).poll_write(cx, one))?,
                _ => ready!(Pin::new(&mut *io).poll_write_vectored(cx, pending))?,
            };
            if n == 0 {
                return Poll::Ready(Err(io::Error::from(io::ErrorKind::WriteZero).into()));
            }
            self.advance(n);
        }
        self.buf.clear();
        self.pos = 0;
        if self.buf.capacity() > RETAINED_WRITE_CAPACITY {
            self.buf = Vec::new();
        }
        if let Some(io) = self.io.as_mut() {
            ready!(Pin::new(io).poll_flush(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    /// Flushes, shuts the writer down and drops it (closing a pipe).
    pub(crate) fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.io.is_none() {
            return Poll::Ready(Ok(()));
        }
        if let Err(e) = ready!(self.poll_flush(cx)) {
            self.abort();
            return Poll::Ready(Err(e));
        }
        if let Some(io) = self.io.as_mut() {
            let res = ready!(Pin::new(io).poll_shutdown(cx));
            self.io = None;
            res?;
        }
        Poll::Ready(Ok(()))
    }

    /// Drops the writer and anything unsent, without waiting.
    pub(crate) fn abort(&mut self) {
        self.io = None;
        self.chunks = VecDeque::new();
        self.chunked = 0;
        self.buf = Vec::new();
        self.pos = 0;
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.io.is_none()
    }
}

impl<R, W> Transport for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let this = self.get_mut();
        if this.closed {
            return Poll::Ready(None);
        }
        this.read.poll_recv(cx)
    }

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().write.poll_ready(cx)
    }

    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        self.get_mut().queue(msg)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().write.poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        let res = match this.write.poll_close(cx) {
            Poll::Ready(res) => res,
            Poll::Pending => {
                let timeout = this.close_timeout;
                let deadline = this
                    .close_deadline
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                ready!(deadline.as_mut().poll(cx));
                let unsent = this.write.unsent();
                this.write.abort();
                Err(TransportError::new(
                    TransportErrorKind::Timeout,
                    format!(
                        "closed with {unsent} bytes unsent: the peer took nothing for {timeout:?}"
                    ),
                ))
            }
        };
        this.close_deadline = None;
        this.closed = true;
        this.read.state = ReadState::Done;
        this.read.buf = BytesMut::new();
        Poll::Ready(match res {
            // The peer is gone: nothing is left to shut down.
            Err(e) if peer_gone(&e) => Ok(()),
            res => res,
        })
    }
}

/// Whether a write or shutdown failed because the peer already closed.
fn peer_gone(e: &TransportError) -> bool {
    e.kind() == TransportErrorKind::Closed
        || e.cause()
            .and_then(|c| c.downcast_ref::<io::Error>())
            .is_some_and(|io| io.kind() == io::ErrorKind::NotConnected)
}

#[cfg(test)]
mod tests;
