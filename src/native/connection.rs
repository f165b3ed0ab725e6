//! The tokio host of a core [`Connection`]: one body for the stdio and WebSocket servers.
//!
//! The core decides what each incoming message is and what to write back; [`Driver`] runs the
//! dispatched calls on a [`JoinSet`], puts their answers and the connection's pushed messages on
//! one bounded output queue, pauses input at the in-flight limit when the rules say so, and at the
//! end drains or cancels what is still running. The transports keep only their I/O: stdio turns
//! pipe bytes into lines and writes the queue to stdout; WebSocket turns frames into text and
//! writes the queue (and its close frames) to the socket.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::server::connection::{AtEnd, Connection, ConnectionOptions, Parked, Received};
use crate::server::context::Outbound;
use crate::server::McpServer;
use crate::wire::framing::Overlong;
use crate::wire::jsonrpc::{JsonRpcBatchResponse, JsonRpcResponse};

/// Messages waiting for the writer at most: answers then wait for room, a pushed message
/// (notification, server→client request) is refused (`Outbound` returns `false`).
pub(crate) const OUTPUT_QUEUE: usize = 1024;

/// Bytes of messages waiting for the writer at most, per connection: 64 MiB (a larger message
/// takes the whole budget). Counted as well as [`OUTPUT_QUEUE`]: a peer that stops reading
/// and sends small requests with large answers (`tools/list`, a resource) cannot make the
/// queue hold a thousand of them.
pub(crate) const OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// One queued message: its text, and the share of its connection's output budget it holds
/// until the writer drops it.
pub(crate) struct Queued {
    pub(crate) text: String,
    _bytes: OwnedSemaphorePermit,
}

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text.fmt(f)
    }
}

impl std::fmt::Display for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq<&str> for Queued {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl std::ops::Deref for Queued {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

/// A connection's output queue: at most [`OUTPUT_QUEUE`] messages and [`OUTPUT_BYTES`] bytes.
#[derive(Clone)]
pub(crate) struct Output {
    tx: mpsc::Sender<Queued>,
    bytes: Arc<Semaphore>,
    budget: usize,
}

/// Room for one message in an [`Output`]: a place and its bytes.
pub(crate) struct Room<'a> {
    slot: mpsc::Permit<'a, Queued>,
    bytes: OwnedSemaphorePermit,
}

impl Room<'_> {
    /// Queue `text` in the room taken for it.
    pub(crate) fn send(self, text: String) {
        self.slot.send(Queued {
            text,
            _bytes: self.bytes,
        });
    }
}

/// Why there is no room now.
#[derive(Debug)]
pub(crate) enum NoRoom {
    /// Full (places or bytes): wait, or refuse.
    Full,
    /// The writer is gone.
    Closed,
}

impl Output {
    /// A queue of [`OUTPUT_QUEUE`] messages and [`OUTPUT_BYTES`] bytes, and its receiving end.
    pub(crate) fn new() -> (Output, mpsc::Receiver<Queued>) {
        Output::with_limits(OUTPUT_QUEUE, OUTPUT_BYTES)
    }

    /// A queue of `places` messages and `budget` bytes.
    pub(crate) fn with_limits(places: usize, budget: usize) -> (Output, mpsc::Receiver<Queued>) {
        let (tx, rx) = mpsc::channel(places);
        let output = Output {
            tx,
            bytes: Arc::new(Semaphore::new(budget)),
            budget,
        };
        (output, rx)
    }

    /// The permits a message of `len` bytes takes: its length, at most the whole budget.
    fn cost(&self, len: usize) -> u32 {
        u32::try_from(len.min(self.budget)).unwrap_or(u32::MAX)
    }

