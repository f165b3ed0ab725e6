//! A raw HTTP/1.1 client for 127.0.0.1 (one connection per request), the finished [`Reply`], and
//! an SSE reader ([`SseStream`], [`parse_events`]). Header names are given exactly as a peer would
//! write them; every wait is bounded by [`DEADLINE`].

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::DEADLINE;

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

/// Send one request to `/mcp` on a fresh connection and read it to the end.
pub async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let response = open(addr, method, headers, body).await;
    finish(response).await
}

/// Read a response to the end.
pub async fn finish(response: Response<Incoming>) -> Reply {
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

/// Send one request to `/mcp` on a fresh connection; the body is left to read (streams).
pub async fn open(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response<Incoming> {
    open_at(addr, method, "/mcp", headers, Bytes::from(body.to_owned())).await
}

/// Send one request to `path` on a fresh connection (a `Host` header is added unless given);
/// the body is left to read.
pub async fn open_at(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> Response<Incoming> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::builder().method(method).uri(path);
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request = request.header("host", addr.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(body)).unwrap();
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

/// POST with the usual headers plus `extra`.
pub async fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &str) -> Reply {
    let headers: Vec<_> = POST.iter().chain(extra).copied().collect();
    send(addr, "POST", &headers, body).await
}

/// Send one request with any method and path; the body must be UTF-8.
pub async fn request(
    addr: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Reply {
    let response = open_at(addr, method.as_str(), path, headers, body.into()).await;
    let reply = finish(response).await;
    assert!(
        !reply.body.contains(char::REPLACEMENT_CHARACTER),
        "not a UTF-8 body: {:?}",
        reply.body
    );
    reply
}

/// POST a JSON-RPC body to `/mcp` with `Content-Type: application/json` and this `Accept`.
pub async fn post_accept(addr: SocketAddr, body: &str, accept: &str) -> Reply {
    request(
        addr,
        Method::POST,
        "/mcp",
        &[("content-type", "application/json"), ("accept", accept)],
        body.to_owned(),
    )
    .await
}

/// POST raw bytes to `/mcp` (header names exactly as written, `Connection: close`) and read
/// until the server closes; `(status, body)`.
pub async fn raw_post(addr: SocketAddr, header_lines: &[&str], body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for line in header_lines {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.push_str(body);
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut out))
        .await
        .expect("raw reply within the deadline")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Write `bytes` (a whole request, exactly as given) on a fresh connection and read until the
/// server closes; `(status, body)` (status 0 when the reply is not HTTP).
pub async fn raw(addr: SocketAddr, bytes: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut out))
        .await
        .expect("raw reply within the deadline")
        .unwrap();
    split_reply(&out)
}

/// `(status, body)` of a whole HTTP/1.x reply as bytes.
pub fn split_reply(out: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
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
    /// Why the body failed, when it ended in an error rather than at its end.
    error: Option<String>,
}

impl SseStream {
    pub fn new(response: Response<Incoming>) -> Self {
        SseStream {
            body: response.into_body(),
            parser: SseParser::default(),
            ended: false,
            error: None,
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
                Ok(None) => self.ended = true,
                Ok(Some(Err(e))) => {
                    self.ended = true;
                    self.error = Some(e.to_string());
                }
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.parser.feed(&data);
                    }
                }
            }
        }
    }

    /// The next event with fields (keep-alive comments skipped), or `None` when the stream
    /// ended. Panics after [`DEADLINE`] in all without one (keep-alives do not extend it).
    pub async fn next(&mut self) -> Option<Event> {
        let found = tokio::time::timeout(DEADLINE, async {
            loop {
                let event = self.next_block().await?;
                if event.id.is_some() || event.retry.is_some() || !event.data.is_empty() {
                    return Some(event);
                }
            }
        })
        .await;
        found.unwrap_or_else(|_| panic!("no SSE event with fields within {DEADLINE:?}"))
    }

    /// Whether the stream ended at the end of its body (a chunked body's last chunk), not in a
    /// broken connection; `None` while it has not ended.
    pub fn ended_cleanly(&self) -> Option<Result<(), String>> {
        self.ended.then(|| self.error.clone().map_or(Ok(()), Err))
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
