//! The response cache against an in-process fake server (the real `Client`
//! over `mcp_proto::transport::channel`), for what the real peers do not
//! send: several pages with different `ttlMs` and `cacheScope`s.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use mcp_client::{Client, ListKind};
use mcp_host::{CacheTarget, ResponseCache};
use mcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Response};
use mcp_proto::schema::Tool;
use mcp_proto::transport::{TransportExt, channel};
use mcp_proto::{ErrorCode, ErrorObject};
use serde_json::{Value, json};

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

/// A legacy server whose `tools/list` has two pages: the first fresh for a
/// minute (public), the second with `second_page` hints. `bump` sends
/// `notifications/tools/list_changed`. Counts `tools/list` requests.
async fn fake(second_page: Value) -> (Client, Arc<Mutex<usize>>) {
    let (client_end, mut server) = channel::pair();
    let lists = Arc::new(Mutex::new(0));
    let counter = lists.clone();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = server.recv().await {
            let Message::Request(req) = msg else { continue };
            let params = test_support::params(&req);
            let (reply, notify) = match &*req.method {
                "initialize" => (
                    Ok(json!({
                        "protocolVersion": params["protocolVersion"],
                        "capabilities": {"tools": {"listChanged": true}},
                        "serverInfo": {"name": "fake", "version": "1"},
                    })),
                    false,
                ),
                "tools/list" if params["cursor"] == "2" => {
                    let mut page = second_page.clone();
                    page["tools"] = json!([tool("b")]);
                    (Ok(page), false)
                }
                "tools/list" => {
                    *counter.lock().unwrap() += 1;
                    (
                        Ok(
                            json!({"tools": [tool("a")], "nextCursor": "2", "ttlMs": 60000, "cacheScope": "public"}),
                        ),
                        false,
                    )
                }
                "tools/call" => (Ok(json!({"content": []})), true),
                _ => (Err(()), false),
            };
            if notify {
                let n = Notification::new("notifications/tools/list_changed", None);
                server.send(n.into()).await.unwrap();
            }
            let msg: Message = match reply {
                Ok(v) => Response::new(req.id, mcp_proto::RawJson::from_value(&v).unwrap()).into(),
                Err(()) => ErrorResponse::new(
                    Some(req.id),
                    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"),
                )
                .into(),
            };
            if server.send(msg).await.is_err() {
                return;
            }
        }
    });
    let client = Client::builder("t", "1").connect(client_end).await.unwrap();
    (client, lists)
}

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
async fn pages_are_merged_and_a_private_page_makes_the_list_private() {
    let (client, lists) = fake(json!({"ttlMs": 60000, "cacheScope": "private"})).await;
    let cache = ResponseCache::memory();
    let alice = CacheTarget::new("fake").partition("alice");
    let bob = CacheTarget::new("fake").partition("bob");
    let tools: Vec<Tool> = cache.list_all(&client, &alice).await.unwrap();
    assert_eq!(names(&tools), ["a", "b"], "every page, merged");
    let again: Vec<Tool> = cache.list_all(&client, &alice).await.unwrap();
    assert_eq!(names(&again), ["a", "b"]);
    assert_eq!(
        *lists.lock().unwrap(),
        1,
        "alice's second listing came from the cache"
    );
    let _: Vec<Tool> = cache.list_all(&client, &bob).await.unwrap();
    assert_eq!(
        *lists.lock().unwrap(),
        2,
        "a private list is not served to bob"
    );
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses), (1, 2));
}

#[tokio::test]
async fn a_page_without_ttl_leaves_the_list_uncached() {
    let (client, lists) = fake(json!({"cacheScope": "public"})).await;
    let cache = ResponseCache::memory();
    let target = CacheTarget::new("fake");
    for _ in 0..2 {
        let _: Vec<Tool> = cache.list_all(&client, &target).await.unwrap();
    }
    assert_eq!(*lists.lock().unwrap(), 2);
    assert!(cache.cached_list::<Tool>(&target).is_none());
}

#[tokio::test]
async fn list_changed_invalidates() {
    let (client, lists) = fake(json!({"ttlMs": 60000})).await;
    let cache = ResponseCache::memory();
    let target = CacheTarget::new("fake");
    let mut changes = client.list_changed(ListKind::Tools);
    let _: Vec<Tool> = cache.list_all(&client, &target).await.unwrap();
    assert!(
        cache.cached_list::<Tool>(&target).is_some(),
        "absent scope is public"
    );
    client.call_tool("bump", json!({})).await.unwrap();
    changes.changed().await.unwrap();
    cache.invalidate(&target.server, ListKind::Tools);
    assert!(cache.cached_list::<Tool>(&target).is_none());
    let _: Vec<Tool> = cache.list_all(&client, &target).await.unwrap();
    assert_eq!(*lists.lock().unwrap(), 2);
}
