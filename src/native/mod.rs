//! Native transports (feature `native`): thin tokio/hyper drivers around the core.
//!
//! - [`stdio`]: newline-delimited JSON-RPC over a reader and a writer (seed clause 20).
//! - [`http`]: the Streamable HTTP route as a `tower::Service` (seed clause 12).

pub mod http;
pub mod stdio;
