//! Spans, span events and metrics by the OpenTelemetry MCP semantic
//! conventions, through [`tracing`], so an application keeps its own
//! subscriber; and W3C trace context carried to the server in `_meta`.
//!
//! The conventions followed are the **OpenTelemetry GenAI semantic
//! conventions v0.1.0** (`open-telemetry/semantic-conventions-genai`,
//! `docs/gen-ai/mcp.md`; the same MCP registry as
//! `open-telemetry/semantic-conventions` v1.41.0, the last release that held
//! it). Their status is *Development*: names may change with a later
//! version, and this module will follow.
//!
//! # Seeing a trace
//!
//! Every request is a span of target `mcp_client` at level `INFO`. Any
//! subscriber shows them; to see them in an OpenTelemetry backend, add
//! `tracing-opentelemetry`'s layer (the versions this crate's
//! `opentelemetry` feature uses: `tracing-opentelemetry` 0.34,
//! `opentelemetry` 0.33):
//!
//! ```no_run
//! use opentelemetry::trace::TracerProvider as _;
//! use tracing_subscriber::prelude::*;
//!
//! // With your exporter: `.with_batch_exporter(opentelemetry_otlp::SpanExporter::builder()…)`.
//! let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
//! tracing_subscriber::registry()
//!     .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("my-agent")))
//!     .init();
//! // Every call now is a span: `tools/call echo`, kind CLIENT, …
//! ```
//!
//! For a quick look without OpenTelemetry, `tracing_subscriber::fmt()
//! .with_span_events(FmtSpan::CLOSE).init()` prints each request's span
//! with its fields and duration when it ends.
//!
//! The session records a call's span at the moments the call's life is
//! decided (handed over, sent, answered, failed, cancelled), so spans are
//! exact for the sans-IO [`Session`](crate::session::Session) too; the
//! driver hands each request to the transport inside its span, so what
//! the transport logs meanwhile (`mcp-transport-http`'s redirects and
//! retries) lands in it.
//!
//! With no subscriber, or one that is not interested in `mcp_client` at
//! `INFO`, nothing is built: a call pays one relaxed atomic load for it.
//!
//! # The spans
//!
//! | span | kind | name (`otel.name`) | parent |
//! |---|---|---|---|
//! | a request | `CLIENT` | `{mcp.method.name} {target}`: `tools/call echo`, `prompts/get review`, `resources/read` (a resource's URI is high-cardinality: it goes in `mcp.resource.uri` only) | the caller's current span |
//! | the handshake's `server/discover` and `initialize` (again for a renewed session) | `CLIENT` | the method | the session span |
//! | the session (`mcp.session`) | `INTERNAL` | `mcp.session` | the current span when the client was built |
//! | a request of the server's (legacy era: sampling, elicitation, roots), answered by the handler inside it | `SERVER` | the method | the server's span, from the request's W3C trace context (feature `opentelemetry`); else none |
//!
//! Attributes of a request's span: `mcp.method.name`,
//! `mcp.protocol.version`, `mcp.session.id` (the Streamable HTTP session of
//! the handshake era, recorded by `mcp-transport-http`), `jsonrpc.request.id`
//! (of its first send; a re-send's new id is in its event),
//! `gen_ai.operation.name` = `execute_tool` and `gen_ai.tool.name` for
//! `tools/call`, `gen_ai.prompt.name` for `prompts/get`, `mcp.resource.uri`
//! for `resources/read`, `resources/subscribe` and `resources/unsubscribe`,
//! `network.transport` (`pipe` for stdio, `tcp`), `network.protocol.name`,
//! `server.address`, `server.port` (from
//! [`Transport::endpoint`](mcp_proto::transport::Transport::endpoint)),
//! and when it failed `error.type` (below), `rpc.response.status_code` (a
//! JSON-RPC error's code) and the span status `ERROR` with the error's
//! message. `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` (the
//! JSON text) only with
//! [`ClientBuilder::record_tool_content`](crate::ClientBuilder::record_tool_content):
//! they may hold sensitive data.
//!
//! Span events: `progress` (each progress notification: `progress`,
//! `total`, `progress.message`), `input required` (a 2026-07-28 `input_required`
//! result: `round`, `requests`), `sent again` (an input round or a re-send:
//! `jsonrpc.request.id`, `reason`: `input round`, `session expired`, `era
//! re-detected`), `cancelled` (`reason`); the HTTP transport logs its
//! redirects and retries inside the request's span, so they are its events
//! too. The session span has `session renewed` and `closed` events.
//!
//! # `error.type`
//!
//! | value | when |
//! |---|---|
//! | the JSON-RPC error code, e.g. `-32602` | the server answered with an error |
//! | `tool_error` | a `tools/call` result with `isError: true` |
//! | `timeout` | no answer within the call's timeout |
//! | `cancelled` | the caller cancelled (dropped) the call |
//! | `answer_dropped` | the transport dropped the answer (over the size limit, not JSON-RPC) |
//! | the transport failure's kind: `io`, `closed`, `decode`, `timeout`, `protocol`, `session_expired`, `unauthorized`, `throttled`, `transport` | the transport failed for the call, or closed the connection |
//! | `closed` | the connection closed for another reason (the server exited cleanly, the client closed) |
//! | `handshake_failed` | the connection's handshake failed |
//! | `too_many_input_rounds` | the server asked for input more often than allowed |
//!
//! # Trace context to the server (feature `opentelemetry`)
//!
//! With an OpenTelemetry context (the request's span, through
//! `tracing-opentelemetry`; or, when that span is filtered out, the
//! caller's), every request carries it in `params._meta` as SEP-414 says,
//! in both eras: `traceparent` (the request span as the server span's
//! parent), `tracestate` and `baggage`, in their W3C formats (the spec
//! reserves these keys for them, whatever propagator the application uses
//! for its own HTTP headers). They are the lowest tier of the
//! [`_meta` precedence](crate::session#meta): a member of the same name the
//! caller set (in the params or with
//! [`RequestBuilder::meta`](crate::RequestBuilder::meta)) is sent as set.
//!
//! # Metrics (feature `metrics`)
//!
//! `mcp.client.operation.duration` (each request, from when it is handed
//! to the connection until its outcome) and `mcp.client.session.duration`
//! (the connection, until it closes), histograms in seconds with the
//! conventions' bucket boundaries and attributes, from the global
//! `opentelemetry` meter provider (`opentelemetry::global::set_meter_provider`,
//! set before the client is built). Why the `opentelemetry` API and not a
//! metrics facade: the conventions specify explicit bucket boundaries and
//! attribute names with dots, which the API carries as they are; the
//! feature already depends on it for trace context.
//!
//! # An agent's own `execute_tool` span
//!
//! The conventions say an MCP client SHOULD add its attributes to an
//! agent's `execute_tool` span, when one is current, instead of nesting a
//! span of its own. [`RequestBuilder::in_span`](crate::RequestBuilder::in_span)
//! records a call on a given span (its name and kind are left alone), and
//! [`current_tool_span`] finds such a span; `mcp-tools` uses both.

