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
//! | a handshake-era `initialize` once one was answered with a result or while one is being answered (with [`ConnectionOptions::require_initialize`]) | `-32600` with its id: the first handshake stands (as a session over Streamable HTTP refuses a second); after an `initialize` answered with an error, another may come |
//! | a request while [`ConnectionOptions::max_in_flight`] run | [`AtLimit::Pause`]: the host stops reading until one finishes ([`Connection::accepts_input`]), unless every request in flight waits for the client (below); [`AtLimit::Refuse`]: answered at once with `-32000` "too many requests in flight" |
//! | a request while the limit runs and each of them waits for the client (a server→client request awaiting its response, a `subscriptions/listen` stream) | answered at once with `-32000` "too many requests in flight", whatever [`AtLimit`]: the connection is read on, or the responses and cancellations that free them would never be read |
//! | a handshake-era request other than `initialize`, `ping` or `server/discover` (the probe a client sends to learn the era) before an `initialize` was taken (with [`ConnectionOptions::require_initialize`], the default) | `-32600` with its id: "send initialize first" (spec [lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle): the initialization phase comes first; a 2026-07-28 request, which carries its version in `_meta`, needs no handshake). An `initialize` answered with an error leaves the connection uninitialized |
//! | a request reusing the id of a request in flight | `-32600` with its id (the spec forbids reusing an id; a cancellation or an answer could not tell the two apart) |
//! | a notification (`notifications/cancelled` cancels the named request in flight) or a response to a server→client request | a [`Call`] that yields no answer and does not count against the limit |
//! | text that is not JSON (not UTF-8, outside the grammar, a second value after the first) | [`NotJson::Answer`] (stdio and WebSocket): `-32700` with id `null`, or with the request's id when the text starts with a whole request followed by more ([JSON-RPC 2.0 §5.1](https://www.jsonrpc.org/specification#error_object)); [`NotJson::Skip`]: logged, no answer. (A WebSocket text frame that is not UTF-8 never gets here: the host fails the connection, close `1007`, as [RFC 6455 §8.1](https://www.rfc-editor.org/rfc/rfc6455#section-8.1) requires.) |
//! | a line over the host's size limit (stdio; WebSocket closes with `1009`) | [`Connection::too_long`]: a request `-32600` with its id (`null` when unreadable), a response fails the request it answers, a notification nothing; under [`NotJson::Skip`] no answer |
//! | another invalid message | its JSON-RPC error, or nothing for a broken notification (JSON-RPC forbids answering one) |
//! | a JSON-RPC batch (an array) | see the batch table below |
//! | anything once [`Connection::close`] was called | nothing |
//!
//! Batches (the rules every transport shares are in `server::batch`): a connection receives
//! them only once its `initialize` negotiated 2025-03-26, the one revision that requires it
//! ([basic](https://modelcontextprotocol.io/specification/2025-03-26/basic#batching); the
//! [stdio transport](https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#stdio)
//! carries "a JSON-RPC batch containing one or more requests and/or notifications").
//!
//! | a batch line or frame | the connection does |
//! |---|---|
//! | before `initialize` (or before its answer set the version) | `-32600` id `null`: "a JSON-RPC batch before initialize is refused", nothing in it runs |
//! | on a connection that negotiated another revision (2024-11-05, 2025-06-18, 2025-11-25) | `-32600` id `null` "batches are not supported", as a single-message parser answers any array |
//! | not JSON, `[]`, more than [`MAX_BATCH_LEN`](crate::wire::jsonrpc::MAX_BATCH_LEN) elements, or an `initialize` in it | one `-32600` (`-32700`) id `null`; nothing in it runs |
//! | at 2025-03-26 | [`Received::Batch`]: each element runs as it would alone, in order — a request dispatched in a place of the in-flight set (its id checked against the requests in flight), a notification (`notifications/cancelled` included), a response resolving a server→client request; an invalid element, a request reusing an earlier one's id of the batch, a 2026-07-28 request: their error. The answers go out as **one array** once every request is answered (a cancelled request has no entry; none at all: nothing is written) |
//! | a batch whose requests find no free place | [`AtLimit::Pause`]: [`Received::Wait`] — the host reads nothing more until as many places are free as the batch has requests (all of them, for a batch with more requests than the limit), then [`Connection::resume`]s it; [`AtLimit::Refuse`], and a paused connection whose requests in flight all wait for the client: taken now |
//! | a request of a batch taken with no place free | `-32000` "too many requests in flight" in the reply: a batch never runs more requests than the limit, and never waits half taken |
//!
//! A batch's requests keep their places until the batch call is dropped, which the host does
//! once the reply is handed to its writer (as for a single request): answered members wait on
//! the others, so a batch holds at most the limit's answers, and a peer that stops reading
//! stops being read. An answered member counts as waiting for the client (a paused host reads
//! on when every request in flight waits, so the response a batch member is waiting for is
//! still read).
//!
//! A request counts against the limit from `receive` until the host drops its [`Call`], which it
//! does once the answer is handed to its writer: a peer that stops reading stops being read.
//! Responses and notifications are always read: only new requests pause, and only while one of
//! the requests in flight can finish without the client. A host waits for
//! [`Connection::readable`], which wakes when a call ends and when a request in flight starts
//! waiting for the client.
//!
//! Shutdown: at EOF a stdio host ends its listen streams ([`Connection::end_streams`]), drains
//! ([`AtEnd::Drain`], for as long as the host allows: the native one 10 s, then it cancels what
//! still runs) and then exits with success; when the server shuts down a WebSocket host
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
use futures::{FutureExt, StreamExt};

