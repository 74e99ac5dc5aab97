//! Servers from a host's configuration (issue 17, item 2): a project's
//! `.mcp.json` (Claude Code) and `.vscode/mcp.json` (VS Code, `${env:...}`
//! and `${input:...}`), read by `mcp` in the current directory or with
//! `--config`. Real peers: server-everything and the Python SDK over stdio,
//! and the demo server.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// A fresh directory for one test's config files.
fn project(name: &str) -> PathBuf {
    let dir = temp_path(name);
    std::fs::create_dir_all(dir.join(".vscode")).unwrap();
    dir
}

/// Trusts the project files of `dir` as a user would (`mcp trust`), in a
/// trust store of the test's own: returns the store's path, for
/// `MCP_TRUST_FILE` in every later run.
fn trusted(dir: &Path) -> String {
    let store = dir.join("trust-store.json").display().to_string();
    let r = mcp_in(dir, &["trust"], &[("MCP_TRUST_FILE", &store)]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("trusted "), "{}", r.stdout);
    store
}

/// The three servers of the issue's check: two healthy third-party ones and
/// one that exits at once with a reason on stderr.
fn three_servers() -> Option<Value> {
    let (node, node_args) = test_support::everything()?.arg("stdio").to_strings();
    let (py, py_args) = python_peer("py_lowlevel.py")?.to_strings();
    Some(json!({
        "everything": {"command": node, "args": node_args},
        "python": {"command": py, "args": py_args},
        "broken": {"command": "sh", "args": ["-c", "echo 'fatal: API_KEY is not set' >&2; exit 3"]},
    }))
}

/// Runs `mcp servers --json` in `dir`, reading stdout as it arrives:
/// returns the listing and how long after the start it was complete.
fn servers_listing(dir: &Path, env: &[(&str, &str)]) -> (Value, Duration, Option<i32>) {
    let started = Instant::now();
    let mut cmd = Command::new(MCP);
    cmd.args(["servers", "--json"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = KillOnDrop(cmd.spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let mut text = String::new();
    let mut listed_at = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        text.push_str(&line);
        text.push('\n');
        // The document ends with a `]` alone on its line.
        if line == "]" {
            listed_at = Some(started.elapsed());
            break;
        }
        assert!(
            started.elapsed() < RUN_DEADLINE,
            "mcp servers hangs: {text}"
        );
    }
    let status = wait_exit(&mut child.0, Duration::from_secs(30));
    let listed_at = listed_at.unwrap_or_else(|| panic!("no listing: {text}"));
    (
        serde_json::from_str(&text).unwrap(),
        listed_at,
        status.code(),
    )
}

fn by_name<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing from {list}"))
}

/// The listing is complete within the slowest healthy server's start plus
/// a second (the servers start concurrently), the broken one with why.
fn check_listing(list: &Value, listed_at: Duration, code: Option<i32>) {
    assert_eq!(code, Some(0), "{list}");
    assert_eq!(list.as_array().unwrap().len(), 3, "{list}");
    let mut slowest: f64 = 0.0;
    for name in ["everything", "python"] {
        let s = by_name(list, name);
        assert_eq!(s["status"], "ready", "{s}");
        assert_eq!(s["transport"], "stdio");
        assert!(s["tools"].as_u64().unwrap() >= 1, "{s}");
        assert!(s["protocolVersion"].as_str().unwrap().starts_with("20"));
        slowest = slowest.max(s["startSeconds"].as_f64().unwrap());
    }
    let broken = by_name(list, "broken");
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("fatal: API_KEY is not set"),
        "{broken}"
    );
    let bound = Duration::from_secs_f64(slowest + 1.0);
    assert!(
        listed_at <= bound,
        "listed after {listed_at:?}; the slowest server started in {slowest:.2} s"
    );
}

