//! `McpServer`: the transport-agnostic dispatch core (seed `MCPServer`, clauses 2–7 and 10).
//!
//! `dispatch` runs an already-parsed message; `handle` is the string boundary (parse → classify
//! → dispatch → serialize). The method table (`initialize`, `ping`, `server/discover`, tools,
//! resources, prompts, completion, logging) is in `methods.rs`; notifications are handled
//! silently; any other request method → `-32601`. The server reads time only from its injected
//! [`Clock`] ([`ServerOptions::clock`]) and spawns nothing: its futures run on the host's task.
//!
//! ```text
//!  dispatch_with(message, ctx) ─► request listeners ─► modern? (modern.rs: _meta, version, round)
//!         │                                                    │
//!         │                            lists.rs: the cached lists ─► the registries' listings
//!         │                            methods.rs: the method table ─► tools / resources / prompts
//!         ├─ notifications/cancelled ─► abort the request in flight (peers)
//!         └─ a response ─► the pending server→client request with that id
//!  push.rs: attach / notify_* / subscriptions/listen ─► each scope's Outbound
//! ```
//!
//! [`context`] is one request's context (who asked, `_meta`, the channel back); [`connection`]
//! holds the rules of one stdio or WebSocket connection (attach on `initialize`, the in-flight
//! set, shutdown) that the stream drivers run; [`liveness`] the ping / dead-peer rule of a
//! WebSocket connection.

pub mod connection;
pub mod context;
mod lists;
pub mod liveness;
mod methods;
mod modern;
mod options;
pub(crate) mod peers;
mod push;
pub mod scope;
mod skills;
pub mod tasks;

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

use futures::future::{AbortHandle, Abortable};
use serde_json::{json, Map, Value};
use tracing::Instrument;

pub use crate::host::{Clock, ErrorHandler};
pub use options::{Completer, Completion, RequestListener, ServerOptions};
pub use push::{Change, ListKind};

use crate::era::mrtr::StateSealer;
use crate::era::{self, Era};
use crate::observe::Observation;
use crate::primitives::prompts::PromptRegistry;
use crate::primitives::resources::ResourceRegistry;
use crate::primitives::skills::SkillRegistry;
use crate::primitives::tools::{panic_message, ToolRegistry};
use crate::protocol::Implementation;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{
    ErrorObject, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId, ResultValue,
};
use peers::{Peers, Pending};
use push::Listener;

struct Inner {
    options: ServerOptions,
    listeners: RwLock<Vec<RequestListener>>,
    peers: Peers,
    pending: Arc<Pending>,
    sealer: StateSealer,
    subscriptions: std::sync::Mutex<HashMap<u64, Listener>>,
    next_subscription: AtomicU64,
    tasks: Option<Arc<tasks::Tasks>>,
    /// Where scopes' state is written through to (a shared session store), if anywhere.
    scope_store: RwLock<Option<Arc<dyn scope::ScopeStore>>>,
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
        let server = McpServer {
            inner: Arc::new(Inner {
                tasks: options
                    .tasks
                    .clone()
                    .map(|t| tasks::Tasks::new(t, options.clock.clone())),
                options,
                listeners: RwLock::new(Vec::new()),
                peers: Peers::default(),
                pending: Arc::new(Pending::default()),
                sealer: StateSealer::random(),
                subscriptions: std::sync::Mutex::new(HashMap::new()),
                next_subscription: AtomicU64::new(1),
                scope_store: RwLock::new(None),
            }),
        };
        if let Some(tasks) = &server.inner.tasks {
            tasks.bind(Arc::downgrade(&server.inner));
        }
        server
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

    /// The live skill registry (the Skills extension).
    pub fn skills(&self) -> &Arc<SkillRegistry> {
        &self.inner.options.skills
    }

