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
use mcp_host::{Host, ServerStatus};
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
