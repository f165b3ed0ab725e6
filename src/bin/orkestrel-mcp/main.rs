//! `orkestrel-mcp`: serve MCP over stdio or Streamable HTTP, call remote MCP servers, and bridge
//! a stdio server onto Streamable HTTP. (Loaded as a module by `entry.rs`, the binary's root,
//! which compiles to an empty `main` on wasm32.)

mod addr;
mod bridge;
mod bridge_config;
mod bridge_fleet;
mod builtin;
mod client;
mod error;
mod otel;
mod serve_auth;
mod sign_in;
mod skills;

use std::process::ExitCode;
use std::sync::Arc;

use addr::BindAddr;
use clap::{Args, CommandFactory, Parser, Subcommand};
use error::CliError;
use orkestrel_mcp::native::endpoint::{cors_layer, Endpoint, EndpointOptions};
use orkestrel_mcp::native::shutdown::serve_gracefully_with;
use orkestrel_mcp::native::{http, stdio};
use orkestrel_mcp::{McpServer, ServerOptions, ToolRegistry};

/// Serve and call Model Context Protocol (MCP) servers.
///
/// Exit codes: 0 success, 1 a failure while running (unreachable server, failed tool, stdio
/// server gone), 2 a mistake in the command line.
#[derive(Parser)]
#[command(name = "orkestrel-mcp", version, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the built-in example tools (echo, add, fail, sleep, progress) over stdio or HTTP.
    Serve(ServeArgs),
    /// List a server's tools as a JSON array on stdout.
    ///
    /// TARGET is an http(s):// or ws(s):// URL, or `-- COMMAND [ARGS…]` to spawn a stdio server.
    Tools(client::ToolsArgs),
    /// Call one tool and print its value as JSON on stdout (`--raw`: the whole result); its
    /// progress notifications go to stderr.
    ///
    /// `call URL TOOL [--args JSON]` or `call TOOL [--args JSON] -- COMMAND [ARGS…]`.
    Call(client::CallArgs),
    /// Re-serve MCP servers elsewhere: a stdio child, a URL or several (`--config FILE`) over
    /// Streamable HTTP and WebSocket (`--http ADDR`, path /mcp) or over stdio (`--stdio`).
    ///
    /// `bridge [--http ADDR | --stdio] (URL | --config FILE | -- COMMAND [ARGS…])`.
    Bridge(bridge::BridgeArgs),
    /// List a server's skills (Skills extension) as a JSON array on stdout, fetching no file;
    /// `--load URI` prints one skill's SKILL.md (`--file PATH`: one of its files) once verified.
    ///
    /// `skills URL [--load URI [--file PATH]]` or `skills [--load …] -- COMMAND [ARGS…]`.
    Skills(skills::SkillsArgs),
    /// Sign in to a protected server now (OAuth: a browser on a loopback redirect) and keep
    /// the tokens for the client commands.
    Login(sign_in::LoginArgs),
    /// Forget the tokens kept for a server.
    Logout(sign_in::LogoutArgs),
    /// Print this message or the help of the given subcommand (`help serve` is `serve --help`).
    Help(HelpArgs),
}

#[derive(Args)]
struct HelpArgs {
    /// The subcommand whose help to print [default: this overview].
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
}

impl Command {
    /// The subcommand's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Serve(_) => "serve",
            Command::Tools(_) => "tools",
            Command::Call(_) => "call",
            Command::Bridge(_) => "bridge",
            Command::Skills(_) => "skills",
            Command::Login(_) => "login",
            Command::Logout(_) => "logout",
            Command::Help(_) => "help",
        }
    }
}

