//! `https` with a custom rustls configuration (the `tls_config(..)` hook):
//! HTTP/1.1 kept alive, and HTTP/2 negotiated by ALPN (the `http2`
//! feature), against a loopback TLS server (ALPN `h2` and `http/1.1`) with
//! a fresh self-signed certificate (made with the `openssl` CLI; skipped if
//! absent).
#![cfg(feature = "rustls")]
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "http2")]
use mcp_proto::jsonrpc::Message;
use mcp_proto::jsonrpc::Request;
use mcp_proto::transport::TransportExt;
use mcp_transport_http::HttpTransport;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use support::*;

fn self_signed() -> Option<(Vec<u8>, Vec<u8>)> {
    // One directory per certificate: the tests run in parallel.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcp-http-tls-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let status = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
        ])
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => Some((std::fs::read(cert).unwrap(), std::fs::read(key).unwrap())),
        _ => {
            eprintln!("SKIP: the openssl CLI could not make a test certificate");
            None
        }
    }
}

/// A TLS loopback server answering each request with its HTTP version, and
/// a transport to it whose rustls configuration trusts only its certificate.
async fn tls_server(cert_pem: &[u8], key_pem: &[u8]) -> (Server, HttpTransport) {
    // Deprecated in rustls 0.23.48 (no post-quantum key exchange), still
    // the workspace's provider (see `HttpTransportBuilder`'s TLS).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cert = CertificateDer::from_pem_slice(cert_pem).unwrap();
    let key = PrivateKeyDer::from_pem_slice(key_pem).unwrap();
    let mut server_cfg = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    server_cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_cfg));
    let server = serve_tls(
        |r: &Rec| {
            Reply::Sse(vec![
                Piece::Sleep(30),
                event(&result(&r.id(), json!({"v": format!("{:?}", r.version)}))),
            ])
            .into()
        },
        acceptor,
    )
    .await;

    // The custom client: trusts only the test certificate.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let client_cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let t = HttpTransport::builder(&server.url)
        .tls_config(client_cfg)
        .build()
        .unwrap();
    (server, t)
}

#[tokio::test]
async fn https_with_custom_roots_is_kept_alive() {
    let Some((cert_pem, key_pem)) = self_signed() else {
        return;
    };
    let (server, mut t) = tls_server(&cert_pem, &key_pem).await;
    for i in 0..4 {
        t.send(Request::new(i.into(), "ping", None).into())
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), t.recv())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
    let want = if cfg!(feature = "http2") {
        http::Version::HTTP_2
    } else {
        http::Version::HTTP_11
    };
    assert!(server.requests().iter().all(|r| r.version == want));
    // Sequential requests, one TLS connection.
    assert_eq!(server.connections(), 1);
}

#[cfg(feature = "http2")]
#[tokio::test]
async fn http2_over_tls_via_alpn_multiplexes_on_one_connection() {
    let Some((cert_pem, key_pem)) = self_signed() else {
        return;
    };
    let (server, mut t) = tls_server(&cert_pem, &key_pem).await;

    // The first request (initialize or server/discover in real use) sets up
    // the connection; the transport cannot know a fresh connection will be h2
    // before ALPN, so concurrent first requests would each connect.
    t.send(Request::new(100.into(), "ping", None).into())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), t.recv())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    for i in 0..8 {
        t.send(Request::new(i.into(), "ping", None).into())
            .await
            .unwrap();
    }
    for _ in 0..8 {
        let m = tokio::time::timeout(Duration::from_secs(10), t.recv())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let Message::Response(r) = m else {
            panic!("{m:?}")
        };
        assert_eq!(r.result.get(), r#"{"v":"HTTP/2.0"}"#);
    }
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.version == http::Version::HTTP_2)
    );
    // Eight concurrent requests, one TLS connection: HTTP/2 multiplexing.
    assert_eq!(server.connections(), 1);
}
