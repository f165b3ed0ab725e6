//! Our library as a benchmark server: `--http ADDR` (the stateless Streamable HTTP route, JSON
//! replies preferred), `--http-sse ADDR` (the route's defaults: a client accepting both JSON and
//! SSE gets an SSE stream, as from `orkestrel-mcp serve --http`), `--stdio` (`serve_stdio`, as
//! shipped) or `--stdio-pipes` (`serve` over non-blocking pipes the bench opens itself from
//! `/proc/self/fd`), or `--http-sessions ADDR` (the whole endpoint as `orkestrel-mcp serve
//! --http` runs it: `Endpoint` with its default options — sessions with `mcp-session-id`, SSE
//! replies, and the WebSocket server on the same `/mcp` path).

use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
use orkestrel_mcp::native::{http, stdio};
use orkestrel_mcp_bench::ours;

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
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let local = listener.local_addr()?;
            eprintln!("listening on {local} (sessions and WebSocket)");
            let endpoint = Endpoint::new(server, EndpointOptions::for_bind(local))
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
        _ => {
            eprintln!("usage: bench-ours --http ADDR | --http-sse ADDR | --http-sessions ADDR | --stdio | --stdio-pipes");
            std::process::exit(2)
        }
    }
}