use crate::server::batch::{self, Element, Run, Screened};
use crate::server::context::{Outbound, RequestContext};
use crate::server::McpServer;
use crate::wire::framing::{Overlong, OverlongVerdict};
use crate::wire::jsonrpc::{
    ErrorCode, ErrorObject, InvalidMessage, JsonRpcBatch, JsonRpcBatchResponse, JsonRpcMessage,
    JsonRpcResponse, RequestId,
};
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
    /// Log it and go on, answering nothing (for a peer known to mix other text into the
    /// stream; a client waiting on such a line's id then waits for its own timeout).
    Skip,
    /// Answer `-32700` with id `null` (JSON-RPC 2.0 §5.1; stdio and WebSocket: every line or
    /// text frame is meant as a message, and the spec forbids anything else on either).
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
    /// The stdio rules: pause reading at the limit, answer non-JSON lines, drain at EOF.
    pub fn stdio(max_in_flight: usize) -> Self {
        ConnectionOptions {
            max_in_flight,
            at_limit: AtLimit::Pause,
            not_json: NotJson::Answer,
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
    /// A JSON-RPC batch, taken (see the module's batch table): drive it to completion
    /// (concurrently with the next messages), then write its reply — one array — if it has one.
    Batch(BatchCall),
    /// A batch that waits for places in the in-flight set ([`AtLimit::Pause`]): read nothing
    /// more, wait for [`Connection::readable_for`] it, then [`Connection::resume`] it.
    Wait(Parked),
}

impl fmt::Debug for Received {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Received::Nothing => f.write_str("Nothing"),
            Received::Answer(response) => f.debug_tuple("Answer").field(response).finish(),
            Received::Dispatch(call) => f.debug_tuple("Dispatch").field(call).finish(),
            Received::Batch(call) => f.debug_tuple("Batch").field(call).finish(),
            Received::Wait(parked) => f.debug_tuple("Wait").field(parked).finish(),
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
    /// Answered, and kept only until its batch's reply is handed over ([`Slot::hold`]).
    held: bool,
}

impl Slot {
    /// The request of this place is answered, but its batch is not: the place is kept until
    /// the batch's reply is handed to the writer. A held place waits on the rest of its batch,
    /// so it counts among the places waiting for the client (see
    /// [`Connection::accepts_input`]); a host paused at the limit re-checks.
    fn hold(&mut self) {
        if !self.held {
            self.held = true;
            self.counts.held.fetch_add(1, Ordering::AcqRel);
            self.counts.wake.wake();
        }
    }
}

/// The counts of one connection's calls, shared with their [`Slot`]s.
#[derive(Default)]
struct Counts {
    in_flight: AtomicUsize,
    streams: AtomicUsize,
    /// Places of answered batch members, kept until their batch's reply is handed over.
    held: AtomicUsize,
    wake: AtomicWaker,
    /// An `initialize` was taken and not answered with an error.
    initialized: AtomicBool,
    /// The connection was dropped (its scope ended): a batch still running answers nothing.
    ended: AtomicBool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.held {
            self.counts.held.fetch_sub(1, Ordering::AcqRel);
        }
        self.counts.in_flight.fetch_sub(1, Ordering::AcqRel);
        if self.stream {
            self.counts.streams.fetch_sub(1, Ordering::AcqRel);
        }
        self.counts.wake.wake();
    }
}

