//! The MCP Apps extension (SEP-1865, extension id [`UI_EXTENSION`], stable
//! 2026-01-26): a tool may come with an interactive UI, an HTML resource at
//! a `ui://` URI that the host renders in a sandboxed iframe.
//!
//! What this module reads, all of it from `_meta` (kept verbatim in the
//! types that carry it; the typed views are decoded when asked for):
//!
//! - A tool's `_meta.ui` ([`Tool::ui`]): `resourceUri`, the UI to render
//!   its results with, and `visibility`, who the tool is for: `"model"`
//!   (the agent may be offered it and call it) and/or `"app"` (the UI of
//!   the same server may call it). Absent, it is both. The deprecated flat
//!   key `_meta["ui/resourceUri"]` is read too.
//! - A UI resource's `_meta.ui` ([`UiResourceMeta`]): the CSP domains the
//!   HTML needs, the browser permissions it asks for, a dedicated origin,
//!   and a border preference.
//!
//! **The rule that matters for an agent:** a tool whose visibility does not
//! include `"model"` exists for its app's UI only and must never be offered
//! to a model ("Host MUST NOT include tools in the agent's tool list when
//! their visibility does not include `model`"). [`Tool::is_model_visible`]
//! is the one predicate that decides it; `mcp-tools` applies it to every
//! model-facing surface.
//!
//! A client declares the extension with
//! [`ClientCapabilities::with_ui_extension`]; servers may then register
//! their UI tools (many register them whatever the client says).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ClientCapabilities, JsonObject, Tool};

/// The extension's identifier, the key in `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App's HTML (`resources/read` of a `ui://` resource).
pub const UI_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme every UI resource uses (`ui://server/view`).
pub const UI_SCHEME: &str = "ui";

/// The deprecated flat `_meta` key for a tool's UI resource (read when
/// `_meta.ui.resourceUri` is absent).
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

string_enum! {
    /// Who a tool is for (`_meta.ui.visibility`).
    Visibility {
        /// `"model"`: offered to the agent, which may call it.
        Model = "model",
        /// `"app"`: callable by the UI of the same server.
        App = "app",
    }
}

/// A tool's `_meta.ui` ([`Tool::ui`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` resource to render the tool's results with: from
    /// `_meta.ui.resourceUri`, else the deprecated `_meta["ui/resourceUri"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who the tool is for; `None` (absent) means both. A single string is
    /// read as a list of one; a member that is not a string, or a value that
    /// is neither, is kept as [`Visibility::Unknown`] with its JSON text (so
    /// an audience this crate cannot read never counts as `"model"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
    /// Unknown members of `_meta.ui`, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolUi {
    /// Whether the tool may be offered to a model: `visibility` absent, or
    /// containing `"model"`.
    pub fn is_model_visible(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether the UI of the tool's server may call it: `visibility`
    /// absent, or containing `"app"`.
    pub fn is_app_visible(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::App))
    }

    /// Reads a `_meta.ui` value (and the legacy key's value, if any).
    fn from_meta(ui: Option<&str>, legacy_uri: Option<&str>) -> Option<Self> {
        let mut object = match ui.map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(o))) => Some(o),
            _ => None,
        };
        let legacy_uri = legacy_uri
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| v.as_str().map(str::to_owned));
        if object.is_none() && legacy_uri.is_none() {
            return None;
        }
        let mut ui = ToolUi::default();
        if let Some(o) = object.as_mut() {
            ui.resource_uri = match o.remove("resourceUri") {
                Some(Value::String(s)) => Some(s),
                Some(other) => {
                    // Not a string: kept where it was, unread.
                    o.insert("resourceUri".into(), other);
                    None
                }
                None => None,
            };
            ui.visibility = match o.remove("visibility") {
                None | Some(Value::Null) => None,
                Some(Value::Array(items)) => {
                    Some(items.iter().map(visibility_of).collect::<Vec<_>>())
                }
                Some(other) => Some(vec![visibility_of(&other)]),
            };
        }
        if ui.resource_uri.is_none() {
            ui.resource_uri = legacy_uri;
        }
        ui.extra = object.unwrap_or_default();
        Some(ui)
    }
}

