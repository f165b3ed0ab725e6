//! Streamable HTTP without I/O (spec `basic/transports`, Streamable HTTP; SPEC 2026-07-28 §2):
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
//! [`headers`] is the one home of every header name, media type, default and CORS list.

pub mod exchange;
pub mod headers;
