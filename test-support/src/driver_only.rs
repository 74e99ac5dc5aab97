//! [`DriverOnly`]: a transport that panics when used from any task but the
//! one that first polled it.

use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_proto::jsonrpc::Message;
use mcp_proto::transport::{Transport, TransportError};
use mcp_proto::version::ProtocolVersion;

/// Wraps a transport and panics if any method is called from a task other
/// than the first one that called it (the client's driver), or outside a
/// tokio task. A client's tests run over it to prove that only the driver
/// touches the transport.
#[derive(Debug)]
pub struct DriverOnly<T> {
    inner: Pin<Box<T>>,
    task: Option<tokio::task::Id>,
}

impl<T> DriverOnly<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        DriverOnly {
            inner: Box::pin(inner),
            task: None,
        }
    }

    fn check(&mut self, method: &str) {
        let current = tokio::task::try_id();
        match (self.task, current) {
            (None, Some(id)) => self.task = Some(id),
            (Some(driver), Some(id)) if driver == id => {}
            (driver, current) => panic!(
                "Transport::{method} called from task {current:?}, but the driver is task {driver:?}"
            ),
        }
    }
}

impl<T: Transport> Transport for DriverOnly<T> {
    fn endpoint(&self) -> mcp_proto::transport::Endpoint {
        self.inner.endpoint()
    }

    fn poll_recv(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        self.check("poll_recv");
        self.inner.as_mut().poll_recv(cx)
    }

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.check("poll_ready");
        self.inner.as_mut().poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        self.check("start_send");
        self.inner.as_mut().start_send(msg)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.check("poll_flush");
        self.inner.as_mut().poll_flush(cx)
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.check("poll_close");
        self.inner.as_mut().poll_close(cx)
    }

    fn set_protocol_version(mut self: Pin<&mut Self>, version: ProtocolVersion) {
        self.check("set_protocol_version");
        self.inner.as_mut().set_protocol_version(version);
    }

    fn set_request_deadline(
        mut self: Pin<&mut Self>,
        id: &mcp_proto::RequestId,
        deadline: std::time::Instant,
    ) {
        self.check("set_request_deadline");
        self.inner.as_mut().set_request_deadline(id, deadline);
    }
}
