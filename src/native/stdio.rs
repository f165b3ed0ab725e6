//! The stdio server (seed clause 20, server side; spec
//! [stdio](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio)).
//!
//! Bytes are read up to `\n` and only then decoded; a trailing `\r` and a leading BOM are
//! stripped and blank lines skipped. Each line then goes to the connection body shared with
//! WebSocket ([`crate::server::connection`], driven by `native::connection`) under the stdio rules:
//! requests are dispatched concurrently, so a slow tool does not hold up a `ping` sent after it,
//! and at most `max_in_flight` run (reading pauses at the cap); replies are written by one writer
//! task, one whole line each, in completion order. A line that is not JSON gets `-32700` (id
//! `null`, or the request's when a whole request starts the line), a line over the size limit
//! `-32600` with id `null`; a response object or a broken notification gets no reply (it is
//! logged; JSON-RPC forbids answering either); other invalid messages get their JSON-RPC error. At
//! EOF the in-flight requests finish, their replies are flushed, and [`serve`] returns — within
//! the drain ([`StdioOptions::drain`], 10 s): then the calls still running are cancelled and what
//! is not written yet is dropped (a client that closed stdin is going away).

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::native::connection::{Driver, Output, Queued};
use crate::server::connection::{ConnectionOptions, DEFAULT_MAX_IN_FLIGHT};
use crate::server::McpServer;
use crate::wire::framing::{FrameRef, LineDecoder, DEFAULT_MAX_LINE_BYTES};

/// Options for [`serve_with`].
#[derive(Clone, Debug)]
pub struct StdioOptions {
    /// The longest accepted line in bytes (default 64 MiB); a longer one is discarded unread
    /// and answered with `-32600`, id `null`.
    pub max_line_bytes: usize,
    /// Requests running at once at most (default 256); reading pauses at the cap.
    pub max_in_flight: usize,
    /// When stdin ends (the client closed it: the spec's stdio shutdown), how long the calls in
    /// flight get to finish and be answered before they are cancelled and serving ends, what
    /// is still unwritten then dropped (at least 1 s more for the writer; default
    /// [`DEFAULT_DRAIN`], 10 s; `None`: as long as they take). Without a bound, one call that
    /// never ends, or a client that stopped reading stdout, kept a server whose client was gone
    /// running.
    pub drain: Option<Duration>,
}

/// How long calls in flight get to finish once stdin ends: 10 s (the HTTP and WebSocket
/// shutdown drain's default).
pub const DEFAULT_DRAIN: Duration = crate::native::shutdown::DEFAULT_DRAIN;

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            drain: Some(DEFAULT_DRAIN),
        }
    }
}

/// Serve `server` over `reader`/`writer` until EOF (seed `createStdioServer`).
///
/// # Errors
/// A read or write error of the underlying streams.
pub async fn serve<R, W>(server: McpServer, reader: R, writer: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(server, reader, writer, StdioOptions::default()).await
}

/// Serve the process's own stdin/stdout.
///
/// # Errors
/// As [`serve`].
///
/// When stdin and stdout are pipes (the usual case under an MCP client), they are reopened through
/// `/proc/self/fd` as non-blocking pipes, so reads need no blocking thread (several times the
/// throughput of `tokio::io::stdin`); a terminal, a file or another platform falls back to tokio's
/// stdin/stdout. Reopening leaves the parent's file descriptions (and their flags) untouched.
///
/// The serving runs on a task of its own, so that on a multi-threaded runtime reading, the
/// calls and writing stay on one worker thread (a `block_on` caller's thread would otherwise
/// hand every line to a worker and back); dropping the returned future ends it.
pub async fn serve_stdio(server: McpServer) -> io::Result<()> {
    serve_stdio_until(server, std::future::pending()).await
}

/// [`serve_stdio`] that also ends when `stop` completes, as when stdin ends: reading stops, the
/// calls in flight get [`StdioOptions::drain`] to be answered (then are cancelled), and what is
/// queued is written. (Dropping [`serve_stdio`]'s future instead drops the answers not written
/// yet: a bridge whose upstream went away left the calls it had failed unanswered.)
///
/// # Errors
/// As [`serve`].
pub async fn serve_stdio_until(
    server: McpServer,
    stop: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let options = StdioOptions::default();
    let mut serving = AbortOnDrop(tokio::spawn(async move {
        #[cfg(target_os = "linux")]
        if let Some((reader, writer)) = reopen_pipes() {
            tracing::debug!("stdio: serving over non-blocking pipes");
            return serve_until(server, reader, writer, options, stop).await;
        }
        serve_until(
            server,
            tokio::io::stdin(),
            tokio::io::stdout(),
            options,
            stop,
        )
        .await
    }));
    match (&mut serving.0).await {
        Ok(result) => result,
        Err(e) => Err(io::Error::other(e)),
    }
}

