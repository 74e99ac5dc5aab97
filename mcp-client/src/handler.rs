//! What the application provides to the client: typed answers to the
//! server's requests (sampling, elicitation, roots) and typed callbacks for
//! its notifications.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_proto::jsonrpc::Notification;
use mcp_proto::method::{CreateMessage, Elicit, ListRoots, ServerMethod};
use mcp_proto::schema::{
    CancelledParams, ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams,
    ElicitResult, ElicitationCompleteParams, ListRootsParams, ListRootsResult,
    LoggingMessageParams, ProgressParams, ResourceUpdatedParams, ServerNotification, ServerRequest,
};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use serde::Serialize;
use serde_json::Value;

/// Which server list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `resources/list`.
    Resources,
    /// `prompts/list`.
    Prompts,
}

/// The application side of the client: one typed method per request and
/// notification the server may send.
///
/// One handler serves both eras: a legacy server sends
/// `sampling/createMessage`, `elicitation/create` and `roots/list` as
/// JSON-RPC requests; a 2026-07-28 server embeds them in an
/// `input_required` result. Either way they reach the same method, and
/// the answer goes back the way the request came.
///
/// **Capabilities** are what [`capabilities`](ClientHandler::capabilities)
/// returns, nothing else: the client advertises them and answers a request
/// whose capability is not advertised with "method not found" without
/// calling the handler. Implementing a method and advertising its capability
/// go together (the compiler cannot see which methods you implemented).
///
/// Defaults: sampling and roots answer "method not found", elicitation
/// declines, notifications are ignored. Methods this trait does not name
/// (extensions, `tasks/*` when the client keeps no tasks) reach
/// [`other_request`](ClientHandler::other_request) and
/// [`other_notification`](ClientHandler::other_notification) raw. A
/// server's `ping` is answered by the session itself, at once.
///
/// A 2025-11-25 server may ask for `sampling/createMessage` or
/// `elicitation/create` as a task: the client answers with the task at
/// once, calls the same method, and answers the server's `tasks/*` about
/// it itself (see [`ClientBuilder::max_kept_tasks`](crate::ClientBuilder::max_kept_tasks)).
/// If the task is cancelled or expires, the method's future is dropped.
///
/// ```
/// use mcp_client::ClientHandler;
/// use mcp_proto::ErrorObject;
/// use mcp_proto::schema::{
///     ClientCapabilities, ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams,
///     ElicitResult, ListRootsParams, ListRootsResult, Role, Root,
/// };
///
/// struct App;
/// impl ClientHandler for App {
///     fn capabilities(&self) -> ClientCapabilities {
///         ClientCapabilities::default().with_sampling().with_elicitation_form().with_roots()
///     }
///     async fn create_message(&self, p: CreateMessageParams) -> Result<CreateMessageResult, ErrorObject> {
///         let _ = p.messages; // ask a model here
///         Ok(CreateMessageResult::new(Role::Assistant, ContentBlock::text("hi"), "my-model"))
///     }
///     async fn elicit(&self, p: ElicitParams) -> Result<ElicitResult, ErrorObject> {
///         match p {
///             ElicitParams::Form(_) => Ok(ElicitResult::accept(Default::default())),
///             _ => Ok(ElicitResult::decline()),
///         }
///     }
///     async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
///         Ok(ListRootsResult::new(vec![Root::new("file:///work").with_name("work")]))
///     }
/// }
/// ```
pub trait ClientHandler: Send + Sync + 'static {
    /// What this handler answers (`sampling`, `elicitation`, `roots`):
    /// advertised to the server. Default: nothing.
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    /// `sampling/createMessage`: run the messages through a model. Default:
    /// method not found.
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorObject>> + Send {
        let _ = params;
        async { Err(ErrorObject::method_not_found(CREATE_MESSAGE)) }
    }

    /// `elicitation/create`, form mode ([`ElicitParams::Form`]) or URL mode
    /// ([`ElicitParams::Url`]). Default: decline.
    fn elicit(
        &self,
        params: ElicitParams,
    ) -> impl Future<Output = Result<ElicitResult, ErrorObject>> + Send {
        let _ = params;
        async { Ok(ElicitResult::decline()) }
    }

    /// `roots/list`. Default: method not found.
    fn list_roots(
        &self,
        params: ListRootsParams,
    ) -> impl Future<Output = Result<ListRootsResult, ErrorObject>> + Send {
        let _ = params;
        async { Err(ErrorObject::method_not_found(LIST_ROOTS)) }
    }

    /// Any other server request (extensions; `tasks/*` unless the client
    /// keeps tasks for the server), raw: returns the
    /// result object. Default: method not found.
    fn other_request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Result<Value, ErrorObject>> + Send {
        let _ = params;
        let err = ErrorObject::method_not_found(method);
        async { Err(err) }
    }

    /// `notifications/progress` for calls without their own progress
    /// callback ([`RequestBuilder::on_progress`](crate::RequestBuilder::on_progress)).
    fn on_progress(&self, params: ProgressParams) {
        let _ = params;
    }

    /// `notifications/message`: a log message from the server.
    fn on_logging_message(&self, params: LoggingMessageParams) {
        let _ = params;
    }

    /// `notifications/resources/updated`: a subscribed resource changed.
    fn on_resource_updated(&self, params: ResourceUpdatedParams) {
        let _ = params;
    }

    /// `notifications/{tools,resources,prompts}/list_changed`.
    fn on_list_changed(&self, kind: ListKind) {
        let _ = kind;
    }

    /// `notifications/cancelled`: the server cancelled one of its requests.
    fn on_cancelled(&self, params: CancelledParams) {
        let _ = params;
    }

    /// `notifications/elicitation/complete`: a URL-mode elicitation finished.
    fn on_elicitation_complete(&self, params: ElicitationCompleteParams) {
        let _ = params;
    }

    /// Any other notification (extensions, tasks, subscription
    /// acknowledgements), and known ones whose params did not decode, raw.
    fn other_notification(&self, notification: Notification) {
        let _ = notification;
    }

    /// A request of the server's that the client refused without calling
    /// a typed method, because of what was wrong with it: it could not be
    /// read (`-32700`: not JSON, nested past
    /// [`MAX_DEPTH`](mcp_proto::jsonrpc::MAX_DEPTH), over the message size
    /// limit; `-32600`: not a request object), or its params did not decode
    /// (`-32602`). `method` is its method when known; `error` is what the
    /// server was answered. Called after the answer is queued, to tell the
    /// user. Default: a warning in the log.
    fn on_refused_request(&self, method: Option<&str>, error: &ErrorObject) {
        tracing::warn!(method, code = error.code.0, error = %error.message, "refused a request of the server's");
    }
}

