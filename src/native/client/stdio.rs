//! The stdio client transport (seed `createStdioClientTransport`, clause 20; spec
//! `basic/transports`, stdio): spawn a server process and speak newline-delimited JSON-RPC over
//! its stdin/stdout.
//!
//! - `env`: when given, it **replaces** the parent's environment (spawn semantics).
//! - stderr stays visible (copied to ours verbatim, or with control characters escaped under
//!   [`StdioClientOptions::escape_stderr`]) and its last lines are remembered for error
//!   messages ([`StdioTransport::stderr_tail`]). Memory stays bounded whatever the child writes:
//!   a line longer than [`StdioClientOptions::max_stderr_line_bytes`] is still copied, in pieces,
//!   but remembered cut (marked `… (cut at N bytes)`), with a warning in the log.
//! - stdout is framed by the core [`LineDecoder`]: CRLF and a leading BOM are stripped, blank
//!   lines skipped, and a line that is not JSON is reported as a client `error` event and skipped.
//! - The child's exit closes the transport: every pending request fails at once with the exit
//!   status and the stderr tail — at its stdout's end, or, when a process it left behind still
//!   holds the pipe, once what it wrote has been read (at most 1 s after it exited).
//! - stdin is written by a task of its own from a bounded queue: a child that stops reading
//!   holds up only the senders waiting for room (each within its request's deadline), never
//!   the stdout reader (its own answers to the server are queued without waiting, at most
//!   [`MAX_QUEUED_ANSWER_BYTES`], else dropped and reported) and never `close`.
//! - The child runs in a process group of its own (Unix), so whatever it starts (a shell's
//!   children, a wrapper's server) is ended with it and no grandchild is orphaned.
//! - `close`: close stdin, wait up to [`StdioClientOptions::grace`], then SIGTERM the child's
//!   process group, wait again, then SIGKILL it. Once the child has exited, members of its group
//!   still alive get the same: SIGTERM, [`StdioClientOptions::grace`], SIGKILL. Dropped without
//!   `close`, the transport does the group part in the background (on the tokio runtime, when
//!   one is running). A supervisor task always awaits the child, so no zombie is left.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::client::{ClientError, ClientTransport, TransportSink};
use crate::wire::framing::{FrameRef, LineDecoder, DEFAULT_MAX_LINE_BYTES};
use crate::wire::jsonrpc::{JsonRpcBatchResponse, JsonRpcMessage};
use crate::BoxFuture;

/// How many stderr lines are remembered by default.
pub const DEFAULT_STDERR_LINES: usize = 20;
/// The longest stderr line kept whole by default: 8 KiB (longer lines are copied in pieces and
/// remembered cut).
pub const DEFAULT_MAX_STDERR_LINE_BYTES: usize = 8 * 1024;
/// How long `close` waits after each step (stdin closed, SIGTERM) by default: 2 000 ms.
pub const DEFAULT_CLOSE_GRACE_MS: u64 = 2_000;

/// Options for [`StdioTransport::new`] (seed `StdioClientTransportOptions`).
#[derive(Clone, Debug)]
pub struct StdioClientOptions {
    /// The program to run (looked up on `PATH`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The child's whole environment; `None` inherits ours.
    pub env: Option<Vec<(String, String)>>,
    /// The working directory; `None` inherits ours.
    pub cwd: Option<PathBuf>,
    /// How many stderr lines to remember (default 20).
    pub stderr_lines: usize,
    /// Whether the child's stderr is copied to ours (default `true`).
    pub forward_stderr: bool,
    /// Whether control characters in the copied stderr are escaped (`\u{1b}`, see
    /// [`escape_controls`](crate::native::terminal::escape_controls)) instead of copied raw
    /// (default `false`; the `orkestrel-mcp` CLI sets it).
    pub escape_stderr: bool,
    /// The longest stderr line kept whole, in bytes (default
    /// [`DEFAULT_MAX_STDERR_LINE_BYTES`]; at least 1): the bound on what a child's stderr costs.
    pub max_stderr_line_bytes: usize,
    /// How long `close` waits after closing stdin and after SIGTERM (default 2 000 ms), and
    /// how long what is left of the child's process group gets between SIGTERM and SIGKILL.
    pub grace: Duration,
}

