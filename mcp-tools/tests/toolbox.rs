//! The toolbox and `McpTool` against in-process fake servers driving the real
//! `mcp_client::Client` over `mcp_proto::transport::channel::pair()`.

#![allow(clippy::unwrap_used)] // test helpers: a failure here is a test failure

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientError};
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Response};
use mcp_proto::transport::{TransportExt, channel};
use mcp_proto::{ErrorCode, ErrorObject};
use mcp_tools::{Filter, McpTool, OnCollision, Server, Tool, ToolError, ToolOptions, Toolbox};

use serde_json::{Value, json};

/// What the fake server does in answer to `tools/call`.
enum Out {
    Reply(Value),
    Error(i32, &'static str),
    Notify(&'static str),
    Close,
}

#[derive(Default)]
struct State {
    tools: Vec<Value>,
    lists: usize,
    calls: Vec<(String, Value)>,
    /// Calls that carried a progress token.
    progress_tokens: usize,
    /// Free for scripts.
    step: u32,
    /// Leave `tools/list` unanswered.
    hang_list: bool,
}

type Script = Box<dyn FnMut(&mut State, &str, &Value) -> Vec<Out> + Send>;

fn tool(name: &str, schema: Value) -> Value {
    json!({"name": name, "description": format!("the {name} tool"), "inputSchema": schema})
}

fn echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": false,
    })
}

fn text(t: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": t.into()}]})
}

/// A server named `label` whose `echo` answers `"<label>: <message>"`.
fn echo_script(label: &'static str) -> Script {
    Box::new(move |_, name, args| match name {
        "echo" => vec![Out::Reply(text(format!(
            "{label}: {}",
            args["message"].as_str().unwrap_or("?")
        )))],
        "fail" => vec![Out::Reply(
            json!({"content": [{"type": "text", "text": "disk full; try a smaller file"}], "isError": true}),
        )],
        other => vec![Out::Error(
            -32602,
            if other.is_empty() {
                "?"
            } else {
                "Unknown tool"
            },
        )],
    })
}

async fn spawn_fake(tools: Vec<Value>, script: Script) -> (Client, Arc<Mutex<State>>) {
    spawn_fake_with(json!({"tools": {"listChanged": true}}), tools, script).await
}

async fn spawn_fake_with(
    capabilities: Value,
    tools: Vec<Value>,
    mut script: Script,
) -> (Client, Arc<Mutex<State>>) {
    let (client_end, mut server) = channel::pair();
    let state = Arc::new(Mutex::new(State {
        tools,
        ..State::default()
    }));
    let st = state.clone();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = server.recv().await {
            let Message::Request(req) = msg else { continue };
            let params = test_support::params(&req);
            let mut outs = Vec::new();
            match &*req.method {
                "server/discover" => outs.push(Out::Error(-32601, "method not found")),
                "initialize" => outs.push(Out::Reply(json!({
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": capabilities,
                    "serverInfo": {"name": "fake", "version": "1.0.0"},
                }))),
                "tools/list" => {
                    let mut s = st.lock().unwrap();
                    s.lists += 1;
                    if s.hang_list {
                        continue;
                    }
                    outs.push(Out::Reply(json!({"tools": s.tools})));
                }
                "tools/call" => {
                    let name = params["name"].as_str().unwrap_or_default().to_owned();
                    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
                    let mut s = st.lock().unwrap();
                    s.calls.push((name.clone(), args.clone()));
                    if params["_meta"]["progressToken"].is_number() {
                        s.progress_tokens += 1;
                    }
                    outs = script(&mut s, &name, &args);
                }
                other => outs.push(Out::Error(
                    -32601,
                    if other.is_empty() {
                        "?"
                    } else {
                        "method not found"
                    },
                )),
            }
            for out in outs {
                let msg: Message = match out {
                    Out::Reply(v) => {
                        Response::new(req.id.clone(), mcp_proto::RawJson::from_value(&v).unwrap())
                            .into()
                    }
                    Out::Error(code, m) => ErrorResponse::new(
                        Some(req.id.clone()),
                        ErrorObject::new(ErrorCode(code), m),
                    )
                    .into(),
                    Out::Notify(method) => Notification::new(method, None).into(),
                    Out::Close => return,
                };
                if server.send(msg).await.is_err() {
                    return;
                }
            }
        }
    });
    let client = Client::builder("mcp-tools-test", "0.0.0")
        .request_timeout(Duration::from_secs(10))
        .connect(client_end)
        .await
        .unwrap();
    (client, state)
}

