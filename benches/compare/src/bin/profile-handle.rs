//! A fixed loop of in-process calls for profilers (`valgrind --tool=callgrind`, `perf record`):
//! `profile-handle MODE N` with MODE one of `ours-echo`, `ours-list`, `floor-echo`,
//! `floor-list`, `rmcp-echo`, `rmcp-list` (lists are of 100 tools). Every call runs in the same
//! current-thread tokio `block_on` as the criterion bench. No timing, no I/O: run it with N and
//! with 0 and divide the difference by N for a noise-free instructions-per-call figure.

use orkestrel_mcp_bench::rmcp_server::{RmcpBench, RmcpPipe};
use orkestrel_mcp_bench::{floor_call, floor_list, ours, ECHO_CALL, LIST_TOOLS, TOOLS_LIST};
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("ours-echo", String::as_str);
    let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let fillers = if mode.ends_with("-list") {
        LIST_TOOLS - 1
    } else {
        0
    };
    let request = if mode.ends_with("-list") {
        TOOLS_LIST
    } else {
        ECHO_CALL
    };
    let server = ours(fillers);
    let descriptors: Value = {
        let reply = rt.block_on(server.handle(TOOLS_LIST)).expect("a reply");
        serde_json::from_str::<Value>(&reply).expect("JSON")["result"]["tools"].clone()
    };
    let mut pipe = mode
        .starts_with("rmcp")
        .then(|| RmcpPipe::new(rt.handle(), RmcpBench::new(fillers)));
    let mut bytes = 0;
    for _ in 0..n {
        let input = std::hint::black_box(request);
        bytes += match mode {
            "ours-echo" | "ours-list" => rt.block_on(server.handle(input)).map_or(0, |r| r.len()),
            "floor-echo" => rt.block_on(async { floor_call(input.as_bytes()) }).len(),
            "floor-list" => rt
                .block_on(async { floor_list(input.as_bytes(), &descriptors) })
                .len(),
            "rmcp-echo" | "rmcp-list" => {
                let pipe = pipe.as_mut().expect("an rmcp pipe");
                rt.block_on(pipe.handle(input.as_bytes())).len()
            }
            other => {
                eprintln!("profile-handle: unknown mode {other}");
                std::process::exit(2);
            }
        };
    }
    println!("{mode}: {n} calls, {bytes} reply bytes");
}
