//! The [`Client`] handle and how a call reaches the driver.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_proto::transport::Transport;
use mcp_proto::{Era, ProtocolVersion, RawJson};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{oneshot, watch};

use super::driver::{DriverState, lock_core};
use super::request::{MetaSpec, Params, WithMeta, decode_typed, encode_error, keep_raw};
use super::{ClientBuilder, Command, ListKind, RequestBuilder, Shared};
use crate::error::{ClientError, CloseReason};
use crate::session::{CallId, ServerInfo};

/// A connected MCP client: cheap to clone, safe to share across tasks. Many
/// calls may be in flight at once over one transport; no lock is held across
/// a call.
///
/// Dropping every clone closes the connection (the driver closes the
/// transport). Prefer [`Client::close`] to wait for a clean shutdown.
#[derive(Clone)]
pub struct Client {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server())
            .finish()
    }
}

impl Client {
    /// A builder (see [`ClientBuilder`]).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    /// Connects over `transport` with default settings.
    pub async fn connect(transport: impl Transport) -> Result<Client, ClientError> {
        ClientBuilder::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
            .connect(transport)
            .await
    }

    /// Waits until the handshake has finished (or failed).
    pub async fn wait_ready(&self) -> Result<(), ClientError> {
        // Nothing goes on the wire: the driver answers when negotiation ends.
        let (tx, rx) = oneshot::channel();
        self.send(Command::WaitReady(tx))?;
        match rx.await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(self.shared.closed_error()),
        }
    }

    /// The negotiated server (identity, revision, capabilities, instructions),
    /// once the handshake finished.
    pub fn server(&self) -> Option<Arc<ServerInfo>> {
        self.shared.server.read().ok().and_then(|g| g.clone())
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.server().map(|s| s.protocol_version)
    }

    /// The negotiated era.
    pub fn era(&self) -> Option<Era> {
        self.protocol_version().map(ProtocolVersion::era)
    }

    /// A receiver whose value increases each time the server says `kind`'s
    /// list changed (legacy `list_changed` notifications, or a
    /// `subscriptions/listen` stream's).
    pub fn list_changed(&self, kind: ListKind) -> watch::Receiver<u64> {
        self.shared.changes(kind).subscribe()
    }

    /// Why the connection closed, or `None` while it is open.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.closed.borrow().clone()
    }

    /// Completes when the connection closes (the server exited or hung up,
    /// the transport failed, the handshake failed, [`close`](Client::close)
    /// was called, or the driver task is gone), with the reason. Completes at
    /// once if it already has. No polling: the driver signals it.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) {
    /// let reason = client.closed().await;
    /// eprintln!("server gone: {reason}");
    /// # }
    /// ```
    pub fn closed(&self) -> impl std::future::Future<Output = CloseReason> + Send + 'static {
        let mut rx = self.shared.closed.subscribe();
        async move {
            match rx.wait_for(Option::is_some).await {
                Ok(reason) => reason.clone().unwrap_or(CloseReason::DriverGone),
                // The sender lives in `Shared`, which `rx`'s client kept
                // alive until the call; gone means every client is gone.
                Err(_) => CloseReason::DriverGone,
            }
        }
    }

    pub(super) fn next_call(&self) -> CallId {
        CallId(self.shared.next_call.fetch_add(1, Ordering::Relaxed) + 1)
    }

    pub(super) fn send(&self, cmd: Command) -> Result<(), ClientError> {
        self.shared
            .commands
            .send(Box::new(cmd))
            .map_err(|_| self.shared.closed_error())
    }

    /// Hands a request straight to the session (after any commands queued
    /// before it, so order is kept) and, when it is the only one in flight,
    /// writes it too. Falls back to the driver's channel before the driver
    /// first ran and after it stopped.
    ///
    /// A request is not written inline while other callers the driver just
    /// answered have yet to send their next one (concurrent callers, woken
    /// together by one read): the driver, woken now and run after them,
    /// writes the whole round at once. Otherwise the first of them would
    /// write alone and the rest in a second write (one write per round, not
    /// two: stdio C=32 went from ~16 to ~32 requests per `write`).
    pub(super) fn submit(&self, cmd: Command) -> Result<(), ClientError> {
        let Some(core) = self.shared.core.get().and_then(std::sync::Weak::upgrade) else {
            return self.send(cmd);
        };
        let mut core = lock_core(&core);
        if !core.started || core.state != DriverState::Running {
            drop(core);
            return self.send(cmd);
        }
        core.take_commands();
        core.on_command(cmd);
        let others_follow = core.answered > 1;
        core.answered = core.answered.saturating_sub(1);
        let alone = core.waiters.len() == 1 && !others_follow;
        core.transmit_inline(alone);
        Ok(())
    }

    /// A request for any method, with raw JSON params (an object or
    /// `None`): the escape hatch for methods this crate has no typed call
    /// for (extensions, `tasks/*`). Resolves to the raw result; decode it
    /// with [`RawJson::decode`].
    ///
    /// ```no_run
    /// # async fn f(client: mcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_proto::RawJson;
    /// let params = RawJson::from_value(&serde_json::json!({"taskId": "t1"}))?;
    /// let raw = client.request_raw("tasks/get", Some(params)).await?;
    /// let task: mcp_proto::schema::GetTaskResult = raw.decode()?;
    /// # let _ = task; Ok(()) }
    /// ```
    pub fn request_raw(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
    ) -> RequestBuilder<'_> {
        RequestBuilder::new(self, method.into(), Params::Raw(params), keep_raw)
    }

    /// A typed request whose params (which may carry `_meta` of their own)
    /// are encoded now.
    pub(super) fn request_typed<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &P,
    ) -> RequestBuilder<'_, R> {
        let params = match RawJson::from_value(params) {
            Ok(p) => Params::Raw(Some(p)),
            Err(e) => Params::Failed(encode_error(method, e)),
        };
        RequestBuilder::new(self, Cow::Borrowed(method), params, decode_typed::<R>)
    }

    /// A typed request whose params (a struct or map with no `_meta` member
    /// of its own) are encoded at send time together with the `_meta` it needs.
    pub(super) fn request_lazy<'a, P: Serialize + Send + 'a, R: DeserializeOwned>(
        &'a self,
        method: impl Into<Cow<'static, str>>,
        params: P,
    ) -> RequestBuilder<'a, R> {
        self.request_encoded(method, move |meta: &MetaSpec<'_>, capacity| {
            if meta.is_empty() {
                RawJson::from_value_with_capacity(&params, capacity)
            } else {
                RawJson::from_value_with_capacity(
                    &WithMeta {
                        meta,
                        params: &params,
                    },
                    capacity,
                )
            }
        })
    }

    /// A typed request whose params `encode` writes at send time, including
    /// the given `_meta` when it is not empty, into a buffer of the given capacity.
    pub(super) fn request_encoded<'a, R: DeserializeOwned>(
        &'a self,
        method: impl Into<Cow<'static, str>>,
        encode: impl FnOnce(&MetaSpec<'_>, usize) -> serde_json::Result<RawJson> + Send + 'a,
    ) -> RequestBuilder<'a, R> {
        RequestBuilder::new(
            self,
            method.into(),
            Params::Lazy(Box::new(encode)),
            decode_typed::<R>,
        )
    }

    /// Sends a notification.
    pub fn notify(
        &self,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        self.send(Command::Notify {
            method: method.into(),
            params,
        })
    }

    /// Closes the connection: pending calls fail with [`ClientError::Closed`],
    /// the transport shuts down (stdio: close stdin, wait, SIGTERM, SIGKILL).
    pub async fn close(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Command::Close(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}
