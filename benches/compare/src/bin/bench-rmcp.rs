//! rmcp as a benchmark server: `--http ADDR` (its Streamable HTTP service, stateless, JSON
//! responses, served by plain hyper), `--http-sessions ADDR` (the same service in its default
//! session mode: `initialize` mints an `mcp-session-id`, replies come as SSE), `--stdio` (`transport::stdio()`) or `--stdio-pipes`
//! (`transport::stdio_pipes()`).

use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use orkestrel_mcp_bench::rmcp_server::RmcpBench;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{stdio, stdio_pipes, StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(flag @ ("--http" | "--http-sessions")) => {
            let addr = args.get(1).map_or("127.0.0.1:0", String::as_str);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on {}", listener.local_addr()?);
            let config = if flag == "--http" {
                StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(false)
                    .with_json_response(true)
                    .with_sse_keep_alive(None)
            } else {
                // rmcp's defaults: session mode (legacy_session_mode: true), SSE replies.
                StreamableHttpServerConfig::default()
            };
            let service: StreamableHttpService<RmcpBench, LocalSessionManager> =
                StreamableHttpService::new(
                    || Ok(RmcpBench::new(0)),
                    Arc::new(LocalSessionManager::default()),
                    config,
                );
            loop {
                let (stream, _) = listener.accept().await?;
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(service.clone());
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
        Some("--stdio") => {
            RmcpBench::new(0).serve(stdio()).await?.waiting().await?;
            Ok(())
        }
        Some("--stdio-pipes") => {
            RmcpBench::new(0)
                .serve(stdio_pipes())
                .await?
                .waiting()
                .await?;
            Ok(())
        }
        _ => {
            eprintln!(
                "usage: bench-rmcp --http ADDR | --http-sessions ADDR | --stdio | --stdio-pipes"
            );
            std::process::exit(2)
        }
    }
}
