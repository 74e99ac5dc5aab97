//! What `mcp` records of its own run: each request's span by the
//! OpenTelemetry MCP conventions (`mcp_client::telemetry`), under one span
//! for the run, whose parent is the trace context a script put in the
//! environment (OpenTelemetry's environment carrier: `TRACEPARENT`,
//! `TRACESTATE`, `BAGGAGE`), so the script's trace continues through
//! `mcp` into the server.
//!
//! - Export: over OTLP/HTTP (protobuf) when `OTEL_EXPORTER_OTLP_ENDPOINT`
//!   or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (and
//!   `OTEL_TRACES_EXPORTER` is not `none`), with the standard variables
//!   (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
//!   `OTEL_RESOURCE_ATTRIBUTES`, …); nothing is exported when unset. The
//!   spans are sent once the run ends (a batch), by a client of our own on
//!   hyper, the HTTP stack `mcp` already has (no second one): `http://` and
//!   `https://` (the bundled webpki roots), each export at most
//!   [`EXPORT_TIMEOUT`], and `mcp`'s exit waits for the last one at most
//!   [`EXIT_EXPORT_WAIT`] (1 s): a collector that accepts and never
//!   answers costs a run that second, no more; what was not sent by then
//!   is dropped, and `-v` says so.
//! - `-v`: each request's duration on stderr when its span ends.
//!
//! With neither a parent in the environment nor an endpoint, no tracer is
//! installed and the run costs what it did before.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::HttpError;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Longest one export may take (connect, send, answer).
pub(crate) const EXPORT_TIMEOUT: Duration = Duration::from_secs(1);

/// Longest `mcp`'s exit waits for the spans still to be exported.
pub(crate) const EXIT_EXPORT_WAIT: Duration = Duration::from_secs(1);

/// Largest answer read from the collector.
const MAX_ANSWER: usize = 1 << 20;

/// What the run's telemetry needs at the end.
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
    parent: Option<opentelemetry::Context>,
    verbose: bool,
}

/// Installs the subscriber: the log lines of `-v`, `-vv`, …
/// (`RUST_LOG` overrides), the request durations of `-v`, and the
/// OpenTelemetry layer when there is a parent in the environment or an
/// endpoint to export to (`traced`: not for the demo server `mcp` runs
/// as a child, which records nothing of its own).
pub(crate) fn init(verbose: u8, traced: bool) -> Telemetry {
    let (parent, notes) = if traced {
        parent_from_env(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()))
    } else {
        (None, Vec::new())
    };
    if verbose > 0 {
        for note in notes {
            warn(&note);
        }
    }
    let export = traced && exporting(|k| std::env::var(k).ok());
    let provider = (parent.is_some() || export).then(|| provider(export));
    let otel = provider.as_ref().map(|p| {
        let filter = tracing_subscriber::EnvFilter::new(
            "mcp_cli=info,mcp_client=info,mcp_transport_http=info",
        );
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("mcp"))
            .with_filter(filter)
    });
    let fmt = (verbose > 0).then(|| {
        let default = match verbose {
            1 => "info",
            2 => "debug",
            _ => "trace",
        };
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(filter)
    });
    let times = (verbose > 0).then_some(RequestTimes);
    if otel.is_some() || fmt.is_some() {
        let _ = tracing_subscriber::registry()
            .with(otel)
            .with(fmt)
            .with(times)
            .try_init();
    }
    Telemetry {
        provider,
        parent,
        verbose: verbose > 0,
    }
}

impl Telemetry {
    /// The span of the whole run (`mcp <command>`), a child of the
    /// environment's trace context.
    pub(crate) fn run_span(&self, command: &str) -> tracing::Span {
        let span = tracing::info_span!(
            target: "mcp_cli",
            "mcp",
            otel.name = %format_args!("mcp {command}"),
            otel.kind = "internal",
        );
        if let Some(cx) = &self.parent {
            let _ = span.set_parent(cx.clone());
        }
        span
    }

    /// Sends what is left, waiting at most [`EXIT_EXPORT_WAIT`]; what is
    /// not sent by then is dropped (`-v` says so). Call outside the async
    /// runtime: the export has a runtime of its own.
    pub(crate) fn shutdown(self) {
        if let Some(p) = self.provider {
            if let Err(e) = p.shutdown_with_timeout(EXIT_EXPORT_WAIT) {
                if self.verbose {
                    warn(&format!(
                        "spans not exported within {EXIT_EXPORT_WAIT:?} at exit were dropped ({e})"
                    ));
                }
            }
        }
    }
}

