//! Reading one SSE response stream: decode events, deliver messages with
//! backpressure, hold the awaited answer until the stream ends.

use std::time::Duration;

use crate::pool::ResponseBody;
use bytes::BytesMut;
use http_body_util::BodyExt;
use mcp_proto::jsonrpc::{Message, RequestId, Response as RpcResponse};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{ErrorCode, RawJson};
use serde_json::value::RawValue;

use super::{Gone, Item, Shared, lock};
use crate::error::HttpError;
use crate::headers::filter_tools_list;
use crate::sse::{SseDecoder, SseError, SseEvent};
use mcp_proto::jsonrpc::{DecodeError, Dropped, FrameKind, answered_id, peek_head};

/// After the response arrived, how long the rest of an SSE stream may take
/// to end (so the connection goes back to the pool) before it is dropped.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long an answer waits for its stream to end before it is delivered.
const ANSWER_HOLD: Duration = Duration::from_millis(20);

impl Shared {
    /// Handles one SSE event of a stream: skips priming and non-message
    /// events, decodes the rest. Nothing is pushed here: the caller pushes
    /// (and waits for room), or holds the answer to `expect` until the
    /// stream ends.
    fn on_event(
        &self,
        ev: &mut SseEvent,
        expect: Option<&RequestId>,
        tools_list: bool,
    ) -> EventOutcome {
        if ev.data.is_empty() || ev.event != "message" {
            return EventOutcome::Skipped;
        }
        // The event's text becomes the message's storage (no copy).
        match Message::try_from_string(std::mem::take(&mut ev.data)) {
            Ok(msg) if is_answer_to(&msg, expect) => EventOutcome::Answer(if tools_list {
                self.filter_tools(msg)
            } else {
                msg
            }),
            Ok(msg) => EventOutcome::Deliver(msg),
            Err((e, text)) => {
                tracing::warn!(error = %mcp_proto::error::chain(&e), "undecodable SSE event skipped");
                let (te, ours) = undecodable_event(e, &text, expect);
                if ours {
                    EventOutcome::Dropped(te)
                } else {
                    EventOutcome::Report(te)
                }
            }
        }
    }

    pub(super) fn filter_tools(&self, msg: Message) -> Message {
        if let Message::Response(r) = &msg {
            let mut s = lock(&self.state);
            if let Some(new) = filter_tools_list(r.result.get(), &mut s.tool_headers)
                && let Ok(raw) = RawJson::from_string(new)
            {
                return Message::Response(RpcResponse::new(r.id.clone(), raw));
            }
        }
        msg
    }
}

/// The error for an event whose data is not a JSON-RPC message, scoped by
/// [`dropped_event`]: JSON that is not JSON-RPC but answers a request (an
/// `id`, no `method`), or not JSON but shaped like an answer, fails that
/// call now instead of leaving it to wait. Returns the error and whether it
/// is `expect`'s answer.
pub(super) fn undecodable_event(
    e: DecodeError,
    text: &str,
    expect: Option<&RequestId>,
) -> (TransportError, bool) {
    let bytes = text.as_bytes();
    // The answer a request of the server's in it gets: JSON that is not a
    // request object is -32600; what could not be read, -32700.
    let code = match &e {
        DecodeError::Json { .. } if serde_json::from_str::<&RawValue>(text).is_ok() => {
            ErrorCode::INVALID_REQUEST
        }
        other => other.error_code(),
    };
    let te = TransportError::from(e);
    match answered_id(bytes) {
        Some(id) => {
            let ours = Some(&id) == expect;
            (te.with_request(id), ours)
        }
        None => {
            let tail = bytes.get(bytes.len().saturating_sub(TAIL_KEEP)..);
            dropped_event(te, bytes, tail.unwrap_or_default(), expect, code)
        }
    }
}

/// Last bytes of an undecodable event looked at for a trailing `id`.
const TAIL_KEEP: usize = 256;

/// Scopes the error for an event dropped from a stream (over the size
/// limit, or undecodable) as the transport contract asks of a dropped
/// answer, from the start of its data (`head`) and its last bytes (`tail`,
/// empty when it was dropped while arriving). `expect`: the request whose
/// answer this stream carries, if it has not arrived yet. Returns the error
/// and whether it is that answer.
///
/// - a request from the server (`method` first) with an `id` at either
///   end: marked to be answered with `code` (JSON-RPC wants an answer);
/// - a notification from the server, or no JSON object at all: it
///   answered nothing, the error is not scoped;
/// - an `id` at either end: that request's answer;
/// - an object whose id cannot be learned: on a response stream still
///   waiting for its answer, most likely that answer (the stream exists to
///   carry it); elsewhere, a response (`result`/`error` first) may have
///   answered any pending request ([`TransportError::answering_unknown`]).
pub(super) fn dropped_event(
    te: TransportError,
    head: &[u8],
    tail: &[u8],
    expect: Option<&RequestId>,
    code: ErrorCode,
) -> (TransportError, bool) {
    let h = peek_head(head);
    if !h.object {
        return (te, false);
    }
    if h.kind == Some(FrameKind::Call) {
        return match Dropped::from_parts(&h, tail) {
            Dropped::Request(id) => (te.refusing_request(id, code), false),
            _ => (te, false),
        };
    }
    match (Dropped::from_parts(&h, tail), expect) {
        (Dropped::Answer(id), _) => {
            let ours = expect == Some(&id);
            (te.with_request(id), ours)
        }
        (_, Some(id)) => (te.with_request(id.clone()), true),
        (dropped, None) => (dropped.scope(te), false),
    }
}