/// A handler that supports nothing and ignores notifications.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHandler;

impl ClientHandler for NoHandler {}

const CREATE_MESSAGE: &str = CreateMessage::NAME;
const LIST_ROOTS: &str = ListRoots::NAME;

/// A boxed, sendable future.
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// [`ClientHandler`] made object-safe: what the driver holds.
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn capabilities(&self) -> ClientCapabilities;
    fn answer(
        self: Arc<Self>,
        caps: Arc<ClientCapabilities>,
        method: String,
        params: Option<RawJson>,
    ) -> BoxFuture<Result<Value, ErrorObject>>;
    fn notify(&self, notification: Notification);
    fn refused(&self, method: Option<&str>, error: &ErrorObject);
}

impl<H: ClientHandler> DynHandler for H {
    fn capabilities(&self) -> ClientCapabilities {
        ClientHandler::capabilities(self)
    }

    fn answer(
        self: Arc<Self>,
        caps: Arc<ClientCapabilities>,
        method: String,
        params: Option<RawJson>,
    ) -> BoxFuture<Result<Value, ErrorObject>> {
        Box::pin(async move { answer(&*self, &caps, &method, params).await })
    }

    fn refused(&self, method: Option<&str>, error: &ErrorObject) {
        self.on_refused_request(method, error);
    }