/// Aborts its task when dropped (the caller of [`serve_stdio`] stopped waiting for it).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// stdin and stdout reopened as non-blocking pipes, when both are pipes.
#[cfg(target_os = "linux")]
fn reopen_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;
    let is_fifo = |path: &str| {
        std::fs::metadata(path)
            .map(|m| m.file_type().is_fifo())
            .unwrap_or(false)
    };
    if !is_fifo("/proc/self/fd/0") || !is_fifo("/proc/self/fd/1") {
        return None;
    }
    let reader = pipe::OpenOptions::new()
        .open_receiver("/proc/self/fd/0")
        .ok()?;
    let writer = pipe::OpenOptions::new()
        .open_sender("/proc/self/fd/1")
        .ok()?;
    Some((reader, writer))
}

/// [`serve`] with options.
///
/// # Errors
/// As [`serve`].
pub async fn serve_with<R, W>(
    server: McpServer,
    reader: R,
    writer: W,
    options: StdioOptions,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_until(server, reader, writer, options, std::future::pending()).await
}

/// [`serve_with`] that also stops reading when `stop` completes (then ends as at EOF).
async fn serve_until<R, W>(
    server: McpServer,
    mut reader: R,
    writer: W,
    options: StdioOptions,
    stop: impl Future<Output = ()>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let mut stop = std::pin::pin!(stop);
    // Bounded both ways, so a client that stops reading stdout cannot grow our memory: replies
    // wait for room in the queue, requests in flight are capped, and reading stops until they
    // drain. A notification that finds the queue full is refused (`notify` returns `false`).
    let (tx, rx) = Output::new();
    let mut writer_task = tokio::spawn(write_lines(writer, rx));
    let rules = ConnectionOptions::stdio(options.max_in_flight);
    let mut conn = Driver::new(server, "stdio", rules, tx.clone());
    let mut decoder = LineDecoder::new(options.max_line_bytes);
    let mut buf = vec![0u8; 64 * 1024];
    // The writer ends early only when stdout failed (a closed pipe): no answer can reach the
    // client any more, so reading stops and the calls in flight are cancelled at once (read on,
    // each request would run a tool whose answer is thrown away, for as long as stdin stays
    // open).
    let mut write_failed = None;
    let mut stopped = false;
    let read_result = 'reading: loop {
        let read = tokio::select! {
            read = reader.read(&mut buf) => read,
            joined = &mut writer_task => {
                write_failed = Some(joined);
                break Ok(());
            }
            () = &mut stop => {
                tracing::debug!("stdio: told to stop; ending as at the end of stdin");
                stopped = true;
                break Ok(());
            }
        };
        let n = match read {
            Ok(0) => break Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(e),
        };
        let mut chunk = &buf[..n];
        while let Some(frame) = decoder.frames(&mut chunk) {
            // Waiting for a place among the calls in flight (a tool that never ends holds
            // one) still hears of a failed stdout.
            tokio::select! {
                () = conn.ready() => {}
                joined = &mut writer_task => {
                    write_failed = Some(joined);
                    break 'reading Ok(());
                }
                // Every place taken by long calls: `stop` still ends the reading.
                () = &mut stop => {
                    stopped = true;
                    break 'reading Ok(());
                }
            }
            // An answer waiting for room in the output (a client that stopped reading stdout):
            // `stop` still ends the reading (the drain below bounds the rest).
            tokio::select! {
                () = on_frame(frame, &mut conn, &tx, options.max_line_bytes) => {}
                () = &mut stop => {
                    stopped = true;
                    break 'reading Ok(());
                }
            }
        }
    };
    if let Some(joined) = write_failed {
        tracing::warn!("stdio: stdout cannot be written; the calls in flight are cancelled");
        conn.end(Some(Duration::ZERO)).await;
        let write_result = joined.map_err(io::Error::other)?;
        return read_result.and(write_result);
    }
    // A line cut short by `stop` is no message; one the end of stdin left unterminated is.
    if let Some(frame) = decoder.finish().filter(|_| !stopped) {
        conn.ready().await;
        on_frame(frame.as_ref(), &mut conn, &tx, options.max_line_bytes).await;
    }
    let ended = tokio::time::Instant::now();
    conn.end(options.drain).await;
    drop(tx);
    // The writer ends once every sender is gone and what was queued is written. That is bounded
    // too: a call run as a task keeps a sender, and a client that stopped reading stdout blocks
    // the write. It gets the rest of the drain, and at least FLUSH_GRACE.
    let joined = match options.drain {
        None => writer_task.await,
        Some(drain) => {
            let limit = drain.saturating_sub(ended.elapsed()).max(FLUSH_GRACE);
            match tokio::time::timeout(limit, &mut writer_task).await {
                Ok(joined) => joined,
                Err(_) => {
                    tracing::warn!(
                        ?limit,
                        "stdio: the output was not written within the drain (a call still running, or stdout not read); ending"
                    );
                    writer_task.abort();
                    Ok(Ok(()))
                }
            }
        }
    };
    let write_result = joined.map_err(io::Error::other)?;
    read_result.and(write_result)
}

