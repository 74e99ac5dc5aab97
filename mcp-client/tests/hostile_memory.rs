//! Hostile servers and memory (issue 33): whatever a server sends, the
//! client's peak memory stays below 4 × the largest message it was sent +
//! 64 MiB, and every list loop ends.
//!
//! The server is `test-support/hostile/memory_server.py` over stdio (it
//! writes its large members in chunks and stays small). Each case runs in a
//! child process of its own (this test binary, started again with the
//! case's name), which reports its peak resident memory (`VmHWM` from
//! `/proc/self/status`): one figure per process, unaffected by other tests
//! or by how busy the machine is, and it counts every allocation the case
//! made, the transport's buffers included.
#![allow(missing_docs, unreachable_pub, clippy::unwrap_used)]

use std::process::Command;
use std::time::Duration;

use mcp_client::{Client, ClientError, VersionChoice};
use mcp_proto::ProtocolVersion;
use mcp_proto::schema::Tool;
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

const MIB: u64 = 1 << 20;
/// The variable that makes this binary run one case (and report) instead
/// of spawning it.
const CASE: &str = "MCP_HOSTILE_MEMORY_CASE";

/// `{}` × 5.2 million: a 15 MiB message (the issue's case).
const EMPTIES: usize = 5_200_000;
/// What such a message weighs: `{}` and a comma each, plus its envelope.
const EMPTIES_MESSAGE: u64 = 3 * EMPTIES as u64 + 200;

fn server(args: &[String]) -> ServerCommand {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../test-support/hostile/memory_server.py"
    );
    ServerCommand::new("python3")
        .arg(script)
        .args(args.iter().cloned())
        .stderr(Stderr::discard())
}

async fn connect(args: &[String]) -> Client {
    let transport = StdioTransport::spawn(server(args)).unwrap();
    Client::builder("hostile-memory", "0.1.0")
        .protocol(VersionChoice::Pinned(ProtocolVersion::V2025_06_18))
        .request_timeout(Duration::from_secs(120))
        .connect(transport)
        .await
        .unwrap()
}

/// What the child does for each case; its return is printed as the outcome.
async fn run_case(case: &str, args: &[String]) -> String {
    let client = connect(args).await;
    let outcome = match case {
        "call" => match client.call_tool("x", json!({})).await {
            Ok(r) => {
                // Read what a program reads: the text, and that there is
                // structured content (its text, without decoding it).
                let text: Vec<&str> = r
                    .content
                    .iter()
                    .filter_map(|b| b.as_text())
                    .take(3)
                    .collect();
                format!(
                    "ok text={text:?} blocks={} structured_len={:?} meta={}",
                    r.content.len(),
                    r.structured_content.as_ref().map(|s| s.len()),
                    r.meta.is_some()
                )
            }
            Err(ClientError::Rpc(e)) => format!(
                "rpc {} {:?} data_len={:?}",
                e.code.0,
                e.message,
                e.data.as_ref().map(|d| d.len())
            ),
            Err(e) => format!("err {e:?}"),
        },
        "list" => match client.list_all::<Tool>().await {
            Ok(tools) => format!(
                "ok tools={} schema_len={}",
                tools.len(),
                tools.iter().map(|t| t.input_schema.len()).sum::<usize>()
            ),
            Err(e) => format!("err {e}").chars().take(300).collect(),
        },
        other => panic!("no case {other}"),
    };
    client.close().await;
    outcome
}

/// Runs `case` against the server started with `args` in a child process:
/// its outcome line and its peak RSS in bytes.
fn measure(test: &str, case: &str, args: &[&str]) -> (String, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CASE, format!("{case} {}", args.join(" ")))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the case failed:\n{stdout}\n{stderr}");
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in:\n{stdout}\n{stderr}"))
            .trim()
            .to_owned()
    };
    let outcome = field("outcome:");
    let peak: u64 = field("peak_kib:").parse().unwrap();
    eprintln!("{test}: {outcome}; peak RSS {} MiB", peak / 1024);
    (outcome, peak * 1024)
}

/// In the child: runs the case named by [`CASE`] and prints its outcome and
/// peak RSS. `true` when this process is such a child.
fn child() -> bool {
    let Ok(spec) = std::env::var(CASE) else {
        return false;
    };
    let mut words = spec.split_whitespace().map(str::to_owned);
    let case = words.next().unwrap();
    let args: Vec<String> = words.collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let outcome = rt.block_on(run_case(&case, &args));
    drop(rt);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap()
        .trim()
        .trim_end_matches("kB")
        .trim()
        .to_owned();
    // On lines of their own (the harness's "test … " may precede).
    println!("\noutcome: {outcome}");
    println!("\npeak_kib: {peak}");
    true
}

/// The issue's bound for a case whose largest message is `message` bytes.
fn bound(message: u64) -> u64 {
    4 * message + 64 * MIB
}

fn assert_bounded(peak: u64, message: u64) {
    assert!(
        peak <= bound(message),
        "peak RSS {} MiB over 4 × {} MiB + 64 MiB",
        peak / MIB,
        message / MIB
    );
}