impl StdioClientOptions {
    /// Run `command` with no arguments, inheriting the environment.
    pub fn new(command: impl Into<String>) -> Self {
        StdioClientOptions {
            command: command.into(),
            args: Vec::new(),
            env: None,
            cwd: None,
            stderr_lines: DEFAULT_STDERR_LINES,
            forward_stderr: true,
            escape_stderr: false,
            max_stderr_line_bytes: DEFAULT_MAX_STDERR_LINE_BYTES,
            grace: Duration::from_millis(DEFAULT_CLOSE_GRACE_MS),
        }
    }

    /// Set the arguments.
    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Replace the child's environment with exactly these variables.
    pub fn with_env(
        mut self,
        env: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) -> Self {
        self.env = Some(env.into_iter().map(|(k, v)| (k.into(), v.into())).collect());
        self
    }

    /// Set the working directory.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Do not copy the child's stderr to ours (it is still remembered).
    pub fn quiet(mut self) -> Self {
        self.forward_stderr = false;
        self
    }
}

/// The most lines queued for the child's stdin (a sender waits for room beyond it).
const STDIN_QUEUE: usize = 64;

/// The most bytes of the reader's own answers (to server requests it cannot serve) queued for
/// a child that does not read its stdin: 8 MiB. Beyond it an answer is dropped and reported, so
/// a server that floods requests and never reads cannot grow our memory or stop our reading.
pub const MAX_QUEUED_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// One line for the writer task, and where to say how its write went (`None`: an answer of the
/// reader's, which waits for nobody and counts against [`MAX_QUEUED_ANSWER_BYTES`]).
type Line = (String, Option<oneshot::Sender<std::io::Result<()>>>);

/// The way to the child's stdin: a queue the writer task drains. Nothing holds a lock while a
/// write waits on a full pipe, so a child that stops reading never blocks our stdout reader,
/// a request's deadline, or `close`.
#[derive(Clone)]
struct Stdin {
    lines: mpsc::Sender<Line>,
    /// Bytes of the reader's answers queued and not yet written.
    answers: Arc<AtomicUsize>,
}

impl Stdin {
    /// Queue `line` and wait until it is written (or the write failed, or stdin closed).
    async fn write(&self, line: String) -> std::io::Result<()> {
        let closed = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin is closed");
        let (done, written) = oneshot::channel();
        self.lines
            .send((line, Some(done)))
            .await
            .map_err(|_| closed())?;
        written.await.unwrap_or_else(|_| Err(closed()))
    }

