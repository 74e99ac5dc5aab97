//! The checks themselves. Each gets a fresh connection and returns what
//! went wrong as a sentence.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::rt::{Probe, join, poll_for, sleep, timeout};
use super::{Check, DeadPeer, Harness, Peer, Profile};
use crate::error::chain;
use crate::jsonrpc::{Message, RequestId};
use crate::transport::{Transport, TransportError, TransportErrorKind, TransportExt};

type Res = Result<(), String>;

/// Messages per ordering check.
const ORDER_COUNT: u64 = 200;
/// Messages queued before each flush in the ordering check.
const BATCH: u64 = 7;
/// The size of each message in the backpressure checks.
const BIG: usize = 8 * 1024;
/// How long a peer's send must stay stuck before the kit calls it blocked
/// (twice in a row: a busy machine may starve a send for one window).
const BLOCKED_WINDOW: Duration = Duration::from_millis(300);

pub(super) async fn run<H: Harness>(h: &H, p: &Profile, check: Check) -> Res {
    let (mut t, mut peer) = h.connect().await;
    let t = &mut t;
    let peer = &mut peer;
    match check {
        Check::OrderToPeer => order_to_peer(t, peer, p).await,
        Check::OrderFromPeer => order_from_peer(t, peer, p).await,
        Check::GarbageIsScoped => garbage_is_scoped(t, peer, p).await,
        Check::OversizedIsScoped => oversized_is_scoped(t, peer, p).await,
        Check::DeadPeerIsTerminal => dead_peer_is_terminal(t, peer, p).await,
        Check::CloseOnDeadConnection => close_on_dead_connection(t, peer, p).await,
        Check::CloseFlushesAndIsIdempotent => close_flushes(t, peer, p).await,
        Check::CloseBoundedWhenPeerStalls => close_when_stalled(t, peer, p).await,
        Check::RecvWakesLatestWaker => recv_wakes_latest_waker(t, peer, p).await,
        Check::SendBackpressure => send_backpressure(t, peer, p).await,
        Check::RecvBackpressure => recv_backpressure(t, peer, p).await,
    }
}

// ---- messages ----

/// Message `seq` of the kit's sequences: a request, notification or
/// response (by `seq % 3`, or always a notification), padded to about `pad`
/// bytes of params.
fn numbered(seq: u64, pad: usize, mixed: bool) -> String {
    let pad = "k".repeat(pad);
    let v = match (mixed, seq % 3) {
        (true, 0) => {
            json!({"jsonrpc":"2.0","id":format!("kit-{seq}"),"method":"kit/seq","params":{"seq":seq,"pad":pad}})
        }
        (true, 1) => {
            json!({"jsonrpc":"2.0","id":format!("kit-{seq}"),"result":{"seq":seq,"pad":pad}})
        }
        _ => json!({"jsonrpc":"2.0","method":"kit/seq","params":{"seq":seq,"pad":pad}}),
    };
    v.to_string()
}

/// What the transport may send: notifications and responses (a request
/// would need the peer to answer it, and HTTP runs requests concurrently).
fn outgoing(seq: u64, pad: usize) -> Message {
    let v = if seq.is_multiple_of(2) {
        json!({"jsonrpc":"2.0","method":"kit/seq","params":{"seq":seq,"pad":"k".repeat(pad)}})
    } else {
        json!({"jsonrpc":"2.0","id":format!("kit-{seq}"),"result":{"seq":seq,"pad":"k".repeat(pad)}})
    };
    match v.to_string().parse() {
        Ok(m) => m,
        Err(e) => unreachable!("the kit's own message does not decode: {e}"),
    }
}