/// Issue 33 #2: a 15 MiB answer whose `structuredContent` is 5.2 million
/// `{}`. Decoded into a `serde_json::Value` it took 180 MiB; kept as text,
/// about its size.
#[test]
fn structured_content_of_millions_of_empty_objects() {
    if child() {
        return;
    }
    let n = EMPTIES.to_string();
    let (outcome, peak) = measure(
        "structured_content_of_millions_of_empty_objects",
        "call",
        &["structured", &n],
    );
    assert!(
        outcome.starts_with(r#"ok text=["hi"] blocks=1 structured_len=Some("#),
        "{outcome}"
    );
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// The same flood in `_meta` and in a member no type names.
#[test]
fn meta_and_unknown_members_of_millions_of_empty_objects() {
    if child() {
        return;
    }
    let n = EMPTIES.to_string();
    let (outcome, peak) = measure(
        "meta_and_unknown_members_of_millions_of_empty_objects",
        "call",
        &["meta", &n],
    );
    assert!(outcome.starts_with(r#"ok text=["hi"]"#), "{outcome}");
    assert!(outcome.ends_with("meta=true"), "{outcome}");
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// 600,000 empty text blocks (15 MiB): content is decoded, so what bounds
/// it is a block's size in memory (296 bytes each took 190 MiB).
#[test]
fn six_hundred_thousand_empty_text_blocks() {
    if child() {
        return;
    }
    let (outcome, peak) = measure(
        "six_hundred_thousand_empty_text_blocks",
        "call",
        &["blocks", "600000"],
    );
    assert!(outcome.starts_with("ok text=["), "{}", &outcome[..100]);
    assert_bounded(peak, 26 * 600_000 + 200);
}

/// The same flood in a log notification's `data`, before the answer.
#[test]
fn log_data_of_millions_of_empty_objects() {
    if child() {
        return;
    }
    let n = EMPTIES.to_string();
    let (outcome, peak) = measure(
        "log_data_of_millions_of_empty_objects",
        "call",
        &["log", &n],
    );
    assert!(outcome.starts_with(r#"ok text=["hi"]"#), "{outcome}");
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// The same flood in an error's `data`: the call fails with the server's
/// error, and its data costs its size.
#[test]
fn error_data_of_millions_of_empty_objects() {
    if child() {
        return;
    }
    let n = EMPTIES.to_string();
    let (outcome, peak) = measure(
        "error_data_of_millions_of_empty_objects",
        "call",
        &["error", &n],
    );
    assert_eq!(outcome, r#"rpc -32000 "no" data_len=Some(15600001)"#);
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// The same flood in a listed tool's `inputSchema`, which the client keeps.
#[test]
fn input_schema_of_millions_of_empty_objects() {
    if child() {
        return;
    }
    let n = EMPTIES.to_string();
    let (outcome, peak) = measure(
        "input_schema_of_millions_of_empty_objects",
        "list",
        &["schema", &n],
    );
    assert!(outcome.starts_with("ok tools=1 schema_len="), "{outcome}");
    assert_bounded(peak, EMPTIES_MESSAGE);
}

/// A result nested 100,000 arrays deep: the call fails at once with the
/// depth limit named, no stack overflow, little memory.
#[test]
fn a_result_nested_100_000_deep_fails_its_call() {
    if child() {
        return;
    }
    let (outcome, peak) = measure(
        "a_result_nested_100_000_deep_fails_its_call",
        "call",
        &["deep", "100000"],
    );
    assert!(outcome.starts_with("err "), "{outcome}");
    assert!(outcome.contains("deeper than 128 levels"), "{outcome}");
    assert_bounded(peak, 200_100);
}

/// Issue 33 #3: 400 pages, each with a 60 KiB cursor and 1 MiB of a member
/// nobody reads: every page is dropped once its tools are taken.
#[test]
fn four_hundred_pages_with_large_members_are_not_kept() {
    if child() {
        return;
    }
    let (outcome, peak) = measure(
        "four_hundred_pages_with_large_members_are_not_kept",
        "list",
        &["pages", "400", "60000", "1048576"],
    );
    assert!(outcome.starts_with("ok tools=400"), "{outcome}");
    assert_bounded(peak, MIB + 60_000 + 200);
}

/// 1 MiB cursors: the list ends at the first, naming the cursor limit.
#[test]
fn a_one_mib_cursor_ends_the_list() {
    if child() {
        return;
    }
    let (outcome, peak) = measure(
        "a_one_mib_cursor_ends_the_list",
        "list",
        &["pages", "400", "1048576", "0"],
    );
    assert!(
        outcome.starts_with("err a nextCursor of 1048576 bytes"),
        "{outcome}"
    );
    assert_bounded(peak, MIB + 200);
}

/// The same cursor on every page: the list ends at the second page naming
/// the repeat, not after the page cap.
#[test]
fn a_repeated_cursor_ends_the_list() {
    if child() {
        return;
    }
    let (outcome, _) = measure("a_repeated_cursor_ends_the_list", "list", &["repeat"]);
    assert!(
        outcome.starts_with(r#"err page 2 of tools/list repeats an earlier cursor ("again")"#),
        "{outcome}"
    );
}

/// `ClientError` is what the outcome strings above are made of.
#[test]
fn outcomes_name_the_errors() {
    let e = ClientError::CursorTooLong {
        method: "tools/list".into(),
        len: 1_048_576,
        limit: mcp_client::MAX_CURSOR_LEN,
    };
    assert!(e.to_string().starts_with("a nextCursor of 1048576 bytes"));
}
