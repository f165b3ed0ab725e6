//! Native transports (feature `native`): thin tokio/hyper drivers around the core.
//!
//! - [`stdio`]: newline-delimited JSON-RPC over a reader and a writer (seed clause 20).
//! - [`http`]: the Streamable HTTP route as a `tower::Service` (seed clause 12).
//! - [`client`]: the client transports: stdio child process, Streamable HTTP, WebSocket (seed
//!   clauses 15, 17, 20).

pub mod client;
pub mod http;
pub mod stdio;
