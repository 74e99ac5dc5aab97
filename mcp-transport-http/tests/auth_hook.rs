//! The auth hook's per-request surface: `request_headers` sees each
//! request's method and URL, `on_response` every answer's headers, and a
//! refused request is retried up to `MAX_AUTH_RETRIES` times with the
//! count in `Unauthorized::retries`.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::sync::Mutex;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Request};
use mcp_proto::transport::TransportExt;
use mcp_transport_http::{AuthProvider, BoxFuture, HttpTransport, MAX_AUTH_RETRIES, Unauthorized};
use serde_json::json;
use support::*;

/// Signs each request with a counter, learns a "nonce" from any answer,
/// and asks for a retry on every refusal.
#[derive(Default)]
struct PerRequest {
    seen: Mutex<Vec<(Method, Uri)>>,
    nonce: Mutex<Option<String>>,
    refusals: Mutex<Vec<u32>>,
}

impl AuthProvider for PerRequest {
    fn header(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        Box::pin(async { None })
    }
    fn request_headers<'a>(&'a self, method: &'a Method, url: &'a Uri) -> BoxFuture<'a, HeaderMap> {
        let n = {
            let mut seen = self.seen.lock().unwrap();
            seen.push((method.clone(), url.clone()));
            seen.len()
        };
        let nonce = self.nonce.lock().unwrap().clone().unwrap_or_default();
        Box::pin(async move {
            let mut h = HeaderMap::new();
            h.insert(
                "authorization",
                HeaderValue::from_str(&format!("Proof {n}")).unwrap(),
            );
            h.insert("x-nonce", HeaderValue::from_str(&nonce).unwrap());
            h
        })
    }
    fn on_response(&self, _: &Uri, _: StatusCode, headers: &HeaderMap) {
        if let Some(n) = headers.get("x-next-nonce").and_then(|v| v.to_str().ok()) {
            *self.nonce.lock().unwrap() = Some(n.to_owned());
        }
    }
    fn on_unauthorized(
        &self,
        refusal: Unauthorized,
    ) -> BoxFuture<'_, Result<bool, mcp_transport_http::BoxError>> {
        self.refusals.lock().unwrap().push(refusal.retries);
        Box::pin(async { Ok(true) })
    }
}

fn tools_list(id: i64) -> Message {
    Request::new(
        id.into(),
        "tools/list",
        Some(RawJson::from_string("{}".into()).unwrap()),
    )
    .into()
}

/// One `tools/list` through a transport with a fresh [`PerRequest`].
async fn one_call(
    server: &Server,
) -> (
    std::sync::Arc<PerRequest>,
    Result<Message, mcp_proto::transport::TransportError>,
) {
    let auth = std::sync::Arc::new(PerRequest::default());
    let mut t = HttpTransport::builder(&server.url)
        .auth(auth.clone())
        .build()
        .unwrap();
    t.send(tools_list(1)).await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .expect("an answer within 10 s")
        .expect("the transport is open");
    (auth, answer)
}

#[tokio::test]
async fn per_request_headers_nonce_from_a_401_and_a_second_retry() {
    // 401 twice (the second time with a nonce to use), then the answer.
    let server = serve(|r: &Rec| {
        let nonce = r.header("x-nonce").unwrap_or_default().to_owned();
        if r.index == 0 {
            return Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "who?".into()).into();
        }
        if nonce != "n1" {
            return Reply2 {
                reply: Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "nonce".into()),
                headers: vec![("x-next-nonce", "n1".into())],
            };
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"ok": true}))).into()
    })
    .await;
    let (auth, answer) = one_call(&server).await;
    let m = answer.unwrap();
    assert!(matches!(m, Message::Response(_)), "{m:?}");
    let auths: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(
        auths,
        ["Proof 1", "Proof 2", "Proof 3"],
        "fresh headers per attempt"
    );
    let seen = auth.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .all(|(m, u)| m == Method::POST && u.to_string() == server.url),
        "{seen:?}"
    );
    assert_eq!(*auth.refusals.lock().unwrap(), [0, 1]);
}

#[tokio::test]
async fn retries_stop_at_the_limit() {
    let server =
        serve(|_: &Rec| Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "no".into()).into())
            .await;
    let (auth, answer) = one_call(&server).await;
    assert!(answer.is_err(), "{answer:?}");
    assert_eq!(server.requests().len(), 1 + MAX_AUTH_RETRIES as usize);
    assert_eq!(*auth.refusals.lock().unwrap(), [0, 1]);
}
