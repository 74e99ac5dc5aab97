//! The OAuth flows against an in-process authorization server + protected
//! resource (loopback), one test per discovery path and per refusal.
//!
//! The mock (this file) serves both; the tests are grouped by theme:
//!
//! - [`discovery`]: the full flow and every metadata discovery path.
//! - [`refusals`]: metadata, endpoints, states and issuers that are refused.
//! - [`clients`]: client registration and authentication at the token
//!   endpoint, client credentials, `offline_access`.
//! - [`tokens`]: refresh, step-up, persistence, re-authorization limits,
//!   one authorization for concurrent 401s.
//! - [`forbidden`]: 401 versus 403, directly and through the transport.
//! - [`caller`]: what the caller of a failed `Client` call sees.
//! - [`socket`]: an MCP server on a Unix socket.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_auth::{AuthError, AuthErrorKind, FollowRedirect, OAuthProvider, SsrfPolicy};
use mcp_transport_http::{AuthProvider, Unauthorized};
use serde_json::{Value, json};

mod caller;
mod clients;
mod discovery;
mod forbidden;
mod refusals;
#[cfg(unix)]
mod socket;
mod ssrf;
mod tokens;
mod urls;

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
    /// `authorization_servers` in the PRM (default: the mock's issuer).
    authorization_servers: Option<Vec<String>>,
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
    /// The token endpoint answers 400 with this OAuth error body.
    token_error: Option<Value>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            prm_paths: vec!["/.well-known/oauth-protected-resource/mcp".into()],
            prm_resource: None,
            prm_scopes: None,
            authorization_servers: None,
            issuer_path: String::new(),
            issuer_override: None,
            as_paths: vec!["/.well-known/oauth-authorization-server".into()],
            as_extra: json!({}),
            state_override: None,
            callback_iss: None,
            expires_in: 3600,
            redirects: HashMap::new(),
            mcp_forbid: None,
            token_error: None,
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
        Self::start_at("127.0.0.1", cfg).await
    }

    /// The mock on another loopback address (`127.0.0.2`, ...).
    async fn start_at(ip: &str, cfg: Cfg) -> Mock {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let base = format!("http://{ip}:{}", listener.local_addr().unwrap().port());
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
                SsrfPolicy::new().allow_loopback(true),
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
            "authorization_servers": cfg.authorization_servers.clone().unwrap_or(vec![issuer.clone()]),
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
        if let Some(e) = &cfg.token_error {
            return json_resp(400, e.clone());
        }
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
        let msg = serde_json::from_str::<Value>(&body).unwrap();
        let id = msg["id"].clone();
        // Enough MCP for a client: a legacy server (2025-11-25) with one tool.
        return match msg["method"].as_str() {
            _ if id.is_null() => Response::builder()
                .status(202)
                .body(Full::new(Bytes::new()))
                .unwrap(),
            Some("server/discover") => json_resp(
                200,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
            ),
            Some("initialize") => json_resp(
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mock", "version": "1"},
                }}),
            ),
            Some("tools/call") => json_resp(
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}),
            ),
            _ => json_resp(200, json!({"jsonrpc": "2.0", "id": id, "result": {}})),
        };
    }
    json_resp(404, json!({"error": "not_found"}))
}

/// The provider's answer to a refusal, its error as the [`AuthError`] it is.
async fn retry(p: &OAuthProvider, refusal: Unauthorized) -> Result<bool, AuthError> {
    p.on_unauthorized(refusal)
        .await
        .map_err(|e| *e.downcast::<AuthError>().expect("an AuthError"))
}

async fn bearer(p: &OAuthProvider) -> Option<String> {
    p.header().await.map(|v| v.to_str().unwrap().to_owned())
}