#[test]
fn project_mcp_json_servers_tools_and_server_flag() {
    let Some(servers) = three_servers() else {
        return;
    };
    let dir = project("mcp-json");
    std::fs::write(
        dir.join(".mcp.json"),
        serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
    )
    .unwrap();
    let store = trusted(&dir);
    let env = [("MCP_TRUST_FILE", store.as_str())];

    let (list, listed_at, code) = servers_listing(&dir, &env);
    check_listing(&list, listed_at, code);

    let r = mcp_in(&dir, &["servers"], &env);
    assert_code(&r, 0);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    assert!(r.stdout.contains("failed: "), "{}", r.stdout);

    let r = mcp_in(&dir, &["--server", "python", "tools"], &env);
    assert_code(&r, 0);
    assert!(r.stdout.starts_with("now()"), "{}", r.stdout);

    // Every server's tools under <server>/<tool>; the broken one on stderr.
    let r = mcp_in(&dir, &["tools"], &env);
    assert_code(&r, 0);
    assert!(r.stdout.contains("python/now()"), "{}", r.stdout);
    assert!(
        r.stdout.contains("everything/echo(message: string)"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("\"broken\" failed"), "{}", r.stderr);

    // What `tools` lists, `call` takes.
    let r = mcp_in(
        &dir,
        &["call", "everything/echo", r#"{"message": "hi"}"#],
        &env,
    );
    assert_code(&r, 0);
    assert!(r.stdout.contains("hi"), "{}", r.stdout);

    // More than one server and no --server: which one?
    let r = mcp_in(&dir, &["info"], &env);
    assert_code(&r, 2);
    assert!(r.stderr.contains("--server"), "{}", r.stderr);
    let r = mcp_in(&dir, &["--server", "nope", "info"], &env);
    assert_code(&r, 2);
    assert!(
        r.stderr.contains("broken, everything, python"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vscode_mcp_json_with_env_variables() {
    let Some(servers) = three_servers() else {
        return;
    };
    // The programs come from the environment, as ${env:...}.
    let node = servers["everything"]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let py = servers["python"]["command"].as_str().unwrap().to_owned();
    let mut servers = servers;
    servers["everything"]["command"] = json!("${env:MCP_TEST_NODE}");
    servers["python"]["command"] = json!("${env:MCP_TEST_PYTHON}");
    for s in ["everything", "python", "broken"] {
        servers[s]["type"] = json!("stdio");
    }
    // Only some of server-everything's tools (Gemini CLI's field, read in
    // every format).
    servers["everything"]["includeTools"] = json!(["echo", "get-*"]);
    let dir = project("vscode");
    std::fs::write(
        dir.join(".vscode/mcp.json"),
        format!(
            "// VS Code's file: comments allowed\n{}",
            serde_json::to_string_pretty(&json!({ "servers": servers })).unwrap()
        ),
    )
    .unwrap();
    let store = trusted(&dir);
    let env = [
        ("MCP_TEST_NODE", node.as_str()),
        ("MCP_TEST_PYTHON", py.as_str()),
        ("MCP_TRUST_FILE", store.as_str()),
    ];
    let (list, listed_at, code) = servers_listing(&dir, &env);
    check_listing(&list, listed_at, code);
    let r = mcp_in(&dir, &["--server", "everything", "tools"], &env);
    assert_code(&r, 0);
    assert!(r.stdout.contains("echo(message: string)"), "{}", r.stdout);
    assert!(r.stdout.contains("get-sum("), "{}", r.stdout);
    assert!(
        !r.stdout.contains("trigger-long-running-operation"),
        "{}",
        r.stdout
    );
    let offered = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('('))
        .count() as u64;
    assert_eq!(by_name(&list, "everything")["tools"], offered, "{list}");
    let r = mcp_in(&dir, &["tools"], &env);
    assert_code(&r, 0);
    assert!(r.stdout.contains("python/now()"), "{}", r.stdout);
    assert!(r.stdout.contains("everything/get-sum("), "{}", r.stdout);
    assert!(!r.stdout.contains("trigger-long"), "{}", r.stdout);

    // Unset: a usage error naming the file, the server and the field.
    let r = mcp_in(&dir, &["tools"], &[("MCP_TRUST_FILE", store.as_str())]);
    assert_code(&r, 2);
    assert!(r.stderr.contains(".vscode/mcp.json"), "{}", r.stderr);
    assert!(r.stderr.contains("MCP_TEST_NODE"), "{}", r.stderr);
    assert!(r.stderr.contains("everything"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inputs_are_asked_and_config_flag_reads_any_file() {
    let dir = project("inputs");
    let log = dir.join("demo.log");
    let file = dir.join("my-servers.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&json!({
            "inputs": [{"type": "promptString", "id": "log", "description": "Log file", "password": true}],
            "servers": {"demo": {"type": "stdio", "command": MCP, "args": ["demo-server"],
                                 "env": {"MCP_DEMO_SERVER_LOG": "${input:log}"}}}
        }))
        .unwrap(),
    )
    .unwrap();
    let mut child = Command::new(MCP)
        .args([
            "--config",
            file.to_str().unwrap(),
            "call",
            "echo",
            r#"{"text": "hi"}"#,
        ])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{}", log.display()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert!(stderr.contains("Log file"), "the question: {stderr}");
    // The answer reached the server's environment.
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.starts_with("started "), "{text}");

    // No answer (stdin closed): exit 2, naming the input.
    let r = mcp_in(&dir, &["--config", file.to_str().unwrap(), "info"], &[]);
    assert_code(&r, 2);
    assert!(r.stderr.contains("log"), "{}", r.stderr);

    // An empty directory has no configuration: the demo server.
    let empty = temp_path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let r = mcp_in(&empty, &["info", "--json"], &[]);
    assert_code(&r, 0);
    assert_eq!(r.json()["serverInfo"]["name"], "mcp-demo-server");
    let r = mcp_in(&empty, &["servers"], &[]);
    assert_code(&r, 2);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&empty);
}

/// On a terminal (a pty from util-linux `script`), a password input is read
/// with echo off and a plain one echoed as typed.
#[cfg(unix)]
#[test]
fn password_inputs_are_not_echoed_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIP: util-linux `script` (to get a terminal) is not installed");
        return;
    }
    for password in [true, false] {
        let dir = project(if password { "pw" } else { "plain" });
        let answer = dir.join("answer-log");
        let file = dir.join("servers.json");
        std::fs::write(
            &file,
            serde_json::to_string(&json!({
                "inputs": [{"type": "promptString", "id": "log", "description": "Log file", "password": password}],
                "servers": {"demo": {"type": "stdio", "command": MCP, "args": ["demo-server"],
                                     "env": {"MCP_DEMO_SERVER_LOG": "${input:log}"}}}
            }))
            .unwrap(),
        )
        .unwrap();
        let line = format!(
            "'{MCP}' --config '{}' call echo '{{\"text\": \"hi\"}}'",
            file.display()
        );
        let mut child = Command::new("script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        // Answer once the question is on the terminal.
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 256];
            let mut stdout = stdout;
            let mut answered = false;
            loop {
                let n = std::io::Read::read(&mut stdout, &mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if !answered && String::from_utf8_lossy(&seen).contains("Log file: ") {
                    writeln!(stdin, "{}", answer.display()).unwrap();
                    answered = true;
                }
            }
            String::from_utf8_lossy(&seen).into_owned()
        });
        let status = wait_exit(&mut child, Duration::from_secs(60));
        let screen = reader.join().unwrap();
        assert_eq!(status.code(), Some(0), "{screen}");
        assert!(screen.contains("hi"), "{screen}");
        let echoed = screen.contains("answer-log");
        assert_eq!(echoed, !password, "password={password}: {screen:?}");
        assert!(
            dir.join("answer-log").is_file(),
            "the answer did not reach the server"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `--max-message-size` reaches every configured server, as it reaches one
/// named by `--stdio`: under a limit smaller than their `tools/list`
/// answers (server-everything's `initialize` answer is already larger),
/// server-everything and the demo server fail to start with the limit
/// named; under a large one both are ready.
#[test]
fn max_message_size_applies_to_every_configured_server() {
    let Some((node, node_args)) = test_support::everything().map(|c| c.arg("stdio").to_strings())
    else {
        return;
    };
    let dir = project("limits");
    std::fs::write(
        dir.join(".mcp.json"),
        serde_json::to_string_pretty(&json!({"mcpServers": {
            "everything": {"command": node, "args": node_args},
            "demo": {"command": MCP, "args": ["demo-server"]},
        }}))
        .unwrap(),
    )
    .unwrap();
    let store = trusted(&dir);
    let env = [("MCP_TRUST_FILE", store.as_str())];
    let r = mcp_in(
        &dir,
        &["--max-message-size", "512", "servers", "--json"],
        &env,
    );
    let list = r.json();
    for name in ["everything", "demo"] {
        let s = by_name(&list, name);
        assert_eq!(s["status"], "failed", "{s}");
        let error = s["error"].as_str().unwrap();
        assert!(error.contains("over the 512 bytes limit"), "{s}");
    }
    let r = mcp_in(
        &dir,
        &["--max-message-size", "1MiB", "servers", "--json"],
        &env,
    );
    assert_code(&r, 0);
    let list = r.json();
    for name in ["everything", "demo"] {
        assert_eq!(by_name(&list, name)["status"], "ready", "{list}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
