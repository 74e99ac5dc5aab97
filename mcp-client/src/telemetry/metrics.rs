//! `mcp.client.operation.duration` and `mcp.client.session.duration`
//! (feature `metrics`), from the global OpenTelemetry meter provider.

use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

use super::call::{Conn, Failure};
use mcp_proto::ProtocolVersion;

/// The conventions' `ExplicitBucketBoundaries` for both histograms (seconds).
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The two histograms, made when the connection is built (from the meter
/// provider set then).
#[derive(Debug)]
pub(super) struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
}

/// What a call keeps for its duration's attributes.
#[derive(Debug)]
pub(crate) struct CallMetric {
    started: Instant,
    target: Target,
    /// The revision of its latest send.
    version: Option<ProtocolVersion>,
}

impl CallMetric {
    /// A call's duration starts now.
    pub(super) fn start(target: Target) -> Self {
        CallMetric {
            started: Instant::now(),
            target,
            version: None,
        }
    }

    /// The call went out (again) in revision `version`.
    pub(super) fn sent_in(&mut self, version: Option<ProtocolVersion>) {
        self.version = version;
    }
}

/// `gen_ai.tool.name` or `gen_ai.prompt.name`.
#[derive(Debug)]
pub(super) enum Target {
    None,
    Tool(String),
    Prompt(String),
}

impl Instruments {
    pub(super) fn new() -> Self {
        let scope = opentelemetry::InstrumentationScope::builder("mcp-client")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let meter = opentelemetry::global::meter_with_scope(scope);
        Instruments {
            operation: meter
                .f64_histogram("mcp.client.operation.duration")
                .with_unit("s")
                .with_description(
                    "The duration of the MCP request or notification as observed on the sender \
                     from the time it was sent until the response or ack is received.",
                )
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            session: meter
                .f64_histogram("mcp.client.session.duration")
                .with_unit("s")
                .with_description("The duration of the MCP session as observed on the MCP client.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
        }
    }

    /// Whether every call records its duration (always, with the feature:
    /// the global provider decides what is kept).
    pub(super) fn enabled(&self) -> bool {
        true
    }

    pub(super) fn operation(
        &self,
        m: &CallMetric,
        conn: &Conn,
        method: &str,
        failure: Option<&Failure>,
    ) {
        let mut attrs = vec![KeyValue::new("mcp.method.name", method.to_owned())];
        match &m.target {
            Target::Tool(t) => {
                attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                attrs.push(KeyValue::new("gen_ai.tool.name", t.clone()));
            }
            Target::Prompt(p) => attrs.push(KeyValue::new("gen_ai.prompt.name", p.clone())),
            Target::None => {}
        }
        if let Some(v) = m.version.or(conn.version()) {
            attrs.push(KeyValue::new("mcp.protocol.version", v.as_str()));
        }
        if let Some(f) = failure {
            attrs.push(KeyValue::new("error.type", f.error_type().to_owned()));
            if let Some(code) = f.code() {
                attrs.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
        }
        endpoint_attrs(conn, &mut attrs);
        let elapsed = Instant::now().saturating_duration_since(m.started);
        self.operation.record(elapsed.as_secs_f64(), &attrs);
    }

    pub(super) fn session(&self, elapsed: Duration, conn: &Conn, error: Option<&'static str>) {
        let mut attrs = Vec::with_capacity(6);
        if let Some(v) = conn.version() {
            attrs.push(KeyValue::new("mcp.protocol.version", v.as_str()));
        }
        if let Some(e) = error {
            attrs.push(KeyValue::new("error.type", e));
        }
        endpoint_attrs(conn, &mut attrs);
        self.session.record(elapsed.as_secs_f64(), &attrs);
    }
}

fn endpoint_attrs(conn: &Conn, attrs: &mut Vec<KeyValue>) {
    let e = conn.endpoint();
    if let Some(n) = e.network {
        attrs.push(KeyValue::new("network.transport", n));
    }
    if let Some(p) = e.protocol {
        attrs.push(KeyValue::new("network.protocol.name", p));
    }
    if let Some(a) = &e.address {
        attrs.push(KeyValue::new("server.address", a.clone()));
    }
    if let Some(p) = e.port {
        attrs.push(KeyValue::new("server.port", i64::from(p)));
    }
}
