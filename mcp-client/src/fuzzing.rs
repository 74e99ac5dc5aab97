//! The sans-IO [`Session`] driven by arbitrary input (the fuzz target
//! `fuzz/fuzz_targets/session.rs`): a script of calls, server messages,
//! transport errors, cancellations and time advances, read from the fuzzer's
//! bytes. Compiled only for tests and `--cfg fuzzing`: not part of the API.
//!
//! Checked throughout: nothing panics; a call completes at most once, never
//! after it was cancelled, and events name only live calls; `Closed` comes
//! after every call completed; no call outlives its time budget (its
//! timeouts, the handshake's and its `input_required` rounds). At the end the
//! server falls silent and time runs on: every call must then end within a
//! bounded number of timer firings.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId, Response};
use mcp_proto::schema::{Implementation, InputResponses, ServerCapabilities};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use mcp_proto::{ErrorCode, ErrorObject, ProtocolVersion, RawJson};

use crate::CloseReason;
use crate::session::{
    CallId, CallOptions, EraHint, Event, ServerInfo, Session, SessionConfig, Transmit,
    VersionChoice,
};

/// The fuzzer's bytes, read as small numbers (zeros once used up).
struct Script<'a>(&'a [u8]);

impl<'a> Script<'a> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }
    fn one_in(&mut self, n: u8) -> bool {
        self.byte().is_multiple_of(n)
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[usize::from(self.byte()) % from.len()]
    }
    fn millis(&mut self) -> Duration {
        Duration::from_millis(u64::from(self.byte()) * 20)
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }
}

/// Results a server might send, good and bad.
const RESULTS: &[&str] = &[
    r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":1000}"#,
    r#"{"supportedVersions":["2025-06-18","2026-07-28","2099-01-01"],"capabilities":{}}"#,
    r#"{"supportedVersions":["2025-11-25"],"capabilities":{}}"#,
    r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"st"}"#,
    r#"{"resultType":"input_required","requestState":"again"}"#,
    r#"{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}}}"#,
    r#"{"content":[{"type":"text","text":"hi"}]}"#,
    r#"{}"#,
    r#"null"#,
    r#"[1,"x"]"#,
];

const ERRORS: &[ErrorCode] = &[
    ErrorCode::METHOD_NOT_FOUND,
    ErrorCode::INVALID_PARAMS,
    ErrorCode::INTERNAL_ERROR,
    ErrorCode::INVALID_REQUEST,
    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
    ErrorCode::HEADER_MISMATCH,
    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
    ErrorCode::URL_ELICITATION_REQUIRED,
    ErrorCode(-32000),
];

const KINDS: &[TransportErrorKind] = &[
    TransportErrorKind::Io,
    TransportErrorKind::Closed,
    TransportErrorKind::Decode,
    TransportErrorKind::Timeout,
    TransportErrorKind::Protocol,
    TransportErrorKind::SessionExpired,
    TransportErrorKind::Unauthorized,
    TransportErrorKind::Other,
];

const METHODS: &[&str] = &[
    "tools/call",
    "resources/read",
    "prompts/get",
    "tools/list",
    "ping",
];

fn raw(text: &str) -> RawJson {
    RawJson::from_string(text.to_owned()).unwrap_or_else(|_| RawJson::null())
}

/// A live call as the owner sees it.
#[derive(Debug)]
struct Call {
    /// When it must have ended, at the latest.
    due: Instant,
}

struct Owner {
    session: Session,
    start: Instant,
    now: Instant,
    /// Requests the session sent, in order (the server answers these).
    sent: Vec<RequestId>,
    calls: BTreeMap<CallId, Call>,
    /// The server's requests handed to this owner and not yet answered.
    answering: Vec<RequestId>,
    next_call: u64,
    closed: bool,
    rounds: u32,
}

impl Owner {
    fn config(s: &mut Script<'_>) -> SessionConfig {
        let mut c = SessionConfig::new(Implementation::new("fuzz", "0"));
        c.version = s.pick(&[
            VersionChoice::Auto,
            VersionChoice::Auto,
            VersionChoice::Pinned(ProtocolVersion::LATEST),
            VersionChoice::Pinned(ProtocolVersion::V2025_06_18),
            VersionChoice::Era(mcp_proto::Era::Legacy),
            VersionChoice::Era(mcp_proto::Era::Modern),
        ]);
        c.probe_timeout = s.millis();
        c.handshake_timeout = s.millis();
        c.request_timeout = s.millis();
        c.max_request_time = c.request_timeout * u32::from(1 + s.byte() % 4);
        c.max_input_rounds = u32::from(s.byte() % 4);
        c.resend_on_session_expiry = s.one_in(2);
        c
    }

