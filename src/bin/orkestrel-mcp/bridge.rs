//! `bridge`: re-serve MCP servers in another transport, era or place.
//!
//! Upstream: a URL (`http(s)://`, `ws(s)://`), a stdio child (`-- COMMAND ARGS…`), or several
//! of them (`--config FILE`, the `mcpServers` JSON). Downstream: Streamable HTTP with
//! WebSocket on the same port (`--http ADDR`, the default), or our stdin/stdout (`--stdio`).
//! Both protocol eras on both sides: the downstream server is ours, the upstream client
//! speaks whichever era the server does ([`orkestrel_mcp::gateway`] carries calls across).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use orkestrel_mcp::client::{ClientEvent, McpClient};
use orkestrel_mcp::gateway::{Gateway, NameFilter, Relay, DEFAULT_SEPARATOR};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use orkestrel_mcp::native::client::Target;
use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
use orkestrel_mcp::native::http::ResponseBody;
use orkestrel_mcp::native::{http, stdio};
use orkestrel_mcp::server::Completion;
use orkestrel_mcp::wire::jsonrpc::ErrorObject;
use orkestrel_mcp::{ClientTransport, McpServer};
use serde_json::{json, Value};

use super::addr::BindAddr;
use super::bridge_config::{self, Reach, Spec};
use super::client::{client_options, ConnectArgs};
use super::error::CliError;

#[derive(Args)]
pub struct BridgeArgs {
    /// The upstream server's URL (http, https, ws, wss); or give `-- COMMAND [ARGS…]` (a stdio
    /// server) or `--config FILE` (several) instead.
    url: Option<String>,
    /// Serve downstream at ADDR: Streamable HTTP with sessions at /mcp and WebSocket on the
    /// same path (with --config also /servers/NAME/mcp), /healthz and /status (the default
    /// downstream). A host name resolves.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_HTTP, conflicts_with = "stdio")]
    http: BindAddr,
    /// Serve downstream on this process's stdin/stdout instead (for a host that only speaks
    /// stdio reaching a remote server).
    #[arg(long)]
    pub(super) stdio: bool,
    /// Several upstreams from an `mcpServers` JSON file: each at /servers/NAME/mcp, and all of
    /// them on /mcp with names prefixed `NAME` + the separator; a server that fails is retried
    /// with backoff and shown in /status.
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    config: Option<std::path::PathBuf>,
    /// The separator between a server's name and an item's name on the merged endpoint.
    #[arg(long, value_name = "TEXT", default_value = DEFAULT_SEPARATOR, requires = "config", value_parser = non_empty)]
    pub(super) separator: String,
    /// Reload the config when the file changes (checked each second; SIGHUP always reloads):
    /// only the servers whose entry changed are restarted.
    #[arg(long, requires = "config")]
    pub(super) watch: bool,
    /// Log each call through the bridge (server, method, name, milliseconds, outcome) at info.
    #[arg(long)]
    pub(super) log_calls: bool,
    /// Re-serve only these tools, prompts and resources of the upstream, by name (repeatable).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    allow: Vec<String>,
    /// Do not re-serve these tools, prompts and resources of the upstream (repeatable).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    ignore: Vec<String>,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
    /// Inbound bearer tokens (downstream HTTP): as `serve --auth-issuer`.
    #[command(flatten)]
    pub(super) auth: super::serve_auth::AuthArgs,
    /// The stdio server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// A value that must not be empty (`--separator`: names would run together).
fn non_empty(text: &str) -> Result<String, String> {
    if text.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(text.to_owned())
    }
}

/// The default downstream address.
const DEFAULT_HTTP: &str = "127.0.0.1:3000";
/// The longest wait between two attempts to start a failed upstream.
/// Where the stdio transport's exit cause gives the child's last stderr lines.
const STDERR_TAIL: &str = "; its stderr ended with";
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// One upstream and what `/status` shows of it.
pub(super) struct Upstream {
    pub(super) spec: Spec,
    relay: Relay,
    pub(super) state: Mutex<State>,
    pub(super) restarts: AtomicU32,
    pub(super) gateway: Mutex<Option<Gateway>>,
    log_calls: bool,
}

