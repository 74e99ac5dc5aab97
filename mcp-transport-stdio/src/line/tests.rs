use std::future::poll_fn;
use std::sync::{Arc, Mutex};

use mcp_proto::jsonrpc::{Notification, Request};
use mcp_proto::transport::TransportExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, ReadBuf};

use super::*;
use crate::codec::encode_line;

/// A writer that records every `poll_write` call, accepts at most `per_call`
/// bytes per call, and can be made to return `Pending`.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<RecorderState>>);

#[derive(Default)]
struct RecorderState {
    writes: usize,
    data: Vec<u8>,
    per_call: Option<usize>,
    blocked: bool,
    shutdown: bool,
    /// Accepts vectored writes (like a pipe or socket); else tokio's default
    /// (the first non-empty buffer only).
    vectored: bool,
    /// Address of the first byte of every buffer handed to a write call.
    addrs: Vec<usize>,
}

impl AsyncWrite for Recorder {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut s = self.0.lock().unwrap();
        if s.blocked {
            return Poll::Pending;
        }
        s.writes += 1;
        s.addrs.push(buf.as_ptr() as usize);
        let n = s.per_call.unwrap_or(buf.len()).min(buf.len());
        s.data.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut s = self.0.lock().unwrap();
        if s.blocked {
            return Poll::Pending;
        }
        if !s.vectored {
            let first = bufs
                .iter()
                .find(|b| !b.is_empty())
                .map_or(&[][..], |b| &**b);
            s.writes += 1;
            s.addrs.push(first.as_ptr() as usize);
            let n = s.per_call.unwrap_or(first.len()).min(first.len());
            s.data.extend_from_slice(&first[..n]);
            return Poll::Ready(Ok(n));
        }
        s.writes += 1;
        let mut budget = s.per_call.unwrap_or(usize::MAX);
        let mut n = 0;
        for b in bufs {
            s.addrs.push(b.as_ptr() as usize);
            let take = b.len().min(budget);
            s.data.extend_from_slice(&b[..take]);
            budget -= take;
            n += take;
            if budget == 0 {
                break;
            }
        }
        Poll::Ready(Ok(n))
    }
    fn is_write_vectored(&self) -> bool {
        self.0.lock().unwrap().vectored
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.lock().unwrap().shutdown = true;
        Poll::Ready(Ok(()))
    }
}

fn note(i: usize) -> Message {
    let params = mcp_proto::RawJson::from_string(format!("{{\"i\":{i}}}")).unwrap();
    Notification::new("notifications/progress", Some(params)).into()
}

async fn queue(t: &mut LineTransport<tokio::io::Empty, Recorder>, n: usize) {
    for i in 0..n {
        poll_fn(|cx| Pin::new(&mut *t).poll_ready(cx))
            .await
            .unwrap();
        Pin::new(&mut *t).start_send(note(i)).unwrap();
    }
}

#[tokio::test]
async fn queued_messages_go_out_in_one_write() {
    let rec = Recorder::default();
    let mut t = LineTransport::new(tokio::io::empty(), rec.clone());
    queue(&mut t, 100).await;
    assert_eq!(rec.0.lock().unwrap().writes, 0, "start_send does not write");
    poll_fn(|cx| Pin::new(&mut t).poll_flush(cx)).await.unwrap();
    let s = rec.0.lock().unwrap();
    assert_eq!(s.writes, 1);
    let lines: Vec<&[u8]> = s.data.split(|b| *b == b'\n').collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(
        lines[99],
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"i":99}}"#
    );
}

#[tokio::test]
async fn partial_writes_are_resumed() {
    let rec = Recorder::default();
    rec.0.lock().unwrap().per_call = Some(7);
    let mut t = LineTransport::new(tokio::io::empty(), rec.clone());
    queue(&mut t, 10).await;
    poll_fn(|cx| Pin::new(&mut t).poll_flush(cx)).await.unwrap();
    let mut expected = Vec::new();
    for i in 0..10 {
        encode_line(&note(i), &mut expected);
    }
    let s = rec.0.lock().unwrap();
    assert_eq!(s.data, expected);
    assert_eq!(s.writes, expected.len().div_ceil(7));
    assert_eq!(t.unsent_bytes(), 0);
}

