//! What the application provides to the client: answers to the server's
//! requests (sampling, elicitation, roots) and a sink for notifications.

use std::future::Future;
use std::pin::Pin;

use mcp_proto::schema::ClientCapabilities;
use mcp_proto::{ErrorObject, Notification};
use serde_json::Value;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The application side of the client.
///
/// One handler serves both eras: legacy servers send requests such as
/// `sampling/createMessage` as JSON-RPC requests; 2026-07-28 servers embed
/// them in an `input_required` result. Either way they reach
/// [`handle_request`](ClientHandler::handle_request), and the client
/// advertises the [`capabilities`](ClientHandler::capabilities) you return.
///
/// ```
/// use mcp_client::{BoxFuture, ClientHandler};
/// use mcp_proto::ErrorObject;
/// use mcp_proto::schema::ClientCapabilities;
/// use serde_json::{json, Value};
///
/// struct Roots;
/// impl ClientHandler for Roots {
///     fn capabilities(&self) -> ClientCapabilities {
///         serde_json::from_value(json!({"roots": {}})).unwrap()
///     }
///     fn handle_request(&self, method: &str, _params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
///         let method = method.to_owned();
///         Box::pin(async move {
///             match method.as_str() {
///                 "roots/list" => Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]})),
///                 other => Err(ErrorObject::method_not_found(other)),
///             }
///         })
///     }
/// }
/// ```
pub trait ClientHandler: Send + Sync + 'static {
    /// What this handler can do (`sampling`, `elicitation`, `roots`). Default: nothing.
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    /// Answers a server-to-client request (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`). The result is the method's result
    /// object. Default: method not found.
    fn handle_request(&self, method: &str, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        let _ = params;
        let err = ErrorObject::method_not_found(method);
        Box::pin(async move { Err(err) })
    }

    /// Receives every server notification (except progress for calls that
    /// registered a progress callback), one at a time, in the order the server
    /// sent them. Runs on its own task: a slow handler never stalls the
    /// connection (notifications queue up instead).
    fn on_notification(&self, notification: Notification) {
        let _ = notification;
    }
}

/// A handler that supports nothing and ignores notifications.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHandler;

impl ClientHandler for NoHandler {}