    /// Room for a message of `len` bytes now.
    pub(crate) fn try_room(&self, len: usize) -> Result<Room<'_>, NoRoom> {
        let bytes = self
            .bytes
            .clone()
            .try_acquire_many_owned(self.cost(len))
            .map_err(|_| NoRoom::Full)?;
        let slot = self.tx.try_reserve().map_err(|e| match e {
            mpsc::error::TrySendError::Full(()) => NoRoom::Full,
            mpsc::error::TrySendError::Closed(()) => NoRoom::Closed,
        })?;
        Ok(Room { slot, bytes })
    }

    /// Room for a message of `len` bytes, once there is; `None` when the writer is gone.
    pub(crate) async fn room(&self, len: usize) -> Option<Room<'_>> {
        let bytes = self
            .bytes
            .clone()
            .acquire_many_owned(self.cost(len))
            .await
            .ok()?;
        let slot = self.tx.reserve().await.ok()?;
        Some(Room { slot, bytes })
    }

    /// Queue `text` now; `false` when there is no room (or no writer).
    pub(crate) fn try_send(&self, text: String) -> bool {
        match self.try_room(text.len()) {
            Ok(room) => {
                room.send(text);
                true
            }
            Err(_) => false,
        }
    }

    /// Queue `text` once there is room; `false` when the writer is gone.
    pub(crate) async fn send(&self, text: String) -> bool {
        match self.room(text.len()).await {
            Some(room) => {
                room.send(text);
                true
            }
            None => false,
        }
    }
}

/// One connection being served: the core's rules, the calls in flight, the output queue.
pub(crate) struct Driver {
    conn: Connection,
    tasks: JoinSet<()>,
    out: Output,
    /// A batch waiting for places ([`Received::Wait`]): nothing more is read until it is taken.
    parked: Option<Parked>,
}

/// An answer a call yields, as the text written.
trait Reply: Send + 'static {
    fn into_json(self) -> String;
}

impl Reply for JsonRpcResponse {
    fn into_json(self) -> String {
        self.to_json()
    }
}

impl Reply for JsonRpcBatchResponse {
    fn into_json(self) -> String {
        self.to_json()
    }
}

impl Driver {
    /// A connection of `server` (scope `{label}-{n}`) whose answers and pushed messages, as JSON
    /// text, go to `out`.
    pub(crate) fn new(
        server: McpServer,
        label: &'static str,
        options: ConnectionOptions,
        out: Output,
    ) -> Self {
        let outbound: Outbound = {
            let tx = out.clone();
            std::sync::Arc::new(move |m| {
                let sent = tx.try_send(m.to_json());
                if !sent {
                    tracing::debug!("{label}: output queue full or closed; message refused");
                }
                sent
            })
        };
        Driver {
            conn: Connection::new(server, label, outbound, options),
            tasks: JoinSet::new(),
            out,
            parked: None,
        }
    }

    /// Run the connection's requests as `identity` ([`Connection::set_identity`]).
    pub(crate) fn set_identity(
        &mut self,
        identity: Option<std::sync::Arc<crate::http::identity::Identity>>,
    ) {
        self.conn.set_identity(identity);
    }

    /// Wait until the next message may be taken: finished calls are reaped, a batch waiting
    /// for places is taken once they are free, and, while the rules pause input at the
    /// in-flight limit, this waits until the connection is readable again (a call completed,
    /// or every call in flight now waits for the client).
    pub(crate) async fn ready(&mut self) {
        self.take_parked().await;
        loop {
            while self.tasks.try_join_next().is_some() {}
            if self.conn.accepts_input() || self.conn.is_closing() {
                return;
            }
            tokio::select! {
                joined = self.tasks.join_next() => if joined.is_none() { return },
                () = self.conn.readable() => {}
            }
        }
    }

    /// Take the batch waiting for places, once they are free (or the connection closes).
    async fn take_parked(&mut self) {
        while let Some(parked) = self.parked.take() {
            while self.tasks.try_join_next().is_some() {}
            match self.conn.resume(parked) {
                Received::Wait(parked) => {
                    // A place frees when a call ends (its task ends, or it drops its place
                    // once its answer has room in the queue).
                    tokio::select! {
                        _ = self.tasks.join_next() => {}
                        () = self.conn.readable_for(&parked) => {}
                    }
                    self.parked = Some(parked);
                }
                received => {
                    if let Some(answer) = self.take(received) {
                        // Written with backpressure, as the caller of `receive` writes.
                        self.out.send(answer).await;
                    }
                }
            }
        }
    }

