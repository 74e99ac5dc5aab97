//! What a configured server's entry lets through `mcp bridge`: the same
//! rules every other `mcp` command keeps, applied to the host's messages.
//!
//! [`Gated`] wraps the server's transport, below the relay (ids there are
//! the relay's, not the host's), and:
//!
//! - takes out of each `tools/list` answer the tools the entry does not
//!   offer (`includeTools` / `excludeTools`), those its `toolPolicy` denies,
//!   and those held back by the pinned definitions (each told on stderr
//!   with how to review it, as `mcp tools` does; first use pins them);
//! - answers a `tools/call` of such a tool itself, with a tool error saying
//!   why and what to do, so nothing reaches the server. A tool the entry
//!   asks approval for is refused the same way unless `mcp bridge --yes`:
//!   the bridge has no terminal to ask on (stdin is the host's), and the
//!   host's own approval is the host's business.
//!
//! Pins are checked against the definitions a `tools/list` answer showed
//! the host: a call made before any listing on this connection (a host
//! that kept an earlier list) is judged by the entry's rules alone.
//!
//! Annotations decide nothing here (a destructive tool is not refused): the
//! host shows its user every call, and the entry's rules are what the user
//! wrote for this server.
//!
//! Both queues are bounded by the relay's requests in flight
//! ([`RelayConfig::max_in_flight`](mcp_client::relay::RelayConfig::max_in_flight)):
//! each entry is a request the relay counts until it is answered. Past
//! [`MAX_GATED`] entries (the relay's bound, with room), a `tools/list`
//! answer is no longer recognised (the oldest is forgotten): it passes
//! unfiltered, which a call of a hidden tool still cannot exploit, since
//! calls are checked one by one.

use std::collections::{HashSet, VecDeque};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use mcp_cli::terminal::line;
use mcp_config::{PinStore, ServerConfig};
use mcp_proto::jsonrpc::{Message, Request, RequestId, Response};
use mcp_proto::schema::{CallToolParams, CallToolResult, JsonObject, ResultType, Tool};
use mcp_proto::transport::{BoxTransport, Endpoint, Transport, TransportError};
use mcp_proto::{Era, ProtocolVersion, RawJson};
use mcp_tools::{Decision, ToolPolicy};
use serde::Deserialize as _;
use serde_json::Value;

use crate::policy::held_line;

/// The most `tools/list` requests remembered, and refusals waiting to be
/// read, at once: above the relay's default bound on requests in flight
/// (1,024).
pub(crate) const MAX_GATED: usize = 2048;

/// A configured server's transport with its entry's rules applied (see the
/// module docs).
pub(crate) struct Gated {
    inner: BoxTransport,
    rules: Rules,
    /// Ids of `tools/list` requests sent and not yet answered, oldest first.
    listing: VecDeque<RequestId>,
    /// Answers to refused calls, read before anything from the server.
    refusals: VecDeque<Message>,
    /// The task reading this transport, woken when a refusal is queued.
    reader: Option<Waker>,
    version: Option<ProtocolVersion>,
}

/// What the entry and the pins say of a tool.
struct Rules {
    server: ServerConfig,
    policy: ToolPolicy,
    pins: Option<PinStore>,
    /// `--yes`: tools the entry asks approval for run.
    yes: bool,
    /// Tools the last `tools/list` answer held back by the pins.
    held: HashSet<String>,
}

impl Gated {
    pub(crate) fn new(
        inner: BoxTransport,
        server: ServerConfig,
        pins: Option<PinStore>,
        yes: bool,
    ) -> Self {
        let p = &server.tool_policy;
        let policy = ToolPolicy::new()
            .annotations(false)
            .allow(p.allow.iter().map(String::as_str))
            .ask(p.ask.iter().map(String::as_str))
            .deny(p.deny.iter().map(String::as_str));
        Gated {
            inner,
            rules: Rules {
                server,
                policy,
                pins,
                yes,
                held: HashSet::new(),
            },
            listing: VecDeque::new(),
            refusals: VecDeque::new(),
            reader: None,
            version: None,
        }
    }

    /// The refusal of a call, answered in place of the server.
    fn refuse(&mut self, id: RequestId, why: String) {
        let mut result = CallToolResult::text(why).with_error();
        if self.version.is_some_and(|v| v.era() == Era::Modern) {
            result.result_type = Some(ResultType::Complete);
        }
        let Ok(result) = RawJson::from_value(&result) else {
            return;
        };
        if self.refusals.len() >= MAX_GATED {
            self.refusals.pop_front();
        }
        self.refusals
            .push_back(Message::Response(Response::new(id, result)));
        if let Some(w) = self.reader.take() {
            w.wake();
        }
    }
}

