//! One connection of a stream transport (stdio, WebSocket): the rules, with no I/O.
//!
//! A stream transport carries JSON-RPC messages one after another over one long-lived
//! connection (spec [stdio](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio);
//! WebSocket is the same body over text frames). [`Connection`] decides what happens to each
//! incoming message; the host (tokio in `native::connection`) reads the bytes, drives the
//! futures it is handed and writes the answers:
//!
//! ```text
//!  line / text frame ─► Connection::receive ─► Received::Answer(response)  ─► host writes it now
//!                                            ├► Received::Dispatch(call)   ─► host drives it, writes its answer
//!                                            └► Received::Nothing
//!  EOF / close ───────► Connection::at_end (Drain: answer the calls in flight; Cancel: drop them)
//!                      ─► drop the Connection: the server forgets its scope
//! ```
//!
//! The rules:
//!
//! | incoming | the connection does |
//! |---|---|
//! | a request | dispatches it through [`McpServer::dispatch_with`] on the connection's scope: one [`Call`], answered once (a cancelled request is not answered, spec [cancellation](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation)) |
//! | a handshake-era `initialize` | attaches the connection to its scope first: list changes, resource updates and server→client requests not tied to a request go to it ([`McpServer::attach`]) |
//! | a request while [`ConnectionOptions::max_in_flight`] run | [`AtLimit::Pause`]: the host stops reading until one finishes ([`Connection::accepts_input`]); [`AtLimit::Refuse`]: answered at once with `-32000` "too many requests in flight" |
//! | a notification (`notifications/cancelled` cancels the named request in flight) or a response to a server→client request | a [`Call`] that yields no answer and does not count against the limit |
//! | text that is not JSON | [`NotJson::Skip`]: logged, no answer; [`NotJson::Answer`]: `-32700` with id `null` |
//! | another invalid message | its JSON-RPC error, or nothing for a broken notification (JSON-RPC forbids answering one) |
//! | anything once [`Connection::close`] was called | nothing |
//!
//! A request counts against the limit from `receive` until the host drops its [`Call`], which it
//! does once the answer is handed to its writer: a peer that stops reading stops being read.
//!
//! Shutdown: at EOF a stdio host ends its listen streams ([`Connection::end_streams`]), drains
//! ([`AtEnd::Drain`]) and then exits with success; when the server shuts down a WebSocket host
//! calls [`Connection::drain`] (new requests refused, answers still taken), sends close `1001`
//! (going away) once the calls in flight are answered or its bound passed, calls
//! [`Connection::close`], and at the close cancels what runs ([`AtEnd::Cancel`]).
//!
//! The connection's scope holds its log level, capabilities, subscriptions and cancellations;
//! dropping the [`Connection`] ends it ([`McpServer::end_scope`]), which also cancels what is
//! still in flight and fails the server→client requests waiting on it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::server::context::{Outbound, RequestContext};
use crate::server::McpServer;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcResponse};
use crate::BoxFuture;

/// The default of [`ConnectionOptions::max_in_flight`]: 256 requests.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// What a connection does with a request that arrives while its limit of requests is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtLimit {
    /// Stop reading until one finishes (stdio: the backpressure reaches the peer's writes).
    Pause,
    /// Answer it at once with `-32000` "too many requests in flight"; nothing runs (WebSocket).
    Refuse,
}

/// What a connection does with text that is not JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotJson {
    /// Log it and go on, answering nothing (stdio: a stray line is not a message).
    Skip,
    /// Answer `-32700` with id `null` (WebSocket: every text frame is meant as a message).
    Answer,
}

/// What happens to the calls in flight when the input ends (EOF, a close, the peer gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtEnd {
    /// Let them finish and write their answers, then end (stdio: EOF is the client's "done").
    Drain,
    /// Drop them: nobody is left to read an answer (WebSocket: the socket is closed).
    Cancel,
}

/// The rules of one connection (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionOptions {
    /// Requests running at once at most (at least 1; default [`DEFAULT_MAX_IN_FLIGHT`]).
    pub max_in_flight: usize,
    /// A request beyond [`ConnectionOptions::max_in_flight`].
    pub at_limit: AtLimit,
    /// Text that is not JSON.
    pub not_json: NotJson,
    /// The calls in flight when the input ends.
    pub at_end: AtEnd,
}

impl ConnectionOptions {
    /// The stdio rules: pause reading at the limit, skip non-JSON lines, drain at EOF.
    pub fn stdio(max_in_flight: usize) -> Self {
        ConnectionOptions {
            max_in_flight,
            at_limit: AtLimit::Pause,
            not_json: NotJson::Skip,
            at_end: AtEnd::Drain,
        }
    }

