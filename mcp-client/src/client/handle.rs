//! The [`Client`] handle.

use std::borrow::Cow;
use std::sync::Arc;

use mcp_proto::transport::Transport;
use mcp_proto::{Era, ProtocolVersion, RawJson};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{oneshot, watch};

use super::request::{Params, decode_typed, encode_error, encode_sized, keep_raw};
use super::{ClientBuilder, Inner, ListKind, RequestBuilder};
use crate::error::{ClientError, CloseReason};
use crate::session::ServerInfo;

/// A connected MCP client: cheap to clone, safe to share across tasks. Many
/// calls may be in flight at once over one transport (up to
/// [`ClientBuilder::max_in_flight`]); no lock is held across a call.
///
/// Dropping every clone (and every call still pending) closes the
/// connection. Prefer [`Client::close`] to wait for a clean shutdown.
#[derive(Clone)]
pub struct Client {
    connection: Arc<Connection>,
}

/// One per connection, shared by every [`Client`] clone and pending call:
/// when the last is dropped, the connection closes.
struct Connection(Arc<Inner>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.update(|st| {
            st.session.close();
            ((), true)
        });
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server())
            .finish()
    }
}

impl Client {
    pub(super) fn new(inner: Arc<Inner>) -> Self {
        Client {
            connection: Arc::new(Connection(inner)),
        }
    }

    pub(super) fn inner(&self) -> &Inner {
        &self.connection.0
    }

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
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.inner().lock();
            if st.session.is_ready() {
                return Ok(());
            }
            if let Some(reason) = st.session.close_reason() {
                return Err(ClientError::Closed(reason.clone()));
            }
            st.ready_waiters.push(tx);
        }
        match rx.await {
            Ok(r) => r,
            Err(_) => Err(self.inner().closed_error()),
        }
    }

    /// The negotiated server (identity, revision, capabilities, instructions),
    /// once the handshake finished.
    pub fn server(&self) -> Option<Arc<ServerInfo>> {
        self.inner().lock().session.server_shared().cloned()
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.inner()
            .lock()
            .session
            .server()
            .map(|s| s.protocol_version)
    }

    /// The negotiated era.
    pub fn era(&self) -> Option<Era> {
        self.protocol_version().map(ProtocolVersion::era)
    }

    /// A receiver whose value increases each time the server says `kind`'s
    /// list changed (legacy `list_changed` notifications, or a
    /// `subscriptions/listen` stream's).
    pub fn list_changed(&self, kind: ListKind) -> watch::Receiver<u64> {
        self.inner().changes(kind).subscribe()
    }

    /// Whether `other` is a clone of this client: the same connection (a
    /// server started again is a new connection, even to the same process
    /// or URL). As tokio's `Sender::same_channel`.
    pub fn same_connection(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.connection, &other.connection)
    }

    /// Why the connection closed, or `None` while it is open.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner().lock().session.close_reason().cloned()
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
        // Holds the state, not the connection: waiting for the close must
        // not keep the connection open.
        let inner = self.connection.0.clone();
        async move {
            loop {
                let notified = inner.closed.notified();
                let mut notified = std::pin::pin!(notified);
                // Registered before the check, so a close in between wakes it.
                notified.as_mut().enable();
                if let Some(reason) = inner.lock().session.close_reason() {
                    return reason.clone();
                }
                notified.await;
            }
        }
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
            Err(e) => Params::Failed(Box::new(encode_error(method, e))),
        };
        RequestBuilder::new(self, Cow::Borrowed(method), params, decode_typed::<R>)
    }

    /// A typed request whose params are encoded now, into a buffer sized
    /// from the last call's (no allocation but the params' own).
    pub(super) fn request_sized<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: P,
    ) -> RequestBuilder<'_, R> {
        let params = encode_sized(&self.inner().params_size_hint, method, &params);
        RequestBuilder::new(self, Cow::Borrowed(method), params, decode_typed::<R>)
    }

    /// Sends a notification. Fails with [`ClientError::Busy`] while
    /// [`max_outbound_backlog`](crate::session::SessionConfig::max_outbound_backlog)
    /// messages wait for a server that is not reading.
    pub fn notify(
        &self,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        let method = method.into();
        self.inner().update(|st| {
            let r = st.session.notify(method, params);
            let wake = r.is_ok();
            (r, wake)
        })
    }

    /// Closes the connection: pending calls fail with [`ClientError::Closed`],
    /// the transport shuts down (stdio: close stdin, wait, SIGTERM, SIGKILL).
    /// Returns when the transport is closed.
    pub async fn close(&self) {
        let (tx, rx) = oneshot::channel();
        let waiting = self.inner().update(|st| {
            st.session.close();
            match &mut st.close_waiters {
                Some(waiters) => {
                    waiters.push(tx);
                    (true, true)
                }
                None => (false, false),
            }
        });
        if waiting {
            let _ = rx.await;
        }
    }
}
