//! MCP Apps (extension `io.modelcontextprotocol/ui`) on the client side:
//! app-only tools kept from the model, an app's own calls, and a UI
//! resource read typed.
//!
//! The rendering (the sandboxed iframe, its `postMessage` bridge) is the
//! host's job, as in the other SDKs; this module gives it what it needs.

use std::sync::{Arc, Weak};

use base64::Engine as _;
use mcp_client::{Client, ClientError};
use mcp_proto::schema::{ReadResourceResult, UI_SCHEME, UiResourceMeta, is_ui_mime_type};
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::{McpTool, ToolOutput};
use crate::toolbox::Toolbox;

/// A UI resource as a host renders it: the HTML and what its sandbox must
/// allow ([`read_ui_resource`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UiResource {
    /// The `ui://` URI.
    pub uri: String,
    /// The HTML document (from `text`, or `blob` decoded from base64 as UTF-8).
    pub html: String,
    /// Its `_meta.ui`: the content item's, else the result's, else the
    /// default (no CSP domains, no permissions: the spec's restrictive
    /// sandbox). A `_meta.ui` that does not decode counts as absent, which
    /// only ever restricts the view.
    pub meta: UiResourceMeta,
}

/// Why a UI resource could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum UiResourceError {
    /// The URI is not a `ui://` URI (nothing was sent).
    #[error("`{uri}` is not a UI resource: MCP Apps UI resources use the ui:// scheme")]
    NotUi {
        /// The URI asked for.
        uri: String,
    },
    /// `resources/read` failed.
    #[error("reading UI resource `{uri}` failed")]
    Read {
        /// The URI asked for.
        uri: String,
        /// The client's error.
        source: ClientError,
    },
    /// The result holds no contents with text or a blob.
    #[error("the server sent no contents for UI resource `{uri}`")]
    Empty {
        /// The URI asked for.
        uri: String,
    },
    /// The contents are not `text/html;profile=mcp-app`.
    #[error(
        "UI resource `{uri}` has MIME type {got:?}, not text/html;profile=mcp-app; the server must send the MCP App type"
    )]
    MimeType {
        /// The URI asked for.
        uri: String,
        /// The MIME type the server gave, if any.
        got: Option<String>,
    },
    /// A blob that is not base64 of UTF-8 text.
    #[error("UI resource `{uri}` is a blob that is not base64-encoded UTF-8 HTML")]
    NotHtml {
        /// The URI asked for.
        uri: String,
    },
}

/// Reads the UI resource `uri` (`resources/read`) and checks it is an MCP
/// App: a `ui://` URI, contents of type `text/html;profile=mcp-app`, HTML
/// as text or as a base64 blob. The contents item whose `uri` is the one
/// asked for is used, else the first.
///
/// ```no_run
/// # async fn run(toolbox: mcp_tools::Toolbox) -> Result<(), Box<dyn std::error::Error>> {
/// // The model called `get_weather`; render its UI next to the result.
/// if let Some(tool) = toolbox.get("get_weather")
///     && let Some(uri) = tool.definition().ui().and_then(|ui| ui.resource_uri)
/// {
///     let ui = mcp_tools::read_ui_resource(tool.client(), &uri).await?;
///     let csp = ui.meta.csp.unwrap_or_default();
///     println!("{} bytes of HTML; may connect to {:?}", ui.html.len(), csp.connect_domains);
/// }
/// # Ok(()) }
/// ```
pub async fn read_ui_resource(client: &Client, uri: &str) -> Result<UiResource, UiResourceError> {
    if !is_ui_uri(uri) {
        return Err(UiResourceError::NotUi {
            uri: uri.to_owned(),
        });
    }
    let result = client
        .read_resource(uri)
        .await
        .map_err(|source| UiResourceError::Read {
            uri: uri.to_owned(),
            source,
        })?;
    ui_resource(uri, result)
}

/// Whether `uri` has the `ui` scheme (case-insensitive, as URI schemes are).
fn is_ui_uri(uri: &str) -> bool {
    uri.split_once("://")
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case(UI_SCHEME))
}