/// One `visibility` member: a string as itself, anything else as an unknown
/// audience carrying its JSON text.
fn visibility_of(v: &Value) -> Visibility {
    match v {
        Value::String(s) => Visibility::from(s.as_str()),
        other => Visibility::Unknown(other.to_string()),
    }
}

impl Tool {
    /// The tool's `_meta.ui` (MCP Apps), typed; `None` when the tool has
    /// neither `_meta.ui` (an object) nor the deprecated
    /// `_meta["ui/resourceUri"]`. Decoded from `_meta` on each call.
    ///
    /// ```
    /// use mcp_proto::schema::{Tool, Visibility};
    /// let tool: Tool = serde_json::from_str(r#"{"name": "refresh", "inputSchema": {"type": "object"},
    ///     "_meta": {"ui": {"resourceUri": "ui://weather/dashboard", "visibility": ["app"]}}}"#)?;
    /// let ui = tool.ui().expect("an app tool");
    /// assert_eq!(ui.resource_uri.as_deref(), Some("ui://weather/dashboard"));
    /// assert_eq!(ui.visibility, Some(vec![Visibility::App]));
    /// assert!(!tool.is_model_visible());
    ///
    /// let old: Tool = serde_json::from_str(r#"{"name": "show", "inputSchema": {"type": "object"},
    ///     "_meta": {"ui/resourceUri": "ui://weather/dashboard"}}"#)?;
    /// assert_eq!(old.ui().and_then(|u| u.resource_uri).as_deref(), Some("ui://weather/dashboard"));
    /// assert!(old.is_model_visible());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn ui(&self) -> Option<ToolUi> {
        let meta = self.meta.as_ref()?;
        ToolUi::from_meta(meta.get("ui"), meta.get(LEGACY_RESOURCE_URI_KEY))
    }

    /// Whether this tool may be offered to a model: false only for a tool
    /// whose `_meta.ui.visibility` leaves out `"model"` (an app-only tool,
    /// or an audience this crate cannot read). The one predicate every
    /// model-facing surface applies.
    pub fn is_model_visible(&self) -> bool {
        // No `_meta.ui`, no visibility: the common case costs one lookup.
        let Some(ui) = self.meta.as_ref().and_then(|m| m.get("ui")) else {
            return true;
        };
        ToolUi::from_meta(Some(ui), None).is_none_or(|u| u.is_model_visible())
    }

    /// Whether the UI of this tool's server may call it (`_meta.ui.visibility`
    /// absent or containing `"app"`).
    pub fn is_app_visible(&self) -> bool {
        self.ui().is_none_or(|u| u.is_app_visible())
    }
}

/// A UI resource's `_meta.ui`: what its HTML needs from the host's sandbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiResourceMeta {
    /// The origins the HTML may reach. Absent: the spec's restrictive
    /// default (no network, no external resources, no nested frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// The browser features the HTML asks for (hosts may grant them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated sandbox origin for the view (its format is the host's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the view wants a visible border and background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The Content Security Policy domains a UI resource declares. Each list,
/// absent or empty, allows nothing beyond the spec's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for scripts, images, styles, fonts and media (`script-src`,
    /// `img-src`, `style-src`, `font-src`, `media-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// Origins for nested iframes (`frame-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs of the document (`base-uri`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The browser features a UI resource asks for (each present member, usually
/// `{}`, is a request; Permission Policy names in the comments).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiPermissions {
    /// `camera`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// `microphone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// `geolocation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// `clipboard-write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// Declares the MCP Apps extension ([`UI_EXTENSION`]) with the one UI
    /// type there is: `{"mimeTypes": ["text/html;profile=mcp-app"]}`. Only
    /// for a host that renders apps: servers may then offer UI tools.
    ///
    /// ```
    /// use mcp_proto::schema::ClientCapabilities;
    /// let caps = ClientCapabilities::default().with_ui_extension();
    /// assert_eq!(
    ///     serde_json::to_value(&caps)?,
    ///     serde_json::json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    /// );
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn with_ui_extension(mut self) -> Self {
        self.extensions.get_or_insert_with(JsonObject::new).insert(
            UI_EXTENSION.into(),
            serde_json::json!({ "mimeTypes": [UI_MIME_TYPE] }),
        );
        self
    }
}

