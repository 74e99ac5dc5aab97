//! Refresh, step-up, persistence, re-authorization limits, and one
//! authorization for concurrent 401s.

use super::*;

#[tokio::test]
async fn refreshes_before_expiry_and_once_on_401() {
    let mock = Mock::start(Cfg {
        expires_in: 10, // inside the refresh margin
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    // The token expires within the margin: header() refreshes first.
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-2"));
    let r = &mock.find("/token")[1].form();
    assert_eq!(r["grant_type"], "refresh_token");
    assert_eq!(r["refresh_token"], "rt-1");
    assert_eq!(r["resource"], mock.url());
    // A 401 with a refresh token: refresh, not a new authorization.
    mock.cfg.lock().unwrap().expires_in = 3600;
    let before = mock.find("/authorize").len();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert_eq!(mock.find("/authorize").len(), before);
    assert_eq!(
        mock.find("/token").last().unwrap().form()["grant_type"],
        "refresh_token"
    );
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-3"));
}

#[tokio::test]
async fn step_up_requests_the_union_and_stops() {
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().max_step_ups(2).build().unwrap();
    assert!(retry(&p, mock.challenge(r#", scope="a""#)).await.unwrap());
    let up = |s: &str| {
        Unauthorized::new(
            StatusCode::FORBIDDEN,
            Some(
                HeaderValue::from_str(&format!(
                    r#"Bearer error="insufficient_scope", scope="{s}""#
                ))
                .unwrap(),
            ),
        )
    };
    assert!(retry(&p, up("b")).await.unwrap());
    assert_eq!(mock.find("/authorize")[1].query["scope"], "a b");
    // The token has a and b: the same challenge again cannot be fixed.
    let e = retry(&p, up("a b")).await.unwrap_err().to_string();
    assert!(e.contains("cannot help"), "{e}");
    // New scopes, but the limit is reached after two step-ups.
    assert!(retry(&p, up("c")).await.unwrap());
    let e = retry(&p, up("d")).await.unwrap_err().to_string();
    assert!(e.contains("giving up"), "{e}");
    assert_eq!(mock.find("/authorize").len(), 3);
}

#[tokio::test]
async fn tokens_persist_in_the_store() {
    let mock = Mock::start(Cfg::default()).await;
    let dir = std::env::temp_dir().join(format!("mcp-auth-flows-{}", std::process::id()));
    let path = dir.join("t.json");
    let p = mock
        .provider()
        .store(mcp_auth::FileStore::new(&path))
        .build()
        .unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    // A new provider (a new CLI run) starts with the stored token.
    let p2 = mock
        .provider()
        .store(mcp_auth::FileStore::new(&path))
        .build()
        .unwrap();
    assert_eq!(bearer(&p2).await.as_deref(), Some("Bearer at-1"));
    p2.logout().unwrap();
    let p3 = mock
        .provider()
        .store(mcp_auth::FileStore::new(&path))
        .build()
        .unwrap();
    assert_eq!(bearer(&p3).await, None);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_server_rejecting_every_token_is_not_reauthorized_forever() {
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    // No refresh tokens here would hide the loop, so use the real flow: each
    // 401 first refreshes (one token request), then authorizes anew.
    let mut ok = 0;
    let mut last = None;
    for _ in 0..10 {
        match retry(&p, mock.challenge("")).await {
            Ok(retried) => ok += usize::from(retried),
            Err(e) => last = Some(e),
        }
    }
    let authorizations = mock.find("/authorize").len();
    assert!(
        authorizations <= mcp_auth::MAX_REAUTHORIZATIONS,
        "{authorizations}"
    );
    assert!(ok < 10);
    let last = last.unwrap();
    assert_eq!(last.kind(), AuthErrorKind::RetryLimit);
    assert!(last.to_string().contains("giving up"), "{last}");
}

#[tokio::test]
async fn refresh_tokens_never_go_to_another_authorization_server() {
    let mock = Mock::start(Cfg {
        expires_in: 10,
        ..Cfg::default()
    })
    .await;
    let dir = std::env::temp_dir().join(format!("mcp-auth-iss-{}", std::process::id()));
    let path = dir.join("t.json");
    let p = mock
        .provider()
        .store(mcp_auth::FileStore::new(&path))
        .build()
        .unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    // The resource now names another authorization server.
    {
        let mut c = mock.cfg.lock().unwrap();
        c.issuer_path = "/new".into();
        c.as_paths = vec!["/.well-known/oauth-authorization-server/new".into()];
    }
    let p2 = mock
        .provider()
        .store(mcp_auth::FileStore::new(&path))
        .build()
        .unwrap();
    // The stored token expires soon: a refresh is due, but not at /new/token.
    assert_eq!(bearer(&p2).await, None);
    assert!(mock.find("/new/token").is_empty());
    // A 401 then authorizes anew at the new server (and registers there).
    assert!(retry(&p2, mock.challenge("")).await.unwrap());
    assert_eq!(mock.find("/new/register").len(), 1);
    assert_eq!(
        mock.find("/new/token")[0].form()["grant_type"],
        "authorization_code"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn concurrent_401s_share_one_authorization() {
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    let (a, b, c) = tokio::join!(
        retry(&p, mock.challenge("")),
        retry(&p, mock.challenge("")),
        retry(&p, mock.challenge("")),
    );
    assert!(a.unwrap() && b.unwrap() && c.unwrap());
    assert_eq!(mock.find("/authorize").len(), 1);
    assert_eq!(mock.find("/token").len(), 1);
    assert_eq!(mock.find("/register").len(), 1);
}
