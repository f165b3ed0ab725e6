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
//! | a request while [`ConnectionOptions::max_in_flight`] run | [`AtLimit::Pause`]: the host stops reading until one finishes ([`Connection::accepts_input`]), unless every request in flight waits for the client (below); [`AtLimit::Refuse`]: answered at once with `-32000` "too many requests in flight" |
//! | a request while the limit runs and each of them waits for the client (a server→client request awaiting its response, a `subscriptions/listen` stream) | answered at once with `-32000` "too many requests in flight", whatever [`AtLimit`]: the connection is read on, or the responses and cancellations that free them would never be read |
//! | a handshake-era request other than `initialize`, `ping` or `server/discover` (the probe a client sends to learn the era) before an `initialize` was taken (with [`ConnectionOptions::require_initialize`], the default) | `-32600` with its id: "send initialize first" (spec [lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle): the initialization phase comes first; a 2026-07-28 request, which carries its version in `_meta`, needs no handshake). An `initialize` answered with an error leaves the connection uninitialized |
//! | a request reusing the id of a request in flight | `-32600` with its id (the spec forbids reusing an id; a cancellation or an answer could not tell the two apart) |
//! | a notification (`notifications/cancelled` cancels the named request in flight) or a response to a server→client request | a [`Call`] that yields no answer and does not count against the limit |
//! | text that is not JSON | [`NotJson::Skip`]: logged, no answer; [`NotJson::Answer`]: `-32700` with id `null` |
//! | another invalid message | its JSON-RPC error, or nothing for a broken notification (JSON-RPC forbids answering one) |
//! | anything once [`Connection::close`] was called | nothing |
//!
//! A request counts against the limit from `receive` until the host drops its [`Call`], which it
//! does once the answer is handed to its writer: a peer that stops reading stops being read.
//! Responses and notifications are always read: only new requests pause, and only while one of
//! the requests in flight can finish without the client. A host waits for
//! [`Connection::readable`], which wakes when a call ends and when a request in flight starts
//! waiting for the client.
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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::task::AtomicWaker;

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
    /// Refuse a handshake-era request other than `initialize`, `ping` and `server/discover` until an `initialize`
    /// was taken (`true` in both constructors; `false` keeps the seed's dispatch of any method
    /// at any time).
    pub require_initialize: bool,
}

impl ConnectionOptions {
    /// The stdio rules: pause reading at the limit, skip non-JSON lines, drain at EOF.
    pub fn stdio(max_in_flight: usize) -> Self {
        ConnectionOptions {
            max_in_flight,
            at_limit: AtLimit::Pause,
            not_json: NotJson::Skip,
            at_end: AtEnd::Drain,
            require_initialize: true,
        }
    }