#[derive(Args)]
struct ServeArgs {
    /// Serve newline-delimited JSON-RPC on stdin/stdout [default when --http is not given].
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve at ADDR (HOST:PORT: an IP address or a name such as localhost), path /mcp:
    /// Streamable HTTP with sessions and resumable GET streams, and WebSocket on the same port
    /// [default ADDR: 127.0.0.1:3000].
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:3000")]
    http: Option<BindAddr>,
    /// HTTP: no sessions (every POST stands alone; GET and DELETE answer 405).
    #[arg(long, requires = "http", conflicts_with = "stdio")]
    stateless: bool,
    /// HTTP: share sessions through this Redis server (redis://HOST:PORT[/DB]) with every
    /// instance started with the same URL, so any of them, behind one URL, serves any request
    /// of any session (DELETE on one ends it on all). While Redis is unreachable new work gets
    /// 503 with Retry-After; service resumes when it is back.
    #[cfg(feature = "redis")]
    #[arg(
        long,
        value_name = "URL",
        requires = "http",
        conflicts_with_all = ["stateless", "stdio"]
    )]
    redis: Option<String>,
    /// Taken only to say that this build has no Redis support.
    #[cfg(not(feature = "redis"))]
    #[arg(long, value_name = "URL", hide = true)]
    redis: Option<String>,
    /// HTTP: no WebSocket upgrades.
    #[arg(long, requires = "http", conflicts_with = "stdio")]
    no_websocket: bool,
    /// HTTP: answer CORS for this browser origin (exact, e.g. https://app.example.com; repeatable).
    /// Also allows the origin.
    #[arg(
        long,
        value_name = "ORIGIN",
        requires = "http",
        conflicts_with = "stdio"
    )]
    cors: Vec<String>,
    /// HTTP: allow requests with this Origin (exact scheme://host[:port]; repeatable)
    /// [default: on a loopback bind loopback origins only, on another bind same-origin only].
    #[arg(
        long,
        value_name = "ORIGIN",
        requires = "http",
        conflicts_with = "stdio"
    )]
    allow_origin: Vec<String>,
    /// HTTP: allow this Host header (host[:port]; repeatable), besides loopback names on a
    /// loopback bind [default: on a loopback bind loopback names only, on another bind any].
    #[arg(long, value_name = "HOST", requires = "http", conflicts_with = "stdio")]
    allow_host: Vec<String>,
    /// HTTP: open connections at most (HTTP, SSE and WebSocket alike); a new one beyond them
    /// gets 503 at once, the open ones go on.
    #[arg(long, value_name = "N", requires = "http", conflicts_with = "stdio", default_value_t = http::ServeOptions::default().max_connections, value_parser = client::at_least_one::<usize>)]
    max_connections: usize,
    /// HTTP: live sessions at most (counted over every instance with --redis); an initialize
    /// beyond them gets 503 [default: 4096].
    #[arg(long, value_name = "N", requires = "http", conflicts_with_all = ["stdio", "stateless"], value_parser = client::at_least_one::<usize>)]
    max_sessions: Option<usize>,
    /// HTTP: on SIGTERM or Ctrl-C, how long calls in flight get to finish (seconds) before
    /// WebSockets close with 1001 and SSE streams end.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 10,
        requires = "http",
        conflicts_with = "stdio"
    )]
    drain: u64,
    /// Serve the skills of this directory tree (Skills extension): each directory holding a
    /// SKILL.md is a skill, at skill://<its path below DIR>/SKILL.md; changes on disk are
    /// picked up on the next request.
    #[arg(long, value_name = "DIR")]
    skills: Option<std::path::PathBuf>,
    /// Run `sleep` and `progress` as tasks when the client asks (Tasks: 2025-11-25 `params.task`,
    /// 2026-07-28 the io.modelcontextprotocol/tasks extension), polled with tasks/get; with
    /// --redis the tasks are kept in Redis, so any instance serves any task.
    #[arg(long)]
    tasks: bool,
    #[command(flatten)]
    auth: serve_auth::AuthArgs,
}

/// Run the command line; the exit code says whether it succeeded.
pub fn main() -> ExitCode {
    // The client commands keep stderr for errors; the servers log their progress. Dropped last
    // (after the runtime): flushes the OTLP exporters, when configured.
    let _telemetry = otel::init(quiet_by_default());
    let cli = Cli::parse();
    if let Command::Help(args) = &cli.command {
        return help(args.command.as_deref());
    }
    let name = cli.command.name();
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
            Command::Bridge(args) => bridge::bridge(args).await,
            Command::Skills(args) => skills::skills(args).await,
            Command::Login(args) => sign_in::login(args).await,
            Command::Logout(args) => sign_in::logout(args),
            Command::Help(_) => Ok(()),
        }
    });
    // The command is over: nothing of it waits on the runtime, but a blocking read of stdin
    // may (stdio serving, ended by a signal, keeps that thread until stdin closes).
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(name, &e),
    }
}