impl Rules {
    /// Why a call of `name` must not reach the server, if it must not.
    fn refusal(&self, name: &str) -> Option<String> {
        let server = line(&self.server.name);
        let tool = line(name);
        if !crate::config::offers(&self.server, name) {
            return Some(format!(
                "tool {tool} of {server} is not offered: the entry's includeTools/excludeTools leave it out; nothing was sent"
            ));
        }
        if self.held.contains(name) {
            return Some(format!(
                "tool {tool} of {server} changed since the user approved it and is held back: `mcp trust --pending` shows the change, `mcp trust --approve {server}/{tool}` lets it through; nothing was sent"
            ));
        }
        let verdict = self
            .policy
            .decide(None, &Tool::new(name, JsonObject::default()));
        match verdict.decision {
            Decision::Deny => Some(format!(
                "tool {tool} of {server} is denied by the tool policy ({}); nothing was sent",
                verdict.because
            )),
            Decision::Ask if !self.yes => Some(format!(
                "tool {tool} of {server} asks for the user's approval before each call ({}), and mcp bridge has no terminal to ask on: run the bridge with --yes to let such calls through; nothing was sent",
                verdict.because
            )),
            _ => None,
        }
    }

    /// A `tools/list` answer less what the entry does not offer, denies or
    /// holds back. `None` leaves the answer as it was (not a list).
    fn filter_list(&mut self, result: &RawJson) -> Option<RawJson> {
        let mut page: serde_json::Map<String, Value> = result.decode().ok()?;
        let Some(Value::Array(listed)) = page.remove("tools") else {
            return None;
        };
        let tools: Vec<Tool> = listed
            .iter()
            .filter_map(|t| Tool::deserialize(t).ok())
            .collect();
        let offered: Vec<&Tool> = tools
            .iter()
            .filter(|t| crate::config::offers(&self.server, &t.name))
            .collect();
        self.held.clear();
        if let Some(store) = &self.pins {
            let offered: Vec<Tool> = offered.iter().map(|t| (*t).clone()).collect();
            match store.check(&mcp_config::pin_key(&self.server), &offered) {
                Ok(check) => {
                    for c in &check.held {
                        eprintln!("mcp: {}", held_line(&self.server.name, c));
                    }
                    self.held = check.held.into_iter().map(|c| c.tool).collect();
                }
                // The pins cannot be read: hold everything back rather than
                // offer what the user may not have approved.
                Err(e) => {
                    eprintln!(
                        "mcp: pinned tool definitions: {}; every tool of {} is held back",
                        mcp_proto::error::chain(&e),
                        line(&self.server.name)
                    );
                    self.held = offered.iter().map(|t| t.name.clone()).collect();
                }
            }
        }
        let kept: Vec<Value> = listed
            .into_iter()
            .filter(|t| {
                let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
                self.refusal(name).is_none()
            })
            .collect();
        page.insert("tools".into(), Value::Array(kept));
        RawJson::from_value(&page).ok()
    }
}

impl Transport for Gated {
    fn poll_recv(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        let this = &mut *self;
        if let Some(m) = this.refusals.pop_front() {
            return Poll::Ready(Some(Ok(m)));
        }
        match this.inner.as_mut().poll_recv(cx) {
            Poll::Ready(Some(Ok(Message::Response(mut r)))) => {
                if let Some(at) = this.listing.iter().position(|id| *id == r.id) {
                    this.listing.remove(at);
                    if let Some(filtered) = this.rules.filter_list(&r.result) {
                        r.result = filtered;
                    }
                }
                Poll::Ready(Some(Ok(Message::Response(r))))
            }
            Poll::Pending => {
                if !this
                    .reader
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    this.reader = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            other => other,
        }
    }

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.inner.as_mut().poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        let this = &mut *self;
        if let Message::Request(Request {
            id, method, params, ..
        }) = &msg
        {
            match &**method {
                "tools/list" => {
                    if this.listing.len() >= MAX_GATED {
                        this.listing.pop_front();
                    }
                    this.listing.push_back(id.clone());
                }
                "tools/call" => {
                    let name = params
                        .as_ref()
                        .and_then(|p| p.decode::<CallToolParams>().ok())
                        .map(|p| p.name);
                    // A call without a readable name goes on: the server
                    // answers it with an error.
                    if let Some(why) = name.and_then(|n| this.rules.refusal(&n)) {
                        let id = id.clone();
                        this.refuse(id, why);
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        this.inner.as_mut().start_send(msg)
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
        self.inner.as_mut().poll_close(cx)
    }

    fn set_protocol_version(mut self: Pin<&mut Self>, version: ProtocolVersion) {
        self.version = Some(version);
        self.inner.as_mut().set_protocol_version(version);
    }

    fn set_request_deadline(mut self: Pin<&mut Self>, id: &RequestId, deadline: Instant) {
        self.inner.as_mut().set_request_deadline(id, deadline);
    }

    fn endpoint(&self) -> Endpoint {
        self.inner.endpoint()
    }
}