    fn notify(&self, n: Notification) {
        use ServerNotification as N;
        match ServerNotification::from_notification(&n) {
            Ok(N::Progress(p)) => self.on_progress(p),
            Ok(N::LoggingMessage(p)) => self.on_logging_message(p),
            Ok(N::ResourceUpdated(p)) => self.on_resource_updated(p),
            Ok(N::ToolListChanged(_)) => self.on_list_changed(ListKind::Tools),
            Ok(N::ResourceListChanged(_)) => self.on_list_changed(ListKind::Resources),
            Ok(N::PromptListChanged(_)) => self.on_list_changed(ListKind::Prompts),
            Ok(N::Cancelled(p)) => self.on_cancelled(p),
            Ok(N::ElicitationComplete(p)) => self.on_elicitation_complete(p),
            Ok(_) => self.other_notification(n),
            Err(e) => {
                tracing::debug!(method = %n.method, error = %e, "notification params did not decode; passed on raw");
                self.other_notification(n);
            }
        }
    }
}

/// Answers one server request (legacy JSON-RPC request or 2026-07-28 input
/// request) through the handler's typed methods.
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
async fn answer<H: ClientHandler>(
    h: &H,
    caps: &ClientCapabilities,
    method: &str,
    params: Option<RawJson>,
) -> Result<Value, ErrorObject> {
    let advertised = match method {
        CreateMessage::NAME => caps.sampling.is_some(),
        Elicit::NAME => caps.elicitation.is_some(),
        ListRoots::NAME => caps.roots.is_some(),
        _ => true,
    };
    if !advertised {
        tracing::warn!(%method, "the server sent a request whose capability the client did not advertise");
        return Err(ErrorObject::method_not_found(method));
    }
    let (request, params) = decode_request(method, params).await;
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            let error = ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("invalid params for {method}: {e}"),
            );
            h.on_refused_request(Some(method), &error);
            return Err(error);
        }
    };
    match request {
        ServerRequest::CreateMessage(p) => encode(h.create_message(p).await?),
        ServerRequest::Elicit(p) => encode(h.elicit(p).await?),
        ServerRequest::ListRoots(p) => encode(h.list_roots(p).await?),
        ServerRequest::Ping(_) => Ok(Value::Object(Default::default())),
        _ => {
            h.other_request(method, params.and_then(|p| p.decode().ok()))
                .await
        }
    }
}

/// A server request's params at least this large are decoded on tokio's
/// blocking pool, not on the task answering it: a decode of many megabytes
/// (a form of 100,000 fields) would otherwise hold the thread that runs the
/// connection's timers (a current-thread runtime has only that one), so no
/// deadline or cancellation could fire meanwhile. Smaller params decode in
/// place. How many run at once is bounded by
/// [`max_server_requests`](crate::ClientBuilder::max_server_requests).
pub const DECODE_OFF_TASK_BYTES: usize = 256 * 1024;

/// [`ServerRequest::from_parts`], on tokio's blocking pool when the params
/// are [`DECODE_OFF_TASK_BYTES`] or more (a
/// form of 100,000 fields would otherwise hold the thread that runs the
/// connection's timers); the params come back with the result. How many
/// run at once is bounded by
/// [`max_server_requests`](crate::ClientBuilder::max_server_requests).
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
async fn decode_request(
    method: &str,
    params: Option<RawJson>,
) -> (serde_json::Result<ServerRequest>, Option<RawJson>) {
    #[cfg(feature = "tokio")]
    if params
        .as_ref()
        .is_some_and(|p| p.len() >= DECODE_OFF_TASK_BYTES)
    {
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let m = method.to_owned();
            let job = rt.spawn_blocking(move || {
                let r = ServerRequest::from_parts(&m, params.as_ref());
                (r, params)
            });
            return match job.await {
                Ok(done) => done,
                Err(e) => (
                    Err(<serde_json::Error as serde::de::Error>::custom(format!(
                        "the decode did not finish: {e}"
                    ))),
                    None,
                ),
            };
        }
    }
    (ServerRequest::from_parts(method, params.as_ref()), params)
}

#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
fn encode(result: impl Serialize) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("could not encode the answer: {e}"),
        )
    })
}