#[tokio::test]
async fn two_servers_filters_collisions_export_and_routing() {
    let (one, one_state) = spawn_fake(
        vec![
            tool("echo", echo_schema()),
            tool("fail", json!({"type": "object"})),
        ],
        echo_script("one"),
    )
    .await;
    let (two, two_state) = spawn_fake(
        vec![
            tool("echo", echo_schema()),
            tool("admin.users.delete", json!({"type": "object"})),
            tool("files/read", json!({"type": "object"})),
        ],
        echo_script("two"),
    )
    .await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .server(Server::new("two", two).filter(Filter::exclude(["admin.**"])))
        .build()
        .await
        .unwrap();

    let names: Vec<String> = toolbox
        .tools()
        .await
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["echo", "fail", "echo_2", "files_read"]);
    let collisions = toolbox.collisions();
    assert_eq!(collisions.len(), 1);
    assert_eq!(collisions[0].name, "echo");
    assert_eq!(collisions[0].winner_server, "one");
    assert_eq!(collisions[0].server, "two");
    assert_eq!(collisions[0].renamed_to.as_deref(), Some("echo_2"));

    let route = toolbox.resolve("files_read").unwrap();
    assert_eq!(
        (route.server.as_str(), route.tool.as_str()),
        ("two", "files/read")
    );

    let openai = toolbox.openai_tools().await;
    assert_eq!(
        openai[2],
        json!({"type": "function", "function": {
            "name": "echo_2", "description": "the echo tool", "parameters": echo_schema()}})
    );
    let anthropic = toolbox.anthropic_tools().await;
    assert_eq!(
        anthropic[3],
        json!({"name": "files_read", "description": "the files/read tool", "input_schema": {"type": "object"}})
    );

    // The renamed tool reaches server two under its own name.
    let out = toolbox
        .call("echo_2", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(out.text, "two: hi");
    assert_eq!(
        two_state.lock().unwrap().calls,
        [("echo".to_owned(), json!({"message": "hi"}))]
    );
    let out = toolbox
        .call("echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(out.text, "one: hi");
    assert_eq!(one_state.lock().unwrap().calls.len(), 1);

    // Through the trait object, the same.
    let tools: Vec<Arc<dyn Tool>> = toolbox
        .tools()
        .await
        .into_iter()
        .map(|t| Arc::new(t) as Arc<dyn Tool>)
        .collect();
    let out = tools[2].call(json!({"message": "dyn"})).await.unwrap();
    assert_eq!(out.text, "two: dyn");

    // Excluded or unknown names are not callable.
    let err = toolbox
        .call("admin_users_delete", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }), "{err:?}");
    assert!(err.is_model_correctable());
}

#[tokio::test]
async fn drop_policy_leaves_the_later_tool_out() {
    let (one, _) = spawn_fake(vec![tool("echo", echo_schema())], echo_script("one")).await;
    let (two, _) = spawn_fake(vec![tool("echo", echo_schema())], echo_script("two")).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .server(Server::new("two", two))
        .on_collision(OnCollision::Drop)
        .build()
        .await
        .unwrap();
    assert_eq!(toolbox.snapshot().len(), 1);
    assert_eq!(toolbox.collisions()[0].renamed_to, None);
    assert_eq!(toolbox.resolve("echo").unwrap().server, "one");
}

#[tokio::test]
async fn prefix_is_shown_to_the_model_and_stripped_on_the_wire() {
    let (one, state) = spawn_fake(vec![tool("echo", echo_schema())], echo_script("one")).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one).prefix("srv.one:"))
        .build()
        .await
        .unwrap();
    let names: Vec<String> = toolbox
        .snapshot()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["srv_one_echo"]);
    let out = toolbox
        .call("srv_one_echo", json!({"message": "x"}))
        .await
        .unwrap();
    assert_eq!(out.text, "one: x");
    assert_eq!(state.lock().unwrap().calls[0].0, "echo");
    // The bridge asks for progress: long tools that report it stay alive.
    assert_eq!(state.lock().unwrap().progress_tokens, 1);
}

#[tokio::test]
async fn is_error_is_model_correctable_with_the_servers_explanation() {
    let (one, _) = spawn_fake(
        vec![tool("fail", json!({"type": "object"}))],
        echo_script("one"),
    )
    .await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let err = toolbox.call("fail", Value::Null).await.unwrap_err();
    assert!(err.is_model_correctable());
    assert_eq!(err.message_for_model(), "disk full; try a smaller file");
    assert!(err.result().unwrap().is_error());
}