#[tokio::test]
async fn poll_ready_applies_backpressure_over_the_limit() {
    let rec = Recorder::default();
    rec.0.lock().unwrap().blocked = true;
    let mut t = LineTransport::new(tokio::io::empty(), rec.clone()).with_write_buffer_limit(1000);
    let mut accepted = 0;
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    while let Poll::Ready(r) = Pin::new(&mut t).poll_ready(&mut cx) {
        r.unwrap();
        Pin::new(&mut t).start_send(note(accepted)).unwrap();
        accepted += 1;
        assert!(accepted < 1000, "no backpressure");
    }
    assert!(
        t.unsent_bytes() >= 1000 && t.unsent_bytes() < 1100,
        "{}",
        t.unsent_bytes()
    );
    rec.0.lock().unwrap().blocked = false;
    assert!(Pin::new(&mut t).poll_ready(&mut cx).is_ready());
    assert_eq!(t.unsent_bytes(), 0);
    assert_eq!(
        rec.0
            .lock()
            .unwrap()
            .data
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        accepted
    );
}

#[tokio::test]
async fn close_flushes_shuts_down_and_ends_both_directions() {
    let rec = Recorder::default();
    let mut t = LineTransport::new(tokio::io::empty(), rec.clone());
    queue(&mut t, 3).await;
    t.close().await.unwrap();
    {
        let s = rec.0.lock().unwrap();
        assert!(s.shutdown);
        assert_eq!(s.data.iter().filter(|b| **b == b'\n').count(), 3);
    }
    assert!(t.recv().await.is_none());
    let err = t.send(note(0)).await.unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::Closed);
    t.close().await.unwrap();
}

#[tokio::test]
async fn round_trip_over_a_duplex_pipe() {
    let (ours, theirs) = tokio::io::duplex(64);
    let (r, w) = tokio::io::split(ours);
    let mut t = LineTransport::new(r, w);
    let (theirs_r, mut theirs_w) = tokio::io::split(theirs);

    let peer = tokio::spawn(async move {
        let mut lines = BufReader::new(theirs_r).lines();
        let mut n = 0;
        theirs_w.write_all(b"banner\r\n\r\n").await.unwrap();
        while let Some(line) = lines.next_line().await.unwrap() {
            let req = Message::from_slice(line.as_bytes()).unwrap();
            let id = req.id().unwrap().to_value();
            let reply = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"n\":{n}}}}}\r\n");
            // Dribble the reply in small pieces.
            for piece in reply.as_bytes().chunks(5) {
                theirs_w.write_all(piece).await.unwrap();
            }
            n += 1;
        }
        // The client closed its side: end ours after one unterminated line.
        theirs_w
            .write_all(br#"{"jsonrpc":"2.0","method":"bye"}"#)
            .await
            .unwrap();
        theirs_w.shutdown().await.unwrap();
    });

    for i in 0..20 {
        t.send(Request::new(i.into(), "ping", None).into())
            .await
            .unwrap();
        let reply = t.recv().await.unwrap().unwrap();
        assert_eq!(reply.id(), Some(&i.into()));
    }
    assert_eq!(t.skipped_lines(), 1);
    // Close only our write side, keep reading.
    t.write.poll_close_now().await;
    assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("bye"));
    assert!(t.recv().await.is_none());
    assert!(t.recv().await.is_none());
    peer.await.unwrap();
}

#[tokio::test]
async fn read_buffer_stays_bounded_by_the_limit() {
    let (ours, mut theirs) = tokio::io::duplex(1 << 16);
    let mut t = LineTransport::new(ours, tokio::io::sink()).with_max_message_size(100_000);
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 1 << 16];
        for _ in 0..160 {
            // a 10 MiB line
            theirs.write_all(&chunk).await.unwrap();
        }
        theirs
            .write_all(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"after\"}\n")
            .await
            .unwrap();
    });
    let err = t.recv().await.unwrap().unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::Decode);
    assert!(
        t.read_buffer_capacity() <= 2 * (100_000 + READ_CHUNK),
        "{}",
        t.read_buffer_capacity()
    );
    assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("after"));
    assert!(t.read_buffer_capacity() <= 2 * (100_000 + READ_CHUNK));
    writer.await.unwrap();
    assert!(t.recv().await.is_none());
}