    /// Queue the reader's answer to the server without waiting; `false` when it was dropped
    /// (the queue is full: the child does not read its stdin).
    fn answer(&self, line: String) -> bool {
        let bytes = line.len();
        if self.answers.load(Ordering::Relaxed) + bytes > MAX_QUEUED_ANSWER_BYTES {
            return false;
        }
        self.answers.fetch_add(bytes, Ordering::Relaxed);
        if self.lines.try_send((line, None)).is_err() {
            self.answers.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// The writer task: write each queued line and flush; a failed write fails that line's waiter
/// and every later one (the pipe is broken). It ends, dropping the pipe (the child's EOF), when
/// `close` fires — even in the middle of a write to a child that stopped reading — or when
/// every sender is gone.
async fn write_stdin(
    mut pipe: ChildStdin,
    mut lines: mpsc::Receiver<Line>,
    answers: Arc<AtomicUsize>,
    mut close: oneshot::Receiver<()>,
) {
    let mut broken = false;
    loop {
        let (mut line, done) = tokio::select! {
            biased;
            _ = &mut close => break,
            next = lines.recv() => match next {
                Some(next) => next,
                None => break,
            },
        };
        if done.is_none() {
            answers.fetch_sub(line.len(), Ordering::Relaxed);
        }
        let result = if broken {
            Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin is closed",
            ))
        } else {
            line.push('\n');
            let write = async {
                pipe.write_all(line.as_bytes()).await?;
                pipe.flush().await
            };
            tokio::select! {
                biased;
                _ = &mut close => break,
                result = write => result,
            }
        };
        broken |= result.is_err();
        if let Some(done) = done {
            let _ = done.send(result);
        }
    }
}

struct Running {
    pid: Option<u32>,
    stdin: Stdin,
    /// Fired by `close`: the writer task drops the pipe at once.
    close_stdin: oneshot::Sender<()>,
    exit: watch::Receiver<Option<ExitStatus>>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

/// A child-process [`ClientTransport`] (seed `StdioClientTransport`).
pub struct StdioTransport {
    options: StdioClientOptions,
    running: tokio::sync::Mutex<Option<Running>>,
    tail: Arc<Mutex<VecDeque<String>>>,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport")
            .field("command", &self.options.command)
            .field("args", &self.options.args)
            .finish_non_exhaustive()
    }
}

impl StdioTransport {
    /// A transport that spawns the process on `start`.
    pub fn new(options: StdioClientOptions) -> Self {
        StdioTransport {
            options,
            running: tokio::sync::Mutex::new(None),
            tail: Arc::new(Mutex::new(VecDeque::new())),
        }
    }

    /// The last stderr lines of the child (oldest first).
    pub fn stderr_tail(&self) -> Vec<String> {
        lock(&self.tail).iter().cloned().collect()
    }

    async fn spawn(&self, sink: TransportSink) -> Result<Running, ClientError> {
        let o = &self.options;
        let mut command = Command::new(&o.command);
        command
            .args(&o.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group (id = its pid): signals reach everything it starts.
        #[cfg(unix)]
        command.process_group(0);
        if let Some(env) = &o.env {
            command.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(cwd) = &o.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|e| {
            // The error of a working directory that is not one reads as the command's (the
            // `chdir` before `exec` fails with the same ENOENT / ENOTDIR / EACCES).
            let cwd = o.cwd.as_ref().filter(|cwd| !cwd.is_dir());
            match cwd {
                Some(cwd) => ClientError::closed(format!(
                    "cannot start {:?}: its working directory {} is not a directory ({e})",
                    o.command,
                    cwd.display()
                )),
                None => ClientError::closed(format!("cannot start {:?}: {e}", o.command)),
            }
        })?;
        let pid = child.id();
        let (lines, queued) = mpsc::channel(STDIN_QUEUE);
        let stdin = Stdin {
            lines,
            answers: Arc::new(AtomicUsize::new(0)),
        };
        let (close_stdin, close) = oneshot::channel();
        let writer = match child.stdin.take() {
            Some(pipe) => tokio::spawn(write_stdin(pipe, queued, stdin.answers.clone(), close)),
            None => tokio::spawn(async {}),
        };
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        lock(&self.tail).clear();
        let stderr_task = tokio::spawn(copy_stderr(
            stderr,
            self.tail.clone(),
            StderrCopy {
                keep: o.stderr_lines,
                forward: o.forward_stderr,
                escape: o.escape_stderr,
                max_line: o.max_stderr_line_bytes.max(1),
            },
        ));
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            // The supervisor owns the child and always reaps it.
            let status = child.wait().await;
            let _ = exit_tx.send(status.ok());
        });
        let reader = tokio::spawn(read_stdout(
            stdout,
            sink,
            stdin.clone(),
            stderr_task,
            exit.clone(),
            self.tail.clone(),
        ));
        Ok(Running {
            pid,
            stdin,
            close_stdin,
            exit,
            reader,
            writer,
        })
    }

