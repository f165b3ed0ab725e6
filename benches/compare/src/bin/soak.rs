//! Soak and fault load against a running `orkestrel-mcp serve --http` (issue 16, item 10); run
//! by `benches/soak.sh`, never by the tests.
//!
//! For `--seconds` it runs, side by side, each loop bounded by the deadline and every call by a
//! timeout:
//!
//! - `http-legacy`: our client over Streamable HTTP, handshake era (initialize, calls with
//!   `Mcp-Session-Id`, `DELETE` on disconnect), a fresh session every 25 calls;
//! - `http-modern`: our client, `ClientEra::Modern` (2026-07-28, stateless, `_meta` per request);
//! - `ws`: our client over WebSocket on the same path, handshake and 2026-07-28 era in turn;
//! - `stdio`: our client spawning `orkestrel-mcp serve --stdio` children;
//! - faults: `vanish-http` (a raw TCP `POST` of a `sleep` call, dropped in flight),
//!   `vanish-ws` (a raw WebSocket dropped with a `sleep` call in flight), `kill-stdio` (SIGKILL
//!   of a stdio child with a call in flight: the call must fail within `KILL_PROMPT`),
//!   `slow-sse` (a `progress` call over SSE read 1 KiB per 10 ms through a 4 KiB receive
//!   buffer: every progress notification and the result must arrive), `slow-ws` (the same over
//!   a WebSocket, one message per 2 ms).
//!
//! It samples the server's `VmRSS` and open descriptor count every `SAMPLE` and prints: calls
//! per kind, each kind of error once with its count (an error is a well-formed call that did
//! not get its correct answer; a deliberately faulted call is not one), the RSS series, the
//! descriptors at baseline, during and after a settle (polled until back at baseline, with a
//! deadline), and the stdio children left alive. Exit status 1 when there was an error, the
//! descriptors did not return to baseline, or a child is left.
//!
//! ```text
//! soak --url http://127.0.0.1:PORT/mcp --pid SERVER_PID --bin path/to/orkestrel-mcp --seconds 600
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::SinkExt;
use orkestrel_mcp::client::{ClientEra, ClientOptions, McpClient};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use orkestrel_mcp_bench::rss_kib;
use orkestrel_mcp_bench::ws::{connect_initialized, next_text};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

/// The bound on one call (the client's own timeout is `CLIENT_TIMEOUT`).
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// The client's request timeout.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(15);
/// How soon a call must fail after its stdio child was killed.
const KILL_PROMPT: Duration = Duration::from_secs(5);
/// How often RSS and descriptors are sampled.
const SAMPLE: Duration = Duration::from_secs(10);
/// How long the descriptors and children get to return after the load.
const SETTLE: Duration = Duration::from_secs(30);
/// Calls per client connection before it disconnects and a new one connects.
const CALLS_PER_CONNECTION: u64 = 25;
/// Steps of the slow readers' `progress` call.
const SLOW_STEPS: u64 = 500;

/// The 2026-07-28 revision.
const MODERN: &str = "2026-07-28";

#[derive(Default)]
struct Tally {
    calls: Mutex<BTreeMap<&'static str, u64>>,
    errors: Mutex<BTreeMap<String, u64>>,
    faults: AtomicU64,
}

