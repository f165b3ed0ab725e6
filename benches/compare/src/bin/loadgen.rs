//! HTTP load generator: N keep-alive HTTP/1.1 connections, each sending `tools/call` echo
//! requests one after another (a fresh id each) for a warm-up, then for a measured window that
//! ends at a duration OR a request budget, whichever comes first. Every reply's status AND body
//! are checked (the echo text, and the id unless `--no-id-check`). Prints one JSON line:
//! `{"connections":..,"ok":..,"total":..,"bad":..,"errors":..,"rps":..,"p50_us":..,"p99_us":..}`
//! (`total` counts the warm-up's good replies too).
//!
//! With `--sessions`, every connection first opens an MCP session the way a client does —
//! `initialize` (no `mcp-session-id`; the reply must carry one and a `result`), then
//! `notifications/initialized` with the id (`2xx`) — and sends every call with that id.
//! `--protocol-version V` (default `2025-06-18`) is the `MCP-Protocol-Version` sent and, with
//! `--sessions`, the version `initialize` asks for (`2025-11-25`: every reply stream starts with
//! a priming event).
//!
//! ```text
//! loadgen --url http://127.0.0.1:PORT/mcp --connections 16 --duration-ms 2000 \
//!         --warmup-ms 500 --max-requests 1000000 [--no-id-check] [--sessions]
//!         [--protocol-version 2025-11-25]
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use orkestrel_mcp_bench::{check_echo_reply, echo_call, open_session_in, PROTOCOL_VERSION};

struct Options {
    addr: String,
    path: String,
    connections: u64,
    duration: Duration,
    warmup: Duration,
    max_requests: u64,
    check_id: bool,
    sessions: bool,
    /// The `MCP-Protocol-Version` sent (and negotiated by `--sessions`).
    version: String,
}