    /// The capabilities this server advertises: `tools` always (as the seed), `resources`,
    /// `prompts`, `completions`, `logging` and `tasks` only when it has them (on 2026-07-28,
    /// `server/discover` shows `tasks` as the extension `io.modelcontextprotocol/tasks`); with
    /// skills, `resources` and `extensions["io.modelcontextprotocol/skills"]`
    /// (`directoryRead: true`).
    pub fn capabilities(&self) -> Value {
        let o = &self.inner.options;
        let mut caps = json!({ "tools": { "listChanged": true } });
        if self.serves_resources() {
            caps["resources"] = json!({ "subscribe": true, "listChanged": true });
        }
        if o.declare_lists || !o.prompts.is_empty() {
            caps["prompts"] = json!({ "listChanged": true });
        }
        if o.completer.is_some() {
            caps["completions"] = json!({});
        }
        if o.logging {
            caps["logging"] = json!({});
        }
        if let Some(tasks) = self.tasks_capability() {
            caps["tasks"] = tasks;
        }
        self.declare_skills(&mut caps);
        caps
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
        ctx: RequestContext,
    ) -> Option<JsonRpcResponse> {
        match message {
            JsonRpcMessage::Request(request) => {
                let observed = Observation::server(
                    &request.method,
                    &request.id,
                    request.params.as_ref(),
                    ctx.session().map(|s| s.id()),
                );
                let tool_call = request.method == "tools/call";
                let response = self
                    .dispatch_request(request, ctx, &observed)
                    .instrument(observed.span.clone())
                    .await;
                observed.finish_response(tool_call, response.as_ref());
                response
            }
            JsonRpcMessage::Notification(notification) => {
                self.emit_request(&notification.method, None);
                if notification.method == "notifications/initialized" {
                    if let Some(scope) = &ctx.scope {
                        self.inner.peers.with(scope, |peer| peer.initialized = true);
                        self.save_scope(scope).await;
                    }
                } else if notification.method == "notifications/cancelled" {
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
                    Some(id) => self.inner.pending.resolve(
                        &ctx.scope,
                        id,
                        response.payload.clone().map(ResultValue::into_value),
                    ),
                    None => false,
                };
                if !resolved {
                    match &ctx.scope {
                        // Maybe another instance's request (a shared session store).
                        Some(scope) => self.hand_on(scope, response).await,
                        None => {
                            tracing::debug!(id = ?response.id, "ignoring a response: no request of ours is pending")
                        }
                    }
                }
                None
            }
        }
    }

    /// One request of [`McpServer::dispatch_with`], inside its span.
    async fn dispatch_request(
        &self,
        request: JsonRpcRequest,
        mut ctx: RequestContext,
        observed: &Observation,
    ) -> Option<JsonRpcResponse> {
        self.emit_request(&request.method, Some(&request.id));
        ctx.id = Some(request.id.clone());
        ctx.method.clone_from(&request.method);
        ctx.meta = meta_of(request.params.as_ref());
        ctx.pending = Some(self.inner.pending.clone());
        ctx.logging_undeclared = !self.inner.options.logging;
        if ctx.era == Era::Modern || era::has_modern_meta(request.params.as_ref()) {
            ctx.era = Era::Modern;
            if let Err(error) = self.prepare_modern(&request, &mut ctx) {
                return Some(JsonRpcResponse::error(Some(request.id), error));
            }
        } else if let Some(scope) = &ctx.scope {
            if let Some((caps, level, initialized)) = self.inner.peers.read(scope, |p| {
                (p.client_capabilities.clone(), p.log_level, p.initialized)
            }) {
                ctx.client_capabilities = ctx.client_capabilities.or(caps);
                ctx.log_level = ctx.log_level.or(level);
                ctx.client_initialized = initialized;
            }
        }
        if observed.enabled() {
            observed.protocol_version(self.served_version(&ctx).as_deref());
        }
        let id = request.id.clone();
        let scope = ctx.scope.clone();
        if scope.is_none() {
            let payload = self.answer(request, ctx).await;
            return Some(JsonRpcResponse {
                id: Some(id),
                payload,
            });
        }
        let (handle, registration) = AbortHandle::new_pair();
        if !self.inner.peers.start(scope.clone(), id.clone(), handle) {
            // Two requests with one id in flight could not be told apart by a
            // cancellation or an answer: the later one is refused, with its id.
            tracing::debug!(%id, "a request reuses the id of a request in flight");
            return Some(JsonRpcResponse::error(
                Some(id),
                ErrorObject::invalid_request(
                    "the request id is already in use by a request in flight",
                ),
            ));
        }
        let outcome = Abortable::new(self.answer(request, ctx), registration).await;
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

    /// The protocol version a request is served under, for its span: the transport's (HTTP),
    /// else the request's `_meta` (2026-07-28), else the version its scope negotiated.
    fn served_version(&self, ctx: &RequestContext) -> Option<String> {
        if let Some(version) = &ctx.protocol_version {
            return Some(version.clone());
        }
        let meta = ctx.meta.as_ref();
        if let Some(version) = meta.and_then(|m| m.get(era::META_PROTOCOL_VERSION)) {
            return version.as_str().map(str::to_owned);
        }
        let scope = ctx.scope.as_deref()?;
        self.inner
            .peers
            .read(scope, |p| p.protocol_version.clone())
            .flatten()
    }

    /// A request's result: a cacheable list from its registry's cached listing (`lists.rs`),
    /// else what its method returns.
    async fn answer(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> Result<ResultValue, ErrorObject> {
        if let Some(listed) = self.answer_list(&request, &ctx) {
            return listed;
        }
        self.call_era(request, ctx).await.map(ResultValue::from)
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