/// A reader serving `data` in reads of at most `chunk` bytes, recording how
/// the transport's read buffer behaves: whether the spare capacity it is
/// handed was zeroed first, and how many bytes of a partial line were moved
/// (a read not landing right after the previous one, with a partial line
/// buffered, means the buffer was reallocated or compacted: a copy).
struct Probe {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
    /// Bytes served since the last `\n` (what the transport holds).
    partial: usize,
    next_addr: Option<usize>,
    moved: usize,
    zeroed_reads: usize,
    reads: usize,
}

impl Probe {
    fn new(data: Vec<u8>, chunk: usize) -> Self {
        Probe {
            data,
            pos: 0,
            chunk,
            partial: 0,
            next_addr: None,
            moved: 0,
            zeroed_reads: 0,
            reads: 0,
        }
    }
}

impl AsyncRead for Probe {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        rb: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let rest = &this.data[this.pos..];
        if rest.is_empty() {
            return Poll::Ready(Ok(()));
        }
        this.reads += 1;
        if rb.initialized().len() > rb.filled().len() {
            this.zeroed_reads += 1;
        }
        let addr = rb.filled().as_ptr() as usize + rb.filled().len();
        if this.next_addr.is_some_and(|a| a != addr) {
            this.moved += this.partial;
        }
        let n = rest.len().min(this.chunk).min(rb.remaining());
        let piece = &rest[..n];
        rb.put_slice(piece);
        this.partial = match piece.iter().rposition(|&b| b == b'\n') {
            Some(i) => n - i - 1,
            None => this.partial + n,
        };
        this.pos += n;
        this.next_addr = Some(addr + n);
        Poll::Ready(Ok(()))
    }
}

fn big_lines(count: usize, size: usize) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..count {
        let pad = "x".repeat(size);
        data.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"m{i}\",\"params\":{{\"p\":\"{pad}\"}}}}\n")
                .as_bytes(),
        );
    }
    data
}

#[tokio::test]
async fn reads_go_into_spare_capacity_without_zeroing_it() {
    let data = big_lines(3, 200_000);
    let mut t = LineTransport::new(Probe::new(data, 1 << 16), tokio::io::sink());
    for i in 0..3 {
        let m = t.recv().await.unwrap().unwrap();
        assert_eq!(m.method(), Some(format!("m{i}").as_str()));
    }
    assert!(t.recv().await.is_none());
    let probe = &t.read.io;
    assert!(probe.reads > 3);
    assert_eq!(
        probe.zeroed_reads, 0,
        "the spare capacity was initialised (zeroed) before {} of {} reads",
        probe.zeroed_reads, probe.reads
    );
}

#[tokio::test]
async fn big_lines_are_accumulated_without_repeated_copies() {
    const SIZE: usize = 1 << 20;
    let data = big_lines(20, SIZE);
    let mut t = LineTransport::new(Probe::new(data, 1 << 16), tokio::io::sink());
    for i in 0..20 {
        let m = t.recv().await.unwrap().unwrap();
        assert_eq!(m.method(), Some(format!("m{i}").as_str()));
    }
    assert!(t.recv().await.is_none());
    let probe = &t.read.io;
    // Geometric growth while the first line arrives (64 KiB, 128 KiB, ..,
    // 2 MiB: under 2 MiB copied in all); after that each line is handed over
    // with its buffer and the next gets its room at once, after its first
    // read (one read's worth moved per line).
    assert!(
        probe.moved < 2 * SIZE,
        "{} bytes of partial lines were moved while reading 20 lines of 1 MiB",
        probe.moved
    );
    assert!(t.read_buffer_capacity() <= RETAINED_READ_CAPACITY);
}

