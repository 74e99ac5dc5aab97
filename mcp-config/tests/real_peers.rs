//! A `.mcp.json` naming real servers nobody here wrote, read, resolved and
//! connected with `mcp_client::Client` through `ServerConfig::transport`:
//! server-everything over stdio and Streamable HTTP, the Python SDK over
//! stdio and over the 2024-11-05 HTTP+SSE transport (`"type": "sse"`).
//!
//! The peers are installed by `cargo xtask peers`; without them this test
//! skips with a message, unless `MCP_REQUIRE_PEERS=1`.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::time::Duration;

use mcp_client::Client;
use mcp_config::{ConfigFile, Format, Resolver, ServerConfig};
use mcp_proto::schema::ContentBlock;
use serde_json::json;
use test_support::{free_port, listening};

const CONFIG: &str = r#"{
  "mcpServers": {
    "everything": {
      "command": "${NODE}",
      "args": ["${EVERYTHING_JS}", "stdio"]
    },
    "python": {
      "command": "${PEERS}/py/bin/python",
      "args": ["${REPO}/peers/python_server.py", "stdio"],
      "env": {"MCP_CONFIG_TEST_TOKEN": "${TOKEN:-unused}"}
    },
    "everything-http": {
      "type": "http",
      "url": "http://127.0.0.1:${EVERYTHING_PORT}/mcp",
      "headers": {"X-Test-Token": "Bearer ${TOKEN}"}
    },
    "python-sse": {
      "type": "sse",
      "url": "http://127.0.0.1:${SSE_PORT}/sse"
    }
  }
}"#;

async fn call_echo(server: ServerConfig) -> (String, usize, String) {
    let transport = server.transport().unwrap();
    // Four servers start at once on a busy machine: a Python interpreter
    // can take longer than the default 5 s `server/discover` probe to
    // answer, and a late answer after the fallback to `initialize` fails
    // the handshake (the server then serves 2026-07-28). Give it time.
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        Client::builder("mcp-config-tests", "0.1.0")
            .probe_timeout(Duration::from_secs(30))
            .connect(transport),
    )
    .await
    .unwrap_or_else(|_| panic!("{}: connect timed out", server.name))
    .unwrap_or_else(|e| panic!("{}: {e}", server.name));
    let tools = client.list_all::<mcp_proto::schema::Tool>().await.unwrap();
    let args = if server.name.starts_with("everything") {
        json!({"message": "from a config file"})
    } else {
        json!({"text": "from a config file"})
    };
    let result = client.call_tool("echo", args).await.unwrap();
    let text = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    tokio::time::timeout(Duration::from_secs(20), client.close())
        .await
        .unwrap();
    (server.name, tools.len(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_naming_real_peers_connects_to_each() {
    let (Some(everything), Some(py)) = (test_support::everything(), test_support::python()) else {
        return;
    };
    let (node, js) = (&everything.program, &everything.args[0]);
    let repo = test_support::workspace_dir();
    let peers = test_support::peers_dir();

    let everything_port = free_port();
    let mut everything_http = everything.clone().arg("streamableHttp").to_tokio();
    everything_http.env("PORT", everything_port.to_string());
    let sse_port = free_port();
    let mut python_sse = tokio::process::Command::new(&py);
    python_sse
        .arg(repo.join("mcp-transport-http/tests/peers/py_server.py"))
        .arg(sse_port.to_string())
        .arg("sse");
    let (_http_child, _sse_child) = tokio::join!(
        listening(everything_http, everything_port),
        listening(python_sse, sse_port)
    );

    let project = std::env::temp_dir().join(format!("mcp-config-peers-{}", std::process::id()));
    std::fs::create_dir_all(&project).unwrap();
    let path = project.join(".mcp.json");
    std::fs::write(&path, CONFIG).unwrap();
    let file = ConfigFile::load(&path).unwrap();
    assert_eq!(file.format(), Format::ClaudeCode);
    let resolver = Resolver::new().env_vars([
        ("NODE", node.to_str().unwrap().to_owned()),
        ("EVERYTHING_JS", js.to_str().unwrap().to_owned()),
        ("PEERS", peers.to_str().unwrap().to_owned()),
        ("REPO", repo.to_str().unwrap().to_owned()),
        ("EVERYTHING_PORT", everything_port.to_string()),
        ("SSE_PORT", sse_port.to_string()),
        ("TOKEN", "not-checked-by-the-peer".to_owned()),
    ]);
    let servers = file.resolve(&resolver).unwrap();
    assert_eq!(servers.len(), 4);

    // All four at once, as a host starts them.
    let tasks: Vec<_> = servers
        .into_iter()
        .map(|s| tokio::spawn(call_echo(s)))
        .collect();
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    std::fs::remove_dir_all(&project).unwrap();
    for (name, tools, text) in &results {
        assert!(*tools > 0, "{name}: no tools");
        assert!(text.contains("from a config file"), "{name}: {text}");
    }
    let names: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        names,
        ["everything", "everything-http", "python", "python-sse"]
    );
}

/// A VS Code `mcp.json` whose server listens on a Unix socket (VS Code's
/// `unix:///path#/mcp`; `type` inferred from `url`): the Python SDK served
/// by `uvicorn --uds`, connected in both eras through
/// `ServerConfig::transport`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vscode_config_naming_a_socket_server_connects_in_both_eras() {
    let dir = test_support::SocketDir::new();
    let Some(cmd) = test_support::python_socket_server(&dir.path()) else {
        return;
    };
    let _server = test_support::listening_on_socket(cmd.to_tokio(), &dir.path()).await;
    let text = r#"{
      // the socket's path from the environment, the request path in the fragment
      "servers": {"py": {"url": "unix://${env:MCP_SOCKET}#/mcp"}}
    }"#;
    let file = ConfigFile::parse(".vscode/mcp.json", text, None).unwrap();
    assert_eq!(file.format(), Format::VsCode);
    let socket = dir.path().to_str().unwrap().to_owned();
    let servers = file
        .resolve(&Resolver::new().env_vars([("MCP_SOCKET", socket)]))
        .unwrap();
    for era in [mcp_proto::Era::Modern, mcp_proto::Era::Legacy] {
        let client = tokio::time::timeout(
            Duration::from_secs(60),
            Client::builder("mcp-config-tests", "0.1.0")
                .protocol(mcp_client::VersionChoice::Era(era))
                .connect(servers[0].transport().unwrap()),
        )
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{era}: {e}"));
        assert_eq!(client.protocol_version().map(|v| v.era()), Some(era));
        let result = client
            .call_tool("echo", json!({"text": "over a socket"}))
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("over a socket"), "{era}");
        client.close().await;
    }
}
