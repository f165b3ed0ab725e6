//! The one scripted-transport harness of the client's unit tests (`tests.rs`, `era_tests.rs`,
//! `features_tests.rs`): a [`Scripted`] transport whose "server" is the test, timers that fire
//! only when the test says so ([`manual_sleep`], [`Timers`]), background tasks the test runs
//! when it chooses ([`Tasks`]), and [`yield_now`]. No I/O, no runtime, no wall clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::executor::block_on;
use futures::future;
use futures::StreamExt;
use serde_json::{json, Value};

use crate::client::{ClientError, ClientTransport, SinkReply, Sleep, Spawn, TransportSink};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcBatchResponse, JsonRpcMessage, JsonRpcRequest};
use crate::BoxFuture;

/// What a script answers to one request.
pub(crate) enum Reply {
    /// A result response.
    Result(Value),
    /// An error response with this error object.
    Error(Value),
    /// A non-2xx HTTP status with this body (only through `send_modern`; on a plain `send` the
    /// body is delivered as a message).
    Status(u16, Value),
    /// No answer at all.
    Silence,
    /// Deliver these messages and send no response of its own.
    Notify(Vec<Value>),
    /// Deliver these notifications, then the result.
    After(Vec<Value>, Value),
}

/// A script: `(method, params, how many messages of this method were sent so far)` → reply.
pub(crate) type ScriptFn = Box<dyn Fn(&str, &Value, usize) -> Reply + Send + Sync>;

/// Every message the client wrote, as JSON, with the headers it came with (`None`: plain `send`).
pub(crate) type Log = Arc<Mutex<Vec<(Value, Option<Vec<(String, String)>>)>>>;

/// A transport whose "server" is the test. It records every message three ways: [`Scripted::log`]
/// (JSON and headers), [`Scripted::sent`] (the messages), and a queue read in order by
/// [`Scripted::next`]. With a script, requests are answered synchronously inside `send`;
/// without, the test answers through [`Scripted::deliver`].
pub(crate) struct Scripted {
    http: bool,
    script: Option<ScriptFn>,
    sink: Mutex<Option<TransportSink>>,
    log: Log,
    sent: Mutex<Vec<JsonRpcMessage>>,
    queue: mpsc::UnboundedSender<JsonRpcMessage>,
    unread: futures::lock::Mutex<mpsc::UnboundedReceiver<JsonRpcMessage>>,
    send_error: Mutex<Option<ClientError>>,
    closes: AtomicUsize,
    /// Every batch written with `send_batch`, in order (not in `sent` nor the queue).
    batches: Mutex<Vec<JsonRpcBatchResponse>>,
}

impl Default for Scripted {
    fn default() -> Self {
        Scripted::build(false, None)
    }
}

impl Scripted {
    fn build(http: bool, script: Option<ScriptFn>) -> Self {
        let (queue, unread) = mpsc::unbounded();
        Scripted {
            http,
            script,
            sink: Mutex::new(None),
            log: Arc::new(Mutex::new(Vec::new())),
            sent: Mutex::new(Vec::new()),
            queue,
            unread: futures::lock::Mutex::new(unread),
            send_error: Mutex::new(None),
            closes: AtomicUsize::new(0),
            batches: Mutex::new(Vec::new()),
        }
    }

    /// A transport answering from `script`; `http`: it carries headers (`send_modern`). Its log.
    pub(crate) fn new(
        http: bool,
        script: impl Fn(&str, &Value, usize) -> Reply + Send + Sync + 'static,
    ) -> (Self, Log) {
        let transport = Scripted::build(http, Some(Box::new(script)));
        let log = transport.log.clone();
        (transport, log)
    }

    /// The sink the client gave at `start`.
    pub(crate) fn sink(&self) -> TransportSink {
        self.sink.lock().unwrap().clone().expect("started")
    }

