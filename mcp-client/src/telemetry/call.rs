//! The connection's and each call's telemetry: what the session records,
//! and when.
//!
//! Invariant: nothing here is built unless a subscriber is interested in
//! the span (or the `metrics` feature is on): an uninterested call costs
//! the `info_span!` level check, and the session keeps `None` for it.

use std::borrow::Cow;
#[cfg(feature = "metrics")]
use std::time::Instant;

use mcp_proto::jsonrpc::RequestId;
use mcp_proto::schema::ProgressParams;
use mcp_proto::transport::{Endpoint, SpanField, TransportErrorKind};
use mcp_proto::{ProtocolVersion, RawJson};
use serde::Deserialize;
use tracing::Span;
use tracing::field::Empty;

use super::{REQUEST_SPAN, TARGET};
use crate::error::{ClientError, CloseReason};

/// W3C trace context for a request's `_meta`: `traceparent`, then
/// `tracestate` and `baggage` when there are any.
pub(crate) type TraceMeta = Vec<(&'static str, String)>;

/// Why a call goes out again (the `reason` of its `sent again` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// With the answers to an `input_required` round.
    InputRound,
    /// In a new session: the server ended the one it was sent in.
    SessionExpired,
    /// After the remembered era proved wrong and was detected again.
    EraRedetected,
}

impl Resend {
    fn as_str(self) -> &'static str {
        match self {
            Resend::InputRound => "input round",
            Resend::SessionExpired => "session expired",
            Resend::EraRedetected => "era re-detected",
        }
    }
}