fn same(a: &str, b: &str) -> bool {
    matches!(
        (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

fn short(text: &str) -> String {
    let mut s: String = text.chars().take(120).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

// ---- driving the transport ----

fn poll_with<T: Transport + Unpin, R>(
    t: &mut T,
    waker: &Waker,
    f: impl FnOnce(Pin<&mut T>, &mut Context<'_>) -> Poll<R>,
) -> Poll<R> {
    f(Pin::new(t), &mut Context::from_waker(waker))
}

/// Queues each message (waiting for `poll_ready`), flushing every `batch`.
async fn send_batched<T: Transport + Unpin>(
    t: &mut T,
    msgs: impl IntoIterator<Item = Message>,
    batch: u64,
) -> Result<(), TransportError> {
    let mut queued: u64 = 0;
    for m in msgs {
        poll_fn(|cx| Pin::new(&mut *t).poll_ready(cx)).await?;
        Pin::new(&mut *t).start_send(m)?;
        queued += 1;
        if queued.is_multiple_of(batch) {
            poll_fn(|cx| Pin::new(&mut *t).poll_flush(cx)).await?;
        }
    }
    poll_fn(|cx| Pin::new(&mut *t).poll_flush(cx)).await
}

type Received = Option<Result<Message, TransportError>>;

async fn recv_within<T: Transport + Unpin>(t: &mut T, d: Duration) -> Result<Received, String> {
    timeout(d, t.recv())
        .await
        .ok_or_else(|| format!("poll_recv stayed pending for {d:?}"))
}

/// Receives messages `0..count` in order (of `expected(seq)`).
async fn recv_in_order<T: Transport + Unpin>(
    t: &mut T,
    p: &Profile,
    count: u64,
    expected: impl Fn(u64) -> String,
) -> Res {
    for seq in 0..count {
        let want = expected(seq);
        match recv_within(t, p.patience)
            .await
            .map_err(|e| format!("waiting for message {seq} of {count}: {e}"))?
        {
            Some(Ok(m)) if same(&m.to_text(), &want) => {}
            Some(Ok(m)) => {
                return Err(format!(
                    "message {seq} of {count}: expected {}, got {}",
                    short(&want),
                    short(&m.to_text())
                ));
            }
            Some(Err(e)) => return Err(format!("message {seq} of {count}: error {}", chain(&e))),
            None => {
                return Err(format!(
                    "poll_recv ended (None) before message {seq} of {count}"
                ));
            }
        }
    }
    Ok(())
}

/// The peer receives `expected(0..count)` in order.
async fn peer_recv_in_order<P: Peer>(
    peer: &mut P,
    p: &Profile,
    count: u64,
    expected: impl Fn(u64) -> String,
) -> Res {
    for seq in 0..count {
        let want = expected(seq);
        match timeout(p.patience, peer.recv()).await {
            None => {
                return Err(format!(
                    "the peer got no message {seq} of {count} within {:?}",
                    p.patience
                ));
            }
            Some(None) => {
                return Err(format!(
                    "the peer saw the end before message {seq} of {count}"
                ));
            }
            Some(Some(got)) if same(&got, &want) => {}
            Some(Some(got)) => {
                return Err(format!(
                    "the peer's message {seq} of {count}: expected {}, got {}",
                    short(&want),
                    short(&got)
                ));
            }
        }
    }
    Ok(())
}

fn both(r: (Res, Res)) -> Res {
    r.0.and(r.1)
}

// ---- the checks ----

async fn order_to_peer<T: Transport + Unpin, P: Peer>(t: &mut T, peer: &mut P, p: &Profile) -> Res {
    let send = async {
        let msgs = (0..ORDER_COUNT).map(|i| outgoing(i, 64));
        send_batched(t, msgs, BATCH)
            .await
            .map_err(|e| format!("sending: {}", chain(&e)))
    };
    let recv = peer_recv_in_order(peer, p, ORDER_COUNT, |i| outgoing(i, 64).to_text());
    both(join(send, recv).await)
}

async fn order_from_peer<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    let send = async {
        for i in 0..ORDER_COUNT {
            peer.send(numbered(i, 64, true)).await;
        }
        Ok(())
    };
    let recv = recv_in_order(t, p, ORDER_COUNT, |i| numbered(i, 64, true));
    both(join(send, recv).await)
}

async fn garbage_is_scoped<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    let garbage = [
        "this line is not JSON",
        r#"{"jsonrpc":"2.0","kit":"JSON, not JSON-RPC"}"#,
    ];
    let send = async {
        peer.send(numbered(0, 8, false)).await;
        for g in garbage {
            peer.send(g.to_owned()).await;
        }
        peer.send(numbered(1, 8, false)).await;
        Ok(())
    };
    let recv = async {
        recv_in_order(t, p, 1, |i| numbered(i, 8, false)).await?;
        let mut errors = 0;
        loop {
            match recv_within(t, p.patience).await? {
                Some(Ok(m)) if same(&m.to_text(), &numbered(1, 8, false)) => return Ok(()),
                Some(Ok(m)) => return Err(format!("unexpected message {}", short(&m.to_text()))),
                Some(Err(e)) if e.is_terminal() => {
                    return Err(format!(
                        "a bad frame gave a terminal error ({}); it must be skipped or a scoped Decode error",
                        chain(&e)
                    ));
                }
                Some(Err(_)) if errors == garbage.len() => {
                    return Err("more scoped errors than bad frames".into());
                }
                Some(Err(_)) => errors += 1,
                None => return Err("poll_recv ended (None) after a bad frame".into()),
            }
        }
    };
    both(join(send, recv).await)
}

async fn oversized_is_scoped<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    let Some(limit) = p.max_message_size else {
        return Err(
            "no size limit declared: use Profile::max_message_size, or skip the check saying why"
                .into(),
        );
    };
    let frame = |pad: usize| {
        json!({"jsonrpc":"2.0","method":"kit/big","params":{"pad":"k".repeat(pad)}}).to_string()
    };
    let over = frame((limit + 1).saturating_sub(frame(0).len()));
    let send = async {
        peer.send(numbered(0, 8, false)).await;
        peer.send(over).await;
        peer.send(numbered(1, 8, false)).await;
        Ok(())
    };
    let recv = async {
        recv_in_order(t, p, 1, |i| numbered(i, 8, false)).await?;
        match recv_within(t, p.patience).await? {
            Some(Err(e)) if !e.is_terminal() && e.kind() == TransportErrorKind::Decode => {}
            Some(Err(e)) => {
                return Err(format!(
                    "the oversized frame gave {e:?}; expected one scoped Decode error"
                ));
            }
            Some(Ok(m)) => {
                return Err(format!(
                    "a frame over the {limit}-byte limit was delivered: {}",
                    short(&m.to_text())
                ));
            }
            None => return Err("poll_recv ended (None) after an oversized frame".into()),
        }
        match recv_within(t, p.patience).await? {
            Some(Ok(m)) if same(&m.to_text(), &numbered(1, 8, false)) => Ok(()),
            other => Err(format!(
                "after the oversized frame's error: expected the next message, got {other:?}"
            )),
        }
    };
    both(join(send, recv).await)
}

/// After the peer died: the transport's `poll_recv` until `None`, allowing
/// scoped errors and one terminal error.
async fn drain_until_end<T: Transport + Unpin>(t: &mut T, p: &Profile) -> Res {
    let mut terminal = None;
    loop {
        match recv_within(t, p.patience)
            .await
            .map_err(|e| format!("the peer died, but {e} (expected a terminal error or None)"))?
        {
            Some(Ok(m)) => {
                return Err(format!(
                    "a message after the peer died: {}",
                    short(&m.to_text())
                ));
            }
            Some(Err(e)) if e.is_terminal() => {
                if let Some(first) = terminal.replace(e.clone()) {
                    return Err(format!(
                        "two terminal errors: {}, then {}; the contract allows one, then None",
                        chain(&first),
                        chain(&e)
                    ));
                }
            }
            Some(Err(_)) => {}
            None => return Ok(()),
        }
    }
}

fn dead_kind(e: &TransportError, what: &str) -> Res {
    match e.kind() {
        TransportErrorKind::Closed | TransportErrorKind::Io => Ok(()),
        _ => Err(format!(
            "{what} after the peer died failed with kind {:?} ({}); expected Closed or Io",
            e.kind(),
            chain(e)
        )),
    }
}

async fn dead_peer_is_terminal<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    peer.kill().await;
    if p.dead_peer == DeadPeer::PerRequest {
        let id = RequestId::from("kit-after-death".to_owned());
        let req =
            json!({"jsonrpc":"2.0","id":"kit-after-death","method":"kit/seq","params":{"seq":0}});
        let msg: Message = req.to_string().parse().map_err(|e| format!("{e}"))?;
        if let Some(Err(e)) = timeout(p.patience, t.send(msg)).await {
            return dead_kind(&e, "sending");
        }
        loop {
            match recv_within(t, p.patience).await.map_err(|e| {
                format!("a request after the peer died: {e} (expected an error scoped to it)")
            })? {
                Some(Err(e)) if e.request_id() == Some(&id) => return Ok(()),
                Some(Err(e)) if e.is_terminal() || e.request_id().is_some() => {}
                Some(Err(_)) => {}
                Some(Ok(m)) => {
                    return Err(format!(
                        "a message after the peer died: {}",
                        short(&m.to_text())
                    ));
                }
                None => return Ok(()),
            }
        }
    }
    drain_until_end(t, p).await?;
    for _ in 0..3 {
        match poll_with(t, Waker::noop(), |t, cx| t.poll_recv(cx)) {
            Poll::Ready(None) => {}
            Poll::Ready(Some(r)) => {
                return Err(format!(
                    "poll_recv after None gave {r:?}; it must keep returning None"
                ));
            }
            Poll::Pending => {
                return Err(
                    "poll_recv after None returned Pending; it must keep returning None".into(),
                );
            }
        }
    }
    // Sending fails, if not at once then once the connection notices (a
    // socket may accept a first write after the peer is gone).
    let deadline = Instant::now() + p.patience;
    let mut seq = 0;
    while Instant::now() < deadline {
        match timeout(p.patience, t.send(outgoing(seq, 64))).await {
            None => {
                return Err(format!(
                    "sending after the peer died hung for {:?}",
                    p.patience
                ));
            }
            Some(Err(e)) => return dead_kind(&e, "sending"),
            Some(Ok(())) => {}
        }
        seq += 1;
        sleep(Duration::from_millis(10)).await;
    }
    Err(format!(
        "{seq} sends after the peer died all succeeded; expected an error of kind Closed or Io"
    ))
}

async fn close_on_dead_connection<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    peer.kill().await;
    if p.dead_peer == DeadPeer::Terminal {
        drain_until_end(t, p).await?;
    }
    // Something left to flush, if the transport still takes it.
    if let Poll::Ready(Ok(())) = poll_with(t, Waker::noop(), |t, cx| t.poll_ready(cx)) {
        let _ = Pin::new(&mut *t).start_send(outgoing(0, 64));
    }
    for attempt in ["first", "second"] {
        match timeout(p.close_bound, t.close()).await {
            None => {
                return Err(format!(
                    "the {attempt} poll_close on a dead connection was still pending after {:?}",
                    p.close_bound
                ));
            }
            Some(Err(e)) => {
                return Err(format!(
                    "the {attempt} poll_close on a dead connection returned {e:?}; the contract says Ok (nothing left to shut down)"
                ));
            }
            Some(Ok(())) => {}
        }
    }
    Ok(())
}

