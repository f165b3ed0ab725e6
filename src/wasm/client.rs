//! `createMCPClient` and the `MCPClient` class: the core [`McpClient`] for JS, over a fetch
//! (Streamable HTTP) transport, a WebSocket transport, or a transport written in JS.
//!
//! ```text
//!  createFetchTransport({ url })      ─┐
//!  createWebSocketTransport({ url })  ─┼─► MCPTransport ─► createMCPClient({ transport }) ─► MCPClient
//!  { start?(sink), send(m), close?() } ┘   (client/*.rs)      (this file; core McpClient)    connect / tools / call / callTool / disconnect / on
//!                                                                                            callToolAsTask / getTask / cancelTask / waitTask (tasks.rs)
//!                                                                                            listResources / readResource / listPrompts / getPrompt … (primitives.rs)
//! ```
//!
//! Errors reach JS as `MCPError`s ([`client_error_to_js`]): a JSON-RPC error keeps the server's
//! `code` and `data`; the client's own failures carry a `kind` and a code from the table there.

pub mod custom;
pub mod fetch;
mod handlers;
mod oauth;
mod primitives;
mod request_options;
mod tasks;
mod types;
pub mod websocket;

use std::time::Duration;

use js_sys::{Function, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{from_js, member, to_js};
use super::error_to_js;
use crate::client::{
    ClientError, ClientEvent, ClientOptions, ClientTransport, McpClient, RequestOptions,
    SinkHandler, SinkReply, TransportSink, DEFAULT_MCP_CLIENT_NAME, DEFAULT_MCP_CLIENT_VERSION,
};
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcBatchResponse, JsonRpcMessage};
use crate::BoxFuture;
use request_options::request_options;

/// A client transport for JS (made by `createFetchTransport`, `createWebSocketTransport`): pass
/// it to `createMCPClient`, which takes it over (one transport per client).
#[wasm_bindgen(js_name = MCPTransport)]
pub struct Transport {
    inner: Box<dyn ClientTransport>,
    kind: &'static str,
}

#[wasm_bindgen(js_class = MCPTransport)]
impl Transport {
    /// `'http'` or `'websocket'`.
    #[wasm_bindgen(getter, unchecked_return_type = "'http' | 'websocket'")]
    pub fn kind(&self) -> String {
        self.kind.to_owned()
    }
}

impl Transport {
    /// Wrap a core transport under a kind name.
    pub fn new(inner: impl ClientTransport, kind: &'static str) -> Self {
        Transport {
            inner: Box::new(inner),
            kind,
        }
    }
}

/// The transport the core client drives: the chosen one, plus the optional `trace` callback
/// that sees every message sent and received.
struct Traced {
    inner: Box<dyn ClientTransport>,
    trace: Option<Function>,
}

fn trace(trace: Option<&Function>, direction: &str, value: &Value) {
    if let Some(trace) = trace {
        if let Err(thrown) = trace.call2(&JsValue::UNDEFINED, &direction.into(), &to_js(value)) {
            web_sys::console::error_2(&"MCPClient: the trace callback threw".into(), &thrown);
        }
    }
}

impl ClientTransport for Traced {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        let sink = match &self.trace {
            None => sink,
            Some(f) => TransportSink::new(TracedSink {
                sink,
                trace: f.clone(),
            }),
        };
        self.inner.start(sink)
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        if self.trace.is_some() {
            let value = serde_json::to_value(&message).unwrap_or_default();
            trace(self.trace.as_ref(), "send", &value);
        }
        self.inner.send(message)
    }

    fn send_modern(
        &self,
        message: JsonRpcMessage,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        if self.trace.is_some() {
            let value = serde_json::to_value(&message).unwrap_or_default();
            trace(self.trace.as_ref(), "send", &value);
        }
        self.inner.send_modern(message, headers)
    }

    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        if self.trace.is_some() {
            let value = serde_json::to_value(&batch).unwrap_or_default();
            trace(self.trace.as_ref(), "send", &value);
        }
        self.inner.send_batch(batch)
    }

    fn uses_headers(&self) -> bool {
        self.inner.uses_headers()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }

    fn set_protocol_version(&self, version: &str) {
        self.inner.set_protocol_version(version);
    }

    fn session_id(&self) -> Option<String> {
        self.inner.session_id()
    }
}

