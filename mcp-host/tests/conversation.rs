//! An agent's conversation held over a host for its whole life: the host's
//! one live toolbox, and a `Deferred` made from it, against real servers
//! nobody here wrote, over stdio: the Python SDK test server
//! (`peers/python_server.py`), `@modelcontextprotocol/server-everything`,
//! and the Python SDK server whose tools change (`changing_server.py`).
//!
//! - across a `kill -9` of a server: calls say it is unavailable until it is
//!   back, then work; the loaded tools come back; a `read_result` id from
//!   before reads on; an `McpTool` kept from before reaches the new process;
//! - across `Host::add`: `search_tools` finds the new server's tools, its
//!   own tool rules hold, a toolbox kept from the start sees it;
//! - across `set_enabled` and `remove`;
//! - across an approval: a tool the pins hold back is refused and never
//!   found until approved, then found and called.
//!
//! The peers are installed by `cargo xtask peers` into `.peers/`. Without
//! them these tests skip with a message, unless `MCP_REQUIRE_PEERS=1`.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_host::{Backoff, Host, Launcher, PinStore, ServerReport, ServerSpec, ServerStatus};
use mcp_tools::{DeferredOptions, ModelApi, Refusal, Tool, ToolError, ToolRules};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

/// Generous: the machine is shared and busy.
const WAIT: Duration = Duration::from_secs(90);

type Pids = Arc<Mutex<Vec<u32>>>;

fn stdio(peer: test_support::PeerCommand) -> ServerCommand {
    ServerCommand::new(peer.program).args(peer.args)
}

/// Spawns `cmd` on every launch and connects; records each process id.
fn launcher(cmd: ServerCommand, pids: &Pids) -> Launcher {
    let pids = pids.clone();
    let cmd = cmd.stderr(Stderr::discard());
    Launcher::new(move || {
        let cmd = cmd.clone();
        let pids = pids.clone();
        async move {
            let transport = StdioTransport::spawn(cmd)?;
            if let Some(pid) = transport.pid() {
                pids.lock().unwrap().push(pid);
            }
            Ok(Client::builder("mcp-host-tests", "0.1.0")
                .probe_timeout(WAIT)
                .connect(transport)
                .await?)
        }
    })
}

/// Quick retries, so tests do not wait out the default backoff.
fn quick() -> Backoff {
    Backoff::new()
        .initial(Duration::from_millis(200))
        .max(Duration::from_secs(2))
}

/// Waits until `name`'s status satisfies `pred`.
async fn wait_for(host: &Host, name: &str, pred: impl Fn(&ServerStatus) -> bool) {
    let mut rx = host.watch();
    let found = tokio::time::timeout(
        WAIT,
        rx.wait_for(|all: &Vec<ServerReport>| {
            all.iter().any(|r| r.name == name && pred(&r.status))
        }),
    )
    .await;
    assert!(
        matches!(found, Ok(Ok(_))),
        "{name}: not as awaited within {WAIT:?}: {:?}",
        host.status()
    );
}

async fn offered(conversation: &mcp_tools::Deferred) -> Vec<String> {
    conversation
        .definitions(ModelApi::Anthropic)
        .await
        .iter()
        .map(|d| d.name().to_owned())
        .collect()
}

