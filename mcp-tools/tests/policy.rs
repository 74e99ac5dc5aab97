//! The tool policy (allow / ask / deny) against real servers: the Python
//! SDK test server (`peers/python_server.py`, which logs every request it
//! receives, so a test sees what reached it) and server-everything (whose
//! tools carry annotations).

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::Client;
use mcp_tools::{
    Because, Decision, McpTool, Refusal, Server, Tool, ToolError, ToolOptions, ToolPolicy,
    ToolRules, Toolbox,
};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

/// The Python SDK server, logging each request's method to a fresh file.
fn logged_python() -> Option<(ServerCommand, PathBuf)> {
    let peer = test_support::python_server()?.arg("stdio");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let log = std::env::temp_dir().join(format!(
        "mcp-tools-policy-{}-{nanos}.log",
        std::process::id()
    ));
    let cmd = ServerCommand::new(peer.program)
        .args(peer.args)
        .env("MCP_TEST_REQUEST_LOG", &log)
        .stderr(Stderr::discard());
    Some((cmd, log))
}

fn requests(log: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

async fn connect(cmd: ServerCommand) -> Client {
    tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder("mcp-tools-tests", "0.1.0").connect(StdioTransport::spawn(cmd).unwrap()),
    )
    .await
    .expect("connect timed out")
    .unwrap()
}

#[tokio::test]
async fn a_denied_tool_is_refused_before_anything_is_sent_and_not_offered() {
    let Some((cmd, log)) = logged_python() else {
        return;
    };
    let client = connect(cmd).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("py", client.clone()))
        .tool_options(
            ToolOptions::new()
                .policy(ToolPolicy::new().server("py", ToolRules::new().deny(["ec*"]))),
        )
        .build()
        .await
        .unwrap();
    // Not offered to the model...
    let names: Vec<String> = toolbox
        .tools()
        .await
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(names.contains(&"add".to_owned()), "{names:?}");
    assert!(!names.contains(&"echo".to_owned()), "{names:?}");
    assert!(
        !serde_json::to_string(&toolbox.openai_definitions().await)
            .unwrap()
            .contains("\"echo\"")
    );
    // ...and refused by name, saying why, with nothing sent.
    let e = toolbox
        .call("echo", json!({"text": "hi"}))
        .await
        .unwrap_err();
    let ToolError::Refused { tool, server, why } = &e else {
        panic!("{e:?}");
    };
    assert_eq!((tool.as_str(), server.as_deref()), ("echo", Some("py")));
    assert_eq!(
        why,
        &Refusal::Denied {
            because: Because::ServerRule {
                server: "py".into(),
                pattern: "ec*".into()
            }
        }
    );
    assert!(e.is_model_correctable());
    assert_eq!(
        e.message_for_model(),
        "the call to tool `echo` was refused: the tool policy denies it (the rule `ec*` for server `py`); do not call it again"
    );
    // The same through a task start and a tool held by the application.
    assert!(matches!(
        toolbox
            .start(
                "echo",
                json!({"text": "hi"}),
                mcp_client::TaskOptions::new()
            )
            .await,
        Err(ToolError::Refused { .. })
    ));
    let def = client
        .list_all::<mcp_proto::schema::Tool>()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.name == "echo")
        .unwrap();
    let lone = McpTool::with_options(
        client.clone(),
        def,
        ToolOptions::new().policy(ToolPolicy::new().deny(["echo"])),
    );
    assert!(matches!(
        lone.call(json!({"text": "hi"})).await,
        Err(ToolError::Refused { .. })
    ));
    // An allowed tool runs.
    assert_eq!(
        toolbox
            .call("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap()
            .text,
        "3"
    );
    client.close().await;
    let seen = requests(&log);
    let _ = std::fs::remove_file(&log);
    assert_eq!(
        seen.iter().filter(|m| *m == "tools/call").count(),
        1,
        "only the allowed call reached the server: {seen:?}"
    );
}

#[tokio::test]
async fn ask_waits_for_the_answer_and_asks_once_per_call() {
    let Some((cmd, log)) = logged_python() else {
        return;
    };
    let client = connect(cmd).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let options = ToolOptions::new()
        .policy(ToolPolicy::new().ask(["echo"]))
        .on_ask(move |r| {
            seen.lock().unwrap().push((
                r.tool.clone(),
                r.server.clone(),
                r.arguments.clone(),
                r.because.clone(),
            ));
            let yes = r.arguments["text"] == "please";
            async move {
                // A person takes their time.
                tokio::time::sleep(Duration::from_millis(50)).await;
                yes
            }
        });
    let toolbox = Toolbox::builder()
        .server(Server::new("py", client.clone()))
        .tool_options(options)
        .build()
        .await
        .unwrap();
    // Asked, not offered less: `ask` tools stay in the model's tools.
    assert!(toolbox.get("echo").is_some());
    assert_eq!(
        toolbox
            .call("echo", json!({"text": "please"}))
            .await
            .unwrap()
            .text,
        "please"
    );
    let e = toolbox
        .call("echo", json!({"text": "now"}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            ToolError::Refused {
                why: Refusal::Declined { .. },
                ..
            }
        ),
        "{e:?}"
    );
    // `add` is not asked about.
    toolbox.call("add", json!({"a": 1, "b": 2})).await.unwrap();
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "echo");
    assert_eq!(asked[0].1.as_deref(), Some("py"));
    assert_eq!(asked[0].2, json!({"text": "please"}));
    assert_eq!(
        asked[0].3,
        Because::Rule {
            pattern: "echo".into()
        }
    );
    client.close().await;
    let calls = requests(&log).iter().filter(|m| *m == "tools/call").count();
    let _ = std::fs::remove_file(&log);
    assert_eq!(calls, 2, "the declined call was not sent");
}

#[tokio::test]
async fn annotations_decide_where_no_rule_does_and_no_one_to_ask_refuses() {
    let Some(everything) = test_support::everything() else {
        return;
    };
    let peer = everything.arg("stdio");
    let cmd = ServerCommand::new(peer.program)
        .args(peer.args)
        .stderr(Stderr::discard());
    let client = connect(cmd).await;
    // As VS Code: everything asks but what the server marks read-only.
    let toolbox = Toolbox::builder()
        .server(Server::new("everything", client.clone()))
        .tool_options(ToolOptions::new().policy(ToolPolicy::new().otherwise(Decision::Ask)))
        .build()
        .await
        .unwrap();
    let echo = toolbox.get("echo").unwrap();
    assert_eq!(echo.verdict().unwrap().because, Because::ReadOnlyHint);
    assert!(toolbox.call("echo", json!({"message": "hi"})).await.is_ok());
    // `toggle-subscriber-updates` says it is neither read-only nor
    // destructive: the default asks, and there is no one to ask.
    let e = toolbox
        .call("toggle-subscriber-updates", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the call to tool `toggle-subscriber-updates` was refused: each call needs the user's approval (the policy's default) and there is no one to ask; do not call it again"
    );
    client.close().await;
}
