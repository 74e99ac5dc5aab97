//! The OAuth flows against an in-process authorization server + protected
//! resource (loopback), one test per discovery path and per refusal.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_auth::{FollowRedirect, OAuthProvider, SsrfPolicy};
use mcp_transport_http::{AuthProvider, Unauthorized};
use serde_json::{Value, json};

/// One recorded request.
#[derive(Debug, Clone)]
struct Seen {
    #[allow(dead_code)]
    method: String,
    path: String,
    query: HashMap<String, String>,
    authorization: Option<String>,
    body: String,
}

impl Seen {
    fn form(&self) -> HashMap<String, String> {
        parse_pairs(&self.body)
    }
}

fn decode(s: &str) -> String {
    let b = s.replace('+', " ");
    let bytes = b.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(&b[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn parse_pairs(s: &str) -> HashMap<String, String> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// What the mock serves; tests tweak it before the flow runs.
#[derive(Clone)]
struct Cfg {
    /// Paths that answer with the protected resource metadata.
    prm_paths: Vec<String>,
    /// `resource` in the PRM (default: `<base>/mcp`).
    prm_resource: Option<String>,
    prm_scopes: Option<Vec<String>>,
    /// Issuer path (`""` = the origin).
    issuer_path: String,
    /// Issuer written in the metadata (default: the real one).
    issuer_override: Option<String>,
    /// Paths that answer with the AS metadata.
    as_paths: Vec<String>,
    /// Extra/overriding AS metadata fields.
    as_extra: Value,
    /// Override `state` in the redirect.
    state_override: Option<String>,
    /// `iss` in the redirect.
    callback_iss: Option<String>,
    expires_in: u64,
    /// Redirects: path -> Location.
    redirects: HashMap<String, String>,
    /// The MCP endpoint (`POST /mcp`) answers 403 to this `Authorization`
    /// value, with this `WWW-Authenticate` if any; 401 without a token;
    /// else a JSON-RPC result.
    mcp_forbid: Option<(String, Option<String>)>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            prm_paths: vec!["/.well-known/oauth-protected-resource/mcp".into()],
            prm_resource: None,
            prm_scopes: None,
            issuer_path: String::new(),
            issuer_override: None,
            as_paths: vec!["/.well-known/oauth-authorization-server".into()],
            as_extra: json!({}),
            state_override: None,
            callback_iss: None,
            expires_in: 3600,
            redirects: HashMap::new(),
            mcp_forbid: None,
        }
    }
}

struct Mock {
    base: String,
    cfg: Arc<Mutex<Cfg>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Mock {
    async fn start(cfg: Cfg) -> Mock {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let cfg = Arc::new(Mutex::new(cfg));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let tokens = Arc::new(Mutex::new(0));
        let (b, c, s, t) = (base.clone(), cfg.clone(), seen.clone(), tokens.clone());
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (b, c, s, t) = (b.clone(), c.clone(), s.clone(), t.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let (b, c, s, t) = (b.clone(), c.clone(), s.clone(), t.clone());
                        async move {
                            Ok::<_, std::convert::Infallible>(handle(req, &b, &c, &s, &t).await)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(sock), svc)
                        .await;
                });
            }
        });
        Mock { base, cfg, seen }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.path).collect()
    }

    fn find(&self, path: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.path == path).collect()
    }

    /// A 401 with an `invalid_token` challenge.
    fn challenge(&self, extra: &str) -> Unauthorized {
        Unauthorized::new(
            StatusCode::UNAUTHORIZED,
            Some(
                HeaderValue::from_str(&format!(r#"Bearer error="invalid_token"{extra}"#)).unwrap(),
            ),
        )
    }

    fn provider(&self) -> mcp_auth::OAuthProviderBuilder {
        OAuthProvider::builder(self.url()).interaction(
            FollowRedirect::new(
                "http://127.0.0.1:9/callback",
                SsrfPolicy {
                    allow_loopback: true,
                    allow_private: false,
                },
            )
            .unwrap(),
        )
    }
}

async fn handle(
    req: Request<Incoming>,
    base: &str,
    cfg: &Mutex<Cfg>,
    seen: &Mutex<Vec<Seen>>,
    tokens: &Mutex<u32>,
) -> Response<Full<Bytes>> {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let query = parse_pairs(req.uri().query().unwrap_or(""));
    let authorization = req
        .headers()
        .get("authorization")
        .map(|v| v.to_str().unwrap().to_owned());
    let rpc_auth = authorization.clone();
    let body =
        String::from_utf8(req.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: path.clone(),
        query: query.clone(),
        authorization,
        body: body.clone(),
    });
    let cfg = cfg.lock().unwrap().clone();
    let json_resp = |status: u16, v: Value| {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(v.to_string())))
            .unwrap()
    };
    if let Some(loc) = cfg.redirects.get(&path) {
        return Response::builder()
            .status(302)
            .header("location", loc)
            .body(Full::new(Bytes::new()))
            .unwrap();
    }
    let issuer = format!("{base}{}", cfg.issuer_path);
    let p = cfg.issuer_path.as_str();
    if method == "GET" && cfg.prm_paths.contains(&path) {
        let mut v = json!({
            "resource": cfg.prm_resource.clone().unwrap_or(format!("{base}/mcp")),
            "authorization_servers": [issuer],
        });
        if let Some(s) = &cfg.prm_scopes {
            v["scopes_supported"] = json!(s);
        }
        return json_resp(200, v);
    }
    if method == "GET" && cfg.as_paths.contains(&path) {
        let mut v = json!({
            "issuer": cfg.issuer_override.clone().unwrap_or(issuer.clone()),
            "authorization_endpoint": format!("{base}{p}/authorize"),
            "token_endpoint": format!("{base}{p}/token"),
            "registration_endpoint": format!("{base}{p}/register"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        });
        if let (Some(o), Some(extra)) = (v.as_object_mut(), cfg.as_extra.as_object()) {
            for (k, x) in extra {
                if x.is_null() {
                    o.remove(k);
                } else {
                    o.insert(k.clone(), x.clone());
                }
            }
        }
        return json_resp(200, v);
    }
    if method == "GET" && path == format!("{p}/authorize") {
        let state = cfg
            .state_override
            .clone()
            .unwrap_or_else(|| query.get("state").cloned().unwrap_or_default());
        let mut loc = format!(
            "{}?code=the-code&state={}",
            query.get("redirect_uri").cloned().unwrap_or_default(),
            state
        );
        if let Some(iss) = &cfg.callback_iss {
            loc.push_str(&format!("&iss={iss}"));
        }
        return Response::builder()
            .status(302)
            .header("location", loc)
            .body(Full::new(Bytes::new()))
            .unwrap();
    }
    if method == "POST" && path == format!("{p}/token") {
        let mut n = tokens.lock().unwrap();
        *n += 1;
        let form = parse_pairs(&body);
        let mut v = json!({
            "access_token": format!("at-{n}"),
            "token_type": "Bearer",
            "expires_in": cfg.expires_in,
            "refresh_token": format!("rt-{n}"),
        });
        if let Some(s) = form.get("scope") {
            v["scope"] = json!(s);
        }
        return json_resp(200, v);
    }
    if method == "POST" && path == format!("{p}/register") {
        return json_resp(201, json!({"client_id": "dyn-client"}));
    }
    if method == "POST" && path == "/mcp" {
        let refuse = |status: u16, www: Option<String>| {
            let mut b = Response::builder().status(status);
            if let Some(w) = www {
                b = b.header("www-authenticate", w);
            }
            b.body(Full::new(Bytes::new())).unwrap()
        };
        let Some(auth) = rpc_auth else {
            return refuse(
                401,
                Some(format!(
                    r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
                )),
            );
        };
        if let Some((forbidden, www)) = &cfg.mcp_forbid
            && *forbidden == auth
        {
            return refuse(403, www.clone());
        }
        let id = serde_json::from_str::<Value>(&body).unwrap()["id"].clone();
        return json_resp(200, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
    json_resp(404, json!({"error": "not_found"}))
}

async fn bearer(p: &OAuthProvider) -> Option<String> {
    p.header().await.map(|v| v.to_str().unwrap().to_owned())
}

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
    assert!(p.on_unauthorized(ch).await, "{:?}", p.last_error());
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
    assert!(
        p.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p.last_error()
    );
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
    assert!(
        p.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p.last_error()
    );
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
    assert!(
        p.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p.last_error()
    );
    assert_eq!(
        &mock.paths()[1..3],
        &[
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration"
        ]
    );
}

async fn refused(cfg: Cfg, expect: &str) -> Mock {
    let mock = Mock::start(cfg).await;
    let p = mock.provider().build().unwrap();
    assert!(!p.on_unauthorized(mock.challenge("")).await);
    let err = p.last_error().unwrap();
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
    assert!(!p.on_unauthorized(mock.challenge("")).await);
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
    assert!(!p.on_unauthorized(ch).await);
    assert!(
        p.last_error().unwrap().contains("SSRF"),
        "{:?}",
        p.last_error()
    );
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
    assert!(!p.on_unauthorized(mock.challenge("")).await);
    assert!(
        p.last_error().unwrap().contains("SSRF"),
        "{:?}",
        p.last_error()
    );
    // Loopback is refused unless allowed (here: a provider for a remote
    // server whose challenge points at loopback).
    let remote = OAuthProvider::builder("https://mcp.example.com/mcp")
        .interaction(FollowRedirect::new("http://127.0.0.1:9/cb", SsrfPolicy::default()).unwrap())
        .build()
        .unwrap();
    let ch = mock.challenge(&format!(
        r#", resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
        mock.base
    ));
    let before = mock.seen().len();
    assert!(!remote.on_unauthorized(ch).await);
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
    assert!(!p.on_unauthorized(mock.challenge("")).await);
    assert!(p.last_error().unwrap().contains("state"));
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
    assert!(!p.on_unauthorized(mock.challenge("")).await);
    assert!(p.last_error().unwrap().contains("iss"));
    assert!(mock.find("/token").is_empty());
    // Advertised but absent: rejected.
    let mock = Mock::start(Cfg {
        as_extra: json!({"authorization_response_iss_parameter_supported": true}),
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(!p.on_unauthorized(mock.challenge("")).await);
    assert!(mock.find("/token").is_empty());
    // Present and right: accepted.
    let mock = Mock::start(Cfg::default()).await;
    mock.cfg.lock().unwrap().callback_iss = Some(mock.base.replace(':', "%3A").replace('/', "%2F"));
    let p = mock.provider().build().unwrap();
    assert!(
        p.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p.last_error()
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
    assert!(
        p.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p.last_error()
    );
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
    assert!(
        p.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p.last_error()
    );
    let paths = mock.paths();
    assert_eq!(
        &paths[paths.len() - 3..],
        &["/register", "/authorize", "/token"]
    );
}

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
        assert!(
            p.on_unauthorized(mock.challenge("")).await,
            "{:?}",
            p.last_error()
        );
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
    assert!(p.on_unauthorized(mock.challenge("")).await);
    assert!(mock.find("/register").is_empty());
    assert_eq!(mock.find("/authorize")[0].query["client_id"], cimd);
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().client_metadata_url(cimd).build().unwrap();
    assert!(p.on_unauthorized(mock.challenge("")).await);
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
    assert!(p.on_unauthorized(mock.challenge("")).await);
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
    assert!(p.on_unauthorized(mock.challenge("")).await);
    assert_eq!(mock.find("/authorize")[0].query["scope"], "mcp:basic");
    // No scope anywhere: the parameter is omitted.
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    assert!(p.on_unauthorized(mock.challenge("")).await);
    assert!(!mock.find("/authorize")[0].query.contains_key("scope"));
}

#[tokio::test]
async fn refreshes_before_expiry_and_once_on_401() {
    let mock = Mock::start(Cfg {
        expires_in: 10, // inside the refresh margin
        ..Cfg::default()
    })
    .await;
    let p = mock.provider().build().unwrap();
    assert!(p.on_unauthorized(mock.challenge("")).await);
    // The token expires within the margin: header() refreshes first.
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-2"));
    let r = &mock.find("/token")[1].form();
    assert_eq!(r["grant_type"], "refresh_token");
    assert_eq!(r["refresh_token"], "rt-1");
    assert_eq!(r["resource"], mock.url());
    // A 401 with a refresh token: refresh, not a new authorization.
    mock.cfg.lock().unwrap().expires_in = 3600;
    let before = mock.find("/authorize").len();
    assert!(p.on_unauthorized(mock.challenge("")).await);
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
    assert!(p.on_unauthorized(mock.challenge(r#", scope="a""#)).await);
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
    assert!(p.on_unauthorized(up("b")).await, "{:?}", p.last_error());
    assert_eq!(mock.find("/authorize")[1].query["scope"], "a b");
    // The token has a and b: the same challenge again cannot be fixed.
    assert!(!p.on_unauthorized(up("a b")).await);
    assert!(p.last_error().unwrap().contains("cannot help"));
    // New scopes, but the limit is reached after two step-ups.
    assert!(p.on_unauthorized(up("c")).await);
    assert!(!p.on_unauthorized(up("d")).await);
    assert!(p.last_error().unwrap().contains("giving up"));
    assert_eq!(mock.find("/authorize").len(), 3);
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
    assert!(
        p.on_unauthorized(mock.challenge(r#", scope="x""#)).await,
        "{:?}",
        p.last_error()
    );
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
    assert!(p.on_unauthorized(mock.challenge("")).await);
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
    assert!(p.on_unauthorized(mock.challenge("")).await);
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
    for _ in 0..10 {
        if p.on_unauthorized(mock.challenge("")).await {
            ok += 1;
        }
    }
    let authorizations = mock.find("/authorize").len();
    assert!(
        authorizations <= mcp_auth::MAX_REAUTHORIZATIONS,
        "{authorizations}"
    );
    assert!(ok < 10);
    assert!(p.last_error().unwrap().contains("giving up"));
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
    assert!(p.on_unauthorized(mock.challenge("")).await);
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
    assert!(
        p2.on_unauthorized(mock.challenge("")).await,
        "{:?}",
        p2.last_error()
    );
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
        p.on_unauthorized(mock.challenge("")),
        p.on_unauthorized(mock.challenge("")),
        p.on_unauthorized(mock.challenge("")),
    );
    assert!(a && b && c, "{:?}", p.last_error());
    assert_eq!(mock.find("/authorize").len(), 1);
    assert_eq!(mock.find("/token").len(), 1);
    assert_eq!(mock.find("/register").len(), 1);
}

// ---- 401 vs 403 ----

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
    assert!(!p.on_unauthorized(refused).await);
    let e = p.last_error().unwrap();
    assert!(e.contains("403 Forbidden"), "{e}");
    assert!(e.contains("cannot help"), "{e}");
    // No refresh, no discovery, no new authorization; the token is kept.
    assert_eq!(mock.paths().len(), before, "{:?}", mock.paths());
    assert_eq!(bearer(&p).await.as_deref(), Some("Bearer at-1"));
    // A 401 without WWW-Authenticate still re-authorizes (refresh first):
    // only the status tells the two apart.
    assert!(
        p.on_unauthorized(Unauthorized::new(StatusCode::UNAUTHORIZED, None))
            .await,
        "{:?}",
        p.last_error()
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
    assert!(
        !p.on_unauthorized(Unauthorized::new(StatusCode::FORBIDDEN, None))
            .await
    );
    assert!(mock.paths().is_empty(), "{:?}", mock.paths());
    // A Bearer challenge that is not insufficient_scope: no step-up either;
    // the error names what the server said.
    let www = HeaderValue::from_static(r#"Bearer error="invalid_token", scope="x""#);
    assert!(
        !p.on_unauthorized(Unauthorized::new(StatusCode::FORBIDDEN, Some(www)))
            .await
    );
    let e = p.last_error().unwrap();
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
    use mcp_proto::transport::{TransportErrorKind, TransportExt};
    use mcp_transport_http::HttpTransport;

    async fn call(t: &mut HttpTransport, id: i64) -> Result<Message, TransportErrorKind> {
        t.send(Request::new(id.into(), "ping", None).into())
            .await
            .unwrap();
        match tokio::time::timeout(std::time::Duration::from_secs(10), t.recv()).await {
            Ok(Some(Ok(m))) => Ok(m),
            Ok(Some(Err(e))) => Err(e.kind()),
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
    assert_eq!(
        call(&mut t, 2).await.unwrap_err(),
        TransportErrorKind::Unauthorized
    );
    assert_eq!(mcp_posts(&mock), 3, "a plain 403 is not retried");
    assert_eq!(mock.find("/authorize").len(), 1);
    assert_eq!(mock.find("/token").len(), 1);
    assert!(p.last_error().unwrap().contains("403 Forbidden"));

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