/// Print a failure on stderr and give its exit code. Errors carry a peer's text (tool errors,
/// server messages) and the user's own: never raw controls. A usage error reads like clap's
/// own (`error: …`, the subcommand's usage, the `--help` hint).
fn report(subcommand: &str, error: &CliError) -> ExitCode {
    let text = orkestrel_mcp::native::terminal::escape_controls(error.message());
    match error {
        CliError::Usage(_) => {
            let mut root = Cli::command();
            root.build();
            let rendered = match root.find_subcommand_mut(subcommand) {
                Some(command) => command.error(clap::error::ErrorKind::ValueValidation, &text),
                None => root.error(clap::error::ErrorKind::ValueValidation, &text),
            };
            let _ = rendered.print();
        }
        CliError::Runtime(_) => eprintln!(
            "orkestrel-mcp: {}",
            orkestrel_mcp::wire::cut_text(&text, MAX_MESSAGE_BYTES)
        ),
    }
    ExitCode::from(error.exit_code())
}

/// The longest error message printed whole, in bytes: a server's error text of megabytes is
/// cut, saying how much was left out.
const MAX_MESSAGE_BYTES: usize = 4096;

/// `help [COMMAND]`: what `orkestrel-mcp [COMMAND] --help` prints (an unknown command is a
/// usage error, exit 2, with clap's suggestions).
fn help(command: Option<&str>) -> ExitCode {
    let argv = ["orkestrel-mcp"]
        .into_iter()
        .chain(command)
        .chain(["--help"]);
    match Cli::try_parse_from(argv) {
        Err(e) => {
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
        }
        // Unreachable: `--help` always stops the parse.
        Ok(_) => ExitCode::SUCCESS,
    }
}

/// Whether the subcommand is a client one (`tools`, `call`, `skills`), whose default log level
/// is `warn`.
fn quiet_by_default() -> bool {
    std::env::args()
        .nth(1)
        .is_some_and(|a| a == "tools" || a == "call" || a == "skills")
}

/// The server of `serve`: the example tools, with tasks kept in `tasks` when given.
fn example_server(tasks: Option<Arc<dyn orkestrel_mcp::server::tasks::TaskStore>>) -> McpServer {
    let tools = Arc::new(ToolRegistry::new());
    builtin::register(&tools, tasks.is_some());
    let mut options = ServerOptions::new("orkestrel-mcp", env!("CARGO_PKG_VERSION"))
        .with_tools(tools)
        .with_logging();
    if let Some(store) = tasks {
        options =
            options.with_tasks(orkestrel_mcp::server::tasks::TaskOptions::new().with_store(store));
    }
    let server = McpServer::new(options);
    builtin::register_extras(&server);
    server
}

/// Where `serve --tasks` keeps its tasks: in Redis with `--redis`, else in memory.
async fn task_store(
    args: &ServeArgs,
) -> Result<Option<Arc<dyn orkestrel_mcp::server::tasks::TaskStore>>, CliError> {
    if !args.tasks {
        return Ok(None);
    }
    #[cfg(feature = "redis")]
    if let (Some(url), true) = (&args.redis, args.http.is_some()) {
        let options = orkestrel_mcp::native::redis::RedisOptions::new(url.clone());
        let store = orkestrel_mcp::native::redis::RedisTasks::connect(&options)
            .await
            .map_err(|e| format!("--redis {url}: {e}"))?;
        tracing::info!("tasks kept in Redis at {url}");
        return Ok(Some(store));
    }
    Ok(Some(Arc::new(
        orkestrel_mcp::server::tasks::MemoryTaskStore::default(),
    )))
}

