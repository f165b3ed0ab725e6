//! `McpServer`: the transport-agnostic dispatch core (seed `MCPServer`, clauses 2–7 and 10).
//!
//! `dispatch` runs an already-parsed message; `handle` is the string boundary (parse → classify
//! → dispatch → serialize). The methods: `initialize`, `ping`, `tools/list`, `tools/call`;
//! notifications are handled silently; any other request method → `-32601`.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, RwLock};

use serde_json::{json, Map, Value};

use crate::context::RequestContext;
use crate::jsonrpc::{ErrorObject, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId};
use crate::protocol::{initialize_result, negotiate_initialize, Implementation};
use crate::tools::{panic_message, ToolRegistry};

/// A `request` listener: `(method, id)`; `id` is `None` for a notification (seed
/// `MCPServerEventMap`).
pub type RequestListener = Arc<dyn Fn(&str, Option<&RequestId>) + Send + Sync>;

/// The error handler listeners' panics are routed to: `(panic message, event name)`.
pub type ErrorHandler = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Options for [`McpServer::new`] (seed `MCPServerOptions`).
#[derive(Clone)]
pub struct ServerOptions {
    /// The server's identity (`serverInfo`).
    pub info: Implementation,
    /// The live tool registry the server exposes.
    pub tools: Arc<ToolRegistry>,
    /// Optional `instructions` for the `initialize` result.
    pub instructions: Option<String>,
    /// Where a panicking event listener is reported (seed `error` option). Default: a
    /// `tracing` error.
    pub on_error: Option<ErrorHandler>,
}

impl ServerOptions {
    /// Options with a name, a version and an empty registry.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerOptions {
            info: Implementation::new(name, version),
            tools: Arc::new(ToolRegistry::new()),
            instructions: None,
            on_error: None,
        }
    }

    /// Use this registry.
    pub fn with_tools(mut self, tools: Arc<ToolRegistry>) -> Self {
        self.tools = tools;
        self
    }

    /// Set the `initialize` instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Set the handler that receives listener panics.
    pub fn with_error_handler(
        mut self,
        handler: impl Fn(&str, &str) + Send + Sync + 'static,
    ) -> Self {
        self.on_error = Some(Arc::new(handler));
        self
    }
}

struct Inner {
    options: ServerOptions,
    listeners: RwLock<Vec<RequestListener>>,
}

/// The MCP server core. Cheap to clone (an `Arc` inside); share one across transports.
///
/// ```
/// # futures::executor::block_on(async {
/// use orkestrel_mcp::{McpServer, ServerOptions};
/// let server = McpServer::new(ServerOptions::new("docs", "1.0.0"));
/// let reply = server.handle(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
/// assert_eq!(reply.as_deref(), Some(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#));
/// # });
/// ```
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("info", &self.inner.options.info)
            .field("tools", &self.inner.options.tools)
            .finish()
    }
}

impl McpServer {
    /// A server over the options' registry (seed `createMCPServer`).
    pub fn new(options: ServerOptions) -> Self {
        McpServer {
            inner: Arc::new(Inner {
                options,
                listeners: RwLock::new(Vec::new()),
            }),
        }
    }

    /// The server's identity (seed `name` / `version`).
    pub fn info(&self) -> &Implementation {
        &self.inner.options.info
    }

    /// The live tool registry.
    pub fn tools(&self) -> &Arc<ToolRegistry> {
        &self.inner.options.tools
    }