/// How a call ended.
#[derive(Debug)]
pub(crate) enum Outcome<'a> {
    /// Its answer.
    Answer(&'a RawJson),
    /// The error it fails with.
    Failed(&'a ClientError),
    /// The caller cancelled it, for this reason.
    Cancelled(&'a str),
}

impl<'a> Outcome<'a> {
    /// The outcome a call's result says.
    pub(crate) fn of(result: &'a Result<RawJson, ClientError>) -> Self {
        match result {
            Ok(raw) => Outcome::Answer(raw),
            Err(e) => Outcome::Failed(e),
        }
    }
}

/// The connection's telemetry, owned by the session.
#[derive(Debug)]
pub(crate) struct Conn {
    endpoint: Endpoint,
    record_content: bool,
    /// The session span: `Span::none()` before the session starts, when no
    /// subscriber wants it, and once it has closed.
    session: Span,
    #[cfg(feature = "metrics")]
    metrics: super::metrics::Instruments,
    #[cfg(feature = "metrics")]
    started: Option<Instant>,
    #[cfg(feature = "metrics")]
    version: Option<ProtocolVersion>,
}

impl Conn {
    pub(crate) fn new(endpoint: Endpoint, record_content: bool) -> Self {
        Conn {
            endpoint,
            record_content,
            session: Span::none(),
            #[cfg(feature = "metrics")]
            metrics: super::metrics::Instruments::new(),
            #[cfg(feature = "metrics")]
            started: None,
            #[cfg(feature = "metrics")]
            version: None,
        }
    }

    /// The session starts: its span opens, a child of the current span.
    pub(crate) fn start_session(&mut self) {
        #[cfg(feature = "metrics")]
        {
            self.started = Some(Instant::now());
        }
        let span = tracing::info_span!(
            target: TARGET,
            "mcp.session",
            otel.kind = "internal",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.protocol.version = Empty,
            error.type = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            server.address = Empty,
            server.port = Empty,
        );
        if !span.is_disabled() {
            self.record_endpoint(&span);
        }
        self.session = span;
    }

    /// The handshake finished with revision `version`.
    pub(crate) fn ready(&mut self, version: ProtocolVersion) {
        #[cfg(feature = "metrics")]
        {
            self.version = Some(version);
        }
        if !self.session.is_disabled() {
            self.session
                .record("mcp.protocol.version", version.as_str());
        }
    }

    /// The server ended the session; the client starts its `renewal`-th new one.
    pub(crate) fn renewed(&self, renewal: u32) {
        if !self.session.is_disabled() {
            tracing::info!(target: TARGET, parent: &self.session, renewal, "session renewed");
        }
    }

    /// The session closed: its span ends, its duration is recorded.
    pub(crate) fn closed(&mut self, reason: &CloseReason) {
        let error = close_error_type(reason);
        #[cfg(feature = "metrics")]
        if let Some(started) = self.started.take() {
            self.metrics.session(started.elapsed(), self, error);
        }
        let span = std::mem::replace(&mut self.session, Span::none());
        if span.is_disabled() {
            return;
        }
        let reason = reason.to_string();
        tracing::info!(target: TARGET, parent: &span, reason = %reason, "closed");
        if let Some(error) = error {
            span.record("error.type", error);
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", reason.as_str());
        }
    }

    /// A user call starts: its span (or `adopt`, an application's span it is
    /// recorded on), its trace context and metrics. `None` when nothing
    /// would be recorded.
    ///
    /// Inlined to its first check: with no subscriber interested in `INFO`
    /// a call pays one relaxed load here (with the `opentelemetry` feature,
    /// also a look at the current OpenTelemetry context, which the call
    /// would carry; with `metrics`, every call is measured).
    #[inline]
    pub(crate) fn start_call(
        &self,
        method: &str,
        params: Option<&RawJson>,
        adopt: Option<super::AppSpan>,
    ) -> Option<Box<Call>> {
        if adopt.is_none()
            && !cfg!(feature = "metrics")
            && !tracing::level_enabled!(tracing::Level::INFO)
            && !context_current()
        {
            return None;
        }
        self.start_call_slow(method, params, adopt)
    }

    #[inline(never)]
    fn start_call_slow(
        &self,
        method: &str,
        params: Option<&RawJson>,
        adopt: Option<super::AppSpan>,
    ) -> Option<Box<Call>> {
        let Some(super::AppSpan(adopted)) = adopt else {
            // The attributes known now go into the span as it is made (one
            // trip through the subscriber, not one per attribute); the
            // params are read only when a subscriber may want the span.
            let wanted = cfg!(feature = "metrics")
                || tracing::enabled!(target: TARGET, tracing::Level::INFO);
            let target = if wanted {
                Target::of(method, params)
            } else {
                Target::None
            };
            let (tool, prompt, uri) = target.parts();
            let name = match tool.or(prompt) {
                Some(t) => Cow::Owned(format!("{method} {t}")),
                None => Cow::Borrowed(method),
            };
            let arguments = tool
                .filter(|_| self.record_content)
                .and(params)
                .and_then(arguments_of);
            let e = &self.endpoint;
            let span = tracing::info_span!(
                target: TARGET,
                REQUEST_SPAN,
                otel.name = &*name,
                otel.kind = "client",
                otel.status_code = Empty,
                otel.status_description = Empty,
                mcp.method.name = method,
                mcp.protocol.version = Empty,
                { SpanField::SESSION_ID.name() } = Empty,
                mcp.resource.uri = uri,
                jsonrpc.request.id = Empty,
                gen_ai.operation.name = tool.map(|_| "execute_tool"),
                gen_ai.tool.name = tool,
                gen_ai.prompt.name = prompt,
                gen_ai.tool.call.arguments = arguments,
                gen_ai.tool.call.result = Empty,
                error.type = Empty,
                rpc.response.status_code = Empty,
                network.transport = e.network,
                network.protocol.name = e.protocol,
                server.address = e.address.as_deref(),
                server.port = e.port.map(i64::from),
            );
            return self.start(span, Recorded::Yes(target), method, params);
        };
        self.start(adopted, Recorded::No, method, params)
    }

    /// A handshake request (`server/discover`, `initialize`) starts: a
    /// client span, a child of the session span.
    pub(crate) fn start_handshake(&self, method: &'static str) -> Option<Box<Call>> {
        let span = tracing::info_span!(
            target: TARGET,
            parent: &self.session,
            REQUEST_SPAN,
            otel.name = method,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            mcp.protocol.version = Empty,
            { SpanField::SESSION_ID.name() } = Empty,
            jsonrpc.request.id = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            server.address = Empty,
            server.port = Empty,
        );
        self.start(span, Recorded::Endpoint, method, None)
    }

    fn start(
        &self,
        span: Span,
        recorded: Recorded<'_>,
        method: &str,
        params: Option<&RawJson>,
    ) -> Option<Box<Call>> {
        let tool = method == "tools/call";
        let traced = !span.is_disabled();
        #[cfg(feature = "metrics")]
        let metered = self.metrics.enabled();
        #[cfg(not(feature = "metrics"))]
        let metered = false;
        if !traced && !metered && !cfg!(feature = "opentelemetry") {
            return None;
        }
        let read = |wanted: bool| {
            if wanted {
                Target::of(method, params)
            } else {
                Target::None
            }
        };
        let (target, adopted) = match recorded {
            Recorded::Yes(target) => (target, false),
            Recorded::Endpoint => {
                if traced {
                    self.record_endpoint(&span);
                }
                (read(metered), false)
            }
            Recorded::No => (read(traced || metered), true),
        };
        if traced && adopted {
            // An application's span: the MCP attributes one by one (its
            // name and kind are its own).
            set_str(&span, "mcp.method.name", method);
            let (tool_name, prompt, uri) = target.parts();
            if let Some(t) = tool_name {
                set_str(&span, "gen_ai.operation.name", "execute_tool");
                set_str(&span, "gen_ai.tool.name", t);
            }
            if let Some(p) = prompt {
                set_str(&span, "gen_ai.prompt.name", p);
            }
            if let Some(u) = uri {
                set_str(&span, "mcp.resource.uri", u);
            }
            self.record_endpoint(&span);
            if tool && self.record_content {
                if let Some(args) = params.and_then(arguments_of) {
                    set_str(&span, "gen_ai.tool.call.arguments", args);
                }
            }
        }
        #[cfg(feature = "opentelemetry")]
        let trace_meta = super::otel::trace_meta(&span);
        #[cfg(not(feature = "opentelemetry"))]
        let trace_meta: Option<TraceMeta> = None;
        if !traced && !metered && trace_meta.is_none() {
            return None;
        }
        Some(Box::new(Call {
            span: if traced { span } else { Span::none() },
            tool,
            record_content: self.record_content,
            sends: 0,
            resend: None,
            rounds: 0,
            trace_meta,
            #[cfg(feature = "metrics")]
            metric: metered.then(|| super::metrics::CallMetric::start(target.into_owned())),
        }))
    }

    fn record_endpoint(&self, span: &Span) {
        let e = &self.endpoint;
        if let Some(n) = e.network {
            set_str(span, "network.transport", n);
        }
        if let Some(p) = e.protocol {
            set_str(span, "network.protocol.name", p);
        }
        if let Some(a) = &e.address {
            set_str(span, "server.address", a);
        }
        if let Some(p) = e.port {
            set_i64(span, "server.port", i64::from(p));
        }
    }

    #[cfg(feature = "metrics")]
    pub(super) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    #[cfg(feature = "metrics")]
    pub(super) fn version(&self) -> Option<ProtocolVersion> {
        self.version
    }
}

/// One call's telemetry, kept by the session beside the call (boxed: most
/// calls have none).
#[derive(Debug)]
pub(crate) struct Call {
    /// `Span::none()` when only the trace context or metrics are wanted.
    span: Span,
    tool: bool,
    record_content: bool,
    sends: u32,
    resend: Option<Resend>,
    rounds: u32,
    trace_meta: Option<TraceMeta>,
    #[cfg(feature = "metrics")]
    metric: Option<super::metrics::CallMetric>,
}

impl Call {
    /// The W3C trace context for the request's `_meta`.
    pub(crate) fn trace_meta(&self) -> Option<&TraceMeta> {
        self.trace_meta.as_ref()
    }

    /// Enters the call's span, when one is recorded: the transport takes
    /// the request inside it.
    #[cfg(feature = "tokio")]
    #[inline]
    pub(crate) fn enter(&self) -> Option<tracing::span::Entered<'_>> {
        (!self.span.is_disabled()).then(|| self.span.enter())
    }

    /// The call goes out (again) as request `id` in revision `version`.
    pub(crate) fn sent(&mut self, id: &RequestId, version: Option<ProtocolVersion>) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &mut self.metric {
            m.sent_in(version);
        }
        let first = self.sends == 0;
        self.sends += 1;
        let reason = self.resend.take();
        if self.span.is_disabled() {
            return;
        }
        if first {
            set_str(&self.span, "jsonrpc.request.id", &id.to_string());
            if let Some(v) = version {
                set_str(&self.span, "mcp.protocol.version", v.as_str());
            }
        } else {
            let reason = reason.map_or("resent", Resend::as_str);
            tracing::info!(
                target: TARGET,
                parent: &self.span,
                reason,
                jsonrpc.request.id = %id,
                "sent again"
            );
        }
    }

    /// The next send is a re-send, for this reason.
    pub(crate) fn resend(&mut self, why: Resend) {
        self.resend = Some(why);
    }

    /// A progress notification for the call.
    pub(crate) fn progress(&self, p: &ProgressParams) {
        if self.span.is_disabled() {
            return;
        }
        tracing::info!(
            target: TARGET,
            parent: &self.span,
            progress = p.progress,
            total = p.total,
            progress.message = p.message.as_deref(),
            "progress"
        );
    }

    /// The server asked for input (`requests` of them) before it answers.
    pub(crate) fn input_required(&mut self, requests: usize) {
        self.rounds += 1;
        self.resend = Some(Resend::InputRound);
        if self.span.is_disabled() {
            return;
        }
        tracing::info!(
            target: TARGET,
            parent: &self.span,
            round = self.rounds,
            requests,
            "input required"
        );
    }

    /// The call ended: its outcome is recorded, its own span ends.
    /// (The caller drops the call's box after, which ends its own span.)
    pub(crate) fn finish(&self, conn: &Conn, method: &str, outcome: Outcome<'_>) {
        let _ = (conn, method);
        let failure = match &outcome {
            Outcome::Answer(raw) if self.tool => is_error(raw).then_some(Failure {
                error_type: Cow::Borrowed("tool_error"),
                code: None,
                message: None,
            }),
            Outcome::Answer(_) => None,
            Outcome::Failed(e) => Some(failure(e)),
            Outcome::Cancelled(_) => Some(Failure {
                error_type: Cow::Borrowed("cancelled"),
                code: None,
                message: None,
            }),
        };
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.metric {
            conn.metrics.operation(m, conn, method, failure.as_ref());
        }
        let span = &self.span;
        if span.is_disabled() {
            return;
        }
        if let Outcome::Cancelled(reason) = outcome {
            tracing::info!(target: TARGET, parent: span, reason, "cancelled");
        }
        if let (true, Outcome::Answer(raw)) = (self.tool && self.record_content, &outcome) {
            set_str(span, "gen_ai.tool.call.result", raw.as_str());
        }
        if let Some(f) = failure {
            set_str(span, "error.type", &f.error_type);
            if let Some(code) = f.code {
                set_str(span, "rpc.response.status_code", &code.to_string());
            }
            set_status_error(span, f.message.as_deref());
        }
    }
}

