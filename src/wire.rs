//! Wire codecs, with no I/O: the bytes and messages every transport carries.
//!
//! - [`jsonrpc`]: JSON-RPC 2.0 ids, messages, error codes and the classifying parser
//!   (<https://www.jsonrpc.org/specification>).
//! - [`framing`]: newline-delimited JSON for stdio
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio>).
//! - [`sse`]: Server-Sent Events, the encoder and a streaming decoder
//!   (<https://html.spec.whatwg.org/multipage/server-sent-events.html>).

pub mod framing;
pub(crate) mod json_text;
pub mod jsonrpc;
pub(crate) mod percent;
pub mod sse;
pub(crate) mod url;
