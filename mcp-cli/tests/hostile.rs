//! `mcp` against hostile servers (issue 33): terminal control sequences in
//! every text a server sends, output that could grow faster than its input,
//! and a server that answers one byte at a time. The servers are
//! `tests/peers/hostile.py` (raw JSON-RPC, no SDK) on loopback.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::time::{Duration, Instant};

use common::*;

/// `python tests/peers/hostile.py <mode>` as a `--stdio` line.
fn hostile(mode: &str) -> Option<String> {
    python("hostile.py").map(|p| format!("{p} {mode}"))
}

/// What no text shown to a person may hold: C0 controls but tab and
/// newline, DEL, C1 controls, bidi controls, tag characters.
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c < ' ' && c != '\n' && c != '\t')
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || ('\u{e0000}'..='\u{e007f}').contains(&c)
        })
        .collect()
}

fn assert_safe(r: &Run, what: &str) {
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        let found = raw_controls(text);
        assert!(
            found.is_empty(),
            "{what}: {stream} holds raw control characters {found:?}:\n{text:?}"
        );
    }
}

/// Each shape of the escape, as the sanitizer shows it.
fn assert_escaped(text: &str, what: &str) {
    for shown in [
        "^[]52;c;ZWNobyBwd25lZA==^G",
        "^[]0;owned^G",
        "^[[2K^Mmcp: forged line",
        "^@",
        "<U+009B>31m",
        "<U+202E>gnp.exe",
        "<U+E0041>",
    ] {
        assert!(
            text.contains(shown),
            "{what}: {shown:?} missing from\n{text}"
        );
    }
}