/// The checks of [`read_ui_resource`], on a result already read.
pub(crate) fn ui_resource(
    uri: &str,
    result: ReadResourceResult,
) -> Result<UiResource, UiResourceError> {
    let err_uri = || uri.to_owned();
    let result_meta = result.meta;
    let mut contents = result.contents;
    let at = contents.iter().position(|c| c.uri == uri).unwrap_or(0);
    if at >= contents.len() {
        return Err(UiResourceError::Empty { uri: err_uri() });
    }
    let item = contents.swap_remove(at);
    if !item.mime_type.as_deref().is_some_and(is_ui_mime_type) {
        return Err(UiResourceError::MimeType {
            uri: err_uri(),
            got: item.mime_type,
        });
    }
    let html = match (item.text, item.blob) {
        (Some(text), _) => text,
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| UiResourceError::NotHtml { uri: err_uri() })?,
        (None, None) => return Err(UiResourceError::Empty { uri: err_uri() }),
    };
    let ui_of = |meta: Option<&mcp_proto::RawObject>| {
        meta.and_then(|m| m.decode::<UiResourceMeta>("ui"))
            .and_then(Result::ok)
    };
    let meta = ui_of(item.meta.as_ref())
        .or_else(|| ui_of(result_meta.as_ref()))
        .unwrap_or_default();
    Ok(UiResource {
        uri: uri.to_owned(),
        html,
        meta,
    })
}

impl Toolbox {
    /// Calls `tool` (the server's own name) of `server` (its name in the
    /// toolbox) for that server's app: the MCP Apps UI the host renders
    /// calls its own server's tools this way, app-only ones included (they
    /// are never among the model's tools, see [`Toolbox`]). The result is
    /// the full output, not cut to any model budget.
    ///
    /// Refused, with nothing sent, when the server has no such tool (or the
    /// toolbox's [`Filter`](crate::Filter) left it out):
    /// [`ToolError::NotFound`]; and when the tool's `_meta.ui.visibility`
    /// leaves out `"app"` (a model-only tool), as the extension requires:
    /// [`ToolError::NotForApp`]. An app may only call its own server's
    /// tools; the host passes the server whose UI made the call.
    pub async fn call_from_app(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        let not_found = || ToolError::NotFound {
            name: format!("{server}/{tool}"),
        };
        let listing = self.server_listing(server).await.ok_or_else(not_found)?;
        let index = listing
            .tools
            .iter()
            .position(|t| t.name == tool)
            .filter(|_| listing.filter.allows(tool))
            .ok_or_else(not_found)?;
        if listing
            .tools
            .get(index)
            .is_some_and(|t| !t.is_app_visible())
        {
            return Err(ToolError::NotForApp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        }
        let tool = McpTool::build(
            listing.client,
            listing.tools,
            index,
            Arc::from(tool),
            Some(Arc::from(server)),
            Arc::new(listing.options),
            Weak::new(),
        )
        .ok_or_else(not_found)?;
        tool.call(arguments).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> ReadResourceResult {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_ui_resource_is_checked_and_typed() {
        let ok = ui_resource(
            "ui://a/b",
            read(json!({"contents": [
                {"uri": "ui://other", "mimeType": "text/plain", "text": "no"},
                {"uri": "ui://a/b", "mimeType": "text/html;profile=mcp-app", "text": "<p>hi</p>",
                 "_meta": {"ui": {"csp": {"connectDomains": ["https://x.example"]}, "prefersBorder": false}}},
            ], "_meta": {"ui": {"domain": "ignored.example"}}})),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok.html, "<p>hi</p>");
        let csp = ok.meta.csp.clone().unwrap_or_default();
        assert_eq!(
            csp.connect_domains,
            Some(vec!["https://x.example".to_owned()])
        );
        assert_eq!(ok.meta.domain, None, "the item's _meta.ui wins whole");

        // Blob, and the result's `_meta.ui` as the fallback.
        let blob = ui_resource(
            "ui://a",
            read(
                json!({"contents": [{"uri": "ui://a", "mimeType": "text/html; profile=mcp-app",
                "blob": "PGI+aGk8L2I+"}], "_meta": {"ui": {"prefersBorder": true}}}),
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(blob.html, "<b>hi</b>");
        assert_eq!(blob.meta.prefers_border, Some(true));

        let wrong = |v: Value| ui_resource("ui://a", read(v)).err().map(|e| e.to_string());
        assert!(
            wrong(json!({"contents": []})).is_some_and(|e| e.contains("no contents")),
            "empty"
        );
        assert!(
            wrong(json!({"contents": [{"uri": "ui://a", "mimeType": "text/html", "text": "x"}]}))
                .is_some_and(|e| e.contains("\"text/html\"")),
            "plain HTML is not an app"
        );
        assert!(
            wrong(json!({"contents": [{"uri": "ui://a", "text": "x"}]}))
                .is_some_and(|e| e.contains("None")),
            "no MIME type"
        );
        assert!(
            wrong(json!({"contents": [{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "blob": "!!"}]}))
                .is_some_and(|e| e.contains("not base64")),
            "bad blob"
        );
        assert!(is_ui_uri("UI://x") && !is_ui_uri("https://x") && !is_ui_uri("ui:x"));
    }
}
