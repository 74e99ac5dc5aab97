//! An MCP server on a Unix socket (`unix:///…/mcp.sock#/mcp`) whose
//! authorization server is the loopback mock: the protected resource
//! metadata comes through the socket, the resource is `http://localhost/mcp`,
//! and tokens are kept per socket.

use super::*;

use std::path::Path;

use mcp_proto::jsonrpc::{Message, Request as RpcRequest};
use mcp_proto::transport::TransportExt;
use mcp_transport_http::HttpTransport;

/// The MCP server on `path`: its metadata names `issuer` as its
/// authorization server; `/mcp` answers `Bearer at-1` and refuses the rest.
/// Records each request's method, path and `Host`.
fn serve_on_socket(path: &Path, issuer: String) -> Arc<Mutex<Vec<(String, String, String)>>> {
    let listener = tokio::net::UnixListener::bind(path).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (log, issuer) = (log.clone(), issuer.clone());
            tokio::spawn(async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let (log, issuer) = (log.clone(), issuer.clone());
                    async move {
                        let host = req
                            .headers()
                            .get("host")
                            .map(|h| h.to_str().unwrap().to_owned())
                            .unwrap_or_default();
                        let (method, path) =
                            (req.method().to_string(), req.uri().path().to_owned());
                        log.lock()
                            .unwrap()
                            .push((method.clone(), path.clone(), host));
                        let authorized = req.headers().get("authorization")
                            == Some(&HeaderValue::from_static("Bearer at-1"));
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let (status, v) = match (method.as_str(), path.as_str()) {
                            ("GET", "/.well-known/oauth-protected-resource/mcp") => (
                                200,
                                json!({"resource": "http://localhost/mcp", "authorization_servers": [issuer]}),
                            ),
                            ("POST", "/mcp") if authorized => {
                                let id =
                                    serde_json::from_slice::<Value>(&body).unwrap()["id"].clone();
                                (200, json!({"jsonrpc": "2.0", "id": id, "result": {}}))
                            }
                            ("POST", "/mcp") => {
                                let refusal = Response::builder()
                                    .status(401)
                                    .header("www-authenticate", r#"Bearer error="invalid_token""#)
                                    .body(Full::new(Bytes::new()))
                                    .unwrap();
                                return Ok::<_, std::convert::Infallible>(refusal);
                            }
                            _ => (404, json!({})),
                        };
                        Ok(Response::builder()
                            .status(status)
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(v.to_string())))
                            .unwrap())
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    seen
}

#[tokio::test]
async fn a_socket_servers_metadata_comes_through_the_socket_and_its_tokens_stay_its_own() {
    let mock = Mock::start(Cfg::default()).await;
    let (dir, other) = (
        test_support::SocketDir::new(),
        test_support::SocketDir::new(),
    );
    let seen = serve_on_socket(&dir.path(), mock.base.clone());
    let tokens = dir.path().with_file_name("tokens.json");
    let provider = |url: String| {
        OAuthProvider::builder(url)
            .interaction(
                FollowRedirect::new(
                    "http://127.0.0.1:9/callback",
                    SsrfPolicy::new().allow_loopback(true),
                )
                .unwrap(),
            )
            .store(mcp_auth::FileStore::new(&tokens))
            .build()
            .unwrap()
    };

    let p = provider(dir.url());
    let mut t = HttpTransport::builder(dir.url())
        .auth(p.clone())
        .build()
        .unwrap();
    t.send(RpcRequest::new(1.into(), "ping", None).into())
        .await
        .unwrap();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(20), t.recv())
        .await
        .unwrap();
    assert!(
        matches!(answer, Some(Ok(Message::Response(_)))),
        "{answer:?}"
    );

    // Refused, metadata, then the retry: all through the socket, as `localhost`.
    let seen = seen.lock().unwrap().clone();
    let paths: Vec<&str> = seen.iter().map(|(_, p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        ["/mcp", "/.well-known/oauth-protected-resource/mcp", "/mcp"]
    );
    assert!(
        seen.iter().all(|(_, _, host)| host == "localhost"),
        "{seen:?}"
    );
    // The authorization server saw no metadata request for the MCP server,
    // and the resource is the URL the server's requests carry.
    assert!(
        mock.find("/.well-known/oauth-protected-resource/mcp")
            .is_empty()
    );
    assert_eq!(
        mock.find("/authorize")[0].query["resource"],
        "http://localhost/mcp"
    );
    assert_eq!(
        mock.find("/token")[0].form()["resource"],
        "http://localhost/mcp"
    );

    // The tokens are this socket's: a provider for the same socket finds
    // them, one for another socket (also `http://localhost/mcp`) does not.
    assert_eq!(
        bearer(&provider(dir.url())).await.as_deref(),
        Some("Bearer at-1")
    );
    assert_eq!(bearer(&provider(other.url())).await, None);
}