/// The trace context a script handed over in the environment (uppercase
/// keys, as OpenTelemetry's environment carrier says); `None` without a
/// valid `TRACEPARENT`. Each variable is checked against its W3C format
/// first ([`crate::w3c`]): what does not parse is dropped (a list-member
/// of `TRACESTATE` or `BAGGAGE`, or the whole `TRACEPARENT`), each with a
/// note for `-v`.
fn parent_from_env(
    get: impl Fn(&str) -> Option<String>,
) -> (Option<opentelemetry::Context>, Vec<String>) {
    let mut notes = Vec::new();
    let mut carrier = HashMap::new();
    if let Some(v) = get("TRACEPARENT") {
        if crate::w3c::traceparent(v.trim_matches([' ', '\t'])) {
            carrier.insert("traceparent", v.trim_matches([' ', '\t']).to_owned());
        } else {
            notes.push(format!(
                "TRACEPARENT dropped: not a W3C traceparent: {}",
                mcp_cli::terminal::line(&v.chars().take(80).collect::<String>())
            ));
        }
    }
    for (key, var, check) in [
        (
            "tracestate",
            "TRACESTATE",
            crate::w3c::tracestate as fn(&str) -> _,
        ),
        ("baggage", "BAGGAGE", crate::w3c::baggage),
    ] {
        if let Some(v) = get(var) {
            let (kept, dropped) = check(&v);
            for why in dropped {
                notes.push(format!("{var}: a list-member dropped, {why}"));
            }
            if !kept.is_empty() {
                carrier.insert(key, kept);
            }
        }
    }
    (extract(carrier), notes)
}

/// The parent the checked carrier gives; `None` without a traceparent.
fn extract(carrier: HashMap<&'static str, String>) -> Option<opentelemetry::Context> {
    struct Env(HashMap<&'static str, String>);
    impl opentelemetry::propagation::Extractor for Env {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).map(String::as_str)
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().copied().collect()
        }
    }
    carrier.get("traceparent")?;
    let propagator = TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]);
    let cx = propagator.extract(&Env(carrier));
    use opentelemetry::trace::TraceContextExt as _;
    cx.span().span_context().is_valid().then_some(cx)
}

/// Whether the environment asks for an OTLP export.
fn exporting(get: impl Fn(&str) -> Option<String>) -> bool {
    if get("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none") {
        return false;
    }
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|k| get(k).is_some_and(|v| !v.trim().is_empty()))
}

fn provider(export: bool) -> SdkTracerProvider {
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("mcp");
    }
    let mut builder = SdkTracerProvider::builder().with_resource(resource.build());
    if export {
        use opentelemetry_otlp::WithHttpConfig as _;
        match opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(OtlpClient::default())
            .build()
        {
            Ok(exporter) => builder = builder.with_batch_exporter(exporter),
            Err(e) => warn(&format!("cannot export spans over OTLP: {e}")),
        }
    }
    builder.build()
}

fn warn(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "mcp: {message}");
}

/// OTLP's HTTP client: one HTTP/1.1 exchange per batch on hyper, on a
/// runtime of its own (the SDK exports from its own thread, also after
/// `mcp`'s runtime is gone).
#[derive(Debug, Default)]
struct OtlpClient {
    runtime: OnceLock<Option<tokio::runtime::Runtime>>,
    warned: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for OtlpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let runtime = self.runtime.get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()
        });
        let Some(runtime) = runtime else {
            return Err("cannot start the export's runtime".into());
        };
        let uri = request.uri().to_string();
        let result = runtime.block_on(async {
            tokio::time::timeout(EXPORT_TIMEOUT, exchange(request))
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {EXPORT_TIMEOUT:?}").into()))
        });
        let failed = match &result {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!("the collector answered {}", r.status())),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = failed {
            if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                warn(&format!("could not export spans to {uri}: {why}"));
            }
        }
        result
    }
}

