//! DPoP (SEP-1932), the JWT-bearer grant (SEP-1933) and the
//! authorization server migration (SEP-2352), end to end through the HTTP
//! transport against an in-process MCP server with two authorization
//! servers (loopback). The mock checks each DPoP proof the way RFC 9449
//! §4.3 says a server must (signature against the proof's own key, `typ`,
//! `htm`, `htu`, `iat`, `ath`, nonce) and refuses what fails.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_auth::{AuthError, Es256Key, Interaction, OAuthProvider, WorkloadToken};
use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Message, Request as RpcRequest};
use mcp_proto::transport::TransportExt;
use mcp_transport_http::{BoxFuture, HttpTransport};
use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
use serde_json::{Value, json};

const AS_NONCE: &str = "as-nonce-1";
const RS_NONCE: &str = "rs-nonce-1";
const WORKLOAD_JWT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2ln";

#[derive(Clone, Default)]
struct Cfg {
    /// The AS advertises ES256 DPoP, issues DPoP tokens, and both servers
    /// require their nonce.
    dpop: bool,
    /// The token endpoint refuses JWT-bearer grants with this error.
    refuse_jwt_bearer: Option<&'static str>,
}

#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    authorization: Option<String>,
    dpop: Option<String>,
    body: String,
    /// What the mock answered.
    status: u16,
}

#[derive(Default)]
struct World {
    cfg: Cfg,
    /// The authorization server the PRM names ("as1" / "as2").
    current_as: String,
    seen: Vec<Seen>,
    tokens: u32,
    /// Proof `jti`s seen by the MCP endpoint (replays are refused).
    jtis: Vec<String>,
    /// Why the MCP endpoint refused proofs.
    proof_errors: Vec<String>,
}

struct Mock {
    base: String,
    world: Arc<Mutex<World>>,
}

impl Mock {
    async fn start(cfg: Cfg) -> Mock {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let world = Arc::new(Mutex::new(World {
            cfg,
            current_as: "as1".into(),
            ..World::default()
        }));
        let (b, w) = (base.clone(), world.clone());
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (b, w) = (b.clone(), w.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let (b, w) = (b.clone(), w.clone());
                        async move { Ok::<_, std::convert::Infallible>(handle(req, &b, &w).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(sock), svc)
                        .await;
                });
            }
        });
        Mock { base, world }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        let w = self.world.lock().unwrap();
        w.seen.iter().filter(|s| s.path == path).cloned().collect()
    }

    fn switch_to(&self, issuer: &str) {
        self.world.lock().unwrap().current_as = issuer.into();
    }
}

