//! `orkestrel-mcp`: serve MCP over stdio or Streamable HTTP, call remote MCP servers, and bridge
//! a stdio server onto Streamable HTTP.

// The binary is native-only; on wasm32 (e.g. `cargo check --all-features --target wasm32-…`)
// it compiles to an empty `main`.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod builtin;
#[cfg(not(target_arch = "wasm32"))]
mod client;

#[cfg(not(target_arch = "wasm32"))]
use std::net::SocketAddr;
#[cfg(not(target_arch = "wasm32"))]
use std::process::ExitCode;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Arc;

#[cfg(not(target_arch = "wasm32"))]
use clap::{Args, Parser, Subcommand};
#[cfg(not(target_arch = "wasm32"))]
use orkestrel_mcp::native::{http, stdio};
#[cfg(not(target_arch = "wasm32"))]
use orkestrel_mcp::{McpServer, ServerOptions, ToolRegistry};
#[cfg(not(target_arch = "wasm32"))]
use tracing_subscriber::EnvFilter;

#[cfg(not(target_arch = "wasm32"))]
/// Serve and call Model Context Protocol (MCP) servers.
#[derive(Parser)]
#[command(name = "orkestrel-mcp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[cfg(not(target_arch = "wasm32"))]
#[derive(Subcommand)]
enum Command {
    /// Serve the built-in example tools (echo, add, fail, sleep) over stdio or HTTP.
    Serve(ServeArgs),
    /// List a server's tools as a JSON array on stdout.
    ///
    /// TARGET is an http(s):// or ws(s):// URL, or `-- COMMAND [ARGS…]` to spawn a stdio server.
    Tools(client::ToolsArgs),
    /// Call one tool and print its value as JSON on stdout (`--raw`: the whole result).
    ///
    /// `call URL TOOL [--args JSON]` or `call TOOL [--args JSON] -- COMMAND [ARGS…]`.
    Call(client::CallArgs),
    /// Serve a stdio MCP server's tools over Streamable HTTP:
    /// `bridge --http ADDR -- COMMAND [ARGS…]`.
    Bridge(client::BridgeArgs),
}

#[cfg(not(target_arch = "wasm32"))]
#[derive(Args)]
#[group(required = false, multiple = false)]
struct ServeArgs {
    /// Serve newline-delimited JSON-RPC on stdin/stdout (the default).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP at ADDR (path /mcp).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:3000")]
    http: Option<SocketAddr>,
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| {
            // The client commands keep stderr for errors; the servers log their progress.
            EnvFilter::new(if quiet_by_default() { "warn" } else { "info" })
        }))
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("orkestrel-mcp: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Tools(args) => client::tools(args).await,
            Command::Call(args) => client::call(args).await,
            Command::Bridge(args) => client::bridge(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("orkestrel-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// Whether the subcommand is a client one (`tools`, `call`), whose default log level is `warn`.
fn quiet_by_default() -> bool {
    std::env::args()
        .nth(1)
        .is_some_and(|a| a == "tools" || a == "call")
}

#[cfg(not(target_arch = "wasm32"))]
fn example_server() -> McpServer {
    let tools = Arc::new(ToolRegistry::new());
    builtin::register(&tools);
    McpServer::new(ServerOptions::new("orkestrel-mcp", env!("CARGO_PKG_VERSION")).with_tools(tools))
}

#[cfg(not(target_arch = "wasm32"))]
async fn serve(args: ServeArgs) -> Result<(), String> {
    let server = example_server();
    match args.http {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            tracing::info!(
                "serving MCP over Streamable HTTP at http://{local}{}",
                http::DEFAULT_MCP_PATH
            );
            let routes = http::Routes::new(server, http::HttpOptions::default());
            http::serve(listener, routes, shutdown_signal())
                .await
                .map_err(|e| e.to_string())?;
            tracing::info!("shut down");
            Ok(())
        }
        None => {
            tracing::info!("serving MCP over stdio");
            tokio::select! {
                result = stdio::serve_stdio(server) => result.map_err(|e| format!("stdio: {e}")),
                () = shutdown_signal() => Ok(()),
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutdown requested");
}
