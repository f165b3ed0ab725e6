//! Client helpers: constructors for our client over each transport, an event recorder, and a
//! tiny scripted HTTP/1.1 peer on 127.0.0.1 (one request per connection) for fault cases.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use orkestrel_mcp::client::{ClientEra, ClientEvent, ClientOptions, McpClient};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub use super::json::init_result;
pub use super::server::BIN;
pub use super::HANG_GUARD;

/// Client options for `era` with a 10 s request timeout.
pub fn era_options(era: ClientEra) -> ClientOptions {
    ClientOptions::new("it", "0")
        .with_timeout(Duration::from_secs(10))
        .with_era(era)
}

/// The handshake-era options most client tests pin down (tests/client_modern.rs covers the
/// other eras).
pub fn options() -> ClientOptions {
    era_options(ClientEra::Legacy)
}

/// A client over Streamable HTTP to `url`.
pub fn http_client_to(url: &str, options: ClientOptions) -> McpClient {
    McpClient::new(
        HttpTransport::new(HttpClientOptions::new(url)).unwrap(),
        options,
    )
}

/// A client over WebSocket to `url` (`http://` URLs are turned into `ws://`).
pub fn ws_client_to(url: &str, options: ClientOptions) -> McpClient {
    McpClient::new(
        WsTransport::new(WsClientOptions::new(url.replacen("http://", "ws://", 1))).unwrap(),
        options,
    )
}

/// A client over stdio to `orkestrel-mcp serve --stdio` (`RUST_LOG=warn`, stderr not forwarded).
pub fn our_stdio(options: ClientOptions) -> McpClient {
    McpClient::new(
        StdioTransport::new(
            StdioClientOptions::new(BIN)
                .with_args(["serve", "--stdio"])
                .with_env([("RUST_LOG", "warn")])
                .quiet(),
        ),
        options,
    )
}

/// A client over `sh -c script` with a short close grace, stderr not forwarded.
pub fn sh_client(script: &str, timeout: Duration) -> (McpClient, Arc<StdioTransport>) {
    let mut o = StdioClientOptions::new("sh")
        .with_args(["-c", script])
        .quiet();
    o.grace = Duration::from_millis(300);
    let transport = Arc::new(StdioTransport::new(o));
    let client = McpClient::with_transport(transport.clone(), options().with_timeout(timeout));
    (client, transport)
}

/// Record every event as text.
pub fn record(client: &McpClient) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    client.on(move |e| {
        let text = match e {
            ClientEvent::Connect => "connect".to_owned(),
            ClientEvent::Disconnect { cause } => format!("disconnect: {cause}"),
            ClientEvent::Notification(n) => format!("notification: {}", n.method),
            ClientEvent::Error(err) => format!("error: {err}"),
            _ => "other".to_owned(),
        };
        l.lock().unwrap().push(text);
    });
    log
}

/// One HTTP request as the scripted peer saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The request target (path and query).
    pub target: String,
    pub headers: Vec<(String, String)>,
    /// The body as JSON, when it is.
    pub body: Option<Value>,
    /// The body's bytes.
    pub raw: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.as_ref()?.get("method")?.as_str()
    }
    pub fn id(&self) -> Value {
        self.body
            .as_ref()
            .and_then(|b| b.get("id"))
            .cloned()
            .unwrap_or(Value::Null)
    }
}

/// What the scripted peer writes back.
pub enum Reply {
    /// A full raw response (status line, headers, body), written at once.
    Raw(String),
    /// A raw response written one byte at a time.
    Bytewise(Vec<u8>),
    /// No answer at all: the connection is held open, silent, for as long as the peer runs.
    Silent,
}

/// A complete JSON response with `extra_headers` (each ending in `\r\n`).
pub fn json_reply(status: &str, extra_headers: &str, body: &str) -> Reply {
    Reply::Raw(format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    ))
}

/// `202 Accepted` with no body.
/// `405 Method Not Allowed`: a server with no `GET` stream.
pub fn no_get_stream() -> Reply {
    Reply::Raw(
        "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
    )
}

/// A `200` JSON reply carrying `result` for the request `id`.
pub fn result_reply(id: &Value, result: Value) -> Reply {
    json_reply(
        "200 OK",
        "",
        &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
}

pub fn accepted() -> Reply {
    Reply::Raw("HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into())
}

/// A scripted HTTP peer on 127.0.0.1: each connection carries one request (`connection: close`).
/// Returns the endpoint URL and the log of requests.
pub async fn fake_http<F>(handler: F) -> (String, Arc<Mutex<Vec<Seen>>>)
where
    F: Fn(&Seen) -> Reply + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let _ = serve_one(stream, &*handler, &log).await;
            });
        }
    });
    (url, seen)
}

async fn serve_one<F: Fn(&Seen) -> Reply>(
    mut stream: TcpStream,
    handler: &F,
    log: &Mutex<Vec<Seen>>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split(' ');
    let method = request_line.next().unwrap_or("").to_owned();
    let target = request_line.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..]).ok();
    let seen = Seen {
        method,
        target,
        headers,
        body,
        raw: buf[head_end..].to_vec(),
    };
    log.lock().unwrap().push(seen.clone());
    match handler(&seen) {
        Reply::Raw(text) => stream.write_all(text.as_bytes()).await?,
        Reply::Bytewise(bytes) => {
            for b in bytes {
                stream.write_all(&[b]).await?;
                stream.flush().await?;
                tokio::task::yield_now().await;
            }
        }
        Reply::Silent => std::future::pending::<()>().await,
    }
    stream.shutdown().await
}