#[derive(Clone, Default)]
pub(super) struct State {
    /// `starting`, `up` or `down`.
    pub(super) phase: &'static str,
    era: Option<String>,
    pub(super) last_error: Option<String>,
    pub(super) collisions: Vec<String>,
}

impl Upstream {
    pub(super) fn new(spec: Spec, log_calls: bool) -> Arc<Self> {
        Arc::new(Upstream {
            spec,
            log_calls,
            relay: Relay::default(),
            state: Mutex::new(State {
                phase: "starting",
                ..State::default()
            }),
            restarts: AtomicU32::new(0),
            gateway: Mutex::new(None),
        })
    }

    pub(super) fn set(&self, change: impl FnOnce(&mut State)) {
        let mut state = lock(&self.state);
        change(&mut state);
        // `/status` is read remotely: a child's last stderr lines stay in our log.
        if let Some(error) = &mut state.last_error {
            if let Some(at) = error.find(STDERR_TAIL) {
                tracing::warn!(server = %self.spec.name, %error, "bridge: upstream failed");
                error.truncate(at);
            }
        }
    }

    /// Connect and wrap the client in a gateway.
    pub(super) async fn connect(&self, connect: &ConnectArgs) -> Result<Gateway, String> {
        let client = self.client(connect)?;
        client.connect().await.map_err(|e| e.to_string())?;
        Ok(self.attach(client))
    }

    /// The upstream's client, not connected yet.
    pub(super) fn client(&self, connect: &ConnectArgs) -> Result<McpClient, String> {
        let transport = transport(&self.spec.reach, connect)?;
        let options =
            client_options(connect.timeout_ms(), connect.era).with_handler(self.relay.clone());
        Ok(McpClient::with_transport(transport, options))
    }

    /// The gateway over the connected `client`.
    pub(super) fn attach(&self, client: McpClient) -> Gateway {
        let era = match client.era() {
            Some(orkestrel_mcp::era::Era::Modern) => "2026-07-28".to_owned(),
            _ => client
                .initialize_result()
                .map(|i| i.protocol_version)
                .unwrap_or_default(),
        };
        self.set(|s| s.era = Some(era));
        let gateway = Gateway::with_filter(client, self.relay.clone(), self.spec.filter.clone());
        if self.log_calls {
            gateway.set_call_log(Some(self.spec.name.clone()));
        }
        *lock(&self.gateway) = Some(gateway.clone());
        gateway
    }

    pub(super) fn status(&self) -> Value {
        let state = lock(&self.state).clone();
        let gateway = lock(&self.gateway).clone();
        let tools = gateway.as_ref().map_or(0, |g| g.mirrored_tools());
        json!({
            "name": self.spec.name,
            "upstream": self.spec.reach.shown(),
            "state": state.phase,
            "protocolVersion": state.era,
            "lastError": state.last_error,
            "restarts": self.restarts.load(Ordering::Relaxed),
            "tools": tools,
            "calls": self.relay.calls(),
            "failures": self.relay.failures(),
            "inFlight": self.relay.in_flight(),
            "collisions": state.collisions,
        })
    }
}

