//! Our servers on 127.0.0.1: an [`Endpoint`] in process ([`start`], [`TestServer`]), and the
//! `orkestrel-mcp` binary as a child, over stdio ([`ChildServer`]) or listening on an ephemeral
//! port ([`spawn_listening`]: the URL it prints is the signal that it is up).

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, Response};
use orkestrel_mcp::http::session::Clock;
use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
use orkestrel_mcp::native::http::{serve, serve_with, ServeOptions};
use orkestrel_mcp::{McpServer, ServerOptions};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::http::post;
use super::json::initialize;
use super::DEADLINE;

/// The `orkestrel-mcp` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_orkestrel-mcp");

/// A server running on 127.0.0.1 until dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub endpoint: Endpoint,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.endpoint.shutdown();
        self.task.abort();
    }
}

impl TestServer {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
    pub fn ws_url(&self) -> String {
        format!("ws://{}/mcp", self.addr)
    }
}

/// Start `server` behind an [`Endpoint`] with `options` (loopback policy).
pub async fn start(server: McpServer, options: EndpointOptions) -> TestServer {
    start_with(server, options, ServeOptions::default()).await
}

/// [`start`], admitting and closing connections by `serving` (the connection cap, lingering).
pub async fn start_with(
    server: McpServer,
    options: EndpointOptions,
    serving: ServeOptions,
) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let endpoint = Endpoint::new(server, options).unwrap();
    let service = endpoint.clone();
    let task = tokio::spawn(async move {
        let _ = serve_with(listener, service, std::future::pending(), serving).await;
    });
    TestServer {
        addr,
        endpoint,
        task,
    }
}

/// Start any tower service (e.g. the endpoint under a CORS layer).
pub async fn start_service<S>(service: S) -> (SocketAddr, tokio::task::JoinHandle<()>)
where
    S: tower_service::Service<
            Request<Incoming>,
            Response = Response<orkestrel_mcp::native::http::ResponseBody>,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = serve(listener, service, std::future::pending()).await;
    });
    (addr, task)
}

/// An example server with no tools.
pub fn server() -> McpServer {
    McpServer::new(ServerOptions::new("test", "0.0.0"))
}

/// A manual clock in ms, starting at 1 000 000.
pub fn manual_clock() -> (Arc<AtomicU64>, Clock) {
    let now = Arc::new(AtomicU64::new(1_000_000));
    let c = now.clone();
    (now, Arc::new(move || c.load(Ordering::SeqCst)))
}

/// Initialize a handshake-era session over HTTP; its id.
pub async fn new_session(addr: SocketAddr, version: &str) -> String {
    let reply = post(addr, &[], &initialize(1, version)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

/// Spawn `orkestrel-mcp <args>` (e.g. `serve --http 127.0.0.1:0`, `bridge --http 127.0.0.1:0
/// -- …`) with `RUST_LOG` = `log`, and wait for the `http://` URL it prints once it listens;
/// the URL and the child (killed on drop). The rest of its stderr is drained.
pub async fn spawn_listening(args: &[&str], log: &str) -> (String, Child) {
    spawn_listening_env(args, log, &[]).await
}

/// [`spawn_listening`] with more environment variables for the child.
pub async fn spawn_listening_env(
    args: &[&str],
    log: &str,
    env: &[(&str, &str)],
) -> (String, Child) {
    let mut child = Command::new(BIN)
        .args(args)
        .env("RUST_LOG", log)
        .envs(env.iter().copied())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn orkestrel-mcp");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(i) = line.find("http://") {
                return line[i..].split_whitespace().next().unwrap_or("").to_owned();
            }
        }
        panic!("orkestrel-mcp {args:?} printed no URL")
    })
    .await
    .expect("a URL within the deadline");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (url, child)
}

/// `orkestrel-mcp serve --http 127.0.0.1:0`: its URL and the child.
pub async fn our_http_server() -> (String, Child) {
    spawn_listening(&["serve", "--http", "127.0.0.1:0"], "info").await
}

/// A stdio connection to `serve_with` over an in-memory pipe: the server handle stays in the
/// test.
pub struct Pipe {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl Pipe {
    pub fn serve(server: McpServer) -> Pipe {
        let (client, server_side) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_side);
        tokio::spawn(async move {
            let _ = orkestrel_mcp::native::stdio::serve_with(
                server,
                sr,
                sw,
                orkestrel_mcp::native::stdio::StdioOptions::default(),
            )
            .await;
        });
        let (read, write) = tokio::io::split(client);
        Pipe {
            write,
            read: BufReader::new(read),
        }
    }

    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    pub async fn read(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(DEADLINE, self.read.read_line(&mut line))
            .await
            .expect("a line within the deadline")
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// No line within `wait` (a bounded check that nothing was sent).
    pub async fn silent_for(&mut self, wait: Duration) -> Option<String> {
        let mut line = String::new();
        match tokio::time::timeout(wait, self.read.read_line(&mut line)).await {
            Err(_) => None,
            Ok(_) => Some(line),
        }
    }
}

/// A spawned `orkestrel-mcp` with piped stdio.
pub struct ChildServer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
}

