//! Native transports (feature `native`): thin tokio/hyper drivers around the core.
//!
//! - `connection`: the tokio host of the core's stream connection body (stdio and WebSocket).
//! - [`stdio`]: newline-delimited JSON-RPC over a reader and a writer (seed clause 20).
//! - [`http`]: the stateless Streamable HTTP route as a `tower::Service` (seed clause 12).
//! - [`session`]: the session layer in front of it, with resumable `GET` streams (clauses 18, 19).
//! - [`ws`]: the WebSocket server on the same port and path (clause 16).
//! - [`security`]: `Origin` / `Host` validation.
//! - [`admission`]: the cap on open connections and the lingering close of the HTTP server.
//! - [`endpoint`]: all of the above composed on one path, as `orkestrel-mcp serve --http` serves it.
//! - [`shutdown`]: serving an endpoint until a signal, then a bounded graceful drain.
//! - [`skills`]: skills served from a directory tree (`SKILL.md` and files), refreshed on change.
//! - [`terminal`]: a peer's text made safe to write to a terminal (control characters escaped).
//! - `otel` (feature `otel`): the OpenTelemetry binding of the per-request spans and metrics.
//! - `redis` (feature `redis`): sessions shared by several server instances through Redis.
//! - [`client`]: the client transports: stdio child process, Streamable HTTP, WebSocket (seed
//!   clauses 15, 17, 20).

pub mod admission;
pub mod auth;
pub mod client;
pub(crate) mod connection;
pub mod endpoint;
pub mod http;
#[cfg(feature = "otel")]
pub(crate) mod otel;
#[cfg(feature = "redis")]
pub mod redis;
pub mod security;
pub mod session;
pub mod shutdown;
pub mod skills;
pub mod stdio;
mod stream;
pub mod terminal;
pub mod ws;
