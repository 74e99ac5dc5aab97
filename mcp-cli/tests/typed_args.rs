//! `mcp call TOOL key=value ...` (issue 46, item 2): arguments typed by the
//! tool's inputSchema against real servers (server-everything's string,
//! number, enum and boolean arguments; a FastMCP tool with str, int,
//! float, bool, Literal, list[str], list[int], a nested model and an
//! optional str), `key:=JSON`, `@FILE` and `-`; a wrong key or value is
//! refused before anything is sent: the server's stdin, recorded through
//! `tee`, holds `tools/list` and no `tools/call`. Every step that needs the
//! tool's definition shares one `tools/list`.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

/// `sh -c 'tee LOG | SERVER'`: the server as a `--stdio` line, everything
/// `mcp` writes to it copied to `log`.
fn recorded(server: &str, log: &Path) -> String {
    let inner = format!("tee {} | {server}", log.display());
    format!("sh -c '{}'", inner.replace('\'', r"'\''"))
}

fn sent(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// The result's first text content.
fn text(r: &Run) -> String {
    r.json()["content"][0]["text"].as_str().unwrap().to_owned()
}

#[test]
fn server_everything_arguments_are_typed_by_its_schema() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let log = temp_path("everything-sent");
    let server = recorded(&everything, &log);
    let call = |args: &[&str]| {
        let mut all = vec!["--stdio", &server, "--json", "call"];
        all.extend_from_slice(args);
        mcp(&all)
    };
    // number
    let r = call(&["get-sum", "a=2", "b=3.5"]);
    assert_code(&r, 0);
    assert!(text(&r).contains("5.5"), "{}", r.stdout);
    assert!(
        sent(&log).contains(r#""arguments":{"a":2,"b":3.5}"#),
        "{}",
        sent(&log)
    );
    // string
    let r = call(&["echo", "message=hello world"]);
    assert_code(&r, 0);
    assert_eq!(text(&r), "Echo: hello world");
    // enum and boolean
    let r = call(&[
        "get-annotated-message",
        "messageType=success",
        "includeImage=true",
    ]);
    assert_code(&r, 0);
    assert_eq!(
        r.json()["content"].as_array().unwrap().len(),
        2,
        "{}",
        r.stdout
    );
    // number with a default, and raw JSON
    let r = call(&["get-resource-links", "count:=2"]);
    assert_code(&r, 0);

    // Refused before sending: a wrong type, an unknown key, a value out of
    // the enum, a missing argument.
    for (args, says) in [
        (
            &["get-sum", "a=two", "b=3"][..],
            "\"a\": expected number, got \"two\"",
        ),
        (
            &["echo", "mesage=hi"],
            "unknown argument \"mesage\": it takes message (string, required)",
        ),
        (
            &["get-annotated-message", "messageType=loud"],
            "expected one of \"error\", \"success\", \"debug\"",
        ),
        (&["get-sum", "a=1"], "missing required argument: b (number)"),
        (
            &[
                "get-annotated-message",
                "messageType=debug",
                "includeImage=maybe",
            ],
            "expected boolean",
        ),
    ] {
        let _ = std::fs::remove_file(&log);
        let r = call(args);
        assert_code(&r, 2);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        let log = sent(&log);
        assert!(log.contains("tools/list"), "{log}");
        assert!(!log.contains("tools/call"), "{args:?} sent a call: {log}");
    }
    // The JSON form stays, unchecked and as typed.
    let r = call(&["get-sum", r#"{"a": 1, "b": 1}"#]);
    assert_code(&r, 0);
    let _ = std::fs::remove_file(&log);
}

/// The `tools/list` requests in what `mcp` sent.
fn listings(log: &Path) -> usize {
    sent(log).matches(r#""method":"tools/list""#).count()
}

/// Every step of `mcp call` that needs the tool's definition (typed
/// arguments, the tool policy, task support, the MCP Apps UI lookup) shares
/// one listing: server-everything (one page) is asked `tools/list` once.
#[test]
fn one_call_lists_the_tools_once_for_every_step() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let log = temp_path("everything-listings");
    let server = recorded(&everything, &log);
    for args in [
        // typed arguments, the policy and the UI lookup (not --json)
        &["--stdio", &server, "call", "echo", "message=hi"][..],
        // the same with the listing's steps that --json keeps
        &["--stdio", &server, "--json", "call", "echo", "message=hi"],
        // JSON arguments: the policy and the UI lookup
        &["--stdio", &server, "call", "echo", r#"{"message": "hi"}"#],
    ] {
        let _ = std::fs::remove_file(&log);
        let r = mcp(args);
        assert_code(&r, 0);
        assert!(sent(&log).contains("tools/call"), "{}", sent(&log));
        assert_eq!(listings(&log), 1, "{args:?} sent: {}", sent(&log));
    }
    let _ = std::fs::remove_file(&log);
}

#[test]
fn fastmcp_arguments_of_every_type() {
    let Some(python) = test_support::fastmcp_server() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/fastmcp_typed.py");
    let server = test_support::PeerCommand {
        program: python.program,
        args: vec![script.into()],
    }
    .shell_line();
    let log = temp_path("fastmcp-sent");
    let server = recorded(&server, &log);
    let args = [
        "name=Ann",
        "count=3",
        "ratio=0.25",
        "loud=true",
        "mode=slow",
        "tags=a",
        "tags=b c",
        "sizes=1",
        "sizes=2",
        "origin.x=1",
        "origin.y=-2",
        "note=null",
    ];
    let mut all = vec!["--stdio", &server, "--json", "call", "describe"];
    all.extend_from_slice(&args);
    let r = mcp(&all);
    assert_code(&r, 0);
    let got: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(
        got,
        json!({"name": "Ann", "count": 3, "ratio": 0.25, "loud": true, "mode": "slow",
               "tags": ["a", "b c"], "sizes": [1, 2], "origin": {"x": 1, "y": -2}, "note": null})
    );

    // @FILE, then key=value on top.
    let file = temp_path("fastmcp-args.json");
    std::fs::write(
        &file,
        r#"{"name": "file", "count": 1, "ratio": 1, "loud": false, "mode": "fast", "tags": []}"#,
    )
    .unwrap();
    let at = format!("@{}", file.display());
    let r = mcp(&[
        "--stdio", &server, "--json", "call", "describe", &at, "count=9",
    ]);
    assert_code(&r, 0);
    let got: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(
        (got["name"].as_str(), got["count"].as_i64()),
        (Some("file"), Some(9))
    );
    let _ = std::fs::remove_file(&file);

    // `-`: the object from stdin.
    let mut child = Command::new(MCP)
        .args([
            "--stdio",
            &server,
            "--json",
            "call",
            "describe",
            "-",
            "note=from stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"name": "in", "count": 2, "ratio": 0.5, "loud": true, "mode": "fast", "tags": ["x"]}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        (got["name"].as_str(), got["note"].as_str()),
        (Some("in"), Some("from stdin"))
    );

    // Refused before sending: a float for an int, a list item of the wrong
    // type, a member the nested model does not have.
    for (bad, says) in [
        ("count=1.5", "expected integer"),
        ("sizes=big", "\"sizes\": expected integer"),
        ("origin.z=1", "unknown argument \"origin.z\""),
        ("mode=medium", "expected one of \"fast\", \"slow\""),
    ] {
        let _ = std::fs::remove_file(&log);
        let mut all = vec!["--stdio", &server, "call", "describe"];
        let key = bad.split(['=', '.']).next();
        all.extend(args[..6].iter().filter(|a| a.split('=').next() != key));
        all.push(bad);
        let r = mcp(&all);
        assert_code(&r, 2);
        assert!(r.stderr.contains(says), "{bad}: {}", r.stderr);
        let log = sent(&log);
        assert!(
            log.contains("tools/list") && !log.contains("tools/call"),
            "{bad}: {log}"
        );
    }
    let _ = std::fs::remove_file(&log);
}

#[test]
fn malformed_items_are_usage_errors_before_connecting() {
    let r = mcp(&["call", "echo", "message", "hi"]);
    assert_one_line_error(&r, 2, "mcp: argument \"message\" is not key=value");
    let r = mcp(&["call", "echo", "-", "-"]);
    assert_one_line_error(&r, 2, "mcp: stdin (-) can be read once");
}
