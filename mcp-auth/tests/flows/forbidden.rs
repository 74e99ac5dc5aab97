//! 401 versus 403: a 403 re-authorizes only for `insufficient_scope`,
//! directly and through the transport.

use super::*;

#[tokio::test]
async fn forbidden_without_a_challenge_does_not_reauthorize() {
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    p.authorize().await.unwrap();
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-1"));
    let before = mock.paths().len();
    // A 403 with no WWW-Authenticate: the token is valid but not allowed.
    let refused = Unauthorized::new(StatusCode::FORBIDDEN, None);
    assert!(refused.is_forbidden());
    let e = retry(&p, refused).await.unwrap_err().to_string();
    assert!(e.contains("403 Forbidden"), "{e}");
    assert!(e.contains("cannot help"), "{e}");
    // No refresh, no discovery, no new authorization; the token is kept.
    assert_eq!(mock.paths().len(), before, "{:?}", mock.paths());
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-1"));
    // A 401 without WWW-Authenticate still re-authorizes (refresh first):
    // only the status tells the two apart.
    assert!(
        retry(&p, Unauthorized::new(StatusCode::UNAUTHORIZED, None))
            .await
            .unwrap()
    );
    assert_eq!(mock.find("/token").len(), 2);
    assert_eq!(mock.find("/token")[1].form()["grant_type"], "refresh_token");
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-2"));
}

#[tokio::test]
async fn forbidden_with_another_bearer_error_or_no_token_fails_too() {
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    // No token yet: still no flow on a 403 (it is not a 401).
    retry(&p, Unauthorized::new(StatusCode::FORBIDDEN, None))
        .await
        .unwrap_err();
    assert!(mock.paths().is_empty(), "{:?}", mock.paths());
    // A Bearer challenge that is not insufficient_scope: no step-up either;
    // the error names what the server said.
    let www = HeaderValue::from_static(r#"Bearer error="invalid_token", scope="x""#);
    let e = retry(&p, Unauthorized::new(StatusCode::FORBIDDEN, Some(www)))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(r#"403 Forbidden (error="invalid_token")"#),
        "{e}"
    );
    assert!(mock.paths().is_empty(), "{:?}", mock.paths());
}

/// Through the transport: a 403 without a challenge fails the request as
/// `Unauthorized` with one POST and no trip to the authorization server; a
/// 403 `insufficient_scope` steps up and the retried request succeeds.
#[tokio::test]
async fn transport_403_plain_fails_and_403_insufficient_scope_steps_up() {
    use mcp_proto::jsonrpc::{Message, Request};
    use mcp_proto::transport::{TransportError, TransportErrorKind, TransportExt};
    use mcp_transport_http::HttpTransport;

    async fn call(t: &mut HttpTransport, id: i64) -> Result<Message, TransportError> {
        t.send(Request::new(id.into(), "ping", None).into())
            .await
            .unwrap();
        match tokio::time::timeout(std::time::Duration::from_secs(10), t.recv()).await {
            Ok(Some(Ok(m))) => Ok(m),
            Ok(Some(Err(e))) => Err(e),
            other => panic!("no answer: {other:?}"),
        }
    }
    let mcp_posts = |mock: &Mock| mock.find("/mcp").len();

    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    let mut t = HttpTransport::builder(mock.url())
        .auth(p.clone())
        .build()
        .unwrap();
    // 401 without a token: authorize, retry, answered.
    let m = call(&mut t, 1).await.unwrap();
    assert_eq!(m.id(), Some(&1.into()));
    assert_eq!(mcp_posts(&mock), 2);
    assert_eq!(mock.find("/authorize").len(), 1);

    // Now the server forbids at-1 outright.
    mock.cfg.lock().unwrap().mcp_forbid = Some(("Bearer at-1".into(), None));
    let e = call(&mut t, 2).await.unwrap_err();
    assert_eq!(e.kind(), TransportErrorKind::Unauthorized);
    assert_eq!(mcp_posts(&mock), 3, "a plain 403 is not retried");
    assert_eq!(mock.find("/authorize").len(), 1);
    assert_eq!(mock.find("/token").len(), 1);
    // The provider's reason is the transport error's cause.
    let auth = AuthError::find(&e).expect("the AuthError is in the chain");
    assert!(
        auth.is_forbidden() && !auth.is_user_action_needed(),
        "{auth:?}"
    );
    assert!(
        mcp_proto::error::chain(&e)
            .to_string()
            .contains("403 Forbidden"),
        "{e}"
    );

    // A 403 that names the missing scope: step-up, then the retry passes.
    mock.cfg.lock().unwrap().mcp_forbid = Some((
        "Bearer at-1".into(),
        Some(r#"Bearer error="insufficient_scope", scope="files:write""#.into()),
    ));
    let m = call(&mut t, 3).await.unwrap();
    assert_eq!(m.id(), Some(&3.into()));
    assert_eq!(mcp_posts(&mock), 5);
    let authorize = mock.find("/authorize");
    assert_eq!(authorize.len(), 2);
    assert!(
        authorize[1].query["scope"].contains("files:write"),
        "{:?}",
        authorize[1].query
    );
    assert_eq!(
        mock.find("/mcp").last().unwrap().authorization.as_deref(),
        Some("Bearer at-2")
    );
}