async fn exchange(request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
    let uri = request.uri().clone();
    let https = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        other => return Err(format!("unsupported scheme {other:?} in {uri}").into()),
    };
    let host = uri.host().ok_or("no host in the OTLP endpoint")?.to_owned();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port)).await?;
    let (mut parts, body) = request.into_parts();
    parts.uri = uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()
        .map_err(|e| format!("{e}"))?;
    let authority = uri.authority().map_or(host.clone(), |a| a.to_string());
    parts.headers.insert(http::header::HOST, authority.parse()?);
    let request = Request::from_parts(parts, Full::new(body));
    let response = if https {
        let roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        // ring is the workspace's TLS crypto (no cmake or clang to build).
        // rustls 0.23.48 deprecates its ring provider only to steer users to
        // aws-lc-rs's post-quantum key exchange: the same provider, and a
        // build with the newest dependencies stays free of warnings.
        #[allow(deprecated)]
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name =
            rustls::pki_types::ServerName::try_from(host.trim_matches(['[', ']']).to_owned())?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await?;
        send(hyper_util::rt::TokioIo::new(tls), request).await?
    } else {
        send(hyper_util::rt::TokioIo::new(tcp), request).await?
    };
    let (parts, body) = response.into_parts();
    let body = Limited::new(body, MAX_ANSWER)
        .collect()
        .await
        .map_err(|e| format!("reading the collector's answer: {e}"))?
        .to_bytes();
    Ok(Response::from_parts(parts, body))
}

async fn send<IO>(
    io: IO,
    request: Request<Full<Bytes>>,
) -> Result<Response<hyper::body::Incoming>, HttpError>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    tokio::spawn(connection);
    Ok(sender.send_request(request).await?)
}

/// `-v`: each request's duration on stderr when its span ends
/// (`mcp: tools/call echo: 12.3 ms`, and its `error.type` if it failed).
struct RequestTimes;

struct Timing {
    started: Instant,
    name: String,
    error: Option<String>,
}

struct Fields<'a>(&'a mut Timing);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "otel.name" => self.0.name = value.to_owned(),
            "error.type" => self.0.error = Some(value.to_owned()),
            _ => {}
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "otel.name" {
            self.0.name = format!("{value:?}");
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for RequestTimes {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let meta = attrs.metadata();
        if meta.target() != mcp_client::telemetry::TARGET
            || meta.name() != mcp_client::telemetry::REQUEST_SPAN
        {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let mut timing = Timing {
            started: Instant::now(),
            name: String::new(),
            error: None,
        };
        attrs.record(&mut Fields(&mut timing));
        span.extensions_mut().insert(timing);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(timing) = span.extensions_mut().get_mut::<Timing>() {
                values.record(&mut Fields(timing));
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(t) = span.extensions_mut().remove::<Timing>() else {
            return;
        };
        let ms = t.started.elapsed().as_secs_f64() * 1000.0;
        let error = t
            .error
            .map(|e| format!(" (error.type {e})"))
            .unwrap_or_default();
        let _ = writeln!(
            std::io::stderr().lock(),
            "mcp: {}: {ms:.1} ms{error}",
            mcp_cli::terminal::line(&t.name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_carrier_gives_the_parent() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        use opentelemetry::trace::TraceContextExt as _;
        let (cx, _) = parent_from_env(env(&[
            (
                "TRACEPARENT",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
            ("TRACESTATE", "k=v"),
        ]));
        let cx = cx.expect("a valid TRACEPARENT");
        let sc = cx.span().span_context().clone();
        assert_eq!(
            sc.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(sc.span_id().to_string(), "b7ad6b7169203331");
        assert!(sc.is_remote() && sc.is_sampled());
        assert_eq!(sc.trace_state().header(), "k=v");
        assert!(
            parent_from_env(env(&[("TRACEPARENT", "garbage")]))
                .0
                .is_none()
        );
        assert!(parent_from_env(env(&[("TRACESTATE", "k=v")])).0.is_none());
        // What the W3C formats do not allow never reaches the context.
        let (cx, notes) = parent_from_env(env(&[
            (
                "TRACEPARENT",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
            ("TRACESTATE", "v=1\r\nX: y,ok=1"),
        ]));
        let cx = cx.expect("a valid TRACEPARENT");
        assert_eq!(cx.span().span_context().trace_state().header(), "ok=1");
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn an_endpoint_asks_for_export_unless_the_exporter_is_none() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(!exporting(env(&[])));
        assert!(!exporting(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        assert!(exporting(env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4318"
        )])));
        assert!(exporting(env(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://x/v1/traces"
        )])));
        assert!(!exporting(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ])));
    }
}