mod call;
#[cfg(feature = "metrics")]
mod metrics;
#[cfg(feature = "opentelemetry")]
mod otel;

pub(crate) use call::{Call, Conn, Outcome, Resend, TraceMeta};
#[cfg(feature = "tokio")]
pub(crate) use call::{server_request_failed, server_request_span};

use tracing::Span;

/// The tracing target of every span and event of this crate's telemetry.
pub const TARGET: &str = "mcp_client";

/// The name of the span of each request this crate sends (its OpenTelemetry
/// name is `otel.name`: the method, and the tool or prompt), for a layer
/// that picks these spans out.
pub const REQUEST_SPAN: &str = "mcp.request";

/// An application's span a call is recorded on instead of a span of its
/// own (see [An agent's own `execute_tool` span](self#an-agents-own-execute_tool-span)):
/// what [`Session::request_in_span`](crate::session::Session::request_in_span)
/// takes, so that the sans-IO session names no `tracing` type.
///
/// ```
/// let span = tracing::info_span!("execute_tool", gen_ai.tool.name = "echo");
/// let _on = mcp_client::telemetry::AppSpan::from(span);
/// ```
#[derive(Debug)]
pub struct AppSpan(Span);

impl From<Span> for AppSpan {
    fn from(span: Span) -> Self {
        AppSpan(span)
    }
}

/// The application's current span, if it is an agent's own `execute_tool`
/// span this client can record a call on (see the
/// [module docs](self#an-agents-own-execute_tool-span)): a span of
/// another target than this crate's whose name is `execute_tool` (or
/// starts with `execute_tool `) or that declares a `gen_ai.tool.name` field,
/// and that can take the MCP attributes: it declares `mcp.method.name`, or
/// the `opentelemetry` feature is on (then they are set through
/// `tracing-opentelemetry`, declared or not).
///
/// ```
/// let span = tracing::info_span!("execute_tool", gen_ai.tool.name = "echo", mcp.method.name = tracing::field::Empty);
/// let _in = span.enter();
/// // With a subscriber that records the span, `current_tool_span()` returns it.
/// let _ = mcp_client::telemetry::current_tool_span();
/// ```
pub fn current_tool_span() -> Option<Span> {
    if !tracing::dispatcher::has_been_set() {
        return None;
    }
    let span = Span::current();
    let meta = span.metadata()?;
    if meta.target() == TARGET {
        return None;
    }
    let name = meta.name();
    let tool = name == "execute_tool"
        || name.starts_with("execute_tool ")
        || meta.fields().field("gen_ai.tool.name").is_some();
    let recordable =
        cfg!(feature = "opentelemetry") || meta.fields().field("mcp.method.name").is_some();
    (tool && recordable).then_some(span)
}
