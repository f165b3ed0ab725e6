//! `createFetchTransport`: the Streamable HTTP client transport over `fetch` (seed clause 15;
//! spec `basic/transports`), for browsers, Workers and node.
//!
//! Each message is one `POST` with `Content-Type: application/json` and
//! `Accept: application/json, text/event-stream`, plus the configured headers:
//!
//! | reply | outcome |
//! |---|---|
//! | `202` | nothing |
//! | `200`, `application/json` | the body's message(s) go to the client |
//! | `200`, `text/event-stream` | the body stream is decoded with the core [`crate::sse::Decoder`] chunk by chunk; each event's data goes to the client; reading stops at the response to the request |
//! | `404` to a request that carried `mcp-session-id` | `session-expired` |
//! | other status | a JSON-RPC response in the body answering the request is delivered; else a `transport` error with the status |
//!
//! Sessions: the `mcp-session-id` of the `initialize` reply is echoed on every later request;
//! `MCP-Protocol-Version` carries the negotiated version after `initialize`; `close` ends a
//! session with `DELETE` (best effort). Answers to server→client requests go in their own `POST`.
//!
//! The server's own stream: once `notifications/initialized` is accepted, a background `GET`
//! (`Accept: text/event-stream`) listens for messages the server sends outside any request (e.g.
//! `notifications/tools/list_changed`). A `405` means the server offers none (quietly dropped);
//! when the stream ends it is resumed with `Last-Event-ID` after the server's `retry` (default
//! 1 000 ms); after 5 reconnections that bring nothing, or any other failure, it stops with an
//! `error` event. `close` aborts it (`AbortController`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use js_sys::{Function, Promise, Reflect, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Request, RequestInit, Response};

use super::Transport;
use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::jsonrpc::{ErrorObject, JsonRpcMessage, RequestId};
use crate::sse;
use crate::wasm::{error_message, error_to_js};
use crate::BoxFuture;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window, worker or node), looked up at each call.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
}

struct Shared {
    url: String,
    headers: Vec<(String, String)>,
    fetch: Option<Function>,
    session: RefCell<Option<String>>,
    version: RefCell<Option<String>>,
    sink: RefCell<Option<TransportSink>>,
    /// The running `GET` listener's abort handle and generation (a new one stops the old).
    listener: RefCell<Option<AbortController>>,
    generation: Cell<u64>,
}

/// How long to wait before resuming the server's `GET` stream when it sent no `retry`.
const DEFAULT_RECONNECT_MS: u64 = 1_000;
/// How many reconnections in a row that bring no event before the `GET` stream is given up.
const MAX_IDLE_RECONNECTS: u32 = 5;

/// The fetch transport (a [`ClientTransport`]); cheap to clone.
#[derive(Clone)]
pub struct FetchTransport {
    shared: Rc<Shared>,
}

fn bad(path: &str, what: &str) -> JsValue {
    error_to_js(
        &ErrorObject::invalid_params(format!("{path} {what}"))
            .with_data(serde_json::json!({ "path": path })),
    )
}

/// Create a Streamable HTTP transport over `fetch` for `createMCPClient`.
///
/// # Errors
/// Throws an `MCPError` (`-32602`, `data.path`) when `url` is missing or not an `http(s)://`
/// URL, a header value is not a string, or `fetch` is not a function.
#[wasm_bindgen(js_name = createFetchTransport)]
pub fn create_fetch_transport(
    #[wasm_bindgen(unchecked_param_type = "MCPFetchTransportOptions")] options: JsValue,
) -> Result<Transport, JsValue> {
    let url = Reflect::get(&options, &"url".into())
        .ok()
        .and_then(|u| u.as_string())
        .ok_or_else(|| bad("options.url", "must be a string"))?;
    let lower = url.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err(bad("options.url", "must be an http:// or https:// URL"));
    }
    let mut headers = Vec::new();
    let given = Reflect::get(&options, &"headers".into()).unwrap_or(JsValue::UNDEFINED);
    if given.is_object() {
        let object: &js_sys::Object = given.unchecked_ref();
        for key in js_sys::Object::keys(object).iter() {
            let name = key.as_string().unwrap_or_default();
            let value = Reflect::get(&given, &key)
                .ok()
                .and_then(|v| v.as_string())
                .ok_or_else(|| bad(&format!("options.headers.{name}"), "must be a string"))?;
            headers.push((name, value));
        }
    }
    let fetch = Reflect::get(&options, &"fetch".into()).unwrap_or(JsValue::UNDEFINED);
    let fetch = if fetch.is_undefined() || fetch.is_null() {
        None
    } else {
        Some(
            fetch
                .dyn_into::<Function>()
                .map_err(|_| bad("options.fetch", "must be a function"))?,
        )
    };
    Ok(Transport::new(
        FetchTransport {
            shared: Rc::new(Shared {
                url,
                headers,
                fetch,
                session: RefCell::new(None),
                version: RefCell::new(None),
                sink: RefCell::new(None),
                listener: RefCell::new(None),
                generation: Cell::new(0),
            }),
        },
        "http",
    ))
}