/// The client transport for one upstream.
fn transport(reach: &Reach, connect: &ConnectArgs) -> Result<Arc<dyn ClientTransport>, String> {
    Ok(match reach {
        Reach::Url { url, headers } => match Target::from_url(url).map_err(|e| e.to_string())? {
            Target::WebSocket(url) => {
                let mut options = WsClientOptions::new(url);
                options.headers = headers.clone();
                Arc::new(WsTransport::new(options).map_err(|e| e.to_string())?)
            }
            _ => {
                let mut options = HttpClientOptions::new(url.clone());
                options.headers = headers.clone();
                let transport = HttpTransport::new(options).map_err(|e| e.to_string())?;
                // Sign in toward the upstream (the OAuth options; tokens kept in the store).
                if let Some(authorizer) = connect
                    .authorizer(url)
                    .map_err(|e| e.message().to_owned())?
                {
                    transport.set_authorizer(Arc::new(authorizer));
                }
                Arc::new(transport)
            }
        },
        Reach::Command { argv, env, cwd } => {
            let (command, args) = argv.split_first().ok_or("an empty command")?;
            let mut options = StdioClientOptions::new(command).with_args(args.iter().cloned());
            options.env = env.clone();
            options.cwd = cwd.clone();
            options.escape_stderr = true;
            Arc::new(StdioTransport::new(options))
        }
    })
}

/// `bridge`: run until SIGTERM / Ctrl-C, stdin's end (`--stdio`), or the upstream's end (a
/// single upstream; an error then).
pub async fn bridge(args: BridgeArgs) -> Result<(), CliError> {
    let specs = match (&args.config, &args.url, args.command.is_empty()) {
        (Some(_), None, true) if args.connect.oauth.client_id.is_some() => {
            return Err(CliError::usage(
                "--client-id signs in toward one upstream: it does not go with --config",
            ))
        }
        (Some(path), None, true) => {
            // Taken first: a change made from here on is one `--watch` sees.
            let seen = super::bridge_fleet::fingerprint(path);
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let specs = bridge_config::parse(&text, &|k| std::env::var(k).ok())
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
            for spec in &specs {
                if !spec.unused.is_empty() {
                    tracing::warn!(server = %spec.name, keys = ?spec.unused, "bridge: config keys not used");
                }
            }
            let path = path.clone();
            return Ok(super::bridge_fleet::many(args, path, seen, specs).await?);
        }
        (Some(_), _, _) => {
            return Err(CliError::usage(
                "give either --config FILE or an upstream, not both",
            ))
        }
        (None, Some(_), false) => {
            return Err(CliError::usage(
                "give either a URL or `-- COMMAND`, not both",
            ))
        }
        (None, Some(url), true) => {
            Target::from_url(url).map_err(|e| CliError::usage(e.to_string()))?;
            let headers = super::client::headers(&args.connect.headers).map_err(CliError::Usage)?;
            vec![Reach::Url {
                url: url.clone(),
                headers,
            }]
        }
        (None, None, false) => vec![Reach::Command {
            argv: args.command.clone(),
            env: None,
            cwd: None,
        }],
        (None, None, true) => {
            return Err(CliError::usage(
                "missing upstream: a URL, `-- COMMAND [ARGS…]` or --config FILE",
            ))
        }
    };
    let reach = specs
        .into_iter()
        .next()
        .ok_or_else(|| CliError::usage("no upstream"))?;
    let filter = NameFilter {
        allow: (!args.allow.is_empty()).then(|| args.allow.clone()),
        ignore: args.ignore.clone(),
    };
    let name = reach.shown();
    let log_calls = args.log_calls;
    let upstream = Upstream::new(
        Spec {
            name,
            reach,
            filter,
            unused: Vec::new(),
        },
        log_calls,
    );
    Ok(one(args, upstream).await?)
}

