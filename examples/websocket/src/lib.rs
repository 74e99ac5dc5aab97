//! An MCP transport over WebSocket: one JSON-RPC message per text frame
//! (`mcp_proto::transport::framed` does the rest).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let transport = mcp_websocket_example::connect("ws://127.0.0.1:8080/mcp").await?;
//! let client = mcp_client::Client::builder("my-agent", "1.0").connect(transport).await?;
//! # Ok(()) }
//! ```

use std::time::Duration;

use mcp_proto::transport::framed::{Frame, Framed};
use mcp_proto::transport::{TransportError, TransportErrorKind};
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The transport: a WebSocket connection as a `Transport`.
pub type WebSocketTransport = Framed<WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>, Ws>;

/// Connects to a `ws://` URL.
pub async fn connect(url: &str) -> Result<WebSocketTransport, TransportError> {
    let (ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .map_err(|e| TransportError::new(TransportErrorKind::Io, e))?;
    Ok(wrap(ws))
}

/// How long `poll_close` waits for the peer's side of the close handshake.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// Wraps an open WebSocket (client or server side).
pub fn wrap<S>(ws: WebSocketStream<S>) -> Framed<WebSocketStream<S>, Ws> {
    Framed::new(ws, Ws::text, decode)
        .with_close_timer(|| Box::pin(tokio::time::sleep(CLOSE_TIMEOUT)))
}

fn decode(frame: Ws) -> Frame {
    match frame {
        Ws::Text(t) => Frame::Text(t.as_str().to_owned()),
        Ws::Binary(b) => Frame::Text(String::from_utf8_lossy(&b).into_owned()),
        Ws::Close(_) => Frame::Close,
        Ws::Ping(_) | Ws::Pong(_) | Ws::Frame(_) => Frame::Skip,
    }
}