/// Whether `value` (a message or a batch) holds a response to `id`.
fn answers(value: &Value, id: &RequestId) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|v| answers(v, id)),
        Value::Object(map) => {
            !map.contains_key("method")
                && map.get("id").and_then(RequestId::from_value).as_ref() == Some(id)
        }
        _ => false,
    }
}

fn transport_error(what: &str, e: &JsValue) -> ClientError {
    ClientError::Transport(format!("{what}: {}", error_message(e)))
}

impl Shared {
    fn sink(&self) -> Option<TransportSink> {
        self.sink.borrow().clone()
    }

    fn deliver(self: &Rc<Self>, value: Value) {
        let Some(sink) = self.sink() else { return };
        for reply in sink.receive(value) {
            let shared = self.clone();
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(e) = shared.exchange(reply).await {
                    if let Some(sink) = shared.sink() {
                        sink.error(format!("could not answer the server: {e}"));
                    }
                }
            });
        }
    }

    fn request(
        &self,
        method: &str,
        body: Option<&str>,
    ) -> Result<(Request, Option<String>), JsValue> {
        self.request_with(method, body, None, None, &[])
    }

    fn request_with(
        &self,
        method: &str,
        body: Option<&str>,
        last_event_id: Option<&str>,
        signal: Option<&web_sys::AbortSignal>,
        extra: &[(String, String)],
    ) -> Result<(Request, Option<String>), JsValue> {
        let headers = Headers::new()?;
        if body.is_some() {
            headers.set("content-type", "application/json")?;
            headers.set("accept", "application/json, text/event-stream")?;
        } else if method == "GET" {
            headers.set("accept", "text/event-stream")?;
        }
        if let Some(id) = last_event_id {
            headers.set("last-event-id", id)?;
        }
        for (name, value) in &self.headers {
            headers.set(name, value)?;
        }
        // A 2026-07-28 request carries its own headers (MCP-Protocol-Version, Mcp-Method,
        // Mcp-Name, Mcp-Param-*) and no session.
        let session = if extra.is_empty() {
            self.session.borrow().clone()
        } else {
            None
        };
        if let Some(session) = &session {
            headers.set("mcp-session-id", session)?;
        }
        if extra.is_empty() {
            if let Some(version) = &*self.version.borrow() {
                headers.set("mcp-protocol-version", version)?;
            }
        }
        for (name, value) in extra {
            headers.set(name, value)?;
        }
        let init = RequestInit::new();
        init.set_method(method);
        init.set_headers(&headers);
        if let Some(signal) = signal {
            init.set_signal(Some(signal));
        }
        if let Some(body) = body {
            init.set_body(&JsValue::from_str(body));
        }
        Ok((Request::new_with_str_and_init(&self.url, &init)?, session))
    }

    async fn fetch(&self, request: &Request) -> Result<Response, JsValue> {
        let promise = match &self.fetch {
            Some(fetch) => Promise::resolve(&fetch.call1(&JsValue::UNDEFINED, request)?),
            None => global_fetch(request),
        };
        JsFuture::from(promise).await?.dyn_into::<Response>()
    }

    async fn exchange(self: &Rc<Self>, message: JsonRpcMessage) -> Result<(), ClientError> {
        self.exchange_with(message, &[]).await
    }

    async fn exchange_with(
        self: &Rc<Self>,
        message: JsonRpcMessage,
        extra: &[(String, String)],
    ) -> Result<(), ClientError> {
        let (request_id, initialize) = match &message {
            JsonRpcMessage::Request(r) => (Some(r.id.clone()), r.method == "initialize"),
            _ => (None, false),
        };
        if initialize {
            // A new handshake starts a new session.
            self.session.borrow_mut().take();
            self.version.borrow_mut().take();
        }
        let (request, carried) = self
            .request_with("POST", Some(&message.to_json()), None, None, extra)
            .map_err(|e| transport_error("cannot build the request", &e))?;
        let response = self
            .fetch(&request)
            .await
            .map_err(|e| transport_error(&format!("POST {} failed", self.url), &e))?;
        let status = response.status();
        let headers = response.headers();
        if initialize && response.ok() {
            if let Ok(Some(id)) = headers.get("mcp-session-id") {
                *self.session.borrow_mut() = Some(id);
            }
        }
        if status == 202 {
            return Ok(());
        }
        if status == 404 {
            if let Some(session) = carried {
                self.session.borrow_mut().take();
                return Err(ClientError::SessionExpired { session });
            }
        }
        let content_type = headers
            .get("content-type")
            .ok()
            .flatten()
            .unwrap_or_default();
        let is_sse = content_type
            .split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"));
        if is_sse && response.ok() {
            return self.read_stream(&response, request_id).await;
        }
        let text = match response.text() {
            Ok(promise) => JsFuture::from(promise)
                .await
                .map_err(|e| transport_error("reading the reply failed", &e))?
                .as_string()
                .unwrap_or_default(),
            Err(e) => return Err(transport_error("reading the reply failed", &e)),
        };
        let value = serde_json::from_str::<Value>(&text).ok();
        let answered = match (&value, &request_id) {
            (Some(v), Some(id)) => answers(v, id),
            _ => false,
        };
        if response.ok() || answered {
            match value {
                Some(value) => {
                    self.deliver(value);
                    if !answered && request_id.is_some() {
                        return Err(ClientError::Transport(format!(
                            "HTTP {status}: the reply does not answer the request"
                        )));
                    }
                    Ok(())
                }
                None if text.is_empty() && request_id.is_none() => Ok(()),
                None => Err(ClientError::Transport(format!(
                    "HTTP {status}: the reply is not JSON: {}",
                    text.chars().take(300).collect::<String>()
                ))),
            }
        } else {
            let detail = value
                .as_ref()
                .and_then(|v| v.pointer("/error/message"))
                .and_then(Value::as_str)
                .map_or_else(
                    || text.trim().chars().take(300).collect::<String>(),
                    str::to_owned,
                );
            Err(ClientError::Transport(if detail.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status}: {detail}")
            }))
        }
    }

    /// Read an SSE body chunk by chunk through the core decoder until the response to
    /// `request_id` (or the end).
    async fn read_stream(
        self: &Rc<Self>,
        response: &Response,
        request_id: Option<RequestId>,
    ) -> Result<(), ClientError> {
        let mut decoder = sse::Decoder::new();
        let answered = read_body(response, &mut decoder, |event| {
            if event.data.is_empty() {
                return false;
            }
            match serde_json::from_str::<Value>(&event.data) {
                Ok(value) => {
                    let done = request_id.as_ref().is_some_and(|id| answers(&value, id));
                    self.deliver(value);
                    done
                }
                Err(e) => {
                    self.report(format!("skipped an SSE event that is not JSON: {e}"));
                    false
                }
            }
        })
        .await
        .map_err(|e| transport_error("the SSE stream failed", &e))?;
        match request_id {
            Some(id) if !answered => Err(ClientError::Transport(format!(
                "the SSE stream ended without a response to request {id}"
            ))),
            _ => Ok(()),
        }
    }
}