#[tokio::test]
async fn read_buffer_is_released_after_a_huge_message() {
    let mut data = big_lines(1, 6 << 20);
    data.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"small\"}\n");
    let mut t = LineTransport::new(Probe::new(data, 1 << 16), tokio::io::sink());
    assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("m0"));
    assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("small"));
    // Released before the next read.
    assert!(t.recv().await.is_none());
    assert!(
        t.read_buffer_capacity() <= 2 * READ_CHUNK,
        "{}",
        t.read_buffer_capacity()
    );
}

fn big_raw(len: usize, pretty: bool) -> mcp_proto::RawJson {
    let pad = "y".repeat(len);
    let text = if pretty {
        format!("{{\r\n  \"a\": [1,\n 2],\n  \"s\": \"{pad}\"\n}}")
    } else {
        format!("{{\"a\":[1,2],\"s\":\"{pad}\"}}")
    };
    mcp_proto::RawJson::from_string(text).unwrap()
}

/// Messages of every kind, small and large, compact and pretty-printed.
fn every_kind() -> Vec<Message> {
    use mcp_proto::ErrorObject;
    use mcp_proto::jsonrpc::{ErrorResponse, Response};
    let mut out = Vec::new();
    for (len, pretty) in [(10, false), (10, true), (100_000, false), (100_000, true)] {
        out.push(Request::new(7.into(), "tools/call", Some(big_raw(len, pretty))).into());
        out.push(
            Request::new(
                "id\n\"x".to_owned().into(),
                "m\u{0}\n",
                Some(big_raw(len, pretty)),
            )
            .into(),
        );
        out.push(Notification::new("notifications/message", Some(big_raw(len, pretty))).into());
        out.push(Response::new(8.into(), big_raw(len, pretty)).into());
    }
    out.push(Request::new(9.into(), "ping", None).into());
    out.push(Notification::new("notifications/initialized", None).into());
    let err: ErrorObject =
        serde_json::from_str(r#"{"code":-32601,"message":"no\nsuch","data":{"x":1}}"#).unwrap();
    out.push(ErrorResponse::new(Some(3.into()), err).into());
    out
}

#[tokio::test]
async fn sent_bytes_equal_the_message_encoding_for_every_kind() {
    for (vectored, per_call) in [
        (true, None),
        (false, None),
        (true, Some(1000)),
        (false, Some(999)),
    ] {
        let rec = Recorder::default();
        rec.0.lock().unwrap().vectored = vectored;
        rec.0.lock().unwrap().per_call = per_call;
        let mut t = LineTransport::new(tokio::io::empty(), rec.clone());
        let mut expected = Vec::new();
        for m in every_kind() {
            encode_line(&m, &mut expected);
            poll_fn(|cx| Pin::new(&mut t).poll_ready(cx)).await.unwrap();
            Pin::new(&mut t).start_send(m).unwrap();
        }
        assert_eq!(t.unsent_bytes(), expected.len());
        poll_fn(|cx| Pin::new(&mut t).poll_flush(cx)).await.unwrap();
        assert_eq!(t.unsent_bytes(), 0);
        let s = rec.0.lock().unwrap();
        assert!(
            s.data == expected,
            "vectored {vectored}, per_call {per_call:?}"
        );
        // One line per message, each valid JSON, the same values as sent.
        let lines: Vec<&[u8]> = s.data.split(|b| *b == b'\n').collect();
        assert_eq!(lines.len(), every_kind().len() + 1);
        for (line, m) in lines.iter().zip(every_kind()) {
            assert!(!line.contains(&b'\r'));
            let got: serde_json::Value = serde_json::from_slice(line).unwrap();
            let want: serde_json::Value = serde_json::from_slice(&m.to_vec()).unwrap();
            assert_eq!(got, want);
        }
    }
}

#[tokio::test]
async fn a_large_raw_value_is_written_from_its_own_allocation_in_one_write() {
    let rec = Recorder::default();
    rec.0.lock().unwrap().vectored = true;
    let mut t = LineTransport::new(tokio::io::empty(), rec.clone());
    Pin::new(&mut t).start_send(note(1)).unwrap();
    let raw = big_raw(1 << 20, false);
    let addr = raw.get().as_ptr() as usize;
    Pin::new(&mut t)
        .start_send(Request::new(2.into(), "tools/call", Some(raw)).into())
        .unwrap();
    Pin::new(&mut t).start_send(note(3)).unwrap();
    // Queued bytes: the small messages and envelope, not a copy of the 1 MiB.
    assert!(t.write.buf.capacity() < 4096, "{}", t.write.buf.capacity());
    poll_fn(|cx| Pin::new(&mut t).poll_flush(cx)).await.unwrap();
    let s = rec.0.lock().unwrap();
    assert_eq!(s.writes, 1, "one vectored write for three messages");
    assert!(
        s.addrs.contains(&addr),
        "the raw value was copied before writing"
    );
    let lines: Vec<&[u8]> = s.data.split(|b| *b == b'\n').collect();
    assert_eq!(lines.len(), 4);
    let m = Message::from_slice(lines[1]).unwrap();
    assert_eq!(m.id(), Some(&2.into()));
}

impl<W: AsyncWrite + Unpin> WriteHalf<W> {
    async fn poll_close_now(&mut self) {
        poll_fn(|cx| self.poll_close(cx)).await.unwrap();
    }
}

#[tokio::test]
async fn read_buffer_is_released_when_idle() {
    let (ours, mut theirs) = tokio::io::duplex(1 << 20);
    let mut t = LineTransport::new(ours, tokio::io::sink());
    let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n";
    let burst: Vec<u8> = line
        .iter()
        .copied()
        .cycle()
        .take(line.len() * 3000)
        .collect();
    theirs.write_all(&burst).await.unwrap();
    for _ in 0..3000 {
        assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("n"));
    }
    // Nothing more to read: the poll that finds nothing gives the buffer
    // back, however large the burst made it.
    let pending = poll_fn(|cx| Poll::Ready(Pin::new(&mut t).poll_recv(cx).is_pending())).await;
    assert!(pending);
    assert_eq!(
        t.read_buffer_capacity(),
        0,
        "an idle connection holds a read buffer"
    );
    // And it reads on as before; after one small message it holds none either.
    theirs.write_all(line).await.unwrap();
    assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("n"));
    let pending = poll_fn(|cx| Poll::Ready(Pin::new(&mut t).poll_recv(cx).is_pending())).await;
    assert!(pending);
    assert_eq!(t.read_buffer_capacity(), 0);
    // A line split over reads, the first of them through the released path.
    theirs.write_all(&line[..10]).await.unwrap();
    let pending = poll_fn(|cx| Poll::Ready(Pin::new(&mut t).poll_recv(cx).is_pending())).await;
    assert!(pending);
    assert!(t.read_buffer_capacity() >= 10, "the partial line is kept");
    theirs.write_all(&line[10..]).await.unwrap();
    assert_eq!(t.recv().await.unwrap().unwrap().method(), Some("n"));
}