/// A request of the server's (legacy era: sampling, elicitation, roots):
/// a `SERVER` span (the conventions: the client reports the operations
/// the server initiates), named by its method, a child of the server's
/// span when the request carries its W3C trace context (feature
/// `opentelemetry`), else of none. The handler's task runs inside it.
#[cfg(feature = "tokio")]
pub(crate) fn server_request_span(method: &str, id: &RequestId, params: Option<&RawJson>) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: None,
        "mcp.server_request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = %id,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    #[cfg(feature = "opentelemetry")]
    if !span.is_disabled() {
        super::otel::set_remote_parent(&span, params);
    }
    let _ = params;
    span
}

/// The handler answered the current server request with this error.
#[cfg(feature = "tokio")]
pub(crate) fn server_request_failed(e: &mcp_proto::ErrorObject) {
    let span = Span::current();
    if span.is_disabled() || !span.has_field("rpc.response.status_code") {
        return;
    }
    let code = e.code.0.to_string();
    span.record("error.type", code.as_str());
    span.record("rpc.response.status_code", code.as_str());
    set_status_error(&span, Some(&e.message));
}

/// What a failed call records.
#[derive(Debug)]
pub(super) struct Failure {
    /// `error.type`.
    error_type: Cow<'static, str>,
    /// The JSON-RPC error code, for `rpc.response.status_code`.
    code: Option<i32>,
    /// The status description.
    message: Option<String>,
}

