//! What the caller of a `Client` call sees when authorization fails: the
//! typed [`AuthError`] in the error's chain, named by its text.

use mcp_client::{Client, ClientError, CloseReason};
use mcp_proto::transport::TransportErrorKind;
use mcp_transport_http::HttpTransport;

use super::*;

fn transport(mock: &Mock, p: &OAuthProvider) -> HttpTransport {
    HttpTransport::builder(mock.url())
        .auth(p.clone())
        .build()
        .unwrap()
}

/// Every text of the chain, outermost first.
fn levels(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push(c.to_string());
        cur = c.source();
    }
    out
}

#[tokio::test]
async fn connect_fails_with_the_token_endpoints_invalid_grant() {
    let mock = Mock::start(Cfg {
        token_error: Some(json!({
            "error": "invalid_grant",
            "error_description": "the code has expired",
        })),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    let err = Client::connect(transport(&mock, &p)).await.unwrap_err();
    // The handshake's transport failure closed the connection.
    let ClientError::Closed(CloseReason::Transport(t)) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(t.kind(), TransportErrorKind::Unauthorized);
    let auth = AuthError::find(&err).expect("the AuthError is in the chain");
    assert_eq!(auth.kind(), AuthErrorKind::Token);
    assert!(auth.is_invalid_grant() && auth.is_user_action_needed() && !auth.is_retryable());
    assert_eq!(auth.oauth_error_description(), Some("the code has expired"));
    assert_eq!(auth.status(), Some(StatusCode::BAD_REQUEST));
    // The caller's text names it.
    let text = mcp_proto::error::chain(&err).to_string();
    assert!(
        text.contains("authorization failed: the token request at")
            && text.contains("invalid_grant: the code has expired"),
        "{text}"
    );
    assert!(
        levels(&err).iter().any(|c| *c == auth.to_string()),
        "{:?}",
        levels(&err)
    );
    // ... once: ClientError -> TransportError -> HttpError -> AuthError.
    mcp_proto::testing::assert_causes_once(&err);
    // One authorization for the handshake, not one per handshake request.
    assert_eq!(mock.find("/authorize").len(), 1, "{:?}", mock.paths());
}

#[tokio::test]
async fn a_call_fails_with_forbidden_and_the_connection_lives_on() {
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    let client = Client::connect(transport(&mock, &p)).await.unwrap();
    client.call_tool("t", json!({})).await.unwrap();
    // The server now refuses the (valid) token for everything.
    mock.cfg.lock().unwrap().mcp_forbid = Some(("Bearer at-1".into(), None));
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    let ClientError::Transport(t) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(t.kind(), TransportErrorKind::Unauthorized);
    let auth = AuthError::find(&err).expect("the AuthError is in the chain");
    assert!(
        auth.is_forbidden() && !auth.is_user_action_needed(),
        "{auth:?}"
    );
    let text = mcp_proto::error::chain(&err).to_string();
    mcp_proto::testing::assert_causes_once(&err);
    assert!(
        text.contains("403 Forbidden") && text.contains("ask the server's operator for access"),
        "{text}"
    );
    client.close().await;
}
