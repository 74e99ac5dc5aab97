//! A [`Transport`] over any message-framed connection: a
//! [`Stream`] + [`Sink`] of frames,
//! as WebSocket libraries (`tokio-tungstenite`, …) provide (feature
//! `framed`). One JSON-RPC message per text frame ([`Message::to_text`] and
//! [`str::parse`]).
//!
//! The connection's frame type is foreign to both crates, so the caller
//! passes two functions instead of implementing a trait: `encode` makes a
//! text frame, `decode` tells what a received frame is ([`Frame`]).
//!
//! Errors: a received frame that is not JSON-RPC is a scoped
//! [`Decode`](TransportErrorKind::Decode) error (skipped); an error of the
//! connection is terminal (an [`std::io::Error`] keeps its kind through
//! `From<io::Error>`, anything else is [`Io`](TransportErrorKind::Io)), then
//! `poll_recv` returns `None`. `poll_close` closes the sink (a WebSocket
//! close handshake), and a close on a dead connection returns `Ok`. Sends
//! after a close fail with [`Closed`](TransportErrorKind::Closed).
//!
//! The close is bounded by the timer given to
//! [`with_close_timer`](Framed::with_close_timer) (this crate has no
//! runtime, so the caller brings one: `tokio::time::sleep`); when it fires
//! first, `poll_close` gives up on the handshake with an informational
//! [`Timeout`](TransportErrorKind::Timeout) error. Without a timer a peer
//! that stops reading can make `poll_close` wait as long as the library does
//! (tokio-tungstenite: forever).

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_core::Stream;
use futures_sink::Sink;

use super::{Transport, TransportError, TransportErrorKind};
use crate::jsonrpc::Message;

/// What a received frame means to MCP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A text frame: one JSON-RPC message.
    Text(String),
    /// The peer closed the connection (a WebSocket close frame).
    Close,
    /// Not for MCP (ping, pong): skipped.
    Skip,
}

/// A timer for [`Framed::with_close_timer`]: ready when the close has
/// taken long enough.
pub type CloseTimer = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A [`Transport`] over a `Stream` + `Sink` of frames `F`.
pub struct Framed<S, F> {
    io: S,
    encode: fn(String) -> F,
    decode: fn(F) -> Frame,
    recv_done: bool,
    closed: bool,
    close_timer: Option<fn() -> CloseTimer>,
    /// Running once a close had to wait.
    close_deadline: Option<CloseTimer>,
    /// The close finished (or gave up): closing again is `Ok` at once.
    close_done: bool,
}

impl<S: fmt::Debug, F> fmt::Debug for Framed<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Framed")
            .field("io", &self.io)
            .field("recv_done", &self.recv_done)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl<S, F> Framed<S, F> {
    /// Wraps `io`; `encode` builds a text frame, `decode` reads one.
    pub fn new(io: S, encode: fn(String) -> F, decode: fn(F) -> Frame) -> Self {
        Framed {
            io,
            encode,
            decode,
            recv_done: false,
            closed: false,
            close_timer: None,
            close_deadline: None,
            close_done: false,
        }
    }

    /// Bounds `poll_close`: `timer` is started when the close first has to
    /// wait, and when it is ready the close gives up (see the module docs).
    /// For tokio: `|| Box::pin(tokio::time::sleep(Duration::from_secs(2)))`.
    #[must_use]
    pub fn with_close_timer(mut self, timer: fn() -> CloseTimer) -> Self {
        self.close_timer = Some(timer);
        self
    }
}

fn connection_error(e: impl Into<Box<dyn StdError + Send + Sync>>) -> TransportError {
    match e.into().downcast::<std::io::Error>() {
        Ok(io) => TransportError::from(*io),
        Err(other) => TransportError::new(TransportErrorKind::Io, other),
    }
}

fn closed() -> TransportError {
    TransportError::new(TransportErrorKind::Closed, "the framed transport is closed")
}