pub(super) fn is_answer_to(msg: &Message, expect: Option<&RequestId>) -> bool {
    match (msg, expect) {
        (Message::Response(_) | Message::Error(_), Some(id)) => msg.id() == Some(id),
        _ => false,
    }
}

enum EventOutcome {
    Skipped,
    /// A message for `poll_recv` (not the awaited answer).
    Deliver(Message),
    /// An undecodable event, reported to `poll_recv`; not progress.
    Report(TransportError),
    /// The awaited answer, undecodable: reported scoped to its request.
    Dropped(TransportError),
    Answer(Message),
}

/// How an SSE stream read ended.
pub(super) enum StreamEnd {
    /// The awaited response arrived (the rest of the stream was drained).
    Answered,
    /// The server ended the stream (graceful close), `progress` tells
    /// whether any message was delivered.
    Ended { progress: bool },
    /// The body failed mid-stream.
    Broken { progress: bool, error: HttpError },
    /// The transport is gone; nobody reads what this stream delivers.
    Gone,
}

/// Reads an SSE body to its end, pushing every message.
///
/// Each push waits for room in the inbox, and no frame is read meanwhile:
/// a consumer that stops polling stops the reads from the socket, and flow
/// control then slows the server down (backpressure, nothing dropped).
///
/// The answer to `expect` is held back until the stream ends (at most
/// [`ANSWER_HOLD`]), so the connection is back in the pool when the caller
/// sees the answer and sends its next request: sequential callers reuse one
/// connection instead of racing the pool.
pub(super) async fn read_sse(
    shared: &Shared,
    mut body: ResponseBody,
    dec: &mut SseDecoder,
    expect: Option<&RequestId>,
    tools_list: bool,
) -> StreamEnd {
    let mut buf = BytesMut::new();
    let mut s = ReadState::default();
    loop {
        let frame = if s.answered {
            let wait = if s.held.is_some() {
                ANSWER_HOLD
            } else {
                DRAIN_GRACE
            };
            match tokio::time::timeout(wait, body.frame()).await {
                Ok(f) => f,
                Err(_) if s.held.is_some() => {
                    if s.release(shared).await.is_err() {
                        return StreamEnd::Gone;
                    }
                    continue;
                }
                Err(_) => return StreamEnd::Answered,
            }
        } else {
            body.frame().await
        };
        match frame {
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                loop {
                    let item = match dec.decode(&mut buf) {
                        Ok(Some(mut ev)) => {
                            s.on_outcome(shared.on_event(&mut ev, expect, tools_list))
                        }
                        Ok(None) => break,
                        Err(e @ SseError::EventTooLarge { .. }) => {
                            tracing::warn!(error = %mcp_proto::error::chain(&e), "oversized SSE event discarded");
                            // Reported the moment the limit is crossed: the
                            // call it answered fails now, even if the event
                            // never ends.
                            let te = TransportError::new(TransportErrorKind::Decode, e);
                            let waiting = expect.filter(|_| !s.answered);
                            let (te, ours) = dropped_event(
                                te,
                                dec.dropped_head(),
                                &[],
                                waiting,
                                ErrorCode::PARSE_ERROR,
                            );
                            if ours {
                                s.answered = true;
                            }
                            Some(Err(te))
                        }
                    };
                    if let Some(item) = item
                        && shared.push(item).await.is_err()
                    {
                        return StreamEnd::Gone;
                    }
                }
            }
            Some(Err(e)) => {
                // Keep the decoder's last event id; drop the partial event.
                dec.reset_stream();
                if s.release(shared).await.is_err() {
                    return StreamEnd::Gone;
                }
                if s.answered {
                    return StreamEnd::Answered;
                }
                return StreamEnd::Broken {
                    progress: s.progress,
                    error: HttpError::Client(Box::new(e)),
                };
            }
            None => {
                while let Ok(Some(mut ev)) = dec.decode_eof(&mut buf) {
                    if let Some(item) = s.on_outcome(shared.on_event(&mut ev, expect, tools_list))
                        && shared.push(item).await.is_err()
                    {
                        return StreamEnd::Gone;
                    }
                }
                dec.reset_stream();
                if s.release(shared).await.is_err() {
                    return StreamEnd::Gone;
                }
                if s.answered {
                    return StreamEnd::Answered;
                }
                return StreamEnd::Ended {
                    progress: s.progress,
                };
            }
        }
    }
}

/// What [`read_sse`] knows about its stream so far.
#[derive(Default)]
struct ReadState {
    /// A message was delivered (or the answer arrived).
    progress: bool,
    /// The answer arrived (or the request was failed).
    answered: bool,
    /// The answer, held until the stream ends or [`ANSWER_HOLD`] passes.
    held: Option<Message>,
}

impl ReadState {
    /// The item to push for one event, if any.
    fn on_outcome(&mut self, outcome: EventOutcome) -> Option<Item> {
        match outcome {
            EventOutcome::Answer(m) => {
                self.answered = true;
                self.progress = true;
                // A second answer to the same id: deliver the first now.
                self.held.replace(m).map(Ok)
            }
            EventOutcome::Deliver(m) => {
                self.progress = true;
                Some(Ok(m))
            }
            EventOutcome::Report(e) => Some(Err(e)),
            EventOutcome::Dropped(e) => {
                self.answered = true;
                self.progress = true;
                Some(Err(e))
            }
            EventOutcome::Skipped => None,
        }
    }

    /// Delivers the held answer, if any.
    async fn release(&mut self, shared: &Shared) -> Result<(), Gone> {
        match self.held.take() {
            Some(m) => shared.push(Ok(m)).await,
            None => Ok(()),
        }
    }
}
