//! Client registration and authentication at the token endpoint, client
//! credentials, `offline_access`.

use super::*;

#[tokio::test]
async fn token_endpoint_auth_methods() {
    for (supported, expect) in [
        (json!(["client_secret_basic"]), "basic"),
        (json!(["client_secret_post"]), "post"),
        (json!(["none"]), "none"),
        (Value::Null, "basic"),
    ] {
        let mock = Mock::start(Cfg {
            as_extra: json!({ "token_endpoint_auth_methods_supported": supported }),
            ..Cfg::default()
        })
        .await;
        let p = mock
            .provider()
            .client("pre id", Some("s3cret".into()))
            .build()
            .unwrap();
        assert!(retry(&p, mock.challenge("")).await.unwrap());
        assert!(mock.find("/register").is_empty(), "pre-registered: no DCR");
        let t = &mock.find("/token")[0];
        let form = t.form();
        match expect {
            "basic" => {
                // RFC 6749 §2.3.1: form-encoded, then base64 ("pre%20id:s3cret").
                assert_eq!(
                    t.authorization.as_deref(),
                    Some("Basic cHJlJTIwaWQ6czNjcmV0")
                );
                assert!(!form.contains_key("client_secret"));
            }
            "post" => {
                assert_eq!(t.authorization, None);
                assert_eq!(form["client_secret"], "s3cret");
                assert_eq!(form["client_id"], "pre id");
            }
            _ => {
                assert_eq!(t.authorization, None);
                assert!(!form.contains_key("client_secret"));
                assert_eq!(form["client_id"], "pre id");
            }
        }
    }
}

#[tokio::test]
async fn client_id_metadata_document_when_supported_else_dcr() {
    let mock = Mock::start(Cfg {
        as_extra: json!({"client_id_metadata_document_supported": true}),
        ..Cfg::default()
    })
    .await;
    let cimd = "https://app.example/client.json";
    let p = mock.provider().client_metadata_url(cimd).build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert!(mock.find("/register").is_empty());
    assert_eq!(mock.find("/authorize")[0].query["client_id"], cimd);
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().client_metadata_url(cimd).build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert_eq!(mock.find("/register").len(), 1);
    assert!(
        OAuthProvider::builder("https://x.example/mcp")
            .client_metadata_url("http://app.example/c.json")
            .client_credentials()
            .build()
            .is_err()
    );
}

#[tokio::test]
async fn offline_access_only_when_advertised() {
    let mock = Mock::start(Cfg {
        prm_scopes: Some(vec!["mcp:basic".into()]),
        as_extra: json!({"scopes_supported": ["mcp:basic", "offline_access"]}),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert_eq!(
        mock.find("/authorize")[0].query["scope"],
        "mcp:basic offline_access"
    );
    let mock = Mock::start(Cfg {
        prm_scopes: Some(vec!["mcp:basic".into()]),
        as_extra: json!({"scopes_supported": ["mcp:basic"]}),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert_eq!(mock.find("/authorize")[0].query["scope"], "mcp:basic");
    // No scope anywhere: the parameter is omitted.
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    assert!(!mock.find("/authorize")[0].query.contains_key("scope"));
}

#[tokio::test]
async fn client_credentials_with_secret_and_private_key_jwt() {
    let mock = Mock::start(Cfg {
        as_extra: json!({"token_endpoint_auth_methods_supported": ["private_key_jwt"]}),
        ..Cfg::default()
    })
    .await;
    // A P-256 PKCS#8 key made by ring.
    let rng = ring::rand::SystemRandom::new();
    let der = ring::signature::EcdsaKeyPair::generate_pkcs8(
        &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        &rng,
    )
    .unwrap();
    let key = mcp_auth::Es256Key::from_pkcs8_der(der.as_ref()).unwrap();
    let p = OAuthProvider::builder(mock.url())
        .client("svc", None)
        .client_credentials()
        .private_key_jwt(key)
        .build()
        .unwrap();
    assert!(retry(&p, mock.challenge(r#", scope="x""#)).await.unwrap());
    let f = mock.find("/token")[0].form();
    assert_eq!(f["grant_type"], "client_credentials");
    assert_eq!(f["scope"], "x");
    assert_eq!(f["resource"], mock.url());
    assert_eq!(
        f["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert_eq!(f["client_assertion"].split('.').count(), 3);
    assert!(mock.find("/authorize").is_empty() && mock.find("/register").is_empty());

    let mock = Mock::start(Cfg {
        as_extra: json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
        ..Cfg::default()
    })
    .await;
    let p = OAuthProvider::builder(mock.url())
        .client("svc", Some("pw".into()))
        .client_credentials()
        .build()
        .unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
    let t = &mock.find("/token")[0];
    assert_eq!(t.form()["grant_type"], "client_credentials");
    assert_eq!(t.authorization.as_deref(), Some("Basic c3ZjOnB3"));
    // Without a secret or key, client_credentials is a configuration error.
    assert!(
        OAuthProvider::builder(mock.url())
            .client("svc", None)
            .client_credentials()
            .build()
            .is_err()
    );
}