    fn new(s: &mut Script<'_>) -> Owner {
        let config = Owner::config(s);
        let rounds = config.max_input_rounds;
        let start = Instant::now();
        let hint = match s.byte() % 4 {
            0 => Some(EraHint::Legacy(s.pick(&ProtocolVersion::ALL))),
            1 => Some(EraHint::Modern {
                server: Arc::new(ServerInfo {
                    protocol_version: s.pick(&ProtocolVersion::ALL),
                    implementation: Implementation::new("s", "1"),
                    capabilities: ServerCapabilities::default(),
                    instructions: None,
                    supported_versions: vec!["2026-07-28".into()],
                    raw: RawJson::empty_object(),
                }),
                fresh_until: Some(start + s.millis()),
            }),
            _ => None,
        };
        let mut session = Session::new(config);
        session.start_with_hint(start, hint);
        let mut owner = Owner {
            session,
            start,
            now: start,
            sent: Vec::new(),
            calls: BTreeMap::new(),
            answering: Vec::new(),
            next_call: 0,
            closed: false,
            rounds,
        };
        owner.drain(s);
        owner
    }

    /// Takes what the session wants sent and acts on its events.
    fn drain(&mut self, s: &mut Script<'_>) {
        while let Some(t) = self.session.poll_transmit() {
            if let Transmit::Message(Message::Request(r)) = t {
                self.sent.push(r.id);
            }
        }
        assert!(
            self.session.accepts_input(),
            "an empty outbound queue pauses input"
        );
        // A transport that flushes what it was given (or is still flushing).
        if s.one_in(2) {
            self.session.handle_flushed();
        }
        while let Some(e) = self.session.poll_event() {
            match e {
                Event::Completed { call, .. } | Event::TaskCreated { call, .. } => {
                    assert!(
                        self.calls.remove(&call).is_some(),
                        "{call:?} completed twice or unknown"
                    );
                }
                Event::Progress { call, .. } => {
                    assert!(
                        self.calls.contains_key(&call),
                        "progress for ended {call:?}"
                    );
                }
                Event::InputRequired { call, requests } => {
                    assert!(self.calls.contains_key(&call), "input for ended {call:?}");
                    if s.one_in(4) {
                        self.session.cancel(call, None);
                        self.calls.remove(&call);
                    } else {
                        let answers: InputResponses = requests
                            .into_iter()
                            .map(|(k, _)| (k, serde_json::json!({"roots": []})))
                            .collect();
                        self.session.provide_input(call, answers, self.now);
                    }
                }
                Event::ServerRequest(r) => {
                    assert!(!self.answering.contains(&r.id), "{} handed out twice", r.id);
                    self.answering.push(r.id.clone());
                    assert!(
                        self.answering.len() <= self.session.config().max_server_requests,
                        "more server requests handed out than the limit"
                    );
                    let answer = match s.byte() % 3 {
                        0 => Ok(RawJson::empty_object()),
                        1 => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no")),
                        _ => continue,
                    };
                    self.answering.retain(|id| *id != r.id);
                    self.session.respond(r.id, answer);
                }
                Event::ServerRequestCancelled(id) => {
                    let before = self.answering.len();
                    self.answering.retain(|a| *a != id);
                    assert_eq!(
                        self.answering.len() + 1,
                        before,
                        "{id} cancelled but not handed out"
                    );
                }
                Event::Closed(_) => {
                    assert!(
                        self.calls.is_empty(),
                        "closed with calls left: {:?}",
                        self.calls
                    );
                    self.answering.clear();
                    self.closed = true;
                }
                Event::Ready | Event::Notification(_) | Event::ServerRequestRefused { .. } => {}
            }
        }
        // Anything the owner did above may have produced more.
        if self.session.has_events() {
            self.drain(s);
        } else {
            while let Some(t) = self.session.poll_transmit() {
                if let Transmit::Message(Message::Request(r)) = t {
                    self.sent.push(r.id);
                }
            }
        }
    }

