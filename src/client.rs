//! `McpClient`: the egress mirror of the server (seed `MCPClient`, clauses 13 and 14), with no
//! I/O of its own: it drives any [`ClientTransport`].
//!
//! ```text
//!  call("add", args) ─► tools/call request, id = next monotonic integer ─► transport.send
//!                             │ pending[id]                                    │
//!  result / error / timeout ◄─┴─ sink.receive(response) matched by exact id ◄──┘
//! ```
//!
//! - **Correlation.** Ids are monotonic integers from 1; a response is matched by exact id (a
//!   string `"1"` does not match `1`). A response for an unknown id (never sent, already
//!   answered, or timed out) is logged and dropped. A response with both `result` and `error`,
//!   or neither, fails its request with [`ClientError::InvalidResponse`].
//! - **Server requests.** A server→client `ping` is answered `{}` at once. `sampling/createMessage`,
//!   `elicitation/create` and `roots/list` go to the [`ClientHandler`] set with
//!   [`ClientOptions::with_handler`] (whose capabilities `initialize` declares); its answer runs
//!   in the background on the spawner ([`ClientOptions::with_spawner`]) and is sent with
//!   [`ClientTransport::send`]. Without a handler, and for any other method: `-32601`.
//!   Notifications surface as [`ClientEvent::Notification`].
//! - **Progress and cancellation.** [`RequestOptions::on_progress`] adds a `progressToken` and
//!   routes `notifications/progress` to the call; [`RequestOptions::reset_timeout_on_progress`]
//!   restarts the deadline on each, under a maximum total. A request future dropped before its
//!   answer (e.g. aborted with `futures::future::abortable`) sends `notifications/cancelled`.
//! - **Beyond tools.** Resources, prompts, completion and logging calls, and [`McpClient::list_all`]
//!   which walks every page of a list (stopping on a repeated cursor).
//! - **Deadline.** Each request races a timer ([`ClientOptions::timeout`], default
//!   [`DEFAULT_MCP_REQUEST_TIMEOUT_MS`], overridable per call with [`RequestOptions`]). On
//!   expiry the request fails with [`ClientError::Timeout`], `notifications/cancelled` is sent
//!   (except for `initialize`, which the spec forbids cancelling) and a late reply is ignored.
//!   The timer is `futures-timer` (a helper thread on native, `setTimeout` on wasm) unless
//!   [`ClientOptions::with_sleep`] injects another; the core never needs tokio.
//! - **Close.** A transport close, a fatal send failure or a child exit fails every pending
//!   request at once with [`ClientError::TransportClosed`] carrying the cause.
//! - **Events.** [`McpClient::on`] subscribes to [`ClientEvent`]s; a panicking listener is
//!   caught and reported to [`ClientOptions::with_error_handler`] (or logged), never breaking
//!   the client.
//!
//! # Example
//!
//! ```
//! # futures::executor::block_on(async {
//! use orkestrel_mcp::client::{ClientOptions, McpClient, MemoryTransport};
//! use orkestrel_mcp::{McpServer, ServerOptions, Tool};
//!
//! let server = McpServer::new(ServerOptions::new("demo", "1.0.0"));
//! server.tools().add(Tool::from_json("hello", serde_json::json!({"type": "object"}),
//!     |_, _| async { Ok::<_, String>("\"hi\"") }));
//!
//! let client = McpClient::new(MemoryTransport::new(server), ClientOptions::new("me", "0.1.0"));
//! client.connect().await.unwrap();
//! assert_eq!(client.call("hello", serde_json::json!({})).await.unwrap(), Some("hi".into()));
//! client.disconnect().await;
//! # });
//! ```

pub mod era;
mod error;
mod features;
pub mod handlers;
pub mod listen;
mod memory;
pub mod mrtr;
mod transport;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{self, Either};
use serde_json::{json, Map, Value};

pub use era::ClientEra;
pub use error::ClientError;
pub use features::{Progress, ProgressCallback, MAX_LIST_PAGES};
pub use handlers::{apply_elicitation_defaults, ClientHandler};
pub use memory::MemoryTransport;
pub use transport::{ClientTransport, SinkHandler, TransportSink};

pub use crate::host::{Clock, ErrorHandler, Sleep, Spawn};

use crate::jsonrpc::{
    ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId,
};
use crate::protocol::{
    is_supported_version, Content, Implementation, InitializeResult, ToolDescriptor, ToolResult,
    MCP_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
};
use crate::tools::{panic_message, Tool};
use crate::BoxFuture;

/// The default per-request deadline: 30 000 ms (seed `DEFAULT_MCP_REQUEST_TIMEOUT`).
pub const DEFAULT_MCP_REQUEST_TIMEOUT_MS: u64 = 30_000;

