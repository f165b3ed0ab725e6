//! What the native HTTP server ([`serve_with`](crate::native::http::serve_with)) does with each
//! TCP connection before and after hyper: the cap on open connections, and the lingering close.
//!
//! | situation | the server does |
//! |---|---|
//! | a connection while fewer than [`ServeOptions::max_connections`] (default [`DEFAULT_MAX_CONNECTIONS`]) are open | serves it |
//! | a connection at the cap | at once, without reading its request: `503 Service Unavailable` with `Retry-After: 1`, `Connection: close` and a JSON-RPC error body (id `null`, `-32000`), then the lingering close below (at most [`REFUSAL_LINGER`]); the open connections go on as before. While [`MAX_REFUSING`] refusals are still being answered, a further connection is closed at once (a flood gets no more of the server than that) |
//! | a write to the client makes no progress for [`ServeOptions::write_stall`] (default [`DEFAULT_WRITE_STALL`]: the client stopped reading a large answer or a stream, and the socket's buffers are full) | the connection ends (its answer or stream cut), then the lingering close below: a peer that stops reading holds no socket or buffered answer for longer |
//! | a connection ends (either side) | the lingering close: the server shuts down its sending side (the client reads the whole answer, then the end), then reads and discards what the client still sends — until the client closes, [`ServeOptions::linger`] (default 5 s) passes or [`ServeOptions::linger_bytes`] (default 16 MiB) are read — and only then closes |
//!
//! The lingering close is why a client still writing a body the server refused (`413`, a body
//! over the limit; `408`) reads that answer: closing a socket with unread data makes the kernel
//! send a reset, and the client's write fails with a broken pipe before it reads anything
//! (RFC 9112 §9.6, tear-down). A connection counts against the cap until its lingering close
//! has ended, so the cap bounds the sockets a peer can hold.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::http::answer::{Answer, AnswerBody};
use crate::http::headers;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// The default of [`ServeOptions::max_connections`]: 1024 open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The default of [`ServeOptions::linger`]: 5 s.
pub const DEFAULT_LINGER: Duration = Duration::from_secs(5);
/// The default of [`ServeOptions::linger_bytes`]: 16 MiB.
pub const DEFAULT_LINGER_BYTES: u64 = 16 * 1024 * 1024;
/// How long a refused connection lingers at most: 1 s (and at most 64 KiB read).
pub const REFUSAL_LINGER: Duration = Duration::from_secs(1);
/// Refusals being answered at once at most: 64; beyond them a connection is closed at once.
pub const MAX_REFUSING: usize = 64;
const REFUSAL_LINGER_BYTES: u64 = 64 * 1024;

/// The default of [`ServeOptions::write_stall`]: 30 s.
pub const DEFAULT_WRITE_STALL: Duration = Duration::from_secs(30);

/// The default of [`ServeOptions::shutdown_grace`]: 10 s.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How [`serve_with`](crate::native::http::serve_with) admits and closes connections (see the
/// module table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    /// Open connections at most (at least 1; default [`DEFAULT_MAX_CONNECTIONS`]). An HTTP
    /// keep-alive connection, an SSE stream and a WebSocket each count one.
    pub max_connections: usize,
    /// How long a closing connection keeps reading what the client still sends (default
    /// [`DEFAULT_LINGER`]).
    pub linger: Duration,
    /// How many bytes a closing connection reads and discards at most (default
    /// [`DEFAULT_LINGER_BYTES`]).
    pub linger_bytes: u64,
    /// After the shutdown signal, how long open connections get to finish before they are
    /// aborted (default [`DEFAULT_SHUTDOWN_GRACE`]).
    pub shutdown_grace: Duration,
    /// How long a write to the client may wait for room in the socket's buffers (the client
    /// reads nothing) before the connection ends (default [`DEFAULT_WRITE_STALL`]; zero: no
    /// bound). Only a write that cannot proceed counts: an idle stream writes nothing and is
    /// not cut. Room comes back when the client has read enough of what is buffered (on Linux,
    /// about half the socket's send buffer, which grows to 4 MiB): a client reading a large
    /// answer much slower than that per `write_stall` (tens of KB/s at the default, in the
    /// worst case) is cut too, its answer short of its `Content-Length`. Counting the bytes the
    /// client acknowledges instead would need the socket's send queue (`SIOCOUTQ`), an `ioctl`
    /// the crate's `forbid(unsafe_code)` rules out.
    pub write_stall: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            linger: DEFAULT_LINGER,
            linger_bytes: DEFAULT_LINGER_BYTES,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            write_stall: DEFAULT_WRITE_STALL,
        }
    }
}

/// The admission state of one listener.
#[derive(Debug)]
pub(crate) struct Admission {
    open: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
    options: ServeOptions,
}

impl Admission {
    pub(crate) fn new(options: ServeOptions) -> Self {
        Admission {
            open: Arc::new(Semaphore::new(options.max_connections.max(1))),
            refusing: Arc::new(Semaphore::new(MAX_REFUSING)),
            options,
        }
    }

