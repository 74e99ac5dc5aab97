//! Real servers nobody here wrote, confined: the reference filesystem
//! server (Node) and FastMCP (Python). What the sandbox allows keeps
//! working; what it denies fails, where the same call works unconfined.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod common;

use common::{Folder, call, connect};
use mcp_transport_stdio::ServerCommand;
use mcp_transport_stdio::sandbox::Sandbox;
use serde_json::json;

fn filesystem(root: &std::path::Path) -> Option<ServerCommand> {
    let (program, args) = test_support::filesystem_server()?.arg(root).to_strings();
    Some(ServerCommand::new(program).args(args))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_server_works_within_its_sandbox_only() {
    let dir = Folder::new();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let Some(cmd) = filesystem(&root) else { return };
    let work = root.join("work");
    let secret = dir.file("work/secret.txt", "the-secret");
    dir.file("work/notes.txt", "notes");
    let sandbox = Sandbox::new().allow_write(&work).deny_read(&secret);
    for sandboxed in [false, true] {
        let client = connect(cmd.clone(), sandboxed.then_some(&sandbox)).await;
        // Allowed: list, read, write and read back, inside the workspace.
        let (text, err) = call(&client, "list_directory", json!({"path": work})).await;
        assert!(!err && text.contains("notes.txt"), "{text}");
        let (text, err) = call(
            &client,
            "read_text_file",
            json!({"path": work.join("notes.txt")}),
        )
        .await;
        assert!(!err && text.contains("notes"), "{text}");
        let new = work.join(format!("new-{sandboxed}.txt"));
        let (text, err) = call(
            &client,
            "write_file",
            json!({"path": new, "content": "fresh"}),
        )
        .await;
        assert!(!err, "{text}");
        let (text, err) = call(&client, "read_text_file", json!({"path": new})).await;
        assert!(!err && text.contains("fresh"), "{text}");
        // Denied when sandboxed: the denyRead file, a write outside allowWrite.
        let (text, err) = call(&client, "read_text_file", json!({"path": secret})).await;
        assert_eq!(
            err, sandboxed,
            "read denyRead file (sandboxed: {sandboxed}): {text}"
        );
        assert_eq!(text.contains("the-secret"), !sandboxed, "{text}");
        let outside = root.join(format!("outside-{sandboxed}.txt"));
        let (text, err) = call(
            &client,
            "write_file",
            json!({"path": outside, "content": "x"}),
        )
        .await;
        assert_eq!(
            err, sandboxed,
            "write outside allowWrite (sandboxed: {sandboxed}): {text}"
        );
        assert_eq!(outside.exists(), !sandboxed);
        client.close().await;
    }
}

/// `tests/fastmcp_files.py` on the pinned FastMCP.
fn fastmcp_files() -> Option<ServerCommand> {
    let python = test_support::peer("fastmcp/bin/python")?;
    Some(ServerCommand::new(python).arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fastmcp_files.py"
    )))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fastmcp_server_is_held_to_its_sandbox() {
    let Some(cmd) = fastmcp_files() else { return };
    let dir = Folder::new();
    let secret = dir.file("secret.txt", "the-secret");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let http = common::http_server();
    let sandbox = Sandbox::new()
        .allow_write(&work)
        .deny_read(&secret)
        .allow_domain("localhost")
        .unwrap();
    for sandboxed in [false, true] {
        let client = connect(cmd.clone(), sandboxed.then_some(&sandbox)).await;
        let (text, err) = call(&client, "read_file", json!({"path": secret})).await;
        assert_eq!(
            err, sandboxed,
            "read denyRead (sandboxed: {sandboxed}): {text}"
        );
        let outside = dir.path().join(format!("outside-{sandboxed}.txt"));
        let (text, err) = call(&client, "write_file", json!({"path": outside, "text": "x"})).await;
        assert_eq!(
            err, sandboxed,
            "write outside (sandboxed: {sandboxed}): {text}"
        );
        let inside = work.join(format!("inside-{sandboxed}.txt"));
        let (text, err) = call(&client, "write_file", json!({"path": inside, "text": "x"})).await;
        assert!(!err, "{text}");
        // The allowed domain, through the proxy; an address not allowed.
        let url = format!("http://localhost:{http}/");
        let (text, err) = call(&client, "fetch", json!({"url": url})).await;
        assert!(!err && text.contains("hello from"), "{text}");
        let url = format!("http://127.0.0.1:{http}/");
        let (text, err) = call(&client, "fetch", json!({"url": url})).await;
        assert_eq!(
            err, sandboxed,
            "fetch a host not allowed (sandboxed: {sandboxed}): {text}"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_runs_sandboxed() {
    let Some(peer) = test_support::fastmcp_server() else {
        return;
    };
    let (program, args) = peer.arg("stdio").to_strings();
    let cmd = ServerCommand::new(program).args(args);
    let client = connect(cmd, Some(&Sandbox::new())).await;
    let (text, err) = call(&client, "echo", json!({"text": "from the sandbox"})).await;
    assert!(!err && text.contains("from the sandbox"), "{text}");
    let (text, err) = call(&client, "add", json!({"a": 2, "b": 3})).await;
    assert!(!err && text.contains('5'), "{text}");
    client.close().await;
}
