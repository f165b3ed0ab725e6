//! The core's HTTP route plan driven in process, no sockets: a fixed loop of `tools/call` echo
//! requests through `Route::head_of` and `Route::respond`, each answer's body drained as the
//! native host does (the events ready at once, concatenated), for profilers
//! (`valgrind --tool=callgrind` / `cachegrind`, `perf record`) and for a quick CPU time per
//! request free of the network stack's noise.
//!
//! ```text
//! profile-route MODE N [SESSIONS] [LOG_CAPACITY] [TRIALS]
//! ```
//!
//! MODE: `sse` (the stateless route's defaults: SSE replies), `json` (stateless, JSON preferred)
//! or `sessions` (the route with the in-memory session store, as `Endpoint` builds it, SESSIONS
//! sessions, default 16, each opened with `initialize` + `notifications/initialized` and then
//! called in turn, round robin; LOG_CAPACITY, default 1024, bounds each session's replay log).
//! N requests per trial (0 for a baseline under callgrind); TRIALS trials (default 1), each
//! printing its nanoseconds per request (wall clock, one thread).

use std::sync::Arc;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use orkestrel_mcp::http::answer::AnswerBody;
use orkestrel_mcp::http::request::{Body, HttpRequest, HttpVersion};
use orkestrel_mcp::http::route::{Head, Route, RouteOptions};
use orkestrel_mcp::http::session::{SessionBackend, SessionOptions, SessionStore};
use orkestrel_mcp::http::Answer;
use orkestrel_mcp_bench::{echo_call, ours, INITIALIZE, INITIALIZED};

fn request(body: &str, session: Option<&str>) -> HttpRequest {
    let mut request = HttpRequest::new("POST", "/mcp")
        .header("host", "127.0.0.1:3000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("content-length", body.len().to_string());
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    request.version = Some(HttpVersion::Http11);
    request
}

/// Answer one request as the native host does: head, body, respond, drain the ready events.
fn exchange(route: &Route, body: String, session: Option<&str>) -> (Answer, Vec<u8>) {
    let mut request = request(&body, session);
    match route.head_of(&request, None) {
        Head::ReadBody { .. } => request.body = Body::Bytes(body.into_bytes()),
        other => panic!("head: {other:?}"),
    }
    let mut answer = route
        .respond(request)
        .now_or_never()
        .expect("the in-memory route answers at once");
    let bytes = match std::mem::replace(&mut answer.body, AnswerBody::Empty) {
        AnswerBody::Json(text) => text.into_bytes(),
        AnswerBody::Events(mut events) => {
            let mut out = String::new();
            while let Some(Some(text)) = events.next().now_or_never() {
                if out.is_empty() {
                    out = text;
                } else {
                    out.push_str(&text);
                }
            }
            out.into_bytes()
        }
        AnswerBody::Empty => Vec::new(),
        AnswerBody::Text(text) => text.as_bytes().to_vec(),
    };
    (answer, bytes)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: usize| -> usize {
        args.get(i).and_then(|n| n.parse().ok()).unwrap_or(default)
    };
    let mode = args.first().map_or("sessions", String::as_str);
    let n = arg(1, 10_000);
    let sessions = arg(2, 16);
    let log_capacity = arg(3, 1024);
    let trials = arg(4, 1);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let _guard = rt.enter();
    let server = ours(0);
    let spawn: orkestrel_mcp::http::route::Spawn = Arc::new(|future| {
        tokio::spawn(future);
    });
    let options = RouteOptions {
        prefer_json: mode == "json",
        ..RouteOptions::default()
    };
    let mut route = Route::new(server.clone(), options, spawn);
    let mut ids: Vec<String> = Vec::new();
    if mode == "sessions" {
        let store = Arc::new(SessionStore::new(
            SessionOptions {
                log_capacity,
                ..SessionOptions::default()
            },
            orkestrel_mcp::native::endpoint::system_clock(),
        ));
        let ended = server.clone();
        store.set_on_end(Arc::new(move |id| ended.end_scope(id)));
        route = route.with_sessions(store as Arc<dyn SessionBackend>);
        for _ in 0..sessions {
            let (answer, _) = exchange(&route, INITIALIZE.to_owned(), None);
            let id = answer
                .header("mcp-session-id")
                .expect("a session id")
                .to_owned();
            let (answer, _) = exchange(&route, INITIALIZED.to_owned(), Some(&id));
            assert!(answer.is_success(), "initialized: {}", answer.status);
            ids.push(id);
        }
    } else if mode != "sse" && mode != "json" {
        eprintln!("profile-route: unknown mode {mode}");
        std::process::exit(2);
    }
    let mut next_id = 0u64;
    let mut bytes = 0usize;
    for _ in 0..trials {
        let started = Instant::now();
        for i in 0..n {
            next_id += 1;
            let session = (!ids.is_empty()).then(|| ids[i % ids.len()].as_str());
            let (answer, body) = exchange(&route, echo_call(next_id), session);
            assert_eq!(answer.status, 200);
            bytes += body.len();
        }
        let elapsed = started.elapsed();
        if n > 0 {
            println!(
                "{mode} sessions={} log={log_capacity}: {:.0} ns per request",
                ids.len(),
                elapsed.as_nanos() as f64 / n as f64
            );
        }
    }
    eprintln!("{n} x {trials} requests, {bytes} reply bytes");
}
