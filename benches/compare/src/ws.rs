//! The WebSocket client side of the benchmarks: connect offering the `mcp` subprotocol, and
//! open the MCP conversation (`initialize`, then `notifications/initialized`).

use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::{check_initialize_reply, INITIALIZE, INITIALIZED};

/// A client socket.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Connect to a `ws://127.0.0.1:…` URL offering the subprotocol `mcp`, with Nagle off.
pub async fn connect(url: &str) -> Result<Socket, String> {
    if !url.starts_with("ws://127.0.0.1:") {
        return Err("only ws://127.0.0.1:… URLs are supported".into());
    }
    let mut request = url.into_client_request().map_err(|e| e.to_string())?;
    request
        .headers_mut()
        .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
    let (socket, _) = tokio_tungstenite::connect_async_with_config(request, None, true)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    Ok(socket)
}

/// The next text message (pings and pongs skipped); an error when the socket ends or sends
/// anything else.
pub async fn next_text(socket: &mut Socket) -> Result<String, String> {
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) => return Ok(text.as_str().to_owned()),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(other)) => return Err(format!("unexpected message {other:?}")),
            Some(Err(e)) => return Err(e.to_string()),
            None => return Err("the socket ended".into()),
        }
    }
}

/// Connect and open the MCP conversation: `initialize` (its reply checked), then
/// `notifications/initialized`.
pub async fn connect_initialized(url: &str) -> Result<Socket, String> {
    let mut socket = connect(url).await?;
    socket
        .send(Message::text(INITIALIZE))
        .await
        .map_err(|e| e.to_string())?;
    let reply = next_text(&mut socket).await?;
    check_initialize_reply(reply.as_bytes()).map_err(|e| e.0)?;
    socket
        .send(Message::text(INITIALIZED))
        .await
        .map_err(|e| e.to_string())?;
    Ok(socket)
}
