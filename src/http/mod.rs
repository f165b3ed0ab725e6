//! Streamable HTTP without I/O (spec `basic/transports`, Streamable HTTP:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>; the 2026-07-28
//! wire: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>):
//! the rules of the wire — which status and headers answer a request, when a body is JSON or an
//! event stream, what a session id or `Last-Event-ID` means, how a client reads each answer — as
//! plain data in and a plan out. The native (hyper) and wasm (`fetch`) hosts turn their request
//! and response types into these and back; they hold no protocol rule of their own.
//!
//! ```text
//!  host (hyper | fetch)        core (no I/O)                                  host
//!  Request ─► HttpRequest{method, path, headers, body} ─► route plan ─► Answer{status, headers, body}
//!                                                           │ dispatch, sessions (store)
//!  client: exchange ─► HttpRequest ─► host sends ─► status, headers, bytes ─► exchange reads
//! ```
//!
//! - [`headers`]: the one home of every header name, media type, default and CORS list.
//! - [`request`]: [`HttpRequest`] (method, path, header fields, body) and the [`Fields`] view.
//! - [`answer`]: [`Answer`] (status, headers, body: JSON, nothing, text, or an [`EventStream`]).
//! - [`media`]: the `Accept` and `Content-Type` readings over plain header strings.
//! - [`session`]: one session's state — its streams, replay log — and the session store (the
//!   [`session::SessionBackend`] seam, in memory by default).
//! - [`guard`]: the `Origin` / `Host` policy ([`Guard`]).
//! - [`route`]: the decision table ([`Route`]: [`Route::head`], then [`Route::respond`]).
//! - [`negotiate`]: the readings of `Accept`, `MCP-Protocol-Version` and the body size.
//! - [`sessions`]: its session half (mint, lookup, `GET` resume, `DELETE`).
//! - [`exchange`]: the client half: which headers each request carries and how every answer is
//!   read (JSON, SSE with resume, 202, session expiry, `401` / `403`), driven by the native
//!   HTTP and the wasm fetch transports.

pub mod answer;
pub mod auth;
pub mod exchange;
pub mod guard;
pub mod headers;
pub mod identity;
pub mod media;
pub mod negotiate;
pub mod request;
pub mod route;
pub mod session;
pub mod sessions;

pub use answer::{Answer, AnswerBody, EventStream};
pub use guard::{Guard, InvalidOrigin, Origin, Refusal, SecurityOptions};
pub use request::{Body, Fields, HttpRequest, HttpVersion, Occurrence};
pub use route::{Head, Route, RouteOptions, Spawn};

#[cfg(test)]
mod hygiene_tests;
#[cfg(test)]
mod tests;