impl Tally {
    fn ok(&self, kind: &'static str) {
        *lock(&self.calls).entry(kind).or_default() += 1;
    }
    /// A well-formed call that did not get its correct answer: counted under its kind and its
    /// message with digits folded (so one kind of error prints once).
    fn error(&self, kind: &'static str, what: impl std::fmt::Display) {
        *lock(&self.calls).entry(kind).or_default() += 1;
        let text: String = what
            .to_string()
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .take(300)
            .collect();
        *lock(&self.errors)
            .entry(format!("{kind}: {text}"))
            .or_default() += 1;
    }
    fn total_errors(&self) -> u64 {
        lock(&self.errors).values().sum()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Ctx {
    url: String,
    addr: String,
    bin: String,
    deadline: Instant,
    tally: Tally,
    /// Tags the stdio children's environment (`SOAK_CHILD=<our pid>-<n>`).
    child_seq: AtomicU64,
}

impl Ctx {
    fn running(&self) -> bool {
        Instant::now() < self.deadline
    }
    fn child_tag(&self) -> String {
        format!(
            "{}-{}",
            std::process::id(),
            self.child_seq.fetch_add(1, Ordering::Relaxed)
        )
    }
}

fn options(era: ClientEra) -> ClientOptions {
    ClientOptions::new("soak", "0")
        .with_timeout(CLIENT_TIMEOUT)
        .with_era(era)
}

/// One call of the mix (chosen by `i`), checked against its correct answer.
async fn one_call(client: &McpClient, worker: usize, i: u64) -> Result<(), String> {
    let (tool, args, expected) = match i % 5 {
        0 | 1 => {
            let text = format!("soak {worker}/{i} ï");
            (
                "echo",
                json!({ "text": text }),
                Some(Value::String(text.clone())),
            )
        }
        2 => ("add", json!({"a": i, "b": 1}), Some(json!(i + 1))),
        3 => {
            let ms = i % 7;
            (
                "sleep",
                json!({ "ms": ms }),
                Some(json!(format!("slept {ms} ms"))),
            )
        }
        _ => (
            "progress",
            json!({"steps": 3, "ms": 1}),
            Some(json!("done 3 steps")),
        ),
    };
    match tokio::time::timeout(CALL_TIMEOUT, client.call(tool, args)).await {
        Err(_) => Err(format!("{tool}: no answer within {CALL_TIMEOUT:?}")),
        Ok(Err(e)) => Err(format!("{tool}: {e}")),
        Ok(Ok(value)) if value == expected => Ok(()),
        Ok(Ok(value)) => Err(format!("{tool}: wrong answer {value:?}")),
    }
}

/// Connect, make up to `CALLS_PER_CONNECTION` calls, disconnect; again until the deadline.
async fn client_loop(
    ctx: Arc<Ctx>,
    kind: &'static str,
    worker: usize,
    make: impl Fn(u64) -> Result<McpClient, String>,
) {
    let mut i = 0u64;
    let mut round = 0u64;
    while ctx.running() {
        let client = match make(round) {
            Ok(c) => c,
            Err(e) => {
                ctx.tally.error(kind, format!("build: {e}"));
                return;
            }
        };
        round += 1;
        match tokio::time::timeout(CALL_TIMEOUT, client.connect()).await {
            Ok(Ok(())) => ctx.tally.ok(kind),
            Ok(Err(e)) => {
                ctx.tally.error(kind, format!("connect: {e}"));
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            Err(_) => {
                ctx.tally.error(kind, "connect: no answer");
                continue;
            }
        }
        for _ in 0..CALLS_PER_CONNECTION {
            if !ctx.running() {
                break;
            }
            match one_call(&client, worker, i).await {
                Ok(()) => ctx.tally.ok(kind),
                Err(e) => ctx.tally.error(kind, e),
            }
            i += 1;
        }
        if tokio::time::timeout(CALL_TIMEOUT, client.disconnect())
            .await
            .is_err()
        {
            ctx.tally.error(kind, "disconnect: did not finish");
        }
    }
}

fn http_client(ctx: &Ctx, era: ClientEra) -> Result<McpClient, String> {
    let transport =
        HttpTransport::new(HttpClientOptions::new(&ctx.url)).map_err(|e| e.to_string())?;
    Ok(McpClient::new(transport, options(era)))
}

fn ws_url(ctx: &Ctx) -> String {
    ctx.url.replacen("http://", "ws://", 1)
}

fn ws_client(ctx: &Ctx, era: ClientEra) -> Result<McpClient, String> {
    let transport =
        WsTransport::new(WsClientOptions::new(ws_url(ctx))).map_err(|e| e.to_string())?;
    Ok(McpClient::new(transport, options(era)))
}

fn stdio_transport(ctx: &Ctx, tag: &str) -> StdioTransport {
    let mut o = StdioClientOptions::new(&ctx.bin)
        .with_args(["serve", "--stdio"])
        .with_env([("RUST_LOG", "warn"), ("SOAK_CHILD", tag)])
        .quiet();
    o.grace = Duration::from_millis(500);
    StdioTransport::new(o)
}

/// A raw HTTP/1.1 request of a 2026-07-28 `tools/call` (`Connection: close`).
fn modern_post(addr: &str, id: u64, tool: &str, arguments: Value, progress: bool) -> Vec<u8> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "soak-raw", "version": "0"},
    });
    if progress {
        meta["progressToken"] = json!(format!("p{id}"));
    }
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    })
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Fault: a raw `POST` of a long `sleep` call, the connection dropped while it runs.
async fn vanish_http(ctx: Arc<Ctx>) {
    let mut n = 0u64;
    while ctx.running() {
        n += 1;
        if let Ok(mut stream) = TcpStream::connect(&ctx.addr).await {
            let request = modern_post(&ctx.addr, n, "sleep", json!({"ms": 3000}), false);
            if stream.write_all(&request).await.is_ok() {
                ctx.tally.faults.fetch_add(1, Ordering::Relaxed);
                // Dropped some time into the call.
                tokio::time::sleep(Duration::from_millis(20 + (n * 37) % 300)).await;
            }
        }
        // Also the one dropped at once, before the body is read.
        if let Ok(mut stream) = TcpStream::connect(&ctx.addr).await {
            let request = modern_post(&ctx.addr, n, "sleep", json!({"ms": 3000}), false);
            let _ = stream.write_all(&request[..request.len() / 2]).await;
        }
        ctx.tally.ok("vanish-http");
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

/// Fault: a raw WebSocket, initialized, dropped with a `sleep` call in flight.
async fn vanish_ws(ctx: Arc<Ctx>) {
    let url = ws_url(&ctx);
    let mut n = 0u64;
    while ctx.running() {
        n += 1;
        match tokio::time::timeout(CALL_TIMEOUT, connect_initialized(&url)).await {
            Ok(Ok(mut socket)) => {
                let call = json!({"jsonrpc":"2.0","id":n,"method":"tools/call",
                    "params":{"name":"sleep","arguments":{"ms":3000}}});
                if socket.send(Message::text(call.to_string())).await.is_ok() {
                    ctx.tally.faults.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20 + (n * 37) % 300)).await;
                }
                ctx.tally.ok("vanish-ws");
                // Dropped without a close frame.
                drop(socket);
            }
            Ok(Err(e)) => ctx.tally.error("vanish-ws", format!("connect: {e}")),
            Err(_) => ctx.tally.error("vanish-ws", "connect: no answer"),
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

/// The pid of the live process whose environment holds `SOAK_CHILD=<tag>` (or, with `prefix`,
/// a tag starting so).
fn tagged_children(tag: &str, prefix: bool) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let needle = format!("SOAK_CHILD={tag}");
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let hit = environ.split(|b| *b == 0).any(|var| {
            let var = String::from_utf8_lossy(var);
            if prefix {
                var.starts_with(&needle)
            } else {
                var == needle
            }
        });
        if hit {
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                })
                .unwrap_or(false);
            if !zombie {
                found.push(pid);
            }
        }
    }
    found
}