async fn serve(args: ServeArgs) -> Result<(), CliError> {
    #[cfg(not(feature = "redis"))]
    if args.redis.is_some() {
        return Err(CliError::usage(
            "--redis needs orkestrel-mcp built with the `redis` feature",
        ));
    }
    let server = example_server(task_store(&args).await?);
    if let Some(dir) = &args.skills {
        let directory = orkestrel_mcp::native::skills::SkillDirectory::open(dir)
            .map_err(|e| format!("--skills {}: {e}", dir.display()))?;
        tracing::info!(
            "serving the skills of {} ({} problem(s))",
            dir.display(),
            directory.problems().len()
        );
        server.skills().add_source(directory);
    }
    match args.http {
        Some(addr) => {
            let listener = addr.bind().await?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            let mut options = EndpointOptions::for_bind(local);
            if args.stateless {
                options.sessions = None;
            }
            if let (Some(max), Some(sessions)) = (args.max_sessions, &mut options.sessions) {
                sessions.max_sessions = max;
            }
            let drain = std::time::Duration::from_secs(args.drain);
            if let Some(websocket) = &mut options.websocket {
                websocket.drain = drain;
            }
            if args.no_websocket {
                options.websocket = None;
            }
            let origins: Vec<String> = args
                .allow_origin
                .iter()
                .chain(&args.cors)
                .cloned()
                .collect();
            if !origins.is_empty() {
                options.security.allowed_origins = Some(origins);
            }
            if !args.allow_host.is_empty() {
                options.security.allowed_hosts = Some(args.allow_host.clone());
            }
            options.auth = args.auth.authorizer(local, &server).await?;
            #[cfg(feature = "redis")]
            let shared = match &args.redis {
                Some(url) => {
                    let mut redis = orkestrel_mcp::native::redis::RedisOptions::new(url.clone());
                    if let Some(sessions) = &options.sessions {
                        redis.sessions = sessions.clone();
                    }
                    let clock = orkestrel_mcp::native::endpoint::system_clock();
                    let backend =
                        orkestrel_mcp::native::redis::RedisSessions::connect(redis, &server, clock)
                            .await
                            .map_err(|e| format!("--redis {url}: {e}"))?;
                    tracing::info!("sessions shared through Redis at {url}");
                    Some(backend as Arc<dyn orkestrel_mcp::http::session::SessionBackend>)
                }
                None => None,
            };
            #[cfg(not(feature = "redis"))]
            let shared: Option<Arc<dyn orkestrel_mcp::http::session::SessionBackend>> = None;
            // A bad --allow-origin / --cors origin: the command line's.
            let endpoint = match shared {
                Some(backend) => Endpoint::with_session_backend(server, options, backend),
                None => Endpoint::new(server, options),
            }
            .map_err(|e| CliError::usage(e.to_string()))?;
            let signal = shutdown_signal();
            tracing::info!(
                "serving MCP at http://{local}{} (Streamable HTTP{}{})",
                http::DEFAULT_MCP_PATH,
                if args.stateless {
                    ", stateless"
                } else {
                    " with sessions"
                },
                if args.no_websocket {
                    ""
                } else {
                    "; WebSocket ws://… on the same path"
                },
            );
            let serving = http::ServeOptions {
                max_connections: args.max_connections,
                ..http::ServeOptions::default()
            };
            if args.cors.is_empty() {
                let service = endpoint.clone();
                serve_gracefully_with(listener, endpoint, service, signal, drain, serving).await
            } else {
                let cors = cors_layer(&args.cors).map_err(|e| CliError::usage(e.to_string()))?;
                let service = tower_layer::Layer::layer(&cors, endpoint.clone());
                serve_gracefully_with(listener, endpoint, service, signal, drain, serving).await
            }
            .map_err(|e| e.to_string())?;
            tracing::info!("shut down");
            Ok(())
        }
        None => {
            let signal = shutdown_signal();
            tracing::info!("serving MCP over stdio");
            tokio::select! {
                result = stdio::serve_stdio(server) => result.map_err(|e| format!("stdio: {e}").into()),
                () = signal => Ok(()),
            }
        }
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when this is called (not
/// when first polled), so call it before announcing that the server is up: a signal sent right
/// after the announcement is then never lost.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let wait = {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate()).ok();
        let interrupt = signal(SignalKind::interrupt()).ok();
        async move {
            let one = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = one(term) => {}
                () = one(interrupt) => {}
            }
        }
    };
    #[cfg(not(unix))]
    let wait = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    async move {
        wait.await;
        tracing::info!("shutdown requested");
    }
}
