//! `resources/list`, `resources/templates/list`, `resources/read`,
//! `resources/subscribe` and `resources/unsubscribe`.

use serde::{Deserialize, Serialize};

use super::{
    Annotations, CacheScope, Icon, InputResponses, JsonObject, Page, Resource, ResourceContents,
    ResultType,
};

/// Result of `resources/list`: a [`Page`] of resources.
pub type ListResourcesResult = Page<Resource>;

/// A template for resource URIs (RFC 6570), from `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// An RFC 6570 URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every resource matching the template, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(ResourceTemplate "a resource template object" {
    required { uri_template: "uriTemplate", name: "name" }
    optional {
        title: "title",
        description: "description",
        mime_type: "mimeType",
        annotations: "annotations",
        icons: "icons",
        meta: "_meta",
    }
});

/// Result of `resources/templates/list`: a [`Page`] of templates.
pub type ListResourceTemplatesResult = Page<ResourceTemplate>;

/// Params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceParams {
    /// The resource to read.
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Answers to a previous `InputRequiredResult` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous `InputRequiredResult`'s `requestState`, verbatim (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl ReadResourceParams {
    /// Reads `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadResourceParams {
            uri: uri.into(),
            meta: None,
            input_responses: None,
            request_state: None,
        }
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Sets the answers and state of a multi round-trip retry (2026-07-28).
    #[must_use]
    pub fn with_input_responses(
        mut self,
        responses: InputResponses,
        request_state: Option<String>,
    ) -> Self {
        self.input_responses = Some(responses);
        self.request_state = request_state;
        self
    }
}

/// Result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The contents: one entry, or several for a directory-like resource.
    /// Each is a [`TextResourceContents`] or a [`BlobResourceContents`];
    /// use [`ResourceContents::as_text`] / [`ResourceContents::as_blob`].
    #[serde(default)]
    pub contents: Vec<ResourceContents>,
    /// Freshness hint in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(ReadResourceResult "a resources/read result object" {
    required {}
    optional {
        result_type: "resultType",
        contents: "contents",
        ttl_ms: "ttlMs",
        cache_scope: "cacheScope",
        meta: "_meta",
    }
});

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TextResourceContents {
    /// Text contents of `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Binary contents of a resource, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl BlobResourceContents {
    /// Blob contents of `uri` (`blob` is base64).
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

impl ResourceContents {
    /// The text contents, if this is a [`TextResourceContents`].
    pub fn as_text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The base64 contents, if this is a [`BlobResourceContents`] (and has no text).
    pub fn as_blob(&self) -> Option<&str> {
        if self.text.is_some() {
            None
        } else {
            self.blob.as_deref()
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(c: TextResourceContents) -> Self {
        ResourceContents {
            uri: c.uri,
            mime_type: c.mime_type,
            text: Some(c.text),
            blob: None,
            meta: c.meta.map(crate::RawObject::from),
            extra: crate::RawObject::from(c.extra),
        }
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        ResourceContents {
            uri: c.uri,
            mime_type: c.mime_type,
            text: None,
            blob: Some(c.blob),
            meta: c.meta.map(crate::RawObject::from),
            extra: crate::RawObject::from(c.extra),
        }
    }
}

/// Params of `resources/subscribe` and `resources/unsubscribe` (legacy era;
/// 2026-07-28 uses `subscriptions/listen`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscribeParams {
    /// The resource to (un)subscribe.
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SubscribeParams {
    /// (Un)subscribes `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        SubscribeParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

/// Params of `resources/unsubscribe`.
pub type UnsubscribeParams = SubscribeParams;