impl Failure {
    /// `error.type`.
    #[cfg(feature = "metrics")]
    pub(super) fn error_type(&self) -> &str {
        &self.error_type
    }

    /// The JSON-RPC error code, for `rpc.response.status_code`.
    #[cfg(feature = "metrics")]
    pub(super) fn code(&self) -> Option<i32> {
        self.code
    }
}

fn failure(e: &ClientError) -> Failure {
    let (error_type, code) = match e {
        ClientError::Rpc(o) => (Cow::Owned(o.code.0.to_string()), Some(o.code.0)),
        ClientError::Timeout { .. } => (Cow::Borrowed("timeout"), None),
        ClientError::AnswerDropped { .. } => (Cow::Borrowed("answer_dropped"), None),
        ClientError::Transport(t) => (Cow::Borrowed(kind_type(t.kind())), None),
        ClientError::Closed(reason) => (
            Cow::Borrowed(close_error_type(reason).unwrap_or("closed")),
            None,
        ),
        ClientError::TooManyInputRounds { .. } => (Cow::Borrowed("too_many_input_rounds"), None),
        _ => (Cow::Borrowed("_OTHER"), None),
    };
    let message = match e {
        ClientError::Rpc(o) => o.message.clone(),
        // The status description is the whole story: the error and its causes.
        other => mcp_proto::error::chain(other).to_string(),
    };
    Failure {
        error_type,
        code,
        message: Some(message),
    }
}