impl<S, F, E> Transport for Framed<S, F>
where
    S: Stream<Item = Result<F, E>> + Sink<F, Error = E> + Send + Unpin + 'static,
    F: Send + 'static,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let this = self.get_mut();
        while !this.recv_done {
            let frame = match ready!(Pin::new(&mut this.io).poll_next(cx)) {
                Some(Ok(frame)) => (this.decode)(frame),
                Some(Err(e)) => {
                    this.recv_done = true;
                    return Poll::Ready(Some(Err(connection_error(e))));
                }
                None => Frame::Close,
            };
            match frame {
                Frame::Text(text) => return Poll::Ready(Some(text.parse().map_err(Into::into))),
                Frame::Close => this.recv_done = true,
                Frame::Skip => {}
            }
        }
        Poll::Ready(None)
    }

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        if this.closed {
            return Poll::Ready(Err(closed()));
        }
        Pin::new(&mut this.io)
            .poll_ready(cx)
            .map_err(connection_error)
    }

    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        let this = self.get_mut();
        if this.closed {
            return Err(closed());
        }
        let frame = (this.encode)(msg.to_text());
        Pin::new(&mut this.io)
            .start_send(frame)
            .map_err(connection_error)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        Pin::new(&mut this.io)
            .poll_flush(cx)
            .map_err(connection_error)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        this.closed = true;
        this.recv_done = true;
        if this.close_done {
            return Poll::Ready(Ok(()));
        }
        if Pin::new(&mut this.io).poll_close(cx).is_ready() {
            // A dead connection is closed already: its error is not the caller's.
            this.close_deadline = None;
            this.close_done = true;
            return Poll::Ready(Ok(()));
        }
        let Some(timer) = this.close_timer else {
            return Poll::Pending;
        };
        ready!(
            this.close_deadline
                .get_or_insert_with(timer)
                .as_mut()
                .poll(cx)
        );
        this.close_deadline = None;
        this.close_done = true;
        Poll::Ready(Err(TransportError::new(
            TransportErrorKind::Timeout,
            "the peer did not complete the close in time; the connection is dropped",
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::task::Waker;

    use super::*;
    use crate::jsonrpc::Request;

    /// Frames in, frames out, in memory.
    #[derive(Default)]
    struct Wire {
        inbound: VecDeque<Result<String, std::io::Error>>,
        outbound: Vec<String>,
    }
    impl Stream for Wire {
        type Item = Result<String, std::io::Error>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.inbound.pop_front())
        }
    }
    impl Sink<String> for Wire {
        type Error = std::io::Error;
        fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }
        fn start_send(mut self: Pin<&mut Self>, item: String) -> Result<(), Self::Error> {
            self.outbound.push(item);
            Ok(())
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }
        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()))
        }
    }

    fn decode(s: String) -> Frame {
        match s.as_str() {
            "ping" => Frame::Skip,
            "bye" => Frame::Close,
            _ => Frame::Text(s),
        }
    }

    #[test]
    fn frames_become_messages_and_errors_keep_their_kind() {
        let mut wire = Wire::default();
        for f in [
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            "ping",
            "not json",
        ] {
            wire.inbound.push_back(Ok(f.to_owned()));
        }
        wire.inbound
            .push_back(Err(std::io::ErrorKind::ConnectionReset.into()));
        let mut t = Framed::new(wire, |s| s, decode);
        let mut cx = Context::from_waker(Waker::noop());
        let mut recv = || match Pin::new(&mut t).poll_recv(&mut cx) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("pending"),
        };
        assert_eq!(recv().unwrap().unwrap().id(), Some(&7.into()));
        let e = recv().unwrap().unwrap_err();
        assert!(!e.is_terminal() && e.kind() == TransportErrorKind::Decode);
        let e = recv().unwrap().unwrap_err();
        assert!(
            e.is_terminal() && e.kind() == TransportErrorKind::Closed,
            "{e:?}"
        );
        assert!(recv().is_none());

        let mut t = Framed::new(Wire::default(), |s| s, decode);
        let ping: Message = Request::new(1.into(), "ping", None).into();
        assert!(Pin::new(&mut t).start_send(ping.clone()).is_ok());
        assert_eq!(t.io.outbound, [ping.to_text()]);
        // The sink fails to close (dead connection): still closed, Ok.
        assert!(matches!(
            Pin::new(&mut t).poll_close(&mut cx),
            Poll::Ready(Ok(()))
        ));
        let e = Pin::new(&mut t).start_send(ping).unwrap_err();
        assert_eq!(e.kind(), TransportErrorKind::Closed);
        assert!(matches!(
            Pin::new(&mut t).poll_recv(&mut cx),
            Poll::Ready(None)
        ));
    }
}
