//! The one support module of the integration tests (`mod support;` in each test file).
//!
//! | file | concept |
//! |---|---|
//! | `mod.rs` | the bound on every wait ([`DEADLINE`]) and waiting on a condition ([`eventually`]) |
//! | [`http`] | a raw HTTP/1.1 client on 127.0.0.1 (one connection per request), [`Reply`], an SSE reader |
//! | [`json`] | JSON-RPC and MCP message builders, the 2026-07-28 `_meta` keys |
//! | [`server`] | our servers on 127.0.0.1: an [`Endpoint`](orkestrel_mcp::native::endpoint::Endpoint) in process, the `orkestrel-mcp` binary (stdio, HTTP, bridge) |
//! | [`client`] | client constructors, an event recorder and a scripted HTTP peer for fault cases |
//! | [`modern`] | the 2026-07-28 fixture server and request / assertion helpers of the `modern_*` tests |
//! | [`skills`] | a skill tree in a temporary directory, an independent SHA-256 digest |
//! | `redis` | a real `redis-server` on a free port (feature `redis`) |
//!
//! Every wait has an upper bound, so a broken server fails a test instead of hanging it; no
//! test sleeps to synchronise: it waits on a signal, or polls a condition with [`eventually`].
#![allow(dead_code, unused_imports)]

use std::future::Future;
use std::time::Duration;

pub mod http;
pub mod json;

#[cfg(feature = "native")]
pub mod client;
#[cfg(feature = "native")]
pub mod modern;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "native")]
pub mod server;
#[cfg(feature = "native")]
pub mod skills;

pub use http::{open, parse_events, post, send, Event, Reply, SseStream, POST};
pub use json::initialize;
#[cfg(feature = "native")]
pub use server::{manual_clock, new_session, server, start, start_service, TestServer};

/// The upper bound on any single wait in these tests: a guard against hangs, never a timing
/// assertion.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// The client tests' name for [`DEADLINE`].
pub const HANG_GUARD: Duration = DEADLINE;

/// How often [`eventually`] looks at its condition.
const POLL: Duration = Duration::from_millis(5);

/// Wait until `cond` holds, looking every few ms; panics with `what` after `deadline`.
pub async fn eventually(deadline: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let mut tick = tokio::time::interval(POLL);
    let found = tokio::time::timeout(deadline, async {
        while !cond() {
            tick.tick().await;
        }
    })
    .await;
    assert!(found.is_ok(), "not within {deadline:?}: {what}");
}

/// [`eventually`] for a condition that must itself await (e.g. a request to the server).
pub async fn eventually_async<F, Fut>(deadline: Duration, what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let mut tick = tokio::time::interval(POLL);
    let found = tokio::time::timeout(deadline, async {
        while !cond().await {
            tick.tick().await;
        }
    })
    .await;
    assert!(found.is_ok(), "not within {deadline:?}: {what}");
}

/// Let every other ready task on this (current-thread) runtime run before going on: the bounded
/// way to show that something did *not* happen in reaction to a step just taken.
pub async fn settle() {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
}