/// Fault: SIGKILL of a stdio child with a `sleep` call in flight; the call must fail promptly.
async fn kill_stdio(ctx: Arc<Ctx>) {
    const KIND: &str = "kill-stdio";
    while ctx.running() {
        let tag = ctx.child_tag();
        let client = McpClient::new(stdio_transport(&ctx, &tag), options(ClientEra::Auto));
        match tokio::time::timeout(CALL_TIMEOUT, client.connect()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                ctx.tally.error(KIND, format!("connect: {e}"));
                continue;
            }
            Err(_) => {
                ctx.tally.error(KIND, "connect: no answer");
                continue;
            }
        }
        let Some(pid) = tagged_children(&tag, false).first().copied() else {
            ctx.tally.error(KIND, "the connected child is not found");
            client.disconnect().await;
            continue;
        };
        let call = {
            let client = client.clone();
            tokio::spawn(async move { client.call("sleep", json!({"ms": 10_000})).await })
        };
        // The call is written before the kill some of the time, racing it otherwise: both are
        // faults the client must answer promptly.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !killed {
            ctx.tally.error(KIND, "kill failed");
        }
        ctx.tally.faults.fetch_add(1, Ordering::Relaxed);
        let killed_at = Instant::now();
        match tokio::time::timeout(KILL_PROMPT, call).await {
            Ok(Ok(Err(_))) => ctx.tally.ok(KIND),
            Ok(Ok(Ok(v))) => ctx
                .tally
                .error(KIND, format!("the call answered {v:?} after the kill")),
            Ok(Err(e)) => ctx.tally.error(KIND, format!("the call task failed: {e}")),
            Err(_) => ctx.tally.error(
                KIND,
                format!("the call did not fail within {KILL_PROMPT:?} of the kill"),
            ),
        }
        let _ = killed_at;
        if tokio::time::timeout(CALL_TIMEOUT, client.disconnect())
            .await
            .is_err()
        {
            ctx.tally
                .error(KIND, "disconnect after the kill did not finish");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Decode a `Transfer-Encoding: chunked` body (enough for our server's answers).
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk size without CRLF")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size + 2 {
            return Err("a truncated chunk".into());
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

/// A socket with a small receive buffer (so a slow reader is felt by the sender).
async fn small_buffer_stream(addr: &str) -> std::io::Result<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_recv_buffer_size(4096)?;
    socket
        .connect(addr.parse().map_err(std::io::Error::other)?)
        .await
}

/// Check the slow readers' messages: `SLOW_STEPS` progress notifications and the result.
fn check_progress_messages(messages: &[Value], id: u64) -> Result<(), String> {
    let progress = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count() as u64;
    let result = messages.iter().find(|m| m["id"] == json!(id));
    let text = result.and_then(|r| r.pointer("/result/content/0/text"));
    let want = format!("done {SLOW_STEPS} steps");
    if progress != SLOW_STEPS {
        return Err(format!(
            "{progress} progress notifications, not {SLOW_STEPS}"
        ));
    }
    if text != Some(&json!(want)) {
        return Err(format!("result {result:?}"));
    }
    Ok(())
}

async fn slow_sse_once(ctx: &Ctx, id: u64) -> Result<(), String> {
    let mut stream = small_buffer_stream(&ctx.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let request = modern_post(
        &ctx.addr,
        id,
        "progress",
        json!({"steps": SLOW_STEPS, "ms": 0}),
        true,
    );
    stream
        .write_all(&request)
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
        if raw.len() > 16 << 20 {
            return Err("more than 16 MiB".into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no response head")?;
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    if !head.starts_with("http/1.1 200") {
        return Err(format!("status: {}", head.lines().next().unwrap_or("")));
    }
    let body = &raw[head_end + 4..];
    let body = if head.contains("transfer-encoding: chunked") {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    let text = String::from_utf8(body).map_err(|_| "a body that is not UTF-8")?;
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    check_progress_messages(&messages, id)
}

async fn slow_ws_once(ctx: &Ctx, id: u64) -> Result<(), String> {
    let stream = small_buffer_stream(&ctx.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut request = ws_url(ctx)
        .into_client_request()
        .map_err(|e| e.to_string())?;
    request
        .headers_mut()
        .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
    let (mut socket, _) =
        tokio_tungstenite::client_async(request, tokio_tungstenite::MaybeTlsStream::Plain(stream))
            .await
            .map_err(|e| format!("upgrade: {e}"))?;
    socket
        .send(Message::text(orkestrel_mcp_bench::INITIALIZE))
        .await
        .map_err(|e| e.to_string())?;
    let init = next_text(&mut socket).await?;
    orkestrel_mcp_bench::check_initialize_reply(init.as_bytes()).map_err(|e| e.0)?;
    socket
        .send(Message::text(orkestrel_mcp_bench::INITIALIZED))
        .await
        .map_err(|e| e.to_string())?;
    let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "name":"progress","arguments":{"steps":SLOW_STEPS,"ms":0},"_meta":{"progressToken":id}}});
    socket
        .send(Message::text(call.to_string()))
        .await
        .map_err(|e| e.to_string())?;
    let mut messages = Vec::new();
    loop {
        let text = next_text(&mut socket).await?;
        let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let done = value["id"] == json!(id);
        messages.push(value);
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let _ = socket.close(None).await;
    check_progress_messages(&messages, id)
}

/// Slow readers over SSE and WebSocket, in turn.
async fn slow_readers(ctx: Arc<Ctx>) {
    let mut id = 1000u64;
    while ctx.running() {
        id += 1;
        let (kind, outcome) = if id.is_multiple_of(2) {
            (
                "slow-sse",
                tokio::time::timeout(Duration::from_secs(60), slow_sse_once(&ctx, id)).await,
            )
        } else {
            (
                "slow-ws",
                tokio::time::timeout(Duration::from_secs(60), slow_ws_once(&ctx, id)).await,
            )
        };
        match outcome {
            Ok(Ok(())) => ctx.tally.ok(kind),
            Ok(Err(e)) => ctx.tally.error(kind, e),
            Err(_) => ctx.tally.error(kind, "not finished within 60 s"),
        }
    }
}

fn fd_count(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count())
}

/// Poll `probe` every 100 ms until `done` says so or `limit` passes; the last value.
async fn poll_until<T>(limit: Duration, probe: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let until = Instant::now() + limit;
    loop {
        let value = probe();
        if done(&value) || Instant::now() >= until {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

struct Args {
    url: String,
    pid: u32,
    bin: String,
    seconds: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let (mut url, mut pid, mut bin, mut seconds) = (None, None, None, 600u64);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--url" => url = Some(value()?),
            "--pid" => pid = Some(value()?.parse().map_err(|_| "bad --pid")?),
            "--bin" => bin = Some(value()?),
            "--seconds" => seconds = value()?.parse().map_err(|_| "bad --seconds")?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        url: url.ok_or("--url is required")?,
        pid: pid.ok_or("--pid is required")?,
        bin: bin.ok_or("--bin is required")?,
        seconds,
    })
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let Some(addr) = args
        .url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .filter(|a| a.starts_with("127.0.0.1:"))
        .map(str::to_owned)
    else {
        eprintln!("soak: --url must be http://127.0.0.1:PORT/mcp");
        return std::process::ExitCode::from(2);
    };
    let pid = args.pid;
    let (Some(fd_baseline), Some(rss_first)) = (fd_count(pid), rss_kib(pid)) else {
        eprintln!("soak: cannot read /proc/{pid}");
        return std::process::ExitCode::from(2);
    };
    let started = Instant::now();
    let ctx = Arc::new(Ctx {
        url: args.url.clone(),
        addr,
        bin: args.bin.clone(),
        deadline: started + Duration::from_secs(args.seconds),
        tally: Tally::default(),
        child_seq: AtomicU64::new(0),
    });
    println!(
        "soak: {} s against {} (pid {pid}); baseline {fd_baseline} fds, {rss_first} KiB",
        args.seconds, args.url
    );

    let mut tasks = Vec::new();
    for w in 0..2 {
        let c = ctx.clone();
        tasks.push(tokio::spawn(async move {
            let mk = c.clone();
            client_loop(c, "http-legacy", w, move |_| {
                http_client(&mk, ClientEra::Legacy)
            })
            .await;
        }));
        let c = ctx.clone();
        tasks.push(tokio::spawn(async move {
            let mk = c.clone();
            client_loop(c, "http-modern", w, move |_| {
                http_client(&mk, ClientEra::Modern)
            })
            .await;
        }));
        let c = ctx.clone();
        tasks.push(tokio::spawn(async move {
            let mk = c.clone();
            client_loop(c, "ws", w, move |round| {
                ws_client(
                    &mk,
                    if round.is_multiple_of(2) {
                        ClientEra::Legacy
                    } else {
                        ClientEra::Auto
                    },
                )
            })
            .await;
        }));
    }
    {
        let c = ctx.clone();
        tasks.push(tokio::spawn(async move {
            let mk = c.clone();
            client_loop(c, "stdio", 9, move |round| {
                let tag = mk.child_tag();
                let era = if round.is_multiple_of(2) {
                    ClientEra::Auto
                } else {
                    ClientEra::Legacy
                };
                Ok(McpClient::new(stdio_transport(&mk, &tag), options(era)))
            })
            .await;
        }));
    }
    tasks.push(tokio::spawn(vanish_http(ctx.clone())));
    tasks.push(tokio::spawn(vanish_ws(ctx.clone())));
    tasks.push(tokio::spawn(kill_stdio(ctx.clone())));
    tasks.push(tokio::spawn(slow_readers(ctx.clone())));

    // Samples until the deadline.
    let mut series: Vec<(u64, u64, usize)> = vec![(0, rss_first, fd_baseline)];
    while ctx.running() {
        let left = ctx.deadline.saturating_duration_since(Instant::now());
        tokio::time::sleep(left.min(SAMPLE)).await;
        if let (Some(rss), Some(fds)) = (rss_kib(pid), fd_count(pid)) {
            series.push((started.elapsed().as_secs(), rss, fds));
        } else {
            eprintln!("soak: the server (pid {pid}) is gone");
            break;
        }
    }
    let mut joined_late = 0;
    for task in tasks {
        // Every loop ends at the deadline; its last call is bounded by its timeout.
        if tokio::time::timeout(Duration::from_secs(90), task)
            .await
            .is_err()
        {
            joined_late += 1;
        }
    }
    let load_end = started.elapsed().as_secs();
    let fd_after = poll_until(
        SETTLE,
        || fd_count(pid).unwrap_or(usize::MAX),
        |n| *n <= fd_baseline,
    )
    .await;
    let children = poll_until(
        SETTLE,
        || tagged_children(&format!("{}-", std::process::id()), true).len(),
        |n| *n == 0,
    )
    .await;
    let rss_last = rss_kib(pid).unwrap_or(0);
    series.push((started.elapsed().as_secs(), rss_last, fd_after));

    println!("\ncalls per kind (each connect counts as one):");
    let calls = lock(&ctx.tally.calls).clone();
    for (kind, n) in &calls {
        println!("  {kind:12} {n}");
    }
    println!("  total        {}", calls.values().sum::<u64>());
    println!(
        "deliberate faults injected: {}",
        ctx.tally.faults.load(Ordering::Relaxed)
    );
    let errors = ctx.tally.total_errors() + joined_late;
    println!("errors: {errors}");
    for (what, n) in lock(&ctx.tally.errors).iter() {
        println!("  {n:6} × {what}");
    }
    if joined_late > 0 {
        println!("  {joined_late:6} × a load task did not end within 90 s of the deadline");
    }
    println!("server RSS (KiB) and open fds over time (s, KiB, fds):");
    for (t, rss, fds) in &series {
        println!("  {t:5} {rss:8} {fds:5}");
    }
    let peak = series.iter().map(|s| s.1).max().unwrap_or(0);
    println!(
        "RSS first → last: {rss_first} → {rss_last} KiB (peak sampled {peak} KiB, VmHWM {} KiB)",
        orkestrel_mcp_bench::peak_rss_kib(pid).unwrap_or(0)
    );
    let fd_peak = series.iter().map(|s| s.2).max().unwrap_or(0);
    println!(
        "fds: baseline {fd_baseline}, peak sampled {fd_peak}, after the load (ended at {load_end} s) {fd_after}"
    );
    println!("stdio children left alive: {children}");
    let fds_ok = fd_after <= fd_baseline;
    if !fds_ok {
        println!("FAIL: the server's descriptors did not return to baseline within {SETTLE:?}");
    }
    if errors > 0 {
        println!("FAIL: {errors} errors");
    }
    if children > 0 {
        println!("FAIL: {children} stdio children left alive");
    }
    if errors == 0 && fds_ok && children == 0 {
        println!("PASS");
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
