//! A fixed loop over `McpServer::handle` for profilers (`perf record`, `valgrind --tool=callgrind`):
//! `profile-handle echo N`, `profile-handle list N` (100 tools), or `profile-handle floor N`
//! (the serde floor of the echo call, for comparison). No timing, no I/O.

use orkestrel_mcp_bench::{floor_call, ours, ECHO_CALL, LIST_TOOLS, TOOLS_LIST};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    if args.first().map(String::as_str) == Some("floor") {
        let bytes: usize = (0..n)
            .map(|_| floor_call(std::hint::black_box(ECHO_CALL.as_bytes())).len())
            .sum();
        println!("{n} floor calls, {bytes} reply bytes");
        return;
    }
    let (server, request) = match args.first().map(String::as_str) {
        Some("list") => (ours(LIST_TOOLS - 1), TOOLS_LIST),
        _ => (ours(0), ECHO_CALL),
    };
    let mut bytes = 0;
    for _ in 0..n {
        let reply = futures::executor::block_on(server.handle(std::hint::black_box(request)));
        bytes += reply.map_or(0, |r| r.len());
    }
    println!("{n} calls, {bytes} reply bytes");
}
