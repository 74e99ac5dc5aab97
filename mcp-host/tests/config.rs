//! A project `.mcp.json` (read by `mcp-config`) started by the host:
//! server-everything over stdio and Streamable HTTP, the Python SDK over
//! stdio, a broken server (exits at once with an error), and an HTTP entry
//! whose URL answers 404. The healthy ones serve calls, the broken ones are
//! reported with their reasons (stderr tail, HTTP status) and retried.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::sync::Arc;
use std::time::Duration;

use mcp_client::Client;
use mcp_config::{ConfigFile, Resolver};
use mcp_host::{Host, ServerSpec, ServerStatus};
use mcp_tools::ToolError;
use serde_json::json;
use test_support::{free_port, listening};

const CONFIG: &str = r#"{
  "mcpServers": {
    "everything": {"command": "${NODE}", "args": ["${EVERYTHING_JS}", "stdio"]},
    "python": {"command": "${PEERS}/py/bin/python", "args": ["${REPO}/peers/python_server.py", "stdio"]},
    "everything-http": {"type": "http", "url": "http://127.0.0.1:${EVERYTHING_PORT}/mcp"},
    "broken": {"command": "sh", "args": ["-c", "echo 'error: missing API key' >&2; exit 2"]},
    "wrong-path": {"type": "http", "url": "http://127.0.0.1:${EVERYTHING_PORT}/no-such-endpoint"},
    "off": {"command": "sh", "args": ["-c", "exit 1"], "disabled": true}
  }
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_mcp_json_with_broken_servers_starts_and_serves_the_rest() {
    // The config runs the Python SDK as `${PEERS}/py/bin/python`.
    let (Some(everything), Some(_python)) = (test_support::everything(), test_support::python())
    else {
        return;
    };
    let (node, js) = (&everything.program, &everything.args[0]);
    let repo = test_support::workspace_dir();
    let peers = test_support::peers_dir();
    let port = free_port();
    let mut everything_http = everything.clone().arg("streamableHttp").to_tokio();
    everything_http.env("PORT", port.to_string());
    let _http = listening(everything_http, port).await;

    let file = ConfigFile::parse(".mcp.json", CONFIG, None).unwrap();
    let resolver = Resolver::new().env_vars([
        ("NODE", node.to_str().unwrap().to_owned()),
        ("EVERYTHING_JS", js.to_str().unwrap().to_owned()),
        ("PEERS", peers.to_str().unwrap().to_owned()),
        ("REPO", repo.to_str().unwrap().to_owned()),
        ("EVERYTHING_PORT", port.to_string()),
    ]);
    let servers = file.resolve(&resolver).unwrap();
    let host = Host::builder()
        .config_servers(
            &servers,
            Arc::new(|| {
                Client::builder("mcp-host-tests", "0.1.0").probe_timeout(Duration::from_secs(60))
            }),
        )
        .start()
        .await
        .unwrap();
    let status = |name: &str| host.server_status(name).unwrap();
    for name in ["everything", "python", "everything-http"] {
        assert!(status(name).is_ready(), "{name}: {:?}", host.status());
    }
    let ServerStatus::Failed { why, .. } = status("broken") else {
        panic!("{:?}", host.status())
    };
    assert!(
        why.contains("status 2") && why.contains("error: missing API key"),
        "{why}"
    );
    let ServerStatus::Failed { why, .. } = status("wrong-path") else {
        panic!("{:?}", host.status())
    };
    assert!(why.contains("HTTP 404"), "{why}");
    assert!(
        !why.contains('\n') && why.chars().count() <= mcp_host::MAX_REASON_CHARS,
        "{why}"
    );
    assert_eq!(status("off"), ServerStatus::Disabled);
    eprintln!("broken: {}", status("broken"));
    eprintln!("wrong-path: {}", status("wrong-path"));

    // Three servers with an `echo` tool: the first keeps the name.
    let names: Vec<String> = host
        .tools()
        .iter()
        .map(|t| mcp_tools::Tool::name(t).to_owned())
        .collect();
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    for c in host.toolbox().collisions() {
        if let (Some(renamed), "echo") = (&c.renamed_to, c.tool.as_str()) {
            let args = if c.server == "python" {
                json!({"text": "hi"})
            } else {
                json!({"message": "hi"})
            };
            assert!(host.call(renamed, args).await.unwrap().text.contains("hi"));
        }
    }
    assert!(
        host.call("echo", json!({"message": "hi"}))
            .await
            .unwrap()
            .text
            .contains("hi")
    );
    host.close().await;
}

