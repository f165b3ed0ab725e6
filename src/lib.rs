//! # orkestrel-mcp
//!
//! A Rust implementation of the [Model Context Protocol](https://modelcontextprotocol.io):
//! JSON-RPC 2.0 servers and clients that expose and call tools. One no-I/O core compiles for
//! `wasm32-unknown-unknown` and for native targets; the native transports (stdio, Streamable
//! HTTP with sessions and resumable streams, WebSocket) sit behind the `native` feature.
//!
//! ```text
//!  drivers (native::, wasm::)                 core (no I/O)
//!  stdio lines ─┐                                                                     ┌─ stdio
//!  WS frames   ─┴► server::connection ─► wire::jsonrpc ─► McpServer ─► primitives ────┼─ WS
//!                  (in-flight set, attach)   (classify)      (dispatch)  (registries) │
//!  HTTP request ─► http::Route::head ─► body ─► http::Route::respond ─► http::Answer ─┴─ HTTP response
//!  (hyper | fetch)  (404/405/415/406/413)       │ (JSON | empty | SSE events)           (hyper | fetch)
//!                                  http::sessions ─► http::session::Session (streams, replay log,
//!                                                    resumable by GET + Last-Event-ID)
//! ```
//!
//! The client is the mirror (seed clauses 13–15, 17, 20): [`McpClient`] tags each request with
//! the next integer id, a [`ClientTransport`] carries it, and the transport hands every reply
//! back through a [`client::TransportSink`], where the pending request with that exact id
//! resolves — or fails on its deadline, or with the transport's close.
//!
//! ```text
//!  McpClient::call ─► JsonRpcRequest{id} ─► ClientTransport::send ─► stdio child | WS | HTTP
//!        ▲                                                                            │
//!        │     HTTP: http::exchange::Exchange ─► Step::Send(Outgoing) ─► host sends ──┘
//!        │           (headers, resume, deadline)  ◄── Input::{Response, Chunk, End} ◄── host reads
//!        └── pending[id] ◄── TransportSink::receive ◄── lines | exchange Event::Message | frames
//! ```
//!
//! ## Layout
//!
//! The core (everything outside `native/` and `wasm/`) reads no clock and spawns nothing: what
//! only a host has — a clock, a timer, a spawner, the channel back to a peer — is injected
//! through [`host`], with per-target defaults in [`host::defaults`]. By concept:
//!
//! | concept | modules |
//! |---|---|
//! | wire codecs | [`wire`]: [`wire::jsonrpc`] (ids, messages, error codes, the classifying parser, batches), [`wire::framing`] (lines), [`wire::sse`] (events) |
//! | MCP protocol types | [`protocol`] (versions, `initialize`, content, log levels) |
//! | server primitives | [`primitives`]: [`primitives::tools`], [`primitives::resources`], [`primitives::prompts`] (the registries) |
//! | the 2026-07-28 rules | [`era`] (`_meta`, versions, headers, result decoration), [`era::mrtr`] (input-required rounds, sealed `requestState`) |
//! | the HTTP plan | [`http`] (header names, the route plan, the client exchange), [`http::media`], [`http::session`] (streams, replay log, store) |
//! | the server | [`server`] (options, the method table, the modern era, pushes and listen streams, per-scope state), [`server::context`] (one request's context), [`server::connection`] (one stdio or WebSocket connection's rules) |
//! | the client | [`client`] (options, the request engine, tool calls, [`client::era`], features, listen, input-required answers, transports) |
//! | the gateway | [`gateway`] (an upstream server re-served through `McpServer`s: mirrored registries, list changes, name prefixes), [`gateway::relay`] (progress, cancellation, logs and server→client requests across, both eras; native targets) |
//! | host seams | [`host`]: `Outbound`, `Clock`, `Sleep`, `Spawn`, `ErrorHandler`; [`host::defaults`] |
//! | drivers | `native` (feature `native`: stdio, hyper, WebSocket, client transports), `wasm` (`wasm32`: JS bindings, `fetch`) |
//!
//! The shorter paths of earlier releases (`jsonrpc`, `framing`, `sse`, `mrtr`, `media`,
//! `session`, `tools`, `resources`, `prompts`, `context`, `connection`) stay as re-exports.
//!
//! | feature | what it adds |
//! |---|---|
//! | *(none)* | the core: every module of the layout above but the drivers — builds for wasm32 |
//! | `native` | `native::stdio`, `native::http` (a `tower::Service`), `native::session` (its session layer), `native::ws` (WebSocket on the same port), `native::security` (Origin / Host), `native::endpoint` (all composed), `native::client` (stdio, Streamable HTTP and WebSocket client transports), and the `orkestrel-mcp` binary (`serve`, `tools`, `call`, `bridge`) |
//! | `otel` | OpenTelemetry (implies `native`): per-request spans and W3C trace context in `params._meta` ([`protocol::trace`]), the `mcp.*.operation.duration` metrics, OTLP export from the binary (README, "Observability") |
//! | `redis` | scale-out (implies `native`): `native::redis::RedisSessions`, sessions, their stream events and server→client messages shared by several instances through Redis; `native::redis::RedisTasks`, the task store shared likewise; `serve --redis URL` (README, "Scale-out on Redis") |
//! | `tls` | `https://` and `wss://` for the client transports (rustls with `ring`, webpki roots) |
//!
//! ## Example
//!
//! ```
//! use orkestrel_mcp::{McpServer, ServerOptions, Tool};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct Add { x: f64, y: f64 }
//!
//! let server = McpServer::new(ServerOptions::new("calculator", "1.0.0"));
//! server.tools().add(Tool::new("add", |a: Add| async move { Ok::<_, String>((a.x + a.y).to_string()) }));
//!
//! let reply = futures::executor::block_on(server.handle(
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":5}}}"#,
//! ));
//! assert_eq!(
//!     reply.as_deref(),
//!     Some(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"7"}]}}"#),
//! );
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// On wasm the core's `Arc`s hold `!Send` JS handlers on purpose: one code path for both targets.
#![cfg_attr(target_family = "wasm", allow(clippy::arc_with_non_send_sync))]

