//! What `mcp` answers its server: elicitation (a form or a URL on the
//! terminal, [`crate::form`]), roots (`--root`), and the server's
//! notifications (log messages on stderr at `--log-level`, the rest traced
//! with `-v`). One handler serves both eras: a legacy server's
//! `elicitation/create` request and a 2026-07-28 server's `input_required`
//! round reach the same [`ClientHandler::elicit`].

use std::sync::OnceLock;

use mcp_client::{ClientHandler, ListKind};
use mcp_proto::schema::{
    ClientCapabilities, ElicitParams, ElicitResult, ElicitationCompleteParams, ListRootsParams,
    ListRootsResult, LoggingLevel, LoggingMessageParams, ResourceUpdatedParams, Root,
};
use mcp_proto::{ErrorObject, Notification};
use serde_json::Value;

use mcp_cli::terminal::line;

/// The server's name as its handshake gave it, for "`<server> asks: ...`".
static SERVER_NAME: OnceLock<String> = OnceLock::new();

/// Records the server's name once the handshake is done.
pub(crate) fn set_server_name(name: &str) {
    let _ = SERVER_NAME.set(name.to_owned());
}

fn server_name() -> String {
    SERVER_NAME
        .get()
        .cloned()
        .unwrap_or_else(|| "the server".to_owned())
}

/// The CLI's [`ClientHandler`].
#[derive(Debug, Clone)]
pub(crate) struct CliHandler {
    /// `--root`: advertised (the `roots` capability) only when given.
    pub(crate) roots: Vec<Root>,
    /// `--log-level`: log messages at or above it are shown on stderr.
    pub(crate) log_level: Option<LoggingLevel>,
}

impl ClientHandler for CliHandler {
    fn capabilities(&self) -> ClientCapabilities {
        // Elicitation is always declared: without a terminal the request
        // is declined with a line saying why, which tells the user more
        // than a tool the server hid.
        let caps = ClientCapabilities::default()
            .with_elicitation_form()
            .with_elicitation_url();
        if self.roots.is_empty() {
            caps
        } else {
            caps.with_roots()
        }
    }

    async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        let server = server_name();
        Ok(match params {
            ElicitParams::Form(p) => crate::form::ask_form(server, p).await,
            ElicitParams::Url(p) => crate::form::ask_url(server, p).await,
            other => {
                let mode = match &other {
                    ElicitParams::Unknown(v) => v.get("mode").map(Value::to_string),
                    _ => None,
                };
                eprintln!(
                    "mcp: declined {}'s request for input: its mode {} is one this client does \
                     not know",
                    line(&server),
                    line(mode.as_deref().unwrap_or("?"))
                );
                ElicitResult::decline()
            }
        })
    }

    async fn list_roots(&self, _: ListRootsParams) -> Result<ListRootsResult, ErrorObject> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }

    fn on_logging_message(&self, p: LoggingMessageParams) {
        // A string is shown as its text; anything else as its JSON.
        let data = p
            .data
            .decode::<String>()
            .unwrap_or_else(|_| p.data.as_str().to_owned());
        let logger = p.logger.as_deref().map(line);
        match self.log_level {
            Some(min) if p.level >= min => {
                let level = serde_json::to_value(p.level)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                crate::progress::say(match logger {
                    Some(logger) => format!("mcp: server log [{level}] {logger}: {}", line(&data)),
                    None => format!("mcp: server log [{level}] {}", line(&data)),
                });
            }
            _ => {
                let logger = logger.unwrap_or_default();
                tracing::info!(target: "mcp::server", level = ?p.level, logger, data = %line(&data), "server log");
            }
        }
    }

    fn on_elicitation_complete(&self, p: ElicitationCompleteParams) {
        crate::progress::say(format!(
            "mcp: {} says the browser step is complete ({})",
            line(&server_name()),
            line(&p.elicitation_id)
        ));
    }

    fn on_list_changed(&self, kind: ListKind) {
        tracing::info!(target: "mcp::server", ?kind, "server list changed");
    }

    fn on_resource_updated(&self, p: ResourceUpdatedParams) {
        tracing::info!(target: "mcp::server", uri = %line(&p.uri), "resource updated");
    }

    fn on_refused_request(&self, method: Option<&str>, error: &ErrorObject) {
        let server = line(&server_name());
        let what = match method {
            Some(m) => format!("{}'s {} request", server, line(m)),
            None => format!("a request from {server} that could not be read"),
        };
        crate::progress::say(format!(
            "mcp: refused {what} (answered {}): {}",
            error.code,
            line(&error.message)
        ));
    }

    fn other_notification(&self, n: Notification) {
        let params = n.params.as_ref().map_or("", |p| p.get());
        tracing::info!(target: "mcp::server", method = %line(&n.method), params = %line(params), "server notification");
    }
}