struct TracedSink {
    sink: TransportSink,
    trace: Function,
}

impl SinkHandler for TracedSink {
    fn receive(&self, value: Value) -> Option<SinkReply> {
        trace(Some(&self.trace), "receive", &value);
        let reply = self.sink.receive(value);
        if let Some(reply) = &reply {
            let value = serde_json::from_str(&reply.to_json()).unwrap_or_default();
            trace(Some(&self.trace), "send", &value);
        }
        reply
    }

    fn error(&self, message: String) {
        self.sink.error(message);
    }

    fn closed(&self, cause: String) {
        self.sink.closed(cause);
    }
}

/// An MCP client in JS (seed `MCPClient`): `connect`, `tools`, `call`, `callTool`,
/// `disconnect`, `on`.
#[wasm_bindgen(js_name = MCPClient)]
pub struct Client {
    client: McpClient,
}

/// Create a client over a transport (seed `createMCPClient`).
///
/// # Errors
/// Throws an `MCPError` (`-32602`, `data.path`) when `transport` is neither an `MCPTransport`
/// nor an object with a `send` function, or another option has the wrong type.
#[wasm_bindgen(js_name = createMCPClient)]
pub fn create_mcp_client(
    #[wasm_bindgen(unchecked_param_type = "MCPClientOptions")] options: JsValue,
) -> Result<Client, JsValue> {
    Client::from_options(&options).map_err(|e| error_to_js(&e))
}

fn bad(path: &str, what: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("{path} {what}"))
        .with_data(serde_json::json!({ "path": path }))
}

fn string_member(object: &JsValue, key: &str) -> Result<Option<String>, ErrorObject> {
    member(object, key, "options")?
        .map(|v| {
            v.as_string()
                .ok_or_else(|| bad(&format!("options.{key}"), "must be a string"))
        })
        .transpose()
}

/// A timeout in ms from a JS value: a finite number ≥ 0.
fn timeout_member(object: &JsValue, key: &str, at: &str) -> Result<Option<Duration>, ErrorObject> {
    member(object, key, at)?
        .map(|v| match v.as_f64() {
            Some(ms) if ms.is_finite() && ms >= 0.0 => Ok(Duration::from_micros((ms * 1e3) as u64)),
            _ => Err(bad(&format!("{at}.{key}"), "must be a number of ms ≥ 0")),
        })
        .transpose()
}

