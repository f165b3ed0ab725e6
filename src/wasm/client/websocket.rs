//! `createWebSocketTransport`: the MCP-over-WebSocket client transport on the platform's
//! `WebSocket` (seed clause 17): subprotocol `mcp` (the connection fails when the server picks
//! another or none), one text frame per JSON-RPC message each way.
//!
//! | event | outcome |
//! |---|---|
//! | `open` with subprotocol `mcp` | `start` resolves |
//! | `open` with another subprotocol, `error` or `close` before `open` | `start` rejects (a `transport` error) |
//! | a text frame | parsed as JSON and handed to the client; not JSON → an `error` event |
//! | a binary frame | an `error` event, skipped |
//! | `close` after `open` | the client fails pending requests and fires `disconnect` |

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CloseEvent, Event, MessageEvent, WebSocket};

use super::Transport;
use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::wasm::{error_message, error_to_js};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcBatchResponse, JsonRpcMessage};
use crate::BoxFuture;

/// The subprotocol MCP over WebSocket uses ([`crate::http::headers::MCP_WEBSOCKET_SUBPROTOCOL`]).
pub use crate::http::headers::MCP_WEBSOCKET_SUBPROTOCOL as SUBPROTOCOL;

type Opened = Rc<RefCell<Option<oneshot::Sender<Result<(), String>>>>>;

/// The open socket and the callbacks it holds (dropped after the handlers are detached).
struct Open {
    socket: WebSocket,
    _on_open: Closure<dyn FnMut(Event)>,
    _on_error: Closure<dyn FnMut(Event)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

/// An [`Open`] not yet handed to the transport: dropped with it (the opening failed, or its
/// future was dropped — the client's connect timeout), the socket loses its handlers before
/// they are freed, and closes.
struct Opening(Option<Open>);

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(open) = self.0.take() {
            open.detach_and_close();
        }
    }
}

impl Open {
    fn detach_and_close(self) {
        self.socket.set_onopen(None);
        self.socket.set_onerror(None);
        self.socket.set_onclose(None);
        self.socket.set_onmessage(None);
        let _ = self.socket.close();
    }
}

/// The WebSocket transport (a [`ClientTransport`]).
pub struct WebSocketTransport {
    url: String,
    open: Rc<RefCell<Option<Open>>>,
}

/// Create an MCP-over-WebSocket transport for `createMCPClient`.
///
/// # Errors
/// Throws an `MCPError` (`-32602`, `data.path`) when `url` is missing or not a `ws(s)://` URL.
#[wasm_bindgen(js_name = createWebSocketTransport)]
pub fn create_websocket_transport(
    #[wasm_bindgen(unchecked_param_type = "MCPWebSocketTransportOptions")] options: JsValue,
) -> Result<Transport, JsValue> {
    let url = crate::wasm::convert::member(&options, "url", "options")
        .map_err(|e| error_to_js(&e))?
        .and_then(|u| u.as_string())
        .filter(|u| {
            let lower = u.to_ascii_lowercase();
            lower.starts_with("ws://") || lower.starts_with("wss://")
        })
        .ok_or_else(|| {
            error_to_js(
                &ErrorObject::invalid_params("options.url must be a ws:// or wss:// URL")
                    .with_data(serde_json::json!({ "path": "options.url" })),
            )
        })?;
    Ok(Transport::new(
        WebSocketTransport {
            url,
            open: Rc::new(RefCell::new(None)),
        },
        "websocket",
    ))
}

impl WebSocketTransport {
    async fn connect(&self, sink: TransportSink) -> Result<(), ClientError> {
        if let Some(old) = self.open.borrow_mut().take() {
            old.detach_and_close();
        }
        let socket = WebSocket::new_with_str(&self.url, SUBPROTOCOL).map_err(|e| {
            ClientError::Transport(format!("cannot open {}: {}", self.url, error_message(&e)))
        })?;
        let (tx, rx) = oneshot::channel();
        let opened: Opened = Rc::new(RefCell::new(Some(tx)));
        let settle = |opened: &Opened, outcome: Result<(), String>| -> bool {
            match opened.borrow_mut().take() {
                Some(tx) => {
                    let _ = tx.send(outcome);
                    true
                }
                None => false,
            }
        };
        let on_open = {
            let opened = opened.clone();
            Closure::<dyn FnMut(Event)>::new(move |_| {
                settle(&opened, Ok(()));
            })
        };
        let on_error = {
            let (opened, sink, url) = (opened.clone(), sink.clone(), self.url.clone());
            Closure::<dyn FnMut(Event)>::new(move |_| {
                if !settle(
                    &opened,
                    Err(format!("the WebSocket connection to {url} failed")),
                ) {
                    sink.error("the WebSocket reported an error");
                }
            })
        };
        let on_close = {
            let (opened, sink) = (opened.clone(), sink.clone());
            Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
                let reason = e.reason();
                let cause = if reason.is_empty() {
                    format!("the WebSocket closed (code {})", e.code())
                } else {
                    format!("the WebSocket closed (code {}: {reason})", e.code())
                };
                if !settle(&opened, Err(cause.clone())) {
                    sink.closed(cause);
                }
            })
        };
        let on_message = {
            let (sink, socket) = (sink.clone(), socket.clone());
            Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                let Some(text) = e.data().as_string() else {
                    sink.error("skipped a binary WebSocket frame (MCP uses text frames)");
                    return;
                };
                if let Some(reply) = sink.receive_text(text.as_bytes()) {
                    if let Err(e) = socket.send_with_str(&reply.to_json()) {
                        sink.error(format!(
                            "could not answer the server: {}",
                            error_message(&e)
                        ));
                    }
                }
            })
        };
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        socket.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let mut opening = Opening(Some(Open {
            socket: socket.clone(),
            _on_open: on_open,
            _on_error: on_error,
            _on_close: on_close,
            _on_message: on_message,
        }));
        let outcome = rx
            .await
            .unwrap_or_else(|_| Err("the WebSocket was dropped".to_owned()));
        let outcome = outcome.and_then(|()| match socket.protocol() {
            p if p == SUBPROTOCOL => Ok(()),
            p if p.is_empty() => Err(format!(
                "the server at {} accepted the WebSocket without the {SUBPROTOCOL:?} subprotocol",
                self.url
            )),
            p => Err(format!(
                "the server at {} chose the subprotocol {p:?}, not {SUBPROTOCOL:?}",
                self.url
            )),
        });
        match outcome {
            Ok(()) => {
                *self.open.borrow_mut() = opening.0.take();
                Ok(())
            }
            Err(cause) => Err(ClientError::Transport(cause)), // `opening` closes it
        }
    }
}

impl WebSocketTransport {
    /// Write one text frame.
    fn send_text(&self, text: &str) -> Result<(), ClientError> {
        match &*self.open.borrow() {
            None => Err(ClientError::closed("the WebSocket is not open")),
            Some(open) if open.socket.ready_state() != WebSocket::OPEN => {
                Err(ClientError::closed("the WebSocket is not open"))
            }
            Some(open) => open.socket.send_with_str(text).map_err(|e| {
                ClientError::closed(format!("the WebSocket send failed: {}", error_message(&e)))
            }),
        }
    }
}

impl ClientTransport for WebSocketTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(self.connect(sink))
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        let result = self.send_text(&message.to_json());
        Box::pin(async move { result })
    }

    /// One text frame: the batch's array.
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        let result = self.send_text(&batch.to_json());
        Box::pin(async move { result })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        if let Some(open) = self.open.borrow_mut().take() {
            open.detach_and_close();
        }
        Box::pin(async {})
    }
}