/// One upstream, re-served as it is.
async fn one(args: BridgeArgs, upstream: Arc<Upstream>) -> Result<(), String> {
    // SIGTERM, Ctrl-C and (with one upstream, nothing to reload) SIGHUP — a closed terminal —
    // end the bridge gracefully from the start, while the upstream starts too.
    let signal = super::shutdown_signal();
    let hangup = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(mut hangup) => {
                hangup.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    let stop = async move {
        tokio::select! {
            () = signal => {}
            () = hangup => {}
        }
    };
    tokio::pin!(stop);
    let client = upstream.client(&args.connect)?;
    tokio::select! {
        connected = client.connect() => connected.map_err(|e| e.to_string())?,
        () = &mut stop => {
            client.disconnect().await;
            return Ok(());
        }
    }
    let gateway = upstream.attach(client);
    let cause = disconnect_cause(gateway.client());
    let server = McpServer::new(gateway.server_options());
    let synced = gateway
        .mirror_into(&server, "")
        .await
        .map_err(|e| e.to_string())?;
    upstream.set(|s| s.phase = "up");
    tracing::info!(
        tools = synced.tools,
        prompts = synced.prompts,
        resources = synced.resources,
        templates = synced.templates,
        "bridging {}",
        upstream.spec.reach.shown()
    );
    let watch = gateway.watch();
    let served = if args.stdio {
        // The upstream gone or a signal: serving ends as at the end of stdin, so the calls the
        // upstream's end failed are answered (dropping the serving lost them).
        let ending = Arc::new(tokio::sync::Notify::new());
        let told = ending.clone();
        let serving = stdio::serve_stdio_until(server, async move { told.notified().await });
        tokio::pin!(serving);
        let served = tokio::select! {
            served = &mut serving => Some(served),
            () = watch => None,
            () = &mut stop => None,
        };
        let served = match served {
            Some(served) => served,
            None => {
                ending.notify_one();
                serving.await
            }
        };
        served.map_err(|e| e.to_string())
    } else {
        let listener = listen(&args).await?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let status = status_of(vec![upstream.clone()]);
        let gate = args
            .auth
            .gate(local)
            .await
            .map_err(|e| e.message().to_owned())?;
        let endpoint = endpoint(server, http::DEFAULT_MCP_PATH, local, gate)?;
        let until = async move {
            tokio::select! {
                () = watch => {}
                () = &mut stop => {}
            }
        };
        serve_http(listener, endpoint, None, status, until).await
    };
    gateway.client().disconnect().await;
    served?;
    let why = lock(&cause).take();
    match why {
        Some(why) if why != "the client disconnected" => {
            Err(format!("the upstream server stopped: {why}"))
        }
        _ => Ok(()),
    }
}

pub(super) async fn complete(
    gateway: Option<Gateway>,
    params: Value,
    prefix: &str,
) -> Result<Completion, ErrorObject> {
    match gateway {
        Some(gateway) if gateway.upstream_declares("completions") => {
            gateway.complete(params, prefix).await
        }
        // No completions to offer: an empty list, as a server without suggestions answers.
        _ => Ok(Completion {
            values: Vec::new(),
            total: Some(0),
            has_more: Some(false),
        }),
    }
}

pub(super) fn endpoint(
    server: McpServer,
    path: &str,
    local: std::net::SocketAddr,
    auth: Option<orkestrel_mcp::http::auth::Authorizer>,
) -> Result<Endpoint, String> {
    let mut options = EndpointOptions::for_bind(local);
    options.http.path = path.to_owned();
    if let Some(websocket) = &mut options.websocket {
        websocket.path = path.to_owned();
    }
    options.auth = auth;
    Endpoint::new(server, options).map_err(|e| e.to_string())
}

/// Listen at `--http` (or the default address).
pub(super) async fn listen(args: &BridgeArgs) -> Result<tokio::net::TcpListener, String> {
    args.http.bind().await
}

pub(super) type Status = Arc<dyn Fn() -> Value + Send + Sync>;

/// Finds the endpoint serving a path, if any.
pub(super) type RouteFn = Arc<dyn Fn(&str) -> Option<Endpoint> + Send + Sync>;

/// The endpoints beside the main one (`--config`'s `/servers/NAME/mcp`): how to find one by
/// path, and how to begin their shutdown.
pub(super) struct Extra {
    pub(super) route: RouteFn,
    pub(super) shutdown: Arc<dyn Fn() + Send + Sync>,
}

fn status_of(upstreams: Vec<Arc<Upstream>>) -> Status {
    Arc::new(move || {
        let list: Vec<Value> = upstreams.iter().map(|u| u.status()).collect();
        let up = upstreams
            .iter()
            .filter(|u| lock(&u.state).phase == "up")
            .count();
        json!({ "upstreams": list, "up": up, "total": upstreams.len() })
    })
}

/// Serve the merged endpoint at /mcp, `others` at their paths, /healthz and /status, until
/// `until` ends (it holds the shutdown signals).
pub(super) async fn serve_http(
    listener: tokio::net::TcpListener,
    main: Endpoint,
    extra: Option<Extra>,
    status: Status,
    until: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!(
        "orkestrel-mcp bridge: serving at http://{local}{} (Streamable HTTP with sessions; WebSocket ws://… on the same path){}",
        http::DEFAULT_MCP_PATH,
        if extra.is_some() { "; each server at /servers/NAME/mcp" } else { "" }
    );
    let shutdown = extra.as_ref().map(|e| e.shutdown.clone());
    let router = Router {
        main: main.clone(),
        route: extra.map(|e| e.route),
        status,
    };
    // `until` holds the signals (their handlers in place before the address is announced).
    let stop = async move {
        until.await;
        if let Some(shutdown) = shutdown {
            shutdown();
        }
    };
    let drain = orkestrel_mcp::native::shutdown::DEFAULT_DRAIN;
    orkestrel_mcp::native::shutdown::serve_gracefully(listener, main, router, stop, drain)
        .await
        .map_err(|e| e.to_string())
}

/// Routes by path: each server's endpoint, the merged one, `/healthz`, `/status`.
#[derive(Clone)]
struct Router {
    main: Endpoint,
    route: Option<RouteFn>,
    status: Status,
}

impl tower_service::Service<Request<hyper::body::Incoming>> for Router {
    type Response = Response<ResponseBody>;
    type Error = std::convert::Infallible;
    type Future = orkestrel_mcp::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<hyper::body::Incoming>) -> Self::Future {
        let path = request.uri().path().to_owned();
        if matches!(path.as_str(), "/healthz" | "/status") {
            // The endpoint's Host / Origin guard (DNS rebinding) applies here too.
            if let Some(refused) = self.main.refuse_head(&request) {
                return Box::pin(async move { Ok(refused) });
            }
            if !matches!(*request.method(), hyper::Method::GET | hyper::Method::HEAD) {
                let mut answer = plain(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "text/plain",
                    "Method Not Allowed: GET only\n".into(),
                );
                if let Ok(allow) = "GET, HEAD".parse() {
                    answer.headers_mut().insert(hyper::header::ALLOW, allow);
                }
                return Box::pin(async move { Ok(answer) });
            }
        }
        match path.as_str() {
            "/healthz" => {
                Box::pin(async { Ok(plain(StatusCode::OK, "text/plain", "ok\n".into())) })
            }
            "/status" => {
                let body = serde_json::to_string_pretty(&(self.status)()).unwrap_or_default();
                Box::pin(async move { Ok(plain(StatusCode::OK, "application/json", body)) })
            }
            _ => {
                let endpoint = self
                    .route
                    .as_ref()
                    .and_then(|route| route(&path))
                    .unwrap_or_else(|| self.main.clone());
                Box::pin(async move { Ok(endpoint.respond(request).await) })
            }
        }
    }
}

fn plain(status: StatusCode, content_type: &str, body: String) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    if let Ok(value) = "no-store".parse() {
        response
            .headers_mut()
            .insert(hyper::header::CACHE_CONTROL, value);
    }
    response
}

/// Where `client`'s disconnect cause will be, once it disconnects.
pub(super) fn disconnect_cause(client: &McpClient) -> Arc<Mutex<Option<String>>> {
    let cause = Arc::new(Mutex::new(None::<String>));
    let kept = cause.clone();
    client.on(move |event| {
        if let ClientEvent::Disconnect { cause: why } = event {
            *lock(&kept) = Some(why.clone());
        }
    });
    cause
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
