//! A client transport written in JS: `{ start?(sink), send(message), close?() }`. The client
//! hands `start` an `MCPTransportSink`; the transport reports what arrives with
//! `sink.receive(message)` (an object, a batch array, or JSON text), problems with
//! `sink.error(text)` and its own close with `sink.closed(cause)`. Its `close` is awaited at
//! most [`CLOSE_TIMEOUT`] (5 s: a transport over a process may end it in steps, as the TS SDK's
//! stdio transport does in about 4 s).

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::wasm::convert::{from_js, to_js};
use crate::wasm::error_message;
use crate::wire::jsonrpc::JsonRpcMessage;
use crate::BoxFuture;

/// How long `disconnect` waits for a JS transport's `close`: 5 s.
pub const CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A [`ClientTransport`] over a JS object with `send` (and optionally `start`, `close`).
pub struct JsTransport {
    object: JsValue,
}

impl JsTransport {
    /// Wrap a JS transport object (its `send` must be a function).
    pub fn new(object: JsValue) -> Self {
        JsTransport { object }
    }
}

/// Call `object[name](arg)` if it is a function and await what it returns; a missing method is
/// `Ok`, a throw or a rejection is the thrown value's message.
async fn call(object: &JsValue, name: &str, arg: Option<&JsValue>) -> Result<(), String> {
    let Ok(method) = Reflect::get(object, &name.into()) else {
        return Ok(());
    };
    let Some(method) = method.dyn_ref::<Function>() else {
        return Ok(());
    };
    let returned = match arg {
        Some(arg) => method.call1(object, arg),
        None => method.call0(object),
    }
    .map_err(|e| error_message(&e))?;
    JsFuture::from(Promise::resolve(&returned))
        .await
        .map(drop)
        .map_err(|e| error_message(&e))
}

fn message_to_js(message: &JsonRpcMessage) -> JsValue {
    to_js(&serde_json::to_value(message).unwrap_or_default())
}

impl ClientTransport for JsTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        let sink = JsValue::from(Sink {
            sink,
            transport: self.object.clone(),
        });
        Box::pin(async move {
            call(&self.object, "start", Some(&sink))
                .await
                .map_err(|e| ClientError::Transport(format!("the transport's start failed: {e}")))
        })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            call(&self.object, "send", Some(&message_to_js(&message)))
                .await
                .map_err(|e| ClientError::Transport(format!("the transport's send failed: {e}")))
        })
    }

    /// The transport's `close`, awaited at most [`CLOSE_TIMEOUT`]: one that never settles
    /// does not keep `disconnect` (and every later `connect`) waiting.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let closed = Box::pin(call(&self.object, "close", None));
            let bound = Box::pin(crate::host::defaults::delay(CLOSE_TIMEOUT));
            let problem = match futures::future::select(closed, bound).await {
                futures::future::Either::Left((Ok(()), _)) => return,
                futures::future::Either::Left((Err(e), _)) => format!("failed: {e}"),
                futures::future::Either::Right(_) => {
                    format!("did not settle within {CLOSE_TIMEOUT:?}")
                }
            };
            web_sys::console::warn_1(&format!("MCP transport close {problem}").into());
        })
    }
}

/// What a JS transport reports to (given to its `start`).
#[wasm_bindgen(js_name = MCPTransportSink)]
pub struct Sink {
    sink: TransportSink,
    transport: JsValue,
}

#[wasm_bindgen(js_class = MCPTransportSink)]
impl Sink {
    /// Report one inbound message, a batch array, or JSON text. Answers the client owes the
    /// server (e.g. to a `ping`) are sent back through the transport's `send`; a batch's, one
    /// by one in the batch's order (`send` takes one message).
    pub fn receive(
        &self,
        #[wasm_bindgen(unchecked_param_type = "JSONRPCMessage | JSONRPCMessage[] | string")]
        message: JsValue,
    ) {
        let replies = match message.as_string() {
            Some(text) => self.sink.receive_text(text.as_bytes()),
            None => match from_js(&message) {
                Ok(value) => self.sink.receive(value),
                Err(e) => {
                    self.sink.error(format!("skipped a message: {e}"));
                    return;
                }
            },
        };
        // The transport's `send` takes one message: a batch's answers go one by one, in order.
        let Some(reply) = replies else { return };
        let transport = self.transport.clone();
        let sink = self.sink.clone();
        crate::wasm::spawn(async move {
            for message in reply.into_messages() {
                if let Err(e) = call(&transport, "send", Some(&message_to_js(&message))).await {
                    sink.error(format!("could not answer the server: {e}"));
                }
            }
        });
    }

    /// Report a problem that does not close the transport (surfaces as an `error` event).
    pub fn error(&self, message: String) {
        self.sink.error(message);
    }

    /// Report that the transport closed: every pending request fails, `disconnect` fires.
    pub fn closed(&self, cause: Option<String>) {
        self.sink
            .closed(cause.unwrap_or_else(|| "the transport closed".to_owned()));
    }
}
