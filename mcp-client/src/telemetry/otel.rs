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
