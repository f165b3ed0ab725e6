//! Scale-out on Redis (issue 14): `orkestrel-mcp serve --http --redis …` instances that share one
//! real `redis-server` (Debian's, started here on a free 127.0.0.1 port; `tests/run.sh` installs
//! it when missing) serve one session between them, and answer `503` with `Retry-After` while
//! Redis is down.
#![cfg(all(feature = "redis", not(target_arch = "wasm32")))]

#[path = "../support/mod.rs"]
mod support;

mod clients;
mod sessions;
mod streams;
mod tasks;

use std::net::SocketAddr;
use std::sync::Arc;

use orkestrel_mcp::client::{ClientHandler, Progress, RequestOptions};
use orkestrel_mcp::http::session::{MintError, SessionBackend, SessionOptions};
use orkestrel_mcp::native::endpoint::system_clock;
use orkestrel_mcp::native::redis::{RedisOptions, RedisSessions};
use orkestrel_mcp::ErrorObject;
use orkestrel_mcp::{BoxFuture, McpServer, ServerOptions};
use serde_json::{json, Value};
use support::client::http_client_to;
use support::redis::{
    asking_instance, changing_instance, get_stream, instance, instance_with, round_robin, session,
    Redis,
};
use support::*;

fn sid(id: &str) -> [(&'static str, &str); 2] {
    [
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-06-18"),
    ]
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json::rpc(
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// The messages of a reply with this `method`.
fn with_method(reply: &Reply, method: &str) -> usize {
    (reply.messages().iter())
        .filter(|m| m["method"] == method)
        .count()
}

/// The response (the message with an `id`) of a reply.
fn response(reply: &Reply) -> Value {
    (reply.messages().into_iter())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in {:?}", reply.body))
}
