//! Shared helpers for the native integration tests: an endpoint on 127.0.0.1, a raw HTTP/1.1
//! client (one connection per request), an SSE reader, and an injected clock. Every wait has an
//! upper bound ([`DEADLINE`]) so a broken server fails a test instead of hanging it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
use orkestrel_mcp::native::http::serve;
use orkestrel_mcp::session::Clock;
use orkestrel_mcp::{McpServer, ServerOptions};
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};

/// The upper bound on any single wait in these tests.
pub const DEADLINE: Duration = Duration::from_secs(10);

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
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let endpoint = Endpoint::new(server, options).unwrap();
    let service = endpoint.clone();
    let task = tokio::spawn(async move {
        let _ = serve(listener, service, std::future::pending()).await;
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

/// A manual clock in ms.
pub fn manual_clock() -> (Arc<AtomicU64>, Clock) {
    let now = Arc::new(AtomicU64::new(1_000_000));
    let c = now.clone();
    (now, Arc::new(move || c.load(Ordering::SeqCst)))
}

/// A finished response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
    /// The JSON-RPC messages of the body: the JSON itself, or every SSE event's data.
    pub fn messages(&self) -> Vec<Value> {
        if self.header("content-type") == Some("text/event-stream") {
            parse_events(&self.body)
                .into_iter()
                .filter(|e| !e.data.is_empty())
                .map(|e| serde_json::from_str(&e.data).unwrap())
                .collect()
        } else {
            vec![self.json()]
        }
    }
}

/// Send one request on a fresh connection and read it to the end.
pub async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let response = open(addr, method, headers, body).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(DEADLINE, response.into_body().collect())
        .await
        .expect("body within the deadline")
        .expect("body")
        .to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Send one request on a fresh connection; the body is left to read (streams).
pub async fn open(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response<Incoming> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::builder().method(method).uri("/mcp");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request = request.header("host", addr.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    tokio::time::timeout(DEADLINE, sender.send_request(request))
        .await
        .expect("response within the deadline")
        .expect("response")
}

/// The headers of a well-behaved client POST.
pub const POST: &[(&str, &str)] = &[
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
];

/// `initialize` for a protocol version.
pub fn initialize(id: u64, version: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    })
    .to_string()
}

/// POST with the usual headers plus `extra`.
pub async fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &str) -> Reply {
    let headers: Vec<_> = POST.iter().chain(extra).copied().collect();
    send(addr, "POST", &headers, body).await
}

/// Initialize a session; its id.
pub async fn new_session(addr: SocketAddr, version: &str) -> String {
    let reply = post(addr, &[], &initialize(1, version)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

/// One SSE event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub id: Option<String>,
    pub retry: Option<u64>,
    pub data: String,
    /// Comment lines seen before it (e.g. keep-alives).
    pub comments: Vec<String>,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Parse a complete SSE text into events (blank-line separated).
pub fn parse_events(text: &str) -> Vec<Event> {
    let mut reader = SseParser::default();
    reader.feed(text.as_bytes());
    reader.events.into()
}

#[derive(Default)]
struct SseParser {
    buffer: Vec<u8>,
    current: Event,
    has_data: bool,
    touched: bool,
    events: std::collections::VecDeque<Event>,
    comments_only: Vec<String>,
}

impl SseParser {
    fn feed(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        while let Some(pos) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            if line.is_empty() {
                if self.touched {
                    let mut event = std::mem::take(&mut self.current);
                    event.comments = std::mem::take(&mut self.comments_only);
                    self.events.push_back(event);
                } else if !self.comments_only.is_empty() {
                    // A comment-only block: keep it as an event with no fields.
                    let event = Event {
                        comments: std::mem::take(&mut self.comments_only),
                        ..Event::default()
                    };
                    self.events.push_back(event);
                }
                self.has_data = false;
                self.touched = false;
                continue;
            }
            if let Some(comment) = line.strip_prefix(':') {
                self.comments_only.push(comment.trim().to_owned());
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
                None => (line.clone(), String::new()),
            };
            self.touched = true;
            match field.as_str() {
                "id" => self.current.id = Some(value),
                "retry" => self.current.retry = value.parse().ok(),
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(&value);
                    self.has_data = true;
                }
                _ => {}
            }
        }
    }
}

/// Reads SSE events from a streaming response body.
pub struct SseStream {
    body: Incoming,
    parser: SseParser,
    ended: bool,
}

impl SseStream {
    pub fn new(response: Response<Incoming>) -> Self {
        SseStream {
            body: response.into_body(),
            parser: SseParser::default(),
            ended: false,
        }
    }

    /// The next event (comment-only blocks included), or `None` when the stream ended. Panics
    /// after [`DEADLINE`] with nothing.
    pub async fn next_block(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.parser.events.pop_front() {
                return Some(event);
            }
            if self.ended {
                return None;
            }
            match tokio::time::timeout(DEADLINE, self.body.frame()).await {
                Err(_) => panic!("no SSE event within the deadline"),
                Ok(None) | Ok(Some(Err(_))) => self.ended = true,
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.parser.feed(&data);
                    }
                }
            }
        }
    }

    /// The next event with fields (keep-alive comments skipped).
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            let event = self.next_block().await?;
            if event.id.is_some() || event.retry.is_some() || !event.data.is_empty() {
                return Some(event);
            }
        }
    }

    /// Read until the stream ends; the remaining events with fields.
    pub async fn rest(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(event) = self.next().await {
            out.push(event);
        }
        out
    }
}