#[tokio::test]
async fn a_line_longer_than_the_first_read_arrives_whole_after_release() {
    // The first read after the release fills its stack room exactly; the
    // rest of the line follows in the heap buffer.
    let (ours, mut theirs) = tokio::io::duplex(1 << 20);
    let mut t = LineTransport::new(ours, tokio::io::sink());
    for len in [
        MIN_READ - 40,
        MIN_READ - 39,
        MIN_READ,
        3 * MIN_READ,
        100_000,
    ] {
        let text = "x".repeat(len);
        let msg = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{text}\"}}\n");
        theirs.write_all(msg.as_bytes()).await.unwrap();
        let m = t.recv().await.unwrap().unwrap();
        assert_eq!(m.method().map(str::len), Some(len));
        let pending = poll_fn(|cx| Poll::Ready(Pin::new(&mut t).poll_recv(cx).is_pending())).await;
        assert!(pending);
        assert_eq!(t.read_buffer_capacity(), 0);
    }
}

/// A burst of answers to 32 concurrent calls (~4.3 KiB of 139-byte lines,
/// stdio C=32's round) is taken in one read after the buffer was released:
/// a first read of 4 KiB made every such round two system calls.
#[tokio::test]
async fn a_round_of_answers_to_32_calls_is_one_read() {
    let mut data = Vec::new();
    for i in 0..32 {
        data.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
                "x".repeat(64)
            )
            .as_bytes(),
        );
    }
    assert!(data.len() > 4096, "{}", data.len());
    let mut t = LineTransport::new(Probe::new(data, 1 << 16), tokio::io::sink());
    assert_eq!(t.read_buffer_capacity(), 0);
    for _ in 0..32 {
        assert!(t.recv().await.unwrap().is_ok());
    }
    assert_eq!(t.read.io.reads, 1);
}