pub mod client;
mod collections;
pub mod era;
#[cfg(not(target_family = "wasm"))]
pub mod gateway;
pub mod host;
pub mod http;
mod observe;
pub mod primitives;
pub mod protocol;
pub mod server;
pub mod wire;

// The shorter paths of earlier releases, kept for callers: each names a module of the layout.
#[doc(no_inline)]
pub use era::mrtr;
#[doc(no_inline)]
pub use http::{media, session};
#[doc(no_inline)]
pub use primitives::{prompts, resources, tools};
#[doc(no_inline)]
pub use server::{connection, context};
#[doc(no_inline)]
pub use wire::{framing, jsonrpc, sse};

#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
pub mod native;

#[cfg(target_family = "wasm")]
pub mod wasm;

pub use client::{ClientError, ClientEvent, ClientOptions, ClientTransport, McpClient};
pub use context::RequestContext;
pub use jsonrpc::{
    ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse,
    RequestId,
};
pub use protocol::{
    Content, Implementation, InitializeResult, ToolDescriptor, ToolResult, MCP_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
};
pub use server::{McpServer, ServerOptions};
pub use tools::{Json, Structured, Tool, ToolRegistry};

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// A boxed future; `Send` on native targets, not on wasm (JS promises are `!Send`).
        pub type BoxFuture<'a, T> = futures::future::LocalBoxFuture<'a, T>;
        /// `Send` on native targets; nothing on wasm.
        pub trait MaybeSend {}
        impl<T: ?Sized> MaybeSend for T {}
        /// `Sync` on native targets; nothing on wasm.
        pub trait MaybeSync {}
        impl<T: ?Sized> MaybeSync for T {}
    } else {
        /// A boxed future; `Send` on native targets, not on wasm (JS promises are `!Send`).
        pub type BoxFuture<'a, T> = futures::future::BoxFuture<'a, T>;
        /// `Send` on native targets; nothing on wasm.
        pub trait MaybeSend: Send {}
        impl<T: Send + ?Sized> MaybeSend for T {}
        /// `Sync` on native targets; nothing on wasm.
        pub trait MaybeSync: Sync {}
        impl<T: Sync + ?Sized> MaybeSync for T {}
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
