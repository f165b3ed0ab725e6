//! `McpServer::handle` (and `handle_slice` for bytes that are not UTF-8), both eras: whatever
//! the bytes, no panic, and the answer is what JSON-RPC says (see `orkestrel_mcp_fuzz::expect`):
//! one well-formed reply carrying the request's id, or none for a notification or a response.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::McpServer;
use orkestrel_mcp_fuzz::{check, expect, server};

static SERVER: OnceLock<McpServer> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let server = SERVER.get_or_init(server);
    let expected = expect(data);
    let answer = match std::str::from_utf8(data) {
        Ok(text) => futures::executor::block_on(server.handle(text)),
        Err(_) => futures::executor::block_on(server.handle_slice(data)).map(|r| r.to_json()),
    };
    check(data, &expected, answer.as_deref());
});