/// The future of [`Connection::readable`] and [`Connection::readable_for`].
#[derive(Debug)]
pub struct Readable<'a> {
    conn: &'a Connection,
    /// The places wanted free.
    places: usize,
}

impl Future for Readable<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.conn.counts.wake.register(cx.waker());
        if self.conn.accepts(self.places) {
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
        let scope: Arc<str> = Arc::from(format!("{label}-{n}"));
        if !options.require_initialize {
            // Any method at any time: the scope lives from now (an `initialize` opens it
            // otherwise), so a subscription or a log level before `initialize` is kept.
            server.open_scope(&scope);
        }
        Connection {
            server,
            scope,
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
        self.accepts(1)
    }

    /// [`Connection::accepts_input`] for a message that wants `places` free places.
    fn accepts(&self, places: usize) -> bool {
        !self.closing
            && (self.options.at_limit == AtLimit::Refuse
                || self.in_flight() + places <= self.limit()
                || self.all_wait_for_the_client())
    }

    /// Resolves once [`Connection::accepts_input`] holds (never while closing): a host that
    /// paused awaits it, and it wakes when a call ends or a server→client request goes out.
    pub fn readable(&self) -> Readable<'_> {
        Readable {
            conn: self,
            places: 1,
        }
    }

    /// Resolves once `parked` can be taken ([`Connection::resume`]): as many places are free as
    /// it has requests (all of them, for a batch with more requests than the limit), or every
    /// request in flight waits for the client. Never while closing.
    pub fn readable_for(&self, parked: &Parked) -> Readable<'_> {
        Readable {
            conn: self,
            places: parked.places(self.limit()),
        }
    }

    /// `true` when no request in flight can finish without the client: as many of them wait
    /// for it (listen streams, server→client requests awaiting their response, answered batch
    /// members whose batch waits on the others) as run.
    fn all_wait_for_the_client(&self) -> bool {
        let in_flight = self.in_flight();
        let streams = self.counts.streams.load(Ordering::Acquire);
        let held = self.counts.held.load(Ordering::Acquire);
        streams + held >= in_flight
            || streams + held + self.server.waiting_on(&self.scope) >= in_flight
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

    /// The host discarded a message longer than its `limit` in bytes (a stdio line past
    /// `max_line_bytes`) unread; `line` is what the decoder's skim of it learned
    /// ([`Overlong::verdict`]). A request is answered `-32600` with its id (`null` when the skim
    /// could not read one; as HTTP answers a body over its limit); a response with a readable id
    /// fails the server→client request it answers at once (a `-32700` error stands in for it); a
    /// notification is only logged. Under [`NotJson::Skip`] nothing is answered; once closing,
    /// nothing at all.
    pub fn too_long(&mut self, limit: usize, line: &Overlong) -> Received {
        tracing::warn!(scope = %self.scope, limit, bytes = line.bytes, id = ?line.id, "discarded a message over the size limit");
        if self.closing {
            return Received::Nothing;
        }
        match line.verdict(limit) {
            OverlongVerdict::StandIn(error) => self.receive(error.to_json().as_bytes()),
            OverlongVerdict::Answer(_) | OverlongVerdict::Skip
                if self.options.not_json == NotJson::Skip =>
            {
                Received::Nothing
            }
            OverlongVerdict::Answer(error) => Received::Answer(error),
            OverlongVerdict::Skip => Received::Nothing,
        }
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
            Err(invalid) if invalid.is_batch() => return self.batch(bytes, &invalid),
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
                    return Received::Answer(shutting_down(request.id.clone()));
                }
                let at_limit = self.in_flight() >= self.limit();
                if at_limit
                    && (self.options.at_limit == AtLimit::Refuse || self.all_wait_for_the_client())
                {
                    return Received::Answer(batch::too_many(request.id.clone()));
                }
                let legacy = !crate::era::has_modern_meta(request.params.as_ref());
                // A handshake-era `initialize` makes the connection a legacy session: pushed
                // messages go to it from then on (modern clients open a listen stream instead).
                if request.method == "initialize" && legacy {
                    if self.options.require_initialize
                        && self.counts.initialized.load(Ordering::Acquire)
                    {
                        // One handshake per connection (spec lifecycle: initialization comes
                        // first): a repeat would change the version the connection speaks
                        // under the requests in flight. The first one stands.
                        return Received::Answer(JsonRpcResponse::error(
                            Some(request.id.clone()),
                            ErrorObject::invalid_request(
                                "this connection is already initialized (or its initialize is \
                                 still being answered): one initialize per connection",
                            ),
                        ));
                    }
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
                Some(self.take_place(request.method == "subscriptions/listen"))
            }
            _ => None,
        };
        Received::Dispatch(self.dispatch(message, slot, initialize))
    }

    /// A place in the in-flight set (and among the listen streams, for a `stream`).
    fn take_place(&self, stream: bool) -> Slot {
        self.counts.in_flight.fetch_add(1, Ordering::AcqRel);
        if stream {
            self.counts.streams.fetch_add(1, Ordering::AcqRel);
        }
        Slot {
            counts: self.counts.clone(),
            stream,
            held: false,
        }
    }

    /// The call that runs `message` on the connection's scope, in `slot` (a request's); for a
    /// handshake-era `initialize`, `initialize` says whether it is the connection's first.
    fn dispatch(
        &self,
        message: JsonRpcMessage,
        slot: Option<Slot>,
        initialize: Option<bool>,
    ) -> Call {
        let server = self.server.clone();
        let ctx = RequestContext::new()
            .with_outbound(self.outbound.clone())
            .with_scope(self.scope.clone())
            .with_identity(self.identity.clone());
        let counts = initialize.map(|first| (first, self.counts.clone()));
        Call {
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
        }
    }

    /// A batch line or frame (`refusal`: the single-message parser's answer to it): refused
    /// unless the connection negotiated 2025-03-26, else screened and taken
    /// ([`Connection::resume`]).
    fn batch(&mut self, bytes: &[u8], refusal: &InvalidMessage) -> Received {
        let negotiated = self
            .counts
            .initialized
            .load(Ordering::Acquire)
            .then(|| self.server.negotiated_version(&self.scope))
            .flatten();
        let Some(version) = negotiated else {
            tracing::debug!(scope = %self.scope, "refused a batch before initialize");
            return Received::Answer(JsonRpcResponse::error(None, batch::before_initialize()));
        };
        if !crate::protocol::receives_batches(&version) {
            tracing::debug!(scope = %self.scope, %version, "refused a batch");
            return refusal
                .response()
                .map_or(Received::Nothing, Received::Answer);
        }
        let screened = match JsonRpcBatch::from_slice(bytes).map(batch::screen) {
            Ok(Ok(screened)) => screened,
            Ok(Err(error)) => return Received::Answer(JsonRpcResponse::error(None, error)),
            Err(invalid) => {
                tracing::debug!(scope = %self.scope, error = %invalid, "invalid batch");
                return invalid
                    .response()
                    .map_or(Received::Nothing, Received::Answer);
            }
        };
        self.resume(Parked(screened))
    }

    /// Take a batch ([`Received::Batch`]), or, under [`AtLimit::Pause`], hand it back to wait
    /// ([`Received::Wait`]) while fewer places are free than it has requests (or than the
    /// limit, for a larger batch) and a request in flight can finish without the client.
    ///
    /// Taken, its elements run in order as they would alone: each request takes a place, or,
    /// with none free, is answered `-32000` "too many requests in flight" in the reply (a batch
    /// never waits half taken: the places its own answered requests keep are freed only with
    /// its reply); while draining, a request is answered "the server is shutting down".
    /// Notifications and responses run and take no place.
    pub fn resume(&mut self, parked: Parked) -> Received {
        if self.closing {
            return Received::Nothing;
        }
        let places = parked.places(self.limit());
        if self.options.at_limit == AtLimit::Pause
            && !self.draining
            && places > 0
            && self.in_flight() + places > self.limit()
            && !self.all_wait_for_the_client()
        {
            return Received::Wait(parked);
        }
        let Parked(Screened { elements, .. }) = parked;
        let mut members = Vec::new();
        let mut answered = Vec::new();
        for (at, element) in elements.into_iter().enumerate() {
            match element {
                Element::Answered(response) => answered.push((at, response)),
                Element::Request(request) if self.draining => {
                    answered.push((at, shutting_down(request.id)));
                }
                Element::Request(request) if self.in_flight() >= self.limit() => {
                    answered.push((at, batch::too_many(request.id)));
                }
                Element::Request(request) => {
                    let slot = self.take_place(request.method == "subscriptions/listen");
                    let message = JsonRpcMessage::Request(request);
                    members.push((at, Member(self.dispatch(message, Some(slot), None))));
                }
                Element::Other(message) => {
                    members.push((at, Member(self.dispatch(message, None, None))));
                }
            }
        }
        let places = members.iter().filter(|(_, m)| m.0.is_request()).count();
        Received::Batch(BatchCall {
            run: Run::new(members),
            replies: answered,
            held: Vec::with_capacity(places),
            places,
            counts: self.counts.clone(),
        })
    }
}