    /// Take one message (a line, a text frame). A dispatched call runs in the background and its
    /// answer goes to the output queue; an answer due at once is returned, as JSON text, for the
    /// caller to write. A batch that must wait for places is kept, and taken by the next
    /// [`Driver::ready`] (or [`Driver::end`]), before anything else is read.
    ///
    /// Every call is first polled once here: one that is done at once (a notification, a
    /// response, a `ping`, a tool that does not wait) is answered without a task or a thread
    /// switch, its answer put in the output queue behind the messages the call itself sent
    /// (progress, logs: they come before its response). Only a call that would wait gets a
    /// task, so a slow tool still does not hold up a `ping` sent after it.
    pub(crate) fn receive(&mut self, bytes: &[u8]) -> Option<String> {
        let received = self.conn.receive(bytes);
        self.take(received)
    }

    /// A message over the host's `limit` in bytes was discarded unread: its answer, as JSON
    /// text, for the caller to write ([`Connection::too_long`]).
    pub(crate) fn too_long(&mut self, limit: usize, line: &Overlong) -> Option<String> {
        let received = self.conn.too_long(limit, line);
        self.take(received)
    }

    /// Act on what the connection decided about one message.
    fn take(&mut self, received: Received) -> Option<String> {
        match received {
            Received::Nothing => None,
            Received::Answer(response) => Some(response.to_json()),
            Received::Dispatch(call) => {
                let request = call.is_request();
                self.run(call, request)
            }
            Received::Batch(call) => {
                let places = call.holds_places();
                self.run(call, places)
            }
            Received::Wait(parked) => {
                self.parked = Some(parked);
                None
            }
        }
    }

