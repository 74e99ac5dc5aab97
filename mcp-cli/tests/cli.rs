//! Black-box tests of the `mcp` binary: against its own demo server (always)
//! and against the reference server-everything over stdio (when installed
//! by `cargo xtask peers`; required when `MCP_REQUIRE_PEERS=1`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;

use common::*;

// ---- the built-in demo server ----------------------------------------------

#[test]
fn info_defaults_to_the_modern_era_with_auto() {
    for args in [&["info", "--json"][..], &["--protocol", "auto", "--json"]] {
        let r = mcp(args);
        assert_code(&r, 0);
        let v = r.json();
        assert_eq!(v["protocolVersion"], "2026-07-28", "{args:?}");
        assert_eq!(v["serverInfo"]["name"], "mcp-demo-server");
        assert!(v["capabilities"]["tools"].is_object());
        assert!(v["instructions"].as_str().unwrap().contains("slow_sum"));
        // The contract's member order.
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "serverInfo",
            "protocolVersion",
            "capabilities",
            "instructions",
        ] {
            assert!(keys.contains(&k), "missing {k}");
        }
        assert!(r.stdout.trim_start().starts_with("{\n  \"serverInfo\""));
    }
}

#[test]
fn pinned_legacy_protocol_uses_initialize() {
    let r = mcp(&["--protocol", "2025-11-25", "info", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json()["protocolVersion"], "2025-11-25");
    let r = mcp(&["--protocol", "2024-11-05", "info"]);
    assert_code(&r, 0);
    assert!(
        r.stdout.contains("protocol: 2024-11-05 (legacy era)"),
        "{}",
        r.stdout
    );
}

#[test]
fn info_human() {
    let r = mcp(&[]);
    assert_code(&r, 0);
    assert!(
        r.stdout.starts_with("server: mcp-demo-server "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("protocol: 2026-07-28 (modern era)"));
    assert!(r.stdout.contains("capabilities: prompts, resources, tools"));
}

#[test]
fn tools_json_concatenates_pages_in_server_order_with_members_as_sent() {
    let r = mcp(&["tools", "--json"]);
    assert_code(&r, 0);
    let v = r.json();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // The demo server pages tools 3 at a time: both pages, in order.
    assert_eq!(names, ["echo", "slow_sum", "add", "fail", "image"]);
    // Members keep the server's order (name, description, inputSchema), not
    // serde_json's sorted order.
    let first = r.stdout.find("\"name\"").unwrap();
    let desc = r.stdout.find("\"description\"").unwrap();
    let schema = r.stdout.find("\"inputSchema\"").unwrap();
    assert!(first < desc && desc < schema, "{}", r.stdout);
    let steps = r.stdout.find("\"steps\"").unwrap();
    let delay = r.stdout.find("\"delay_ms\"").unwrap();
    assert!(steps < delay);
}

#[test]
fn tools_human_lists_signatures() {
    let r = mcp(&["tools"]);
    assert_code(&r, 0);
    assert!(
        r.stdout
            .contains("slow_sum(a: number, b: number, steps?: integer, delay_ms?: integer)"),
        "{}",
        r.stdout
    );
}

#[test]
fn readme_call_prints_the_sum_and_draws_progress() {
    let r = mcp(&["call", "slow_sum", r#"{"a": 2, "b": 3}"#]);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "5\n");
    let progress: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress:"))
        .collect();
    assert_eq!(progress.len(), 5, "{}", r.stderr);
    assert!(progress[4].contains("5/5 (100%)"), "{}", progress[4]);
    assert!(r.error_lines().is_empty(), "{}", r.stderr);
}

#[test]
fn call_json_is_the_result_as_received() {
    let r = mcp(&[
        "--json",
        "call",
        "slow_sum",
        r#"{"a": 2, "b": 3, "delay_ms": 0}"#,
    ]);
    assert_code(&r, 0);
    let v = r.json();
    assert_eq!(v["structuredContent"]["sum"], 5);
    assert_eq!(v["content"][0]["text"], "5");
    // A 2026-07-28 result carries resultType; it is kept.
    assert_eq!(v["resultType"], "complete");
}

#[test]
fn call_folds_structured_and_non_text_content() {
    let r = mcp(&["call", "add", r#"{"a": 1, "b": 2.5}"#]);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "{\"sum\":3.5}\n");
    let r = mcp(&["call", "image"]);
    assert_code(&r, 0);
    assert_eq!(
        r.stdout,
        "a 1x1 red pixel\n[image: image/png, 70 bytes]\n[resource link: demo://logo.png (logo)]\n"
    );
    let r = mcp(&["call", "echo", r#"{"text": "line one\nline two"}"#]);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "line one\nline two\n");
}

#[test]
fn tool_error_exits_1_and_prints_its_text() {
    let r = mcp(&["call", "fail", r#"{"reason": "on purpose"}"#]);
    assert_code(&r, 1);
    assert_eq!(r.stdout, "the `fail` tool always fails: on purpose\n");
    let r = mcp(&["call", "fail", "--json"]);
    assert_code(&r, 1);
    assert_eq!(r.json()["isError"], true);
}

#[test]
fn bad_json_args_exit_2_with_one_line() {
    for bad in ["{", "[1, 2]", "not json", "\"text\""] {
        let r = mcp(&["call", "echo", bad]);
        assert_code(&r, 2);
        assert_eq!(r.stderr.lines().count(), 1, "{bad}: {}", r.stderr);
        assert!(r.stderr.starts_with("mcp: JSON_ARGS"), "{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let r = mcp(&["prompt", "greet", "{"]);
    assert_code(&r, 2);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["--frobnicate"][..],
        &["call"],
        &["no-such-command"],
        &["--stdio", "a", "--http", "http://127.0.0.1:1/"],
        &["--protocol", "1999-01-01"],
        &["--timeout", "-1"],
        &["--stdio", "'unterminated"],
    ] {
        let r = mcp(args);
        assert_code(&r, 2);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    }
    let r = mcp(&["--help"]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("call <TOOL> [JSON_ARGS]"));
    for flag in [
        "--stdio",
        "--http",
        "--config",
        "--server",
        "--timeout",
        "servers",
    ] {
        assert!(r.stdout.contains(flag), "{flag} missing from --help");
    }
    // Shell completions.
    for (shell, marker) in [
        ("bash", "_mcp()"),
        ("zsh", "#compdef mcp"),
        ("fish", "complete -c mcp"),
    ] {
        let r = mcp(&["completions", shell]);
        assert_code(&r, 0);
        assert!(r.stdout.contains(marker), "{shell}: {}", r.stdout);
        assert!(r.stdout.contains("servers"), "{shell}: no subcommands");
    }
    let r = mcp(&["completions", "tcsh"]);
    assert_code(&r, 2);
}

#[test]
fn unreachable_server_exits_3_with_one_line() {
    let r = mcp(&["--stdio", "/nonexistent/mcp-server --flag", "tools"]);
    assert_one_line_error(&r, 3, "mcp: connection error: ");
    assert!(r.stderr.contains("/nonexistent/mcp-server"), "{}", r.stderr);

    // A server that exits at once: what failed, then each cause once.
    let r = mcp(&["--stdio", "sh -c 'echo boom >&2; exit 7'", "info"]);
    assert_one_line_error(&r, 3, "mcp: connection error: ");
    assert_eq!(
        r.stderr.trim(),
        "mcp: connection error: handshake: connection closed: server exited with status 7: boom"
    );
}

#[test]
fn unreachable_http_server_exits_3_with_one_line() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let r = mcp(&["--http", &url, "-H", "Authorization: Bearer x", "tools"]);
    assert_one_line_error(&r, 3, "mcp: connection error: ");
    // Each level of the cause once (the transport's, hyper's, the OS's).
    assert_eq!(r.stderr.matches("refused").count(), 1, "{}", r.stderr);
    assert_eq!(r.stderr.matches("failed").count(), 2, "{}", r.stderr);
}

#[test]
fn http_401_exits_3_and_suggests_a_header() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut buf = [0u8; 8192];
            let mut seen = Vec::new();
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let r = mcp(&["--http", &url, "tools"]);
    assert_one_line_error(&r, 3, "mcp: connection error: ");
    assert!(r.stderr.contains("401"), "{}", r.stderr);
    assert!(
        r.stderr.contains("-H \"Authorization: Bearer"),
        "{}",
        r.stderr
    );
}

#[test]
fn timeout_exits_3_and_progress_resets_it() {
    // One step of 2 s, no progress before it: times out after 0.5 s.
    let started = Instant::now();
    let r = mcp(&[
        "--timeout",
        "0.5",
        "call",
        "slow_sum",
        r#"{"a": 1, "b": 2, "steps": 1, "delay_ms": 2000}"#,
    ]);
    assert_code(&r, 3);
    assert_eq!(r.error_lines().len(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("mcp: timeout: "), "{}", r.stderr);
    assert!(started.elapsed() < Duration::from_secs(10));
    // Eight steps of 0.2 s take 1.6 s, more than the 0.5 s timeout, but
    // every step's progress resets it.
    let r = mcp(&[
        "--timeout",
        "0.5",
        "call",
        "slow_sum",
        r#"{"a": 1, "b": 2, "steps": 8, "delay_ms": 200}"#,
    ]);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "3\n");
}

#[test]
fn resources_templates_read_prompts_prompt() {
    let r = mcp(&["resources", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json()[0]["uri"], "demo://readme");
    let r = mcp(&["resources"]);
    assert!(r.stdout.contains("demo://logo.png  logo (image/png)"));

    let r = mcp(&["templates", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json()[0]["uriTemplate"], "demo://greeting/{name}");

    let r = mcp(&["read", "demo://greeting/Ann"]);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "Hello, Ann!\n");
    let r = mcp(&["read", "demo://logo.png", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json()["contents"][0]["mimeType"], "image/png");

    let r = mcp(&["prompts", "--json"]);
    assert_code(&r, 0);
    assert_eq!(r.json()[0]["name"], "greet");
    let r = mcp(&["prompt", "greet", r#"{"name": "Ann"}"#]);
    assert_code(&r, 0);
    assert!(
        r.stdout.contains("[user] Please greet Ann warmly."),
        "{}",
        r.stdout
    );
    let r = mcp(&[
        "--protocol",
        "2025-06-18",
        "prompt",
        "greet",
        r#"{"name": "Bo"}"#,
        "--json",
    ]);
    assert_code(&r, 0);
    assert_eq!(
        r.json()["messages"][0]["content"]["text"],
        "Please greet Bo warmly."
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_call_on_the_server_and_exits_130() {
    for protocol in ["auto", "2025-11-25"] {
        let log = temp_path("sigint");
        let mut child = Command::new(MCP)
            .args([
                "--protocol",
                protocol,
                "call",
                "slow_sum",
                r#"{"a": 1, "b": 2, "steps": 100, "delay_ms": 100}"#,
            ])
            .env("MCP_DEMO_SERVER_LOG", &log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Wait for the call to be running (its first progress line).
        wait_line(&rx, Duration::from_secs(20), |l| l.starts_with("progress:"));
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = wait_exit(&mut child, Duration::from_secs(15));
        assert_eq!(status.code(), Some(130), "{protocol}");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        assert!(
            text.lines().any(|l| l.starts_with("cancelled ")),
            "{protocol}: the demo server saw no cancellation; its log:\n{text}"
        );
        // The spawned server is gone.
        let server_pid = text
            .lines()
            .find_map(|l| l.strip_prefix("started "))
            .expect("the demo server logged its pid")
            .to_owned();
        let gone_by = Instant::now() + Duration::from_secs(5);
        while alive(&server_pid) && Instant::now() < gone_by {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(&server_pid), "demo server {server_pid} outlived mcp");
    }
}

#[test]
fn everything_over_streamable_http() {
    let Some(everything) = test_support::everything() else {
        return;
    };
    let port = free_port();
    let mut cmd = everything.arg("streamableHttp").to_std();
    cmd.env("PORT", port.to_string());
    let _server = listening_blocking(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");

    let r = mcp(&["--http", &url, "tools", "--json"]);
    assert_code(&r, 0);
    assert!(
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo")
    );
    let r = mcp(&[
        "--http",
        &url,
        "-H",
        "X-Test: 1",
        "call",
        "echo",
        r#"{"message":"hi"}"#,
    ]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("hi"), "{}", r.stdout);
    let r = mcp(&[
        "--http",
        &url,
        "call",
        "trigger-long-running-operation",
        r#"{"duration": 1, "steps": 2}"#,
    ]);
    assert_code(&r, 0);
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.starts_with("progress:"))
            .count(),
        2,
        "{}",
        r.stderr
    );
}

#[test]
fn everything_tools_and_echo() {
    let Some(server) = everything_stdio() else {
        return;
    };
    let r = mcp(&["--stdio", &server, "tools", "--json"]);
    assert_code(&r, 0);
    let tools = r.json();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert!(names.len() > 5, "{names:?}");

    let r = mcp(&["--stdio", &server, "tools"]);
    assert_code(&r, 0);
    assert!(
        r.stdout.lines().any(|l| l.starts_with("echo(")),
        "{}",
        r.stdout
    );

    let r = mcp(&["--stdio", &server, "call", "echo", r#"{"message":"hi"}"#]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("hi"), "{}", r.stdout);

    let r = mcp(&["--stdio", &server, "info", "--json"]);
    assert_code(&r, 0);
    let v = r.json();
    // server-everything speaks the legacy era: auto falls back to initialize.
    assert_eq!(v["protocolVersion"], "2025-11-25");
    assert!(v["serverInfo"]["name"].as_str().is_some());
}

#[cfg(unix)]
#[test]
fn signals_during_a_hung_handshake_stop_mcp_and_the_server() {
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let pid_file = temp_path("hung");
        // A "server" that never answers and ignores stdin closing: mcp must
        // escalate to SIGTERM for it.
        let line = format!("sh -c 'echo $$ > {}; exec sleep 60'", pid_file.display());
        let mut child = Command::new(MCP)
            .args(["--stdio", &line, "tools"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp");
        let deadline = Instant::now() + Duration::from_secs(20);
        let server_pid = loop {
            if let Ok(text) = std::fs::read_to_string(&pid_file) {
                if text.ends_with('\n') {
                    break text.trim().to_owned();
                }
            }
            assert!(Instant::now() < deadline, "the server never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = std::fs::remove_file(&pid_file);
        // Let the client start its handshake.
        std::thread::sleep(Duration::from_millis(300));
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = wait_exit(&mut child, Duration::from_secs(15));
        assert_eq!(status.code(), Some(code), "{signal}");
        let gone_by = Instant::now() + Duration::from_secs(5);
        while alive(&server_pid) && Instant::now() < gone_by {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !alive(&server_pid),
            "{signal}: server {server_pid} outlived mcp"
        );
    }
}

/// Pinned to 2026-07-28, server-everything (legacy only) fails the
/// handshake with the CLI's own words: the flag to use, not the library's
/// `VersionChoice`, and the probe's cause.
#[test]
fn pinned_modern_against_a_legacy_server_names_the_flag() {
    let Some(server) = everything_stdio() else {
        return;
    };
    let r = mcp(&["--stdio", &server, "--protocol", "2026-07-28", "info"]);
    assert_code(&r, 3);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "mcp: protocol error: handshake failed: the server does not speak the 2026-07-28 revision"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("server/discover"), "{}", r.stderr);
    assert!(
        r.stderr.contains("use --protocol auto or a legacy version"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("VersionChoice"), "{}", r.stderr);
}
