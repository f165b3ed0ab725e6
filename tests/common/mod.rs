//! Shared helpers for the native integration tests: a raw HTTP/1.1 client and a spawned
//! `orkestrel-mcp` child with line I/O.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderMap;
use hyper::{Method, Request, StatusCode};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// An upper bound against hangs, never a performance assertion.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// One HTTP exchange's outcome.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    /// The body as JSON (panics with the body text when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
}

/// Send one request on a fresh connection.
pub async fn request(
    addr: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Reply {
    tokio::time::timeout(DEADLINE, async {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .expect("handshake");
        tokio::spawn(conn);
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("host", addr.to_string());
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let response = sender
            .send_request(builder.body(Full::new(body.into())).unwrap())
            .await
            .expect("send");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8(body.to_vec()).expect("utf-8 body"),
        }
    })
    .await
    .expect("HTTP exchange timed out")
}

/// POST a JSON-RPC body with the usual MCP headers.
pub async fn post(addr: SocketAddr, body: &str, accept: &str) -> Reply {
    request(
        addr,
        Method::POST,
        "/mcp",
        &[("content-type", "application/json"), ("accept", accept)],
        body.to_owned(),
    )
    .await
}

/// A spawned `orkestrel-mcp` with piped stdio.
pub struct ChildServer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
}

impl ChildServer {
    /// Spawn `orkestrel-mcp <args>`.
    pub fn spawn(bin: &str, args: &[&str]) -> ChildServer {
        let mut child = Command::new(bin)
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

    /// Close stdin (EOF for the server).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }
}
