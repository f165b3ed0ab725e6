//! The WebSocket client transport (seed `createWebSocketClientTransport`, clause 17), over
//! tokio-tungstenite.
//!
//! `start` performs the RFC 6455 client handshake offering subprotocol `mcp`
//! (`Sec-WebSocket-Protocol: mcp`, plus any extra headers) and fails unless the server selects
//! exactly `mcp`. `ws://` and `http://` connect in the clear; `wss://` and `https://` use TLS
//! (feature `tls`). Each message is one text frame; each inbound text frame is one JSON-RPC
//! message or batch (a binary or non-JSON frame is reported as an `error` event and dropped). A
//! close frame, a socket error or EOF closes the transport with the cause.

use std::sync::Arc;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::native::ws::MCP_WEBSOCKET_SUBPROTOCOL;
use crate::wire::jsonrpc::{JsonRpcBatchResponse, JsonRpcMessage};
use crate::BoxFuture;

/// Options for [`WsTransport::new`] (seed `WebSocketClientTransportOptions`).
#[derive(Clone, Debug)]
pub struct WsClientOptions {
    /// `ws://`, `wss://`, `http://` or `https://` URL of the endpoint.
    pub url: String,
    /// Extra handshake headers (e.g. `Authorization`).
    pub headers: Vec<(String, String)>,
}

impl WsClientOptions {
    /// Options for `url` with no extra headers.
    pub fn new(url: impl Into<String>) -> Self {
        WsClientOptions {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// Add a handshake header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Writer = Arc<tokio::sync::Mutex<SplitSink<Socket, Message>>>;

struct Open {
    writer: Writer,
    reader: JoinHandle<()>,
}

/// A WebSocket [`ClientTransport`] (seed `WebSocketClientTransport`).
pub struct WsTransport {
    url: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    open: tokio::sync::Mutex<Option<Open>>,
}

impl std::fmt::Debug for WsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsTransport")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// `http(s)://` → `ws(s)://`; `ws(s)://` unchanged.
fn websocket_url(url: &str) -> Result<String, ClientError> {
    let lower = url.to_ascii_lowercase();
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" | "http" => "ws",
        "wss" | "https" if cfg!(feature = "tls") => "wss",
        "wss" | "https" => {
            return Err(ClientError::InvalidArguments(
                "wss:// needs orkestrel-mcp built with the `tls` feature".into(),
            ))
        }
        _ => {
            return Err(ClientError::InvalidArguments(format!(
                "{lower:?} is not a ws://, wss://, http:// or https:// URL"
            )))
        }
    };
    Ok(format!("{scheme}://{rest}"))
}

impl WsTransport {
    /// A transport for `options.url`.
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] for an unsupported scheme (`wss`/`https` need the
    /// `tls` feature) or a header that is not valid HTTP.
    pub fn new(options: WsClientOptions) -> Result<Self, ClientError> {
        let url = websocket_url(&options.url)?;
        let mut headers = Vec::new();
        for (name, value) in &options.headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| {
                ClientError::InvalidArguments(format!("bad header name {name:?}: {e}"))
            })?;
            let value = HeaderValue::from_str(value).map_err(|e| {
                ClientError::InvalidArguments(format!("bad value for header {name}: {e}"))
            })?;
            headers.push((name, value));
        }
        Ok(WsTransport {
            url,
            headers,
            open: tokio::sync::Mutex::new(None),
        })
    }

    async fn handshake(&self) -> Result<Socket, ClientError> {
        let fail = |what: String| ClientError::closed(format!("WebSocket {}: {what}", self.url));
        let mut request = self
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| fail(format!("bad request: {e}")))?;
        let headers = request.headers_mut();
        headers.insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(MCP_WEBSOCKET_SUBPROTOCOL),
        );
        for (name, value) in &self.headers {
            headers.append(name.clone(), value.clone());
        }
        // The output a server leaves unread is bounded as on the server side (an unread pong
        // per ping would otherwise pile up without end).
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_write_buffer_size(crate::native::ws::MAX_WRITE_BUFFER_BYTES);
        #[cfg(feature = "tls")]
        let connected = tokio_tungstenite::connect_async_tls_with_config(
            request,
            Some(config),
            false,
            Some(tokio_tungstenite::Connector::Rustls(Arc::new(
                super::tls::client_config(),
            ))),
        )
        .await;
        #[cfg(not(feature = "tls"))]
        let connected =
            tokio_tungstenite::connect_async_with_config(request, Some(config), false).await;
        let (socket, response) =
            connected.map_err(|e| match super::refused_addr(&self.url, &e) {
                Some(addr) => ClientError::ConnectionRefused { addr },
                None => fail(format!("handshake failed: {e}")),
            })?;
        let chosen = response
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok());
        if chosen != Some(MCP_WEBSOCKET_SUBPROTOCOL) {
            return Err(fail(format!(
                "the server selected subprotocol {chosen:?}, not {MCP_WEBSOCKET_SUBPROTOCOL:?}"
            )));
        }
        Ok(socket)
    }
}

async fn read_frames(mut stream: SplitStream<Socket>, sink: TransportSink, writer: Writer) {
    let cause = loop {
        match stream.next().await {
            Some(Ok(Message::Text(text))) => {
                if let Some(reply) = sink.receive_text(text.as_bytes()) {
                    let frame = Message::text(reply.to_json());
                    if let Err(e) = writer.lock().await.send(frame).await {
                        sink.error(format!("could not answer the server: {e}"));
                    }
                }
            }
            Some(Ok(Message::Binary(bytes))) => {
                sink.error(format!("dropped a {}-byte binary frame", bytes.len()));
            }
            Some(Ok(Message::Close(frame))) => {
                break match frame {
                    Some(f) => format!("the server closed the WebSocket ({} {})", f.code, f.reason),
                    None => "the server closed the WebSocket".to_owned(),
                };
            }
            Some(Ok(_)) => {} // ping / pong / raw frames: tungstenite answers pings itself.
            Some(Err(e)) => break format!("the WebSocket failed: {e}"),
            None => break "the WebSocket connection ended".to_owned(),
        }
    };
    sink.closed(cause);
}

impl WsTransport {
    /// Write one text frame.
    async fn send_text(&self, text: String) -> Result<(), ClientError> {
        let writer = match self.open.lock().await.as_ref() {
            Some(open) => open.writer.clone(),
            None => return Err(ClientError::closed("the WebSocket is not open")),
        };
        let mut writer = writer.lock().await;
        writer
            .send(Message::text(text))
            .await
            .map_err(|e| ClientError::closed(format!("the WebSocket write failed: {e}")))
    }
}

impl ClientTransport for WsTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let mut open = self.open.lock().await;
            if let Some(old) = open.take() {
                old.reader.abort();
            }
            let socket = self.handshake().await?;
            let (write, read) = socket.split();
            let writer: Writer = Arc::new(tokio::sync::Mutex::new(write));
            let reader = tokio::spawn(read_frames(read, sink, writer.clone()));
            *open = Some(Open { writer, reader });
            Ok(())
        })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(self.send_text(message.to_json()))
    }

    /// One text frame: the batch's array.
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(self.send_text(batch.to_json()))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(open) = self.open.lock().await.take() else {
                return;
            };
            let close = async {
                let mut writer = open.writer.lock().await;
                let _ = writer.send(Message::Close(None)).await;
                let _ = writer.close().await;
            };
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), close).await;
            open.reader.abort();
        })
    }
}
