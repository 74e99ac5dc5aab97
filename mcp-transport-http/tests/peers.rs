//! The transport against real MCP servers over HTTP:
//! `@modelcontextprotocol/server-everything` (TypeScript SDK, `streamableHttp`
//! mode, legacy era with SSE priming events) and a Python SDK (`mcp==2.3.0`)
//! server in both eras.
//!
//! Peers come from `cargo xtask peers` (`MCP_PEERS_DIR`, else
//! `<workspace>/.peers`). Missing peers skip the test, unless
//! `MCP_REQUIRE_PEERS=1`, which makes them fail.
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::time::Duration;

use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId, Response};
use mcp_proto::transport::{Transport, TransportError, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::HttpTransport;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

fn peers_dir() -> PathBuf {
    match std::env::var_os("MCP_PEERS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"),
    }
}

/// The peer's path, or `None` (after a skip message) when it is missing.
fn peer(rel: &str) -> Option<PathBuf> {
    let p = peers_dir().join(rel);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("MCP_REQUIRE_PEERS").as_deref() == Ok("1") {
        panic!(
            "peer {} is missing (MCP_REQUIRE_PEERS=1); run `cargo xtask peers`",
            p.display()
        );
    }
    eprintln!(
        "SKIP: peer {} not installed; run `cargo xtask peers`",
        p.display()
    );
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_listening(port: u16, child: &mut Child) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("peer exited early with {status}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("peer did not listen on port {port} within 30 s");
}

async fn everything() -> Option<(Child, String)> {
    let dir = peer("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")?;
    let node = peer("npm/node_modules/.bin/node")?;
    let port = free_port();
    let mut child = Command::new(node)
        .arg(dir)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_listening(port, &mut child).await;
    Some((child, format!("http://127.0.0.1:{port}/mcp")))
}

async fn python() -> Option<(Child, String)> {
    let py = peer("py/bin/python")?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_server.py");
    let port = free_port();
    let mut child = Command::new(py)
        .arg(script)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_listening(port, &mut child).await;
    Some((child, format!("http://127.0.0.1:{port}/mcp")))
}

fn raw(v: Value) -> Option<Box<RawValue>> {
    Some(RawValue::from_string(v.to_string()).unwrap())
}

fn req(id: i64, method: &'static str, params: Value) -> Message {
    Request::new(id.into(), method, raw(params)).into()
}

async fn recv(t: &mut HttpTransport) -> Result<Message, TransportError> {
    tokio::time::timeout(Duration::from_secs(20), t.recv())
        .await
        .expect("no message within 20 s")
        .expect("transport ended")
}

/// Receives until the answer to `id`, collecting what came before it.
async fn answer(t: &mut HttpTransport, id: i64) -> (Value, Vec<Message>) {
    let mut before = Vec::new();
    loop {
        let m = recv(t)
            .await
            .unwrap_or_else(|e| panic!("error waiting for {id}: {e}"));
        match &m {
            Message::Response(r) if r.id == RequestId::Number(id) => {
                return (serde_json::from_str(r.result.get()).unwrap(), before);
            }
            Message::Error(e) if e.id == Some(RequestId::Number(id)) => {
                panic!("request {id} failed: {:?}", e.error);
            }
            _ => before.push(m),
        }
    }
}

fn set_version(t: &mut HttpTransport, v: ProtocolVersion) {
    Pin::new(t).set_protocol_version(v);
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn legacy_handshake(t: &mut HttpTransport, caps: Value) -> Value {
    t.send(req(
        1,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":caps,"clientInfo":{"name":"mcp-rs-test","version":"0"}}),
    ))
    .await
    .unwrap();
    let (init, _) = answer(t, 1).await;
    set_version(
        t,
        ProtocolVersion::parse(init["protocolVersion"].as_str().unwrap()).unwrap(),
    );
    t.send(Notification::new("notifications/initialized", None).into())
        .await
        .unwrap();
    init
}

#[tokio::test]
async fn server_everything_streamable_http_legacy() {
    let Some((_child, url)) = everything().await else {
        return;
    };
    let mut t = HttpTransport::builder(&url)
        .standalone_stream(true)
        .build()
        .unwrap();
    let init = legacy_handshake(&mut t, json!({"sampling":{}})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    let session = t
        .session_id()
        .expect("server-everything assigns a session id");
    assert!(!session.is_empty());

    // tools/list (answered over SSE with a priming event, which is skipped).
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    let (tools, _) = answer(&mut t, 2).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    t.send(req(
        3,
        "tools/call",
        json!({"name":"echo","arguments":{"message":"hello over http"}}),
    ))
    .await
    .unwrap();
    let (r, _) = answer(&mut t, 3).await;
    assert!(text_of(&r).contains("hello over http"), "{r}");

    // Progress notifications on the request's SSE stream, before the answer.
    t.send(req(
        4,
        "tools/call",
        json!({"name":"trigger-long-running-operation","arguments":{"duration":0.3,"steps":3},"_meta":{"progressToken":"p4"}}),
    ))
    .await
    .unwrap();
    let (_, before) = answer(&mut t, 4).await;
    let progress = before
        .iter()
        .filter(|m| m.method() == Some("notifications/progress"))
        .count();
    assert_eq!(progress, 3, "{before:?}");

    // A server-to-client request on the POST's stream; our reply is POSTed back.
    t.send(req(
        5,
        "tools/call",
        json!({"name":"trigger-sampling-request","arguments":{"prompt":"hi"}}),
    ))
    .await
    .unwrap();
    let m = recv(&mut t).await.unwrap();
    let Message::Request(sampling) = m else {
        panic!("expected sampling/createMessage, got {m:?}")
    };
    assert_eq!(sampling.method, "sampling/createMessage");
    let reply = json!({"role":"assistant","content":{"type":"text","text":"sampled!"},"model":"test","stopReason":"endTurn"});
    t.send(
        Response::new(
            sampling.id.clone(),
            RawValue::from_string(reply.to_string()).unwrap(),
        )
        .into(),
    )
    .await
    .unwrap();
    let (r, _) = answer(&mut t, 5).await;
    assert!(r.to_string().contains("sampled!"), "{r}");

    // Concurrent requests over the pool.
    for i in 10..20 {
        t.send(req(
            i,
            "tools/call",
            json!({"name":"get-sum","arguments":{"a":i,"b":1}}),
        ))
        .await
        .unwrap();
    }
    let mut got = 0;
    while got < 10 {
        if let Message::Response(_) = recv(&mut t).await.unwrap() {
            got += 1;
        }
    }
    // DELETE on close (the server accepts it), in bounded time.
    tokio::time::timeout(Duration::from_secs(6), t.close())
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn server_everything_modern_probe_falls_back() {
    // server-everything speaks only legacy revisions: a 2026-07-28 probe is
    // answered 400 with a JSON-RPC error body (-32000, not a modern code),
    // which reaches the client as an error response it can recognise.
    let Some((_child, url)) = everything().await else {
        return;
    };
    let mut t = HttpTransport::new(&url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(
        1,
        "server/discover",
        json!({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}),
    ))
    .await
    .unwrap();
    match recv(&mut t).await {
        Ok(Message::Error(e)) => {
            assert_eq!(e.id, Some(RequestId::Number(1)));
            assert!(!e.error.code.is_modern_only(), "{:?}", e.error);
        }
        other => panic!("{other:?}"),
    }
    // Then legacy initialize on the same transport works.
    legacy_handshake(&mut t, json!({})).await;
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    answer(&mut t, 2).await;
}

#[tokio::test]
async fn python_sdk_legacy_era() {
    let Some((_child, url)) = python().await else {
        return;
    };
    let mut t = HttpTransport::new(&url).unwrap();
    let init = legacy_handshake(&mut t, json!({})).await;
    assert!(
        init["protocolVersion"]
            .as_str()
            .unwrap()
            .starts_with("2025-")
    );
    assert!(
        t.session_id().is_some(),
        "the Python SDK assigns a session id"
    );
    t.send(req(2, "tools/list", json!({}))).await.unwrap();
    let (tools, _) = answer(&mut t, 2).await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 3);
    t.send(req(
        3,
        "tools/call",
        json!({"name":"echo","arguments":{"text":"py"}}),
    ))
    .await
    .unwrap();
    assert_eq!(text_of(&answer(&mut t, 3).await.0), "echo: py");
    t.send(req(
        4,
        "tools/call",
        json!({"name":"progress","arguments":{},"_meta":{"progressToken":4}}),
    ))
    .await
    .unwrap();
    let (r, before) = answer(&mut t, 4).await;
    assert_eq!(text_of(&r), "done");
    assert_eq!(
        before
            .iter()
            .filter(|m| m.method() == Some("notifications/progress"))
            .count(),
        3
    );
    tokio::time::timeout(Duration::from_secs(6), t.close())
        .await
        .unwrap()
        .unwrap();
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-rs-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn with_meta(mut params: Value) -> Value {
    params["_meta"] = meta();
    params
}

#[tokio::test]
async fn python_sdk_modern_era_with_x_mcp_header() {
    let Some((_child, url)) = python().await else {
        return;
    };
    let mut t = HttpTransport::new(&url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(1, "server/discover", with_meta(json!({}))))
        .await
        .unwrap();
    let (disc, _) = answer(&mut t, 1).await;
    assert!(disc.to_string().contains("2026-07-28"), "{disc}");
    assert_eq!(t.session_id(), None);

    t.send(req(2, "tools/list", with_meta(json!({}))))
        .await
        .unwrap();
    let (tools, _) = answer(&mut t, 2).await;
    let regional = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "regional")
        .unwrap();
    assert_eq!(
        regional["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );

    // The transport learned the annotation: Mcp-Param-Region is sent (with
    // the Base64 sentinel for a non-ASCII value) and the server, which
    // validates headers against the body, accepts it.
    t.send(req(
        3,
        "tools/call",
        with_meta(json!({"name":"regional","arguments":{"region":"Zürich","query":"q"}})),
    ))
    .await
    .unwrap();
    assert_eq!(text_of(&answer(&mut t, 3).await.0), "Zürich: q");

    t.send(req(
        4,
        "tools/call",
        with_meta(json!({"name":"progress","arguments":{},"_meta":{"progressToken":4}})),
    ))
    .await
    .unwrap();
    assert_eq!(text_of(&answer(&mut t, 4).await.0), "done");

    // A transport that never saw tools/list omits the header: the server
    // answers 400 HeaderMismatch (-32020) as a JSON-RPC error, delivered
    // as an error response, not a transport failure.
    let mut fresh = HttpTransport::new(&url).unwrap();
    set_version(&mut fresh, ProtocolVersion::V2026_07_28);
    fresh
        .send(req(
            5,
            "tools/call",
            with_meta(json!({"name":"regional","arguments":{"region":"eu","query":"q"}})),
        ))
        .await
        .unwrap();
    match recv(&mut fresh).await {
        Ok(Message::Error(e)) => {
            assert_eq!(e.id, Some(RequestId::Number(5)));
            assert_eq!(e.error.code.0, -32020, "{:?}", e.error);
        }
        other => panic!("{other:?}"),
    }
}