    /// The WebSocket rules: refuse at the limit, answer non-JSON text, cancel at close.
    pub fn websocket(max_in_flight: usize) -> Self {
        ConnectionOptions {
            max_in_flight,
            at_limit: AtLimit::Refuse,
            not_json: NotJson::Answer,
            at_end: AtEnd::Cancel,
            require_initialize: true,
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

/// A place in the in-flight set (and among the listen streams, for a `subscriptions/listen`),
/// given back on drop, which wakes a host waiting for [`Connection::readable`].
struct Slot {
    counts: Arc<Counts>,
    stream: bool,
}

/// The counts of one connection's calls, shared with their [`Slot`]s.
#[derive(Default)]
struct Counts {
    in_flight: AtomicUsize,
    streams: AtomicUsize,
    wake: AtomicWaker,
    /// An `initialize` was taken and not answered with an error.
    initialized: AtomicBool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.counts.in_flight.fetch_sub(1, Ordering::AcqRel);
        if self.stream {
            self.counts.streams.fetch_sub(1, Ordering::AcqRel);
        }
        self.counts.wake.wake();
    }
}

/// The future of [`Connection::readable`].
#[derive(Debug)]
pub struct Readable<'a>(&'a Connection);

impl Future for Readable<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.counts.wake.register(cx.waker());
        if self.0.accepts_input() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
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
    counts: Arc<Counts>,
    closing: bool,
    draining: bool,
    identity: Option<Arc<crate::http::identity::Identity>>,
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
        let counts = Arc::new(Counts::default());
        // A server→client request going out may leave every request in flight waiting for the
        // client: a host paused at the limit must read again (see `accepts_input`).
        let outbound: Outbound = {
            let counts = counts.clone();
            Arc::new(move |message: JsonRpcMessage| {
                let request = matches!(message, JsonRpcMessage::Request(_));
                let sent = outbound(message);
                if request {
                    counts.wake.wake();
                }
                sent
            })
        };
        Connection {
            server,
            scope: Arc::from(format!("{label}-{n}")),
            outbound,
            options,
            counts,
            closing: false,
            draining: false,
            identity: None,
        }
    }

    /// The connection's scope (its key in the server's per-peer state).
    pub fn scope(&self) -> &Arc<str> {
        &self.scope
    }

    /// Run every request of this connection as `identity` (the bearer token its WebSocket
    /// upgrade carried, [`crate::http::auth`]).
    pub fn set_identity(&mut self, identity: Option<Arc<crate::http::identity::Identity>>) {
        self.identity = identity;
    }

    /// The rules.
    pub fn options(&self) -> &ConnectionOptions {
        &self.options
    }

    /// Requests dispatched and not yet answered (or dropped).
    pub fn in_flight(&self) -> usize {
        self.counts.in_flight.load(Ordering::Acquire)
    }

    /// `false` while the connection should not be read: it is closing, or under
    /// [`AtLimit::Pause`] its limit of requests is running and at least one of them can finish
    /// without the client (read again once a call completes). While every request in flight
    /// waits for the client — a server→client request awaiting its response, a
    /// `subscriptions/listen` stream awaiting its cancellation — it is read on, so those
    /// responses and cancellations arrive (the requests among them are refused, see the module
    /// table).
    pub fn accepts_input(&self) -> bool {
        !self.closing
            && (self.options.at_limit == AtLimit::Refuse
                || self.in_flight() < self.limit()
                || self.all_wait_for_the_client())
    }

    /// Resolves once [`Connection::accepts_input`] holds (never while closing): a host that
    /// paused awaits it, and it wakes when a call ends or a server→client request goes out.
    pub fn readable(&self) -> Readable<'_> {
        Readable(self)
    }

    /// `true` when no request in flight can finish without the client: as many of them wait
    /// for it (listen streams, server→client requests awaiting their response) as run.
    fn all_wait_for_the_client(&self) -> bool {
        let in_flight = self.in_flight();
        let streams = self.counts.streams.load(Ordering::Acquire);
        streams >= in_flight || streams + self.server.waiting_on(&self.scope) >= in_flight
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
    /// [`Connection::accepts_input`]; a request taken at the limit anyway still runs, unless
    /// every request in flight waits for the client (then it is refused).
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
        let mut initialize = None;
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
                let at_limit = self.in_flight() >= self.limit();
                if at_limit
                    && (self.options.at_limit == AtLimit::Refuse || self.all_wait_for_the_client())
                {
                    let busy =
                        ErrorObject::new(ErrorCode::SERVER_ERROR, "too many requests in flight");
                    return Received::Answer(JsonRpcResponse::error(
                        Some(request.id.clone()),
                        busy,
                    ));
                }
                let legacy = !crate::era::has_modern_meta(request.params.as_ref());
                // A handshake-era `initialize` makes the connection a legacy session: pushed
                // messages go to it from then on (modern clients open a listen stream instead).
                if request.method == "initialize" && legacy {
                    self.server.attach(&self.scope, self.outbound.clone());
                    let first = !self.counts.initialized.swap(true, Ordering::AcqRel);
                    initialize = Some(first);
                } else if legacy
                    && self.options.require_initialize
                    && !matches!(request.method.as_str(), "ping" | "server/discover")
                    && !self.counts.initialized.load(Ordering::Acquire)
                {
                    let first = ErrorObject::invalid_request(
                        "the connection is not initialized: send initialize first \
                         (only ping and server/discover may come before it)",
                    );
                    return Received::Answer(JsonRpcResponse::error(
                        Some(request.id.clone()),
                        first,
                    ));
                }
                let stream = request.method == "subscriptions/listen";
                self.counts.in_flight.fetch_add(1, Ordering::AcqRel);
                if stream {
                    self.counts.streams.fetch_add(1, Ordering::AcqRel);
                }
                Some(Slot {
                    counts: self.counts.clone(),
                    stream,
                })
            }
            _ => None,
        };
        let server = self.server.clone();
        let ctx = RequestContext::new()
            .with_outbound(self.outbound.clone())
            .with_scope(self.scope.clone())
            .with_identity(self.identity.clone());
        let counts = initialize.map(|first| (first, self.counts.clone()));
        Received::Dispatch(Call {
            future: Box::pin(async move {
                let answer = server.dispatch_with(message, ctx).await;
                if let Some((first, counts)) = counts {
                    // The first `initialize`, refused, leaves the connection uninitialized; a
                    // later refused one does not undo an earlier success.
                    let ok = answer.as_ref().is_some_and(|a| a.payload.is_ok());
                    if ok {
                        counts.initialized.store(true, Ordering::Release);
                    } else if first {
                        counts.initialized.store(false, Ordering::Release);
                    }
                }
                answer
            }),
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
mod tests;