/// How long the writer gets after the drain, at least, to write the last answers: 1 s.
const FLUSH_GRACE: Duration = Duration::from_secs(1);

async fn on_frame(frame: FrameRef<'_>, conn: &mut Driver, tx: &Output, max_line_bytes: usize) {
    let answer = match frame {
        FrameRef::Line(line) => conn.receive(line),
        FrameRef::TooLong(line) => conn.too_long(max_line_bytes, line),
    };
    if let Some(answer) = answer {
        tx.send(answer).await;
    }
}

/// The most bytes of queued answers gathered into one write: 64 KiB.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Write the queued answers, one line each: whatever is already queued when the writer wakes
/// goes out in one write (at most [`WRITE_BATCH_BYTES`] gathered), then a flush.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<Queued>,
) -> io::Result<()> {
    let mut batch = Vec::new();
    while let Some(line) = rx.recv().await {
        batch.clear();
        batch.extend_from_slice(line.as_bytes());
        batch.push(b'\n');
        while batch.len() < WRITE_BATCH_BYTES {
            let Ok(more) = rx.try_recv() else { break };
            batch.extend_from_slice(more.as_bytes());
            batch.push(b'\n');
        }
        writer.write_all(&batch).await?;
        writer.flush().await?;
        if batch.capacity() > 2 * WRITE_BATCH_BYTES {
            // One huge answer does not keep its buffer for the life of the connection.
            batch = Vec::new();
        }
    }
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerOptions;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn an_over_long_line_is_answered_unread_and_serving_goes_on() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"p\":\"{}\"}}}}\n",
            "x".repeat(200)
        );
        // A notification over the limit is not answered (JSON-RPC never answers one).
        let note = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{{\"p\":\"{}\"}}}}\n",
            "x".repeat(200)
        );
        let input = format!("{long}{note}{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n");
        let (writer, mut reader) = tokio::io::duplex(64 * 1024);
        let options = StdioOptions {
            max_line_bytes: 100,
            ..StdioOptions::default()
        };
        serve_with(server, input.as_bytes(), writer, options)
            .await
            .unwrap();
        let mut output = String::new();
        reader.read_to_string(&mut output).await.unwrap();
        let lines: Vec<serde_json::Value> = output
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{output}");
        // Not read, only skimmed for its id: `-32600` answering it, naming the limit.
        assert_eq!(lines[0]["id"], 1);
        assert_eq!(lines[0]["error"]["code"], -32600);
        assert!(lines[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("100-byte limit")));
        assert_eq!(
            lines[1],
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {}})
        );
    }

    /// Sets its flag when dropped: the call holding it was cancelled (or ended).
    struct Dropped(std::sync::Arc<std::sync::atomic::AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}

    /// Once stdin ends, the calls in flight get the drain to finish: a quick one is answered, one
    /// that never ends is cancelled when the drain is over, and serving ends (a server whose
    /// client went away does not run on).
    #[tokio::test]
    async fn at_the_end_of_stdin_a_call_that_never_ends_is_cancelled_after_the_drain() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let cancelled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = cancelled.clone();
        server
            .tools()
            .add(crate::Tool::new("forever", move |_: Empty| {
                let guard = Dropped(flag.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<Result<String, String>>().await
                }
            }));
        server
            .tools()
            .add(crate::Tool::new("soon", |_: Empty| async {
                tokio::task::yield_now().await;
                Ok::<_, String>("done")
            }));
        let call = |id: u32, name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
            )
        };
        let input = format!(
            "{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            call(1, "forever"),
            call(2, "soon"),
        );
        let (writer, mut output) = tokio::io::duplex(64 * 1024);
        serve_with_a_short_drain(server, &input, writer).await;
        assert!(cancelled.load(std::sync::atomic::Ordering::SeqCst));
        let mut text = String::new();
        output.read_to_string(&mut text).await.unwrap();
        let ids: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].clone())
            .collect();
        assert_eq!(ids, [serde_json::json!(0), serde_json::json!(2)], "{text}");
    }

    /// Once stdout cannot be written (its reader closed the pipe) serving ends, though stdin
    /// stays open: the calls in flight are cancelled and the write error is returned (it read
    /// on and ran every request, throwing each answer away, until stdin closed).
    #[tokio::test]
    async fn a_closed_stdout_ends_serving_and_cancels_the_calls_in_flight() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let cancelled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = cancelled.clone();
        let (started, mut running) = tokio::sync::mpsc::unbounded_channel();
        server
            .tools()
            .add(crate::Tool::new("forever", move |_: Empty| {
                let guard = Dropped(flag.clone());
                let _ = started.send(());
                async move {
                    let _guard = guard;
                    std::future::pending::<Result<String, String>>().await
                }
            }));
        let (mut input, reader) = tokio::io::duplex(4096);
        let (writer, output) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(serve_with(server, reader, writer, StdioOptions::default()));
        input
            .write_all(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
            .await
            .unwrap();
        input.write_all(b"\n").await.unwrap();
        input
            .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever","arguments":{}}}"#)
            .await
            .unwrap();
        input.write_all(b"\n").await.unwrap();
        tokio::time::timeout(Duration::from_secs(20), running.recv())
            .await
            .expect("the call starts")
            .expect("the call runs");
        drop(output);
        // An answer to write finds the pipe closed.
        input
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(20), serving)
            .await
            .expect("serving ends with stdin still open")
            .unwrap();
        assert_eq!(ended.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert!(cancelled.load(std::sync::atomic::Ordering::SeqCst));
        drop(input);
    }

    /// A client that closed stdin and does not read stdout does not hold the server either:
    /// the writer is bounded by the drain too.
    #[tokio::test]
    async fn at_the_end_of_stdin_a_stdout_nobody_reads_does_not_hold_serving() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let mut input = String::new();
        for id in 0..100 {
            input.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
            ));
        }
        let (writer, _unread_output) = tokio::io::duplex(64);
        serve_with_a_short_drain(server, &input, writer).await;
    }

    /// Serve `input` to its end with a 50 ms drain; fails unless serving ends (well within 20 s).
    async fn serve_with_a_short_drain(
        server: McpServer,
        input: &str,
        writer: tokio::io::DuplexStream,
    ) {
        let options = StdioOptions {
            drain: Some(Duration::from_millis(50)),
            ..StdioOptions::default()
        };
        tokio::time::timeout(
            Duration::from_secs(20),
            serve_with(server, input.as_bytes(), writer, options),
        )
        .await
        .expect("serving ends once the drain is over")
        .unwrap();
    }

    #[tokio::test]
    async fn a_client_that_stops_reading_stdout_stops_being_read() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let (mut input, reader) = tokio::io::duplex(4096);
        let (writer, _unread_output) = tokio::io::duplex(64);
        let options = StdioOptions {
            max_in_flight: 4,
            ..StdioOptions::default()
        };
        let serving = tokio::spawn(serve_with(server, reader, writer, options));
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        let mut accepted = 0usize;
        for _ in 0..20_000 {
            let write =
                tokio::time::timeout(std::time::Duration::from_millis(500), input.write_all(line));
            if write.await.is_err() {
                break; // the server stopped reading: backpressure reached the client
            }
            accepted += 1;
        }
        assert!(
            accepted < 20_000,
            "the server kept reading while nobody read its output"
        );
        serving.abort();
    }
}
