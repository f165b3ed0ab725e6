//! [`ClientOptions`] (what a client is built from: identity, deadline, era, handler and the
//! injected timer, clock and spawner) and [`RequestOptions`] (one call's deadline and progress).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{
    handlers, ClientEra, Clock, ErrorHandler, Progress, ProgressCallback, Sleep, Spawn,
    DEFAULT_MAX_PENDING_REQUESTS, DEFAULT_MCP_CLIENT_NAME, DEFAULT_MCP_CLIENT_VERSION,
    DEFAULT_MCP_REQUEST_TIMEOUT_MS,
};
use crate::protocol::{Implementation, LATEST_PROTOCOL_VERSION};

/// Options for [`McpClient::new`](super::McpClient::new) (seed `MCPClientOptions`: `name`, `version`, `timeout`).
#[derive(Clone)]
pub struct ClientOptions {
    /// The `clientInfo` sent with `initialize`.
    pub info: Implementation,
    /// The per-request deadline (default 30 000 ms).
    pub timeout: Duration,
    /// The protocol version offered in `initialize`: by default [`LATEST_PROTOCOL_VERSION`], the
    /// newest this crate speaks (spec `basic/lifecycle`: the client SHOULD send the latest it
    /// supports); the seed's [`MCP_PROTOCOL_VERSION`](crate::protocol::MCP_PROTOCOL_VERSION),
    /// `2025-06-18`, or any other supported one through [`ClientOptions::with_protocol_version`].
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
    /// The most requests waiting for an answer at once (default
    /// [`DEFAULT_MAX_PENDING_REQUESTS`]); one more fails at once with
    /// [`ClientError::TooManyPending`](super::ClientError::TooManyPending).
    pub max_pending: usize,
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
    /// [`LATEST_PROTOCOL_VERSION`].
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
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            on_error: None,
            sleep: crate::host::defaults::sleep(),
            clock: crate::host::defaults::clock(),
            era: ClientEra::Auto,
            handler: None,
            spawn: crate::host::defaults::spawner(),
            max_pending: DEFAULT_MAX_PENDING_REQUESTS,
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
    /// with [`ClientError::Timeout`](super::ClientError::Timeout) once this much time has passed in total.
    pub max_total_timeout: Option<Duration>,
    /// Declare the Tasks extension (`io.modelcontextprotocol/tasks`) in this 2026-07-28
    /// request's client capabilities, so the server may answer a `tools/call` with a task
    /// ([`McpClient::call_tool_as_task`](super::McpClient::call_tool_as_task) sets it).
    pub declare_tasks: bool,
    /// On the 2026-07-28 wire, ask for the server's `notifications/message` at this level and
    /// above for this request (`_meta["io.modelcontextprotocol/logLevel"]`, which replaces
    /// `logging/setLevel` there); ignored in the handshake era, where
    /// [`McpClient::set_logging_level`](super::McpClient::set_logging_level) sets it.
    pub log_level: Option<crate::protocol::LogLevel>,
    /// Who answers this request's 2026-07-28 input-required rounds (its sampling, elicitation
    /// and roots inputs) instead of [`ClientOptions::with_handler`]'s handler — a gateway
    /// relaying each call's inputs to the client that made it. The capabilities declared stay
    /// the client's.
    pub handler: Option<Arc<dyn super::handlers::ClientHandler>>,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("max_total_timeout", &self.max_total_timeout)
            .field("declare_tasks", &self.declare_tasks)
            .field("log_level", &self.log_level)
            .field("handler", &self.handler.is_some())
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
