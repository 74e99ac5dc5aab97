//! `mcp replay FILE`: a cassette served as a stdio MCP server.
//!
//! Each request the client sends is matched with a recorded one by method
//! and params (`params._meta` aside: progress tokens, trace context and the
//! 2026-07-28 per-request client information differ from run to run; a
//! recorded `"[REDACTED]"` matches any value; `initialize` and
//! `server/discover` match by method alone, whoever the client is). The
//! match is played back as it was recorded: the server's notifications and
//! requests that came while it ran (progress carries the client's own
//! token, a request to the client waits for its answer), then the answer,
//! under the client's id. Requests recorded several times with the same
//! params are played in recorded order, the last one again once they run
//! out (a task polled more often than when it was recorded). `ping` is
//! always answered.
//!
//! An unrecorded request is answered with a JSON-RPC error naming the file
//! and what it does hold: `-32601` when the method was never recorded,
//! `-32602` when its params differ from every recorded one.
//!
//! Not reproduced: timing (everything is sent at once), answers the client
//! gives to the server's requests (whatever it answers, the recorded
//! result follows), and a recorded request whose answer never came (it is
//! answered with an error saying so).

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use mcp_proto::jsonrpc::{ErrorResponse, Message, RequestId, Response};
use mcp_proto::transport::{Transport, TransportExt};
use mcp_proto::{ErrorCode, ErrorObject, RawJson};
use serde_json::Value;

use super::redact::REDACTED;
use super::{Cassette, Event};
use crate::failure::Failure;

/// Runs the replay server on stdin/stdout until stdin closes.
pub(crate) async fn run(path: &Path) -> Result<(), Failure> {
    let script = Script::new(Cassette::load(path)?, path);
    let host = crate::own_stdio::transport(None);
    Player::new(script, host).serve().await.map_err(|e| {
        Failure::fatal(
            "transport error",
            format!("replay: {}", mcp_proto::error::chain(&e)),
        )
    })
}

/// One recorded request and what came back for it.
#[derive(Debug)]
struct Exchange {
    method: String,
    /// Params without `_meta`, for matching and for naming in errors.
    params: Value,
    /// `_meta.progressToken` as recorded.
    progress_token: Option<Value>,
    /// Messages from the server while it ran, in order.
    during: Vec<Message>,
    /// The answer (`None`: never came).
    answer: Option<Message>,
    /// Messages from the server after the answer, before the next request.
    after: Vec<Message>,
}

/// A cassette as requests to match and what to play for each.
#[derive(Debug)]
struct Script {
    file: String,
    exchanges: Vec<Exchange>,
    /// Per method, the exchanges not yet played, in recorded order.
    unplayed: HashMap<String, VecDeque<usize>>,
    /// Per method, the last one played (played again when none is left).
    last: HashMap<(String, String), usize>,
}

fn strip_meta(params: Option<&RawJson>) -> (Value, Option<Value>) {
    let mut v: Value = params.and_then(|p| p.decode().ok()).unwrap_or(Value::Null);
    let token = v
        .as_object_mut()
        .and_then(|o| o.remove("_meta"))
        .and_then(|m| m.get("progressToken").cloned());
    (v, token)
}

impl Script {
    fn new(c: Cassette, path: &Path) -> Self {
        let mut exchanges: Vec<Exchange> = Vec::new();
        // Requests sent and not answered yet: recorded id → exchange.
        let mut open: Vec<(RequestId, usize)> = Vec::new();
        for event in c.events {
            let (sent, text) = match event {
                Event::Send(m) => (true, m),
                Event::Recv(m) => (false, m),
            };
            let Ok(msg) = Message::from_string(text.get().to_owned()) else {
                continue;
            };
            match (sent, msg) {
                (true, Message::Request(r)) => {
                    let (params, progress_token) = strip_meta(r.params.as_ref());
                    exchanges.push(Exchange {
                        method: r.method.into_owned(),
                        params,
                        progress_token,
                        during: Vec::new(),
                        answer: None,
                        after: Vec::new(),
                    });
                    open.push((r.id, exchanges.len() - 1));
                }
                (true, _) => {}
                (false, m @ (Message::Response(_) | Message::Error(_))) => {
                    let Some(id) = m.id().cloned() else { continue };
                    if let Some(at) = open.iter().position(|(i, _)| *i == id) {
                        let (_, x) = open.remove(at);
                        if let Some(e) = exchanges.get_mut(x) {
                            e.answer = Some(m);
                        }
                    }
                }
                (false, m) => {
                    let token = progress_token(&m);
                    let owner = open
                        .iter()
                        .rev()
                        .find(|(_, x)| {
                            token.is_some()
                                && exchanges.get(*x).and_then(|e| e.progress_token.as_ref())
                                    == token.as_ref()
                        })
                        .or(open.last())
                        .map(|(_, x)| *x);
                    match owner {
                        Some(x) => exchanges[x].during.push(m),
                        None => {
                            if let Some(e) = exchanges.last_mut() {
                                e.after.push(m);
                            }
                        }
                    }
                }
            }
        }
        let mut unplayed: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (i, e) in exchanges.iter().enumerate() {
            unplayed.entry(e.method.clone()).or_default().push_back(i);
        }
        Script {
            file: path.display().to_string(),
            exchanges,
            unplayed,
            last: HashMap::new(),
        }
    }