impl Shared {
    fn report(&self, message: String) {
        if let Some(sink) = self.sink() {
            sink.error(message);
        }
    }

    fn stop_listening(&self) {
        self.generation.set(self.generation.get() + 1);
        if let Some(controller) = self.listener.borrow_mut().take() {
            controller.abort();
        }
    }

    fn start_listening(self: &Rc<Self>) {
        self.stop_listening();
        let Ok(controller) = AbortController::new() else {
            return;
        };
        let signal = controller.signal();
        *self.listener.borrow_mut() = Some(controller);
        let shared = self.clone();
        let generation = self.generation.get();
        wasm_bindgen_futures::spawn_local(async move { shared.listen(generation, signal).await });
    }

    /// The server's `GET` stream, resumed until it fails, goes idle, or a newer listener (or
    /// `close`) replaces it.
    async fn listen(self: Rc<Self>, generation: u64, signal: web_sys::AbortSignal) {
        let live = |shared: &Shared| shared.generation.get() == generation;
        let mut decoder = sse::Decoder::new();
        let mut idle = 0;
        while live(&self) {
            let Ok((request, _)) =
                self.request_with("GET", None, decoder.last_event_id(), Some(&signal), &[])
            else {
                return;
            };
            let response = match self.fetch(&request).await {
                Ok(response) => response,
                Err(e) if live(&self) => {
                    return self.report(format!(
                        "the server's GET stream failed: {}",
                        error_message(&e)
                    ))
                }
                Err(_) => return,
            };
            if !live(&self) || response.status() == 405 {
                return;
            }
            if !response.ok() {
                return self.report(format!(
                    "the server's GET stream answered HTTP {}",
                    response.status()
                ));
            }
            let mut got = false;
            let read = read_body(&response, &mut decoder, |event| {
                got = true;
                if event.data.is_empty() {
                    return false; // a priming event
                }
                match serde_json::from_str::<Value>(&event.data) {
                    Ok(value) => self.deliver(value),
                    Err(e) => self.report(format!("skipped an SSE event that is not JSON: {e}")),
                }
                false
            })
            .await;
            if !live(&self) {
                return;
            }
            if let Err(e) = read {
                return self.report(format!(
                    "the server's GET stream failed: {}",
                    error_message(&e)
                ));
            }
            decoder.finish();
            idle = if got { 0 } else { idle + 1 };
            if idle > MAX_IDLE_RECONNECTS {
                return self.report("the server's GET stream keeps ending empty; stopped".into());
            }
            let wait = decoder.retry().unwrap_or(DEFAULT_RECONNECT_MS);
            futures_timer::Delay::new(Duration::from_millis(wait)).await;
        }
    }
}

