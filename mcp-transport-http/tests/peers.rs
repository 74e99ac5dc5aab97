//! The transport against real MCP servers over HTTP:
//! `@modelcontextprotocol/server-everything` (TypeScript SDK, `streamableHttp`
//! mode, legacy era with SSE priming events) and a Python SDK (`mcp==2.3.0`)
//! server in both eras.
//!
//! Peers come from `cargo xtask peers` (`MCP_PEERS_DIR`, else
//! `<workspace>/.peers`). Missing peers skip the test, unless
//! `MCP_REQUIRE_PEERS=1`, which makes them fail.
#![allow(missing_docs, clippy::unwrap_used)]

use std::pin::Pin;
use std::time::Duration;

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Notification, Request, RequestId, Response};
use mcp_proto::transport::{Transport, TransportError, TransportExt};
use mcp_proto::version::ProtocolVersion;
use mcp_transport_http::HttpTransport;
use serde_json::{Value, json};
use tokio::process::Child;

use test_support::{free_port, listening};

async fn everything() -> Option<(Child, String)> {
    let port = free_port();
    let mut cmd = test_support::everything()?.arg("streamableHttp").to_tokio();
    cmd.env("PORT", port.to_string());
    let child = listening(cmd, port).await;
    Some((child, format!("http://127.0.0.1:{port}/mcp")))
}

async fn python() -> Option<(Child, String)> {
    python_in("streamable-http", "/mcp").await
}

async fn python_in(mode: &str, path: &str) -> Option<(Child, String)> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/py_server.py");
    let port = free_port();
    let cmd = test_support::python_running(script)?
        .arg(port.to_string())
        .arg(mode)
        .to_tokio();
    let child = listening(cmd, port).await;
    Some((child, format!("http://127.0.0.1:{port}{path}")))
}

fn raw(v: Value) -> Option<RawJson> {
    Some(RawJson::from_string(v.to_string()).unwrap())
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
            RawJson::from_string(reply.to_string()).unwrap(),
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

/// Two sessions on one pool (`new_session`) against server-everything: each
/// gets a session of its own, calls on both are answered, and closing one
/// (its DELETE) leaves the other working.
#[tokio::test]
async fn server_everything_two_sessions_on_one_pool() {
    let Some((_child, url)) = everything().await else {
        return;
    };
    let mut a = HttpTransport::new(&url).unwrap();
    let mut b = a.new_session();
    legacy_handshake(&mut a, json!({})).await;
    legacy_handshake(&mut b, json!({})).await;
    let (sa, sb) = (a.session_id().unwrap(), b.session_id().unwrap());
    assert_ne!(sa, sb);
    for (t, who) in [(&mut a, "a"), (&mut b, "b")] {
        t.send(req(
            2,
            "tools/call",
            json!({"name":"echo","arguments":{"message":format!("from {who}")}}),
        ))
        .await
        .unwrap();
    }
    for (t, who) in [(&mut a, "a"), (&mut b, "b")] {
        let (r, _) = answer(t, 2).await;
        assert!(text_of(&r).contains(&format!("from {who}")), "{r}");
    }
    tokio::time::timeout(Duration::from_secs(6), a.close())
        .await
        .unwrap()
        .unwrap();
    b.send(req(
        3,
        "tools/call",
        json!({"name":"echo","arguments":{"message":"b still here"}}),
    ))
    .await
    .unwrap();
    let (r, _) = answer(&mut b, 3).await;
    assert!(text_of(&r).contains("b still here"), "{r}");
    assert_eq!(b.session_id().as_deref(), Some(sb.as_str()));
    tokio::time::timeout(Duration::from_secs(6), b.close())
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
    assert_eq!(tools["tools"].as_array().unwrap().len(), 5);
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

/// Adds the 2026-07-28 per-request `_meta` fields (keeping any already there,
/// such as a progress token).
fn with_meta(mut params: Value) -> Value {
    let Value::Object(m) = meta() else {
        unreachable!()
    };
    if !params["_meta"].is_object() {
        params["_meta"] = json!({});
    }
    params["_meta"].as_object_mut().unwrap().extend(m);
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

/// A loopback TCP proxy that cuts the first connection whose server-to-client
/// bytes contain `marker`, right after forwarding that chunk (a dropped
/// response stream, mid-answer). Returns its URL prefix.
async fn cutting_proxy(
    upstream_port: u16,
    marker: &'static [u8],
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let cut = Arc::new(AtomicBool::new(false));
    let cut2 = cut.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let cut = cut2.clone();
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream_port)).await
                else {
                    return;
                };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                });
                let mut buf = vec![0u8; 16 * 1024];
                while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let chunk = &buf[..n];
                    if cw.write_all(chunk).await.is_err() {
                        break;
                    }
                    if !cut.load(Ordering::SeqCst)
                        && chunk.windows(marker.len()).any(|w| w == marker)
                    {
                        cut.store(true, Ordering::SeqCst);
                        break;
                    }
                }
                up.abort();
                // Dropping both halves closes the client's connection.
            });
        }
    });
    (port, cut)
}

