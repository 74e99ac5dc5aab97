//! The one composer of a request's `_meta` (see the [session docs](super#meta)
//! for who decides each member): the parts by tier, written into the params
//! as JSON text.

use mcp_proto::jsonrpc::RequestId;
use mcp_proto::raw::ObjectWriter;
use mcp_proto::schema::{
    JsonObject, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROGRESS_TOKEN,
    META_PROTOCOL_VERSION,
};
use mcp_proto::{ProtocolVersion, RawJson};
use serde_json::Value;

use super::SessionConfig;
use crate::telemetry::TraceMeta;

/// What goes into one request's `_meta`, by who decides it (see the
/// [session docs](super#meta) for the order).
#[derive(Default, Clone, Copy)]
pub(super) struct MetaParts<'a> {
    /// The members the negotiated revision puts on every request (2026-07-28:
    /// protocol version, client info and capabilities, log level), as one
    /// object; `None` when there are none.
    protocol: Option<&'a RawJson>,
    /// The call's progress token, when it asked for progress.
    progress_token: Option<&'a RequestId>,
    /// The members given with `RequestBuilder::meta`: below the protocol's
    /// and the params' own.
    caller: Option<&'a JsonObject>,
    /// The W3C trace context (`traceparent`, `tracestate`, `baggage`):
    /// the lowest tier, below every other (see [`crate::telemetry`]).
    trace: Option<&'a TraceMeta>,
}

/// The keys of the protocol's members (see [`MetaParts::protocol`]).
const PROTOCOL_KEYS: [&str; 4] = [
    META_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
];

impl<'a> MetaParts<'a> {
    /// The protocol's members (see [`protocol_members`]).
    #[inline]
    pub(super) fn protocol(self, protocol: Option<&'a RawJson>) -> Self {
        MetaParts { protocol, ..self }
    }

    /// The call's progress token.
    #[inline]
    pub(super) fn progress_token(self, progress_token: Option<&'a RequestId>) -> Self {
        MetaParts {
            progress_token,
            ..self
        }
    }

    /// The caller's members.
    #[inline]
    pub(super) fn caller(self, caller: Option<&'a JsonObject>) -> Self {
        MetaParts { caller, ..self }
    }

    /// The W3C trace context.
    #[inline]
    pub(super) fn trace(self, trace: Option<&'a TraceMeta>) -> Self {
        MetaParts { trace, ..self }
    }
}

impl MetaParts<'_> {
    fn is_empty(&self) -> bool {
        self.protocol.is_none()
            && self.progress_token.is_none()
            && self.caller.is_none()
            && self.trace.is_none()
    }

    /// The trace context's members that no higher tier names.
    fn trace_members(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        self.trace.into_iter().flatten().filter_map(|(k, v)| {
            let taken = self.is_protocol_key(k) || self.caller.is_some_and(|c| c.contains_key(*k));
            (!taken).then_some((*k, v.as_str()))
        })
    }

    /// Whether the protocol decides `key` (a caller's member of that name is dropped).
    fn is_protocol_key(&self, key: &str) -> bool {
        (self.progress_token.is_some() && key == META_PROGRESS_TOKEN)
            || (self.protocol.is_some() && PROTOCOL_KEYS.contains(&key))
    }
}