/// While a request's answer is due the read buffer is kept between reads
/// (a client with calls in flight reads a round of answers, then queues the
/// next requests: no buffer allocated and copied into each round); the
/// second read that finds nothing after the last request releases it.
#[tokio::test]
async fn read_buffer_is_kept_while_an_answer_is_due() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(ours);
    let mut t = LineTransport::new(r, w);
    let (theirs_r, mut theirs_w) = tokio::io::split(theirs);
    let mut theirs_r = BufReader::new(theirs_r);
    let answer = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
    // Four answers in one read: the buffer holding them is not handed over
    // as the last one's storage (one answer alone would be).
    let answers = answer.repeat(4);

    for round in 0..3 {
        for _ in 0..4 {
            t.send(Request::new(1.into(), "ping", None).into())
                .await
                .unwrap();
            let mut line = String::new();
            theirs_r.read_line(&mut line).await.unwrap();
        }
        // The first read that finds nothing after the requests keeps what
        // there is (nothing, in the first round).
        assert!(finds_nothing(&mut t).await);
        theirs_w.write_all(&answers).await.unwrap();
        for _ in 0..4 {
            assert!(matches!(
                t.recv().await.unwrap().unwrap(),
                Message::Response(_)
            ));
        }
        // The answers are read; the next requests are not queued yet: kept.
        assert!(finds_nothing(&mut t).await);
        assert!(t.read_buffer_capacity() > 0, "round {round}: released");
    }
    // No request since the last read found nothing: now it is idle.
    assert!(finds_nothing(&mut t).await);
    assert_eq!(
        t.read_buffer_capacity(),
        0,
        "an idle connection holds a read buffer"
    );

    // One call in flight: its answer is one read, and nothing is kept after it.
    t.send(Request::new(1.into(), "ping", None).into())
        .await
        .unwrap();
    let mut line = String::new();
    theirs_r.read_line(&mut line).await.unwrap();
    theirs_w.write_all(&answers).await.unwrap();
    for _ in 0..4 {
        assert!(t.recv().await.unwrap().is_ok());
    }
    assert!(finds_nothing(&mut t).await, "kept: four messages came");
    t.send(Request::new(1.into(), "ping", None).into())
        .await
        .unwrap();
    theirs_r.read_line(&mut line).await.unwrap();
    theirs_w.write_all(answer).await.unwrap();
    assert!(t.recv().await.unwrap().is_ok());
    assert!(finds_nothing(&mut t).await);
    assert_eq!(t.read_buffer_capacity(), 0, "kept after a single answer");

    // A notification is not a request: nothing is due.
    t.send(Notification::new("notifications/initialized".to_owned(), None).into())
        .await
        .unwrap();
    theirs_w.write_all(answer).await.unwrap();
    assert!(t.recv().await.unwrap().is_ok());
    assert!(finds_nothing(&mut t).await);
    assert_eq!(t.read_buffer_capacity(), 0);
}

/// Polls `t` once: whether its read found nothing (`Pending`).
async fn finds_nothing<T: Transport + Unpin>(t: &mut T) -> bool {
    poll_fn(|cx| Poll::Ready(Pin::new(&mut *t).poll_recv(cx).is_pending())).await
}