    /// Drive a call (`holds_place`: it holds places in the in-flight set until dropped): its
    /// answer goes to the output queue, and the call is dropped once the answer has room there.
    /// An answer of a call that holds no place and finds the queue full is returned for the
    /// caller to write (with backpressure: no task waits for room without a place).
    fn run<C, R>(&mut self, mut call: C, holds_place: bool) -> Option<String>
    where
        C: Future<Output = Option<R>> + Unpin + Send + 'static,
        R: Reply,
    {
        // A notification or a response is handled at once (cancelling, resolving a
        // server→client request): no task per message, so a flood of them costs no
        // memory beyond the message read. A request done at once leaves the in-flight
        // set here (the call is dropped) and its answer goes to the caller's writer.
        // A handler's panic is the core's to answer (`-32603` with the request's id,
        // `server::answer`); one that escapes it here (outside any handler) ends the
        // call unanswered, as a panicking task would, and the connection goes on.
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (&mut call).now_or_never()));
        match polled {
            Ok(Some(None)) => return None,
            Ok(Some(Some(answer))) => {
                // Through the queue the call's own messages (progress, logs) went to,
                // so its answer never overtakes them (spec: notifications about a
                // request come before its response).
                let text = answer.into_json();
                match self.out.try_room(text.len()) {
                    Ok(room) => {
                        drop(call);
                        room.send(text);
                    }
                    Err(NoRoom::Full) if !holds_place => return Some(text),
                    Err(NoRoom::Full) => {
                        // It waits for room in a task, still in flight until then.
                        let out = self.out.clone();
                        self.tasks.spawn(async move {
                            if let Some(room) = out.room(text.len()).await {
                                drop(call);
                                room.send(text);
                            }
                        });
                    }
                    Err(NoRoom::Closed) => {}
                }
                return None;
            }
            Ok(None) => {}
            Err(_) => {
                tracing::error!("a call panicked outside its handler; it gets no answer");
                return None;
            }
        }
        let out = self.out.clone();
        self.tasks.spawn(async move {
            if let Some(answer) = (&mut call).await {
                // The request leaves the in-flight set once its answer has room in the
                // queue, and before the writer can see it (so a peer that has read the
                // answer finds the place free).
                let text = answer.into_json();
                if let Some(room) = out.room(text.len()).await {
                    drop(call);
                    room.send(text);
                }
            }
        });
        None
    }

    /// The server is shutting down: refuse new requests, end listen streams, keep taking the
    /// answers calls in flight may wait on ([`Connection::drain`]).
    pub(crate) fn drain(&mut self) {
        self.conn.drain();
    }

    /// Requests dispatched and not yet answered.
    pub(crate) fn in_flight(&self) -> usize {
        self.conn.in_flight()
    }

    /// Take no more messages (a close was sent).
    pub(crate) fn close(&mut self) {
        self.conn.close();
    }

    /// The input ended: drain or cancel the calls in flight (as the rules say), then end the
    /// connection's scope. A drain lasts at most `drain` (`None`: until every call is
    /// answered); the calls still running then are cancelled.
    pub(crate) async fn end(mut self, drain: Option<std::time::Duration>) {
        match self.conn.at_end() {
            AtEnd::Drain => {
                // A listen stream never ends by itself: end it (answered) so the drain ends,
                // before the drain's clock runs.
                self.conn.end_streams();
                let drained = async {
                    // A batch read before the end still runs: taken once it has places (and a
                    // listen stream it opens ended as well).
                    self.take_parked().await;
                    self.conn.end_streams();
                    while self.tasks.join_next().await.is_some() {}
                };
                let finished = match drain {
                    Some(limit) => tokio::time::timeout(limit, drained).await.is_ok(),
                    None => {
                        drained.await;
                        true
                    }
                };
                if !finished {
                    tracing::warn!(
                        calls = self.tasks.len(),
                        ?drain,
                        "the input ended; the calls still running after the drain are cancelled"
                    );
                    self.tasks.abort_all();
                }
            }
            AtEnd::Cancel => self.tasks.abort_all(),
        }
        // The cancelled calls are gone (their futures dropped) when this returns, unless one
        // does not reach an await point within a bound.
        let gone = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(CANCELLED_GONE_WITHIN, gone)
            .await
            .is_err()
        {
            tracing::warn!("a cancelled call did not stop within 1 s; left to end by itself");
        }
        // Dropping the connection ends its scope.
    }
}