    async fn shutdown(&self, running: Running) {
        let grace = self.options.grace;
        // Close stdin now, even while a write waits on a child that stopped reading.
        let _ = running.close_stdin.send(());
        let mut exit = running.exit.clone();
        if !wait_exit(&mut exit, grace).await {
            signal(running.pid, &exit, Signal::Term);
            if !wait_exit(&mut exit, grace).await {
                signal(running.pid, &exit, Signal::Kill);
                if !wait_exit(&mut exit, grace.max(Duration::from_secs(5))).await {
                    tracing::error!(pid = ?running.pid, "stdio client: the child survived SIGKILL");
                }
            }
        }
        end_group(running.pid, grace).await;
        running.reader.abort();
        running.writer.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

enum Signal {
    Term,
    Kill,
}

fn signal(pid: Option<u32>, exit: &watch::Receiver<Option<ExitStatus>>, which: Signal) {
    let Some(pid) = pid else { return };
    if exit.borrow().is_some() {
        return;
    }
    #[cfg(unix)]
    {
        use nix::sys::signal::{killpg, Signal as S};
        let Ok(raw) = i32::try_from(pid) else { return };
        let sig = match which {
            Signal::Term => S::SIGTERM,
            Signal::Kill => S::SIGKILL,
        };
        // The child leads its own group (see `spawn`): signal all of it.
        if let Err(e) = killpg(nix::unistd::Pid::from_raw(raw), sig) {
            tracing::debug!(pid, error = %e, "stdio client: kill failed");
        }
    }
    #[cfg(not(unix))]
    {
        let _ = which;
        tracing::warn!(
            pid,
            "stdio client: signals are not supported on this platform"
        );
    }
}

/// How often [`end_group`] looks whether the group is gone.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// After the child exited: end what is left of its process group (its own children) —
/// SIGTERM, up to `grace` for them to go, then SIGKILL.
async fn end_group(pid: Option<u32>, grace: Duration) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{killpg, Signal as S};
        let Some(raw) = pid.and_then(|p| i32::try_from(p).ok()) else {
            return;
        };
        let group = nix::unistd::Pid::from_raw(raw);
        // Signal "none" only asks whether any member is left.
        let alive = || killpg(group, None).is_ok();
        if !alive() {
            return;
        }
        tracing::debug!(pid = raw, "stdio client: ending the child's process group");
        let _ = killpg(group, S::SIGTERM);
        let gone = async {
            while alive() {
                tokio::time::sleep(GROUP_POLL).await;
            }
        };
        if tokio::time::timeout(grace, gone).await.is_err() {
            let _ = killpg(group, S::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = (pid, grace);
}

/// Wait until the child has exited, up to `limit`; `true` when it has.
async fn wait_exit(exit: &mut watch::Receiver<Option<ExitStatus>>, limit: Duration) -> bool {
    matches!(
        tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await,
        Ok(Ok(_))
    )
}

fn describe_exit(status: Option<ExitStatus>, tail: &Mutex<VecDeque<String>>) -> String {
    let mut cause = match status {
        Some(status) => format!("the server process exited ({status})"),
        None => "the server process closed its stdout".to_owned(),
    };
    let tail = lock(tail);
    if !tail.is_empty() {
        let last: Vec<&str> = tail
            .iter()
            .skip(tail.len().saturating_sub(5))
            .map(String::as_str)
            .collect();
        cause.push_str("; its stderr ended with: ");
        cause.push_str(&last.join(" | "));
    }
    cause
}

struct StderrCopy {
    keep: usize,
    forward: bool,
    escape: bool,
    max_line: usize,
}

/// Copy the child's stderr a line at a time (at most `max_line` bytes held), remembering the
/// last `keep` lines. The copied lines are gathered and written each time the read buffer
/// (8 KiB) is used up, or 64 KiB are gathered: a write to the process's stderr per line (a
/// blocking call off the runtime each time) kept a verbose child waiting on its full pipe.
async fn copy_stderr(
    stderr: Option<tokio::process::ChildStderr>,
    tail: Arc<Mutex<VecDeque<String>>>,
    how: StderrCopy,
) {
    let Some(stderr) = stderr else { return };
    let mut reader = BufReader::new(stderr);
    let mut out = tokio::io::stderr();
    let mut gathered = Vec::new();
    let mut line = Vec::new();
    // The current line passed `max_line`: its rest is copied, not remembered.
    let mut cut = false;
    loop {
        let (take, ends) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                let room = how.max_line - line.len();
                let window = &buf[..buf.len().min(room)];
                let (take, ends) = match window.iter().position(|&b| b == b'\n') {
                    Some(i) => (i + 1, true),
                    None => (window.len(), false),
                };
                line.extend_from_slice(&window[..take]);
                (take, ends)
            }
        };
        reader.consume(take);
        if ends || line.len() >= how.max_line {
            emit(&mut gathered, &tail, &how, &line, cut, ends);
            cut = !ends;
            line.clear();
        }
        if reader.buffer().is_empty() || gathered.len() >= COPY_CHUNK {
            copy_out(&mut out, &mut gathered).await;
        }
    }
    if !line.is_empty() {
        emit(&mut gathered, &tail, &how, &line, cut, true);
    }
    copy_out(&mut out, &mut gathered).await;
}

/// How much copied stderr is gathered before it is written, at most.
const COPY_CHUNK: usize = 64 * 1024;

/// Write what is gathered to the process's stderr.
async fn copy_out(out: &mut tokio::io::Stderr, gathered: &mut Vec<u8>) {
    if !gathered.is_empty() {
        let _ = out.write_all(gathered).await;
        let _ = out.flush().await;
        gathered.clear();
    }
}

/// Gather one line (or a `max_line` piece of a longer one) to copy and remember it unless it
/// continues a line already remembered cut.
fn emit(
    out: &mut Vec<u8>,
    tail: &Mutex<VecDeque<String>>,
    how: &StderrCopy,
    line: &[u8],
    continues: bool,
    ends: bool,
) {
    if how.forward {
        if how.escape {
            let text = String::from_utf8_lossy(line);
            out.extend_from_slice(crate::native::terminal::escape_controls(&text).as_bytes());
        } else {
            out.extend_from_slice(line);
        }
    }
    if continues || how.keep == 0 {
        return;
    }
    let mut text = String::from_utf8_lossy(line).trim_end().to_owned();
    if !ends {
        tracing::warn!(
            max_bytes = how.max_line,
            "stdio client: the child wrote a stderr line longer than the bound; it is remembered cut"
        );
        text.push_str(&format!(" … (cut at {} bytes)", how.max_line));
    }
    if !text.is_empty() {
        let mut tail = lock(tail);
        if tail.len() == how.keep {
            tail.pop_front();
        }
        tail.push_back(text);
    }
}

/// How long stdout is still read once the child has exited: 1 s.
const EXIT_DRAIN: Duration = Duration::from_secs(1);

async fn read_stdout(
    stdout: Option<tokio::process::ChildStdout>,
    sink: TransportSink,
    stdin: Stdin,
    stderr_task: JoinHandle<()>,
    mut exit: watch::Receiver<Option<ExitStatus>>,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    if let Some(mut stdout) = stdout {
        let mut decoder = LineDecoder::default();
        let mut buf = vec![0u8; 64 * 1024];
        // Set once the child has exited: what it wrote is still read, for at most
        // [`EXIT_DRAIN`], not what a process it left behind holding the pipe writes later
        // (such a grandchild kept the transport open, every request waiting out its deadline).
        let mut drain_until: Option<tokio::time::Instant> = None;
        loop {
            let read = match drain_until {
                None => tokio::select! {
                    read = stdout.read(&mut buf) => read,
                    _ = exit.wait_for(Option::is_some) => {
                        drain_until = Some(tokio::time::Instant::now() + EXIT_DRAIN);
                        continue;
                    }
                },
                Some(until) => match tokio::time::timeout_at(until, stdout.read(&mut buf)).await {
                    Ok(read) => read,
                    // What is left is another process's (a partial line of it is no frame).
                    Err(_) => {
                        decoder = LineDecoder::default();
                        break;
                    }
                },
            };
            let n = match read {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    sink.error(format!("reading the server's stdout failed: {e}"));
                    break;
                }
            };
            let mut chunk = &buf[..n];
            while let Some(frame) = decoder.frames(&mut chunk) {
                on_frame(frame, &sink, &stdin);
            }
        }
        if let Some(frame) = decoder.finish() {
            on_frame(frame.as_ref(), &sink, &stdin);
        }
    }
    // Let stderr drain so the cause carries the child's last words, then read the exit status.
    let _ = tokio::time::timeout(Duration::from_secs(1), stderr_task).await;
    let status = if wait_exit(&mut exit, Duration::from_secs(2)).await {
        *exit.borrow()
    } else {
        None
    };
    sink.closed(describe_exit(status, &tail));
}

