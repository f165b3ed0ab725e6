//! What a host hands the no-I/O core: the channels back to the peer, a clock, a timer and a
//! spawner — each named here, once.
//!
//! The core decides; the hosts (`native::`, `wasm::`, or an embedder's own loop) drive. The core
//! never reads a clock, starts a timer or spawns a task itself: [`McpServer`](crate::McpServer),
//! [`McpClient`](crate::McpClient) and the session store call the [`Clock`], [`Sleep`] and
//! [`Spawn`] their options carry.
//!
//! ```text
//!  host (native::, wasm::, yours) ──► Clock · Sleep · Spawn · Outbound ──► core (no I/O)
//!                                     (ServerOptions / ClientOptions / RequestContext)
//! ```
//!
//! **Defaults.** `ServerOptions::new` and `ClientOptions::new` fill these options from
//! [`defaults`], the one cfg'd file that knows the targets: the system clock on native targets
//! and none on wasm; `futures-timer` for sleeps; the current tokio runtime (feature `native`),
//! else a thread, on native targets and `spawn_local` on `wasm32-unknown-unknown`. A host or a
//! test replaces any of them (`with_clock`, `with_sleep`, `with_spawner`).

pub mod defaults;

use std::sync::Arc;
use std::time::Duration;

use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcNotification};
use crate::BoxFuture;

/// A sink for server→client notifications tied to one request (its SSE stream, its stdio pipe,
/// its WebSocket). Returns `false` when the channel is gone.
pub type Notifier = Arc<dyn Fn(JsonRpcNotification) -> bool + Send + Sync>;

/// A sink for any server→client message (notifications and requests) on the request's channel
/// or a scope's push channel ([`McpServer::attach`](crate::McpServer::attach)). Returns `false`
/// when the channel is gone.
pub type Outbound = Arc<dyn Fn(JsonRpcMessage) -> bool + Send + Sync>;

/// A clock: milliseconds since the Unix epoch (monotone in practice). The server expires
/// `requestState` with it, the session store idles sessions out with it, the client expires
/// cached results with it; tests inject one to move time.
/// (`Send + Sync` on every target: a clock is a free function such as `Date.now()`.)
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// An injected timer: a future that resolves after the duration (`Send + Sync` on native
        /// targets only).
        pub type Sleep = Arc<dyn Fn(Duration) -> BoxFuture<'static, ()>>;
        /// Runs a background future to completion (e.g. `tokio::spawn`, `spawn_local`; `Send +
        /// Sync` on native targets only).
        pub type Spawn = Arc<dyn Fn(BoxFuture<'static, ()>)>;
        /// Where a panicking event listener is reported: `(panic message, event name)` (`Send +
        /// Sync` on native targets only).
        pub type ErrorHandler = Arc<dyn Fn(&str, &str)>;
    } else {
        /// An injected timer: a future that resolves after the duration (`Send + Sync` on native
        /// targets only).
        pub type Sleep = Arc<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync>;
        /// Runs a background future to completion (e.g. `tokio::spawn`, `spawn_local`; `Send +
        /// Sync` on native targets only).
        pub type Spawn = Arc<dyn Fn(BoxFuture<'static, ()>) + Send + Sync>;
        /// Where a panicking event listener is reported: `(panic message, event name)` (`Send +
        /// Sync` on native targets only).
        pub type ErrorHandler = Arc<dyn Fn(&str, &str) + Send + Sync>;
    }
}