/// The default `clientInfo.name` (seed `DEFAULT_MCP_CLIENT_NAME`).
pub const DEFAULT_MCP_CLIENT_NAME: &str = "orkestrel-mcp";

/// The default `clientInfo.version` (seed `DEFAULT_MCP_CLIENT_VERSION`): this crate's version.
pub const DEFAULT_MCP_CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The most `tools/list` pages [`McpClient::list_tools`] follows before giving up.
pub const MAX_TOOL_PAGES: usize = 1_000;

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// An event listener (`Send + Sync` on native targets).
        pub type Listener = Arc<dyn Fn(&ClientEvent)>;
    } else {
        /// An event listener (`Send + Sync` on native targets).
        pub type Listener = Arc<dyn Fn(&ClientEvent) + Send + Sync>;
    }
}

/// Options for [`McpClient::new`] (seed `MCPClientOptions`: `name`, `version`, `timeout`).
#[derive(Clone)]
pub struct ClientOptions {
    /// The `clientInfo` sent with `initialize`.
    pub info: Implementation,
    /// The per-request deadline (default 30 000 ms).
    pub timeout: Duration,
    /// The protocol version offered in `initialize` (default [`MCP_PROTOCOL_VERSION`]).
    pub protocol_version: String,
    /// Where a panicking listener is reported; default: a `tracing` error.
    pub on_error: Option<ErrorHandler>,
    /// The timer behind deadlines; default [`host::defaults::sleep`](crate::host::defaults::sleep)
    /// (`futures_timer::Delay`). `None`: requests have no deadline.
    pub sleep: Option<Sleep>,
    /// The clock (ms since the Unix epoch) that expires cached 2026-07-28 results; default
    /// [`host::defaults::clock`](crate::host::defaults::clock) (the system clock on native
    /// targets, none on wasm). `None`: nothing is cached.
    pub clock: Option<Clock>,
    /// Which protocol era to speak (default [`ClientEra::Auto`]).
    pub era: ClientEra,
    /// What answers the server's sampling, elicitation and roots requests (and, on the
    /// 2026-07-28 wire, input-required results); its `capabilities()` are declared. `None`
    /// declares none and refuses every such request.
    pub handler: Option<Arc<dyn handlers::ClientHandler>>,
    /// Runs the client's background work (handler answers, `notifications/cancelled` for a
    /// dropped request); default [`host::defaults::spawner`](crate::host::defaults::spawner):
    /// the current tokio runtime (feature `native`), else a thread on native targets,
    /// `spawn_local` on `wasm32-unknown-unknown`. `None`: that work is dropped (and logged).
    pub spawn: Option<Spawn>,
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("info", &self.info)
            .field("timeout", &self.timeout)
            .field("protocol_version", &self.protocol_version)
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl Default for ClientOptions {
    /// [`DEFAULT_MCP_CLIENT_NAME`], [`DEFAULT_MCP_CLIENT_VERSION`], 30 000 ms,
    /// [`MCP_PROTOCOL_VERSION`].
    fn default() -> Self {
        ClientOptions::new(DEFAULT_MCP_CLIENT_NAME, DEFAULT_MCP_CLIENT_VERSION)
    }
}

impl ClientOptions {
    /// Options with a `clientInfo` name and version and the defaults above.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            info: Implementation::new(name, version),
            timeout: Duration::from_millis(DEFAULT_MCP_REQUEST_TIMEOUT_MS),
            protocol_version: MCP_PROTOCOL_VERSION.to_owned(),
            on_error: None,
            sleep: crate::host::defaults::sleep(),
            clock: crate::host::defaults::clock(),
            era: ClientEra::Auto,
            handler: None,
            spawn: crate::host::defaults::spawner(),
        }
    }

    /// Choose the protocol era: [`ClientEra::Auto`] (probe, the default),
    /// [`ClientEra::Modern`] or [`ClientEra::Legacy`].
    pub fn with_era(mut self, era: ClientEra) -> Self {
        self.era = era;
        self
    }

    /// Answer sampling, elicitation and roots through `handler` (in both eras) and declare its
    /// capabilities.
    pub fn with_handler(mut self, handler: impl handlers::ClientHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// Run the client's background work on this spawner (e.g. a runtime's `spawn`).
    pub fn with_spawner(mut self, spawn: Spawn) -> Self {
        self.spawn = Some(spawn);
        self
    }

    /// Set the default per-request deadline.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Offer another protocol version in `initialize`.
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// Set the handler listener panics are reported to.
    #[cfg(not(target_family = "wasm"))]
    pub fn with_error_handler(
        mut self,
        handler: impl Fn(&str, &str) + Send + Sync + 'static,
    ) -> Self {
        self.on_error = Some(Arc::new(handler));
        self
    }

    /// Set the handler listener panics are reported to.
    #[cfg(target_family = "wasm")]
    pub fn with_error_handler(mut self, handler: impl Fn(&str, &str) + 'static) -> Self {
        self.on_error = Some(Arc::new(handler));
        self
    }

    /// Inject the timer behind deadlines (e.g. a runtime's sleep, or a test clock).
    pub fn with_sleep(mut self, sleep: Sleep) -> Self {
        self.sleep = Some(sleep);
        self
    }

    /// Read time from `clock` (ms since the Unix epoch) to expire cached results.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }
}