    fn request(&mut self, s: &mut Script<'_>) {
        let call = CallId(self.next_call);
        self.next_call += 1;
        let mut options = CallOptions::new().progress(s.one_in(2));
        let timeout = match s.byte() % 3 {
            0 => Some(s.millis()),
            _ => None,
        };
        if let Some(t) = timeout {
            options = options.timeout(t);
        }
        let max_time = match s.byte() % 3 {
            0 => Some(s.millis()),
            _ => None,
        };
        if let Some(t) = max_time {
            options = options.max_time(t);
        }
        let config = self.session.config();
        let cap = max_time.unwrap_or(config.max_request_time);
        // The caller's clock runs from here, whatever the session does
        // meanwhile (a handshake, an era detected again, a re-initialize and
        // re-send): each `input_required` round starts it again, progress
        // stretches it up to the cap.
        let round = if options.progress {
            cap
        } else {
            timeout.unwrap_or(config.request_timeout).min(cap)
        };
        let due = self.now + round * (self.rounds + 1);
        let method = s.pick(METHODS);
        let params = s
            .one_in(2)
            .then(|| raw(r#"{"name":"echo","arguments":{}}"#));
        match self
            .session
            .request(call, method, params, options, self.now)
        {
            Ok(()) => {
                self.calls.insert(call, Call { due });
            }
            Err(_) => assert!(self.closed, "request refused on an open session"),
        }
    }

    /// The id of a request the session sent (mostly), or any id.
    fn target(&mut self, s: &mut Script<'_>) -> RequestId {
        let b = s.byte();
        match (b % 8, self.sent.len()) {
            (7, _) | (_, 0) => RequestId::Number(i64::from(b) - 100),
            (_, n) => self.sent[n - 1 - usize::from(b / 8) % n].clone(),
        }
    }

    fn message(&mut self, s: &mut Script<'_>) -> Option<Message> {
        Some(match s.byte() % 6 {
            0 | 1 => Response::new(self.target(s), raw(s.pick(RESULTS))).into(),
            2 => {
                let mut e = ErrorObject::new(s.pick(ERRORS), "rejected");
                if s.one_in(2) {
                    e = e.with_data(serde_json::json!({
                        "supported": ["2025-06-18", "2026-07-28"], "requested": "2026-07-28"
                    }));
                }
                let id = (!s.one_in(8)).then(|| self.target(s));
                ErrorResponse::new(id, e).into()
            }
            3 => {
                let token = match s.byte() % 4 {
                    0 => serde_json::json!("t"),
                    b => serde_json::json!(u64::from(b) + self.next_call.saturating_sub(4)),
                };
                let params = serde_json::json!({"progressToken": token, "progress": 1});
                Notification::new("notifications/progress", RawJson::from_value(&params).ok())
                    .into()
            }
            4 => Request::new(
                RequestId::String(Arc::from("srv-1")),
                s.pick(&["ping", "roots/list", "sampling/createMessage"]),
                None,
            )
            .into(),
            _ => {
                // Whatever JSON-RPC the fuzzer spells out itself.
                let n = usize::from(s.byte());
                return Message::from_slice(s.take(n)).ok();
            }
        })
    }

    /// Moves time on as a driver would: firing the timer at each deadline
    /// on the way, then checking that no call is overdue.
    fn advance(&mut self, by: Duration, s: &mut Script<'_>) {
        let until = self.now + by;
        let mut fired = 0u32;
        while let Some(t) = self.session.poll_timeout().filter(|&t| t <= until) {
            fired += 1;
            assert!(
                fired < 10_000,
                "the timer keeps firing at {:?}",
                t - self.start
            );
            self.now = self.now.max(t);
            self.session.handle_timeout(self.now);
            self.drain(s);
        }
        self.now = until;
        for (call, c) in &self.calls {
            assert!(
                self.now <= c.due,
                "{call:?} still pending {:?} past its budget",
                self.now - c.due
            );
        }
    }

    fn step(&mut self, s: &mut Script<'_>) {
        match s.byte() % 16 {
            0..=3 => self.request(s),
            4..=8 => {
                if let Some(m) = self.message(s) {
                    self.session.handle_message(m, self.now);
                }
            }
            9..=11 => {
                let by = s.millis();
                self.advance(by, s);
            }
            12 => {
                let id = self.target(s);
                let err = TransportError::from_kind(s.pick(KINDS));
                let err = if s.one_in(4) {
                    err
                } else {
                    err.with_request(id)
                };
                self.session.handle_transport_error(err, self.now);
            }
            13 => {
                if let Some((&call, _)) = self.calls.iter().nth(usize::from(s.byte())) {
                    self.session.cancel(call, Some("fuzz"));
                    self.calls.remove(&call);
                }
            }
            14 => self.session.close(),
            _ => self.session.handle_closed(if s.one_in(2) {
                CloseReason::ServerClosed
            } else {
                CloseReason::DriverGone
            }),
        }
        self.drain(s);
    }
}

/// Runs the script in `data`, then lets time pass with a silent server
/// until every call has ended. Panics on any broken invariant (see the
/// module docs).
pub fn session(data: &[u8]) {
    let mut s = Script(data);
    let mut owner = Owner::new(&mut s);
    while !s.0.is_empty() {
        owner.step(&mut s);
    }
    // The server falls silent: time alone must end every call.
    for _ in 0..64 {
        if owner.calls.is_empty() {
            return;
        }
        let next = owner.session.poll_timeout();
        let Some(t) = next else {
            break;
        };
        let by = t.saturating_duration_since(owner.now);
        owner.advance(by, &mut s);
    }
    assert!(
        owner.calls.is_empty(),
        "calls left pending once the timers ran out: {:?}",
        owner.calls
    );
}

#[cfg(test)]
mod tests {
    /// Every checked-in seed (and reproducer) of the fuzz target passes.
    #[test]
    fn the_seed_corpus_passes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/session");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            super::session(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
        assert!(n > 0, "no seeds in {dir}");
    }
}