async fn close_flushes<T: Transport + Unpin, P: Peer>(t: &mut T, peer: &mut P, p: &Profile) -> Res {
    poll_fn(|cx| Pin::new(&mut *t).poll_ready(cx))
        .await
        .map_err(|e| format!("poll_ready: {}", chain(&e)))?;
    Pin::new(&mut *t)
        .start_send(outgoing(0, 64))
        .map_err(|e| format!("start_send: {}", chain(&e)))?;
    let close = async {
        // An error is informational (the transport is closed either way).
        match timeout(p.close_bound, t.close()).await {
            None => Err(format!(
                "poll_close still pending after {:?}",
                p.close_bound
            )),
            Some(_) => Ok(()),
        }
    };
    let seen = async {
        peer_recv_in_order(peer, p, 1, |i| outgoing(i, 64).to_text())
            .await
            .map_err(|e| format!("a message queued before poll_close was lost: {e}"))?;
        match timeout(p.patience, peer.recv()).await {
            Some(None) => Ok(()),
            Some(Some(m)) => Err(format!(
                "the peer got {} after the queued message",
                short(&m)
            )),
            None => Err(format!(
                "the peer did not see the transport close within {:?}",
                p.patience
            )),
        }
    };
    both(join(close, seen).await)?;
    match timeout(p.close_bound, t.close()).await {
        None => return Err("a second poll_close did not return".into()),
        Some(Err(e)) => {
            return Err(format!(
                "a second poll_close returned {e:?}; closing again must be Ok"
            ));
        }
        Some(Ok(())) => {}
    }
    match poll_with(t, Waker::noop(), |t, cx| t.poll_recv(cx)) {
        Poll::Ready(None) => {}
        Poll::Pending => {
            return Err("poll_recv after close returned Pending; it must return None".into());
        }
        Poll::Ready(Some(r)) => {
            return Err(format!(
                "poll_recv after close gave {r:?}; it must return None"
            ));
        }
    }
    let refused = match poll_with(t, Waker::noop(), |t, cx| t.poll_ready(cx)) {
        Poll::Ready(Err(e)) => Some(e),
        Poll::Ready(Ok(())) => Pin::new(&mut *t).start_send(outgoing(1, 8)).err(),
        Poll::Pending => {
            return Err("poll_ready after close returned Pending; it must fail with Closed".into());
        }
    };
    match refused {
        Some(e) if e.kind() == TransportErrorKind::Closed => Ok(()),
        Some(e) => Err(format!(
            "sending after close failed with kind {:?} ({}); expected Closed",
            e.kind(),
            chain(&e)
        )),
        None => Err("start_send after close accepted a message; it must fail with Closed".into()),
    }
}