/// Per-request options: a deadline, a progress callback, and whether progress resets the
/// deadline (under a maximum total).
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// This request's deadline; `None` uses [`ClientOptions::timeout`].
    pub timeout: Option<Duration>,
    /// Called for each `notifications/progress` the server sends for this request (the request
    /// carries `_meta.progressToken`, equal to its id).
    pub on_progress: Option<ProgressCallback>,
    /// When set, each progress notification restarts the deadline, but the request still fails
    /// with [`ClientError::Timeout`] once this much time has passed in total.
    pub max_total_timeout: Option<Duration>,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("max_total_timeout", &self.max_total_timeout)
            .finish()
    }
}

impl RequestOptions {
    /// Options with this deadline.
    pub fn with_timeout(timeout: Duration) -> Self {
        RequestOptions {
            timeout: Some(timeout),
            ..RequestOptions::default()
        }
    }

    /// Set this request's deadline.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Receive this request's progress notifications.
    #[cfg(not(target_family = "wasm"))]
    pub fn on_progress(mut self, callback: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(callback));
        self
    }

    /// Receive this request's progress notifications.
    #[cfg(target_family = "wasm")]
    pub fn on_progress(mut self, callback: impl Fn(&Progress) + 'static) -> Self {
        self.on_progress = Some(Arc::new(callback));
        self
    }

    /// Restart the deadline on each progress notification, failing after `max_total` in all.
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.max_total_timeout = Some(max_total);
        self
    }
}

/// What the client reports to [`McpClient::on`] listeners (seed `MCPClientEventMap`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ClientEvent {
    /// `connect` finished its handshake.
    Connect,
    /// The client disconnected, or the transport closed on its own.
    Disconnect {
        /// Why.
        cause: String,
    },
    /// A server notification (e.g. `notifications/tools/list_changed`, `notifications/message`).
    Notification(JsonRpcNotification),
    /// A problem not tied to a caller's request: an unmatched error response, a non-JSON line,
    /// a malformed server message.
    Error(ClientError),
}

impl ClientEvent {
    /// The seed's event name: `connect`, `disconnect`, `notification` or `error`.
    pub fn name(&self) -> &'static str {
        match self {
            ClientEvent::Connect => "connect",
            ClientEvent::Disconnect { .. } => "disconnect",
            ClientEvent::Notification(_) => "notification",
            ClientEvent::Error(_) => "error",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Connecting,
    Connected,
    Closed(String),
}

struct Pending {
    method: String,
    tx: oneshot::Sender<Result<Value, ClientError>>,
    progress: Option<ProgressCallback>,
    /// Signals progress to a deadline that restarts on progress.
    ticks: Option<futures::channel::mpsc::UnboundedSender<()>>,
}

struct State {
    phase: Phase,
    /// The transport was started and not closed by us yet.
    started: bool,
    pending: HashMap<i64, Pending>,
    /// Recently timed-out ids, to tell a late reply from an unknown one in the logs.
    expired: VecDeque<i64>,
    initialized: Option<InitializeResult>,
}

struct Inner {
    transport: Arc<dyn ClientTransport>,
    options: ClientOptions,
    next_id: AtomicI64,
    state: Mutex<State>,
    lifecycle: futures::lock::Mutex<()>,
    listeners: RwLock<Vec<Listener>>,
    era: era::EraState,
}

/// An MCP client over one transport (seed `createMCPClient`). Cheap to clone (an `Arc`
/// inside); clones share the connection.
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("info", &self.inner.options.info)
            .field("phase", &self.inner.lock().phase)
            .finish_non_exhaustive()
    }
}

const EXPIRED_MEMORY: usize = 256;

impl McpClient {
    /// A client over `transport` (not yet connected).
    pub fn new(transport: impl ClientTransport, options: ClientOptions) -> Self {
        McpClient::with_transport(Arc::new(transport), options)
    }