impl ChildServer {
    /// Spawn `orkestrel-mcp <args>`.
    pub fn spawn(args: &[&str]) -> ChildServer {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn orkestrel-mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        ChildServer {
            child,
            stdin,
            stdout,
        }
    }

    /// Write raw bytes to the child's stdin and flush.
    pub async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// Read one reply line (`None` at EOF).
    pub async fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        let n = tokio::time::timeout(DEADLINE, self.stdout.read_line(&mut line))
            .await
            .expect("no reply line in time")
            .expect("read");
        (n > 0).then_some(line)
    }

    /// Read one reply line as JSON.
    pub async fn read_json(&mut self) -> serde_json::Value {
        let line = self.read_line().await.expect("a reply line");
        assert!(line.ends_with('\n'));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line:?}"))
    }

    /// Write one message as a line.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write(line.as_bytes()).await;
    }

    /// Send a request and read the next line, which must be its response.
    pub async fn ask(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send(message).await;
        let reply = self.read_json().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// The handshake every client does first: `initialize` (2025-11-25, id `"init"`), then
    /// `notifications/initialized`. Returns the initialize result.
    pub async fn handshake(&mut self) -> serde_json::Value {
        let init = self.ask(super::json::handshake_request()).await;
        assert!(init.get("result").is_some(), "{init}");
        self.send(super::json::initialized()).await;
        init
    }

    /// Close stdin (EOF for the server).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }
}

/// What a finished `orkestrel-mcp` run left: its exit code and its output.
#[derive(Debug)]
pub struct Ran {
    /// The exit code (`None` if a signal ended it).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Run `orkestrel-mcp <args>` to its end (bounded by [`DEADLINE`]) with stdin closed.
pub async fn run_bin(args: &[&str]) -> Ran {
    let out = tokio::time::timeout(
        DEADLINE,
        Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("orkestrel-mcp {args:?} did not end within the deadline"))
    .expect("run orkestrel-mcp");
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Tokens `alice` and `bob` (two subjects of one issuer; `alice-2` another of alice's), `robot` (a client acting for itself,
/// no subject) and `brief` (a subject whose token's `exp` plus the 30 s leeway is 2 s away).
pub struct People;

impl orkestrel_mcp::http::auth::TokenVerifier for People {
    fn verify(
        &self,
        token: &str,
    ) -> orkestrel_mcp::BoxFuture<
        '_,
        Result<orkestrel_mcp::http::identity::Identity, orkestrel_mcp::http::auth::TokenError>,
    > {
        use orkestrel_mcp::http::identity::Identity;
        let claims = serde_json::json!({ "iss": "https://as.example" });
        let outcome = match token {
            // `alice-2`: another token of alice's.
            "alice" | "bob" | "alice-2" => Ok(Identity {
                subject: Some(token.trim_end_matches("-2").to_owned()),
                claims,
                ..Identity::default()
            }),
            "robot" => Ok(Identity {
                client_id: Some("robot".to_owned()),
                claims,
                ..Identity::default()
            }),
            "brief" => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                Ok(Identity {
                    subject: Some(token.to_owned()),
                    claims: serde_json::json!({ "iss": "https://as.example", "exp": now - 28 }),
                    ..Identity::default()
                })
            }
            _ => Err(orkestrel_mcp::http::auth::TokenError::Invalid(
                "unknown".into(),
            )),
        };
        Box::pin(async move { outcome })
    }
}

/// Endpoint options whose bearer-token gate knows [`People`] (`stateless`: no sessions).
pub fn gated_by_people(stateless: bool) -> EndpointOptions {
    let mut options = EndpointOptions {
        auth: Some(orkestrel_mcp::http::auth::Authorizer::new(
            orkestrel_mcp::http::auth::ResourceMetadata {
                resource: "http://127.0.0.1/mcp".into(),
                authorization_servers: vec!["https://as.example".into()],
                ..Default::default()
            },
            People,
        )),
        ..EndpointOptions::default()
    };
    if stateless {
        options.sessions = None;
    }
    options
}