    /// Deliver one incoming message (or batch) to the client; the messages it answers with at
    /// once (those of an array, one by one).
    pub(crate) fn deliver(&self, value: Value) -> Vec<JsonRpcMessage> {
        self.sink()
            .receive(value)
            .map(SinkReply::into_messages)
            .unwrap_or_default()
    }

    /// Deliver one incoming message (or batch) to the client; what it answers with at once, as
    /// the transport would write it.
    pub(crate) fn deliver_reply(&self, value: Value) -> Option<SinkReply> {
        self.sink().receive(value)
    }

    /// Every batch written with `send_batch` so far, forgetting them.
    pub(crate) fn take_batches(&self) -> Vec<JsonRpcBatchResponse> {
        std::mem::take(&mut *self.batches.lock().unwrap())
    }

    /// Every message sent so far.
    pub(crate) fn sent(&self) -> Vec<JsonRpcMessage> {
        self.sent.lock().unwrap().clone()
    }

    /// Every message sent so far, forgetting them.
    pub(crate) fn take_sent(&self) -> Vec<JsonRpcMessage> {
        std::mem::take(&mut *self.sent.lock().unwrap())
    }

    /// The next message not yet read by `next` (waits for it).
    pub(crate) async fn next(&self) -> JsonRpcMessage {
        self.unread
            .lock()
            .await
            .next()
            .await
            .expect("the client sent a message")
    }

    /// The next unread message, which must be a `method` request.
    pub(crate) async fn request(&self, method: &str) -> JsonRpcRequest {
        match self.next().await {
            JsonRpcMessage::Request(r) if r.method == method => r,
            other => panic!("expected a {method} request, got {other:?}"),
        }
    }

    /// The unread messages sent so far, now read.
    pub(crate) fn unread_now(&self) -> Vec<JsonRpcMessage> {
        let mut unread = self.unread.try_lock().unwrap();
        std::iter::from_fn(|| unread.try_recv().ok()).collect()
    }

    /// Make every later `send` fail with `error` (recording nothing), or succeed again (`None`).
    pub(crate) fn fail_sends(&self, error: Option<ClientError>) {
        *self.send_error.lock().unwrap() = error;
    }

    /// How many times the client closed the transport.
    pub(crate) fn closes(&self) -> usize {
        self.closes.load(Ordering::SeqCst)
    }

    fn exchange(
        &self,
        message: JsonRpcMessage,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        if let Some(error) = self.send_error.lock().unwrap().clone() {
            return Err(error);
        }
        let value: Value = serde_json::from_str(&message.to_json()).unwrap();
        let n = {
            let mut log = self.log.lock().unwrap();
            log.push((value.clone(), headers.clone()));
            log.iter()
                .filter(|(v, _)| v["method"] == value["method"])
                .count()
        };
        self.sent.lock().unwrap().push(message.clone());
        let _ = self.queue.unbounded_send(message.clone());
        let Some(script) = &self.script else {
            return Ok(());
        };
        let JsonRpcMessage::Request(request) = message else {
            return Ok(());
        };
        let id = json!(request.id);
        let sink = self.sink();
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        match script(&request.method, &params, n) {
            Reply::Result(r) => {
                sink.receive(json!({"jsonrpc":"2.0","id":id,"result":r}));
            }
            Reply::Error(e) => {
                sink.receive(json!({"jsonrpc":"2.0","id":id,"error":e}));
            }
            Reply::Status(status, body) if headers.is_some() => {
                let error = body
                    .get("error")
                    .cloned()
                    .and_then(|e| serde_json::from_value::<ErrorObject>(e).ok());
                return Err(ClientError::HttpStatus {
                    status,
                    error,
                    detail: format!("HTTP {status}: {body}"),
                });
            }
            Reply::Status(_, body) => {
                sink.receive(body);
            }
            Reply::Silence => {}
            Reply::After(values, r) => {
                for v in values {
                    sink.receive(v);
                }
                sink.receive(json!({"jsonrpc":"2.0","id":id,"result":r}));
            }
            Reply::Notify(values) => {
                for v in values {
                    sink.receive(v);
                }
            }
        }
        Ok(())
    }
}