fn b64url_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => panic!("not base64url: {c}"),
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        acc = (acc << 6) | u32::from(val(c));
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn b64url(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, b| (a << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// RFC 9449 §4.3 checks: a well-formed `dpop+jwt`, ES256, signed by the key
/// in its `jwk` header (verified with ring), `htm`/`htu` of this request,
/// a recent `iat`, `ath` = hash of the token when one is presented. Returns
/// the claims.
fn check_proof(proof: &str, method: &str, htu: &str, token: Option<&str>) -> Result<Value, String> {
    let parts: Vec<&str> = proof.split('.').collect();
    if parts.len() != 3 {
        return Err("not a compact JWT".into());
    }
    let header: Value =
        serde_json::from_slice(&b64url_decode(parts[0])).map_err(|e| e.to_string())?;
    let claims: Value =
        serde_json::from_slice(&b64url_decode(parts[1])).map_err(|e| e.to_string())?;
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
        return Err(format!("bad header {header}"));
    }
    let jwk = &header["jwk"];
    if jwk.get("d").is_some() || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
        return Err(format!("bad jwk {jwk}"));
    }
    let mut point = vec![4u8];
    point.extend(b64url_decode(jwk["x"].as_str().unwrap_or_default()));
    point.extend(b64url_decode(jwk["y"].as_str().unwrap_or_default()));
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
        .verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &b64url_decode(parts[2]),
        )
        .map_err(|_| "signature does not verify".to_string())?;
    if claims["htm"] != method {
        return Err(format!("htm {} is not {method}", claims["htm"]));
    }
    if claims["htu"] != htu {
        return Err(format!("htu {} is not {htu}", claims["htu"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if claims["iat"]
        .as_u64()
        .is_none_or(|iat| iat.abs_diff(now) > 60)
    {
        return Err("iat is not recent".into());
    }
    if claims["jti"].as_str().is_none_or(str::is_empty) {
        return Err("no jti".into());
    }
    match token {
        Some(t) => {
            let want = b64url(ring::digest::digest(&ring::digest::SHA256, t.as_bytes()).as_ref());
            if claims["ath"] != want.as_str() {
                return Err(format!("ath {} is not {want}", claims["ath"]));
            }
        }
        None if claims.get("ath").is_some() => return Err("ath at the token endpoint".into()),
        None => {}
    }
    Ok(claims)
}

fn parse_form(body: &str) -> HashMap<String, String> {
    body.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            let v = v
                .replace("%3A", ":")
                .replace("%2F", "/")
                .replace('+', " ")
                .replace("%20", " ");
            (k.to_owned(), v)
        })
        .collect()
}

async fn handle(req: Request<Incoming>, base: &str, world: &Mutex<World>) -> Response<Full<Bytes>> {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let header = |n: &str| req.headers().get(n).map(|v| v.to_str().unwrap().to_owned());
    let (authorization, dpop) = (header("authorization"), header("dpop"));
    let body =
        String::from_utf8(req.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let mut w = world.lock().unwrap();
    let (status, headers, reply) =
        route(&mut w, base, &method, &path, &authorization, &dpop, &body);
    w.seen.push(Seen {
        method,
        path,
        authorization,
        dpop,
        body,
        status,
    });
    let mut b = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (k, v) in headers {
        b = b.header(k, v);
    }
    b.body(Full::new(Bytes::from(reply.to_string()))).unwrap()
}

type Reply = (u16, Vec<(&'static str, String)>, Value);

fn route(
    w: &mut World,
    base: &str,
    method: &str,
    path: &str,
    authorization: &Option<String>,
    dpop: &Option<String>,
    body: &str,
) -> Reply {
    let ok = |v: Value| (200, vec![], v);
    if method == "GET" && path == "/.well-known/oauth-protected-resource/mcp" {
        return ok(json!({
            "resource": format!("{base}/mcp"),
            "authorization_servers": [format!("{base}/{}", w.current_as)],
        }));
    }
    for issuer in ["as1", "as2"] {
        let iss = format!("{base}/{issuer}");
        if method == "GET" && path == format!("/.well-known/oauth-authorization-server/{issuer}") {
            let mut v = json!({
                "issuer": iss,
                "authorization_endpoint": format!("{iss}/authorize"),
                "token_endpoint": format!("{iss}/token"),
                "registration_endpoint": format!("{iss}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            });
            if w.cfg.dpop {
                v["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            return ok(v);
        }
        if method == "POST" && path == format!("/{issuer}/register") {
            return (
                201,
                vec![],
                json!({"client_id": format!("client-of-{issuer}")}),
            );
        }
        if method == "POST" && path == format!("/{issuer}/token") {
            let form = parse_form(body);
            let mut token_type = "Bearer";
            if w.cfg.dpop {
                let Some(proof) = dpop else {
                    return (
                        400,
                        vec![],
                        json!({"error": "invalid_dpop_proof", "error_description": "no proof"}),
                    );
                };
                let claims = match check_proof(proof, "POST", &format!("{iss}/token"), None) {
                    Ok(c) => c,
                    Err(e) => {
                        return (
                            400,
                            vec![],
                            json!({"error": "invalid_dpop_proof", "error_description": e}),
                        );
                    }
                };
                if claims["nonce"] != AS_NONCE {
                    return (
                        400,
                        vec![("dpop-nonce", AS_NONCE.into())],
                        json!({"error": "use_dpop_nonce"}),
                    );
                }
                token_type = "DPoP";
            }
            if form.get("grant_type").map(String::as_str)
                == Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
                && let Some(e) = w.cfg.refuse_jwt_bearer
            {
                return (400, vec![], json!({"error": e}));
            }
            w.tokens += 1;
            return ok(json!({
                "access_token": format!("at-{issuer}-{}", w.tokens),
                "token_type": token_type,
                "expires_in": 3600,
            }));
        }
    }
    if method == "POST" && path == "/mcp" {
        let prm = format!(r#"resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#);
        let scheme = if w.cfg.dpop { "DPoP" } else { "Bearer" };
        let refuse = |error: Option<&str>, extra: Vec<(&'static str, String)>| {
            let e = error
                .map(|e| format!(r#"error="{e}", "#))
                .unwrap_or_default();
            let mut h = vec![("www-authenticate", format!("{scheme} {e}{prm}"))];
            h.extend(extra);
            (401, h, json!({"error": error.unwrap_or("unauthorized")}))
        };
        let Some(auth) = authorization else {
            return refuse(None, vec![]);
        };
        let Some(token) = auth.strip_prefix(&format!("{scheme} ")) else {
            return refuse(Some("invalid_token"), vec![]);
        };
        if !token.starts_with(&format!("at-{}-", w.current_as)) {
            return refuse(Some("invalid_token"), vec![]);
        }
        if w.cfg.dpop {
            let checked = dpop
                .as_deref()
                .ok_or_else(|| "no proof".to_string())
                .and_then(|p| check_proof(p, "POST", &format!("{base}/mcp"), Some(token)));
            let claims = match checked {
                Ok(c) => c,
                Err(e) => {
                    w.proof_errors.push(e);
                    return refuse(Some("invalid_dpop_proof"), vec![]);
                }
            };
            let jti = claims["jti"].as_str().unwrap().to_owned();
            if w.jtis.contains(&jti) {
                w.proof_errors.push("replayed jti".into());
                return refuse(Some("invalid_dpop_proof"), vec![]);
            }
            w.jtis.push(jti);
            if claims["nonce"] != RS_NONCE {
                return refuse(
                    Some("use_dpop_nonce"),
                    vec![("dpop-nonce", RS_NONCE.into())],
                );
            }
        }
        let id = serde_json::from_str::<Value>(body).unwrap()["id"].clone();
        return ok(json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}));
    }
    (404, vec![], json!({"error": "not_found"}))
}

/// Approves at once: answers with the code, the state, and the issuer the
/// authorization URL belongs to.
struct AutoApprove;

impl Interaction for AutoApprove {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".into()
    }
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        let state = url
            .split(['?', '&'])
            .find_map(|p| p.strip_prefix("state="))
            .unwrap_or_default()
            .to_owned();
        Box::pin(async move { Ok(format!("http://127.0.0.1:9/callback?code=c&state={state}")) })
    }
}

async fn call(t: &mut HttpTransport, id: i64) -> Result<Message, String> {
    let msg: Message = RpcRequest::new(
        id.into(),
        "tools/list",
        Some(RawJson::from_string("{}".into()).unwrap()),
    )
    .into();
    t.send(msg)
        .await
        .map_err(|e| mcp_proto::error::chain(&e).to_string())?;
    tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .map_err(|_| "no answer in 10 s".to_string())?
        .ok_or("transport ended")?
        .map_err(|e| mcp_proto::error::chain(&e).to_string())
}

fn transport(mock: &Mock, auth: OAuthProvider) -> HttpTransport {
    HttpTransport::builder(mock.url())
        .auth(auth)
        .build()
        .unwrap()
}

#[tokio::test]
async fn dpop_proofs_scheme_and_nonce_retries_at_both_servers() {
    let mock = Mock::start(Cfg {
        dpop: true,
        ..Cfg::default()
    })
    .await;
    let key = Es256Key::generate().unwrap();
    let jkt = key.thumbprint();
    let auth = OAuthProvider::builder(mock.url())
        .interaction(AutoApprove)
        .dpop(key)
        .build()
        .unwrap();
    let mut t = transport(&mock, auth.clone());
    for id in 1..=3 {
        let m = call(&mut t, id).await.unwrap();
        assert!(matches!(m, Message::Response(_)), "{m:?}");
    }
    let w = mock.world.lock().unwrap();
    assert!(w.proof_errors.is_empty(), "{:?}", w.proof_errors);
    drop(w);
    // Token endpoint: a proof without nonce, refused with use_dpop_nonce,
    // then one with the AS's nonce; both valid proofs (checked by the mock).
    let token = mock.seen("/as1/token");
    assert_eq!(
        token.iter().map(|s| s.status).collect::<Vec<_>>(),
        [400, 200]
    );
    assert!(token.iter().all(|s| s.dpop.is_some()));
    assert_ne!(token[0].dpop, token[1].dpop, "a fresh proof for the retry");
    // MCP: 401 (no token), 401 use_dpop_nonce (proof without the RS nonce),
    // then every request with the DPoP scheme, a fresh proof and the nonce.
    let mcp = mock.seen("/mcp");
    assert_eq!(
        mcp.iter().map(|s| s.status).collect::<Vec<_>>(),
        [401, 401, 200, 200, 200]
    );
    assert!(mcp[1..].iter().all(|s| {
        s.authorization
            .as_deref()
            .unwrap()
            .starts_with("DPoP at-as1-")
    }));
    let tokens = auth.tokens().unwrap();
    assert_eq!(
        tokens.dpop_jkt.as_deref(),
        Some(jkt.as_str()),
        "bound to our key"
    );
    assert!(mcp.iter().all(|s| s.method == "POST"));
}

#[tokio::test]
async fn without_dpop_support_bearer_tokens_and_no_proofs() {
    let mock = Mock::start(Cfg::default()).await;
    let auth = OAuthProvider::builder(mock.url())
        .interaction(AutoApprove)
        .dpop(Es256Key::generate().unwrap())
        .build()
        .unwrap();
    let mut t = transport(&mock, auth.clone());
    call(&mut t, 1).await.unwrap();
    assert!(mock.seen("/as1/token").iter().all(|s| s.dpop.is_none()));
    let mcp = mock.seen("/mcp");
    assert!(mcp.iter().all(|s| s.dpop.is_none()));
    assert!(
        mcp[1]
            .authorization
            .as_deref()
            .unwrap()
            .starts_with("Bearer at-as1-")
    );
    assert_eq!(auth.tokens().unwrap().dpop_jkt, None);
}

#[tokio::test]
async fn reregisters_when_the_authorization_server_changes() {
    let mock = Mock::start(Cfg::default()).await;
    let auth = OAuthProvider::builder(mock.url())
        .interaction(AutoApprove)
        .build()
        .unwrap();
    let mut t = transport(&mock, auth.clone());
    call(&mut t, 1).await.unwrap();
    assert_eq!(mock.seen("/as1/register").len(), 1);
    // The PRM now names as2; the as1 token is refused.
    mock.switch_to("as2");
    let m = call(&mut t, 2).await.unwrap();
    assert!(matches!(m, Message::Response(_)), "{m:?}");
    assert_eq!(
        mock.seen("/as2/register").len(),
        1,
        "registered at the new server"
    );
    let at_as2 = mock.seen("/as2/token");
    assert_eq!(at_as2.len(), 1);
    let form = parse_form(&at_as2[0].body);
    assert_eq!(
        form["client_id"], "client-of-as2",
        "as1's client id is not reused"
    );
    assert!(
        mock.seen("/as1/token")
            .iter()
            .all(|s| parse_form(&s.body)["client_id"] == "client-of-as1")
    );
    // Back to as1: its registration is still good there, no new one.
    mock.switch_to("as1");
    call(&mut t, 3).await.unwrap();
    assert_eq!(mock.seen("/as1/register").len(), 1);
}

#[tokio::test]
async fn jwt_bearer_grant_sends_the_assertion_and_never_falls_back() {
    let mock = Mock::start(Cfg::default()).await;
    let auth = OAuthProvider::builder(mock.url())
        .client("wif-client", None)
        .jwt_bearer(WorkloadToken::fixed(WORKLOAD_JWT))
        .build()
        .unwrap();
    let mut t = transport(&mock, auth.clone());
    call(&mut t, 1).await.unwrap();
    let token = mock.seen("/as1/token");
    assert_eq!(token.len(), 1);
    let form = parse_form(&token[0].body);
    assert_eq!(
        form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(form["assertion"], WORKLOAD_JWT);
    assert_eq!(form["resource"], mock.url());
    assert_eq!(form["client_id"], "wif-client");
    assert!(mock.seen("/as1/register").is_empty() && mock.seen("/as1/authorize").is_empty());
}

#[tokio::test]
async fn a_refused_jwt_bearer_grant_fails_once_without_another_grant() {
    let mock = Mock::start(Cfg {
        refuse_jwt_bearer: Some("invalid_grant"),
        ..Cfg::default()
    })
    .await;
    let calls = Arc::new(Mutex::new(0));
    let c = calls.clone();
    let auth = OAuthProvider::builder(mock.url())
        .jwt_bearer(move || {
            *c.lock().unwrap() += 1;
            Ok(WORKLOAD_JWT.to_owned())
        })
        .build()
        .unwrap();
    let mut t = transport(&mock, auth.clone());
    let e = call(&mut t, 1).await.unwrap_err();
    assert!(
        e.to_lowercase().contains("unauthorized") || e.contains("401"),
        "{e}"
    );
    let token = mock.seen("/as1/token");
    assert_eq!(token.len(), 1, "one token request, no retry");
    assert_eq!(*calls.lock().unwrap(), 1);
    assert!(mock.seen("/as1/register").is_empty(), "no other grant");
    // The transport error names the authorization server's answer.
    assert!(e.contains("invalid_grant"), "{e}");
}

#[tokio::test]
async fn preregistered_credentials_are_not_taken_to_another_server() {
    let mock = Mock::start(Cfg::default()).await;
    let auth = OAuthProvider::builder(mock.url())
        .client("pre-registered-at-as1", None)
        .interaction(AutoApprove)
        .build()
        .unwrap();
    let mut t = transport(&mock, auth.clone());
    call(&mut t, 1).await.unwrap();
    mock.switch_to("as2");
    let why = call(&mut t, 2).await.unwrap_err();
    assert!(
        why.contains("pre-registered") && why.contains("/as2"),
        "{why}"
    );
    assert!(mock.seen("/as2/token").is_empty(), "nothing sent to as2");
}

#[tokio::test]
async fn stored_dpop_tokens_need_their_key() {
    let mock = Mock::start(Cfg {
        dpop: true,
        ..Cfg::default()
    })
    .await;
    let dir = std::env::temp_dir().join(format!("mcp-auth-dpop-store-{}", std::process::id()));
    let path = dir.join("tokens.json");
    let key = Es256Key::generate().unwrap();
    let jkt = key.thumbprint();
    let auth = OAuthProvider::builder(mock.url())
        .interaction(AutoApprove)
        .store(mcp_auth::FileStore::new(&path))
        .dpop(key)
        .build()
        .unwrap();
    call(&mut transport(&mock, auth.clone()), 1).await.unwrap();
    assert_eq!(
        auth.tokens().unwrap().dpop_jkt.as_deref(),
        Some(jkt.as_str())
    );
    // Another process with another key: the stored bound token is dropped.
    let other = OAuthProvider::builder(mock.url())
        .interaction(AutoApprove)
        .store(mcp_auth::FileStore::new(&path))
        .dpop(Es256Key::generate().unwrap())
        .build()
        .unwrap();
    assert!(other.tokens().is_none());
    // Without DPoP at all, too.
    let bearer_only = OAuthProvider::builder(mock.url())
        .interaction(AutoApprove)
        .store(mcp_auth::FileStore::new(&path))
        .build()
        .unwrap();
    assert!(bearer_only.tokens().is_none());
    let _ = std::fs::remove_dir_all(dir);
}