/// Act on one frame of the child's stdout; an answer the reader owes the server is queued
/// without waiting (our reading never waits on the child's reading).
fn on_frame(frame: FrameRef<'_>, sink: &TransportSink, stdin: &Stdin) {
    let reply = match frame {
        FrameRef::Line(line) => sink.receive_text(line),
        FrameRef::TooLong(line) => sink.too_long(line, DEFAULT_MAX_LINE_BYTES),
    };
    if let Some(reply) = reply {
        if !stdin.answer(reply.to_json()) {
            sink.error(format!(
                "dropped an answer to the server: it is not reading its stdin ({MAX_QUEUED_ANSWER_BYTES} bytes of answers or {STDIN_QUEUE} lines wait)"
            ));
        }
    }
}

impl Drop for StdioTransport {
    /// Dropped without `close`: ask a still-running child and its process group to stop
    /// (SIGTERM; SIGKILL for what is left after the grace period); the supervisor task still
    /// reaps the child.
    fn drop(&mut self) {
        if let Some(running) = self.running.get_mut().take() {
            signal(running.pid, &running.exit, Signal::Term);
            running.reader.abort();
            // The rest of the group: SIGTERM, the grace period, SIGKILL (in the background).
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let (pid, grace) = (running.pid, self.options.grace);
                runtime.spawn(end_group(pid, grace));
            }
        }
    }
}