    /// The exchange to play for a request, or the error to answer with.
    fn find(&mut self, method: &str, params: &Value) -> Result<usize, ErrorObject> {
        let by_method_only = matches!(method, "initialize" | "server/discover");
        let key = (
            method.to_owned(),
            if by_method_only {
                String::new()
            } else {
                params.to_string()
            },
        );
        let Some(queue) = self.unplayed.get_mut(method) else {
            if let Some(&x) = self.last.get(&key) {
                return Ok(x);
            }
            return Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("mcp replay: {} holds no {method} request", self.file),
            ));
        };
        let exchanges = &self.exchanges;
        let found = queue.iter().position(|&x| {
            by_method_only || exchanges.get(x).is_some_and(|e| matches(&e.params, params))
        });
        if let Some(at) = found {
            if let Some(x) = queue.remove(at) {
                if queue.is_empty() {
                    self.unplayed.remove(method);
                }
                self.last.insert(key, x);
                return Ok(x);
            }
        }
        if let Some(&x) = self.last.get(&key) {
            return Ok(x);
        }
        // Played before under other params that match: the last of them.
        let exchanges = &self.exchanges;
        if let Some((_, x)) = self.last.iter().find(|(k, x)| {
            k.0 == method && (by_method_only || matches(&exchanges[**x].params, params))
        }) {
            return Ok(*x);
        }
        let recorded: Vec<String> = self
            .exchanges
            .iter()
            .filter(|e| e.method == method)
            .take(3)
            .map(|e| e.params.to_string())
            .collect();
        Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "mcp replay: {} holds no {method} request with these params: {params}; it \
                 holds {method} with: {}",
                self.file,
                recorded.join(", ")
            ),
        ))
    }
}

/// Whether recorded params match the client's: equal, where a recorded
/// `"[REDACTED]"` matches any value and `[REDACTED]` inside a recorded
/// string matches any text there.
fn matches(recorded: &Value, live: &Value) -> bool {
    match (recorded, live) {
        (Value::String(s), _) if s == REDACTED => true,
        (Value::String(s), Value::String(l)) if s.contains(REDACTED) => glob(s, l),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| matches(v, w)))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(v, w)| matches(v, w))
        }
        _ => recorded == live,
    }
}

