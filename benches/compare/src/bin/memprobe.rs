//! Resident memory per idle session or idle WebSocket connection of a running server (`--pid`):
//!
//! - `sessions`: one session opened and used as a warm-up, then `VmRSS` read; `--count` sessions
//!   opened one after another on one keep-alive connection as a client does (`initialize`
//!   without `mcp-session-id`, `notifications/initialized` with the minted id; every reply
//!   checked), the connection closed, a pause, `VmRSS` read again; then every session is used
//!   once (`tools/call` echo with its id, the reply checked) to prove they were all alive.
//! - `ws`: one socket opened, initialized, used and closed as a warm-up, then `VmRSS`;
//!   `--count` sockets opened and initialized (`initialize` checked, `notifications/initialized`)
//!   and held open, a pause, `VmRSS` again; then one echo call on every socket (checked), and
//!   all closed.
//!
//! - `steps`: like `sessions`, but in steps: after the warm-up, and again after opening sessions
//!   up to each count of `--steps` (e.g. `1000,10000`, in all), `VmRSS` is read and, with
//!   `--redis ADDR` (the Redis server the instance keeps its sessions in), Redis's
//!   `used_memory` (`INFO memory`) and the live-session count (`ZCARD` of the live set). The
//!   sessions are opened on a few keep-alive connections at once, which then close (nothing is
//!   held open: an idle session is its record, not a connection); at the end every session is
//!   used once and its reply checked.
//!
//! `sessions` and `ws` print one JSON line:
//! `{"mode":..,"count":..,"before_kib":..,"after_kib":..,"bytes_per":..}` where `bytes_per` =
//! (after − before) × 1024 / count. `steps` prints
//! `{"mode":"steps","steps":[{"sessions":0,"rss_kib":..,"used_memory":..,"live":..},..]}`
//! (the last two `null` without `--redis`).
//!
//! ```text
//! memprobe sessions --pid PID --url http://127.0.0.1:PORT/mcp --count 1000
//! memprobe ws --pid PID --url ws://127.0.0.1:PORT/mcp --count 1000
//! memprobe steps --pid PID --url http://127.0.0.1:PORT/mcp --steps 1000,10000 \
//!          [--redis 127.0.0.1:REDIS_PORT]
//! ```

use std::time::Duration;

use futures::SinkExt;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use orkestrel_mcp_bench::ws::{connect_initialized, next_text};
use orkestrel_mcp_bench::{check_echo_reply, echo_call, open_session, post_json, rss_kib};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_tungstenite::tungstenite::Message;

/// How long to let the server settle before reading `VmRSS`.
const SETTLE: Duration = Duration::from_millis(300);

type Sender = SendRequest<http_body_util::Full<bytes::Bytes>>;

async fn http_connect(addr: &str) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

