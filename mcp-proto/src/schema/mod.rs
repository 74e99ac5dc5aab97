//! Typed params and results of MCP methods, for every revision.
//!
//! Conventions:
//! - Types a server sends are `#[non_exhaustive]` and keep unknown members in
//!   `extra`, so they survive a round trip.
//! - Types a user builds have `new(required…)` plus `with_*` builders.
//! - Optional members a server may omit decode to `None`/empty.
//! - Method names and their param/result types are tied together by the
//!   [`Method`](crate::method::Method) trait.
//!
//! # What is decoded, and what is kept as text
//!
//! Documented limits bound memory only if what a message becomes costs about
//! what it weighs. A `serde_json::Value` does not: each value is 32 bytes,
//! each non-empty object a B-tree node of some 600 bytes, so `{}` (3 bytes
//! with its comma) costs 10 to 20 times its size and `{"a":0}` about 90. A
//! 15 MiB message of `{}`s decoded into `Value`s took 180 MiB. So what a
//! client does not read is kept as its JSON text: [`RawJson`](crate::RawJson)
//! for a value, [`RawObject`](crate::RawObject) for `_meta` and unknown
//! members; both cost about their size on the wire and decode on demand.
//! Measured peaks (`mcp-client/tests/hostile_memory.rs`, a 15 MiB message of
//! 5.2 million `{}`, bound 4 × message + 64 MiB = 126 MiB):
//!
//! | where the `{}`s are | before | now |
//! |---|--:|--:|
//! | `CallToolResult.structuredContent` | 181 MiB | 37 MiB |
//! | a result's `_meta` and an unknown member | 181 MiB | 37 MiB |
//! | an error's `data` | 188 MiB | 37 MiB |
//! | a log notification's `data` | 181 MiB | 37 MiB |
//! | a listed tool's `inputSchema` (kept) | 180 MiB | 37 MiB |
//!
//! Per type:
//!
//! | type | kept as text | decoded (a program reads it) |
//! |---|---|---|
//! | envelope ([`Message`](crate::Message)) | `params`, `result` (a span of the message; copied out when much smaller than it) | id, method, error code and message |
//! | [`CallToolResult`] | `structuredContent` ([`structured`](CallToolResult::structured)), `_meta`, unknown members | `content`, `isError`, `resultType` |
//! | [`ContentBlock`] and its variants | every `_meta`; a tool result block's `structuredContent`; a block of unknown kind | text, data, MIME types, annotations |
//! | [`Tool`] | `inputSchema`, `outputSchema` (handed on verbatim to models), `execution`, `_meta`, unknown members | name, title, description, annotations, icons |
//! | [`Page`] | `_meta`, unknown members | items, `nextCursor`, cache hints |
//! | [`ReadResourceResult`], [`GetPromptResult`], [`ResourceContents`], [`Resource`], [`ResourceTemplate`], [`Prompt`], [`PromptArgument`], [`PromptMessage`], [`Annotations`], [`Icon`], [`ToolAnnotations`], [`EmptyResult`] | `_meta`, unknown members | the rest |
//! | [`ProgressParams`], [`CancelledParams`], [`LoggingMessageParams`] | `_meta`, unknown members, a log's `data` | the rest |
//! | [`ErrorObject`](crate::ErrorObject) | `data` ([`data_as`](crate::ErrorObject::data_as)) | code, message |
//!
//! A kept [`Tool`] of a realistic 1.2 KiB definition costs 1.3 KiB, against
//! 10.4 KiB with its schemas decoded (`tests/tool_memory.rs`).
//!
//! Not (yet) kept as text, and why:
//! - what a user builds and sends (`CallToolParams`, `RequestMeta`, the
//!   `with_meta` of every params type): a `serde_json::Map` is the
//!   convenient way to build it, and its size is the program's own;
//! - the handshake's results ([`InitializeResult`], [`DiscoverResult`],
//!   [`ServerCapabilities`], [`Implementation`]) and the requests a server
//!   sends a client (sampling, elicitation, roots), the tasks extension's
//!   types, completions and subscriptions: read whole by the session or by
//!   the handler that asked for them, and still decoded with
//!   `#[serde(flatten)]`; the same treatment (the `decode_keeping_unknown_raw!`
//!   macro) applies to them when their readers move to [`RawObject`](crate::RawObject);
//! - `Vec`s of decoded items (content blocks, tools, resources): read by
//!   every program. Their cost is their structs' size, so the rare, large
//!   content variants and every block's annotations are boxed: a
//!   [`ContentBlock`] is 88 bytes (296 unboxed) for 26 bytes of the smallest
//!   text block on the wire; a 15 MiB result of 600,000 empty text blocks
//!   peaks at 72 MiB (191 MiB unboxed). A minimal [`Tool`] (`{"name":""}`)
//!   is 320 bytes for 12 on the wire, but a tool list is what a program
//!   keeps, and a real tool's schema and description outweigh its struct.