/// Whether `live` is `pattern` with each `[REDACTED]` standing for any text.
fn glob(pattern: &str, live: &str) -> bool {
    let mut parts = pattern.split(REDACTED);
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = live.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// A progress notification's token.
fn progress_token(m: &Message) -> Option<Value> {
    let Message::Notification(n) = m else {
        return None;
    };
    if n.method != "notifications/progress" {
        return None;
    }
    let v: Value = n.params.as_ref()?.decode().ok()?;
    v.get("progressToken").cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacted_values_match_whatever_was_there() {
        assert!(matches(&json!({"k": "[REDACTED]"}), &json!({"k": 42})));
        assert!(matches(
            &json!({"text": "token [REDACTED] and [REDACTED]!"}),
            &json!({"text": "token abc and def!"})
        ));
        assert!(!matches(
            &json!({"text": "token [REDACTED]!"}),
            &json!({"text": "key abc!"})
        ));
        assert!(!matches(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(matches(
            &json!({"a": [1, {"b": "x"}]}),
            &json!({"a": [1, {"b": "x"}]})
        ));
    }
}

/// An exchange being played for one of the client's requests.
#[derive(Debug)]
struct Playing {
    exchange: usize,
    /// The client's id for it.
    id: RequestId,
    /// The client's progress token, if it asked for progress.
    token: Option<Value>,
    /// How far into `during` it is.
    pos: usize,
    /// The id of the request to the client it waits to be answered.
    waiting: Option<RequestId>,
}

struct Player<T> {
    script: Script,
    host: T,
    playing: Vec<Playing>,
    next_id: i64,
}

impl<T: Transport + Unpin> Player<T> {
    fn new(script: Script, host: T) -> Self {
        Player {
            script,
            host,
            playing: Vec::new(),
            next_id: 0,
        }
    }

    async fn serve(mut self) -> Result<(), mcp_proto::transport::TransportError> {
        while let Some(msg) = self.host.recv().await {
            let msg = match msg {
                Ok(m) => m,
                Err(e) if e.is_terminal() => return Err(e),
                Err(e) => {
                    let error = ErrorObject::new(
                        ErrorCode::PARSE_ERROR,
                        format!("mcp replay: {}", mcp_proto::error::chain(&e)),
                    );
                    self.host
                        .send(ErrorResponse::new(e.request_id().cloned(), error).into())
                        .await?;
                    continue;
                }
            };
            match msg {
                Message::Request(r) if r.method == "ping" => {
                    self.host
                        .send(Response::new(r.id, RawJson::empty_object()).into())
                        .await?;
                }
                Message::Request(r) => {
                    let (params, token) = strip_meta(r.params.as_ref());
                    match self.script.find(&r.method, &params) {
                        Ok(exchange) => {
                            self.playing.push(Playing {
                                exchange,
                                id: r.id,
                                token,
                                pos: 0,
                                waiting: None,
                            });
                            let at = self.playing.len() - 1;
                            self.advance(at).await?;
                        }
                        Err(e) => {
                            self.host
                                .send(ErrorResponse::new(Some(r.id), e).into())
                                .await?;
                        }
                    }
                }
                Message::Response(_) | Message::Error(_) => {
                    let Some(id) = msg.id() else { continue };
                    if let Some(at) = self
                        .playing
                        .iter()
                        .position(|p| p.waiting.as_ref() == Some(id))
                    {
                        self.playing[at].waiting = None;
                        self.advance(at).await?;
                    }
                }
                Message::Notification(n) if n.method == "notifications/cancelled" => {
                    let cancelled: Option<RequestId> = n
                        .params
                        .as_ref()
                        .and_then(|p| p.decode::<Value>().ok())
                        .and_then(|v| serde_json::from_value(v.get("requestId")?.clone()).ok());
                    self.playing.retain(|p| Some(&p.id) != cancelled.as_ref());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Plays `playing[at]` until it waits for the client or is done.
    async fn advance(&mut self, at: usize) -> Result<(), mcp_proto::transport::TransportError> {
        loop {
            let p = &self.playing[at];
            let e = &self.script.exchanges[p.exchange];
            let Some(m) = e.during.get(p.pos).cloned() else {
                break;
            };
            self.playing[at].pos += 1;
            match m {
                Message::Request(mut r) => {
                    self.next_id += 1;
                    r.id = RequestId::Number(self.next_id);
                    self.playing[at].waiting = Some(r.id.clone());
                    self.host.send(r.into()).await?;
                    return Ok(());
                }
                Message::Notification(mut n)
                    if progress_token(&Message::Notification(n.clone())).is_some() =>
                {
                    // Progress goes out under the client's own token, or
                    // not at all when it asked for none.
                    let Some(token) = self.playing[at].token.clone() else {
                        continue;
                    };
                    let mut v: Value = n
                        .params
                        .as_ref()
                        .and_then(|p| p.decode().ok())
                        .unwrap_or(Value::Null);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("progressToken".into(), token);
                    }
                    n.params = RawJson::from_value(&v).ok();
                    self.host.send(n.into()).await?;
                }
                other => self.host.send(other).await?,
            }
        }
        let p = self.playing.swap_remove(at);
        let e = &self.script.exchanges[p.exchange];
        let answer = match e.answer.clone() {
            Some(Message::Response(mut r)) => {
                r.id = p.id;
                Message::Response(r)
            }
            Some(Message::Error(mut r)) => {
                r.id = Some(p.id);
                Message::Error(r)
            }
            _ => ErrorResponse::new(
                Some(p.id),
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "mcp replay: {} recorded this {} request but no answer to it",
                        self.script.file, e.method
                    ),
                ),
            )
            .into(),
        };
        let after = e.after.clone();
        self.host.send(answer).await?;
        for m in after {
            self.host.send(m).await?;
        }
        Ok(())
    }
}