async fn http_echo(
    sender: &mut Sender,
    addr: &str,
    path: &str,
    session: &str,
    id: u64,
) -> Result<(), String> {
    let (status, _, body) = post_json(sender, addr, path, echo_call(id), Some(session)).await?;
    if status != hyper::StatusCode::OK {
        return Err(format!(
            "tools/call: status {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    check_echo_reply(&body, Some(id)).map_err(|e| e.0)
}

fn read_rss(pid: u32) -> Result<u64, String> {
    rss_kib(pid).ok_or(format!("cannot read /proc/{pid}/status"))
}

async fn sessions(pid: u32, url: &str, count: u64) -> Result<(u64, u64), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("sessions need an http:// URL")?;
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !addr.starts_with("127.0.0.1:") {
        return Err("only 127.0.0.1".into());
    }
    let path = format!("/{path}");
    {
        let mut sender = http_connect(addr).await?;
        let id = open_session(&mut sender, addr, &path).await?;
        http_echo(&mut sender, addr, &path, &id, 1).await?;
    }
    tokio::time::sleep(SETTLE).await;
    let before = read_rss(pid)?;
    let mut ids = Vec::with_capacity(count as usize);
    {
        let mut sender = http_connect(addr).await?;
        for _ in 0..count {
            ids.push(open_session(&mut sender, addr, &path).await?);
        }
    }
    tokio::time::sleep(SETTLE).await;
    let after = read_rss(pid)?;
    let mut sender = http_connect(addr).await?;
    for (n, id) in ids.iter().enumerate() {
        http_echo(&mut sender, addr, &path, id, n as u64 + 2).await?;
    }
    Ok((before, after))
}

/// The most sessions `steps` opens in all.
const MAX_STEP_SESSIONS: u64 = 20_000;
/// How many connections `steps` opens sessions on at once.
const OPENERS: u64 = 8;
/// The live-session set of the Redis store (its default prefix).
const LIVE_SET: &str = "orkestrel-mcp:sessions";

/// One Redis command over a fresh connection (RESP2): its reply, an integer or a bulk string,
/// as text.
async fn redis_command(addr: &str, args: &[&str]) -> Result<String, String> {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("redis {addr}: {e}"))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    reader
        .read_line(&mut head)
        .await
        .map_err(|e| e.to_string())?;
    let head = head.trim_end();
    match head.split_at_checked(1) {
        Some((":", n)) => Ok(n.to_owned()),
        Some(("$", n)) => {
            let len: usize = n
                .parse()
                .map_err(|_| format!("redis: bad reply {head:?}"))?;
            if len > 1 << 20 {
                return Err(format!("redis: reply of {len} bytes"));
            }
            let mut body = vec![0; len + 2];
            reader
                .read_exact(&mut body)
                .await
                .map_err(|e| e.to_string())?;
            body.truncate(len);
            String::from_utf8(body).map_err(|e| e.to_string())
        }
        _ => Err(format!("redis: unexpected reply {head:?}")),
    }
}

/// Redis's `used_memory` (bytes) and the number of live sessions in the store's set.
async fn redis_state(addr: &str) -> Result<(u64, u64), String> {
    let info = redis_command(addr, &["INFO", "memory"]).await?;
    let used = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or("redis: no used_memory in INFO memory")?;
    let live = redis_command(addr, &["ZCARD", LIVE_SET])
        .await?
        .parse()
        .map_err(|_| "redis: ZCARD is not a number".to_string())?;
    Ok((used, live))
}

/// Open `count` sessions on [`OPENERS`] connections at once (closed when done); their ids.
async fn open_sessions(addr: &str, path: &str, count: u64) -> Result<Vec<String>, String> {
    let mut openers = Vec::new();
    for k in 0..OPENERS {
        let share = count / OPENERS + u64::from(k < count % OPENERS);
        let (addr, path) = (addr.to_owned(), path.to_owned());
        openers.push(tokio::spawn(async move {
            let mut sender = http_connect(&addr).await?;
            let mut ids = Vec::with_capacity(share as usize);
            for _ in 0..share {
                ids.push(open_session(&mut sender, &addr, &path).await?);
            }
            Ok::<_, String>(ids)
        }));
    }
    let mut ids = Vec::with_capacity(count as usize);
    for opener in openers {
        ids.extend(opener.await.map_err(|e| e.to_string())??);
    }
    Ok(ids)
}

/// One measurement of `steps`.
struct Step {
    sessions: u64,
    rss_kib: u64,
    redis: Option<(u64, u64)>,
}

async fn steps(
    pid: u32,
    url: &str,
    counts: &[u64],
    redis: Option<&str>,
) -> Result<Vec<Step>, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("steps need an http:// URL")?;
    let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !addr.starts_with("127.0.0.1:") || redis.is_some_and(|r| !r.starts_with("127.0.0.1:")) {
        return Err("only 127.0.0.1".into());
    }
    let path = format!("/{path}");
    {
        let mut sender = http_connect(addr).await?;
        let id = open_session(&mut sender, addr, &path).await?;
        http_echo(&mut sender, addr, &path, &id, 1).await?;
    }
    let mut ids: Vec<String> = Vec::new();
    let mut measured = Vec::with_capacity(counts.len() + 1);
    for &target in [0].iter().chain(counts) {
        let more = target.saturating_sub(ids.len() as u64);
        ids.extend(open_sessions(addr, &path, more).await?);
        tokio::time::sleep(SETTLE).await;
        let redis = match redis {
            Some(r) => Some(redis_state(r).await?),
            None => None,
        };
        measured.push(Step {
            sessions: ids.len() as u64,
            rss_kib: read_rss(pid)?,
            redis,
        });
    }
    let mut sender = http_connect(addr).await?;
    for (n, id) in ids.iter().enumerate() {
        http_echo(&mut sender, addr, &path, id, n as u64 + 2).await?;
    }
    Ok(measured)
}

