//! The bridge to OpenTelemetry (feature `opentelemetry`): the W3C trace
//! context a request carries, and attributes on an application's span.

use opentelemetry::baggage::BaggageExt;
use opentelemetry::trace::{Status, TraceContextExt};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::call::TraceMeta;

/// The W3C trace context of `span` (the request's own, or an application's
/// span it is recorded on); when that has none (no subscriber wants it,
/// or it is not an OpenTelemetry span), the caller's: its current tracing
/// span's, else the current OpenTelemetry context's. `None` when there is
/// no valid span context anywhere.
pub(super) fn trace_meta(span: &Span) -> Option<TraceMeta> {
    let cx = if span.is_disabled() {
        None
    } else {
        Some(span.context())
    }
    .filter(has_span)
    .or_else(|| {
        tracing::dispatcher::has_been_set()
            .then(|| Span::current().context())
            .filter(has_span)
    })
    .unwrap_or_else(opentelemetry::Context::current);
    let sc = cx.span().span_context().clone();
    if !sc.is_valid() {
        return None;
    }
    let mut meta = Vec::with_capacity(3);
    meta.push((
        mcp_proto::schema::META_TRACEPARENT,
        format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        ),
    ));
    let state = sc.trace_state().header();
    if !state.is_empty() {
        meta.push((mcp_proto::schema::META_TRACESTATE, state));
    }
    let baggage = cx.baggage();
    if !baggage.is_empty() {
        meta.push((mcp_proto::schema::META_BAGGAGE, baggage.to_string()));
    }
    Some(meta)
}

/// Whether a span context could be current: a tracing span (a subscriber
/// was set and a span is entered), or a valid OpenTelemetry context
/// attached through the `opentelemetry` API.
pub(super) fn context_current() -> bool {
    (tracing::dispatcher::has_been_set() && !Span::current().is_none())
        || opentelemetry::Context::map_current(has_span)
}

/// Makes the W3C trace context in `params._meta` (a server's request)
/// `span`'s remote parent; a missing or malformed `traceparent` leaves it
/// as it is.
#[cfg(feature = "tokio")]
pub(super) fn set_remote_parent(span: &Span, params: Option<&mcp_proto::RawJson>) {
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, default)]
        traceparent: Option<&'a str>,
        #[serde(borrow, default)]
        tracestate: Option<&'a str>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "_meta")]
        meta: Option<Meta<'a>>,
    }
    let Some(meta) = params
        .and_then(|p| serde_json::from_str::<Params<'_>>(p.as_str()).ok())
        .and_then(|p| p.meta)
    else {
        return;
    };
    let Some(parts) = meta.traceparent.map(|t| t.split('-').collect::<Vec<_>>()) else {
        return;
    };
    let [version, trace, parent, flags] = parts[..] else {
        return;
    };
    let (Ok(trace), Ok(parent), Ok(flags)) = (
        TraceId::from_hex(trace),
        SpanId::from_hex(parent),
        u8::from_str_radix(flags, 16),
    ) else {
        return;
    };
    if version != "00" {
        return;
    }
    let state = meta
        .tracestate
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let sc = SpanContext::new(trace, parent, TraceFlags::new(flags), true, state);
    if sc.is_valid() {
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(sc));
    }
}

fn has_span(cx: &opentelemetry::Context) -> bool {
    cx.span().span_context().is_valid()
}

/// Sets an attribute on `span`'s OpenTelemetry span (declared as a field or not).
pub(super) fn set_attribute(
    span: &Span,
    key: &'static str,
    value: impl Into<opentelemetry::Value>,
) {
    span.set_attribute(key, value);
}

/// Sets `span`'s OpenTelemetry status to `ERROR`.
pub(super) fn set_error_status(span: &Span, message: Option<&str>) {
    span.set_status(Status::error(message.unwrap_or("").to_owned()));
}
