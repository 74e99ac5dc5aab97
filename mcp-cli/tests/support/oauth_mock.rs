//! A loopback mock of an OAuth-protected MCP server and its authorization
//! server (protected resource metadata, authorization server metadata,
//! dynamic registration, an authorize endpoint that approves at once, a
//! token endpoint), and a test's stand-in for the browser. Shared by
//! `cli_oauth.rs` and `bridge.rs`.

#![allow(dead_code)] // each test file uses some of these
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // test code

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::{Value, json};

/// The access token the mock issues and requires.
pub const TOKEN: &str = "at-cli-1";

/// One HTTP request the mock read.
pub struct Req {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

pub fn read_request(s: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Req {
        method,
        target,
        headers,
        body,
    })
}

pub fn respond(s: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &str) {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    let _ = s.write_all(out.as_bytes());
}

pub fn query_param(target: &str, key: &str) -> Option<String> {
    let q = target.split_once('?')?.1;
    q.split('&').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k == key).then(|| {
            let mut out = Vec::new();
            let b = v.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'%' && i + 2 < b.len() {
                    out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).unwrap());
                    i += 3;
                } else {
                    out.push(b[i]);
                    i += 1;
                }
            }
            String::from_utf8(out).unwrap()
        })
    })
}

/// The mock: MCP at /mcp (401 without the token), PRM, AS metadata,
/// /register, /authorize (auto-approves), /token. Returns the base URL and
/// a log of "METHOD path" lines.
pub fn start_mock() -> (String, Arc<Mutex<Vec<String>>>) {
    start_mock_with(None)
}

/// [`start_mock`] whose metadata names `authorization_endpoint` (default:
/// its own `/authorize`).
pub fn start_mock_with(authorization_endpoint: Option<&str>) -> (String, Arc<Mutex<Vec<String>>>) {
    let authorization_endpoint = authorization_endpoint.map(str::to_owned);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let log = Arc::new(Mutex::new(Vec::new()));
    let (b, l) = (base.clone(), log.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { break };
            let (base, log) = (b.clone(), l.clone());
            let authorization_endpoint = authorization_endpoint.clone();
            std::thread::spawn(move || {
                let Some(req) = read_request(&mut s) else {
                    return;
                };
                let path = req.target.split('?').next().unwrap_or("").to_owned();
                log.lock().unwrap().push(format!("{} {path}", req.method));
                let json_h = [("content-type", "application/json".to_owned())];
                match (req.method.as_str(), path.as_str()) {
                    ("GET", "/.well-known/oauth-protected-resource/mcp") => respond(
                        &mut s,
                        "200 OK",
                        &json_h,
                        &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]})
                            .to_string(),
                    ),
                    ("GET", "/.well-known/oauth-authorization-server") => respond(
                        &mut s,
                        "200 OK",
                        &json_h,
                        &json!({
                            "issuer": base,
                            "authorization_endpoint": authorization_endpoint
                                .unwrap_or_else(|| format!("{base}/authorize")),
                            "token_endpoint": format!("{base}/token"),
                            "registration_endpoint": format!("{base}/register"),
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["none"],
                        })
                        .to_string(),
                    ),
                    ("POST", "/register") => {
                        respond(&mut s, "201 Created", &json_h, r#"{"client_id":"cli"}"#)
                    }
                    ("GET", "/authorize") => {
                        let redirect = query_param(&req.target, "redirect_uri").unwrap();
                        let state = query_param(&req.target, "state").unwrap();
                        assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
                        respond(
                            &mut s,
                            "302 Found",
                            &[("location", format!("{redirect}?code=c1&state={state}"))],
                            "",
                        );
                    }
                    ("POST", "/token") => respond(
                        &mut s,
                        "200 OK",
                        &json_h,
                        &json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600})
                            .to_string(),
                    ),
                    ("POST", "/mcp") => {
                        let authorized = req
                            .headers
                            .iter()
                            .any(|(k, v)| k == "authorization" && v == &format!("Bearer {TOKEN}"));
                        if !authorized {
                            respond(
                                &mut s,
                                "401 Unauthorized",
                                &[(
                                    "www-authenticate",
                                    format!(
                                        r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
                                    ),
                                )],
                                "",
                            );
                            return;
                        }
                        let msg: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                        let Some(id) = msg.get("id").cloned() else {
                            respond(&mut s, "202 Accepted", &[], "");
                            return;
                        };
                        let answer = match msg["method"].as_str() {
                            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                                "protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "oauth-mock", "version": "1.0.0"}
                            }}),
                            Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                                {"name": "secret_tool", "inputSchema": {"type": "object"}},
                                {"name": "echo", "inputSchema": {"type": "object"}}
                            ]}}),
                            Some("tools/call") => json!({"jsonrpc": "2.0", "id": id, "result": {
                                "content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]
                            }}),
                            _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
                        };
                        respond(&mut s, "200 OK", &json_h, &answer.to_string());
                    }
                    _ => respond(&mut s, "405 Method Not Allowed", &[], ""),
                }
            });
        }
    });
    (base, log)
}

/// Plays the browser: GET the authorization URL, then the redirect target.
/// A person at the terminal: reads `stderr` (the `mcp` child's) on a thread
/// and, `delay` after each line that is an authorization URL, opens it with
/// [`browse`]. The channel gets all of stderr once it ends.
#[allow(dead_code)] // each test file uses its own part of this module
pub fn log_in_from(stderr: impl Read + Send + 'static, delay: Duration) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            all.push_str(&line);
            all.push('\n');
            if let Some(u) = line.trim().strip_prefix("http") {
                std::thread::sleep(delay);
                browse(&format!("http{u}"));
            }
        }
        let _ = tx.send(all);
    });
    rx
}

pub fn browse(url: &str) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(authority).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let location = resp
        .lines()
        .find_map(|l| l.strip_prefix("location: "))
        .unwrap()
        .trim()
        .to_owned();
    let rest = location.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(authority).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
}