/// An open set of wire strings: known values get a variant, anything else is
/// kept in `Unknown(String)` so it survives a round trip.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
            /// A value this crate does not know, kept verbatim.
            Unknown(String),
        }

        impl $name {
            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $wire,)*
                    $name::Unknown(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($wire => $name::$variant,)*
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok($name::from(s.as_ref()))
            }
        }
    };
}

/// `Deserialize` for a struct the server sends whose unknown members are
/// kept raw in `extra: RawObject` (see [`RawObject`](crate::RawObject) for
/// why not a `serde_json::Map`), or, where the public type says so
/// (`extra JsonObject;` first), in `extra: JsonObject`.
///
/// What `#[serde(flatten)]` cannot do: a flattened struct is first buffered
/// whole into serde's intermediate tree (which costs as much as a `Value`, its
/// raw members included, and cannot hold a `RawValue` at all), then decoded
/// from it. This decoder reads each member once, straight into its field. It
/// accepts what the derive accepted: known members in any order, a repeated
/// one an error, `required` ones missing an error, the others defaulted
/// (`Default`, or the expression after `=>`); then `check`, if given, may
/// refuse the whole (its error's `Display` is the decode error).
macro_rules! decode_keeping_unknown_raw {
    ($ty:ident $what:literal {
        $(extra $extra:ty;)?
        required { $($req:ident: $req_wire:literal),* $(,)? }
        optional { $($opt:ident: $opt_wire:literal),* $(,)? }
        $(defaulted { $($def:ident: $def_wire:literal => $default:expr),* $(,)? })?
        $(check $check:path)?
    }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$ty, A::Error> {
                        use serde::de::Error as _;
                        $(let mut $req = None;)*
                        $(let mut $opt = None;)*
                        $($(let mut $def = None;)*)?
                        let mut extra = unknown_members!(new $($extra)?);
                        while let Some(key) =
                            map.next_key::<$crate::schema::MaybeBorrowed<'de>>()?
                        {
                            match key.as_str() {
                                $($req_wire => {
                                    if $req.is_some() {
                                        return Err(A::Error::duplicate_field($req_wire));
                                    }
                                    $req = Some(map.next_value()?);
                                })*
                                $($opt_wire => {
                                    if $opt.is_some() {
                                        return Err(A::Error::duplicate_field($opt_wire));
                                    }
                                    $opt = Some(map.next_value()?);
                                })*
                                $($($def_wire => {
                                    if $def.is_some() {
                                        return Err(A::Error::duplicate_field($def_wire));
                                    }
                                    $def = Some(map.next_value()?);
                                })*)?
                                _ => unknown_members!(push extra key map $($extra)?),
                            }
                        }
                        unknown_members!(shrink extra $($extra)?);
                        let built = $ty {
                            $($req: $req.ok_or_else(|| A::Error::missing_field($req_wire))?,)*
                            $($opt: $opt.unwrap_or_default(),)*
                            $($($def: match $def {
                                Some(v) => v,
                                None => $default,
                            },)*)?
                            extra,
                        };
                        $($check(&built).map_err(A::Error::custom)?;)?
                        Ok(built)
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

/// The pieces of [`decode_keeping_unknown_raw`] that depend on where the
/// unknown members go: a `RawObject` (no type given) or a `JsonObject`.
macro_rules! unknown_members {
    (new) => {
        $crate::RawObject::new()
    };
    (new $t:ty) => {
        <$t>::new()
    };
    (push $extra:ident $key:ident $map:ident) => {
        $extra.push_next($key.as_str(), &mut $map)?
    };
    (push $extra:ident $key:ident $map:ident $t:ty) => {{
        let value: serde_json::Value = $map.next_value()?;
        $extra.insert($key.as_str().to_owned(), value);
    }};
    (shrink $extra:ident) => {
        $extra.shrink()
    };
    (shrink $extra:ident $t:ty) => {};
}

mod apps;
mod capabilities;
mod completion;
mod content;
mod elicitation;
mod lifecycle;
mod logging;
mod meta;
mod mrtr;
mod notifications;
mod page;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod server;
mod skills;
mod subscriptions;
mod tasks;
mod tool_result_fast;
#[cfg(any(test, fuzzing))]
pub(crate) use tool_result_fast::call_tool_result as call_tool_result_fast;
mod tools;

pub use apps::*;
pub use capabilities::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use lifecycle::*;
pub use logging::*;
pub use meta::*;
pub use mrtr::*;
pub use notifications::*;
pub use page::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use server::*;
pub use skills::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object (`_meta`, unknown members, free-form maps).
pub type JsonObject = Map<String, Value>;

/// Name and version of an MCP implementation (client or server).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Website URL (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

decode_keeping_unknown_raw!(Implementation "an implementation object" {
    extra JsonObject;
    required { name: "name", version: "version" }
    optional {
        title: "title",
        description: "description",
        website_url: "websiteUrl",
        icons: "icons",
    }
});

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// An icon for an implementation, tool, prompt or resource (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// MIME type, if the server's is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(Icon "an icon object" {
    required { src: "src" }
    optional { mime_type: "mimeType", sizes: "sizes", theme: "theme" }
});

/// A role in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The user.
    User,
    /// The assistant (model).
    Assistant,
}