impl StdioTransport {
    /// Write one line to the child; a failed write is the transport's close (with the child's
    /// exit status when it has one).
    async fn send_line(&self, line: String) -> Result<(), ClientError> {
        let (stdin, mut exit) = {
            let running = self.running.lock().await;
            let running = running
                .as_ref()
                .ok_or_else(|| ClientError::closed("the server process is not running"))?;
            (running.stdin.clone(), running.exit.clone())
        };
        if let Err(e) = stdin.write(line).await {
            // The child is probably gone: give it a moment so the cause has its status.
            let status = if wait_exit(&mut exit, Duration::from_millis(500)).await {
                *exit.borrow()
            } else {
                None
            };
            let cause = match status {
                Some(_) => describe_exit(status, &self.tail),
                None => format!("writing to the server's stdin failed: {e}"),
            };
            return Err(ClientError::closed(cause));
        }
        Ok(())
    }
}

impl ClientTransport for StdioTransport {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let mut running = self.running.lock().await;
            if let Some(old) = running.take() {
                self.shutdown(old).await;
            }
            *running = Some(self.spawn(sink).await?);
            Ok(())
        })
    }

    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(self.send_line(message.to_json()))
    }

    /// One line: the batch's array.
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(self.send_line(batch.to_json()))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let running = self.running.lock().await.take();
            if let Some(running) = running {
                self.shutdown(running).await;
            }
        })
    }
}
