//! The transport test kit (`mcp_proto::transport::kit`) against the
//! WebSocket transport: the client side is this crate's transport, the
//! peer a tokio-tungstenite server socket on loopback.
#![allow(missing_docs, clippy::unwrap_used)]

use futures_util::{SinkExt, StreamExt};
use mcp_proto::transport::framed::Framed;
use mcp_proto::transport::kit::{CheckFuture, Failure, Harness, Outcome, Peer, Profile};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as Ws;

/// Small socket buffers keep the backpressure bounds tight.
const SOCKET_BUFFER: u32 = 64 * 1024;

fn socket() -> TcpSocket {
    let s = TcpSocket::new_v4().unwrap();
    s.set_send_buffer_size(SOCKET_BUFFER).unwrap();
    s.set_recv_buffer_size(SOCKET_BUFFER).unwrap();
    s
}

/// The server's end of the WebSocket.
struct WsPeer(Option<WebSocketStream<TcpStream>>);

impl Peer for WsPeer {
    async fn send(&mut self, text: String) {
        if let Some(ws) = self.0.as_mut() {
            let _ = ws.send(Ws::text(text)).await;
        }
    }

    async fn recv(&mut self) -> Option<String> {
        loop {
            match self.0.as_mut()?.next().await? {
                Ok(Ws::Text(t)) => return Some(t.as_str().to_owned()),
                Ok(Ws::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn kill(&mut self) {
        // The socket goes away without a close handshake.
        self.0 = None;
    }
}

struct Loopback;

impl Harness for Loopback {
    type Transport = Framed<WebSocketStream<TcpStream>, Ws>;
    type Peer = WsPeer;

    async fn connect(&self) -> (Self::Transport, WsPeer) {
        let listen = socket();
        listen.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listen.local_addr().unwrap();
        let listener = listen.listen(1).unwrap();
        let url = format!("ws://{addr}/mcp");
        let (client, server) = tokio::join!(
            async {
                let tcp = socket().connect(addr).await.unwrap();
                tokio_tungstenite::client_async(url, tcp).await.unwrap().0
            },
            async {
                let (tcp, _) = listener.accept().await.unwrap();
                tokio_tungstenite::accept_async(tcp).await.unwrap()
            }
        );
        (mcp_websocket_example::wrap(client), WsPeer(Some(server)))
    }

    fn profile(&self) -> Profile {
        // tungstenite's write buffer (128 KiB) and a message, plus both
        // sockets' buffers (Linux doubles the size asked for).
        let bound = 128 * 1024 + 16 * 1024 + 4 * SOCKET_BUFFER as usize;
        Profile::new()
            .send_buffer_bound(bound)
            .recv_buffer_bound(bound)
    }
}

fn block_on(check: CheckFuture<'_>) -> Result<Outcome, Failure> {
    tokio::runtime::Runtime::new().unwrap().block_on(check)
}

mcp_proto::transport_kit_tests!(
    Loopback,
    block_on,
    skip {
        OversizedIsScoped: "tungstenite enforces its max_message_size (64 MiB) by failing the \
        connection, as WebSocket's close code 1009 says: a too-large message is terminal \
        by the protocol",
    }
);
