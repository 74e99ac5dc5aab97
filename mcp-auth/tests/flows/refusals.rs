//! Metadata, endpoints, states and issuers the provider refuses.

use super::*;

async fn refused(cfg: Cfg, expect: &str) -> Mock {
    let mock = Mock::start(cfg).await;
    let p = mock.provider().build().unwrap();
    let err = retry(&p, mock.challenge("")).await.unwrap_err().to_string();
    assert!(err.contains(expect), "{err}");
    assert!(mock.find("/authorize").is_empty(), "must not authorize");
    assert!(mock.find("/token").is_empty(), "must not ask for a token");
    assert_eq!(bearer(&p).await, None);
    mock
}

#[tokio::test]
async fn refuses_metadata_for_another_resource() {
    refused(
        Cfg {
            prm_resource: Some("https://evil.example.com/mcp".into()),
            ..Cfg::default()
        },
        "not for the MCP server",
    )
    .await;
    // A sibling path is another resource too.
    let mock = Mock::start(Cfg::default()).await;
    mock.cfg.lock().unwrap().prm_resource = Some(format!("{}/mcp-other", mock.base));
    let p = mock.provider().build().unwrap();
    retry(&p, mock.challenge("")).await.unwrap_err();
    assert!(mock.find("/authorize").is_empty());
}

#[tokio::test]
async fn refuses_metadata_with_another_issuer() {
    refused(
        Cfg {
            issuer_override: Some("https://honest.example".into()),
            ..Cfg::default()
        },
        "RFC 8414",
    )
    .await;
}

#[tokio::test]
async fn refuses_without_pkce_s256() {
    refused(
        Cfg {
            as_extra: json!({"code_challenge_methods_supported": ["plain"]}),
            ..Cfg::default()
        },
        "S256",
    )
    .await;
    refused(
        Cfg {
            as_extra: json!({"code_challenge_methods_supported": null}),
            ..Cfg::default()
        },
        "S256",
    )
    .await;
}

#[tokio::test]
async fn refuses_a_non_https_remote_token_endpoint() {
    refused(
        Cfg {
            as_extra: json!({"token_endpoint": "http://as.example/token"}),
            ..Cfg::default()
        },
        "https",
    )
    .await;
}

#[tokio::test]
async fn refuses_private_and_link_local_metadata_urls_and_redirects() {
    // The challenge points at the cloud metadata service; the server has no
    // well-known metadata, so nothing else is tried.
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    let ch = mock.challenge(r#", resource_metadata="https://169.254.169.254/latest/meta-data""#);
    let e = retry(&p, ch).await.unwrap_err().to_string();
    assert!(e.contains("SSRF"), "{e}");
    // A metadata URL that redirects to a private address.
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        redirects: [(
            "/.well-known/oauth-protected-resource/mcp".to_owned(),
            "https://10.0.0.7/prm".to_owned(),
        )]
        .into(),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    let e = retry(&p, mock.challenge("")).await.unwrap_err().to_string();
    assert!(e.contains("SSRF"), "{e}");
    // Loopback is refused unless allowed (here: a provider for a remote
    // server whose challenge points at loopback).
    let remote = OAuthProvider::builder("https://mcp.example.com/mcp")
        .interaction(FollowRedirect::new("http://127.0.0.1:9/cb", SsrfPolicy::new()).unwrap())
        .build()
        .unwrap();
    let ch = mock.challenge(&format!(
        r#", resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
        mock.base
    ));
    let before = mock.seen().len();
    retry(&remote, ch).await.unwrap_err();
    assert_eq!(
        mock.seen().len(),
        before,
        "the loopback server must not be contacted"
    );
}

#[tokio::test]
async fn refuses_a_mismatched_state() {
    let mock = Mock::start(Cfg {
        state_override: Some("forged".into()),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    let e = retry(&p, mock.challenge("")).await.unwrap_err().to_string();
    assert!(e.contains("state"), "{e}");
    assert!(mock.find("/token").is_empty());
}

#[tokio::test]
async fn checks_iss_in_the_authorization_response() {
    let mock = Mock::start(Cfg {
        callback_iss: Some("https%3A%2F%2Fevil.example".into()),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    let e = retry(&p, mock.challenge("")).await.unwrap_err().to_string();
    assert!(e.contains("iss"), "{e}");
    assert!(mock.find("/token").is_empty());
    // Advertised but absent: rejected.
    let mock = Mock::start(Cfg {
        as_extra: json!({"authorization_response_iss_parameter_supported": true}),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    retry(&p, mock.challenge("")).await.unwrap_err();
    assert!(mock.find("/token").is_empty());
    // Present and right: accepted.
    let mock = Mock::start(Cfg::default()).await;
    mock.cfg.lock().unwrap().callback_iss = Some(mock.base.replace(':', "%3A").replace('/', "%2F"));
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
}
