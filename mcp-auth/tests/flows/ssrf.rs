//! SSRF in OAuth discovery, against real listeners on 127.0.0.0/8.
//!
//! The MCP server (the mock) is on 127.0.0.1, so loopback is allowed; the
//! lab's classifier declares `127.0.0.2` private, `127.0.0.4` link-local
//! and `127.0.0.3` public, and a [`Trap`] on each counts the connections
//! it receives. Every attack names the trap through the server (its
//! challenge, its metadata, a redirect) and must end refused with the trap
//! never reached. Nothing leaves the machine.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_auth::{AddressClass, LookupFuture};

use super::*;

const PRIVATE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const PUBLIC: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);
const LINK_LOCAL: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 4);

/// The lab's classifier: the stand-ins above, the rest as on the Internet.
fn lab(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(PRIVATE) => AddressClass::Private,
        IpAddr::V4(PUBLIC) => AddressClass::Public,
        IpAddr::V4(LINK_LOCAL) => AddressClass::LinkLocal,
        other => mcp_auth::classify(other),
    }
}

/// The lab's DNS: `internal.test` is the private stand-in, `public.test`
/// the public one, `rebind.test` the public one at its first answer and the
/// private one at every later answer (DNS rebinding).
fn lab_dns() -> impl Fn(&str) -> LookupFuture + Send + Sync + 'static {
    let asked = Arc::new(AtomicUsize::new(0));
    move |name: &str| {
        let answer = match name {
            "internal.test" => Ok(vec![IpAddr::V4(PRIVATE)]),
            "public.test" => Ok(vec![IpAddr::V4(PUBLIC)]),
            "rebind.test" if asked.fetch_add(1, Ordering::SeqCst) == 0 => {
                Ok(vec![IpAddr::V4(PUBLIC)])
            }
            "rebind.test" => Ok(vec![IpAddr::V4(PRIVATE)]),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{name} is not in the lab's DNS"),
            )),
        };
        Box::pin(async move { answer }) as LookupFuture
    }
}

fn lab_policy() -> SsrfPolicy {
    SsrfPolicy::new().classifier(lab).lookup(lab_dns())
}