/// `-32000` "the server is shutting down" for request `id` ([`Connection::drain`]).
fn shutting_down(id: RequestId) -> JsonRpcResponse {
    JsonRpcResponse::error(
        Some(id),
        ErrorObject::new(ErrorCode::SERVER_ERROR, "the server is shutting down"),
    )
}

/// A batch waiting for places ([`Received::Wait`]): screened, nothing of it run yet.
pub struct Parked(Screened);

impl Parked {
    /// The places it waits for: one per request, at most the connection's `limit`.
    fn places(&self, limit: usize) -> usize {
        self.0.requests.min(limit)
    }
}

impl fmt::Debug for Parked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parked")
            .field("elements", &self.0.elements.len())
            .field("requests", &self.0.requests)
            .finish()
    }
}

/// A batch taken ([`Received::Batch`]): a future of its reply (`None`: nothing to answer — only
/// notifications and responses, every request cancelled, or the connection dropped first, which
/// cancels what still runs, as it does a [`Call`]).
///
/// Each request of the batch holds its place in the in-flight set from
/// [`Connection::receive`] until the batch call is dropped — also once it is answered, since
/// its answer waits for the others: the host drops the call once the reply is handed to its
/// writer, as it does a [`Call`].
pub struct BatchCall {
    run: Run<Member>,
    /// The answers so far, with their position in the batch.
    replies: Vec<(usize, JsonRpcResponse)>,
    /// The places of the answered requests.
    held: Vec<Slot>,
    /// How many requests of the batch run (each in a place).
    places: usize,
    counts: Arc<Counts>,
}