/// Optional annotations on content and resources.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(Annotations "an annotations object" {
    required {}
    optional { audience: "audience", priority: "priority", last_modified: "lastModified" }
});

/// Whether a result is final or asks for more input (2026-07-28 `resultType`).
///
/// An absent `resultType` (servers of earlier revisions) means [`Complete`](ResultType::Complete).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the final result.
    #[default]
    Complete,
    /// `"input_required"`: an [`InputRequiredResult`].
    InputRequired,
    /// `"task"`: a task handle from the `io.modelcontextprotocol/tasks`
    /// extension (2026-07-28); decode the result as a [`GetTaskResult`].
    Task,
    /// A value this crate does not know (an extension's). The spec says an
    /// unrecognised value is invalid unless an advertised extension defines it.
    Unknown(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
            ResultType::Unknown(s) => s,
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            _ => ResultType::Unknown(s),
        })
    }
}

/// Params of a paginated list request (`tools/list`, `resources/list`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaginatedParams {
    /// The opaque cursor from the previous page's `nextCursor`. An empty
    /// string is a valid cursor (2026-07-28); only absence means "first page".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl PaginatedParams {
    /// Params for the page after `cursor` (`None`: the first page).
    pub fn new(cursor: Option<String>) -> Self {
        PaginatedParams { cursor, meta: None }
    }

    /// Sets `_meta` (2026-07-28: required, see [`request_meta`]).
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// An empty result (`ping`, `logging/setLevel`, subscribe…): only `_meta` and unknown members.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EmptyResult {
    /// `resultType` (2026-07-28).
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<crate::RawObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: crate::RawObject,
}

decode_keeping_unknown_raw!(EmptyResult "a result object" {
    required {}
    optional { result_type: "resultType", meta: "_meta" }
});

/// Params of a notification that carries nothing but `_meta`
/// (`notifications/initialized`, every `list_changed`).
///
/// In 2026-07-28 the `_meta` of a notification delivered on a
/// `subscriptions/listen` stream holds the subscription id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NotificationParams {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl NotificationParams {
    /// Empty params.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `io.modelcontextprotocol/subscriptionId` from `_meta` (2026-07-28).
    pub fn subscription_id(&self) -> Option<crate::RequestId> {
        subscription_id(self.meta.as_ref())
    }
}

/// Params of every `notifications/*/list_changed`.
pub type ListChangedParams = NotificationParams;

/// Params of a request that carries nothing but `_meta`
/// (`ping`, `roots/list`, `server/discover`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestParams {
    /// `_meta` (2026-07-28: the per-request protocol fields).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestParams {
    /// Empty params.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Params of `ping` (legacy era; either side may send it).
pub type PingParams = RequestParams;

/// Reads `io.modelcontextprotocol/subscriptionId` from a `_meta` object.
pub fn subscription_id(meta: Option<&JsonObject>) -> Option<crate::RequestId> {
    let v = meta?.get(META_SUBSCRIPTION_ID)?;
    crate::RequestId::deserialize(v).ok()
}

/// Cache hints on cacheable results (2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// Shared intermediaries may cache the response.
    Public,
    /// Only the requesting client may cache it.
    Private,
    /// A scope this crate does not know. Treat it like [`Private`](CacheScope::Private);
    /// it never fails the whole result.
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests;