    /// The WebSocket rules: refuse at the limit, answer non-JSON text, cancel at close.
    pub fn websocket(max_in_flight: usize) -> Self {
        ConnectionOptions {
            max_in_flight,
            at_limit: AtLimit::Refuse,
            not_json: NotJson::Answer,
            at_end: AtEnd::Cancel,
        }
    }
}

impl Default for ConnectionOptions {
    /// The stdio rules with [`DEFAULT_MAX_IN_FLIGHT`].
    fn default() -> Self {
        ConnectionOptions::stdio(DEFAULT_MAX_IN_FLIGHT)
    }
}

/// What to do with one incoming message.
pub enum Received {
    /// Nothing to write and nothing to run.
    Nothing,
    /// Write this answer now (an invalid message's error, or a request refused at the limit).
    Answer(JsonRpcResponse),
    /// Drive this call to completion (concurrently with the next messages), then write its
    /// answer if it has one.
    Dispatch(Call),
}

impl fmt::Debug for Received {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Received::Nothing => f.write_str("Nothing"),
            Received::Answer(response) => f.debug_tuple("Answer").field(response).finish(),
            Received::Dispatch(call) => f.debug_tuple("Dispatch").field(call).finish(),
        }
    }
}

/// One dispatched message: a future yielding the answer to write (`None` for a notification, a
/// response, or a cancelled request).
///
/// A request's call holds a place in the connection's in-flight set from [`Connection::receive`]
/// until the call is dropped. The host drops it once the answer is handed to its writer (poll the
/// call by `&mut`, write, then drop): the place is free before the peer can read the answer, and
/// an answer still waiting for room in the output still counts, so a peer that stops reading
/// stops the connection from taking more under [`AtLimit::Pause`].
pub struct Call {
    future: BoxFuture<'static, Option<JsonRpcResponse>>,
    slot: Option<Slot>,
}

impl Call {
    /// `true` when this call answers a request (and counts against the limit).
    pub fn is_request(&self) -> bool {
        self.slot.is_some()
    }
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("request", &self.is_request())
            .finish_non_exhaustive()
    }
}

impl Future for Call {
    type Output = Option<JsonRpcResponse>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.future.as_mut().poll(cx)
    }
}

/// A place in the in-flight set, given back on drop.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

static NEXT_SCOPE: AtomicU64 = AtomicU64::new(1);