/// The params as they go on the wire: `params` with the `_meta` that
/// `parts` describes. This is the one place a request's `_meta` is written.
/// `None` when there is nothing to add (the params go out as they are).
///
/// Params with no `_meta` of their own (nearly all) are written once, with
/// `_meta` first and then their own members, with no parse (every piece is
/// valid JSON already: [`ObjectWriter`]). Params that mention `_meta`
/// anywhere are parsed and merged member by member.
pub(super) fn compose_params(params: Option<&RawJson>, parts: &MetaParts<'_>) -> Option<RawJson> {
    if parts.is_empty() {
        return None;
    }
    static META_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"_meta\""));
    let len = params.map_or(0, RawJson::len);
    if params.is_some_and(|p| META_KEY.find(p.as_bytes()).is_some()) {
        return Some(merge_meta(params, parts));
    }
    let protocol_len = parts.protocol.map_or(0, RawJson::len);
    let mut out = ObjectWriter::with_capacity(len + protocol_len + 48);
    out.object("_meta", |meta| {
        if let Some(protocol) = parts.protocol {
            meta.members_of(protocol);
        }
        if let Some(token) = parts.progress_token {
            let _ = meta.value(META_PROGRESS_TOKEN, token);
        }
        for (key, value) in parts.caller.into_iter().flatten() {
            if !parts.is_protocol_key(key) {
                let _ = meta.value(key, value);
            }
        }
        for (key, value) in parts.trace_members() {
            let _ = meta.value(key, value);
        }
    });
    if let Some(p) = params {
        if !out.members_of(p) {
            // Not an object: the spec says params are one; the parsing path
            // says so in the log and sends only `_meta`.
            return Some(merge_meta(params, parts));
        }
    }
    Some(out.finish())
}

/// [`compose_params`] for params that carry `_meta` (or are not an object).
fn merge_meta(params: Option<&RawJson>, parts: &MetaParts<'_>) -> RawJson {
    let text = params.map_or("{}", RawJson::as_str);
    let mut obj: JsonObject = serde_json::from_str(text).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "request params are not a JSON object; sending only `_meta`");
        JsonObject::new()
    });
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if !meta.is_object() {
        tracing::warn!("the request's `_meta` is not an object; replaced");
        *meta = Value::Object(JsonObject::new());
    }
    if let Value::Object(m) = meta {
        // The params' own members stay (the caller wrote them into the
        // params), except the progress token the session routes by.
        if let Some(protocol) = parts.protocol.and_then(|p| p.decode::<JsonObject>().ok()) {
            for (k, v) in protocol {
                m.entry(k).or_insert(v);
            }
        }
        if let Some(t) = parts.progress_token {
            if let Ok(v) = serde_json::to_value(t) {
                m.insert(META_PROGRESS_TOKEN.into(), v);
            }
        }
        for (k, v) in parts.caller.into_iter().flatten() {
            if !parts.is_protocol_key(k) {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        for (k, v) in parts.trace_members() {
            m.entry(k).or_insert_with(|| Value::from(v));
        }
    }
    RawJson::from_value(&obj).unwrap_or_else(|_| RawJson::empty_object())
}

/// The members every request of revision `v` carries in `_meta` (2026-07-28:
/// the revision, the client's capabilities and info, the log level), as
/// one object, encoded once per negotiation.
pub(super) fn protocol_members(config: &SessionConfig, v: ProtocolVersion) -> Option<RawJson> {
    let mut m = JsonObject::new();
    m.insert(META_PROTOCOL_VERSION.into(), Value::from(v.as_str()));
    let mut caps = serde_json::to_value(&config.capabilities)
        .unwrap_or_else(|_| Value::Object(JsonObject::new()));
    // `tasks` is the 2025-11-25 capability; the 2026-07-28 era has none
    // (tasks there are the `io.modelcontextprotocol/tasks` extension).
    if let Some(o) = caps.as_object_mut() {
        o.remove("tasks");
        if config.tasks_extension {
            let ext = o
                .entry("extensions")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if let Some(ext) = ext.as_object_mut() {
                ext.entry(mcp_proto::schema::TASKS_EXTENSION)
                    .or_insert_with(|| Value::Object(JsonObject::new()));
            }
        }
    }
    m.insert(META_CLIENT_CAPABILITIES.into(), caps);
    if let Ok(info) = serde_json::to_value(&config.client_info) {
        m.insert(META_CLIENT_INFO.into(), info);
    }
    if let Some(level) = config.log_level {
        if let Ok(l) = serde_json::to_value(level) {
            m.insert(META_LOG_LEVEL.into(), l);
        }
    }
    RawJson::from_value(&m).ok()
}
