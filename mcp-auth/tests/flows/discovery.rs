//! The full flow and every metadata discovery path, down to the
//! 2025-03-26 default endpoints.

use super::*;

#[tokio::test]
async fn full_flow_with_header_metadata_url_dcr_pkce_and_resource() {
    let mock = Mock::start(Cfg {
        prm_paths: vec!["/custom/prm.json".into()],
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert_eq!(bearer(&p).await, None);
    let ch = mock.challenge(&format!(
        r#", scope="files:read", resource_metadata="{}/custom/prm.json""#,
        mock.base
    ));
    assert!(retry(&p, ch).await.unwrap());
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-1"));
    assert_eq!(
        mock.paths(),
        vec![
            "/custom/prm.json",
            "/.well-known/oauth-authorization-server",
            "/register",
            "/authorize",
            "/token"
        ]
    );
    let reg: Value = serde_json::from_str(&mock.find("/register")[0].body).unwrap();
    assert_eq!(reg["application_type"], "native");
    assert_eq!(reg["redirect_uris"], json!(["http://127.0.0.1:9/callback"]));
    assert_eq!(
        reg["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    let auth = &mock.find("/authorize")[0].query;
    assert_eq!(auth["client_id"], "dyn-client");
    assert_eq!(auth["code_challenge_method"], "S256");
    assert_eq!(auth["resource"], mock.url());
    assert_eq!(auth["scope"], "files:read");
    assert_eq!(auth["response_type"], "code");
    let tok = mock.find("/token")[0].form();
    assert_eq!(tok["grant_type"], "authorization_code");
    assert_eq!(tok["code"], "the-code");
    assert_eq!(tok["resource"], mock.url());
    assert_eq!(tok["client_id"], "dyn-client");
    assert_eq!(tok["redirect_uri"], "http://127.0.0.1:9/callback");
    assert_eq!(tok["code_verifier"].len(), 43);
    // Debug never shows the token.
    let dbg = format!("{p:?} {:?}", p.tokens());
    assert!(!dbg.contains("at-1") && !dbg.contains("rt-1"), "{dbg}");
}

#[tokio::test]
async fn prm_falls_back_from_path_to_root_and_scopes_from_metadata() {
    let mock = Mock::start(Cfg {
        prm_paths: vec!["/.well-known/oauth-protected-resource".into()],
        prm_resource: Some("http://127.0.0.1".into()),
        prm_scopes: Some(vec!["a".into(), "b".into()]),
        ..Cfg::default()
    })
    .await;
    // The resource is the origin: a parent of /mcp, allowed.
    mock.cfg.lock().unwrap().prm_resource = Some(mock.base.clone());
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    let paths = mock.paths();
    assert_eq!(
        &paths[..2],
        &[
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource"
        ]
    );
    let auth = &mock.find("/authorize")[0].query;
    assert_eq!(auth["scope"], "a b");
    assert_eq!(auth["resource"], mock.base);
    assert_eq!(mock.find("/token")[0].form()["resource"], mock.base);
}

#[tokio::test]
async fn as_metadata_with_issuer_path_in_spec_order_never_the_root() {
    let mock = Mock::start(Cfg {
        issuer_path: "/tenant1".into(),
        as_paths: vec!["/tenant1/.well-known/openid-configuration".into()],
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    let paths = mock.paths();
    assert_eq!(
        &paths[1..4],
        &[
            "/.well-known/oauth-authorization-server/tenant1",
            "/.well-known/openid-configuration/tenant1",
            "/tenant1/.well-known/openid-configuration",
        ]
    );
    assert!(!paths.contains(&"/.well-known/oauth-authorization-server".to_owned()));
    assert!(paths.contains(&"/tenant1/token".to_owned()));
}

#[tokio::test]
async fn openid_configuration_after_oauth_metadata_without_path() {
    let mock = Mock::start(Cfg {
        as_paths: vec!["/.well-known/openid-configuration".into()],
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert_eq!(
        &mock.paths()[1..3],
        &[
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration"
        ]
    );
}

#[tokio::test]
async fn legacy_2025_03_26_server_metadata_then_default_endpoints() {
    // Metadata at the origin, endpoints under /oauth, issuer not the origin.
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        issuer_path: "/oauth".into(),
        as_paths: vec!["/.well-known/oauth-authorization-server".into()],
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    let paths = mock.paths();
    assert!(paths.contains(&"/oauth/authorize".to_owned()), "{paths:?}");
    assert_eq!(
        mock.find("/oauth/authorize")[0].query["resource"],
        mock.url()
    );
    // No metadata at all: /authorize, /token, /register at the origin.
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        as_paths: vec![],
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    let paths = mock.paths();
    assert_eq!(
        &paths[paths.len() - 3..],
        &["/register", "/authorize", "/token"]
    );
}
