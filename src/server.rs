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

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::context::RequestContext;
use crate::era::{self, Era};
use crate::host::Outbound;
use crate::jsonrpc::{
    ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse,
    RequestId,
};
use crate::mrtr::{Round, StateSealer, MRTR_METHODS};
use crate::peers::{Peers, Pending};
use crate::prompts::PromptRegistry;
use crate::protocol::{initialize_result, negotiate_initialize, Implementation, LogLevel};
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
    /// `ttlMs` on cacheable modern results (default 0: always revalidate).
    pub cache_ttl_ms: u64,
    /// The clock (ms since the Unix epoch) used to expire `requestState`; default
    /// [`host::defaults::clock`](crate::host::defaults::clock): the system clock on native
    /// targets, none (no expiry) on wasm.
    pub clock: Option<Clock>,
}

pub use crate::host::{Clock, ErrorHandler};

/// One open `subscriptions/listen` stream.
struct Listener {
    id: RequestId,
    filter: Value,
    outbound: Outbound,
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
            cache_ttl_ms: 0,
            clock: crate::host::defaults::clock(),
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

    /// Read time from `clock` (ms since the Unix epoch) instead of the default.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
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
    sealer: StateSealer,
    subscriptions: std::sync::Mutex<HashMap<u64, Listener>>,
    next_subscription: AtomicU64,
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
                sealer: StateSealer::random(),
                subscriptions: std::sync::Mutex::new(HashMap::new()),
                next_subscription: AtomicU64::new(1),
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
        let key = match kind {
            ListKind::Tools => "toolsListChanged",
            ListKind::Resources => "resourcesListChanged",
            ListKind::Prompts => "promptsListChanged",
        };
        self.inner.peers.broadcast(&message, |_| true)
            + self.publish(method, json!({}), |filter| {
                filter.get(key) == Some(&json!(true))
            })
    }

    /// Send a notification to every listen stream whose filter passes, tagged with its
    /// subscription id; returns how many received it.
    fn publish(&self, method: &str, params: Value, filter: impl Fn(&Value) -> bool) -> usize {
        let targets: Vec<(RequestId, Outbound)> = {
            let subs = self
                .inner
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            subs.values()
                .filter(|l| filter(&l.filter))
                .map(|l| (l.id.clone(), l.outbound.clone()))
                .collect()
        };
        targets
            .into_iter()
            .filter(|(id, outbound)| {
                let mut params = params.clone();
                params["_meta"] = json!({ era::META_SUBSCRIPTION_ID: id });
                outbound(JsonRpcMessage::Notification(
                    JsonRpcNotification::new(method).with_params(params),
                ))
            })
            .count()
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
            + self.publish(
                "notifications/resources/updated",
                json!({ "uri": uri }),
                |filter| {
                    filter
                        .get("resourceSubscriptions")
                        .and_then(Value::as_array)
                        .is_some_and(|uris| uris.iter().any(|u| u == uri))
                },
            )
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
                if ctx.era == Era::Modern || era::has_modern_meta(request.params.as_ref()) {
                    ctx.era = Era::Modern;
                    if let Err(error) = self.prepare_modern(&request, &mut ctx) {
                        return Some(JsonRpcResponse::error(Some(request.id), error));
                    }
                } else if let Some(scope) = &ctx.scope {
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
                    let payload = self.call_era(request, ctx).await;
                    return Some(JsonRpcResponse {
                        id: Some(id),
                        payload,
                    });
                }
                let (handle, registration) = AbortHandle::new_pair();
                self.inner.peers.start(scope.clone(), id.clone(), handle);
                let outcome = Abortable::new(self.call_era(request, ctx), registration).await;
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

    /// Validate a modern request's `_meta` and version, and set up its round (§2.3, §4).
    fn prepare_modern(
        &self,
        request: &JsonRpcRequest,
        ctx: &mut RequestContext,
    ) -> Result<(), ErrorObject> {
        let meta = era::parse_meta(request.params.as_ref())?;
        era::check_version(&meta, ctx.transport_version.as_deref())?;
        ctx.client_capabilities = Some(meta.client_capabilities);
        ctx.log_level = meta.log_level;
        if MRTR_METHODS.contains(&request.method.as_str()) {
            let params = request.params.as_ref();
            let responses = match params.and_then(|p| p.get("inputResponses")) {
                Some(Value::Object(map)) => map.clone(),
                _ => Map::new(),
            };
            let name = era::expected_name(request).unwrap_or_default();
            let state = match params.and_then(|p| p.get("requestState")) {
                None | Some(Value::Null) => None,
                Some(Value::String(sealed)) => {
                    let now = self.inner.options.clock.as_ref().map(|c| c());
                    Some(
                        self.inner
                            .sealer
                            .open(sealed, &request.method, &name, now)?,
                    )
                }
                Some(_) => {
                    return Err(ErrorObject::invalid_params(
                        r#""requestState" must be a string"#,
                    ))
                }
            };
            ctx.round = Some(Round::new(responses, state));
        }
        Ok(())
    }

    /// Run a request in its era: modern requests lose the removed methods, may end in an
    /// input-required result, and have their results decorated (§1 M8, §4, §6.1).
    async fn call_era(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        if ctx.era != Era::Modern {
            return self.call(request, ctx).await;
        }
        let method = request.method.clone();
        if era::REMOVED_METHODS.contains(&method.as_str()) {
            return Err(ErrorObject::method_not_found(&method));
        }
        let round = ctx.round.clone();
        let name = era::expected_name(&request).unwrap_or_default();
        let outcome = self.call(request, ctx).await;
        if let Some(round) = round {
            let (requested, state) = round.take_requests();
            if !requested.is_empty() {
                let mut result = json!({ "resultType": "input_required", "inputRequests": Map::from_iter(requested) });
                if let Some(state) = state {
                    let now = self.inner.options.clock.as_ref().map_or(0, |c| c());
                    result["requestState"] =
                        json!(self.inner.sealer.seal(&state, &method, &name, now));
                }
                self.decorate(&method, &mut result);
                return Ok(result);
            }
        }
        match outcome {
            Ok(mut result) => {
                self.decorate(&method, &mut result);
                Ok(result)
            }
            // 2026-07-28 answers "resource not found" with -32602 (changelog m6).
            Err(e) if e.code == ErrorCode::RESOURCE_NOT_FOUND => Err(ErrorObject {
                code: ErrorCode::INVALID_PARAMS,
                ..e
            }),
            Err(e) if e.code == ErrorCode::INPUT_REQUIRED => {
                Err(ErrorObject::internal("input required outside a round"))
            }
            Err(e) => Err(e),
        }
    }

    fn decorate(&self, method: &str, result: &mut Value) {
        let info =
            serde_json::to_value(&self.inner.options.info).expect("implementation info serializes");
        era::decorate_result(method, result, &info, self.inner.options.cache_ttl_ms);
    }

    /// `server/discover` (§2.1): versions, capabilities, instructions.
    fn discover(&self) -> Value {
        let mut result = json!({
            "supportedVersions": era::supported_versions(),
            "capabilities": self.capabilities(),
        });
        if let Some(instructions) = &self.inner.options.instructions {
            result["instructions"] = json!(instructions);
        }
        self.decorate("server/discover", &mut result);
        result
    }

    /// `subscriptions/listen` (§5): acknowledge with the honoured filter, then stay open until the
    /// stream closes (the future is dropped) — notifications flow through `publish`.
    async fn listen(
        &self,
        params: Option<Map<String, Value>>,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        let id = ctx.id.clone().expect("requests have ids");
        let outbound = ctx.outbound().ok_or_else(|| {
            ErrorObject::invalid_request(
                "subscriptions/listen needs a streaming response (SSE, stdio or WebSocket)",
            )
        })?;
        let asked = params
            .as_ref()
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let caps = self.capabilities();
        let mut honoured = Map::new();
        for (key, cap) in [
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ] {
            if asked.get(key) == Some(&json!(true)) && caps.get(cap).is_some() {
                honoured.insert(key.into(), json!(true));
            }
        }
        if let Some(uris) = asked.get("resourceSubscriptions").filter(|u| u.is_array()) {
            if caps["resources"]["subscribe"] == json!(true) {
                honoured.insert("resourceSubscriptions".into(), uris.clone());
            }
        }
        let ack = JsonRpcNotification::new("notifications/subscriptions/acknowledged").with_params(
            json!({ "_meta": { era::META_SUBSCRIPTION_ID: id }, "notifications": honoured }),
        );
        let token = self.inner.next_subscription.fetch_add(1, Ordering::Relaxed);
        {
            // Register and acknowledge under the lock, so no notification can slip in before the
            // acknowledgement, and none is lost between the two.
            let mut subscriptions = self
                .inner
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if !outbound(JsonRpcMessage::Notification(ack)) {
                return Err(ErrorObject::internal("the stream closed"));
            }
            subscriptions.insert(
                token,
                Listener {
                    id,
                    filter: Value::Object(honoured),
                    outbound,
                },
            );
        }
        struct Unsubscribe<'a>(&'a Inner, u64);
        impl Drop for Unsubscribe<'_> {
            fn drop(&mut self) {
                self.0
                    .subscriptions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&self.1);
            }
        }
        let _guard = Unsubscribe(&self.inner, token);
        futures::future::pending::<()>().await;
        unreachable!("a listen stream ends when its future is dropped")
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
            "server/discover" => Ok(self.discover()),
            "subscriptions/listen" if ctx.era == Era::Modern => self.listen(params, ctx).await,
            "tools/list" => {
                let tools = o.tools.list_json();
                let (tools, next) = page(
                    tools.iter().cloned().collect(),
                    params.as_ref(),
                    o.page_size,
                )?;
                Ok(listed_values("tools", tools, next))
            }
            "tools/call" => {
                let (name, arguments) = tool_call_params(params)?;
                let result = o.tools.execute(&name, arguments, ctx).await?;
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

fn listed_values(key: &str, items: Vec<Value>, next: Option<String>) -> Value {
    let mut out = Map::new();
    out.insert(key.to_owned(), Value::Array(items));
    if let Some(next) = next {
        out.insert("nextCursor".to_owned(), Value::String(next));
    }
    Value::Object(out)
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