/// `error.type` of a transport failure's kind.
fn kind_type(kind: TransportErrorKind) -> &'static str {
    match kind {
        TransportErrorKind::Io => "io",
        TransportErrorKind::Closed => "closed",
        TransportErrorKind::Decode => "decode",
        TransportErrorKind::Timeout => "timeout",
        TransportErrorKind::Protocol => "protocol",
        TransportErrorKind::SessionExpired => "session_expired",
        TransportErrorKind::Unauthorized => "unauthorized",
        TransportErrorKind::Throttled => "throttled",
        _ => "transport",
    }
}

/// `error.type` of a connection that closed this way; `None` for a clean close.
pub(crate) fn close_error_type(reason: &CloseReason) -> Option<&'static str> {
    match reason {
        CloseReason::Transport(e) => Some(kind_type(e.kind())),
        CloseReason::Handshake(_) => Some("handshake_failed"),
        CloseReason::SessionsLost { .. } => Some("session_expired"),
        CloseReason::DriverGone | CloseReason::NoRuntime => Some("closed"),
        CloseReason::ClosedByClient | CloseReason::ServerClosed => None,
    }
}

/// What [`Conn::start`] still has to record on the span.
enum Recorded<'a> {
    /// Everything known at the start (our own request span; its target).
    Yes(Target<'a>),
    /// All but the endpoint (a handshake span).
    Endpoint,
    /// Nothing (an application's span).
    No,
}