    /// A client over an already shared transport.
    pub fn with_transport(transport: Arc<dyn ClientTransport>, options: ClientOptions) -> Self {
        McpClient {
            inner: Arc::new(Inner {
                transport,
                options,
                next_id: AtomicI64::new(1),
                state: Mutex::new(State {
                    phase: Phase::Idle,
                    started: false,
                    pending: HashMap::new(),
                    expired: VecDeque::new(),
                    initialized: None,
                }),
                lifecycle: futures::lock::Mutex::new(()),
                listeners: RwLock::new(Vec::new()),
                era: era::EraState::default(),
            }),
        }
    }

    /// Subscribe to every [`ClientEvent`] (seed `on`). Listeners run synchronously, outside the
    /// client's locks; a panic is caught and reported to the error handler.
    #[cfg(not(target_family = "wasm"))]
    pub fn on(&self, listener: impl Fn(&ClientEvent) + Send + Sync + 'static) {
        self.add_listener(Arc::new(listener));
    }

    /// Subscribe to every [`ClientEvent`] (seed `on`). Listeners run synchronously, outside the
    /// client's locks; a panic is caught and reported to the error handler.
    #[cfg(target_family = "wasm")]
    pub fn on(&self, listener: impl Fn(&ClientEvent) + 'static) {
        self.add_listener(Arc::new(listener));
    }

    fn add_listener(&self, listener: Listener) {
        self.inner
            .listeners
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(listener);
    }

    /// Whether the handshake is done and the transport open.
    pub fn is_connected(&self) -> bool {
        self.inner.lock().phase == Phase::Connected
    }

    /// The server's `initialize` result (version, capabilities, `serverInfo`, instructions),
    /// once connected.
    pub fn initialize_result(&self) -> Option<InitializeResult> {
        self.inner.lock().initialized.clone()
    }

    /// The negotiated protocol version, once connected (the modern version in the 2026-07-28
    /// era).
    pub fn protocol_version(&self) -> Option<String> {
        self.inner
            .era
            .modern_version()
            .or_else(|| self.initialize_result().map(|r| r.protocol_version))
    }

    /// The transport's session id (Streamable HTTP), if any.
    pub fn session_id(&self) -> Option<String> {
        self.inner.transport.session_id()
    }

    /// Open the transport, run `initialize` (offering [`ClientOptions::protocol_version`],
    /// empty capabilities and `clientInfo`), check the answered version, send
    /// `notifications/initialized`, then fire [`ClientEvent::Connect`] (seed clause 13; spec
    /// `basic/lifecycle`). Idempotent: a connected client returns at once; concurrent calls
    /// handshake once.
    ///
    /// # Errors
    /// The transport's start error; [`ClientError::Timeout`] / [`ClientError::Rpc`] /
    /// [`ClientError::TransportClosed`] from `initialize`; [`ClientError::InvalidResponse`] for a
    /// malformed `initialize` result; [`ClientError::UnsupportedVersion`] when the server answers
    /// a version not in [`SUPPORTED_PROTOCOL_VERSIONS`]. On any error the transport is closed.
    pub async fn connect(&self) -> Result<(), ClientError> {
        let _lifecycle = self.inner.lifecycle.lock().await;
        {
            let mut state = self.inner.lock();
            if state.phase == Phase::Connected {
                return Ok(());
            }
            state.phase = Phase::Connecting;
            state.started = true;
            state.initialized = None;
        }
        let sink = TransportSink::new(ClientSink {
            inner: Arc::downgrade(&self.inner),
        });
        if let Err(e) = self.inner.transport.start(sink).await {
            self.abort_connect(&e).await;
            return Err(e);
        }
        match self.negotiate().await {
            Ok(()) => {
                self.inner.emit(&ClientEvent::Connect);
                Ok(())
            }
            Err(e) => {
                self.abort_connect(&e).await;
                Err(e)
            }
        }
    }

    async fn handshake(&self) -> Result<(), ClientError> {
        let options = &self.inner.options;
        let capabilities = match &options.handler {
            Some(handler) => handler.capabilities(),
            None => json!({}),
        };
        let params = json!({
            "protocolVersion": options.protocol_version,
            "capabilities": capabilities,
            "clientInfo": options.info,
        });
        let value = self
            .inner
            .request(
                "initialize",
                Some(params),
                &RequestOptions::with_timeout(options.timeout),
            )
            .await?;
        let result: InitializeResult = serde_json::from_value(value)
            .map_err(|e| ClientError::InvalidResponse(format!("initialize result: {e}")))?;
        if !is_supported_version(&result.protocol_version) {
            return Err(ClientError::UnsupportedVersion {
                version: result.protocol_version,
                supported: SUPPORTED_PROTOCOL_VERSIONS.join(", "),
            });
        }
        self.inner
            .transport
            .set_protocol_version(&result.protocol_version);
        {
            let mut state = self.inner.lock();
            if let Phase::Closed(cause) = &state.phase {
                return Err(ClientError::closed(cause.clone()));
            }
            state.initialized = Some(result);
            state.phase = Phase::Connected;
        }
        let initialized = JsonRpcNotification::new("notifications/initialized");
        self.inner
            .transport
            .send(JsonRpcMessage::Notification(initialized))
            .await
    }