impl BatchCall {
    /// `true` when requests of this batch run, each holding a place in the in-flight set
    /// until the call is dropped (`false`: its reply, if any, is all answered already, or will
    /// be nothing).
    pub fn holds_places(&self) -> bool {
        self.places > 0
    }
}

impl fmt::Debug for BatchCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchCall")
            .field("places", &self.places)
            .field("answered", &self.replies.len())
            .finish_non_exhaustive()
    }
}

impl Future for BatchCall {
    type Output = Option<JsonRpcBatchResponse>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            match this.run.poll_next_unpin(cx) {
                Poll::Ready(Some((at, (answer, slot)))) => {
                    if let Some(mut slot) = slot {
                        slot.hold();
                        this.held.push(slot);
                    }
                    if let Some(answer) = answer {
                        this.replies.push((at, answer));
                    }
                }
                Poll::Ready(None) if this.counts.ended.load(Ordering::Acquire) => {
                    // The connection ended: its requests still running were cancelled, and
                    // nobody is left to read what the others answered.
                    return Poll::Ready(None);
                }
                Poll::Ready(None) => {
                    let mut replies = std::mem::take(&mut this.replies);
                    replies.sort_unstable_by_key(|(at, _)| *at);
                    let responses = replies.into_iter().map(|(_, r)| r).collect();
                    return Poll::Ready(JsonRpcBatchResponse::new(responses));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// One call of a batch: its answer, and its place (a request's) to hold until the reply.
struct Member(Call);

impl Future for Member {
    type Output = (Option<JsonRpcResponse>, Option<Slot>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let call = &mut self.0;
        call.future
            .poll_unpin(cx)
            .map(|answer| (answer, call.slot.take()))
    }
}

impl Drop for Connection {
    /// The connection ended: the server forgets its scope (and cancels what it still runs).
    fn drop(&mut self) {
        self.counts.ended.store(true, Ordering::Release);
        self.server.end_scope(&self.scope);
    }
}

#[cfg(test)]
mod tests;
