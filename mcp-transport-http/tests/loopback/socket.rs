//! What only a local socket does: the URL's host and path kept when the
//! socket is given apart, a missing socket named in the error, URLs
//! refused at build. (Sessions, SSE, resumption, the standalone stream,
//! auth, the 2026-07-28 headers and the HTTP+SSE fallback run over a Unix
//! socket too: the `over_tcp_and_unix!` scenarios.)

use super::*;

#[cfg(unix)]
#[tokio::test]
async fn unix_socket_keeps_the_urls_host_and_path() {
    let server = serve_unix(|r: &Rec| {
        Reply::Json(StatusCode::OK, result(&r.id(), json!({"path": r.path}))).into()
    })
    .await;
    let socket = server
        .url
        .strip_prefix("unix://")
        .and_then(|u| u.strip_suffix("#/mcp"))
        .unwrap()
        .to_owned();
    let mut t = HttpTransport::builder("http://mcp.internal:8080/v1/mcp?tenant=a")
        .unix_socket(&socket)
        .build()
        .unwrap();
    set_version(&mut t, ProtocolVersion::V2025_06_18);
    for i in 0..3 {
        t.send(req(i, "ping", json!({}))).await.unwrap();
        assert_eq!(
            result_of(&recv_ok(&mut t).await),
            json!({"path": "/v1/mcp?tenant=a"})
        );
    }
    let reqs = server.requests();
    assert!(
        reqs.iter()
            .all(|r| r.header("host") == Some("mcp.internal:8080")),
        "{reqs:?}"
    );
    assert_eq!(server.connections(), 1, "one kept-alive socket connection");
}

#[cfg(unix)]
#[tokio::test]
async fn a_missing_socket_is_a_scoped_io_error_that_names_it() {
    let dir = SocketDir::new();
    let mut t = HttpTransport::new(&dir.url()).unwrap();
    t.send(req(1, "tools/list", json!({}))).await.unwrap();
    let e = recv_err(&mut t).await;
    assert_eq!(e.kind(), TransportErrorKind::Io);
    assert_eq!(e.request_id(), Some(&RequestId::Number(1)));
    let mut text = e.to_string();
    let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(&e);
    while let Some(c) = cause {
        text = format!("{text}: {c}");
        cause = c.source();
    }
    let path = dir.path().display().to_string();
    assert!(
        text.contains(&format!("unix socket {path}")) && text.contains("No such file"),
        "{text}"
    );
}

#[test]
fn socket_urls_refused_at_build() {
    let problem = |b: mcp_transport_http::HttpTransportBuilder| match b.build() {
        Err(HttpError::InvalidUrl { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        problem(HttpTransport::builder("unix://tmp/s.sock#/mcp")),
        UrlProblem::SocketPath
    ));
    assert!(matches!(
        problem(HttpTransport::builder("pipe:///x#/mcp")),
        UrlProblem::PipeName
    ));
    #[cfg(not(windows))]
    assert!(matches!(
        problem(HttpTransport::builder("pipe:///pipe/x#/mcp")),
        UrlProblem::SocketUnsupported(_)
    ));
    #[cfg(unix)]
    assert!(matches!(
        problem(HttpTransport::builder("https://h/mcp").unix_socket("/tmp/s.sock")),
        UrlProblem::HttpsOverSocket
    ));
    #[cfg(not(unix))]
    assert!(matches!(
        problem(HttpTransport::builder("unix:///tmp/s.sock#/mcp")),
        UrlProblem::SocketUnsupported(_)
    ));
}
