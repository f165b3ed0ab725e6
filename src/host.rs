//! What a host hands the no-I/O core: the channels back to the peer.
//!
//! The core decides; the hosts (`native::`, `wasm::`, or an embedder's own loop) drive. Every
//! seam where the core needs something only a host has is named here, once, so the core's
//! modules depend on this file and never on a driver.

use std::sync::Arc;

use crate::jsonrpc::{JsonRpcMessage, JsonRpcNotification};

/// A sink for server→client notifications tied to one request (its SSE stream, its stdio pipe,
/// its WebSocket). Returns `false` when the channel is gone.
pub type Notifier = Arc<dyn Fn(JsonRpcNotification) -> bool + Send + Sync>;

/// A sink for any server→client message (notifications and requests) on the request's channel
/// or a scope's push channel ([`McpServer::attach`](crate::McpServer::attach)). Returns `false`
/// when the channel is gone.
pub type Outbound = Arc<dyn Fn(JsonRpcMessage) -> bool + Send + Sync>;