/// Read a response body through `decoder`, calling `on_event` for each event until it returns
/// `true` (then the stream is cancelled) or the body ends. `Ok(true)` when stopped by `on_event`.
async fn read_body(
    response: &Response,
    decoder: &mut sse::Decoder,
    mut on_event: impl FnMut(sse::Event) -> bool,
) -> Result<bool, JsValue> {
    let Some(body) = response.body() else {
        return Ok(false);
    };
    let reader = method(&body, "getReader")?.call0(&body)?;
    let read = method(&reader, "read")?;
    let stopped = loop {
        let chunk = JsFuture::from(Promise::resolve(&read.call0(&reader)?)).await?;
        if Reflect::get(&chunk, &"done".into()).is_ok_and(|d| d.is_truthy()) {
            return Ok(false);
        }
        let bytes = Reflect::get(&chunk, &"value".into())
            .ok()
            .and_then(|v| v.dyn_into::<Uint8Array>().ok())
            .map(|a| a.to_vec())
            .unwrap_or_default();
        let mut stop = false;
        for event in decoder.push(&bytes) {
            stop |= on_event(event);
        }
        if stop {
            break true;
        }
    };
    // Done with this stream: release it (the server may keep it open).
    if let Ok(cancel) = method(&reader, "cancel") {
        if let Ok(p) = cancel.call0(&reader) {
            if let Ok(p) = p.dyn_into::<Promise>() {
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = JsFuture::from(p).await;
                });
            }
        }
    }
    Ok(stopped)
}

fn method(target: &JsValue, name: &str) -> Result<Function, JsValue> {
    Reflect::get(target, &name.into())?.dyn_into::<Function>()
}

impl ClientTransport for FetchTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        *self.shared.sink.borrow_mut() = Some(sink);
        Box::pin(async { Ok(()) })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let initialized = matches!(&message, JsonRpcMessage::Notification(n) if n.method == "notifications/initialized");
            self.shared.exchange(message).await?;
            if initialized {
                self.shared.start_listening();
            }
            Ok(())
        })
    }

    fn send_modern(
        &self,
        message: JsonRpcMessage,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move { self.shared.exchange_with(message, &headers).await })
    }

    fn uses_headers(&self) -> bool {
        true
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shared.stop_listening();
            self.shared.sink.borrow_mut().take();
            self.shared.version.borrow_mut().take();
            if self.shared.session.borrow().is_none() {
                return;
            }
            // End the session (best effort; a server without DELETE answers 405).
            if let Ok((request, _)) = self.shared.request("DELETE", None) {
                let _ = self.shared.fetch(&request).await;
            }
            self.shared.session.borrow_mut().take();
        })
    }

    fn set_protocol_version(&self, version: &str) {
        *self.shared.version.borrow_mut() = Some(version.to_owned());
    }

    fn session_id(&self) -> Option<String> {
        self.shared.session.borrow().clone()
    }
}
