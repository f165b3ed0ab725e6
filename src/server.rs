//! `McpServer`: the transport-agnostic dispatch core (seed `MCPServer`, clauses 2–7 and 10).
//!
//! `dispatch` runs an already-parsed message; `handle` is the string boundary (parse → classify
//! → dispatch → serialize). The methods: `initialize`, `ping`, `tools/list`, `tools/call`;
//! notifications are handled silently; any other request method → `-32601`.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, RwLock};

use futures::future::{AbortHandle, Abortable};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::context::{LogLevel, Outbound, RequestContext};
use crate::jsonrpc::{
    ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId,
};
use crate::peers::{Peers, Pending};
use crate::prompts::PromptRegistry;
use crate::protocol::{initialize_result, negotiate_initialize, Implementation};
use crate::resources::ResourceRegistry;
use crate::tools::{panic_message, ToolRegistry};
use crate::BoxFuture;

/// A `completion/complete` answer (spec `CompleteResult.completion`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values (at most 100).
    pub values: Vec<String>,
    /// How many values exist in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// Answers `completion/complete`: `(params, ctx)` where `params` holds `ref`, `argument`
        /// and `context` as the client sent them.
        pub type Completer = Arc<dyn Fn(Value, RequestContext) -> BoxFuture<'static, Result<Completion, ErrorObject>>>;
    } else {
        /// Answers `completion/complete`: `(params, ctx)` where `params` holds `ref`, `argument`
        /// and `context` as the client sent them.
        pub type Completer = Arc<dyn Fn(Value, RequestContext) -> BoxFuture<'static, Result<Completion, ErrorObject>> + Send + Sync>;
    }
}

/// Which list changed, for [`McpServer::notify_list_changed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`
    Tools,
    /// `notifications/resources/list_changed`
    Resources,
    /// `notifications/prompts/list_changed`
    Prompts,
}

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// A `request` listener: `(method, id)`; `id` is `None` for a notification (seed
        /// `MCPServerEventMap`). `Send + Sync` on native targets only (a JS listener is neither).
        pub type RequestListener = Arc<dyn Fn(&str, Option<&RequestId>)>;
    } else {
        /// A `request` listener: `(method, id)`; `id` is `None` for a notification (seed
        /// `MCPServerEventMap`). `Send + Sync` on native targets only (a JS listener is neither).
        pub type RequestListener = Arc<dyn Fn(&str, Option<&RequestId>) + Send + Sync>;
    }
}

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
    /// The resources (advertised when not empty).
    pub resources: Arc<ResourceRegistry>,
    /// The prompts (advertised when not empty).
    pub prompts: Arc<PromptRegistry>,
    /// The `completion/complete` handler (advertised as `completions` when set).
    pub completer: Option<Completer>,
    /// Whether to advertise `logging` and accept `logging/setLevel` (default `false`).
    pub logging: bool,
    /// Items per page of the list methods; `None` (the default) returns everything at once.
    pub page_size: Option<usize>,
}

