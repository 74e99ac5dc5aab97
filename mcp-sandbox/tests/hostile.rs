//! A hostile server (tests/hostile_server.py) tries what a sandbox must
//! stop, through the real stdio transport. Every test runs the same attempt
//! twice: unconfined, where it must work (so the test can tell), then
//! sandboxed, where it must fail.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod common;

use common::{Folder, attempt, connect, hostile, http_server, udp_server, unix_server};
use mcp_transport_stdio::sandbox::Sandbox;
use serde_json::json;

/// Runs `check(client, sandboxed)` unconfined, then sandboxed by `sandbox`.
macro_rules! both_ways {
    ($sandbox:expr, |$client:ident, $sandboxed:ident| $body:block) => {{
        let Some(cmd) = hostile() else { return };
        let sandbox: Sandbox = $sandbox;
        for $sandboxed in [false, true] {
            let $client = connect(cmd.clone(), $sandboxed.then_some(&sandbox)).await;
            $body
            $client.close().await;
        }
    }};
}

fn verdict(text: &str, sandboxed: bool, what: &str) {
    let want = if sandboxed { "denied:" } else { "ok:" };
    assert!(
        text.starts_with(want),
        "{what} {}: expected {want}, got {text:?}",
        if sandboxed { "sandboxed" } else { "unconfined" }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_file_cannot_be_read() {
    let dir = Folder::new();
    let secret = dir.file("work/secret.txt", "the-secret");
    let folder_secret = dir.file("keys/id_rsa", "private-key");
    both_ways!(
        Sandbox::new()
            .deny_read(&secret)
            .deny_read(dir.path().join("keys")),
        |client, sandboxed| {
            let text = attempt(&client, "read", json!({"path": secret})).await;
            verdict(&text, sandboxed, "reading a denyRead file");
            assert!(!sandboxed || !text.contains("the-secret"));
            let text = attempt(&client, "read", json!({"path": folder_secret})).await;
            verdict(&text, sandboxed, "reading in a denyRead folder");
            // What is not denied stays readable.
            let other = dir.file("work/readme.txt", "public");
            let text = attempt(&client, "read", json!({"path": other})).await;
            assert_eq!(text, "ok: public");
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_go_only_under_allow_write_and_never_under_deny_write() {
    let dir = Folder::new();
    let work = dir.path().join("work");
    let git = dir.path().join("work/.git");
    std::fs::create_dir_all(&git).unwrap();
    let outside = dir.path().join("outside.txt");
    both_ways!(
        Sandbox::new().allow_write(&work).deny_write(&git),
        |client, sandboxed| {
            let _ = std::fs::remove_file(&outside);
            let text = attempt(&client, "write", json!({"path": outside, "text": "x"})).await;
            verdict(&text, sandboxed, "writing outside allowWrite");
            assert_eq!(outside.exists(), !sandboxed);
            let text = attempt(
                &client,
                "write",
                json!({"path": git.join("HEAD"), "text": "x"}),
            )
            .await;
            verdict(&text, sandboxed, "writing under denyWrite");
            // Allowed: a new file under allowWrite, read back.
            let new = work.join(format!("new-{sandboxed}.txt"));
            let text = attempt(&client, "write", json!({"path": new, "text": "fresh"})).await;
            assert_eq!(text, "ok: wrote");
            assert_eq!(
                attempt(&client, "read", json!({"path": new})).await,
                "ok: fresh"
            );
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_processes_are_out_of_reach() {
    let me = std::process::id().to_string();
    both_ways!(Sandbox::new(), |client, sandboxed| {
        let text = attempt(&client, "environ", json!({"pid": me})).await;
        verdict(&text, sandboxed, "reading the host's /proc/<pid>/environ");
        assert!(sandboxed || text.contains("CARGO"), "{text}");
        let text = attempt(&client, "signal", json!({"pid": me})).await;
        verdict(&text, sandboxed, "signalling the host");
        let text = attempt(&client, "ptrace", json!({"pid": me})).await;
        verdict(&text, sandboxed, "tracing the host");
        // Nor is the host's environment handed over: a sandboxed server
        // starts from the variable allowlist (cargo sets CARGO_PKG_NAME
        // for this test process).
        let text = attempt(&client, "getenv", json!({"name": "CARGO_PKG_NAME"})).await;
        let want = if sandboxed {
            "ok: ".to_owned()
        } else {
            format!("ok: {}", env!("CARGO_PKG_NAME"))
        };
        assert_eq!(text, want, "inherited environment (sandboxed: {sandboxed})");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_network_without_allowed_domains() {
    let http = http_server();
    let udp = udp_server();
    both_ways!(Sandbox::new(), |client, sandboxed| {
        let url = format!("http://127.0.0.1:{http}/");
        let text = attempt(&client, "http_get", json!({"url": url})).await;
        verdict(&text, sandboxed, "an HTTP request");
        let text = attempt(
            &client,
            "connect",
            json!({"host": "127.0.0.1", "port": http.to_string()}),
        )
        .await;
        verdict(&text, sandboxed, "a TCP connection to the host's loopback");
        let text = attempt(
            &client,
            "udp",
            json!({"host": "127.0.0.1", "port": udp.to_string()}),
        )
        .await;
        verdict(&text, sandboxed, "a UDP datagram");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_domains_are_reached_through_the_proxy_and_nothing_else() {
    let http = http_server();
    let sandbox = Sandbox::new()
        .allow_domain("localhost")
        .unwrap()
        .allow_domain("127.0.0.1")
        .unwrap()
        .deny_domain("127.0.0.1")
        .unwrap();
    both_ways!(sandbox, |client, sandboxed| {
        // `localhost` stands in for an allowed domain: reached, through the
        // proxy when sandboxed.
        let url = format!("http://localhost:{http}/");
        let text = attempt(&client, "http_get", json!({"url": url})).await;
        assert_eq!(text, format!("ok: 200 hello from {http}"));
        // The same server by a name not allowed (127.1 is 127.0.0.1).
        let url = format!("http://127.1:{http}/");
        let text = attempt(&client, "http_get", json!({"url": url})).await;
        verdict(&text, sandboxed, "a host not in allowedDomains");
        assert!(!sandboxed || text.contains("403"), "{text}");
        // deniedDomains wins over allowedDomains.
        let url = format!("http://127.0.0.1:{http}/");
        let text = attempt(&client, "http_get", json!({"url": url})).await;
        verdict(&text, sandboxed, "a host in deniedDomains");
        assert!(!sandboxed || text.contains("403"), "{text}");
        // A CONNECT tunnel (what https goes through) to the allowed host,
        // and refused to one that is denied.
        let port = http.to_string();
        let text = attempt(
            &client,
            "tunnel",
            json!({"host": "localhost", "port": port}),
        )
        .await;
        assert_eq!(text, format!("ok: hello from {http}"));
        let text = attempt(
            &client,
            "tunnel",
            json!({"host": "127.0.0.1", "port": port}),
        )
        .await;
        verdict(&text, sandboxed, "a CONNECT tunnel to a denied host");
        assert!(!sandboxed || text.contains("403"), "{text}");
        // Around the proxy: no direct connection.
        let text = attempt(
            &client,
            "connect",
            json!({"host": "127.0.0.1", "port": http.to_string()}),
        )
        .await;
        verdict(&text, sandboxed, "a TCP connection around the proxy");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_unix_sockets_are_out_of_reach() {
    let dir = Folder::new();
    let socket = unix_server(&dir.path());
    both_ways!(Sandbox::new(), |client, sandboxed| {
        let text = attempt(&client, "unix_connect", json!({"path": socket})).await;
        verdict(&text, sandboxed, "connecting to a host Unix socket");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_gets_a_private_writable_temp_folder() {
    let Some(cmd) = hostile() else { return };
    let client = connect(cmd, Some(&Sandbox::new())).await;
    // TMPDIR is the only writable folder; the hostile server writes there.
    let tmp = attempt(&client, "getenv", json!({"name": "TMPDIR"})).await;
    let tmp = tmp.strip_prefix("ok: ").filter(|t| !t.is_empty()).unwrap();
    assert!(tmp.contains("mcp-sandbox-"), "{tmp}");
    let file = format!("{tmp}/scratch");
    let text = attempt(&client, "write", json!({"path": file, "text": "x"})).await;
    assert_eq!(text, "ok: wrote");
    client.close().await;
    // Closed: the private folder (TMPDIR's parent) is removed with the
    // transport.
    let private = std::path::Path::new(tmp).parent().unwrap().to_path_buf();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while private.exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!private.exists(), "{} left behind", private.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_that_cannot_be_had_starts_nothing() {
    // The launcher's own check, as on a kernel without Landlock: it refuses
    // to start the server and says why and how to opt out.
    let Some(cmd) = hostile() else { return };
    let marker = Folder::new();
    let ran = marker.path().join("ran");
    let cmd = cmd
        .env(mcp_sandbox::PRETEND_UNAVAILABLE_VAR, "landlock")
        .env("HOSTILE_RAN", &ran);
    // The marker is writable in the sandbox: had the server run at all,
    // confined or not, it would be there.
    let t = mcp_transport_stdio::StdioTransport::spawn(common::maybe_sandboxed(
        cmd,
        Some(&Sandbox::new().allow_write(marker.path())),
    ))
    .unwrap();
    let err = mcp_client::Client::builder("sandbox-test", "1")
        .connect(t)
        .await
        .err()
        .map(|e| mcp_proto::error::chain(&e).to_string())
        .unwrap_or_default();
    assert!(
        err.contains("125") && err.contains("Landlock") && err.contains("sandboxEnabled"),
        "{err}"
    );
    assert!(!ran.exists());
}