/// Whether `mime_type` is the MCP App HTML type: `text/html` with
/// `profile=mcp-app`, compared as a media type (case-insensitive type and
/// parameter name, spaces around `;` and a quoted value allowed).
///
/// ```
/// use mcp_proto::schema::is_ui_mime_type;
/// assert!(is_ui_mime_type("text/html;profile=mcp-app"));
/// assert!(is_ui_mime_type("Text/HTML; charset=utf-8; profile=\"mcp-app\""));
/// assert!(!is_ui_mime_type("text/html"));
/// ```
pub fn is_ui_mime_type(mime_type: &str) -> bool {
    let mut parts = mime_type.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("text/html")
        && parts.any(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("profile") && v.trim().trim_matches('"') == "mcp-app"
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(meta: Value) -> Tool {
        serde_json::from_value(
            json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": meta}),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn visibility_decides_who_sees_a_tool() {
        let cases = [
            (json!({}), true, true),
            (json!({"ui": {"resourceUri": "ui://a"}}), true, true),
            (json!({"ui": {"visibility": ["model", "app"]}}), true, true),
            (json!({"ui": {"visibility": ["app"]}}), false, true),
            (json!({"ui": {"visibility": ["model"]}}), true, false),
            (json!({"ui": {"visibility": []}}), false, false),
            (json!({"ui": {"visibility": "app"}}), false, true),
            (json!({"ui": {"visibility": "model"}}), true, false),
            (json!({"ui": {"visibility": 7}}), false, false),
            (json!({"ui": {"visibility": [7, "app"]}}), false, true),
            (
                json!({"ui": {"visibility": ["app", "widget"]}}),
                false,
                true,
            ),
            (json!({"ui": {"visibility": null}}), true, true),
            (json!({"ui": "app"}), true, true),
            (json!({"ui/resourceUri": "ui://a"}), true, true),
        ];
        for (meta, model, app) in cases {
            let t = tool(meta.clone());
            assert_eq!(t.is_model_visible(), model, "model: {meta}");
            assert_eq!(t.is_app_visible(), app, "app: {meta}");
        }
        let bare: Tool =
            serde_json::from_value(json!({"name": "t"})).unwrap_or_else(|e| panic!("{e}"));
        assert!(bare.is_model_visible() && bare.is_app_visible() && bare.ui().is_none());
    }

    #[test]
    fn both_spellings_are_read_and_unknown_keys_kept() {
        let t = tool(
            json!({"ui": {"resourceUri": "ui://new", "visibility": ["app"], "future": 1},
                            "ui/resourceUri": "ui://old"}),
        );
        let ui = t.ui().unwrap_or_default();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://new"));
        assert_eq!(ui.extra.get("future"), Some(&json!(1)));
        let t = tool(json!({"ui": {"visibility": ["model"]}, "ui/resourceUri": "ui://old"}));
        assert_eq!(
            t.ui().and_then(|u| u.resource_uri).as_deref(),
            Some("ui://old")
        );
        // Round trip of the typed view.
        assert_eq!(
            serde_json::to_value(
                tool(json!({"ui": {"resourceUri": "ui://a", "visibility": ["app"], "x": true}}))
                    .ui()
            )
            .unwrap_or_default(),
            json!({"resourceUri": "ui://a", "visibility": ["app"], "x": true})
        );
    }

    #[test]
    fn a_resource_meta_reads_its_csp_and_permissions() {
        let m: UiResourceMeta = serde_json::from_value(json!({
            "csp": {"connectDomains": ["https://api.example.com"], "frameDomains": []},
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "domain": "a.example.com", "prefersBorder": true, "other": 1
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let csp = m.csp.clone().unwrap_or_default();
        assert_eq!(
            csp.connect_domains,
            Some(vec!["https://api.example.com".to_owned()])
        );
        assert_eq!(csp.frame_domains, Some(vec![]));
        let p = m.permissions.clone().unwrap_or_default();
        assert!(p.camera.is_some() && p.clipboard_write.is_some() && p.microphone.is_none());
        assert_eq!(m.prefers_border, Some(true));
        assert_eq!(m.extra.get("other"), Some(&json!(1)));
    }
}
