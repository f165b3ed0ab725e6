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

mod answer;
pub(crate) mod batch;
pub mod connection;
pub mod context;
pub(crate) mod extras;
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

use crate::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock, RwLock};

use futures::future::{self, Either, OptionFuture};
use futures::{Future, FutureExt};
use serde_json::{json, Map, Value};

pub use crate::host::{Clock, ErrorHandler};
pub use options::{Completer, Completion, RequestListener, ServerOptions};
pub use push::{Change, ListKind};

pub use peers::MAX_SUBSCRIPTIONS_PER_SCOPE;

/// The longest URI `resources/subscribe` takes, in bytes (UTF-8): 8 KiB. A longer one is
/// answered `-32602` and not recorded.
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 8 * 1024;

use crate::era;
use crate::era::mrtr::StateSealer;
use crate::primitives::prompts::PromptRegistry;
use crate::primitives::resources::ResourceRegistry;
use crate::primitives::skills::SkillRegistry;
use crate::primitives::tools::{panic_message, ToolRegistry};
use crate::protocol::Implementation;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcResponse, RequestId, ResultValue};
use crate::BoxFuture;
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
    /// The task engine, when the server runs tasks (only [`McpServer::new`] builds one).
    tasks: Option<tasks::Engine>,
    /// The methods beyond tools (`extras.rs`): set by [`McpServer::new`]; for a server built by
    /// [`McpServer::for_bindings`], by [`McpServer::serve_extras`] (the bindings' Rust-side
    /// `Server::core`, the only way its registries are filled).
    extras: OnceLock<&'static extras::Extras>,
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
        let tasks =
            (options.tasks.clone()).map(|t| Box::new(tasks::engine(t, options.clock.clone())));
        let server = McpServer::assemble(options, tasks, Some(&extras::EXTRAS));
        if let Some(tasks) = &server.inner.tasks {
            tasks.bind(Arc::downgrade(&server.inner));
        }
        server
    }

    /// [`McpServer::new`] for what the JS bindings' options hold: tools, instructions, logging;
    /// no tasks, no completer, no declared lists. It links neither the task engine nor the
    /// methods beyond tools (`extras.rs`): a server built here answers `-32601` to those until
    /// [`McpServer::serve_extras`] (which the JS bindings never call; Rust code reaching the
    /// server through the bindings' `Server::core` does).
    #[cfg_attr(
        not(all(
            target_family = "wasm",
            any(feature = "js-server", not(feature = "js-client"))
        )),
        allow(dead_code)
    )]
    pub(crate) fn for_bindings(options: ServerOptions) -> Self {
        debug_assert!(
            options.tasks.is_none() && options.completer.is_none() && !options.declare_lists,
            "tasks, a completer and declared lists need McpServer::new"
        );
        McpServer::assemble(options, None, None)
    }

    /// Serve the methods beyond tools (`resources/read`, `prompts/get`, the skills, …) on a server
    /// built by [`McpServer::for_bindings`]; a server built by [`McpServer::new`] already does.
    #[cfg_attr(
        not(all(
            target_family = "wasm",
            any(feature = "js-server", not(feature = "js-client"))
        )),
        allow(dead_code)
    )]
    pub(crate) fn serve_extras(&self) {
        let _ = self.inner.extras.set(&extras::EXTRAS);
    }

    fn assemble(
        options: ServerOptions,
        tasks: Option<tasks::Engine>,
        extras: Option<&'static extras::Extras>,
    ) -> Self {
        McpServer {
            inner: Arc::new(Inner {
                tasks,
                extras: extras.map(OnceLock::from).unwrap_or_default(),
                options,
                listeners: RwLock::new(Vec::new()),
                peers: Peers::default(),
                pending: Arc::new(Pending::default()),
                sealer: StateSealer::random(),
                subscriptions: std::sync::Mutex::new(HashMap::default()),
                next_subscription: AtomicU64::new(1),
                scope_store: RwLock::new(None),
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
    pub fn dispatch(
        &self,
        message: JsonRpcMessage,
    ) -> impl Future<Output = Option<JsonRpcResponse>> + '_ {
        self.dispatch_with(message, RequestContext::new())
    }

    /// [`McpServer::dispatch`] with a transport-provided context (channel back, scope).
    ///
    /// On a scope, a request stays cancellable by `notifications/cancelled` while it runs; a
    /// cancelled request yields `None` (no response, spec `basic/utilities/cancellation`).
    ///
    /// Nothing happens until the future is first polled. The future is small (it holds the
    /// message and the context until then, and after that only what the method awaits): a
    /// request's method is picked and started at the first poll (`answer.rs`).
    pub fn dispatch_with(
        &self,
        message: JsonRpcMessage,
        ctx: RequestContext,
    ) -> impl Future<Output = Option<JsonRpcResponse>> + '_ {
        match message {
            JsonRpcMessage::Request(request) => {
                Either::Left(future::lazy(move |_| self.start(request, ctx)).flatten())
            }
            other => Either::Right(
                future::lazy(move |_| self.receive(other, &ctx))
                    .then(OptionFuture::from)
                    .map(|_| None),
            ),
        }
    }

    /// A notification or a response (`dispatch_with` routes requests to `start`): what it
    /// changes now, and what is left to await (writing a scope through to the store, handing a
    /// response on), boxed: it is rare.
    fn receive(&self, message: JsonRpcMessage, ctx: &RequestContext) -> Option<BoxFuture<'_, ()>> {
        match message {
            JsonRpcMessage::Request(_) => None,
            JsonRpcMessage::Notification(notification) => {
                self.emit_request(&notification.method, None);
                if notification.method == "notifications/initialized" {
                    let scope = ctx.scope.clone()?;
                    let known = self
                        .inner
                        .peers
                        .with(&scope, |peer| peer.initialized = true);
                    if known.is_none() {
                        // Before `initialize`, or after the scope ended: nothing to mark.
                        tracing::debug!(%scope, "notifications/initialized on a scope the server does not know");
                        return None;
                    }
                    return Some(Box::pin(async move { self.save_scope(&scope).await }));
                }
                if notification.method == "notifications/cancelled" {
                    let id = notification
                        .params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(RequestId::from_value);
                    if let Some(id) = id {
                        let cancelled = self.inner.peers.cancel(&ctx.in_flight_scope(), &id);
                        tracing::debug!(%id, cancelled, "notifications/cancelled");
                        if let (false, Some(scope)) = (cancelled, ctx.scope.clone()) {
                            // Maybe in flight on another instance (a shared session store).
                            return Some(Box::pin(async move {
                                self.hand_on_cancel(&scope, id).await;
                            }));
                        }
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
                if resolved {
                    return None;
                }
                match ctx.scope.clone() {
                    // Maybe another instance's request (a shared session store).
                    Some(scope) => Some(Box::pin(
                        async move { self.hand_on(&scope, response).await },
                    )),
                    None => {
                        tracing::debug!(id = ?response.id, "ignoring a response: no request of ours is pending");
                        None
                    }
                }
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
            .read(scope, |p| p.protocol_version.as_deref().map(str::to_owned))
            .flatten()
    }

    /// The string boundary (seed `handle`, clause 7): malformed JSON → a `-32700` reply with id
    /// `null`; an invalid message → `-32600` (or `-32602` for non-object params) with the id when
    /// readable; a notification, a broken notification or a response → `None`.
    ///
    /// A JSON-RPC batch (an array) is refused: `-32600` "batches are not supported" with id
    /// `null`, and nothing in it runs. `handle` serves one message with no connection and no
    /// session behind it, so no negotiated protocol revision says batches are received (only
    /// 2025-03-26 requires it, and every later revision forbids them). A host speaking 2025-03-26
    /// receives them through a stream [`connection`] or the HTTP route ([`crate::http::Route`]),
    /// which know the revision, or reads one itself with
    /// [`JsonRpcBatch::from_slice`](crate::wire::jsonrpc::JsonRpcBatch::from_slice) and
    /// dispatches each element.
    pub fn handle(&self, message: &str) -> impl Future<Output = Option<String>> + '_ {
        self.handle_slice(message.as_bytes())
            .map(|response| response.map(|r| r.to_json()))
    }

    /// [`McpServer::handle`] over bytes, returning the typed response. The bytes are parsed
    /// when this is called; the future does not borrow them.
    pub fn handle_slice(&self, bytes: &[u8]) -> impl Future<Output = Option<JsonRpcResponse>> + '_ {
        match JsonRpcMessage::from_slice(bytes) {
            Ok(message) => Either::Left(self.dispatch(message)),
            Err(invalid) => {
                tracing::debug!(error = %invalid, "invalid message");
                Either::Right(future::ready(invalid.response()))
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
