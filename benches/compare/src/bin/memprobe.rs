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
//! Prints one JSON line: `{"mode":..,"count":..,"before_kib":..,"after_kib":..,"bytes_per":..}`
//! where `bytes_per` = (after − before) × 1024 / count.
//!
//! ```text
//! memprobe sessions --pid PID --url http://127.0.0.1:PORT/mcp --count 1000
//! memprobe ws --pid PID --url ws://127.0.0.1:PORT/mcp --count 1000
//! ```

use std::time::Duration;

use futures::SinkExt;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use orkestrel_mcp_bench::ws::{connect_initialized, next_text};
use orkestrel_mcp_bench::{check_echo_reply, echo_call, open_session, post_json, rss_kib};
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
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--pid" => pid = value.parse().unwrap_or(0),
            "--url" => url = value,
            "--count" => count = value.parse().unwrap_or(0),
            other => {
                eprintln!("memprobe: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    if pid == 0 || url.is_empty() || count == 0 || count > 10_000 {
        eprintln!("usage: memprobe sessions|ws --pid PID --url URL [--count 1..10000]");
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
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