#[tokio::test]
async fn arguments_are_checked_before_sending() {
    let (one, state) = spawn_fake(vec![tool("echo", echo_schema())], echo_script("one")).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one.clone()))
        .build()
        .await
        .unwrap();
    let err = toolbox
        .call("echo", json!({"message": 5, "extra": true}))
        .await
        .unwrap_err();
    let ToolError::InvalidArguments { message, .. } = &err else {
        panic!("{err:?}")
    };
    // The built-in validator and (feature `jsonschema`) the full one word
    // it differently; both name the place and the problem.
    assert!(
        message.contains("/message") && message.contains("string"),
        "{message}"
    );
    assert!(message.contains("extra"), "{message}");
    assert!(err.is_model_correctable());
    let err = toolbox
        .call("echo", json!(["not", "an", "object"]))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err:?}");
    assert!(state.lock().unwrap().calls.is_empty(), "nothing was sent");

    // With checking off, the server gets the bad arguments and its -32602 is
    // still the model's to fix.
    let unchecked = Toolbox::builder()
        .server(Server::new("one", one))
        .tool_options(ToolOptions::new().validate_arguments(false))
        .build()
        .await
        .unwrap();
    let err = unchecked.call("echo", json!({"message": 5})).await;
    assert!(err.is_ok(), "the fake echoes anything: {err:?}");
    assert_eq!(state.lock().unwrap().calls.len(), 1);
}