#[derive(Default)]
struct Stats {
    latencies_us: Vec<u32>,
    ok: u64,
    /// Good replies including the warm-up (to divide the server's CPU time by).
    total: u64,
    bad: u64,
    errors: u64,
    first_bad: Option<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut url = None;
    let mut o = Options {
        addr: String::new(),
        path: String::new(),
        connections: 1,
        duration: Duration::from_secs(2),
        warmup: Duration::from_millis(500),
        max_requests: 1_000_000,
        check_id: true,
        sessions: false,
        version: PROTOCOL_VERSION.to_owned(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--url" => url = Some(value()?),
            "--connections" => o.connections = value()?.parse().map_err(|e| format!("{e}"))?,
            "--duration-ms" => {
                o.duration = Duration::from_millis(value()?.parse().map_err(|e| format!("{e}"))?)
            }
            "--warmup-ms" => {
                o.warmup = Duration::from_millis(value()?.parse().map_err(|e| format!("{e}"))?)
            }
            "--max-requests" => o.max_requests = value()?.parse().map_err(|e| format!("{e}"))?,
            "--no-id-check" => o.check_id = false,
            "--sessions" => o.sessions = true,
            "--protocol-version" => o.version = value()?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let url = url.ok_or("--url is required")?;
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// URLs are supported")?;
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !addr.starts_with("127.0.0.1:") {
        return Err("the load generator only talks to 127.0.0.1".into());
    }
    o.addr = addr.to_owned();
    o.path = format!("/{path}");
    if o.connections == 0 {
        return Err("--connections must be at least 1".into());
    }
    Ok(o)
}

async fn connect(addr: &str) -> std::io::Result<SendRequest<Full<Bytes>>> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(std::io::Error::other)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

async fn worker(
    o: Arc<Options>,
    index: u64,
    measure_from: Instant,
    end: Instant,
    budget: Arc<AtomicU64>,
) -> Stats {
    let mut stats = Stats::default();
    let host = HeaderValue::from_str(&o.addr).expect("an address is a header value");
    let mut sender = match connect(&o.addr).await {
        Ok(s) => s,
        Err(e) => {
            stats.errors += 1;
            stats.first_bad = Some(format!("connect: {e}"));
            return stats;
        }
    };
    let session = if o.sessions {
        match open_session_in(&mut sender, &o.addr, &o.path, &o.version).await {
            Ok(id) => Some(HeaderValue::from_str(&id).expect("a session id is a header value")),
            Err(e) => {
                stats.errors += 1;
                stats.first_bad = Some(format!("opening a session: {e}"));
                return stats;
            }
        }
    } else {
        None
    };
    let mut n: u64 = 0;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        let measured = now >= measure_from;
        if measured
            && budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
                .is_err()
        {
            break;
        }
        n += 1;
        let id = index * 1_000_000_000 + n;
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(o.path.as_str())
            .header(HOST, host.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", o.version.as_str())
            .body(Full::new(Bytes::from(echo_call(id))))
            .expect("a valid request");
        if let Some(session) = &session {
            request
                .headers_mut()
                .insert("mcp-session-id", session.clone());
        }
        let started = Instant::now();
        let outcome = match sender.send_request(request).await {
            Ok(response) => {
                let status = response.status();
                match response.into_body().collect().await {
                    Ok(body) => Ok((status, body.to_bytes())),
                    Err(e) => Err(e.to_string()),
                }
            }
            Err(e) => Err(e.to_string()),
        };
        let elapsed = started.elapsed();
        match outcome {
            Ok((status, body)) => {
                let checked = if status == StatusCode::OK {
                    check_echo_reply(&body, o.check_id.then_some(id)).map_err(|e| e.0)
                } else {
                    Err(format!(
                        "status {status}: {}",
                        String::from_utf8_lossy(&body)
                    ))
                };
                if checked.is_ok() {
                    stats.total += 1;
                }
                match checked {
                    Ok(()) if measured => {
                        stats.ok += 1;
                        stats
                            .latencies_us
                            .push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
                    }
                    Ok(()) => {}
                    Err(why) => {
                        stats.bad += 1;
                        stats.first_bad.get_or_insert(why);
                    }
                }
            }
            Err(why) => {
                stats.errors += 1;
                stats.first_bad.get_or_insert(why);
                if stats.errors > 100 {
                    break;
                }
                match connect(&o.addr).await {
                    Ok(s) => sender = s,
                    Err(_) => break,
                }
            }
        }
    }
    stats
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn main() {
    let o = match parse_args() {
        Ok(o) => Arc::new(o),
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (stats, elapsed) = runtime.block_on(async {
        let measure_from = Instant::now() + o.warmup;
        let end = measure_from + o.duration;
        let budget = Arc::new(AtomicU64::new(o.max_requests));
        let workers: Vec<_> = (0..o.connections)
            .map(|i| tokio::spawn(worker(o.clone(), i, measure_from, end, budget.clone())))
            .collect();
        let mut all = Stats::default();
        for w in workers {
            let s = w.await.expect("a worker finished");
            all.latencies_us.extend(s.latencies_us);
            all.ok += s.ok;
            all.total += s.total;
            all.bad += s.bad;
            all.errors += s.errors;
            if all.first_bad.is_none() {
                all.first_bad = s.first_bad;
            }
        }
        (all, Instant::now().saturating_duration_since(measure_from))
    });
    let mut latencies = stats.latencies_us;
    latencies.sort_unstable();
    let rps = stats.ok as f64 / elapsed.as_secs_f64().max(1e-9);
    println!(
        "{{\"connections\":{},\"ok\":{},\"total\":{},\"bad\":{},\"errors\":{},\"secs\":{:.3},\"rps\":{:.0},\"p50_us\":{},\"p99_us\":{}}}",
        o.connections,
        stats.ok,
        stats.total,
        stats.bad,
        stats.errors,
        elapsed.as_secs_f64(),
        rps,
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
    );
    if let Some(why) = stats.first_bad {
        eprintln!("loadgen: first bad reply or error: {why}");
    }
    if stats.bad > 0 || stats.errors > 0 || stats.ok == 0 {
        std::process::exit(1);
    }
}