fn kill(pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_keeps_working_across_a_killed_server_and_an_added_one() {
    let (Some(py), Some(ev)) = (test_support::python_server(), test_support::everything()) else {
        return;
    };
    let pids = Pids::default();
    let host = Host::builder()
        .server(
            ServerSpec::new("py", launcher(stdio(py.arg("stdio")), &pids))
                .backoff(quick())
                .tool_result_budget("echo", 200),
        )
        .start()
        .await
        .unwrap();
    let kept = host.toolbox();
    let conversation = kept.deferred(DeferredOptions::new());
    assert_eq!(
        offered(&conversation).await,
        ["search_tools", "read_result"]
    );

    // Turn 1: the model looks for a tool; turn 2: it calls it, and the long
    // result is cut with an id to read on.
    let found = conversation
        .call("search_tools", json!({"query": "echo a text back"}))
        .await
        .unwrap();
    assert!(
        conversation.loaded_names().contains(&"echo".to_owned()),
        "{}",
        found.text
    );
    let log: String = (0..400)
        .map(|i| format!("line {i} of the build log: compiling crate {i}\n"))
        .collect();
    let out = conversation
        .call("echo", json!({"text": log}))
        .await
        .unwrap();
    let cut = out.cut.clone().unwrap();
    let id = cut.id.clone().unwrap();
    assert!(cut.shown_bytes < log.len() / 4, "{cut:?}");
    let echo = host
        .tools()
        .into_iter()
        .find(|t| t.name() == "echo")
        .unwrap();
    let before = offered(&conversation).await;
    assert!(before.contains(&"echo".to_owned()), "{before:?}");

    // The server is killed behind the host's back.
    let first_pid = *pids.lock().unwrap().last().unwrap();
    kill(first_pid);
    let deadline = Instant::now() + WAIT;
    let mut unavailable = 0;
    loop {
        assert!(Instant::now() < deadline, "never back: {:?}", host.status());
        match conversation.call("echo", json!({"text": "back?"})).await {
            Ok(out) => {
                assert_eq!(out.text, "back?");
                break;
            }
            Err(e) => {
                assert!(
                    matches!(&e, ToolError::Unavailable { server, .. } if server == "py"),
                    "{e:?}"
                );
                unavailable += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(unavailable > 0, "no call saw the server down");
    assert_ne!(*pids.lock().unwrap().last().unwrap(), first_pid);
    // What the conversation loaded is offered again; the result cut before
    // the restart reads on; the tool kept from before reaches the new process.
    assert_eq!(offered(&conversation).await, before);
    let page = conversation
        .call("read_result", json!({"id": id, "offset": cut.shown_bytes}))
        .await
        .unwrap();
    assert!(
        page.text
            .starts_with(&log[cut.shown_bytes..cut.shown_bytes + 40]),
        "{}",
        page.text
    );
    assert_eq!(
        echo.call(json!({"text": "an old handle"}))
            .await
            .unwrap()
            .text,
        "an old handle"
    );

    // A server added while the conversation runs, with rules of its own.
    host.add(
        ServerSpec::new("ev", launcher(stdio(ev.arg("stdio")), &pids))
            .prefix("ev_")
            .tool_rules(ToolRules::new().deny(["get-env"])),
    )
    .await
    .unwrap();
    assert!(kept.get("ev_echo").is_some());
    let found = conversation
        .call(
            "search_tools",
            json!({"query": "sum of two numbers", "limit": 3}),
        )
        .await
        .unwrap();
    assert!(
        conversation
            .loaded_names()
            .contains(&"ev_get-sum".to_owned()),
        "{}",
        found.text
    );
    let sum = conversation
        .call("ev_get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(sum.text.contains('5'), "{}", sum.text);
    let found = conversation
        .call(
            "search_tools",
            json!({"query": "print the environment variables", "limit": 20}),
        )
        .await
        .unwrap();
    assert!(!found.text.contains("ev_get-env"), "{}", found.text);
    let e = conversation
        .call("ev_get-env", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            ToolError::Refused {
                why: Refusal::Denied { .. },
                ..
            }
        ),
        "{e:?}"
    );
    // And the cut result still reads.
    assert!(
        conversation
            .call("read_result", json!({"id": id, "offset": 0}))
            .await
            .unwrap()
            .text
            .starts_with("line 0 of the build log")
    );

    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_follows_a_disabled_enabled_and_removed_server() {
    let Some(py) = test_support::python_server() else {
        return;
    };
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("py", launcher(stdio(py.arg("stdio")), &pids)).prefix("py_"))
        .start()
        .await
        .unwrap();
    let conversation = host
        .toolbox()
        .deferred(DeferredOptions::new().always(["py_add"]));
    conversation
        .call(
            "search_tools",
            json!({"query": "echo a text back", "limit": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        offered(&conversation).await,
        ["py_add", "py_echo", "search_tools"]
    );

    host.set_enabled("py", false).unwrap();
    wait_for(&host, "py", |s| *s == ServerStatus::Disabled).await;
    assert_eq!(offered(&conversation).await, ["search_tools"]);
    let e = conversation
        .call("py_echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        e.message_for_model()
            .contains("its server `py` is disabled"),
        "{e}"
    );

    host.set_enabled("py", true).unwrap();
    wait_for(&host, "py", ServerStatus::is_ready).await;
    assert_eq!(
        offered(&conversation).await,
        ["py_add", "py_echo", "search_tools"]
    );
    assert_eq!(
        conversation
            .call("py_echo", json!({"text": "again"}))
            .await
            .unwrap()
            .text,
        "again"
    );

    host.remove("py").await.unwrap();
    let e = conversation
        .call("py_echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound { .. }), "{e:?}");
    assert_eq!(offered(&conversation).await, ["search_tools"]);
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_tool_is_out_of_the_conversation_until_approved() {
    let script = test_support::workspace_dir().join("mcp-tools/tests/changing_server.py");
    let Some(changing) = test_support::python_running(script) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "mcp-host-conversation-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("ch", launcher(stdio(changing), &pids)))
        .pins(PinStore::new(dir.join("pins.json")))
        .start()
        .await
        .unwrap();
    let conversation = host.toolbox().deferred(DeferredOptions::new());
    // The server adds `hello` after the first use pinned its tools: held.
    let deadline = Instant::now() + WAIT;
    while host.held().is_empty() {
        assert!(Instant::now() < deadline, "never held: {:?}", host.status());
        conversation.call("unlock", json!({})).await.unwrap();
        let mut rx = host.watch();
        let _ = tokio::time::timeout(Duration::from_secs(2), rx.changed()).await;
    }
    let e = conversation.call("hello", json!({})).await.unwrap_err();
    assert!(
        matches!(
            &e,
            ToolError::Refused {
                why: Refusal::Unapproved { added: true },
                ..
            }
        ),
        "{e:?}"
    );
    let say_hello = json!({"query": "say hello", "limit": 5});
    conversation
        .call("search_tools", say_hello.clone())
        .await
        .unwrap();
    assert!(!conversation.loaded_names().contains(&"hello".to_owned()));

    // Approved: found, loaded and called in the same conversation.
    let change = host.held().pop().unwrap();
    host.approve(&change).await.unwrap();
    conversation.call("search_tools", say_hello).await.unwrap();
    assert!(
        conversation.loaded_names().contains(&"hello".to_owned()),
        "{:?}",
        conversation.loaded_names()
    );
    assert_eq!(
        conversation.call("hello", json!({})).await.unwrap().text,
        "hello from a new tool"
    );
    host.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_budget_applies_unless_a_server_has_its_own_and_kept_results_are_bounded() {
    let Some(py) = test_support::python_server() else {
        return;
    };
    let pids = Pids::default();
    let host = Host::builder()
        .server(
            ServerSpec::new("cut", launcher(stdio(py.clone().arg("stdio")), &pids)).prefix("cut_"),
        )
        .server(
            ServerSpec::new("whole", launcher(stdio(py.arg("stdio")), &pids))
                .prefix("whole_")
                .result_budget(100_000),
        )
        .result_budget(200)
        .kept_results(1, 1 << 20)
        .start()
        .await
        .unwrap();
    let log: String = (0..400)
        .map(|i| format!("line {i} of the build log: compiling crate {i}\n"))
        .collect();
    // The server's own budget over the host's: whole.
    let out = host.call("whole_echo", json!({"text": log})).await.unwrap();
    assert!(out.cut.is_none() && out.text == log, "{:?}", out.cut);
    // The host's budget: cut; one result kept, so the first id is gone.
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = host.call("cut_echo", json!({"text": log})).await.unwrap();
        let cut = out.cut.unwrap();
        assert!(cut.shown_bytes < log.len() / 4, "{cut:?}");
        ids.push(cut.id.unwrap());
    }
    let e = host
        .call("read_result", json!({"id": ids[0]}))
        .await
        .unwrap_err();
    assert!(e.message_for_model().contains("it is gone"), "{e}");
    let page = host
        .call("read_result", json!({"id": ids[1], "offset": 0}))
        .await
        .unwrap();
    assert!(
        page.text.starts_with("line 0 of the build log"),
        "{}",
        page.text
    );
    host.close().await;
}