/// Queues messages until `poll_ready` is pending or `cap` bytes are
/// queued, polling with `waker`. The bytes queued.
fn fill<T: Transport + Unpin>(
    t: &mut T,
    waker: &Waker,
    cap: usize,
    sent: &mut u64,
) -> Result<usize, String> {
    let mut bytes = 0;
    while bytes <= cap {
        match poll_with(t, waker, |t, cx| t.poll_ready(cx)) {
            Poll::Pending => break,
            Poll::Ready(Err(e)) => {
                return Err(format!("poll_ready failed while filling: {}", chain(&e)));
            }
            Poll::Ready(Ok(())) => {}
        }
        let m = outgoing(*sent, BIG);
        bytes += m.to_text().len();
        Pin::new(&mut *t)
            .start_send(m)
            .map_err(|e| format!("start_send failed while filling: {}", chain(&e)))?;
        *sent += 1;
        if let Poll::Ready(Err(e)) = poll_with(t, waker, |t, cx| t.poll_flush(cx)) {
            return Err(format!("poll_flush failed while filling: {}", chain(&e)));
        }
    }
    Ok(bytes)
}

async fn close_when_stalled<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    peer.stall().await;
    let mut sent = 0;
    fill(t, Waker::noop(), 2 * 1024 * 1024, &mut sent)?;
    match timeout(p.close_bound, t.close()).await {
        None => Err(format!(
            "with {sent} messages unsent and a peer that reads nothing, poll_close was still pending after {:?} (the declared close bound)",
            p.close_bound
        )),
        Some(_) => Ok(()),
    }
}

