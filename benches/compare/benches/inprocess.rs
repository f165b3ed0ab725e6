//! In-process: bytes in, bytes out, no I/O. `tools/call` of echo and `tools/list` of 100 tools,
//! for our `McpServer::handle`, the serde floor, and rmcp (a running service fed typed messages
//! over in-memory channels, and a one-shot service per request as its stateless HTTP path does).
//!
//! Every side runs inside the same current-thread tokio `block_on`, so the executor costs the
//! same everywhere. Before measuring, each side's reply is checked.
//!
//! `BENCH_QUICK=1` shortens warm-up and measurement (used by `benches/run.sh`).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use orkestrel_mcp_bench::rmcp_server::{rmcp_oneshot, RmcpBench, RmcpPipe};
use orkestrel_mcp_bench::{
    check_echo_reply, floor_call, floor_list, ours, ECHO_CALL, LIST_TOOLS, TOOLS_LIST,
};
use serde_json::Value;

fn tool_count(reply: &[u8]) -> usize {
    let v: Value = serde_json::from_slice(reply).expect("a JSON reply");
    v.pointer("/result/tools")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let ours_echo = ours(0);
    let ours_list = ours(LIST_TOOLS - 1);
    let rmcp_echo = RmcpBench::new(0);
    let rmcp_list = RmcpBench::new(LIST_TOOLS - 1);
    let mut pipe_echo = RmcpPipe::new(rt.handle(), rmcp_echo.clone());
    let mut pipe_list = RmcpPipe::new(rt.handle(), rmcp_list.clone());

    // The floor's tools/list serializes the same descriptors ours lists.
    let list_reply = rt.block_on(ours_list.handle(TOOLS_LIST)).expect("a reply");
    let descriptors: Value =
        serde_json::from_str::<Value>(&list_reply).expect("JSON")["result"]["tools"].clone();

    // Check every side's answer once before measuring.
    let ours_reply = rt.block_on(ours_echo.handle(ECHO_CALL)).expect("a reply");
    check_echo_reply(ours_reply.as_bytes(), Some(1)).expect("ours echoes");
    check_echo_reply(&floor_call(ECHO_CALL.as_bytes()), Some(1)).expect("floor echoes");
    let rmcp_reply = rt.block_on(pipe_echo.handle(ECHO_CALL.as_bytes()));
    check_echo_reply(&rmcp_reply, Some(1)).expect("rmcp echoes");
    let rmcp_reply = rt.block_on(rmcp_oneshot(&rmcp_echo, ECHO_CALL.as_bytes()));
    check_echo_reply(&rmcp_reply, Some(1)).expect("rmcp oneshot echoes");
    assert_eq!(tool_count(list_reply.as_bytes()), LIST_TOOLS);
    assert_eq!(
        tool_count(&floor_list(TOOLS_LIST.as_bytes(), &descriptors)),
        LIST_TOOLS
    );
    assert_eq!(
        tool_count(&rt.block_on(pipe_list.handle(TOOLS_LIST.as_bytes()))),
        LIST_TOOLS
    );
    assert_eq!(
        tool_count(&rt.block_on(rmcp_oneshot(&rmcp_list, TOOLS_LIST.as_bytes()))),
        LIST_TOOLS
    );

    let mut group = c.benchmark_group("tools_call_echo");
    group.bench_function(BenchmarkId::new("ours", "handle"), |b| {
        b.iter(|| rt.block_on(ours_echo.handle(std::hint::black_box(ECHO_CALL))))
    });
    group.bench_function(BenchmarkId::new("floor", "serde"), |b| {
        b.iter(|| rt.block_on(async { floor_call(std::hint::black_box(ECHO_CALL.as_bytes())) }))
    });
    group.bench_function(BenchmarkId::new("rmcp", "service"), |b| {
        b.iter(|| rt.block_on(pipe_echo.handle(std::hint::black_box(ECHO_CALL.as_bytes()))))
    });
    group.bench_function(BenchmarkId::new("rmcp", "oneshot"), |b| {
        b.iter(|| {
            rt.block_on(rmcp_oneshot(
                &rmcp_echo,
                std::hint::black_box(ECHO_CALL.as_bytes()),
            ))
        })
    });
    group.finish();

    let mut group = c.benchmark_group("tools_list_100");
    group.bench_function(BenchmarkId::new("ours", "handle"), |b| {
        b.iter(|| rt.block_on(ours_list.handle(std::hint::black_box(TOOLS_LIST))))
    });
    group.bench_function(BenchmarkId::new("floor", "serde"), |b| {
        b.iter(|| {
            rt.block_on(async {
                floor_list(std::hint::black_box(TOOLS_LIST.as_bytes()), &descriptors)
            })
        })
    });
    group.bench_function(BenchmarkId::new("rmcp", "service"), |b| {
        b.iter(|| rt.block_on(pipe_list.handle(std::hint::black_box(TOOLS_LIST.as_bytes()))))
    });
    group.bench_function(BenchmarkId::new("rmcp", "oneshot"), |b| {
        b.iter(|| {
            rt.block_on(rmcp_oneshot(
                &rmcp_list,
                std::hint::black_box(TOOLS_LIST.as_bytes()),
            ))
        })
    });
    group.finish();
}

fn criterion() -> Criterion {
    let c = Criterion::default().configure_from_args();
    if std::env::var_os("BENCH_QUICK").is_some() {
        c.warm_up_time(Duration::from_millis(800))
            .measurement_time(Duration::from_millis(2500))
            .sample_size(20)
    } else {
        c
    }
}

criterion_group! {
    name = benches;
    config = criterion();
    targets = bench
}
criterion_main!(benches);