#[test]
fn server_text_is_escaped_for_the_terminal() {
    let Some(server) = hostile("text") else {
        return;
    };
    // info: server name (OSC 0), instructions (OSC 52, forged line).
    let r = mcp(&["--stdio", &server, "info"]);
    assert_code(&r, 0);
    assert_safe(&r, "info");
    assert!(
        r.stdout.contains("server: hostile^[]0;owned^G 1.0"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("^[[2K^Mmcp: forged line"), "{}", r.stdout);

    // tools: a name with CSI 2K + CR, a description with OSC 52 and a bidi
    // override, a property name with a C1 control.
    let r = mcp(&["--stdio", &server, "tools", "-v"]);
    assert_code(&r, 0);
    assert_safe(&r, "tools");
    assert!(
        r.stdout
            .contains("evil^[[2K^Mmcp: forged line(a<U+009B>31m?: string)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("    desc^[]52;c;ZWNobyBwd25lZA==^G<U+202E>gnp.exe\n    more<U+E0041>"),
        "{}",
        r.stdout
    );

    // call: the tool's text, its progress message, its log message.
    let r = mcp(&[
        "--stdio",
        &server,
        "--log-level",
        "debug",
        "call",
        "evil\u{1b}[2K\rmcp: forged line",
    ]);
    assert_code(&r, 0);
    assert_safe(&r, "call");
    assert_escaped(&r.stdout, "tool text");
    let progress: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress:"))
        .collect();
    assert_eq!(progress.len(), 1, "{}", r.stderr);
    assert_escaped(progress[0], "progress message");
    let log: Vec<&str> = r.stderr.lines().filter(|l| l.contains("logged")).collect();
    assert_eq!(log.len(), 1, "{}", r.stderr);
    assert!(log[0].starts_with("mcp: server log [error] "), "{}", log[0]);
    assert_escaped(log[0], "log message");
    assert!(log[0].contains("log^[]0;owned^G"), "{}", log[0]);

    // A JSON-RPC error's message.
    let r = mcp(&["--stdio", &server, "call", "refuse"]);
    assert_code(&r, 4);
    assert_safe(&r, "JSON-RPC error");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert_escaped(&r.stderr, "JSON-RPC error");
}

#[test]
fn json_output_stays_exact() {
    let Some(server) = hostile("text") else {
        return;
    };
    let r = mcp(&[
        "--stdio",
        &server,
        "call",
        "evil\u{1b}[2K\rmcp: forged line",
        "--json",
    ]);
    assert_code(&r, 0);
    let v = r.json();
    assert_eq!(
        v["content"][0]["text"],
        "out\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{1b}]0;owned\u{7}\u{1b}[2K\rmcp: forged line\0\u{9b}31m\u{202e}gnp.exe\u{e0041}"
    );
    // The server's own JSON escapes, byte for byte.
    assert!(r.stdout.contains(r#""out\u001b]52;c;"#), "{}", r.stdout);
}

#[test]
fn an_http_error_body_is_escaped() {
    let Some(py) = python("hostile.py") else {
        return;
    };
    let port = free_port();
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &format!("exec {py} http-error {port}")]);
    let _server = listening_blocking(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let r = mcp(&["--http", &url, "--no-oauth", "info"]);
    assert_code(&r, 3);
    assert_safe(&r, "HTTP error body");
    assert!(r.stderr.contains("internal trouble"), "{}", r.stderr);
    assert_escaped(&r.stderr, "HTTP error body");
}

/// Issue 33 #1: a tool whose inputSchema nests 100,000 arrays (200 KB).
/// `--json tools` printed depth² bytes, built whole in memory (2 GB and
/// an abort). Such a message is now refused as it is read, naming the
/// limit (a message may nest 128 levels); one as deep as allowed prints in
/// size linear in what the server sent (indentation stops at 32 levels),
/// and the human listing is unaffected.
#[test]
fn deeply_nested_schemas_print_in_linear_size() {
    let Some(server) = hostile("deep 100000") else {
        return;
    };
    let r = mcp(&["--stdio", &server, "tools", "--json"]);
    assert_code(&r, 3);
    assert!(r.stderr.contains("128 levels"), "{}", r.stderr);

    let Some(server) = hostile("deep 120") else {
        return;
    };
    let r = mcp(&["--stdio", &server, "tools", "--json"]);
    assert_code(&r, 0);
    // Indented all the way down, 120 levels of two lines each would be
    // ~30 KB; capped at 32 levels, a few KB.
    assert!(
        r.stdout.len() < 8_000,
        "{} bytes of output for a 120-level schema",
        r.stdout.len()
    );
    let compact: String = r.stdout.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        compact.contains(&"[".repeat(120)),
        "the schema was not kept"
    );
    let r = mcp(&["--stdio", &server, "tools"]);
    assert_code(&r, 0);
    assert!(r.stdout.starts_with("deep(x?)"), "{}", r.stdout);
}

/// Issue 33 #4: a server answering the handshake one byte every 500 ms.
/// `--timeout 2` held for 40 s over HTTP (an OAuth login allowance added
/// before any 401) and 7.5 s over stdio (a probe allowance on top); the
/// deadline now holds within 1 s, plus the 0.5 s a timed-out server is
/// given to exit (and a process start on a loaded machine).
#[test]
fn a_dribbling_handshake_ends_at_the_timeout() {
    let Some(py) = python("hostile.py") else {
        return;
    };
    let port = free_port();
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &format!("exec {py} http-dribble {port}")]);
    let _server = listening_blocking(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    // No cached token: an OAuth login is possible (no --no-oauth), but no
    // 401 ever comes, so no login allowance may be added.
    let tokens = temp_path("dribble-tokens.json");
    let tokens = tokens.to_str().unwrap();
    let stdio = format!("{py} dribble");
    for args in [
        &["--http", &url, "--timeout", "2", "info"][..],
        &["--stdio", &stdio, "--timeout", "2", "info"],
    ] {
        let began = Instant::now();
        let r = mcp_env(args, &[("MCP_TOKEN_FILE", tokens)]);
        let took = began.elapsed();
        assert_one_line_error(&r, 3, "mcp: timeout: ");
        assert!(r.stderr.contains("within 2.0 s"), "{}", r.stderr);
        assert!(
            took < Duration::from_millis(4000),
            "{args:?}: --timeout 2 took {took:?}"
        );
    }
}

/// The probe never delays the handshake past `--timeout`: a legacy server
/// that ignores `server/discover` gets `initialize` after half the
/// timeout at most, and the command succeeds within it.
#[test]
fn a_server_ignoring_the_probe_is_reached_within_the_timeout() {
    let Some(server) = hostile("silent-probe") else {
        return;
    };
    let began = Instant::now();
    let r = mcp(&["--stdio", &server, "--timeout", "3", "info", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json()["protocolVersion"], "2025-11-25");
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
}