async fn recv_wakes_latest_waker<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    let (first, first_waker) = Probe::new();
    let (latest, latest_waker) = Probe::new();
    for w in [&first_waker, &latest_waker] {
        if let Poll::Ready(r) = poll_with(t, w, |t, cx| t.poll_recv(cx)) {
            return Err(format!(
                "poll_recv gave {r:?} before the peer sent anything"
            ));
        }
    }
    peer.send(numbered(0, 8, false)).await;
    if timeout(p.patience, latest.woken_after(0)).await.is_none() {
        return Err(if first.wakes() > 0 {
            "a message arrived and only the first poll_recv's waker was woken: the transport must keep the latest waker".into()
        } else {
            format!(
                "a message arrived and the pending poll_recv's waker was not woken within {:?}",
                p.patience
            )
        });
    }
    // A wake may come before the whole message (a partial read): poll again
    // with a probe each time, and wait for its wake.
    let deadline = Instant::now() + p.patience;
    loop {
        let (probe, waker) = Probe::new();
        match poll_with(t, &waker, |t, cx| t.poll_recv(cx)) {
            Poll::Ready(Some(Ok(m))) if same(&m.to_text(), &numbered(0, 8, false)) => return Ok(()),
            Poll::Ready(other) => {
                return Err(format!("expected the peer's message, got {other:?}"));
            }
            Poll::Pending => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if timeout(left, probe.woken_after(0)).await.is_none() {
            return Err(
                "poll_recv was woken, returned Pending again, and was never woken for the message"
                    .into(),
            );
        }
    }
}

