//! `mcp` and a server on a Unix socket (issue 36): the Python SDK's
//! Streamable HTTP server served by `uvicorn --uds`, reached with
//! `--http unix:///…/mcp.sock#/mcp` and through a VS Code config file that
//! names the socket, in both eras.
#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use common::*;

/// The Python SDK server on a fresh socket: its directory (removed on drop)
/// and the server (killed on drop), or `None` when the peer is missing.
fn python_on_socket() -> Option<(test_support::SocketDir, KillOnDrop)> {
    let dir = test_support::SocketDir::new();
    let cmd = test_support::python_socket_server(&dir.path())?.to_std();
    let server = test_support::listening_on_socket_blocking(cmd, &dir.path());
    Some((dir, server))
}

const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[test]
fn http_unix_url_calls_a_tool_in_both_eras() {
    let Some((dir, _server)) = python_on_socket() else {
        return;
    };
    let url = dir.url();
    for era in ERAS {
        let run = mcp(&[
            "--http",
            &url,
            "--protocol",
            era,
            "call",
            "echo",
            r#"{"text": "over a socket"}"#,
        ]);
        assert_eq!(run.code, Some(0), "{era}: {}", run.stderr);
        assert_eq!(run.stdout.trim(), "over a socket", "{era}");
        let info = mcp(&["--http", &url, "--protocol", era, "info", "--json"]);
        assert_eq!(info.code, Some(0), "{era}: {}", info.stderr);
        assert_eq!(info.json()["protocolVersion"], era, "{}", info.stdout);
    }
}

#[test]
fn a_vscode_config_naming_a_socket_works_in_both_eras() {
    let Some((dir, _server)) = python_on_socket() else {
        return;
    };
    let vscode = dir.path().with_file_name(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    let config = vscode.join("mcp.json");
    std::fs::write(
        &config,
        r#"{
          // VS Code's form: the socket's path, then the request path after the #
          "servers": {"py": {"type": "http", "url": "unix://${env:MCP_TEST_SOCKET}#/mcp"}}
        }"#,
    )
    .unwrap();
    let socket = dir.path().display().to_string();
    let config = config.display().to_string();
    for era in ERAS {
        let run = mcp_env(
            &[
                "--config",
                &config,
                "--server",
                "py",
                "--protocol",
                era,
                "call",
                "add",
                r#"{"a": 2, "b": 3}"#,
            ],
            &[("MCP_TEST_SOCKET", &socket)],
        );
        assert_eq!(run.code, Some(0), "{era}: {}", run.stderr);
        assert!(run.stdout.contains('5'), "{era}: {}", run.stdout);
    }
}