/// One connection of a stream transport (see the module docs): its scope, its way back, its
/// in-flight set and its rules.
pub struct Connection {
    server: McpServer,
    scope: Arc<str>,
    outbound: Outbound,
    options: ConnectionOptions,
    in_flight: Arc<AtomicUsize>,
    closing: bool,
    draining: bool,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("scope", &self.scope)
            .field("options", &self.options)
            .field("in_flight", &self.in_flight())
            .field("closing", &self.closing)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection of `server` on a new scope named `{label}-{n}` (`label` names the transport
    /// in logs, e.g. `stdio`, `ws`). `outbound` writes a message not tied to a request
    /// (notifications, server→client requests) and returns `false` when it cannot.
    pub fn new(
        server: McpServer,
        label: &str,
        outbound: Outbound,
        options: ConnectionOptions,
    ) -> Self {
        let n = NEXT_SCOPE.fetch_add(1, Ordering::Relaxed);
        Connection {
            server,
            scope: Arc::from(format!("{label}-{n}")),
            outbound,
            options,
            in_flight: Arc::new(AtomicUsize::new(0)),
            closing: false,
            draining: false,
        }
    }

    /// The connection's scope (its key in the server's per-peer state).
    pub fn scope(&self) -> &Arc<str> {
        &self.scope
    }

    /// The rules it follows.
    pub fn options(&self) -> &ConnectionOptions {
        &self.options
    }

    /// Requests dispatched and not yet answered (or dropped).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// `false` while the connection should not be read: it is closing, or under
    /// [`AtLimit::Pause`] its limit of requests is running (read again once a call completes).
    pub fn accepts_input(&self) -> bool {
        !self.closing
            && (self.options.at_limit == AtLimit::Refuse || self.in_flight() < self.limit())
    }

    /// What happens to the calls in flight when the input ends.
    pub fn at_end(&self) -> AtEnd {
        self.options.at_end
    }

    /// Stop taking messages (a close was sent or the server is shutting down): every later
    /// [`Connection::receive`] is [`Received::Nothing`].
    pub fn close(&mut self) {
        self.closing = true;
    }

    /// End the connection's `subscriptions/listen` streams gracefully (each is answered with
    /// its result): the input ended or the server is shutting down, and a listen never ends on
    /// its own ([`McpServer::end_subscriptions`]).
    pub fn end_streams(&self) {
        self.server.end_subscriptions(Some(&self.scope));
    }

    /// The server is shutting down: from now on a request is answered at once with `-32000`
    /// "the server is shutting down" (nothing runs), while responses (answers to the server's
    /// own requests, which calls in flight may wait on) and notifications are still taken; the
    /// connection's listen streams end ([`Connection::end_streams`]). The host closes once the
    /// calls in flight are answered or its drain bound passed.
    pub fn drain(&mut self) {
        self.draining = true;
        self.end_streams();
    }

    /// `true` once [`Connection::close`] was called.
    pub fn is_closing(&self) -> bool {
        self.closing
    }

    fn limit(&self) -> usize {
        self.options.max_in_flight.max(1)
    }

    /// Take one message (the bytes of one line or one text frame) and say what to do with it
    /// (see the module table). Under [`AtLimit::Pause`] the host calls it only while
    /// [`Connection::accepts_input`]; a request taken at the limit anyway still runs.
    pub fn receive(&mut self, bytes: &[u8]) -> Received {
        if self.closing {
            return Received::Nothing;
        }
        let message = match JsonRpcMessage::from_slice(bytes) {
            Ok(message) => message,
            Err(invalid) if invalid.is_not_json() && self.options.not_json == NotJson::Skip => {
                tracing::warn!(scope = %self.scope, error = %invalid, "skipped text that is not JSON");
                return Received::Nothing;
            }
            Err(invalid) => {
                return match invalid.response() {
                    Some(response) => {
                        tracing::debug!(scope = %self.scope, error = %invalid, "invalid message");
                        Received::Answer(response)
                    }
                    None => {
                        tracing::warn!(scope = %self.scope, error = %invalid, "dropped a malformed notification");
                        Received::Nothing
                    }
                };
            }
        };
        let slot = match &message {
            JsonRpcMessage::Request(request) => {
                if self.draining {
                    let away =
                        ErrorObject::new(ErrorCode::SERVER_ERROR, "the server is shutting down");
                    return Received::Answer(JsonRpcResponse::error(
                        Some(request.id.clone()),
                        away,
                    ));
                }
                if self.options.at_limit == AtLimit::Refuse && self.in_flight() >= self.limit() {
                    let busy =
                        ErrorObject::new(ErrorCode::SERVER_ERROR, "too many requests in flight");
                    return Received::Answer(JsonRpcResponse::error(
                        Some(request.id.clone()),
                        busy,
                    ));
                }
                // A handshake-era `initialize` makes the connection a legacy session: pushed
                // messages go to it from then on (modern clients open a listen stream instead).
                if request.method == "initialize"
                    && !crate::era::has_modern_meta(request.params.as_ref())
                {
                    self.server.attach(&self.scope, self.outbound.clone());
                }
                self.in_flight.fetch_add(1, Ordering::AcqRel);
                Some(Slot(self.in_flight.clone()))
            }
            _ => None,
        };
        let server = self.server.clone();
        let ctx = RequestContext::new()
            .with_outbound(self.outbound.clone())
            .with_scope(self.scope.clone());
        Received::Dispatch(Call {
            future: Box::pin(async move { server.dispatch_with(message, ctx).await }),
            slot,
        })
    }
}

impl Drop for Connection {
    /// The connection ended: the server forgets its scope (and cancels what it still runs).
    fn drop(&mut self) {
        self.server.end_scope(&self.scope);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures::channel::oneshot;
    use futures::executor::LocalPool;
    use futures::task::LocalSpawnExt;
    use serde_json::{json, Value};

    use super::*;
    use crate::primitives::tools::Tool;
    use crate::server::ServerOptions;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}

    /// A server whose `wait` tool runs until the test releases it.
    fn gated() -> (McpServer, Arc<Mutex<Vec<oneshot::Sender<()>>>>) {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let gates: Arc<Mutex<Vec<oneshot::Sender<()>>>> = Arc::default();
        let g = gates.clone();
        server.tools().add(Tool::new("wait", move |_: Empty| {
            let (tx, rx) = oneshot::channel();
            g.lock().unwrap().push(tx);
            async move {
                let _ = rx.await;
                Ok::<_, String>("released")
            }
        }));
        (server, gates)
    }

    fn release_all(gates: &Mutex<Vec<oneshot::Sender<()>>>) {
        for gate in gates.lock().unwrap().drain(..) {
            let _ = gate.send(());
        }
    }