/// A listener that counts the connections it accepts and closes them.
struct Trap {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Trap {
    async fn at(ip: Ipv4Addr, port: u16) -> Trap {
        let listener = tokio::net::TcpListener::bind((ip, port)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
                drop(sock);
            }
        });
        Trap { port, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Traps on the private and the public stand-in, on the same port (so one
/// URL with a name reaches either, depending on what the name resolves to).
async fn trap_pair() -> (Trap, Trap) {
    loop {
        let private = Trap::at(PRIVATE, 0).await;
        if let Ok(listener) = tokio::net::TcpListener::bind((PUBLIC, private.port)).await {
            drop(listener);
            let public = Trap::at(PUBLIC, private.port).await;
            return (private, public);
        }
    }
}

fn lab_provider(mock: &Mock) -> OAuthProvider {
    mock.provider().ssrf_policy(lab_policy()).build().unwrap()
}

/// The provider's answer to a 401 whose challenge names `metadata_url`:
/// refused, as an invalid URL naming the SSRF policy.
async fn refused_challenge(mock: &Mock, metadata_url: &str) -> AuthError {
    let p = lab_provider(mock);
    let ch = mock.challenge(&format!(r#", resource_metadata="{metadata_url}""#));
    let e = retry(&p, ch).await.unwrap_err();
    assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{metadata_url}: {e}");
    assert!(mock.find("/authorize").is_empty());
    assert!(mock.find("/token").is_empty());
    e
}

#[tokio::test]
async fn a_private_metadata_url_is_refused_in_every_spelling() {
    let trap = Trap::at(PRIVATE, 0).await;
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        ..Cfg::default()
    })
    .await;
    let port = trap.port;
    for url in [
        format!("https://127.0.0.2:{port}/prm"),
        format!("https://2130706434:{port}/prm"),
        format!("https://0x7f000002:{port}/prm"),
        format!("https://0177.0.0.02:{port}/prm"),
        format!("https://0x7f.0.0.0x2:{port}/prm"),
        format!("https://127.2:{port}/prm"),
        format!("https://127.0.2:{port}/prm"),
        format!("https://127.0.0.2.:{port}/prm"),
        format!("https://[::ffff:127.0.0.2]:{port}/prm"),
        format!("https://[::ffff:7f00:2]:{port}/prm"),
        format!("https://internal.test:{port}/prm"),
        format!("http://127.0.0.2:{port}/prm"),
    ] {
        let e = refused_challenge(&mock, &url).await;
        assert!(
            e.to_string().contains("SSRF") || e.to_string().contains("https"),
            "{url}: {e}"
        );
        assert_eq!(trap.hits(), 0, "{url} reached the private listener");
    }
}

#[tokio::test]
async fn a_link_local_metadata_url_is_refused_even_with_private_allowed() {
    let trap = Trap::at(LINK_LOCAL, 0).await;
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        ..Cfg::default()
    })
    .await;
    let p = mock
        .provider()
        .ssrf_policy(lab_policy().allow_private(true))
        .build()
        .unwrap();
    let url = format!("https://127.0.0.4:{}/latest/meta-data", trap.port);
    let ch = mock.challenge(&format!(r#", resource_metadata="{url}""#));
    let e = retry(&p, ch).await.unwrap_err();
    assert!(e.to_string().contains("link-local"), "{e}");
    assert_eq!(trap.hits(), 0);
}

#[tokio::test]
async fn a_name_is_checked_at_connect_time_not_before() {
    // rebind.test answers "public" first, "private" after: an
    // implementation that resolves to check and resolves again to connect
    // would reach the private listener. Here the answer checked is the
    // answer connected to: the first request reaches the public stand-in
    // (whose answer is no TLS), the second is refused without a connection.
    let (private, public) = trap_pair().await;
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        ..Cfg::default()
    })
    .await;
    // One lookup shared by two providers: the second asks the DNS again.
    let policy = lab_policy();
    let provider = || mock.provider().ssrf_policy(policy.clone()).build().unwrap();
    let url = format!("https://rebind.test:{}/prm", private.port);
    let ch = || mock.challenge(&format!(r#", resource_metadata="{url}""#));
    // The first falls back to the server's own metadata after the TLS
    // failure, whatever it ends with.
    let _ = retry(&provider(), ch()).await;
    assert_eq!(public.hits(), 1);
    assert_eq!(private.hits(), 0);
    let second = retry(&provider(), ch()).await.unwrap_err();
    assert_eq!(second.kind(), AuthErrorKind::InvalidUrl, "{second}");
    assert!(second.to_string().contains("SSRF"), "{second}");
    assert_eq!(
        private.hits(),
        0,
        "the rebound name reached the private listener"
    );
}

#[tokio::test]
async fn every_redirect_hop_is_checked_again() {
    let trap = Trap::at(PRIVATE, 0).await;
    for target in [
        format!("https://127.0.0.2:{}/prm", trap.port),
        format!("https://internal.test:{}/prm", trap.port),
        format!("https://[::ffff:127.0.0.2]:{}/prm", trap.port),
    ] {
        let mock = Mock::start(Cfg {
            prm_paths: vec![],
            redirects: [(
                "/.well-known/oauth-protected-resource/mcp".to_owned(),
                target.clone(),
            )]
            .into(),
            ..Cfg::default()
        })
        .await;
        let p = lab_provider(&mock);
        let e = retry(&p, mock.challenge("")).await.unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{target}: {e}");
        assert!(e.to_string().contains("SSRF"), "{target}: {e}");
        assert_eq!(
            mock.find("/.well-known/oauth-protected-resource/mcp").len(),
            1
        );
        assert_eq!(trap.hits(), 0, "the redirect to {target} was followed");
    }
}

#[tokio::test]
async fn authorization_servers_and_endpoints_at_private_addresses_are_refused() {
    let trap = Trap::at(PRIVATE, 0).await;
    let at_trap = format!("https://127.0.0.2:{}", trap.port);
    // The protected resource metadata names a private authorization server.
    let mock = Mock::start(Cfg {
        authorization_servers: Some(vec![at_trap.clone()]),
        ..Cfg::default()
    })
    .await;
    let p = lab_provider(&mock);
    let e = retry(&p, mock.challenge("")).await.unwrap_err();
    assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{e}");
    assert!(e.to_string().contains("SSRF"), "{e}");
    assert_eq!(
        trap.hits(),
        0,
        "the private authorization server was contacted"
    );
    // Token and registration endpoints at a private address: the POSTs are
    // never sent.
    for field in ["token_endpoint", "registration_endpoint"] {
        let mock = Mock::start(Cfg {
            as_extra: json!({ field: format!("{at_trap}/{field}") }),
            ..Cfg::default()
        })
        .await;
        let p = lab_provider(&mock);
        let e = retry(&p, mock.challenge("")).await.unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{field}: {e}");
        assert!(e.to_string().contains("SSRF"), "{field}: {e}");
        assert!(mock.find("/token").is_empty());
        assert_eq!(trap.hits(), 0, "{field} at a private address was contacted");
    }
}

#[tokio::test]
async fn https_is_required_off_loopback() {
    let trap = Trap::at(PUBLIC, 0).await;
    let mock = Mock::start(Cfg {
        prm_paths: vec![],
        ..Cfg::default()
    })
    .await;
    for url in [
        format!("http://127.0.0.3:{}/prm", trap.port),
        format!("http://public.test:{}/prm", trap.port),
    ] {
        let e = refused_challenge(&mock, &url).await;
        assert!(e.to_string().contains("https"), "{url}: {e}");
    }
    assert_eq!(trap.hits(), 0);
    // Over https the public stand-in is contacted (and fails at TLS): the
    // refusals above are the https rule, not an unreachable listener.
    let p = lab_provider(&mock);
    let ch = mock.challenge(&format!(
        r#", resource_metadata="https://public.test:{}/prm""#,
        trap.port
    ));
    let _ = retry(&p, ch).await;
    assert_eq!(trap.hits(), 1);
}

#[tokio::test]
async fn the_loopback_exemption_follows_the_servers_own_address() {
    // The MCP server at 127.0.0.1: its authorization server on localhost
    // is reachable without any policy (the conformance suite's setup).
    let mock = Mock::start(Cfg::default()).await;
    let p = mock.provider().build().unwrap();
    assert!(retry(&p, mock.challenge("")).await.unwrap());
}