/// A remote server that ends an idle session (the Python SDK's
/// `session_idle_timeout`: the session's id then answers 404) is not a lost
/// connection: the client starts a new session and sends the call again in
/// it, and the host keeps the server as it was (before, the call failed
/// with the 404 and the host reconnected).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_session_the_server_ended_is_renewed_without_a_reconnect() {
    let Some(python) = test_support::python_server() else {
        return;
    };
    let port = free_port();
    let cmd = python.arg("http").arg(port.to_string()).arg("1").to_tokio();
    let _http = listening(cmd, port).await;
    let text = format!(
        r#"{{"mcpServers": {{"remote": {{"type": "http", "url": "http://127.0.0.1:{port}/mcp"}}}}}}"#
    );
    let servers = ConfigFile::parse(".mcp.json", &text, None)
        .unwrap()
        .resolve(&Resolver::new())
        .unwrap();
    let spec = mcp_host::ServerSpec::from_config(
        &servers[0],
        Arc::new(|| {
            Client::builder("mcp-host-tests", "0.1.0")
                .protocol(mcp_client::VersionChoice::Era(mcp_proto::Era::Legacy))
        }),
    );
    let host = Host::builder().server(spec).start().await.unwrap();
    let ServerStatus::Ready { since: first, .. } = host.server_status("remote").unwrap() else {
        panic!("{:?}", host.status())
    };
    let echo = |text: &str| host.call("echo", json!({"text": text}));
    assert!(echo("one").await.unwrap().text.contains("one"));
    // Idle past the server's session timeout: it ends the session.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let second = tokio::time::timeout(Duration::from_secs(20), echo("two"))
        .await
        .expect("the call was left pending")
        .unwrap();
    assert!(second.text.contains("two"), "{second:?}");
    let ServerStatus::Ready { since, .. } = host.server_status("remote").unwrap() else {
        panic!("{:?}", host.status())
    };
    assert_eq!(since, first, "the host reconnected");
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_that_goes_away_is_reconnected_when_it_comes_back() {
    let Some(everything) = test_support::everything() else {
        return;
    };
    let port = free_port();
    let serve = || {
        let mut cmd = everything.clone().arg("streamableHttp").to_tokio();
        cmd.env("PORT", port.to_string());
        listening(cmd, port)
    };
    let mut http = serve().await;
    let text = format!(
        r#"{{"mcpServers": {{"remote": {{"type": "http", "url": "http://127.0.0.1:{port}/mcp"}}}}}}"#
    );
    let servers = ConfigFile::parse(".mcp.json", &text, None)
        .unwrap()
        .resolve(&Resolver::new())
        .unwrap();
    let spec = mcp_host::ServerSpec::from_config(
        &servers[0],
        Arc::new(|| Client::builder("mcp-host-tests", "0.1.0")),
    )
    .backoff(
        mcp_host::Backoff::new()
            .initial(Duration::from_millis(200))
            .max(Duration::from_secs(1)),
    );
    let host = Host::builder().server(spec).start().await.unwrap();
    let ServerStatus::Ready { since: first, .. } = host.server_status("remote").unwrap() else {
        panic!("{:?}", host.status())
    };
    assert!(host.call("echo", json!({"message": "1"})).await.is_ok());

    // The server goes away: HTTP has no connection that closes, so the
    // next call is what notices; it fails fast, and the host reconnects
    // (failing, with backoff, until the server is back).
    http.kill().await.unwrap();
    let err = host
        .call("echo", json!({"message": "2"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Unavailable { .. }), "{err:?}");
    assert!(
        err.message_for_model().contains("Connection refused"),
        "{err}"
    );
    let mut rx = host.watch();
    tokio::time::timeout(
        Duration::from_secs(60),
        rx.wait_for(|all| matches!(all[0].status, ServerStatus::Failed { .. })),
    )
    .await
    .unwrap_or_else(|_| panic!("the lost connection was not noticed: {:?}", host.status()))
    .unwrap();
    eprintln!("while away: {}", host.server_status("remote").unwrap());

    let _http = serve().await;
    let mut rx = host.watch();
    tokio::time::timeout(
        Duration::from_secs(60),
        rx.wait_for(
            |all| matches!(all[0].status, ServerStatus::Ready { since, .. } if since > first),
        ),
    )
    .await
    .unwrap_or_else(|_| panic!("not reconnected: {:?}", host.status()))
    .unwrap();
    assert!(host.call("echo", json!({"message": "3"})).await.is_ok());
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_config_is_applied_without_touching_unchanged_servers() {
    let (Some(everything), Some(_python)) = (test_support::everything(), test_support::python())
    else {
        return;
    };
    let resolver = Resolver::new().env_vars([
        ("NODE", everything.program.to_str().unwrap().to_owned()),
        (
            "EVERYTHING_JS",
            everything.args[0].to_str().unwrap().to_owned(),
        ),
        (
            "PEERS",
            test_support::peers_dir().to_str().unwrap().to_owned(),
        ),
        (
            "REPO",
            test_support::workspace_dir().to_str().unwrap().to_owned(),
        ),
    ]);
    let read = |text: &str| {
        ConfigFile::parse(".mcp.json", text, None)
            .unwrap()
            .resolve(&resolver)
            .unwrap()
    };
    let everything =
        r#""everything": {"command": "${NODE}", "args": ["${EVERYTHING_JS}", "stdio"]}"#;
    let python = r#""python": {"command": "${PEERS}/py/bin/python", "args": ["${REPO}/peers/python_server.py", "stdio"]"#;
    let before = read(&format!(
        r#"{{"mcpServers": {{{everything}, {python}}}, "gone": {{"command": "sh", "args": ["-c", "exit 1"], "disabled": true}}}}}}"#
    ));
    let client: mcp_host::ClientFactory = Arc::new(|| {
        Client::builder("mcp-host-tests", "0.1.0").probe_timeout(Duration::from_secs(60))
    });
    let host = Host::builder()
        .config_servers(&before, client.clone())
        .start()
        .await
        .unwrap();
    let since = |name: &str| match host.server_status(name) {
        Some(ServerStatus::Ready { since, .. }) => since,
        other => panic!("{name}: {other:?}; {:?}", host.status()),
    };
    let (everything_since, python_since) = (since("everything"), since("python"));
    let old_python = host.client("python").unwrap();

    // The same file read again changes nothing; nor does a new title.
    let spec = |s: &mcp_config::ServerConfig| ServerSpec::from_config(s, client.clone());
    let changes = host.apply_config(&before, spec).await.unwrap();
    assert!(changes.is_empty(), "{changes:?}");
    let mut retitled = before.clone();
    retitled[0].title = Some("Everything".into());
    let changes = host.apply_config(&retitled, spec).await.unwrap();
    assert!(changes.is_empty(), "{changes:?}");

    // Edited: python gets an environment variable, `gone` is deleted, and
    // a broken server is added.
    let after = read(&format!(
        r#"{{"mcpServers": {{{everything}, {python}, "env": {{"EDITED": "1"}}}}, "new": {{"command": "sh", "args": ["-c", "echo 'no token' >&2; exit 3"]}}}}}}"#
    ));
    let changes = host.apply_config(&after, spec).await.unwrap();
    assert_eq!(changes.added, ["new"]);
    assert_eq!(changes.removed, ["gone"]);
    assert_eq!(changes.replaced, ["python"]);
    let names: Vec<String> = host.status().into_iter().map(|r| r.name).collect();
    // The new and the replaced ones come after the untouched one.
    assert_eq!(names, ["everything", "new", "python"]);
    assert_eq!(since("everything"), everything_since, "untouched");
    assert!(since("python") > python_since, "restarted");
    assert!(
        old_python.close_reason().is_some(),
        "the old python is closed"
    );
    let Some(ServerStatus::Failed { why, .. }) = host.server_status("new") else {
        panic!("{:?}", host.status())
    };
    assert!(why.contains("no token"), "{why}");
    let renamed = host
        .toolbox()
        .collisions()
        .into_iter()
        .find(|c| c.server == "python" && c.tool == "echo")
        .and_then(|c| c.renamed_to)
        .unwrap();
    let out = host
        .call(&renamed, json!({"text": "edited"}))
        .await
        .unwrap();
    assert_eq!(out.text, "edited");

    // A name a server added by hand holds is refused, and nothing changes.
    let by_hand = mcp_host::Launcher::new(|| async { Err("by hand".into()) });
    host.add(ServerSpec::new("mine", by_hand)).await.unwrap();
    let clash = read(r#"{"mcpServers": {"mine": {"command": "true"}}}"#);
    let err = host.apply_config(&clash, spec).await.unwrap_err();
    assert!(
        matches!(&err, mcp_host::HostError::DuplicateServer(n) if n == "mine"),
        "{err}"
    );
    let names: Vec<String> = host.status().into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["everything", "new", "python", "mine"]);

    host.close().await;
    assert!(matches!(
        host.apply_config(&after, spec).await,
        Err(mcp_host::HostError::Closed)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_applied_at_once_are_applied_one_after_the_other() {
    let read = |names: &[&str]| {
        let entries: Vec<String> = names
            .iter()
            .map(|n| format!(r#""{n}": {{"command": "sh", "args": ["-c", "exit 1"]}}"#))
            .collect();
        let text = format!(r#"{{"mcpServers": {{{}}}}}"#, entries.join(", "));
        ConfigFile::parse(".mcp.json", &text, None)
            .unwrap()
            .resolve(&Resolver::new())
            .unwrap()
    };
    let client: mcp_host::ClientFactory = Arc::new(|| Client::builder("mcp-host-tests", "0.1.0"));
    let spec = |s: &mcp_config::ServerConfig| ServerSpec::from_config(s, client.clone());
    let host = Host::builder()
        .config_servers(&read(&["x", "y"]), client.clone())
        .start()
        .await
        .unwrap();
    // Both would remove y (which takes a moment) and add z.
    let edited = read(&["x", "z"]);
    let (one, two) = tokio::join!(
        host.apply_config(&edited, spec),
        host.apply_config(&edited, spec)
    );
    let (one, two) = (one.unwrap(), two.unwrap());
    // The first changed it; the second found it changed.
    assert_eq!(
        (one.removed, one.added),
        (vec!["y".to_owned()], vec!["z".to_owned()])
    );
    assert!(two.is_empty(), "{two:?}");
    let names: Vec<String> = host.status().into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["x", "z"]);
    host.close().await;
}