async fn ws_echo(socket: &mut orkestrel_mcp_bench::ws::Socket, id: u64) -> Result<(), String> {
    socket
        .send(Message::text(echo_call(id)))
        .await
        .map_err(|e| e.to_string())?;
    let reply = tokio::time::timeout(Duration::from_secs(10), next_text(socket))
        .await
        .map_err(|_| "no reply within 10 s".to_string())??;
    check_echo_reply(reply.as_bytes(), Some(id)).map_err(|e| e.0)
}

async fn websockets(pid: u32, url: &str, count: u64) -> Result<(u64, u64), String> {
    {
        let mut socket = connect_initialized(url).await?;
        ws_echo(&mut socket, 1).await?;
        let _ = socket.close(None).await;
    }
    tokio::time::sleep(SETTLE).await;
    let before = read_rss(pid)?;
    let mut sockets = Vec::with_capacity(count as usize);
    for _ in 0..count {
        sockets.push(connect_initialized(url).await?);
    }
    tokio::time::sleep(SETTLE).await;
    let after = read_rss(pid)?;
    for (n, socket) in sockets.iter_mut().enumerate() {
        ws_echo(socket, n as u64 + 2).await?;
    }
    for mut socket in sockets {
        let _ = socket.close(None).await;
    }
    Ok((before, after))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let (mut pid, mut url, mut count) = (0u32, String::new(), 1000u64);
    let (mut counts, mut redis) = (Vec::new(), None);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--pid" => pid = value.parse().unwrap_or(0),
            "--url" => url = value,
            "--count" => count = value.parse().unwrap_or(0),
            "--steps" => counts = value.split(',').map(|n| n.parse().unwrap_or(0)).collect(),
            "--redis" => redis = Some(value),
            other => {
                eprintln!("memprobe: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let bad_steps = mode == "steps"
        && (counts.is_empty()
            || counts.windows(2).any(|w| w[0] >= w[1])
            || counts.iter().any(|&n| n == 0 || n > MAX_STEP_SESSIONS));
    if pid == 0 || url.is_empty() || count == 0 || count > 10_000 || bad_steps {
        eprintln!("usage: memprobe sessions|ws --pid PID --url URL [--count 1..10000]");
        eprintln!("       memprobe steps --pid PID --url URL --steps N1,N2,.. (increasing, at most {MAX_STEP_SESSIONS}) [--redis ADDR]");
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    if mode == "steps" {
        match runtime.block_on(steps(pid, &url, &counts, redis.as_deref())) {
            Ok(measured) => {
                let cells: Vec<String> = (measured.iter())
                    .map(|s| {
                        let (used, live) = match s.redis {
                            Some((used, live)) => (used.to_string(), live.to_string()),
                            None => ("null".to_owned(), "null".to_owned()),
                        };
                        format!(
                            "{{\"sessions\":{},\"rss_kib\":{},\"used_memory\":{used},\"live\":{live}}}",
                            s.sessions, s.rss_kib
                        )
                    })
                    .collect();
                println!("{{\"mode\":\"steps\",\"steps\":[{}]}}", cells.join(","));
                return;
            }
            Err(e) => {
                eprintln!("memprobe steps: {e}");
                std::process::exit(1);
            }
        }
    }
    let result = runtime.block_on(async {
        match mode.as_str() {
            "sessions" => sessions(pid, &url, count).await,
            "ws" => websockets(pid, &url, count).await,
            _ => Err(format!("unknown mode {mode:?}")),
        }
    });
    match result {
        Ok((before, after)) => println!(
            "{{\"mode\":\"{mode}\",\"count\":{count},\"before_kib\":{before},\"after_kib\":{after},\"bytes_per\":{:.0}}}",
            after.saturating_sub(before) as f64 * 1024.0 / count as f64
        ),
        Err(e) => {
            eprintln!("memprobe {mode}: {e}");
            std::process::exit(1);
        }
    }
}