impl ClientTransport for Scripted {
    fn start(&self, sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        *self.sink.lock().unwrap() = Some(sink);
        Box::pin(async { Ok(()) })
    }
    fn send(&self, message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        let r = self.exchange(message, None);
        Box::pin(async move { r })
    }
    fn send_modern(
        &self,
        message: JsonRpcMessage,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        let r = self.exchange(message, Some(headers));
        Box::pin(async move { r })
    }
    fn uses_headers(&self) -> bool {
        self.http
    }
    fn send_batch(&self, batch: JsonRpcBatchResponse) -> BoxFuture<'_, Result<(), ClientError>> {
        if let Some(e) = self.send_error.lock().unwrap().clone() {
            return Box::pin(async move { Err(e) });
        }
        self.batches.lock().unwrap().push(batch);
        Box::pin(async { Ok(()) })
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        self.closes.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

/// A request/response transport whose `send` never completes (an HTTP exchange in flight).
pub(crate) struct Stuck;

impl ClientTransport for Stuck {
    fn start(&self, _sink: TransportSink) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async { Ok(()) })
    }
    fn send(&self, _message: JsonRpcMessage) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(future::pending())
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Yield once to the executor (waking ourselves so we are polled again).
pub(crate) async fn yield_now() {
    let mut yielded = false;
    future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}

/// A timer that fires at once for a zero duration and never otherwise: deadlines are
/// triggered by the test, never by the wall clock.
pub(crate) fn manual_sleep() -> Sleep {
    Arc::new(|d: Duration| -> BoxFuture<'static, ()> {
        if d.is_zero() {
            Box::pin(future::ready(()))
        } else {
            Box::pin(future::pending())
        }
    })
}

/// A live timer: its duration and the switch that fires it.
type Timer = (Duration, oneshot::Sender<()>);

/// Timers the test fires by duration; nothing expires on its own.
#[derive(Clone, Default)]
pub(crate) struct Timers {
    timers: Arc<Mutex<Vec<Timer>>>,
}

impl Timers {
    /// The `Sleep` to give the client: each call makes a timer of that duration.
    pub(crate) fn sleep(&self) -> Sleep {
        let timers = self.timers.clone();
        Arc::new(move |d| -> BoxFuture<'static, ()> {
            let (tx, rx) = oneshot::channel();
            timers.lock().unwrap().push((d, tx));
            Box::pin(async move {
                if rx.await.is_err() {
                    future::pending::<()>().await;
                }
            })
        })
    }
    /// Fire every live timer of duration `d`; how many fired.
    pub(crate) fn fire(&self, d: Duration) -> usize {
        let mut timers = self.timers.lock().unwrap();
        let (due, rest): (Vec<_>, Vec<_>) = timers.drain(..).partition(|(t, _)| *t == d);
        *timers = rest;
        due.into_iter()
            .filter_map(|(_, tx)| tx.send(()).ok())
            .count()
    }
    /// How many timers of duration `d` are still awaited.
    pub(crate) fn live(&self, d: Duration) -> usize {
        self.timers
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, tx)| *t == d && !tx.is_canceled())
            .count()
    }
}

/// Background tasks the test runs when it chooses.
#[derive(Clone, Default)]
pub(crate) struct Tasks(Arc<Mutex<Vec<BoxFuture<'static, ()>>>>);

impl Tasks {
    /// The `Spawn` to give the client: it queues the task.
    pub(crate) fn spawner(&self) -> Spawn {
        let tasks = self.0.clone();
        Arc::new(move |task| tasks.lock().unwrap().push(task))
    }
    /// Run every queued task to completion; how many ran.
    pub(crate) fn run(&self) -> usize {
        let tasks: Vec<_> = self.0.lock().unwrap().drain(..).collect();
        let n = tasks.len();
        for task in tasks {
            block_on(task);
        }
        n
    }
}