    async fn abort_connect(&self, error: &ClientError) {
        let cause = format!("connect failed: {error}");
        let pending = {
            let mut state = self.inner.lock();
            state.phase = Phase::Closed(cause.clone());
            state.started = false;
            state.initialized = None;
            std::mem::take(&mut state.pending)
        };
        fail_all(pending, &ClientError::closed(cause));
        self.inner.transport.close().await;
    }

    /// Fail every pending request, close the transport and fire [`ClientEvent::Disconnect`]
    /// (seed clause 13). Idempotent: a second call, or a call after the transport closed on its
    /// own, fires nothing (but still releases the transport).
    pub async fn disconnect(&self) {
        let _lifecycle = self.inner.lifecycle.lock().await;
        let cause = "the client disconnected".to_owned();
        let (was_open, started, pending) = {
            let mut state = self.inner.lock();
            let was_open = matches!(state.phase, Phase::Connected | Phase::Connecting);
            let started = std::mem::take(&mut state.started);
            if was_open {
                state.phase = Phase::Closed(cause.clone());
            }
            (was_open, started, std::mem::take(&mut state.pending))
        };
        fail_all(pending, &ClientError::closed(cause.clone()));
        if started {
            self.inner.transport.close().await;
        }
        if was_open {
            self.inner.emit(&ClientEvent::Disconnect { cause });
        }
    }

    /// Send a request and wait for its result (the low-level call every method uses).
    ///
    /// # Errors
    /// [`ClientError::NotConnected`] before `connect`; [`ClientError::Rpc`] for an error
    /// response; [`ClientError::Timeout`]; [`ClientError::TransportClosed`];
    /// [`ClientError::InvalidResponse`]; a transport's per-request error.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        if let Some(version) = self.inner.era.modern_version() {
            return self.modern_request(version, method, params, options).await;
        }
        self.inner.request(method, params, &options).await
    }

    /// Send a notification (no reply expected).
    ///
    /// # Errors
    /// [`ClientError::NotConnected`], or the transport's send error.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.inner.check_open()?;
        let mut notification = JsonRpcNotification::new(method);
        if let Some(params) = params {
            notification = notification.with_params(params);
        }
        self.inner
            .send_or_close(JsonRpcMessage::Notification(notification))
            .await
    }

    /// Send `ping` and wait for the (empty) answer.
    ///
    /// # Errors
    /// As [`McpClient::request`].
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.request("ping", None, RequestOptions::default())
            .await
            .map(drop)
    }

    /// Run `tools/list`, following `nextCursor` pages, and return the descriptors.
    ///
    /// # Errors
    /// As [`McpClient::request`]; [`ClientError::InvalidResponse`] when the result has no
    /// `tools` array, a descriptor does not parse, or pages do not end within
    /// [`MAX_TOOL_PAGES`].
    pub async fn list_tools(&self) -> Result<Vec<ToolDescriptor>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let result = self
                .request("tools/list", params, RequestOptions::default())
                .await?;
            let page = result
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    ClientError::InvalidResponse(r#"tools/list result has no "tools" array"#.into())
                })?;
            for descriptor in page {
                let descriptor: ToolDescriptor = serde_json::from_value(descriptor.clone())
                    .map_err(|e| {
                        ClientError::InvalidResponse(format!("tools/list descriptor: {e}"))
                    })?;
                tools.push(descriptor);
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
                _ => return Ok(tools),
            }
        }
        Err(ClientError::InvalidResponse(format!(
            "tools/list did not end within {MAX_TOOL_PAGES} pages"
        )))
    }

    /// Run `tools/list` and wrap each descriptor as a local [`Tool`] (seed `tools`): the
    /// descriptor is kept whole (name, schemas, annotations) and running the tool runs
    /// [`McpClient::call_tool`] on this client, passing the remote result through unchanged (a
    /// protocol failure becomes an `isError` result). Add them to a
    /// [`ToolRegistry`](crate::ToolRegistry) to re-serve a remote server's tools.
    ///
    /// # Errors
    /// As [`McpClient::list_tools`].
    pub async fn tools(&self) -> Result<Vec<Tool>, ClientError> {
        let descriptors = self.list_tools().await?;
        Ok(descriptors
            .into_iter()
            .map(|descriptor| {
                let client = self.clone();
                let name = descriptor.name.clone();
                Tool::from_json(
                    descriptor.name.clone(),
                    descriptor.input_schema.clone(),
                    move |args, _ctx| {
                        let client = client.clone();
                        let name = name.clone();
                        async move { client.call_tool(&name, Value::Object(args)).await }
                    },
                )
                .with_descriptor(descriptor)
            })
            .collect())
    }

    /// Run `tools/call` and return the whole result (content blocks of every kind,
    /// `structuredContent`, `isError`) — the lower-level form of [`McpClient::call`].
    ///
    /// `arguments` must be a JSON object, or `null` for none.
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] for non-object arguments; as [`McpClient::request`];
    /// [`ClientError::InvalidResponse`] when the result is not a `CallToolResult`. An `isError`
    /// result is **not** an error here.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::default())
            .await
    }

    /// [`McpClient::call_tool`] with per-request options (a deadline).
    ///
    /// # Errors
    /// As [`McpClient::call_tool`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<ToolResult, ClientError> {
        let arguments = match arguments {
            Value::Null => Value::Object(Map::new()),
            args @ Value::Object(_) => args,
            other => {
                return Err(ClientError::InvalidArguments(format!(
                    "tool arguments must be a JSON object, not {other}"
                )))
            }
        };
        let params = json!({ "name": name, "arguments": arguments });
        let value = self.request("tools/call", Some(params), options).await?;
        serde_json::from_value(value)
            .map_err(|e| ClientError::InvalidResponse(format!("tools/call result: {e}")))
    }

    /// Run a remote tool with the seed's value semantics (clause 13): the result's text blocks
    /// are concatenated; `isError: true` → [`ClientError::Tool`] carrying that text; otherwise
    /// the text parsed as JSON, or the raw text as a JSON string when it is not JSON; no text →
    /// the `structuredContent` if any, else `None`.
    ///
    /// # Errors
    /// As [`McpClient::call_tool`], plus [`ClientError::Tool`].
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Option<Value>, ClientError> {
        self.call_with(name, arguments, RequestOptions::default())
            .await
    }

    /// [`McpClient::call`] with per-request options (a deadline).
    ///
    /// # Errors
    /// As [`McpClient::call`].
    pub async fn call_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<Option<Value>, ClientError> {
        let result = self.call_tool_with(name, arguments, options).await?;
        result_value(result)
    }
}