    /// The connection to serve, or `None` when it was refused (answered `503` in the background,
    /// or closed at once).
    pub(crate) fn admit(&self, stream: TcpStream) -> Option<Lingering> {
        match self.open.clone().try_acquire_owned() {
            Ok(permit) => Some(Lingering {
                stream: Some(stream),
                permit: Some(permit),
                linger: self.options.linger,
                linger_bytes: self.options.linger_bytes,
                write_stall: self.options.write_stall,
                stalled: None,
            }),
            Err(_) => {
                tracing::warn!(
                    max = self.options.max_connections,
                    "http: connection refused, at the connection cap"
                );
                if let Ok(permit) = self.refusing.clone().try_acquire_owned() {
                    tokio::spawn(async move {
                        refuse(stream).await;
                        drop(permit);
                    });
                }
                None
            }
        }
    }
}

/// The `503` of a refused connection, as bytes on the wire.
fn refusal_bytes() -> Vec<u8> {
    let answer = Answer::rpc_error(
        503,
        ErrorObject::new(
            ErrorCode::SERVER_ERROR,
            "Service Unavailable: too many connections",
        ),
    );
    let body = match answer.body {
        AnswerBody::Json(text) => text,
        _ => String::new(),
    };
    format!(
        "HTTP/1.1 503 Service Unavailable\r\n{}: {}\r\n{}: 1\r\nconnection: close\r\n{}: {}\r\n\r\n{body}",
        headers::CONTENT_TYPE,
        headers::APPLICATION_JSON,
        headers::RETRY_AFTER,
        headers::CONTENT_LENGTH,
        body.len()
    )
    .into_bytes()
}

async fn refuse(mut stream: TcpStream) {
    let written = tokio::time::timeout(REFUSAL_LINGER, stream.write_all(&refusal_bytes())).await;
    if matches!(written, Ok(Ok(()))) {
        linger(stream, REFUSAL_LINGER, REFUSAL_LINGER_BYTES).await;
    }
}

/// Shut down the sending side, then read and discard until the peer closes, `time` passes or
/// `bytes` were read; then the socket closes (dropped).
async fn linger(mut stream: TcpStream, time: Duration, bytes: u64) {
    let _ = stream.shutdown().await;
    let mut buf = [0u8; 8192];
    let mut left = bytes;
    let _ = tokio::time::timeout(time, async {
        while left > 0 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n as u64),
            }
        }
    })
    .await;
}

/// An admitted connection: the socket, and its place under the cap. Dropped (hyper is done
/// with it, or the WebSocket on it ended), it closes by lingering in the background and gives
/// its place back after.
#[derive(Debug)]
pub(crate) struct Lingering {
    stream: Option<TcpStream>,
    permit: Option<OwnedSemaphorePermit>,
    linger: Duration,
    linger_bytes: u64,
    write_stall: Duration,
    /// Since when a write waits for room (the deadline of [`ServeOptions::write_stall`]); `None`
    /// while writes proceed.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Lingering {
    fn stream(&mut self) -> io::Result<&mut TcpStream> {
        self.stream
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }

    /// A write's outcome `polled`, timed: pending for [`ServeOptions::write_stall`] in a row, it
    /// fails (`TimedOut`) and the connection ends; any progress restarts the clock.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() || self.write_stall.is_zero() {
            self.stalled = None;
            return polled;
        }
        let stall = self.write_stall;
        let deadline = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                tracing::debug!(
                    ?stall,
                    "http: no write to the client could proceed for the write stall (it stopped reading, or reads too slowly): connection ended"
                );
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no write to the client could proceed for the write stall",
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Lingering {
    fn drop(&mut self) {
        let (Some(stream), permit) = (self.stream.take(), self.permit.take()) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (time, bytes) = (self.linger, self.linger_bytes);
            runtime.spawn(async move {
                linger(stream, time, bytes).await;
                drop(permit);
            });
        }
    }
}

impl AsyncRead for Lingering {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(self.stream()?).poll_read(cx, buf)
    }
}

impl AsyncWrite for Lingering {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(self.stream()?).poll_write(cx, buf);
        self.timed(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(self.stream()?).poll_write_vectored(cx, bufs);
        self.timed(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Untimed: a socket's flush is always ready and says nothing of the client's reading.
        Pin::new(self.stream()?).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.stream()?).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_whole_503_with_a_json_rpc_error() {
        let text = String::from_utf8(refusal_bytes()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        assert!(head.contains("retry-after: 1") && head.contains("connection: close"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            (body["id"].clone(), body["error"]["code"].clone()),
            (serde_json::Value::Null, serde_json::json!(-32000))
        );
        assert_eq!(
            ServeOptions::default().max_connections,
            DEFAULT_MAX_CONNECTIONS
        );
    }
}
