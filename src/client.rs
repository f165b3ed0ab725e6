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
//!   which walks every page of a list (stopping on a repeated cursor); the Skills extension in
//!   [`skills`] (entries listed without prefetching, every file verified on read).
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

mod engine;
pub mod era;
mod error;
mod features;
pub mod handlers;
pub mod listen;
mod memory;
pub mod mrtr;
pub mod oauth;
mod options;
mod primitives;
pub mod skills;
mod tasks;
pub(crate) mod tools;
mod transport;

use std::collections::VecDeque;

use crate::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::{json, Value};

pub use era::ClientEra;
pub use error::ClientError;
pub use features::{Progress, ProgressCallback, ANSWER_DRAIN, MAX_ANSWERING};
pub use handlers::{apply_elicitation_defaults, ClientHandler};
pub use memory::MemoryTransport;
pub use options::{ClientOptions, RequestOptions};
pub use primitives::{MAX_LIST_BYTES, MAX_LIST_PAGES};
pub use skills::{LoadedSkill, SkillVerificationError};
pub use tasks::{TaskInfo, ToolCall, DEFAULT_TASK_POLL_MS, MIN_TASK_POLL_MS};
#[cfg(not(target_family = "wasm"))]
pub(crate) use tools::parse_listed;
pub use tools::result_value;
pub(crate) use transport::{unreadable, Unreadable};
pub use transport::{ClientTransport, SinkHandler, SinkReply, TransportSink};

pub use crate::host::{Clock, ErrorHandler, Sleep, Spawn};

use crate::protocol::{is_supported_version, InitializeResult, SUPPORTED_PROTOCOL_VERSIONS};
use crate::wire::jsonrpc::JsonRpcNotification;
use engine::{fail_all, ClientSink, Inner, Phase, State};

/// The default per-request deadline: 30 000 ms (seed `DEFAULT_MCP_REQUEST_TIMEOUT`).
pub const DEFAULT_MCP_REQUEST_TIMEOUT_MS: u64 = 30_000;

/// The most requests one client keeps waiting for an answer by default: 4 096. One more is
/// refused at once with [`ClientError::TooManyPending`] (nothing is sent), so a server that
/// stops answering cannot make the client's memory grow without bound
/// ([`ClientOptions::max_pending`]).
pub const DEFAULT_MAX_PENDING_REQUESTS: usize = 4096;

/// The default `clientInfo.name` (seed `DEFAULT_MCP_CLIENT_NAME`).
pub const DEFAULT_MCP_CLIENT_NAME: &str = "orkestrel-mcp";