impl ServerOptions {
    /// Options with a name, a version and an empty registry.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerOptions {
            info: Implementation::new(name, version),
            tools: Arc::new(ToolRegistry::new()),
            instructions: None,
            on_error: None,
            resources: Arc::new(ResourceRegistry::new()),
            prompts: Arc::new(PromptRegistry::new()),
            completer: None,
            logging: false,
            page_size: None,
        }
    }

    /// Advertise `logging` and accept `logging/setLevel`.
    pub fn with_logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// Paginate every list method with `page_size` items per page.
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = Some(page_size.max(1));
        self
    }

    /// Answer `completion/complete` with `completer(params, ctx)`.
    pub fn with_completer<F, Fut>(mut self, completer: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Completion, ErrorObject>>
            + crate::MaybeSend
            + 'static,
    {
        self.completer = Some(Arc::new(move |params, ctx| {
            Box::pin(completer(params, ctx))
        }));
        self
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
    peers: Peers,
    pending: Arc<Pending>,
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
                peers: Peers::default(),
                pending: Arc::new(Pending::default()),
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

    /// The live resource registry.
    pub fn resources(&self) -> &Arc<ResourceRegistry> {
        &self.inner.options.resources
    }

    /// The live prompt registry.
    pub fn prompts(&self) -> &Arc<PromptRegistry> {
        &self.inner.options.prompts
    }

    /// The capabilities this server advertises: `tools` always (as the seed), `resources`,
    /// `prompts`, `completions` and `logging` only when it has them.
    pub fn capabilities(&self) -> Value {
        let o = &self.inner.options;
        let mut caps = json!({ "tools": { "listChanged": true } });
        if !o.resources.is_empty() {
            caps["resources"] = json!({ "subscribe": true, "listChanged": true });
        }
        if !o.prompts.is_empty() {
            caps["prompts"] = json!({ "listChanged": true });
        }
        if o.completer.is_some() {
            caps["completions"] = json!({});
        }
        if o.logging {
            caps["logging"] = json!({});
        }
        caps
    }

    /// Give `scope` (a connection or a session) a push channel for messages not tied to a
    /// request: list changes, resource updates, and server→client requests of tools whose own
    /// channel cannot carry them.
    pub fn attach(&self, scope: &Arc<str>, outbound: Outbound) {
        self.inner
            .peers
            .with(scope, |peer| peer.outbound = Some(outbound));
    }

    /// Remove `scope`'s push channel (its stream closed), keeping its other state.
    pub fn detach(&self, scope: &Arc<str>) {
        self.inner.peers.with(scope, |peer| peer.outbound = None);
    }

    /// Forget `scope` (its connection or session ended): its state goes, its server→client
    /// requests fail and its requests in flight are cancelled.
    pub fn end_scope(&self, scope: &str) {
        self.inner.peers.remove(scope);
        self.inner.pending.fail_scope(scope);
    }

    /// Send `notifications/{tools,resources,prompts}/list_changed` to every attached scope;
    /// returns how many received it. Call after changing a registry.
    pub fn notify_list_changed(&self, kind: ListKind) -> usize {
        let method = match kind {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
        };
        let message = JsonRpcMessage::Notification(JsonRpcNotification::new(method));
        self.inner.peers.broadcast(&message, |_| true)
    }

    /// Send `notifications/resources/updated` for `uri` to every scope subscribed to it; returns
    /// how many received it.
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        let message = JsonRpcMessage::Notification(
            JsonRpcNotification::new("notifications/resources/updated")
                .with_params(json!({ "uri": uri })),
        );
        self.inner
            .peers
            .broadcast(&message, |p| p.subscriptions.contains(uri))
    }

    /// Subscribe to the `request` event, fired at the top of every dispatch, before the method
    /// runs, with `(method, id)` (seed clause 10). A panicking listener is caught and reported to
    /// the error handler; it never breaks the dispatch.
    pub fn on_request(
        &self,
        listener: impl Fn(&str, Option<&RequestId>) + crate::MaybeSend + crate::MaybeSync + 'static,
    ) {
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

    /// [`McpServer::dispatch`] with a transport-provided context (channel back, scope).
    ///
    /// On a scope, a request stays cancellable by `notifications/cancelled` while it runs; a
    /// cancelled request yields `None` (no response, spec `basic/utilities/cancellation`).
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
                ctx.pending = Some(self.inner.pending.clone());
                if let Some(scope) = &ctx.scope {
                    if let Some((caps, level)) = self
                        .inner
                        .peers
                        .read(scope, |p| (p.client_capabilities.clone(), p.log_level))
                    {
                        ctx.client_capabilities = ctx.client_capabilities.or(caps);
                        ctx.log_level = ctx.log_level.or(level);
                    }
                }
                let id = request.id.clone();
                let scope = ctx.scope.clone();
                if scope.is_none() {
                    let payload = self.call(request, ctx).await;
                    return Some(JsonRpcResponse {
                        id: Some(id),
                        payload,
                    });
                }
                let (handle, registration) = AbortHandle::new_pair();
                self.inner.peers.start(scope.clone(), id.clone(), handle);
                let outcome = Abortable::new(self.call(request, ctx), registration).await;
                self.inner.peers.finish(&scope, &id);
                match outcome {
                    Ok(payload) => Some(JsonRpcResponse {
                        id: Some(id),
                        payload,
                    }),
                    Err(_) => {
                        tracing::debug!(%id, "request cancelled; no response");
                        None
                    }
                }
            }
            JsonRpcMessage::Notification(notification) => {
                self.emit_request(&notification.method, None);
                if notification.method == "notifications/cancelled" {
                    let id = notification
                        .params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(RequestId::from_value);
                    if let Some(id) = id {
                        let cancelled = self.inner.peers.cancel(&ctx.scope, &id);
                        tracing::debug!(%id, cancelled, "notifications/cancelled");
                    }
                }
                None
            }
            JsonRpcMessage::Response(response) => {
                let resolved = match &response.id {
                    Some(id) => self.inner.pending.resolve(id, response.payload.clone()),
                    None => false,
                };
                if !resolved {
                    tracing::debug!(id = ?response.id, "ignoring a response: no request of ours is pending");
                }
                None
            }
        }
    }

    async fn call(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        let o = &self.inner.options;
        let params = request.params;
        match request.method.as_str() {
            "initialize" => {
                let version = negotiate_initialize(params.as_ref())?;
                if let Some(scope) = &ctx.scope {
                    let caps = params.as_ref().and_then(|p| p.get("capabilities")).cloned();
                    self.inner.peers.with(scope, |peer| {
                        peer.client_capabilities = caps;
                        peer.protocol_version = Some(version.to_owned());
                    });
                }
                let mut result = initialize_result(&o.info, version);
                result.capabilities = self.capabilities();
                result.instructions.clone_from(&o.instructions);
                Ok(serde_json::to_value(result).expect("initialize results serialize"))
            }
            "ping" => Ok(json!({})),
            "tools/list" => {
                let (tools, next) = page(o.tools.list(), params.as_ref(), o.page_size)?;
                Ok(listed("tools", tools, next))
            }
            "tools/call" => {
                let (name, arguments) = tool_call_params(params)?;
                let result = o
                    .tools
                    .execute(&name, arguments, ctx)
                    .await
                    .map_err(ErrorObject::invalid_params)?;
                Ok(serde_json::to_value(result).expect("tool results serialize"))
            }
            "resources/list" if !o.resources.is_empty() => {
                let (items, next) = page(o.resources.list(), params.as_ref(), o.page_size)?;
                Ok(listed("resources", items, next))
            }
            "resources/templates/list" if !o.resources.is_empty() => {
                let (items, next) = page(o.resources.templates(), params.as_ref(), o.page_size)?;
                Ok(listed("resourceTemplates", items, next))
            }
            "resources/read" if !o.resources.is_empty() => {
                let uri = string_param(params.as_ref(), "uri")?;
                let contents = o.resources.read(&uri, ctx).await?;
                Ok(json!({ "contents": contents }))
            }
            "resources/subscribe" | "resources/unsubscribe" if !o.resources.is_empty() => {
                let uri = string_param(params.as_ref(), "uri")?;
                let subscribe = request.method == "resources/subscribe";
                if let Some(scope) = &ctx.scope {
                    self.inner.peers.with(scope, |peer| {
                        if subscribe {
                            peer.subscriptions.insert(uri);
                        } else {
                            peer.subscriptions.remove(&uri);
                        }
                    });
                }
                Ok(json!({}))
            }
            "prompts/list" if !o.prompts.is_empty() => {
                let (items, next) = page(o.prompts.list(), params.as_ref(), o.page_size)?;
                Ok(listed("prompts", items, next))
            }
            "prompts/get" if !o.prompts.is_empty() => {
                let name = string_param(params.as_ref(), "name")?;
                let arguments = match params.as_ref().and_then(|p| p.get("arguments")) {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(args)) => args.clone(),
                    Some(_) => {
                        return Err(ErrorObject::invalid_params(
                            r#""arguments" must be an object"#,
                        ))
                    }
                };
                let result = o.prompts.get(&name, arguments, ctx).await?;
                Ok(serde_json::to_value(result).expect("prompt results serialize"))
            }
            "completion/complete" if o.completer.is_some() => {
                let params =
                    params.ok_or_else(|| ErrorObject::invalid_params(r#"missing "params""#))?;
                if !params.get("ref").is_some_and(Value::is_object)
                    || !params.get("argument").is_some_and(Value::is_object)
                {
                    return Err(ErrorObject::invalid_params(
                        r#"completion/complete needs "ref" and "argument" objects"#,
                    ));
                }
                let completer = o.completer.as_ref().expect("guarded above");
                let mut completion = completer(Value::Object(params), ctx).await?;
                completion.values.truncate(100);
                Ok(json!({ "completion": completion }))
            }
            "logging/setLevel" if o.logging => {
                let level = params
                    .as_ref()
                    .and_then(|p| p.get("level"))
                    .and_then(Value::as_str)
                    .and_then(LogLevel::from_name)
                    .ok_or_else(|| {
                        ErrorObject::invalid_params(
                            r#""level" must be a logging level (debug … emergency)"#,
                        )
                    })?;
                if let Some(scope) = &ctx.scope {
                    self.inner
                        .peers
                        .with(scope, |peer| peer.log_level = Some(level));
                }
                Ok(json!({}))
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
fn tool_call_params(params: Option<Map<String, Value>>) -> Result<(String, Value), ErrorObject> {
    let mut params =
        params.ok_or_else(|| ErrorObject::invalid_params(r#"tools/call needs "params""#))?;
    let name = match params.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(ErrorObject::invalid_params(r#""name" must be a string"#)),
        None => return Err(ErrorObject::invalid_params(r#"missing "name""#)),
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                r#""arguments" must be an object"#,
            ))
        }
    };
    Ok((name, arguments))
}

fn string_param(params: Option<&Map<String, Value>>, key: &str) -> Result<String, ErrorObject> {
    match params.and_then(|p| p.get(key)) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be a string"
        ))),
        None => Err(ErrorObject::invalid_params(format!("missing \"{key}\""))),
    }
}

/// One page of `items` after `params.cursor` (an opaque offset we issued); the next cursor when
/// more remain (spec `server/utilities/pagination`).
fn page<T>(
    items: Vec<T>,
    params: Option<&Map<String, Value>>,
    size: Option<usize>,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => cursor
            .strip_prefix("o")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor: {cursor}")))?,
        Some(_) => return Err(ErrorObject::invalid_params(r#""cursor" must be a string"#)),
    };
    let Some(size) = size else {
        return Ok((items.into_iter().skip(start).collect(), None));
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| format!("o{end}"));
    Ok((
        items.into_iter().skip(start).take(end - start).collect(),
        next,
    ))
}

fn listed<T: Serialize>(key: &str, items: Vec<T>, next: Option<String>) -> Value {
    let mut out = Map::new();
    out.insert(
        key.to_owned(),
        serde_json::to_value(items).expect("descriptors serialize"),
    );
    if let Some(next) = next {
        out.insert("nextCursor".to_owned(), Value::String(next));
    }
    Value::Object(out)
}