async fn send_backpressure<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    let Some(bound) = p.send_buffer_bound else {
        return Err("no send buffer bound declared: use Profile::send_buffer_bound, or skip the check saying why".into());
    };
    let mut sent = 0;
    let (probe, waker) = Probe::new();
    // Fill, then flush, until the flush is stuck. Every wake from the call
    // that returned Pending on counts: a connection may wake the writer
    // before the peer reads anything (Linux grows a TCP socket's send
    // buffer by itself), and a waker woken early is woken all the same.
    let mut bytes = 0;
    let woken_before = loop {
        bytes += fill(t, &waker, (bound + BIG).saturating_sub(bytes), &mut sent)?;
        if bytes > bound {
            return Err(format!(
                "sending accepted {bytes} bytes while the peer read nothing (declared bound: {bound}): the transport buffers without bound"
            ));
        }
        let before = probe.wakes();
        match poll_with(t, &waker, |t, cx| t.poll_flush(cx)) {
            Poll::Pending => break before,
            Poll::Ready(Err(e)) => return Err(format!("poll_flush failed: {}", chain(&e))),
            // It all went into the connection after all: fill on.
            Poll::Ready(Ok(())) => {}
        }
    };
    let extra = 10;
    let kit = async {
        if timeout(p.patience, probe.woken_after(woken_before))
            .await
            .is_none()
        {
            return Err(format!(
                "poll_flush returned Pending, the peer then read, and the waker of that poll_flush was not woken within {:?}",
                p.patience
            ));
        }
        timeout(p.patience, poll_fn(|cx| Pin::new(&mut *t).poll_flush(cx)))
            .await
            .ok_or("the flush never completed while the peer read")?
            .map_err(|e| format!("poll_flush: {}", chain(&e)))?;
        let more = (sent..sent + extra).map(|i| outgoing(i, BIG));
        send_batched(t, more, BATCH)
            .await
            .map_err(|e| format!("sending after the backlog: {}", chain(&e)))
    };
    let reader = peer_recv_in_order(peer, p, sent + extra, |i| outgoing(i, BIG).to_text());
    both(join(kit, reader).await)
}

async fn recv_backpressure<T: Transport + Unpin, P: Peer>(
    t: &mut T,
    peer: &mut P,
    p: &Profile,
) -> Res {
    let Some(bound) = p.recv_buffer_bound else {
        return Err("no receive buffer bound declared: use Profile::recv_buffer_bound, or skip the check saying why".into());
    };
    let mut bytes = 0;
    let mut count = 0;
    // Nobody polls the transport: the peer's sends must start waiting.
    let blocked = loop {
        let text = numbered(count, BIG, false);
        let len = text.len();
        let mut send = Box::pin(peer.send(text));
        count += 1;
        if poll_for(BLOCKED_WINDOW, send.as_mut()).await.is_some()
            || poll_for(BLOCKED_WINDOW, send.as_mut()).await.is_some()
        {
            bytes += len;
            if bytes > bound {
                return Err(format!(
                    "the peer sent {bytes} bytes while nobody polled poll_recv (declared bound: {bound}): the transport reads without bound"
                ));
            }
            continue;
        }
        break send;
    };
    let finish = async {
        match timeout(p.patience, blocked).await {
            Some(()) => Ok(()),
            None => Err("the peer's blocked send never completed once the transport read".into()),
        }
    };
    let drain = recv_in_order(t, p, count, |i| numbered(i, BIG, false));
    both(join(finish, drain).await)
}