/// The default `clientInfo.version` (seed `DEFAULT_MCP_CLIENT_VERSION`): this crate's version.
pub const DEFAULT_MCP_CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The most `tools/list` pages [`McpClient::list_tools`] follows before giving up.
pub const MAX_TOOL_PAGES: usize = MAX_LIST_PAGES;

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// An event listener (`Send + Sync` on native targets).
        pub type Listener = Arc<dyn Fn(&ClientEvent)>;
    } else {
        /// An event listener (`Send + Sync` on native targets).
        pub type Listener = Arc<dyn Fn(&ClientEvent) + Send + Sync>;
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
                    pending: HashMap::default(),
                    expired: VecDeque::new(),
                    initialized: None,
                    lost_session: None,
                    session: None,
                }),
                lifecycle: futures::lock::Mutex::new(()),
                listeners: RwLock::new(Vec::new()),
                answering: Arc::default(),
                transport_errors: Default::default(),
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
    /// The transport's start error ([`ClientError::Transport`] when it did not open within
    /// [`ClientOptions::timeout`]); [`ClientError::Timeout`] / [`ClientError::Rpc`] /
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
            state.lost_session = None;
            state.session = None;
        }
        let sink = TransportSink::new(ClientSink {
            inner: Arc::downgrade(&self.inner),
        });
        // Opening is bounded by the request deadline too: a server that takes the connection
        // and never answers its handshake (a WebSocket upgrade) must not hold `connect` forever.
        let timeout = self.inner.options.timeout;
        let opened = match futures::future::select(
            self.inner.transport.start(sink),
            self.inner.sleep(timeout),
        )
        .await
        {
            futures::future::Either::Left((opened, _)) => opened,
            futures::future::Either::Right(_) => Err(ClientError::Transport(format!(
                "the transport did not open within {} ms",
                timeout.as_millis()
            ))),
        };
        if let Err(e) = opened {
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
            state.session = self.inner.transport.session_id();
            state.phase = Phase::Connected;
        }
        let initialized = JsonRpcNotification::new("notifications/initialized");
        self.inner.notify_within_timeout(initialized, true).await
    }

    async fn abort_connect(&self, error: &ClientError) {
        let cause = format!("connect failed: {error}");
        let pending = {
            let mut state = self.inner.lock();
            state.phase = Phase::Closed(cause.clone());
            state.started = false;
            state.initialized = None;
            state.lost_session = None;
            state.session = None;
            std::mem::take(&mut state.pending)
        };
        fail_all(pending, &ClientError::closed(cause));
        self.inner.transport.close().await;
    }

    /// Fail every pending request, finish answering the server→client requests already accepted
    /// (their handlers run on and their answers are written, at most [`ANSWER_DRAIN`]), close the
    /// transport and fire [`ClientEvent::Disconnect`] (seed clause 13). Idempotent: a second
    /// call, or a call after the transport closed on its own, fires nothing (but still releases
    /// the transport).
    pub async fn disconnect(&self) {
        let _lifecycle = self.inner.lifecycle.lock().await;
        let cause = "the client disconnected".to_owned();
        let (was_open, started, pending) = {
            let mut state = self.inner.lock();
            let was_open = matches!(state.phase, Phase::Connected | Phase::Connecting);
            let started = std::mem::take(&mut state.started);
            state.lost_session = None;
            state.session = None;
            if was_open {
                state.phase = Phase::Closed(cause.clone());
            }
            (was_open, started, std::mem::take(&mut state.pending))
        };
        fail_all(pending, &ClientError::closed(cause.clone()));
        if started {
            // Finish answering what the server asked and we accepted, then close (bounded).
            let answering = self.inner.answering.count();
            if answering > 0 {
                let idle = self.inner.answering.idle();
                let bound = self.inner.sleep(features::ANSWER_DRAIN);
                if let futures::future::Either::Right(_) =
                    futures::future::select(idle, bound).await
                {
                    tracing::warn!(
                        answering,
                        "mcp client: closing with server requests still unanswered"
                    );
                }
            }
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
        if method == "initialize" {
            return self.inner.request(method, params, &options).await;
        }
        self.renew_if_lost().await?;
        // Kept for one more try only where a session can expire (Streamable HTTP).
        let again = self.inner.transport.session_id().map(|_| params.clone());
        match (self.inner.request(method, params, &options).await, again) {
            (Err(ClientError::SessionExpired { session }), Some(params)) => {
                // Unless a newer session is in place already (another request renewed it).
                let current = self.inner.transport.session_id();
                if current.is_none_or(|current| current == session) {
                    self.inner.lock().lost_session = Some(session.clone());
                    self.renew_session(&session).await?;
                }
                self.inner.request(method, params, &options).await
            }
            (answer, _) => answer,
        }
    }

    /// Before a message goes out: replace the session the server forgot, if it did
    /// ([`Inner::lost_session`]).
    async fn renew_if_lost(&self) -> Result<(), ClientError> {
        match self.inner.lost_session() {
            Some(lost) => self.renew_session(&lost).await,
            None => Ok(()),
        }
    }

    /// Start a new session in place of `expired`, which the server no longer knows: a client
    /// that gets `404` for its session MUST start a new one with a new `initialize` (spec
    /// `basic/transports`, Session Management,
    /// <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>).
    /// Once, however many requests saw it expire: a request that finds a newer session in
    /// place just goes on. No `Disconnect` / `Connect` event: the client stays connected; what
    /// the old session held on the server (subscriptions, the log level) is gone with it.
    async fn renew_session(&self, expired: &str) -> Result<(), ClientError> {
        let _lifecycle = self.inner.lifecycle.lock().await;
        {
            let state = self.inner.lock();
            if state.lost_session.as_deref() != Some(expired) {
                return Ok(()); // renewed meanwhile
            }
            if let Phase::Closed(cause) = &state.phase {
                return Err(ClientError::closed(cause.clone()));
            }
            // `initialized` stays until the new handshake replaces it: the capability checks
            // of the helpers read it meanwhile.
        }
        tracing::info!(
            session = expired,
            "mcp client: the server no longer knows the session; starting a new one"
        );
        self.handshake().await?;
        let mut state = self.inner.lock();
        if state.lost_session.as_deref() == Some(expired) {
            state.lost_session = None;
        }
        Ok(())
    }

    /// Send a notification (no reply expected).
    ///
    /// # Errors
    /// [`ClientError::NotConnected`], or the transport's send error.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.inner.check_open()?;
        // Like a request, it goes out in a session: a lost one is replaced first.
        if self.inner.era.modern_version().is_none() {
            self.renew_if_lost().await?;
        }
        let mut notification = JsonRpcNotification::new(method);
        if let Some(params) = params {
            notification = notification.with_params(params);
        }
        self.inner.notify_within_timeout(notification, false).await
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
}

// The names the unit tests (tests.rs) reach through `use super::*` (some may go unused as the
// tests change).
#[cfg(test)]
#[allow(unused_imports)]
use {
    crate::primitives::tools::Tool,
    crate::protocol::{Content, ToolResult, MCP_PROTOCOL_VERSION},
    crate::wire::jsonrpc::{JsonRpcRequest, JsonRpcResponse, RequestId},
    std::time::Duration,
};

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