    /// Subscribe to the `request` event, fired at the top of every dispatch, before the method
    /// runs, with `(method, id)` (seed clause 10). A panicking listener is caught and reported to
    /// the error handler; it never breaks the dispatch.
    pub fn on_request(&self, listener: impl Fn(&str, Option<&RequestId>) + Send + Sync + 'static) {
        self.inner
            .listeners
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(listener));
    }

    fn emit_request(&self, method: &str, id: Option<&RequestId>) {
        let listeners = self
            .inner
            .listeners
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for listener in listeners {
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| listener(method, id)))
            {
                let message = panic_message(&*panic);
                match &self.inner.options.on_error {
                    Some(handler) => {
                        // A throwing error handler neither escapes nor recurses.
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            handler(&message, "request")
                        }));
                    }
                    None => tracing::error!(%message, "a request listener panicked"),
                }
            }
        }
    }

    /// Run one already-parsed message (seed `dispatch`): a request → `Some(response)`; a
    /// notification → `None` whatever its method (clause 3); a response → `None`.
    pub async fn dispatch(&self, message: JsonRpcMessage) -> Option<JsonRpcResponse> {
        self.dispatch_with(message, RequestContext::new()).await
    }

    /// [`McpServer::dispatch`] with a transport-provided context (notification channel).
    pub async fn dispatch_with(
        &self,
        message: JsonRpcMessage,
        mut ctx: RequestContext,
    ) -> Option<JsonRpcResponse> {
        match message {
            JsonRpcMessage::Request(request) => {
                self.emit_request(&request.method, Some(&request.id));
                ctx.id = Some(request.id.clone());
                ctx.method.clone_from(&request.method);
                ctx.meta = meta_of(request.params.as_ref());
                let id = request.id.clone();
                let payload = self.call(request, ctx).await;
                Some(JsonRpcResponse {
                    id: Some(id),
                    payload,
                })
            }
            JsonRpcMessage::Notification(notification) => {
                self.emit_request(&notification.method, None);
                tracing::debug!(method = %notification.method, "notification");
                None
            }
            JsonRpcMessage::Response(response) => {
                tracing::debug!(id = ?response.id, "ignoring a response: no request of ours is pending");
                None
            }
        }
    }

    async fn call(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        let params = request.params.as_ref();
        match request.method.as_str() {
            "initialize" => {
                let version = negotiate_initialize(params)?;
                let mut result = initialize_result(&self.inner.options.info, version);
                result
                    .instructions
                    .clone_from(&self.inner.options.instructions);
                Ok(serde_json::to_value(result).expect("initialize results serialize"))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": self.tools().list() })),
            "tools/call" => {
                let (name, arguments) = tool_call_params(params)?;
                let result = self
                    .tools()
                    .execute(name, arguments, ctx)
                    .await
                    .map_err(ErrorObject::invalid_params)?;
                Ok(serde_json::to_value(result).expect("tool results serialize"))
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// The string boundary (seed `handle`, clause 7): malformed JSON → a `-32700` reply with id
    /// `null`; an invalid message → `-32600` (or `-32602` for non-object params) with the id when
    /// readable; a notification, a broken notification or a response → `None`.
    pub async fn handle(&self, message: &str) -> Option<String> {
        self.handle_slice(message.as_bytes())
            .await
            .map(|r| r.to_json())
    }

    /// [`McpServer::handle`] over bytes, returning the typed response.
    pub async fn handle_slice(&self, bytes: &[u8]) -> Option<JsonRpcResponse> {
        match JsonRpcMessage::from_slice(bytes) {
            Ok(message) => self.dispatch(message).await,
            Err(invalid) => {
                tracing::debug!(error = %invalid, "invalid message");
                invalid.response()
            }
        }
    }
}

fn meta_of(params: Option<&Map<String, Value>>) -> Option<Map<String, Value>> {
    match params?.get("_meta")? {
        Value::Object(meta) => Some(meta.clone()),
        _ => None,
    }
}

/// Read `tools/call` params: `name` (a string) and `arguments` (an object; absent → `{}`).
fn tool_call_params(params: Option<&Map<String, Value>>) -> Result<(&str, Value), ErrorObject> {
    let params =
        params.ok_or_else(|| ErrorObject::invalid_params(r#"tools/call needs "params""#))?;
    let name = match params.get("name") {
        Some(Value::String(name)) => name.as_str(),
        Some(_) => return Err(ErrorObject::invalid_params(r#""name" must be a string"#)),
        None => return Err(ErrorObject::invalid_params(r#"missing "name""#)),
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                r#""arguments" must be an object"#,
            ))
        }
    };
    Ok((name, arguments))
}