/// The seed's `call` semantics over a whole result (see [`McpClient::call`]).
///
/// # Errors
/// [`ClientError::Tool`] for an `isError` result.
pub fn result_value(result: ToolResult) -> Result<Option<Value>, ClientError> {
    let text: String = result.content.iter().filter_map(Content::as_text).collect();
    if result.is_error() {
        return Err(ClientError::Tool {
            message: text,
            result,
        });
    }
    if text.is_empty() {
        return Ok(result.structured_content);
    }
    Ok(Some(
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

fn fail_all(pending: HashMap<i64, Pending>, error: &ClientError) {
    for (_, p) in pending {
        let _ = p.tx.send(Err(error.clone()));
    }
}

/// Removes a request's pending entry when its future ends or is dropped; a request dropped
/// while still unanswered is cancelled with `notifications/cancelled` (sent in the background).
struct PendingGuard<'a> {
    inner: &'a Inner,
    id: i64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let abandoned = {
            let mut state = self.inner.lock();
            let connected = state.phase == Phase::Connected;
            state
                .pending
                .remove(&self.id)
                .filter(|p| connected && p.method != "initialize")
        };
        if abandoned.is_some() {
            self.inner
                .send_cancelled(self.id, "the caller abandoned the request".into());
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The injected clock's reading (ms), if the client has a clock.
    pub(crate) fn now(&self) -> Option<u64> {
        self.options.clock.as_ref().map(|clock| clock())
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        match &self.options.sleep {
            Some(sleep) => sleep(duration),
            None => Box::pin(future::pending()),
        }
    }

    fn check_open(&self) -> Result<(), ClientError> {
        match &self.lock().phase {
            Phase::Connected => Ok(()),
            Phase::Closed(cause) => Err(ClientError::closed(cause.clone())),
            Phase::Idle | Phase::Connecting => Err(ClientError::NotConnected),
        }
    }

    async fn send_or_close(&self, message: JsonRpcMessage) -> Result<(), ClientError> {
        self.send_or_close_with(message, None).await
    }

    async fn send_or_close_with(
        &self,
        message: JsonRpcMessage,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        let result = match headers {
            Some(headers) => self.transport.send_modern(message, headers).await,
            None => self.transport.send(message).await,
        };
        if let Err(ClientError::TransportClosed { cause }) = &result {
            self.on_closed(cause.clone());
        }
        result
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        self.request_with(method, params, options, None).await
    }

    /// A request; `headers` (a 2026-07-28 request's HTTP headers) go through
    /// [`ClientTransport::send_modern`].
    async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.request_id(id, method, params, options, headers).await
    }

    /// [`Inner::request_with`] under an id taken from `next_id` beforehand.
    async fn request_id(
        &self,
        id: i64,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let timeout = options.timeout.unwrap_or(self.options.timeout);
        let params = match (&options.on_progress, params) {
            (Some(_), params) => Some(features::with_progress_token(params, id)?),
            (None, params) => params,
        };
        let (ticks, ticks_rx) = match options.max_total_timeout {
            Some(_) if options.on_progress.is_some() => {
                let (tx, rx) = futures::channel::mpsc::unbounded();
                (Some(tx), Some(rx))
            }
            _ => (None, None),
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.lock();
            match (&state.phase, method) {
                (Phase::Connected, _)
                | (Phase::Connecting, "initialize")
                | (Phase::Connecting, "server/discover") => {}
                (Phase::Closed(cause), _) => return Err(ClientError::closed(cause.clone())),
                _ => return Err(ClientError::NotConnected),
            }
            state.pending.insert(
                id,
                Pending {
                    method: method.to_owned(),
                    tx,
                    progress: options.on_progress.clone(),
                    ticks,
                },
            );
        }
        let _guard = PendingGuard { inner: self, id };
        let http_modern = headers.is_some();
        let mut request = JsonRpcRequest::new(id, method);
        if let Some(params) = params {
            request = request.with_params(params);
        }
        let abandoned = || Err(ClientError::closed("the request was abandoned"));
        let exchange = async {
            // Race the send with the answer: a request/response transport (HTTP) may still be
            // inside `send` when a disconnect or a close fails the request.
            // A modern HTTP request is cancelled by dropping its response stream (no
            // notifications/cancelled).
            let send =
                std::pin::pin!(self.send_or_close_with(JsonRpcMessage::Request(request), headers));
            let mut rx = rx;
            match future::select(send, &mut rx).await {
                Either::Left((sent, _)) => {
                    if let Err(error) = sent {
                        if let Some(p) = self.lock().pending.remove(&id) {
                            let _ = p.tx.send(Err(error));
                        }
                    }
                    rx.await.unwrap_or_else(|_| abandoned())
                }
                Either::Right((answer, _)) => answer.unwrap_or_else(|_| abandoned()),
            }
        };
        let exchange = std::pin::pin!(exchange);
        let deadline = self.deadline(timeout, options.max_total_timeout, ticks_rx);
        match future::select(exchange, deadline).await {
            Either::Left((result, _)) => result,
            Either::Right(((), _)) => {
                {
                    let mut state = self.lock();
                    state.pending.remove(&id);
                    state.expired.push_back(id);
                    if state.expired.len() > EXPIRED_MEMORY {
                        state.expired.pop_front();
                    }
                }
                let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                if method != "initialize" && method != "server/discover" && !http_modern {
                    self.cancel(id, timeout_ms).await;
                }
                Err(ClientError::Timeout {
                    method: method.to_owned(),
                    timeout_ms,
                })
            }
        }
    }

    /// Best-effort `notifications/cancelled` for a timed-out request, bounded in time.
    async fn cancel(&self, id: i64, timeout_ms: u64) {
        let notification = JsonRpcNotification::new("notifications/cancelled").with_params(json!({
            "requestId": id,
            "reason": format!("timed out after {timeout_ms} ms"),
        }));
        let send = self
            .transport
            .send(JsonRpcMessage::Notification(notification));
        let bound = self.sleep(Duration::from_millis(timeout_ms.clamp(1, 2_000)));
        if let Either::Left((Err(e), _)) = future::select(send, bound).await {
            tracing::debug!(error = %e, id, "mcp client: could not send notifications/cancelled");
        }
    }

    fn on_closed(&self, cause: String) {
        let (was_connected, pending) = {
            let mut state = self.lock();
            let was_open = matches!(state.phase, Phase::Connected | Phase::Connecting);
            let was_connected = state.phase == Phase::Connected;
            if was_open {
                state.phase = Phase::Closed(cause.clone());
            }
            (was_connected, std::mem::take(&mut state.pending))
        };
        if !pending.is_empty() {
            tracing::debug!(count = pending.len(), %cause, "mcp client: failing pending requests");
        }
        fail_all(pending, &ClientError::closed(cause.clone()));
        if was_connected {
            self.emit(&ClientEvent::Disconnect { cause });
        }
    }

    fn emit(&self, event: &ClientEvent) {
        let listeners = self
            .listeners
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for listener in listeners {
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| listener(event))) {
                let message = panic_message(&*panic);
                match &self.options.on_error {
                    Some(handler) => {
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            handler(&message, event.name())
                        }));
                    }
                    None => {
                        tracing::error!(%message, event = event.name(), "mcp client: a listener panicked")
                    }
                }
            }
        }
    }

    fn receive(&self, value: Value) -> Vec<JsonRpcMessage> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .flat_map(|item| self.receive_one(item))
                .collect(),
            value => self.receive_one(value).into_iter().collect(),
        }
    }

    fn receive_one(&self, value: Value) -> Option<JsonRpcMessage> {
        let has_method = value.get("method").is_some();
        match JsonRpcMessage::from_value(value) {
            Ok(JsonRpcMessage::Response(response)) => {
                self.resolve(response);
                None
            }
            Ok(JsonRpcMessage::Request(request)) => {
                let handled = matches!(
                    request.method.as_str(),
                    "sampling/createMessage" | "elicitation/create" | "roots/list"
                );
                let response = if request.method == "ping" {
                    JsonRpcResponse::result(request.id, json!({}))
                } else if let (true, Some(handler)) = (handled, &self.options.handler) {
                    self.answer_later(handler.as_ref(), request);
                    return None;
                } else {
                    tracing::debug!(method = %request.method, "mcp client: unsupported server request");
                    JsonRpcResponse::error(
                        Some(request.id),
                        ErrorObject::method_not_found(&request.method),
                    )
                };
                Some(JsonRpcMessage::Response(response))
            }
            Ok(JsonRpcMessage::Notification(notification)) => {
                self.era.route(&notification);
                if notification.method == "notifications/progress" {
                    self.progress(&notification);
                }
                self.emit(&ClientEvent::Notification(notification));
                None
            }
            Err(invalid) if has_method => {
                tracing::warn!(error = %invalid, "mcp client: invalid server message");
                self.emit(&ClientEvent::Error(ClientError::InvalidResponse(format!(
                    "invalid server message: {}",
                    invalid.error.message
                ))));
                invalid.response().map(JsonRpcMessage::Response)
            }
            Err(invalid) => {
                let error = ClientError::InvalidResponse(invalid.error.message.clone());
                let pending = match &invalid.id {
                    Some(RequestId::Number(id)) => self.lock().pending.remove(id),
                    _ => None,
                };
                match pending {
                    Some(p) => {
                        tracing::warn!(id = ?invalid.id, method = %p.method, error = %invalid, "mcp client: invalid response");
                        let _ = p.tx.send(Err(error));
                    }
                    None => {
                        tracing::warn!(id = ?invalid.id, error = %invalid, "mcp client: dropped an invalid message");
                        self.emit(&ClientEvent::Error(error));
                    }
                }
                None
            }
        }
    }

    fn resolve(&self, response: JsonRpcResponse) {
        let (pending, late) = match &response.id {
            Some(RequestId::Number(id)) => {
                let mut state = self.lock();
                let pending = state.pending.remove(id);
                let late = pending.is_none() && state.expired.contains(id);
                (pending, late)
            }
            _ => (None, false),
        };
        match (pending, response.payload) {
            (Some(p), payload) => {
                let _ = p.tx.send(payload.map_err(ClientError::Rpc));
            }
            (None, _) if late => {
                tracing::debug!(id = ?response.id, "mcp client: ignored a reply that came after its deadline");
            }
            (None, Err(error)) if response.id.is_none() => {
                tracing::warn!(%error, "mcp client: error response with a null id");
                self.emit(&ClientEvent::Error(ClientError::Rpc(error)));
            }
            (None, _) => {
                tracing::warn!(id = ?response.id, "mcp client: dropped a response with an unknown or duplicate id");
            }
        }
    }
}

/// The sink the client hands its transport; holds the client weakly so a transport's reader
/// task never keeps a dropped client alive.
struct ClientSink {
    inner: Weak<Inner>,
}

impl SinkHandler for ClientSink {
    fn receive(&self, value: Value) -> Vec<JsonRpcMessage> {
        match self.inner.upgrade() {
            Some(inner) => inner.receive(value),
            None => Vec::new(),
        }
    }

    fn error(&self, message: String) {
        if let Some(inner) = self.inner.upgrade() {
            tracing::debug!(%message, "mcp client: transport error");
            inner.emit(&ClientEvent::Error(ClientError::Transport(message)));
        }
    }

    fn closed(&self, cause: String) {
        if let Some(inner) = self.inner.upgrade() {
            inner.on_closed(cause);
        }
    }
}

#[cfg(test)]
mod tests;