/// How long [`Driver::end`] waits for the calls it cancelled to be dropped: 1 s.
const CANCELLED_GONE_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    /// The output queue holds at most its byte budget as well as its count: a message beyond
    /// it waits (or is refused, for a push); one larger than the whole budget takes all of it;
    /// a message's share is freed when the writer drops it.
    #[tokio::test]
    async fn the_output_queue_counts_bytes_as_well_as_messages() {
        let (out, mut rx) = Output::with_limits(16, 1000);
        let text = "x".repeat(600);
        assert!(out.try_send(text.clone()));
        assert!(!out.try_send(text.clone()), "over the byte budget");
        let first = rx.recv().await.unwrap();
        assert!(!out.try_send("y".repeat(5000)), "still held until written");
        drop(first);
        assert!(
            out.try_send("y".repeat(5000)),
            "larger than the budget: all of it"
        );
        assert!(!out.try_send("z".into()));
        let waiting = tokio::spawn({
            let out = out.clone();
            async move { out.send("w".repeat(10)).await }
        });
        drop(rx.recv().await.unwrap());
        assert!(waiting.await.unwrap());
        assert_eq!(rx.recv().await.unwrap(), "wwwwwwwwww");
        drop(rx);
        assert!(!out.send("gone".into()).await, "no writer");
    }
    use crate::primitives::tools::Tool;
    use crate::ServerOptions;

    const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    /// A `tools/call` of the `yield` tool with this id.
    fn call_yield(id: u64) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"yield","arguments":{{}}}}}}"#)
            .into_bytes()
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}

    /// A server whose `yield` tool is not done at its first poll (it yields once).
    fn server() -> McpServer {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        server.tools().add(Tool::new("yield", |_: Empty| async {
            tokio::task::yield_now().await;
            Ok::<_, String>("yielded")
        }));
        // Done at its first poll, after two progress notifications.
        server.tools().add(Tool::with_context(
            "steps",
            |_: Empty, ctx: crate::server::context::RequestContext| async move {
                ctx.progress(1.0, Some(2.0), None);
                ctx.progress(2.0, Some(2.0), None);
                Ok::<_, String>("stepped")
            },
        ));
        server
    }

    /// A driver whose connection took an `initialize` (done at once, without a task; its answer
    /// taken from the output queue of `capacity`).
    fn initialized(
        options: ConnectionOptions,
        capacity: usize,
    ) -> (Driver, mpsc::Receiver<Queued>) {
        initialized_with(options, capacity, INITIALIZE)
    }

    fn initialized_with(
        options: ConnectionOptions,
        capacity: usize,
        initialize: &[u8],
    ) -> (Driver, mpsc::Receiver<Queued>) {
        let (tx, mut rx) = Output::with_limits(capacity, OUTPUT_BYTES);
        let mut driver = Driver::new(server(), "test", options, tx);
        assert!(
            driver.receive(initialize).is_none(),
            "answered through the queue"
        );
        assert_eq!(driver.tasks.len(), 0);
        let answer = rx.try_recv().expect("initialize is answered at once");
        assert!(answer.contains("\"protocolVersion\""), "{answer}");
        (driver, rx)
    }

    /// Yield to the other tasks until `done` holds, at most 1,000 rounds.
    async fn settle(driver: &Driver, done: impl Fn(usize) -> bool) -> bool {
        for _ in 0..1_000 {
            if done(driver.conn.in_flight()) {
                return true;
            }
            tokio::task::yield_now().await;
        }
        done(driver.conn.in_flight())
    }

    #[tokio::test]
    async fn an_answer_waiting_for_room_in_the_output_keeps_its_place() {
        let (mut driver, mut rx) = initialized(ConnectionOptions::stdio(2), 1);
        assert!(driver.receive(&call_yield(2)).is_none());
        assert!(driver.receive(&call_yield(3)).is_none());
        // One answer fills the queue and leaves the set; the other waits for room and stays.
        assert!(settle(&driver, |n| n == 1).await);
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(driver.conn.in_flight(), 1, "a blocked answer still counts");
        assert!(rx.recv().await.is_some());
        assert!(settle(&driver, |n| n == 0).await);
        assert!(rx.recv().await.is_some());
        driver.end(None).await;
    }

    #[tokio::test]
    async fn a_call_done_at_once_is_answered_without_a_task() {
        let (mut driver, mut rx) = initialized(ConnectionOptions::websocket(4), 8);
        assert!(driver.receive(PING).is_none());
        let answer = rx.try_recv().expect("a ping is answered at once");
        assert_eq!(answer, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(driver.tasks.len(), 0);
        assert_eq!(driver.conn.in_flight(), 0, "its place is free again");
        driver.end(None).await;
    }

    #[tokio::test]
    async fn a_call_done_at_once_is_answered_after_the_notifications_it_sent() {
        let (mut driver, mut rx) = initialized(ConnectionOptions::websocket(4), 8);
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":"p"}}}"#;
        assert!(driver.receive(call).is_none());
        assert_eq!(driver.tasks.len(), 0);
        let sent: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok().map(|q| q.text)).collect();
        assert_eq!(sent.len(), 3, "{sent:?}");
        assert!(sent[0].contains("notifications/progress"), "{sent:?}");
        assert!(sent[1].contains("notifications/progress"), "{sent:?}");
        assert!(
            sent[2].contains("\"id\":7") && sent[2].contains("stepped"),
            "{sent:?}"
        );
        driver.end(None).await;
    }

    #[tokio::test]
    async fn a_flood_of_notifications_and_responses_spawns_no_task() {
        let (mut driver, _rx) = initialized(ConnectionOptions::websocket(4), 8);
        for i in 0..10_000 {
            let notification = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{i}}}}}"#
            );
            assert!(driver.receive(notification.as_bytes()).is_none());
            let response = format!(r#"{{"jsonrpc":"2.0","id":"s-{i}","result":{{}}}}"#);
            assert!(driver.receive(response.as_bytes()).is_none());
        }
        assert_eq!(driver.tasks.len(), 0, "each was handled at once");
        assert!(driver.receive(&call_yield(4)).is_none());
        assert_eq!(driver.tasks.len(), 1, "a request that waits runs as a task");
        driver.end(None).await;
    }

    const INITIALIZE_2025_03_26: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[tokio::test]
    async fn a_batch_waiting_for_places_is_taken_before_the_next_message_is_read() {
        let (mut driver, mut rx) =
            initialized_with(ConnectionOptions::stdio(2), 8, INITIALIZE_2025_03_26);
        assert!(driver.receive(&call_yield(5)).is_none());
        let batch = br#"[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"yield","arguments":{}}}]"#;
        assert!(
            driver.receive(batch).is_none(),
            "kept: one place is free, it needs two"
        );
        assert!(driver.parked.is_some());
        assert_eq!(driver.conn.in_flight(), 1);
        // The host waits before its next read: the call in flight ends, the batch is taken.
        driver.ready().await;
        assert!(driver.parked.is_none());
        let first = rx.recv().await.unwrap();
        assert!(first.contains("\"id\":5"), "{first}");
        let reply: serde_json::Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(reply[0]["id"], 6);
        assert_eq!(reply[1]["result"]["content"][0]["text"], "yielded");
        // At the end of input a kept batch still runs (the drain takes it).
        assert!(driver.receive(&call_yield(8)).is_none());
        assert!(driver.receive(batch).is_none());
        assert!(driver.parked.is_some());
        driver.end(None).await;
        let mut rest = Vec::new();
        while let Some(line) = rx.recv().await {
            rest.push(line);
        }
        assert_eq!(rest.len(), 2, "{rest:?}");
        assert!(rest[1].starts_with('['), "{rest:?}");
    }

    #[tokio::test]
    async fn a_batch_reply_holding_no_place_is_written_by_the_caller_when_the_queue_is_full() {
        let (mut driver, mut rx) =
            initialized_with(ConnectionOptions::websocket(4), 1, INITIALIZE_2025_03_26);
        // Fill the one place of the queue.
        assert!(driver.receive(PING).is_none());
        // Every element invalid: the reply holds no place, so no task waits for room with it.
        let answer = driver.receive(b"[1,2]").expect("the caller writes it");
        assert!(
            answer.starts_with('[') && answer.contains("-32600"),
            "{answer}"
        );
        assert_eq!(driver.tasks.len(), 0);
        assert!(rx.recv().await.unwrap().contains("\"id\":1"));
        driver.end(None).await;
    }

    #[tokio::test]
    async fn ready_pauses_at_the_limit_under_the_stdio_rules_and_end_drains() {
        let (mut driver, mut rx) = initialized(ConnectionOptions::stdio(1), 8);
        assert!(driver.receive(&call_yield(5)).is_none());
        assert!(!driver.conn.accepts_input(), "the one place is taken");
        driver.ready().await; // waits for the call to finish
        assert!(driver.conn.accepts_input());
        assert!(driver.receive(&call_yield(6)).is_none());
        driver.end(None).await;
        assert!(rx.recv().await.is_some());
        assert!(rx.recv().await.is_some());
        assert!(
            rx.recv().await.is_none(),
            "every sender is gone once it ended"
        );
    }
}
