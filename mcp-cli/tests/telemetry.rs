//! The `mcp` binary's traces: a script's `TRACEPARENT` continues through
//! `mcp` into the server (the Python SDK's server span, recorded by
//! OpenTelemetry's Python SDK, is in that trace, the child of a span of
//! `mcp`'s own), the spans reach an OTLP/HTTP receiver this test runs on
//! loopback, and `-v` shows each request's duration.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

mod common;

use common::*;

/// An OTLP/HTTP receiver on loopback: answers every POST 200 and keeps the
/// bodies (protobuf `ExportTraceServiceRequest`s) and their paths.
/// What the receiver got: each POST's path and body.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
            let mut length = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_ok() {
                kept.lock().unwrap().push((path, body));
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (url, got)
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn traceparent_continues_through_mcp_into_the_server_and_spans_reach_otlp() {
    let Some(python) = test_support::python_server() else {
        return;
    };
    let (endpoint, exported) = receiver();
    let spans = std::env::temp_dir().join(format!("mcp-cli-otel-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&spans);
    let server = format!(
        "MCP_TEST_OTEL_SPANS={} {}",
        spans.display(),
        python.arg("stdio").shell_line()
    );
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let script_span = "00f067aa0ba902b7";
    let r = mcp_env(
        &["--stdio", &server, "call", "echo", r#"{"text":"hi"}"#],
        &[
            ("TRACEPARENT", &format!("00-{trace_id}-{script_span}-01")),
            // A valid member goes on; one with CR LF (a header injection
            // where a server copies it into HTTP) never leaves mcp.
            ("TRACESTATE", "congo=t61rcWkgMzE,v=1\r\nX: y"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
        ],
    );
    assert_code(&r, 0);
    let text = std::fs::read_to_string(&spans).unwrap_or_default();
    let _ = std::fs::remove_file(&spans);
    let theirs: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|s: &serde_json::Value| s["name"] == "tools/call echo")
        .unwrap_or_else(|| panic!("no server span for the call:\n{text}"));
    // The script's trace, with a span of mcp's own as the parent.
    assert_eq!(theirs["trace_id"], trace_id);
    let parent = theirs["parent_span_id"].as_str().unwrap().to_owned();
    assert_ne!(parent, script_span);
    assert_ne!(parent, "0000000000000000");
    // The Python SDK read the tracestate mcp sent: the valid member only.
    assert_eq!(theirs["trace_state"], "congo=t61rcWkgMzE", "{theirs}");

    // mcp exported its spans to the receiver: the trace, the span the
    // server named as its parent, and the request's name.
    let bodies = exported.lock().unwrap();
    assert!(
        !bodies.is_empty(),
        "nothing reached the OTLP receiver; stderr: {}",
        r.stderr
    );
    assert!(
        bodies.iter().all(|(path, _)| path == "/v1/traces"),
        "{:?}",
        bodies.iter().map(|b| &b.0).collect::<Vec<_>>()
    );
    let all: Vec<u8> = bodies.iter().flat_map(|(_, b)| b.clone()).collect();
    assert!(contains(&all, &hex(trace_id)));
    assert!(
        contains(&all, &hex(&parent)),
        "the parent span {parent} was not exported"
    );
    assert!(contains(&all, b"tools/call echo"));
    assert!(contains(&all, b"mcp call"));
    assert!(
        contains(&all, &hex(script_span)),
        "the run's span names the script's as its parent"
    );
}

#[test]
fn verbose_shows_each_requests_duration() {
    let r = mcp(&["-v", "call", "echo", r#"{"text":"hi"}"#]);
    assert_code(&r, 0);
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("mcp: tools/call echo: "))
        .unwrap_or_else(|| panic!("no duration line:\n{}", r.stderr));
    assert!(line.ends_with(" ms"), "{line}");
    // Without -v, nothing.
    let r = mcp(&["call", "echo", r#"{"text":"hi"}"#]);
    assert_code(&r, 0);
    assert!(!r.stderr.contains("tools/call echo"), "{}", r.stderr);
}

/// What the W3C formats do not allow never goes on the wire: the raw
/// `_meta` a server got (`hostile.py echo-meta`, no SDK in between) holds
/// the valid members of `TRACESTATE` and `BAGGAGE` only, and `-v` says
/// what was dropped.
#[test]
fn trace_context_from_the_environment_is_checked_before_it_is_sent() {
    let Some(py) = python("hostile.py") else {
        return;
    };
    let server = format!("{py} echo-meta");
    let r = mcp_env(
        &["--stdio", &server, "-v", "call", "x"],
        &[
            (
                "TRACEPARENT",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
            ("TRACESTATE", "v=1\r\nX: y,ok=1,k=\u{1b}[2K"),
            ("BAGGAGE", "user=alice,evil=a\r\nX: y,esc=\u{1b}]0;t\u{7}"),
        ],
    );
    assert_code(&r, 0);
    let meta: serde_json::Value = serde_json::from_str(r.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr));
    assert_eq!(meta["tracestate"], "ok=1", "{meta}");
    assert_eq!(meta["baggage"], "user=alice", "{meta}");
    assert!(
        !r.stdout.contains(['\r', '\u{1b}']) && !r.stdout.contains("\\r"),
        "{}",
        r.stdout
    );
    let dropped = r
        .stderr
        .lines()
        .filter(|l| l.contains("list-member dropped"))
        .count();
    assert_eq!(dropped, 4, "{}", r.stderr);
    // Without -v, nothing is said.
    let quiet = mcp_env(
        &["--stdio", &server, "call", "x"],
        &[
            (
                "TRACEPARENT",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
            ("TRACESTATE", "v=1\r\nX: y"),
        ],
    );
    assert_code(&quiet, 0);
    assert!(!quiet.stderr.contains("dropped"), "{}", quiet.stderr);
}

/// A collector that accepts the connection and never answers costs a run
/// at most `EXIT_EXPORT_WAIT` (1 s) more than a run exporting nowhere (it
/// cost 5 s, silently); `-v` says the spans were dropped.
#[test]
fn a_collector_that_never_answers_adds_at_most_a_second() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            // Accepted, read from by nobody, never answered.
            held.push(stream);
        }
    });
    let timed = |env: &[(&str, &str)]| {
        let began = std::time::Instant::now();
        let r = mcp_env(&["-v", "info"], env);
        assert_code(&r, 0);
        (began.elapsed(), r)
    };
    let (plain, _) = timed(&[]);
    let (hung, r) = timed(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]);
    eprintln!("without a collector {plain:?}, with a hung one {hung:?}");
    assert!(
        hung < plain + std::time::Duration::from_millis(1500),
        "a hung collector added {:?}",
        hung.saturating_sub(plain)
    );
    assert!(r.stderr.contains("dropped"), "{}", r.stderr);
}