#[tokio::test]
async fn server_invalid_params_is_model_correctable() {
    let script: Script = Box::new(|_, _, _| vec![Out::Error(-32602, "message must not be empty")]);
    let (one, _) = spawn_fake(vec![tool("echo", echo_schema())], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let err = toolbox
        .call("echo", json!({"message": ""}))
        .await
        .unwrap_err();
    let ToolError::InvalidArguments { message, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(message, "message must not be empty");
}

#[tokio::test]
async fn transport_failure_is_fatal_with_the_cause() {
    let script: Script = Box::new(|_, _, _| vec![Out::Close]);
    let (one, _) = spawn_fake(vec![tool("echo", echo_schema())], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let err = toolbox
        .call("echo", json!({"message": "x"}))
        .await
        .unwrap_err();
    assert!(err.is_fatal(), "{err:?}");
    assert!(
        matches!(err.client_error(), Some(ClientError::Closed(_))),
        "{err:?}"
    );
    // What the model is shown: who failed, that it cannot fix it, and why.
    assert_eq!(
        err.message_for_model(),
        "calling tool `echo` failed (the model cannot fix this): the server closed the connection"
    );
}

#[tokio::test]
async fn other_rpc_errors_are_fatal() {
    let script: Script = Box::new(|_, _, _| vec![Out::Error(-32603, "internal error")]);
    let (one, _) = spawn_fake(vec![tool("echo", echo_schema())], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let err = toolbox
        .call("echo", json!({"message": "x"}))
        .await
        .unwrap_err();
    assert!(err.is_fatal());
    assert_eq!(
        err.client_error().and_then(ClientError::rpc).unwrap().code,
        ErrorCode::INTERNAL_ERROR
    );
}

/// A server that, on the first call, swaps its tools (renaming `echo`'s
/// description to v2) and answers "tool set changed; list tools again";
/// afterwards it answers normally.
fn redeploying_script() -> Script {
    Box::new(|s, name, args| {
        s.step += 1;
        if s.step == 1 {
            s.tools = vec![
                json!({"name": "echo", "description": "echo v2", "inputSchema": echo_schema()}),
                tool("added", json!({"type": "object"})),
            ];
            return vec![Out::Error(-32602, "tool set changed; list tools again")];
        }
        vec![Out::Reply(text(format!(
            "{name} v2: {}",
            args["message"].as_str().unwrap_or("?")
        )))]
    })
}

#[tokio::test]
async fn tool_set_changed_relists_and_retries_once() {
    let (one, state) = spawn_fake(vec![tool("echo", echo_schema())], redeploying_script()).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    assert_eq!(state.lock().unwrap().lists, 1);
    let out = toolbox
        .call("echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(out.text, "echo v2: hi");
    {
        let s = state.lock().unwrap();
        assert_eq!(s.lists, 2, "listed again once");
        assert_eq!(s.calls.len(), 2, "retried once");
    }
    let tools = toolbox.snapshot();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].description(), Some("echo v2"));
    assert_eq!(tools[1].name(), "added");
}

#[tokio::test]
async fn tool_set_changed_twice_is_fatal() {
    let script: Script =
        Box::new(|_, _, _| vec![Out::Error(-32602, "tool set changed; list tools again")]);
    let (one, state) = spawn_fake(vec![tool("echo", echo_schema())], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let err = toolbox
        .call("echo", json!({"message": "hi"}))
        .await
        .unwrap_err();
    assert!(err.is_fatal(), "{err:?}");
    assert!(
        err.client_error()
            .and_then(ClientError::rpc)
            .unwrap()
            .is_tool_set_changed()
    );
    assert_eq!(state.lock().unwrap().calls.len(), 2, "exactly one retry");
}

#[tokio::test]
async fn tool_set_changed_and_the_tool_is_gone_is_not_found() {
    let script: Script = Box::new(|s, _, _| {
        s.tools = vec![tool("other", json!({"type": "object"}))];
        vec![Out::Error(-32602, "tool set changed; list tools again")]
    });
    let (one, state) = spawn_fake(vec![tool("echo", echo_schema())], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let err = toolbox
        .call("echo", json!({"message": "hi"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }), "{err:?}");
    assert_eq!(state.lock().unwrap().calls.len(), 1);
}

/// A server whose tool `bump` adds `new_tool` and sends
/// `notifications/tools/list_changed` before its result, as a server would.
fn bumping_script() -> Script {
    Box::new(|s, name, _| match name {
        "bump" => {
            s.tools.push(tool("new_tool", json!({"type": "object"})));
            vec![
                Out::Notify("notifications/tools/list_changed"),
                Out::Reply(text("ok")),
            ]
        }
        _ => vec![Out::Reply(text("?"))],
    })
}

#[tokio::test]
async fn list_changed_notification_makes_the_next_use_relist() {
    let (one, state) = spawn_fake(
        vec![tool("bump", json!({"type": "object"}))],
        bumping_script(),
    )
    .await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    assert!(!toolbox.is_stale());
    toolbox.call("bump", json!({})).await.unwrap();
    assert!(toolbox.is_stale());
    assert_eq!(toolbox.snapshot().len(), 1, "snapshot does no I/O");
    let names: Vec<String> = toolbox
        .tools()
        .await
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["bump", "new_tool"]);
    assert!(!toolbox.is_stale());
    assert_eq!(state.lock().unwrap().lists, 2);
    // No change: no further listing.
    toolbox.tools().await;
    assert_eq!(state.lock().unwrap().lists, 2);
}

#[tokio::test]
async fn standalone_mcp_tool_relists_and_retries_too() {
    let (one, state) = spawn_fake(vec![tool("echo", echo_schema())], redeploying_script()).await;
    let tools = McpTool::list(&one).await.unwrap();
    assert_eq!(tools.len(), 1);
    let out = tools[0].call(json!({"message": "yo"})).await.unwrap();
    assert_eq!(out.text, "echo v2: yo");
    assert_eq!(state.lock().unwrap().calls.len(), 2);
}

#[tokio::test]
async fn duplicate_server_names_are_rejected() {
    let (one, _) = spawn_fake(vec![], echo_script("one")).await;
    let err = Toolbox::builder()
        .server(Server::new("x", one.clone()))
        .server(Server::new("x", one))
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unique"), "{err}");
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema_with_the_feature() {
    let weather = json!({
        "name": "weather",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"temp": {"type": "number"}},
            "required": ["temp"],
        },
    });
    let script: Script = Box::new(|_, _, args| {
        let structured = if args["good"] == json!(true) {
            json!({"temp": 21.5})
        } else {
            json!({"temp": "hot"})
        };
        vec![Out::Reply(
            json!({"content": [], "structuredContent": structured}),
        )]
    });
    let (one, _) = spawn_fake(vec![weather], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let out = toolbox
        .call("weather", json!({"good": true}))
        .await
        .unwrap();
    assert_eq!(out.text, r#"{"temp":21.5}"#);
    assert_eq!(
        out.structured::<serde_json::Value>().unwrap().unwrap(),
        json!({"temp": 21.5})
    );
    let bad = toolbox.call("weather", json!({"good": false})).await;
    if cfg!(feature = "jsonschema") {
        let err = bad.unwrap_err();
        assert!(matches!(err, ToolError::InvalidOutput { .. }), "{err:?}");
        assert!(err.is_fatal());
        assert!(err.to_string().contains("/temp"), "{err}");
        assert_eq!(
            err.result().unwrap().structured_value().unwrap().unwrap(),
            json!({"temp": "hot"})
        );
    } else {
        assert_eq!(bad.unwrap().text, r#"{"temp":"hot"}"#);
    }
}

#[tokio::test]
async fn a_server_without_tools_contributes_none_and_is_not_asked() {
    let (one, state) = spawn_fake_with(
        json!({"resources": {}}),
        vec![tool("echo", echo_schema())],
        echo_script("one"),
    )
    .await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    assert!(toolbox.snapshot().is_empty());
    toolbox.refresh().await.unwrap();
    assert_eq!(state.lock().unwrap().lists, 0);
}

#[cfg(feature = "rig")]
#[tokio::test]
async fn rig_tools_call_through_the_bridge_and_keep_error_owners() {
    use rig_core::tool::ToolErrorKind;

    let (one, state) = spawn_fake(
        vec![
            tool("echo", echo_schema()),
            tool("fail", json!({"type": "object"})),
        ],
        echo_script("one"),
    )
    .await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one).prefix("x_"))
        .build()
        .await
        .unwrap();
    let tools = mcp_tools::rig::rig_tools(&toolbox).await;
    assert_eq!(tools[0].name().as_str(), "x_echo");
    assert_eq!(tools[0].definition().parameters, echo_schema());
    let out = tools[0].execute(json!({"message": "rig"})).await.unwrap();
    assert_eq!(out.as_text(), Some("one: rig"));
    assert_eq!(state.lock().unwrap().calls[0].0, "echo");
    // The bridge asks for progress: long tools that report it stay alive.
    assert_eq!(state.lock().unwrap().progress_tokens, 1);
    let err = tools[1].execute(json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Other);
    assert_eq!(err.model_feedback(), Some("disk full; try a smaller file"));
    let err = tools[0].execute(json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArgs);
}

#[tokio::test]
async fn a_relisting_dropped_midway_is_not_lost() {
    let script: Script = Box::new(|s, _, _| {
        s.tools.push(tool("new_tool", json!({"type": "object"})));
        vec![
            Out::Notify("notifications/tools/list_changed"),
            Out::Reply(text("ok")),
        ]
    });
    let (one, state) = spawn_fake(vec![tool("bump", json!({"type": "object"}))], script).await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    toolbox.call("bump", json!({})).await.unwrap();
    assert!(toolbox.is_stale());
    state.lock().unwrap().hang_list = true;
    let dropped = tokio::time::timeout(Duration::from_millis(100), toolbox.tools()).await;
    assert!(dropped.is_err(), "the listing hangs");
    assert!(toolbox.is_stale(), "still marked for listing");
    state.lock().unwrap().hang_list = false;
    let names: Vec<String> = toolbox
        .tools()
        .await
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["bump", "new_tool"]);
    assert!(!toolbox.is_stale());
}

#[tokio::test]
async fn raw_argument_text_from_a_model_api() {
    let (one, state) = spawn_fake(
        vec![
            tool("echo", echo_schema()),
            tool("fail", json!({"type": "object"})),
        ],
        echo_script("one"),
    )
    .await;
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one))
        .build()
        .await
        .unwrap();
    let out = toolbox
        .call_raw("echo", r#"{"message":"raw"}"#)
        .await
        .unwrap();
    assert_eq!(out.text, "one: raw");
    let err = toolbox
        .call_raw("echo", r#"{"message": "unterminated"#)
        .await
        .unwrap_err();
    let ToolError::InvalidArguments { message, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        message.starts_with("the arguments are not valid JSON"),
        "{message}"
    );
    // Blank text is "no arguments" (sent as `{}`).
    let err = toolbox.call_raw("fail", "  ").await.unwrap_err();
    assert!(matches!(err, ToolError::ToolFailed { .. }), "{err:?}");
    let calls = state.lock().unwrap().calls.clone();
    assert_eq!(
        calls,
        [
            ("echo".to_owned(), json!({"message": "raw"})),
            ("fail".to_owned(), json!({}))
        ]
    );
    // The same on a bare tool.
    let tool = toolbox.get("echo").unwrap();
    assert_eq!(
        tool.call_raw(r#"{"message":"t"}"#).await.unwrap().text,
        "one: t"
    );
}

#[tokio::test]
async fn listed_tools_are_not_listed_again_and_their_changes_are_left_to_the_lister() {
    let defs = vec![tool("bump", json!({"type": "object"}))];
    let (one, state) = spawn_fake(defs.clone(), bumping_script()).await;
    let known: Vec<mcp_proto::schema::Tool> = serde_json::from_value(Value::from(defs)).unwrap();
    let toolbox = Toolbox::builder()
        .server(Server::new("one", one).listed(known))
        .build()
        .await
        .unwrap();
    assert_eq!(
        state.lock().unwrap().lists,
        0,
        "handed-in tools are not listed"
    );
    toolbox.call("bump", json!({})).await.unwrap();
    assert!(
        !toolbox.is_stale(),
        "the lister watches list_changed, not the toolbox"
    );
    assert_eq!(toolbox.tools().await.len(), 1);
    assert_eq!(state.lock().unwrap().lists, 0);
}

/// A toolbox built from a listing it is handed in an `Arc` holds no copy
/// of the definitions: each tool's definition is the listing's own (a host
/// keeps each server's listing and builds a new toolbox whenever one
/// changes; copies made a catalog cost three times its size).
#[tokio::test]
async fn a_listed_arc_is_shared_not_copied() {
    let (client, _) = spawn_fake(vec![], echo_script("a")).await;
    let listing: Vec<mcp_proto::schema::Tool> = serde_json::from_value(json!([
        tool("echo", echo_schema()),
        tool("other", json!({"type": "object"})),
    ]))
    .unwrap();
    let listing = Arc::new(listing);
    let tb = Toolbox::builder()
        .server(Server::new("a", client).listed(listing.clone()))
        .listen(false)
        .build()
        .await
        .unwrap();
    for (i, name) in ["echo", "other"].into_iter().enumerate() {
        let t = tb.get(name).unwrap();
        assert!(
            std::ptr::eq(t.definition(), &listing[i]),
            "{name}: the toolbox holds a copy of its definition"
        );
        assert_eq!(t.definition().name, name);
    }
    // Every tool of a server shares one copy of the server's name (a host
    // of many servers keeps thousands of tools).
    let (echo, other) = (tb.get("echo").unwrap(), tb.get("other").unwrap());
    assert_eq!(echo.server(), Some("a"));
    assert!(
        std::ptr::eq(echo.server().unwrap(), other.server().unwrap()),
        "each tool holds its own copy of the server's name"
    );
}

/// `openai_definitions`/`anthropic_definitions` serialize to the same JSON
/// as the `Value` forms, with each schema written verbatim (its member
/// order and number spellings kept: it is never decoded).
#[tokio::test]
async fn model_definitions_write_the_schema_verbatim() {
    let schema = r#"{"type":"object","properties":{"zeta":{"type":"number","maximum":1.50},"alpha":{"type":"string"}}}"#;
    let listing: Vec<mcp_proto::schema::Tool> = serde_json::from_str(&format!(
        r#"[{{"name":"echo","description":"says \"hi\"","inputSchema":{schema}}},{{"name":"bare","inputSchema":{{"type":"object"}}}}]"#
    ))
    .unwrap();
    let (client, _) = spawn_fake(vec![], echo_script("a")).await;
    let tb = Toolbox::builder()
        .server(Server::new("a", client).listed(listing))
        .listen(false)
        .build()
        .await
        .unwrap();
    let openai = serde_json::to_string(&tb.openai_definitions().await).unwrap();
    assert!(
        openai.contains(&format!(r#""parameters":{schema}"#)),
        "{openai}"
    );
    let anthropic = serde_json::to_string(&tb.anthropic_definitions().await).unwrap();
    assert!(
        anthropic.contains(&format!(r#""input_schema":{schema}"#)),
        "{anthropic}"
    );
    // The same values as the `Value` forms (which decode the schema).
    assert_eq!(
        serde_json::from_str::<Value>(&openai).unwrap(),
        Value::Array(tb.openai_tools().await)
    );
    assert_eq!(
        serde_json::from_str::<Value>(&anthropic).unwrap(),
        Value::Array(tb.anthropic_tools().await)
    );
    let defs = tb.anthropic_definitions().await;
    assert_eq!(
        defs[1].to_value(),
        json!({"name": "bare", "input_schema": {"type": "object"}})
    );
    assert_eq!(defs[0].api(), mcp_tools::ModelApi::Anthropic);
}
