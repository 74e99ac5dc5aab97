//! `mcp record`, `mcp replay` and `mcp diff` on real servers:
//! server-everything's session recorded and played back byte for byte,
//! secrets kept out of the cassette, an unrecorded request refused, and a
//! Python SDK server whose tool description changes caught by `diff`.

#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use common::*;

/// Each command against server-everything over stdio: recorded, then
/// replayed from the cassette with `mcp replay` as the server; the same
/// exit status and the same stdout, byte for byte.
#[test]
fn a_recorded_session_replays_byte_for_byte() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let dir = temp_path("replay");
    std::fs::create_dir_all(&dir).unwrap();
    let commands: &[&[&str]] = &[
        &["--json", "info"],
        &["--json", "tools"],
        &["tools"],
        &["--json", "call", "echo", r#"{"message": "hi"}"#],
        &["--json", "call", "get-sum", r#"{"a": 2, "b": 40}"#],
        // Progress (lines on stderr) and the result.
        &[
            "--json",
            "call",
            "trigger-long-running-operation",
            r#"{"duration": 1, "steps": 2}"#,
        ],
        // A tool that runs as a 2025-11-25 task: tasks/get polled until done.
        &[
            "call",
            "simulate-research-query",
            r#"{"topic": "cassettes"}"#,
        ],
        &["--json", "resources"],
        &[
            "--json",
            "read",
            "demo://resource/static/document/architecture.md",
        ],
        &["--json", "prompts"],
        &["--json", "prompt", "simple-prompt"],
        // A JSON-RPC error is recorded and replayed too.
        &["call", "no-such-tool"],
    ];
    for (i, args) in commands.iter().enumerate() {
        let cassette = dir.join(format!("{i}.jsonl"));
        let cassette_s = cassette.display().to_string();
        let mut record = vec!["record", &cassette_s, "--", "--stdio", &everything];
        record.extend_from_slice(args);
        let recorded = mcp(&record);
        let replay = format!("{MCP} replay '{cassette_s}'");
        let mut again = vec!["--stdio", &replay];
        again.extend_from_slice(args);
        let replayed = mcp(&again);
        assert_eq!(
            (recorded.code, &recorded.stdout),
            (replayed.code, &replayed.stdout),
            "{args:?}\n--- recorded stderr\n{}\n--- replayed stderr\n{}",
            recorded.stderr,
            replayed.stderr
        );
        assert!(
            !recorded.stdout.is_empty() || recorded.code != Some(0),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unrecorded_request_gets_a_clear_error() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let cassette = temp_path("unrecorded.jsonl");
    let c = cassette.display().to_string();
    let r = mcp(&[
        "record",
        &c,
        "--",
        "--stdio",
        &everything,
        "call",
        "echo",
        r#"{"message": "hi"}"#,
    ]);
    assert_code(&r, 0);
    let replay = format!("{MCP} replay '{c}'");
    let r = mcp(&[
        "--stdio",
        &replay,
        "call",
        "echo",
        r#"{"message": "other"}"#,
    ]);
    assert_code(&r, 4);
    assert!(
        r.stderr
            .contains("holds no tools/call request with these params")
            && r.stderr
                .contains(r#"{"arguments":{"message":"hi"},"name":"echo"}"#)
            && r.stderr.contains("-32602"),
        "{}",
        r.stderr
    );
    let r = mcp(&["--stdio", &replay, "prompts"]);
    assert_code(&r, 4);
    assert!(
        r.stderr.contains("holds no prompts/list request") && r.stderr.contains("-32601"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_file(cassette);
}

#[test]
fn secrets_never_reach_the_cassette_and_it_still_replays() {
    let port = free_port();
    let Some(py) = test_support::python_server() else {
        return;
    };
    let _server = listening_blocking(py.arg("http").arg(port.to_string()).to_std(), port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let cassette = temp_path("secrets.jsonl");
    let c = cassette.display().to_string();
    let args = [
        "--http",
        &url,
        "-H",
        "X-Api-Key: hdr-secret-4711",
        "call",
        "echo",
        r#"{"text": "key hdr-secret-4711, env env-secret-0815"}"#,
    ];
    let mut record = vec!["record", &c, "--"];
    record.extend_from_slice(&args);
    let r = mcp_env(&record, &[("MY_SERVICE_TOKEN", "env-secret-0815")]);
    assert_code(&r, 0);
    assert!(
        r.stdout.contains("hdr-secret-4711"),
        "the call itself saw it"
    );
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(
        !text.contains("hdr-secret-4711") && !text.contains("env-secret-0815"),
        "{text}"
    );
    assert!(text.contains("key [REDACTED], env [REDACTED]"), "{text}");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("X-Api-Key: [REDACTED]"),
        "{text}"
    );
    // The redacted request still matches when replayed.
    let replay = format!("{MCP} replay '{c}'");
    let r = mcp(&[
        "--stdio",
        &replay,
        "call",
        "echo",
        r#"{"text": "key abc, env def"}"#,
    ]);
    assert_code(&r, 0);
    assert_eq!(r.stdout.trim(), "key [REDACTED], env [REDACTED]");
    let _ = std::fs::remove_file(cassette);
}

#[test]
fn diff_catches_a_changed_tool_description() {
    let Some(server) = python("py_surface.py") else {
        return;
    };
    let cassette = temp_path("surface.jsonl");
    let c = cassette.display().to_string();
    let r = mcp(&["--stdio", &server, "diff", "--update", &c]);
    assert_code(&r, 0);
    assert!(r.stderr.contains("tools: 1"), "{}", r.stderr);
    // The same server: nothing differs.
    let r = mcp(&["--stdio", &server, "diff", &c]);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "no differences\n");
    // Its description changed, a tool added.
    let changed = [
        ("MCP_TEST_ECHO_DESCRIPTION", "Repeat the text."),
        ("MCP_TEST_EXTRA_TOOL", "1"),
    ];
    let r = mcp_env(&["--stdio", &server, "diff", &c], &changed);
    assert_code(&r, 1);
    assert_eq!(
        r.stdout,
        "~ tool echo\n    description: \"Echo the text back.\" -> \"Repeat the text.\"\n+ tool extra\n"
    );
    let r = mcp_env(&["--stdio", &server, "--json", "diff", &c], &changed);
    assert_code(&r, 1);
    let v = r.json();
    assert_eq!(v["changed"][0]["changes"][0]["path"], "description");
    assert_eq!(v["added"][0]["name"], "extra");
    // A cassette of a plain call holds no listing to compare with.
    let _ = std::fs::remove_file(cassette);
}
