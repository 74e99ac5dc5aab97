//! Spans as an OpenTelemetry backend sees them: a `tracing` subscriber
//! with `tracing-opentelemetry`'s layer over the SDK's in-memory exporter
//! (feature `otel`).
//!
//! The subscriber is the thread's default while the [`Capture`] lives:
//! run the test on a current-thread runtime so that the client's driver
//! and the transport's tasks run on that thread too.

use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

pub use opentelemetry::trace::{SpanKind, Status};

/// What the spans recorded while it lives go to.
#[derive(Debug)]
pub struct Capture {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Capture {
    /// Installs the subscriber as the thread's default (every level, every target).
    pub fn install() -> Self {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        let subscriber = tracing_subscriber::registry().with(layer);
        let guard = tracing::subscriber::set_default(subscriber);
        Capture {
            exporter,
            provider,
            _guard: guard,
        }
    }

    /// The spans that have ended so far.
    pub fn spans(&self) -> Vec<SpanData> {
        let _ = self.provider.force_flush();
        self.exporter.get_finished_spans().unwrap_or_default()
    }

    /// The ended span named `name` (the first, if several).
    ///
    /// # Panics
    ///
    /// When there is none (naming the spans there are).
    pub fn span(&self, name: &str) -> SpanData {
        let spans = self.spans();
        let names: Vec<String> = spans.iter().map(|s| s.name.to_string()).collect();
        spans
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span named {name:?}; spans: {names:?}"))
    }
}

/// An attribute of `span`, as text (`None` when absent).
pub fn attr(span: &SpanData, key: &str) -> Option<String> {
    find(&span.attributes, key).map(|v| v.as_str().into_owned())
}

/// The attribute `key` among `attributes`.
pub fn find<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// The events of `span` named `name`, with their attributes.
pub fn events(span: &SpanData, name: &str) -> Vec<Vec<KeyValue>> {
    span.events
        .iter()
        .filter(|e| e.name == name)
        .map(|e| e.attributes.clone())
        .collect()
}

/// A span's trace and span ids as W3C hex (32 and 16 digits).
pub fn ids(span: &SpanData) -> (String, String) {
    (
        span.span_context.trace_id().to_string(),
        span.span_context.span_id().to_string(),
    )
}

/// The parent span's id as W3C hex (`0000000000000000` for a root).
pub fn parent(span: &SpanData) -> String {
    span.parent_span_id.to_string()
}

/// Whether `id` names no trace (all zeros).
pub fn is_invalid_trace(id: &str) -> bool {
    id == TraceId::INVALID.to_string() || id == SpanId::INVALID.to_string()
}
