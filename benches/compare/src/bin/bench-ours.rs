//! Our library as a benchmark server: `--http ADDR` (the stateless Streamable HTTP route, JSON
//! replies preferred), `--http-sse ADDR` (the route's defaults: a client accepting both JSON and
//! SSE gets an SSE stream, as from `orkestrel-mcp serve --http`), `--stdio` (`serve_stdio`, as
//! shipped) or `--stdio-pipes` (`serve` over non-blocking pipes the bench opens itself from
//! `/proc/self/fd`), or `--http-sessions ADDR` (the whole endpoint as `orkestrel-mcp serve
//! --http` runs it: `Endpoint` with its default options — sessions with `mcp-session-id`, SSE
//! replies, and the WebSocket server on the same `/mcp` path).
//!
//! `--http-sessions ADDR` takes two more options:
//! - `--redis URL`: the sessions live in the Redis server at URL (`native::redis::RedisSessions`
//!   handed to `Endpoint::with_session_backend`, as `orkestrel-mcp serve --http ADDR --redis
//!   URL` does), everything else unchanged. The scale-out rows of `../run.sh` compare this with
//!   the in-memory store: the same binary, tools, endpoint and session code path, only the
//!   backend differs. (This rather than the real `orkestrel-mcp serve` binary for both rows:
//!   that one serves other tools, logs, and a different server, so its rows would not line up
//!   with `ours-sessions`, and it would need a second release build with `--features redis`.)
//! - `--max-sessions N`: the live-session cap (default 4096, as shipped) of either store; the
//!   memory probe raises it to hold 10,000 idle sessions.
//! - `--log-capacity N`: each session's replay-log bound in events (default 1024, as shipped);
//!   `0` keeps no events, to measure what the log costs a request.

use std::sync::Arc;

use orkestrel_mcp::http::session::{SessionBackend, SessionOptions};
use orkestrel_mcp::native::endpoint::{system_clock, Endpoint, EndpointOptions};
use orkestrel_mcp::native::redis::{RedisOptions, RedisSessions};
use orkestrel_mcp::native::{http, stdio};
use orkestrel_mcp_bench::ours;

const USAGE: &str = "usage: bench-ours --http ADDR | --http-sse ADDR | --http-sessions ADDR [--redis URL] [--max-sessions N] [--log-capacity N] | --stdio | --stdio-pipes";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

/// `--redis URL`, `--max-sessions N` and `--log-capacity N` after `--http-sessions ADDR`.
fn session_flags(rest: &[String]) -> (Option<String>, SessionOptions) {
    let mut redis = None;
    let mut options = SessionOptions::default();
    let mut args = rest.iter();
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else { usage() };
        match flag.as_str() {
            "--redis" => redis = Some(value.clone()),
            "--log-capacity" => match value.parse() {
                Ok(n) => options.log_capacity = n,
                _ => usage(),
            },
            "--max-sessions" => match value.parse() {
                Ok(n) if n > 0 => options.max_sessions = n,
                _ => usage(),
            },
            _ => usage(),
        }
    }
    (redis, options)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = ours(0);
    match args.first().map(String::as_str) {
        Some(flag @ ("--http" | "--http-sse")) => {
            let addr = args.get(1).map_or("127.0.0.1:0", String::as_str);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on {}", listener.local_addr()?);
            let options = http::HttpOptions {
                prefer_json: flag == "--http",
                ..http::HttpOptions::default()
            };
            http::serve(
                listener,
                http::Routes::new(server, options),
                std::future::pending(),
            )
            .await
        }
        Some("--http-sessions") => {
            let addr = args.get(1).map_or("127.0.0.1:0", String::as_str);
            let (redis, sessions) = session_flags(args.get(2..).unwrap_or_default());
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let local = listener.local_addr()?;
            let mut options = EndpointOptions::for_bind(local);
            let endpoint = match redis {
                Some(url) => {
                    let mut redis = RedisOptions::new(url.clone());
                    redis.sessions = sessions;
                    let backend = RedisSessions::connect(redis, &server, system_clock())
                        .await
                        .map_err(|e| std::io::Error::other(format!("--redis {url}: {e}")))?;
                    eprintln!("listening on {local} (sessions in Redis at {url}, and WebSocket)");
                    Endpoint::with_session_backend(
                        server,
                        options,
                        backend as Arc<dyn SessionBackend>,
                    )
                }
                None => {
                    options.sessions = Some(sessions);
                    eprintln!("listening on {local} (sessions and WebSocket)");
                    Endpoint::new(server, options)
                }
            }
            .map_err(std::io::Error::other)?;
            http::serve(listener, endpoint, std::future::pending()).await
        }
        Some("--stdio") => stdio::serve_stdio(server).await,
        Some("--stdio-pipes") => {
            use tokio::net::unix::pipe;
            let reader = pipe::OpenOptions::new().open_receiver("/proc/self/fd/0")?;
            let writer = pipe::OpenOptions::new().open_sender("/proc/self/fd/1")?;
            stdio::serve(server, reader, writer).await
        }
        _ => usage(),
    }
}