impl Client {
    fn from_options(options: &JsValue) -> Result<Client, ErrorObject> {
        if !options.is_object() {
            return Err(bad("options", "must be an object"));
        }
        let transport = member(options, "transport", "options")?
            .ok_or_else(|| bad("options.transport", "is required"))?;
        let inner: Box<dyn ClientTransport> =
            if let Some(t) = Transport::try_from_js_value_ref(&transport) {
                t.inner
            } else if transport.is_object()
                && member(&transport, "send", "options.transport")?.is_some_and(|s| s.is_function())
            {
                Box::new(custom::JsTransport::new(transport))
            } else {
                return Err(bad(
                    "options.transport",
                    "must be an MCPTransport or an object with a send function",
                ));
            };
        let trace = member(options, "trace", "options")?
            .map(|f| {
                f.dyn_into::<Function>()
                    .map_err(|_| bad("options.trace", "must be a function"))
            })
            .transpose()?;
        let mut client_options = ClientOptions::new(
            string_member(options, "name")?.unwrap_or_else(|| DEFAULT_MCP_CLIENT_NAME.to_owned()),
            string_member(options, "version")?
                .unwrap_or_else(|| DEFAULT_MCP_CLIENT_VERSION.to_owned()),
        );
        if let Some(timeout) = timeout_member(options, "timeout", "options")? {
            client_options = client_options.with_timeout(timeout);
        }
        if let Some(version) = string_member(options, "protocolVersion")? {
            client_options = client_options.with_protocol_version(version);
        }
        // The era (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning):
        // `auto` (the default, as the Rust client: probe with `server/discover`, fall back to the
        // handshake), `modern` (no probe) or `legacy` (the `initialize` handshake only).
        let era = match string_member(options, "era")?.as_deref() {
            None => crate::client::ClientEra::default(),
            Some("auto") => crate::client::ClientEra::Auto,
            Some("modern") => crate::client::ClientEra::Modern,
            Some("legacy") => crate::client::ClientEra::Legacy,
            Some(_) => return Err(bad("options.era", "must be 'auto', 'legacy' or 'modern'")),
        };
        client_options = client_options.with_era(era);
        if let Some(handlers) = member(options, "handlers", "options")? {
            client_options = client_options.with_handler(handlers::JsHandler::from_js(&handlers)?);
        }
        Ok(Client {
            client: McpClient::new(Traced { inner, trace }, client_options),
        })
    }

    /// The core client (for Rust code that embeds the bindings).
    pub fn core(&self) -> &McpClient {
        &self.client
    }
}

fn arguments(args: &JsValue) -> Result<Value, JsValue> {
    if args.is_undefined() || args.is_null() {
        return Ok(Value::Null);
    }
    from_js(args).map_err(|e| client_error_to_js(&ClientError::InvalidArguments(e)))
}

