//! `mcp record FILE -- <command>`: the command's transport, wrapped so that
//! every message it carries is written to the cassette as it passes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_proto::ProtocolVersion;
use mcp_proto::error::chain;
use mcp_proto::jsonrpc::{Message, RequestId};
use mcp_proto::transport::{BoxTransport, Endpoint, Transport, TransportError};

use super::FORMAT_VERSION;
use super::redact::Redactor;
use crate::args::{Options, Server};
use crate::failure::Failure;

/// `transport`, recording into `--record`'s file when one is set.
pub(crate) fn tap(transport: BoxTransport, opts: &Options) -> Result<BoxTransport, Failure> {
    let Some(path) = &opts.record else {
        return Ok(transport);
    };
    let redactor = Redactor::new(secrets(opts));
    let mut out = create(path)?;
    let command: Vec<String> = opts
        .record_command
        .iter()
        .map(|w| redactor.word(w))
        .collect();
    let command = serde_json::to_string(&command).unwrap_or_else(|_| "[]".into());
    let by = concat!("mcp ", env!("CARGO_PKG_VERSION"));
    writeln!(
        out,
        "{{\"mcpCassette\":{FORMAT_VERSION},\"recordedBy\":\"{by}\",\"command\":{command}}}"
    )
    .map_err(|e| cannot_write(path, &e))?;
    Ok(Box::pin(Recording {
        inner: transport,
        out: Some(out),
        path: path.display().to_string(),
        start: Instant::now(),
        redactor,
    }))
}

fn create(path: &Path) -> Result<BufWriter<File>, Failure> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(64 * 1024, f))
        .map_err(|e| cannot_write(path, &e))
}

fn cannot_write(path: &Path, e: &std::io::Error) -> Failure {
    Failure::fatal(
        "connection error",
        format!("cannot write the cassette {}: {e}", path.display()),
    )
}

/// Every value `mcp` knows to be secret for this run: `--header` values,
/// the configured server's secret values (its `env`, its headers, whatever
/// `${env:…}` or a password input expanded into), the OAuth token cache,
/// and this process's secret-named environment variables.
fn secrets(opts: &Options) -> Vec<String> {
    let mut out: Vec<String> = opts.headers.iter().map(|(_, v)| v.clone()).collect();
    // `Bearer <token>`: the token alone too.
    out.extend(
        opts.headers
            .iter()
            .filter_map(|(_, v)| v.split_once(' ').map(|(_, t)| t.to_owned())),
    );
    if let Server::Configured(cfg) = &opts.server {
        let mut add = |e: &mcp_config::Expanded| {
            if e.is_secret() {
                out.push(e.expose().to_owned());
            }
        };
        match &cfg.transport {
            mcp_config::TransportConfig::Stdio(s) => {
                add(&s.command);
                s.args.iter().for_each(&mut add);
                s.env.iter().for_each(|(_, v)| add(v));
            }
            mcp_config::TransportConfig::Http(r) | mcp_config::TransportConfig::Sse(r) => {
                add(&r.url);
                r.headers.iter().for_each(|(_, v)| add(v));
            }
            _ => {}
        }
    }
    if let Some(text) = crate::connect::token_file().and_then(|f| std::fs::read_to_string(f).ok())
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
    {
        collect_tokens(&v, &mut out);
    }
    out.extend(Redactor::secret_env());
    out
}

/// The string values of the token cache's secret-named members.
fn collect_tokens(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let k = k.to_ascii_lowercase();
                match v {
                    serde_json::Value::String(s) if k.contains("token") || k.contains("secret") => {
                        out.push(s.clone());
                    }
                    _ => collect_tokens(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect_tokens(v, out)),
        _ => {}
    }
}

/// A transport that writes what passes through it to a cassette.
struct Recording {
    inner: BoxTransport,
    /// `None` once writing failed (said once on stderr) or the transport closed.
    out: Option<BufWriter<File>>,
    path: String,
    start: Instant,
    redactor: Redactor,
}

impl Recording {
    /// Writes one event line: `{"ms":…,"<key>":<json>}`.
    fn event(&mut self, key: &str, json: &str) {
        let Some(out) = &mut self.out else { return };
        let ms = self.start.elapsed().as_millis();
        let redacted = self.redactor.json(json);
        let json = redacted.as_deref().unwrap_or(json);
        if let Err(e) = writeln!(out, "{{\"ms\":{ms},\"{key}\":{json}}}") {
            eprintln!(
                "mcp: record: cannot write {}: {e}; the rest of the session is not recorded",
                self.path
            );
            self.out = None;
        }
    }

    fn finish(&mut self) {
        if let Some(mut out) = self.out.take()
            && let Err(e) = out.flush()
        {
            eprintln!("mcp: record: cannot write {}: {e}", self.path);
        }
    }
}

impl Transport for Recording {
    fn poll_recv(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let r = self.inner.as_mut().poll_recv(cx);
        match &r {
            Poll::Ready(Some(Ok(m))) => self.event("recv", &m.to_text()),
            Poll::Ready(Some(Err(e))) => {
                let text = serde_json::to_string(&chain(e).to_string()).unwrap_or_default();
                self.event("error", &text);
            }
            _ => {}
        }
        r
    }

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.inner.as_mut().poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        self.event("send", &msg.to_text());
        self.inner.as_mut().start_send(msg)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.inner.as_mut().poll_flush(cx)
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        let r = self.inner.as_mut().poll_close(cx);
        if r.is_ready() {
            self.finish();
        }
        r
    }

    fn set_protocol_version(mut self: Pin<&mut Self>, version: ProtocolVersion) {
        let text = format!("\"{}\"", version.as_str());
        self.event("version", &text);
        self.inner.as_mut().set_protocol_version(version);
    }

    fn set_request_deadline(mut self: Pin<&mut Self>, id: &RequestId, deadline: Instant) {
        self.inner.as_mut().set_request_deadline(id, deadline);
    }

    fn endpoint(&self) -> Endpoint {
        self.inner.endpoint()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.finish();
    }
}