    /// The messages pushed on the connection's outbound channel.
    fn sink() -> (Outbound, Arc<Mutex<Vec<Value>>>) {
        let pushed: Arc<Mutex<Vec<Value>>> = Arc::default();
        let p = pushed.clone();
        let outbound: Outbound = Arc::new(move |m: JsonRpcMessage| {
            p.lock()
                .unwrap()
                .push(serde_json::from_str(&m.to_json()).unwrap());
            true
        });
        (outbound, pushed)
    }

    fn call_wait(id: u64) -> Vec<u8> {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"wait","arguments":{}}})
            .to_string()
            .into_bytes()
    }

    fn json_of(response: &JsonRpcResponse) -> Value {
        serde_json::from_str(&response.to_json()).unwrap()
    }

    /// Runs calls on a local pool and collects their answers.
    struct Host {
        pool: LocalPool,
        answers: Rc<RefCell<Vec<Value>>>,
    }

    use std::cell::RefCell;
    use std::rc::Rc;

    impl Host {
        fn new() -> Self {
            Host {
                pool: LocalPool::new(),
                answers: Rc::default(),
            }
        }

        fn take(&mut self, received: Received) {
            match received {
                Received::Nothing => {}
                Received::Answer(response) => self.answers.borrow_mut().push(json_of(&response)),
                Received::Dispatch(mut call) => {
                    let answers = self.answers.clone();
                    self.pool
                        .spawner()
                        .spawn_local(async move {
                            if let Some(response) = (&mut call).await {
                                answers.borrow_mut().push(json_of(&response));
                            }
                            drop(call);
                        })
                        .unwrap();
                }
            }
        }

        fn run(&mut self) -> Vec<Value> {
            self.pool.run_until_stalled();
            std::mem::take(&mut *self.answers.borrow_mut())
        }
    }

    fn ids(answers: &[Value]) -> Vec<Value> {
        answers.iter().map(|a| a["id"].clone()).collect()
    }

    #[test]
    fn refuse_answers_beyond_the_limit_at_once_and_takes_more_once_one_finishes() {
        let (server, gates) = gated();
        let (outbound, _) = sink();
        let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::websocket(2));
        let mut host = Host::new();
        host.take(conn.receive(&call_wait(1)));
        host.take(conn.receive(&call_wait(2)));
        assert!(host.run().is_empty());
        assert_eq!(conn.in_flight(), 2);
        assert!(conn.accepts_input(), "Refuse keeps reading");
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#));
        let busy = host.run();
        assert_eq!(busy.len(), 1);
        assert_eq!(
            (busy[0]["id"].clone(), busy[0]["error"]["code"].clone()),
            (json!(3), json!(-32000))
        );
        release_all(&gates);
        let answers = host.run();
        assert_eq!(ids(&answers), [json!(1), json!(2)]);
        assert_eq!(conn.in_flight(), 0);
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#));
        assert_eq!(host.run(), [json!({"jsonrpc":"2.0","id":4,"result":{}})]);
    }

    #[test]
    fn pause_stops_input_at_the_limit_and_notifications_do_not_count() {
        let (server, gates) = gated();
        let (outbound, _) = sink();
        let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(1));
        let mut host = Host::new();
        host.take(conn.receive(&call_wait(1)));
        host.run();
        assert!(!conn.accepts_input());
        // A notification is not a request in flight.
        let note = conn.receive(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(matches!(&note, Received::Dispatch(call) if !call.is_request()));
        host.take(note);
        assert!(host.run().is_empty());
        assert_eq!(conn.in_flight(), 1);
        release_all(&gates);
        assert_eq!(ids(&host.run()), [json!(1)]);
        assert!(conn.accepts_input());
    }

    #[test]
    fn a_request_keeps_its_place_until_its_answer_is_handed_over() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let (outbound, _) = sink();
        let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(1));
        let Received::Dispatch(mut call) =
            conn.receive(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        else {
            panic!("a request is dispatched");
        };
        assert!(call.is_request());
        let answer = futures::executor::block_on(&mut call).expect("a ping is answered");
        assert_eq!(
            json_of(&answer),
            json!({"jsonrpc":"2.0","id":1,"result":{}})
        );
        assert!(
            !conn.accepts_input(),
            "an answer not yet written still counts"
        );
        drop(call);
        assert!(conn.accepts_input());
    }

    #[test]
    fn each_request_is_answered_once_by_id_in_completion_order() {
        let (server, gates) = gated();
        let (outbound, _) = sink();
        let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::default());
        let mut host = Host::new();
        host.take(conn.receive(&call_wait(1)));
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#));
        assert_eq!(ids(&host.run()), [json!("p")]);
        release_all(&gates);
        let answers = host.run();
        assert_eq!(ids(&answers), [json!(1)]);
        assert_eq!(answers[0]["result"]["content"][0]["text"], "released");
        assert!(host.run().is_empty(), "nothing is answered twice");
    }

    #[test]
    fn notifications_cancelled_cancels_the_call_and_frees_its_place() {
        let (server, _gates) = gated();
        let (outbound, _) = sink();
        let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(1));
        let mut host = Host::new();
        host.take(conn.receive(&call_wait(7)));
        host.run();
        assert_eq!(conn.in_flight(), 1);
        host.take(conn.receive(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
        ));
        assert!(host.run().is_empty(), "a cancelled request gets no answer");
        assert_eq!(conn.in_flight(), 0);
        assert!(conn.accepts_input());
    }

    #[test]
    fn dropping_the_connection_cancels_what_runs_and_a_dropped_call_frees_its_place() {
        let (server, _gates) = gated();
        let (outbound, _) = sink();
        let mut conn = Connection::new(
            server.clone(),
            "t",
            outbound,
            ConnectionOptions::websocket(4),
        );
        let mut host = Host::new();
        host.take(conn.receive(&call_wait(1)));
        let Received::Dispatch(dropped) = conn.receive(&call_wait(2)) else {
            panic!("a request is dispatched");
        };
        host.run();
        assert_eq!(conn.in_flight(), 2);
        drop(dropped);
        assert_eq!(conn.in_flight(), 1);
        assert_eq!(conn.at_end(), AtEnd::Cancel);
        drop(conn);
        assert!(
            host.run().is_empty(),
            "the call in flight was cancelled, not answered"
        );
    }

    #[test]
    fn drain_at_eof_answers_the_calls_in_flight() {
        let (server, gates) = gated();
        let (outbound, _) = sink();
        let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(8));
        let mut host = Host::new();
        host.take(conn.receive(&call_wait(1)));
        host.take(conn.receive(&call_wait(2)));
        host.run();
        // EOF: the host drains under AtEnd::Drain, then drops the connection.
        assert_eq!(conn.at_end(), AtEnd::Drain);
        release_all(&gates);
        assert_eq!(ids(&host.run()), [json!(1), json!(2)]);
        assert_eq!(conn.in_flight(), 0);
        drop(conn);
    }

    #[test]
    fn a_handshake_initialize_attaches_the_connection_for_pushed_messages() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let (outbound, pushed) = sink();
        let mut conn = Connection::new(server.clone(), "t", outbound, ConnectionOptions::default());
        let mut host = Host::new();
        assert_eq!(
            server.notify_list_changed(crate::server::ListKind::Tools),
            0
        );
        host.take(conn.receive(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        ));
        assert_eq!(ids(&host.run()), [json!(1)]);
        assert_eq!(
            server.notify_list_changed(crate::server::ListKind::Tools),
            1
        );
        assert_eq!(
            pushed.lock().unwrap()[0]["method"],
            "notifications/tools/list_changed"
        );
        drop(conn);
        assert_eq!(
            server.notify_list_changed(crate::server::ListKind::Tools),
            0
        );
    }

    #[test]
    fn invalid_input_follows_the_not_json_rule() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        let (outbound, _) = sink();
        let mut stdio = Connection::new(
            server.clone(),
            "t",
            outbound.clone(),
            ConnectionOptions::stdio(4),
        );
        let mut ws = Connection::new(server, "t", outbound, ConnectionOptions::websocket(4));
        assert!(matches!(stdio.receive(b"not json"), Received::Nothing));
        let Received::Answer(parse) = ws.receive(b"not json") else {
            panic!("WebSocket answers text that is not JSON");
        };
        assert_eq!(json_of(&parse)["error"]["code"], -32700);
        assert_eq!(json_of(&parse)["id"], Value::Null);
        for conn in [&mut stdio, &mut ws] {
            let Received::Answer(bad) =
                conn.receive(br#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#)
            else {
                panic!("an invalid request is answered");
            };
            assert_eq!(json_of(&bad)["id"], 5);
            assert!(matches!(
                conn.receive(br#"{"jsonrpc":"2.0","method":5}"#),
                Received::Nothing
            ));
        }
        ws.close();
        assert!(ws.is_closing() && !ws.accepts_input());
        assert!(matches!(
            ws.receive(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Received::Nothing
        ));
    }
}