/// Caveat: server-everything's `InMemoryEventStore.replayEventsAfter` returns
/// an *event* id where the SDK expects the *stream* id, so messages produced
/// after the reconnection are not routed to it. The tool is therefore short
/// (done ~100 ms after the cut) and every remaining message is replayed from
/// the store when the transport reconnects (250 ms backoff: the server sends
/// no `retry`).
#[tokio::test]
async fn server_everything_dropped_stream_is_resumed_with_last_event_id() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let Some((_child, url)) = everything().await else {
        return;
    };
    let upstream: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    // Cut the POST stream right after the first progress notification.
    let (port, cut) = cutting_proxy(upstream, b"\"progress\":1").await;
    let mut t = HttpTransport::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    legacy_handshake(&mut t, json!({})).await;
    t.send(req(
        2,
        "tools/call",
        json!({"name":"trigger-long-running-operation","arguments":{"duration":0.1,"steps":2},"_meta":{"progressToken":"p"}}),
    ))
    .await
    .unwrap();
    let (r, before) = answer(&mut t, 2).await;
    assert!(
        cut.load(std::sync::atomic::Ordering::SeqCst),
        "the proxy never cut the stream"
    );
    assert!(r.to_string().contains("completed"), "{r}");
    // Every progress notification arrived exactly once, across the cut.
    let steps: Vec<i64> = before
        .iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "notifications/progress" => {
                let p: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
                p["progress"].as_i64()
            }
            _ => None,
        })
        .collect();
    assert_eq!(steps, [1, 2]);
}

#[tokio::test]
async fn python_sdk_modern_cancellation_closes_the_stream() {
    let Some((_child, url)) = python().await else {
        return;
    };
    let mut t = HttpTransport::new(&url).unwrap();
    set_version(&mut t, ProtocolVersion::V2026_07_28);
    t.send(req(
        1,
        "tools/call",
        with_meta(json!({"name":"slow","arguments":{},"_meta":{"progressToken":1}})),
    ))
    .await
    .unwrap();
    let m = recv(&mut t).await.unwrap();
    assert_eq!(m.method(), Some("notifications/progress"), "{m:?}");
    t.send(Notification::new("notifications/cancelled", raw(json!({"requestId":1}))).into())
        .await
        .unwrap();
    // The server noticed the closed stream and cancelled the handler.
    let mut cancelled = String::new();
    for i in 0..50 {
        t.send(req(
            100 + i,
            "tools/call",
            with_meta(json!({"name":"was_cancelled","arguments":{}})),
        ))
        .await
        .unwrap();
        cancelled = text_of(&answer(&mut t, 100 + i).await.0);
        if cancelled == "true" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(cancelled, "true");
}

#[tokio::test]
async fn python_sdk_http_sse_2024_11_05_fallback() {
    // The Python SDK's deprecated HTTP+SSE server: GET /sse, POST /messages/.
    // A POST to /sse is refused (405) without a JSON-RPC body, so the
    // transport falls back: GET, `endpoint` event, POST there.
    let Some((_child, url)) = python_in("sse", "/sse").await else {
        return;
    };
    let mut t = HttpTransport::new(&url).unwrap();
    t.send(req(
        1,
        "initialize",
        json!({"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"mcp-rs-test","version":"0"}}),
    ))
    .await
    .unwrap();
    let (init, _) = answer(&mut t, 1).await;
    assert!(t.is_legacy_sse());
    set_version(
        &mut t,
        ProtocolVersion::parse(init["protocolVersion"].as_str().unwrap()).unwrap(),
    );
    t.send(Notification::new("notifications/initialized", None).into())
        .await
        .unwrap();
    t.send(req(
        2,
        "tools/call",
        json!({"name":"echo","arguments":{"text":"old transport"}}),
    ))
    .await
    .unwrap();
    assert_eq!(text_of(&answer(&mut t, 2).await.0), "echo: old transport");
    tokio::time::timeout(Duration::from_secs(6), t.close())
        .await
        .unwrap()
        .unwrap();
}

/// `peers/python_server.py` served by `uvicorn --uds` on a fresh socket:
/// the socket's directory (removed on drop), the server, and its URL.
#[cfg(unix)]
async fn python_on_socket() -> Option<(test_support::SocketDir, Child, String)> {
    let dir = test_support::SocketDir::new();
    let cmd = test_support::python_socket_server(&dir.path())?.to_tokio();
    let child = test_support::listening_on_socket(cmd, &dir.path()).await;
    let url = dir.url();
    Some((dir, child, url))
}

/// The Python SDK over a Unix socket, 2025-11-25: a session, SSE answers
/// with progress, the session `DELETE` on close.
#[cfg(unix)]
#[tokio::test]
async fn python_sdk_over_a_unix_socket_legacy_era() {
    let Some((_dir, _child, url)) = python_on_socket().await else {
        return;
    };
    let mut t = HttpTransport::new(&url).unwrap();
    let init = legacy_handshake(&mut t, json!({})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert!(t.session_id().is_some(), "a session over the socket");
    t.send(req(
        2,
        "tools/call",
        json!({"name":"slow_count","arguments":{"steps":3},"_meta":{"progressToken":2}}),
    ))
    .await
    .unwrap();
    let (r, before) = answer(&mut t, 2).await;
    assert_eq!(text_of(&r), "counted to 3");
    let progress = before
        .iter()
        .filter(|m| m.method() == Some("notifications/progress"))
        .count();
    assert_eq!(progress, 3, "{before:?}");
    tokio::time::timeout(Duration::from_secs(6), t.close())
        .await
        .unwrap()
        .unwrap();
}

/// The Python SDK over a Unix socket, 2026-07-28: `server/discover` and a
/// tool call, no session.
#[cfg(unix)]
#[tokio::test]
async fn python_sdk_over_a_unix_socket_modern_era() {
    let Some((_dir, _child, url)) = python_on_socket().await else {
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
    t.send(req(
        2,
        "tools/call",
        with_meta(json!({"name":"echo","arguments":{"text":"through the socket"}})),
    ))
    .await
    .unwrap();
    assert_eq!(text_of(&answer(&mut t, 2).await.0), "through the socket");
    t.close().await.unwrap();
}
