//! `LineTransport` over real sockets (TCP on 127.0.0.1, Unix), with a
//! `LineTransport` on both ends: the reuse third parties get.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mcp_proto::RawJson;
use mcp_proto::jsonrpc::{Request, Response};
use mcp_proto::transport::{Transport, TransportExt};
use mcp_proto::{Message, RequestId};
use mcp_transport_stdio::LineTransport;

/// Answers every request with `{"echo": <method>}` until the peer closes.
async fn echo_server<T: Transport + Unpin>(mut t: T) -> usize {
    let mut served = 0;
    while let Some(msg) = t.recv().await {
        if let Message::Request(req) = msg.unwrap() {
            let result = RawJson::from_string(format!("{{\"echo\":\"{}\"}}", req.method)).unwrap();
            t.send(Response::new(req.id, result).into()).await.unwrap();
            served += 1;
        }
    }
    served
}

async fn exercise<T: Transport + Unpin>(client: &mut T) {
    for i in 0..50i64 {
        client
            .send(Request::new(i.into(), format!("m{i}"), None).into())
            .await
            .unwrap();
    }
    for i in 0..50i64 {
        let reply = tokio::time::timeout(Duration::from_secs(10), client.recv())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let Message::Response(r) = reply else {
            panic!("{reply:?}")
        };
        assert_eq!(r.id, RequestId::from(i));
        assert_eq!(r.result.get(), format!("{{\"echo\":\"m{i}\"}}"));
    }
}

#[tokio::test]
async fn over_tcp_loopback() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let (r, w) = sock.into_split();
        echo_server(LineTransport::new(r, w)).await
    });
    let (r, w) = tokio::net::TcpStream::connect(addr)
        .await
        .unwrap()
        .into_split();
    let mut client = LineTransport::new(r, w);
    exercise(&mut client).await;
    client.close().await.unwrap();
    assert_eq!(server.await.unwrap(), 50);
}

#[cfg(unix)]
#[tokio::test]
async fn over_a_unix_socket_pair() {
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    let server = tokio::spawn(async move {
        let (r, w) = b.into_split();
        echo_server(LineTransport::new(r, w)).await
    });
    let (r, w) = a.into_split();
    // Type-erased, as a client holds it.
    let mut client: mcp_proto::transport::BoxTransport = Box::pin(LineTransport::new(r, w));
    exercise(&mut client).await;
    client.close().await.unwrap();
    assert_eq!(server.await.unwrap(), 50);
}