/// A request's target, from its params: a tool's or prompt's name, a resource's URI.
enum Target<'a> {
    None,
    Tool(Cow<'a, str>),
    Prompt(Cow<'a, str>),
    Resource(Cow<'a, str>),
}

#[derive(Deserialize)]
struct TargetWire<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    uri: Option<Cow<'a, str>>,
}

impl<'a> Target<'a> {
    fn of(method: &str, params: Option<&'a RawJson>) -> Self {
        let wanted = matches!(
            method,
            "tools/call"
                | "prompts/get"
                | "resources/read"
                | "resources/subscribe"
                | "resources/unsubscribe"
        );
        let Some(p) = params.filter(|_| wanted) else {
            return Target::None;
        };
        let Ok(w) = serde_json::from_str::<TargetWire<'a>>(p.as_str()) else {
            return Target::None;
        };
        match (method, w.name, w.uri) {
            ("tools/call", Some(n), _) => Target::Tool(n),
            ("prompts/get", Some(n), _) => Target::Prompt(n),
            (m, _, Some(u)) if m.starts_with("resources/") => Target::Resource(u),
            _ => Target::None,
        }
    }

    /// The tool's name, the prompt's, the resource's URI.
    fn parts(&self) -> (Option<&str>, Option<&str>, Option<&str>) {
        match self {
            Target::Tool(t) => (Some(t), None, None),
            Target::Prompt(p) => (None, Some(p), None),
            Target::Resource(u) => (None, None, Some(u)),
            Target::None => (None, None, None),
        }
    }

    #[cfg(feature = "metrics")]
    fn into_owned(self) -> super::metrics::Target {
        match self {
            Target::Tool(t) => super::metrics::Target::Tool(t.into_owned()),
            Target::Prompt(p) => super::metrics::Target::Prompt(p.into_owned()),
            _ => super::metrics::Target::None,
        }
    }
}

/// The `arguments` member of `tools/call` params, as JSON text.
fn arguments_of(params: &RawJson) -> Option<&str> {
    #[derive(Deserialize)]
    struct Args<'a> {
        #[serde(borrow)]
        arguments: Option<&'a serde_json::value::RawValue>,
    }
    serde_json::from_str::<Args<'_>>(params.as_str())
        .ok()?
        .arguments
        .map(serde_json::value::RawValue::get)
}

/// Whether a `tools/call` result says `isError: true`.
fn is_error(raw: &RawJson) -> bool {
    #[derive(Deserialize)]
    struct Wire {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"isError\""));
    NEEDLE.find(raw.as_bytes()).is_some()
        && serde_json::from_str::<Wire>(raw.as_str()).is_ok_and(|w| w.is_error == Some(true))
}

/// Whether an OpenTelemetry context is current that a call would carry
/// without a span of its own (feature `opentelemetry`).
#[inline]
fn context_current() -> bool {
    #[cfg(feature = "opentelemetry")]
    {
        super::otel::context_current()
    }
    #[cfg(not(feature = "opentelemetry"))]
    {
        false
    }
}

/// Records a string attribute: as the span's field when it declares it;
/// otherwise, with the `opentelemetry` feature, straight on its
/// OpenTelemetry span (an application's span declares only its own fields).
fn set_str(span: &Span, key: &'static str, value: &str) {
    if span.has_field(key) {
        span.record(key, value);
    } else {
        #[cfg(feature = "opentelemetry")]
        super::otel::set_attribute(span, key, value.to_owned());
    }
}

fn set_i64(span: &Span, key: &'static str, value: i64) {
    if span.has_field(key) {
        span.record(key, value);
    } else {
        #[cfg(feature = "opentelemetry")]
        super::otel::set_attribute(span, key, value);
    }
}

fn set_status_error(span: &Span, message: Option<&str>) {
    if span.has_field("otel.status_code") {
        span.record("otel.status_code", "ERROR");
        if let Some(m) = message {
            span.record("otel.status_description", m);
        }
    } else {
        #[cfg(feature = "opentelemetry")]
        super::otel::set_error_status(span, message);
    }
}
