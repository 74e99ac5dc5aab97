//! Reading one SSE response stream: decode events, deliver messages with
//! backpressure, hold the awaited answer until the stream ends.

use std::time::Duration;

use crate::pool::ResponseBody;
use bytes::BytesMut;
use http_body_util::BodyExt;
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, RequestId, Response as RpcResponse};
use mcp_proto::transport::{TransportError, TransportErrorKind};

use super::{Gone, Item, Shared, lock};
use crate::error::HttpError;
use crate::headers::filter_tools_list;
use crate::sse::{SseDecoder, SseError, SseEvent};
use mcp_proto::jsonrpc::answered_id;

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
                let te = TransportError::from(e);
                // JSON that is not JSON-RPC but answers a request (an `id`,
                // no `method`): that call fails now instead of waiting.
                match answered_id(text.as_bytes()) {
                    Some(id) if Some(&id) == expect => EventOutcome::Dropped(te.with_request(id)),
                    Some(id) => EventOutcome::Report(te.with_request(id)),
                    None => EventOutcome::Report(te),
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
                            if s.too_large_reported {
                                None
                            } else {
                                s.too_large_reported = true;
                                let mut te = TransportError::new(TransportErrorKind::Decode, e);
                                if let (Some(id), false) = (expect, s.answered) {
                                    // Most likely the answer itself: fail the
                                    // request rather than wait for it forever.
                                    te = te.with_request(id.clone());
                                    s.answered = true;
                                }
                                Some(Err(te))
                            }
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
    too_large_reported: bool,
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