#[wasm_bindgen(js_class = MCPClient)]
impl Client {
    /// Open the transport, settle the era (`'auto'`: `server/discover`, else the handshake;
    /// `'legacy'`: run `initialize` and send `notifications/initialized`), fire `connect`
    /// (seed `connect`; idempotent).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn connect(&self) -> Promise {
        let client = self.client.clone();
        super::promise(async move {
            client.connect().await.map_err(|e| client_error_to_js(&e))?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Fail every pending request, close the transport, fire `disconnect` (seed `disconnect`;
    /// idempotent).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn disconnect(&self) -> Promise {
        let client = self.client.clone();
        super::promise(async move {
            client.disconnect().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Whether the handshake is done and the transport open.
    #[wasm_bindgen(getter)]
    pub fn connected(&self) -> bool {
        self.client.is_connected()
    }

    /// The server's `initialize` result, once connected in the handshake era (`undefined` in the
    /// modern era: read [`serverInfo`](Self::server_info) for either).
    #[wasm_bindgen(getter, js_name = initializeResult, unchecked_return_type = "MCPInitializeResult | undefined")]
    pub fn initialize_result(&self) -> JsValue {
        self.client
            .initialize_result()
            .map_or(JsValue::UNDEFINED, |r| {
                to_js(&serde_json::to_value(r).unwrap_or_default())
            })
    }

    /// The era the client settled on, once connected: `'legacy'` (the `initialize` handshake,
    /// read [`initializeResult`](Self::initialize_result)) or `'modern'` (2026-07-28, read
    /// [`discoverResult`](Self::discover_result)).
    #[wasm_bindgen(getter, unchecked_return_type = "'legacy' | 'modern' | undefined")]
    pub fn era(&self) -> Option<String> {
        self.client.era().map(|era| {
            match era {
                crate::era::Era::Legacy => "legacy",
                crate::era::Era::Modern => "modern",
            }
            .to_owned()
        })
    }

    /// The server's `server/discover` result, once connected in the modern era (2026-07-28;
    /// <https://modelcontextprotocol.io/specification/2026-07-28/server/discover>).
    #[wasm_bindgen(getter, js_name = discoverResult, unchecked_return_type = "MCPDiscoverResult | undefined")]
    pub fn discover_result(&self) -> JsValue {
        self.client
            .discover_result()
            .map_or(JsValue::UNDEFINED, |r| to_js(&r))
    }

    /// The server's identity in either era, once connected: `serverInfo` of the `initialize`
    /// result, or of the `server/discover` result (its
    /// `_meta["io.modelcontextprotocol/serverInfo"]`); `undefined` when the server sent none.
    #[wasm_bindgen(getter, js_name = serverInfo, unchecked_return_type = "MCPServerImplementation | undefined")]
    pub fn server_info(&self) -> JsValue {
        let info = match self.client.initialize_result() {
            Some(init) => serde_json::to_value(init.server_info).ok(),
            None => self.client.discover_result().and_then(|discover| {
                discover
                    .get("serverInfo")
                    .or_else(|| {
                        discover
                            .get("_meta")
                            .and_then(|meta| meta.get(crate::era::META_SERVER_INFO))
                    })
                    .filter(|info| info.is_object())
                    .cloned()
            }),
        };
        info.map_or(JsValue::UNDEFINED, |info| to_js(&info))
    }

    /// The negotiated protocol version, once connected (`'2026-07-28'` in the modern era).
    #[wasm_bindgen(getter, js_name = protocolVersion)]
    pub fn protocol_version(&self) -> Option<String> {
        self.client.protocol_version()
    }

    /// The Streamable HTTP session id the server assigned, if any.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> Option<String> {
        self.client.session_id()
    }

    /// Run `tools/list` (following pages) and resolve to the descriptors (seed `tools`).
    #[wasm_bindgen(unchecked_return_type = "Promise<MCPToolDescriptor[]>")]
    pub fn tools(&self) -> Promise {
        let client = self.client.clone();
        super::promise(async move {
            let tools = list_tools(&client)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            Ok(to_js(&Value::Array(tools)))
        })
    }

    /// Run a remote tool with the seed's value semantics (seed `call`): the text blocks joined;
    /// `isError: true` rejects with an `MCPError` (`kind: 'tool'`, the text as message, the
    /// whole result as `data`); else the text parsed as JSON (the raw text when it is not
    /// JSON); no text → the `structuredContent`, else `undefined`.
    #[wasm_bindgen(unchecked_return_type = "Promise<unknown>")]
    pub fn call(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "MCPRequestOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let client = self.client.clone();
        let prepared = arguments(&args).and_then(|a| Ok((a, request_options(options)?)));
        super::promise(async move {
            let (args, options) = prepared?;
            let result = call_tool(&client, &name, args, options)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            call_value(result)
        })
    }

    /// Run `tools/call` and resolve to the whole result (content blocks, `structuredContent`,
    /// `isError`); an `isError` result resolves, it does not reject.
    #[wasm_bindgen(js_name = callTool, unchecked_return_type = "Promise<MCPToolResult>")]
    pub fn call_tool(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "MCPRequestOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let client = self.client.clone();
        let prepared = arguments(&args).and_then(|a| Ok((a, request_options(options)?)));
        super::promise(async move {
            let (args, options) = prepared?;
            let result = call_tool(&client, &name, args, options)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            Ok(to_js(&result))
        })
    }

    /// Send any request and resolve to its `result` (e.g. `'ping'`, `'resources/list'`).
    #[wasm_bindgen(unchecked_return_type = "Promise<unknown>")]
    pub fn request(
        &self,
        method: String,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, unknown>")] params: Option<
            JsValue,
        >,
        #[wasm_bindgen(unchecked_optional_param_type = "MCPRequestOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let client = self.client.clone();
        let params = params.filter(|p| !p.is_undefined() && !p.is_null());
        let prepared = params
            .as_ref()
            .map(arguments)
            .transpose()
            .and_then(|p| Ok((p, request_options(options)?)));
        super::promise(async move {
            let (params, options) = prepared?;
            let value = client
                .request(&method, params, options)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            Ok(to_js(&value))
        })
    }

    /// Subscribe to `'connect'` (no arguments), `'disconnect'` (the cause), `'notification'`
    /// (the notification message) or `'error'` (an `MCPError` not tied to a request). A
    /// listener's throw is logged with `console.error`, never breaking the client.
    ///
    /// # Errors
    /// Throws an `MCPError` (`-32602`) for any other event name, or a listener that is not a
    /// function.
    #[wasm_bindgen(skip_typescript)]
    pub fn on(&self, event: &str, listener: Function) -> Result<(), JsValue> {
        let wanted = match event {
            "connect" => "connect",
            "disconnect" => "disconnect",
            "notification" => "notification",
            "error" => "error",
            _ => {
                return Err(error_to_js(&bad(
                    "event",
                    "must be 'connect', 'disconnect', 'notification' or 'error'",
                )))
            }
        };
        if !listener.is_function() {
            return Err(error_to_js(&bad("listener", "must be a function")));
        }
        self.client.on(move |event: &ClientEvent| {
            if event.name() != wanted {
                return;
            }
            let argument = match event {
                ClientEvent::Disconnect { cause } => JsValue::from_str(cause),
                ClientEvent::Notification(n) => to_js(&serde_json::to_value(n).unwrap_or_default()),
                ClientEvent::Error(e) => client_error_to_js(e),
                _ => JsValue::UNDEFINED,
            };
            if let Err(thrown) = listener.call1(&JsValue::UNDEFINED, &argument) {
                web_sys::console::error_2(
                    &format!("MCPClient: a '{wanted}' listener threw").into(),
                    &thrown,
                );
            }
        });
        Ok(())
    }
}

// `tools`, `call` and `callTool` work on the results' JSON as it came (the core's
// `list_tools` / `call_tool` parse them into typed structs and back, and serde's derive for the
// tagged `Content` enum costs more package bytes than these few lines).

/// `tools/list`, every page (the core's one page walk, with its bounds), as the descriptors'
/// JSON.
async fn list_tools(client: &McpClient) -> Result<Vec<Value>, ClientError> {
    client.list_all("tools/list", "tools").await
}

/// `tools/call` with object (or no) arguments; the result's JSON, checked for a `content` array.
async fn call_tool(
    client: &McpClient,
    name: &str,
    arguments: Value,
    options: RequestOptions,
) -> Result<Value, ClientError> {
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        args @ Value::Object(_) => args,
        other => {
            return Err(ClientError::InvalidArguments(format!(
                "tool arguments must be a JSON object, not {}",
                crate::wire::json_text::JsonText(&other)
            )))
        }
    };
    let params = serde_json::json!({ "name": name, "arguments": arguments });
    let result = client.request("tools/call", Some(params), options).await?;
    if !result.get("content").is_some_and(Value::is_array) {
        return Err(ClientError::InvalidResponse(
            r#"tools/call result has no "content" array"#.into(),
        ));
    }
    Ok(result)
}

/// The seed's `call` value (the core's `client::result_value` over JSON): the text blocks
/// joined; `isError` → an `MCPError` of kind `tool` (the text as message, the result as `data`);
/// the text as JSON, else as a string; no text → `structuredContent`, else `undefined`.
fn call_value(result: Value) -> Result<JsValue, JsValue> {
    let text: String = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    if result["isError"] == Value::Bool(true) {
        let message = if text.is_empty() {
            crate::client::tools::TEXTLESS_FAILURE.to_owned()
        } else {
            text
        };
        let js = error_to_js(&ErrorObject::new(ErrorCode::SERVER_ERROR, message).with_data(result));
        let _ = Reflect::set(&js, &"kind".into(), &"tool".into());
        return Err(js);
    }
    if text.is_empty() {
        return Ok(result
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .map_or(JsValue::UNDEFINED, to_js));
    }
    Ok(to_js(
        &serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

/// A client error as a JS `MCPError`:
///
/// | error | `kind` | `code` | `data` |
/// |---|---|---|---|
/// | a JSON-RPC error response | `rpc` | the server's | the server's |
/// | an `isError` tool result (`call`) | `tool` | `-32000` | the whole result |
/// | the deadline passed | `timeout` | `-32001` | — |
/// | the transport closed | `closed` | `-32000` | — |
/// | one exchange failed (network) | `transport` | `-32000` | — |
/// | the connection was refused | `transport` | `-32000` | `{ addr }` |
/// | one exchange answered an HTTP error status | `transport` | `-32000` | `{ status }` |
/// | the HTTP session expired (404) | `session-expired` | `-32000` | `{ session }` |
/// | a malformed response | `invalid-response` | `-32603` | — |
/// | an unsupported protocol version | `unsupported-version` | `-32603` | `{ version }` |
/// | arguments that are not an object | `invalid-arguments` | `-32602` | — |
/// | a capability not declared (nothing sent) | `not-declared` | `-32600` | `{ capability }` |
/// | too many requests waiting (nothing sent) | `too-many-pending` | `-32000` | `{ limit }` |
/// | not connected | `not-connected` | `-32000` | — |
/// | a skill file that fails verification | `skill-verification` | `-32000` | `{ uri }` |
pub fn client_error_to_js(error: &ClientError) -> JsValue {
    let (kind, code, data) = match error {
        ClientError::Rpc(e) => {
            let js = error_to_js(e);
            let _ = Reflect::set(&js, &"kind".into(), &"rpc".into());
            return js;
        }
        ClientError::Tool { result, .. } => (
            "tool",
            ErrorCode::SERVER_ERROR,
            serde_json::to_value(result).ok(),
        ),
        ClientError::Timeout { .. } => ("timeout", ErrorCode::REQUEST_TIMEOUT, None),
        ClientError::TransportClosed { .. } => ("closed", ErrorCode::SERVER_ERROR, None),
        ClientError::Transport(_) => ("transport", ErrorCode::SERVER_ERROR, None),
        ClientError::ConnectionRefused { addr } => (
            "transport",
            ErrorCode::SERVER_ERROR,
            Some(serde_json::json!({ "addr": addr })),
        ),
        ClientError::HttpStatus { status, .. } => (
            "transport",
            ErrorCode::SERVER_ERROR,
            Some(serde_json::json!({ "status": status })),
        ),
        ClientError::SessionExpired { session } => (
            "session-expired",
            ErrorCode::SERVER_ERROR,
            Some(serde_json::json!({ "session": session })),
        ),
        ClientError::InvalidResponse(_) => ("invalid-response", ErrorCode::INTERNAL_ERROR, None),
        ClientError::UnsupportedVersion { version, .. } => (
            "unsupported-version",
            ErrorCode::INTERNAL_ERROR,
            Some(serde_json::json!({ "version": version })),
        ),
        ClientError::InvalidArguments(_) => ("invalid-arguments", ErrorCode::INVALID_PARAMS, None),
        ClientError::NotDeclared { capability, .. } => (
            "not-declared",
            ErrorCode::INVALID_REQUEST,
            Some(serde_json::json!({ "capability": capability })),
        ),
        ClientError::TooManyPending { limit } => (
            "too-many-pending",
            ErrorCode::SERVER_ERROR,
            Some(serde_json::json!({ "limit": limit })),
        ),
        ClientError::NotConnected => ("not-connected", ErrorCode::SERVER_ERROR, None),
        ClientError::Skill(e) => (
            "skill-verification",
            ErrorCode::SERVER_ERROR,
            Some(serde_json::json!({ "uri": e.uri() })),
        ),
    };
    let mut object = ErrorObject::new(code, error.to_string());
    object.data = data;
    let js = error_to_js(&object);
    let _ = Reflect::set(&js, &"kind".into(), &kind.into());
    js
}
