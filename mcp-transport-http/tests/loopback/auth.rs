//! The auth hook: one refresh after a 401, and a typed error without one.

use super::*;

/// Hands out "old" until told the server refused it, then "new".
#[derive(Default)]
struct RefreshingToken {
    refreshed: std::sync::atomic::AtomicBool,
    challenges: std::sync::Mutex<Vec<String>>,
    statuses: std::sync::Mutex<Vec<StatusCode>>,
}

impl mcp_transport_http::AuthProvider for RefreshingToken {
    fn header(&self) -> mcp_transport_http::BoxFuture<'_, Option<http::HeaderValue>> {
        let t = if self.refreshed.load(std::sync::atomic::Ordering::SeqCst) {
            "Bearer new"
        } else {
            "Bearer old"
        };
        Box::pin(async move { Some(http::HeaderValue::from_static(t)) })
    }
    fn on_unauthorized(
        &self,
        refusal: mcp_transport_http::Unauthorized,
    ) -> mcp_transport_http::BoxFuture<'_, Result<bool, mcp_transport_http::BoxError>> {
        self.statuses.lock().unwrap().push(refusal.status);
        self.challenges.lock().unwrap().push(
            refusal
                .www_authenticate
                .and_then(|v| v.to_str().ok().map(str::to_owned))
                .unwrap_or_default(),
        );
        let first = !self
            .refreshed
            .swap(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { Ok(first) })
    }
}

/// Cannot authorize: says why.
struct Failing;

/// The provider's reason.
#[derive(Debug, thiserror::Error)]
#[error("the identity provider is down")]
struct ProviderDown;

impl mcp_transport_http::AuthProvider for Failing {
    fn header(&self) -> mcp_transport_http::BoxFuture<'_, Option<http::HeaderValue>> {
        Box::pin(async { None })
    }
    fn on_unauthorized(
        &self,
        _: mcp_transport_http::Unauthorized,
    ) -> mcp_transport_http::BoxFuture<'_, Result<bool, mcp_transport_http::BoxError>> {
        Box::pin(async { Err(ProviderDown.into()) })
    }
}

#[tokio::test]
async fn the_providers_error_is_the_cause_of_the_failed_request() {
    let server =
        serve(|_: &Rec| Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "no".into()).into())
            .await;
    let mut t = HttpTransport::builder(&server.url)
        .auth(Failing)
        .build()
        .unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Unauthorized);
    let http = http_cause(&e);
    assert!(
        matches!(http, HttpError::Auth { status, .. } if *status == StatusCode::UNAUTHORIZED),
        "{http:?}"
    );
    let why = std::error::Error::source(http).expect("the provider's error");
    assert!(why.downcast_ref::<ProviderDown>().is_some(), "{why:?}");
    assert_eq!(
        chain(&e).to_string(),
        "unauthorized: the MCP server answered HTTP 401 Unauthorized and authorization failed: the identity provider is down"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}

over_tcp_and_unix!(refreshed: auth_provider_refreshes_once_after_401, auth_provider_refreshes_over_a_unix_socket);

async fn refreshed(on: On) {
    let server = serve_on(on, |r: &Rec| {
        if r.header("authorization") != Some("Bearer new") {
            return Reply2 {
                reply: Reply::Raw(StatusCode::UNAUTHORIZED, "text/plain", "expired".into()),
                headers: vec![("www-authenticate", "Bearer error=\"invalid_token\"".into())],
            };
        }
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"authed":true}))).into()
    })
    .await;
    let auth = std::sync::Arc::new(RefreshingToken::default());
    let mut t = HttpTransport::builder(&server.url)
        .auth(auth.clone())
        .build()
        .unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    assert_eq!(result_of(&recv_ok(&mut t).await), json!({"authed":true}));
    assert_eq!(
        *auth.challenges.lock().unwrap(),
        vec!["Bearer error=\"invalid_token\"".to_owned()]
    );
    assert_eq!(*auth.statuses.lock().unwrap(), [StatusCode::UNAUTHORIZED]);
    let auths: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(auths, ["Bearer old", "Bearer new"]);
}

#[tokio::test]
async fn unauthorized_without_refresh_is_typed() {
    let server =
        serve(|_: &Rec| Reply::Raw(StatusCode::FORBIDDEN, "text/plain", "nope".into()).into())
            .await;
    let auth = std::sync::Arc::new(RefreshingToken::default());
    auth.refreshed
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut t = HttpTransport::builder(&server.url)
        .auth(auth.clone())
        .build()
        .unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Unauthorized);
    // The hook saw the 403 as a 403, without a challenge.
    assert_eq!(*auth.statuses.lock().unwrap(), [StatusCode::FORBIDDEN]);
    assert_eq!(*auth.challenges.lock().unwrap(), [String::new()]);
    assert_eq!(
        server.requests().len(),
        1,
        "no retry when the provider declines"
    );
}
