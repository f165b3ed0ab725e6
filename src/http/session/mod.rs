//! Sessions with resumable server→client streams, with no I/O (seed `MCPSession`, clauses 18
//! and 19; spec 2025-06-18 / 2025-11-25 `basic/transports`, Session Management and
//! Resumability and Redelivery).
//!
//! A [`Session`] owns the streams of one MCP session and a bounded [`ReplayLog`] of every event
//! it sent on them. Streams are numbered within the session: stream `0` is the standalone
//! `GET` stream ([`Session::push`] writes there), every `POST` answered over SSE opens a fresh
//! stream `1, 2, …` ([`Session::open_request_stream`]). Every event carries an [`EventId`]
//! `"<stream>-<seq>"` (both base36): `seq` is monotone across the whole session, so ids are unique
//! within it, and the `stream` part says which stream the event belongs to, so a resume
//! ([`Session::resume`]) replays only that stream's events, never another's (spec: "MUST NOT
//! replay messages that would have been delivered on a different stream").
//!
//! A stream has at most one live connection (a *sink*): attaching a new one replaces the old,
//! whose channel then ends, so a message is never broadcast on two connections (spec, Multiple
//! Connections). Sinks are `futures` channels of ready-encoded SSE text; the transport writes what
//! comes out and detaches ([`Session::detach`]) when its client goes.
//!
//! Time is injected: a [`Clock`] returns milliseconds, and the core never reads a clock itself.
//! [`SessionStore`] keeps the live sessions: it mints ids from the OS's secure random source
//! (`getrandom`), evicts idle sessions lazily, and refuses new sessions at its cap (see
//! [`SessionStore::mint`] for why it refuses rather than evicting). It is the in-memory default
//! of [`SessionBackend`], the seam where a store shared by several server instances plugs in.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::channel::mpsc;

use crate::wire::sse;

mod backend;
mod events;
mod log;
mod store;
mod streams;

pub use backend::{SessionBackend, Unavailable};
pub use events::{random_first_stream, EventSink};
pub use log::{
    Event, EventId, InvalidEventId, LogBudget, ReplayLog, DEFAULT_LOG_MAX_BYTES,
    DEFAULT_LOG_TOTAL_BYTES,
};
pub use store::{mint_session_id, MintError, SessionStore};
use streams::StreamMap;

/// A clock in milliseconds, injected so tests can move time (its one home is [`crate::host`]).
pub use crate::host::Clock;

/// The default bound on a session's replay log, in events (seed `DEFAULT_MCP_SESSION_CAPACITY`).
pub const DEFAULT_LOG_CAPACITY: usize = 1024;
/// The default lifetime of a logged event, in ms: 5 minutes (seed `DEFAULT_MCP_SESSION_TTL`).
pub const DEFAULT_EVENT_TTL_MS: u64 = 300_000;
/// The default idle lifetime of a session, in ms: 30 minutes.
pub const DEFAULT_SESSION_IDLE_TTL_MS: u64 = 30 * 60 * 1000;
/// The default idle lifetime of a session no request has used since its `initialize`, in ms:
/// 1 minute ([`SessionOptions::handshake_ttl_ms`]).
pub const DEFAULT_HANDSHAKE_TTL_MS: u64 = 60 * 1000;
/// The default cap on live sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 4096;
/// The default SSE `retry` the server advertises, in ms.
pub const DEFAULT_RETRY_MS: u64 = 1000;
/// The first protocol revision whose clients understand priming events (an id with empty data).
pub const PRIMING_SINCE_VERSION: &str = "2025-11-25";
/// The standalone (`GET`) stream's number.
pub const STANDALONE_STREAM: u64 = 0;

/// The receiving end of a stream: ready-encoded SSE text, ending when the stream ends, the
/// session closes, or another connection takes the stream over.
pub type EventReceiver = mpsc::UnboundedReceiver<String>;

/// Options for sessions and their store.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// Replay-log bound per session, in events (default 1024).
    pub log_capacity: usize,
    /// Lifetime of a logged event, in ms (default 5 min).
    pub event_ttl_ms: u64,
    /// A session with no live stream that saw no request for this long (ms) is evicted on the
    /// next access (default 30 min); `None` (or `Some(0)`) keeps sessions until `DELETE`.
    pub idle_ttl_ms: Option<u64>,
    /// The idle lifetime (ms) of a session that no request has named since the `initialize`
    /// that minted it (a client's `notifications/initialized` is its first use): such a session
    /// is evicted after this long, or after `idle_ttl_ms` when that is shorter (default 1 min;
    /// `None`: only `idle_ttl_ms`). A client that initializes and goes away, or a flood of bare
    /// `initialize` requests, holds a place under `max_sessions` this long, not the full idle
    /// TTL. `Some(0)` is taken as `None` (here and for `idle_ttl_ms`).
    pub handshake_ttl_ms: Option<u64>,
    /// The cap on live sessions (default 4096); an `initialize` beyond it is refused.
    pub max_sessions: usize,
    /// The SSE `retry` advertised in priming events and before a server-side close, in ms
    /// (default 1000; a session advertises at most `u32::MAX`, ~49 days).
    pub retry_ms: u64,
    /// The bound on the event data the replay logs of every session made with these options
    /// (and their clones: a store's sessions) retain together, beside each log's own 8 MiB
    /// ([`LogBudget`]; default [`DEFAULT_LOG_TOTAL_BYTES`], 256 MiB).
    pub log_budget: LogBudget,
}

impl SessionOptions {
    /// The idle TTL in ms that applies: [`SessionOptions::idle_ttl_ms`], `None` for none
    /// (`Some(0)` is none, as a Redis expiry of 0 is).
    pub fn idle_ttl(&self) -> Option<u64> {
        self.idle_ttl_ms.filter(|&ttl| ttl > 0)
    }

    /// The TTL in ms of a session no request has named since its `initialize`: the shorter of
    /// [`SessionOptions::handshake_ttl_ms`] and the idle TTL, either alone when the other is none
    /// (`Some(0)` is none); the first request that names the session moves it to
    /// [`SessionOptions::idle_ttl`].
    pub fn first_ttl(&self) -> Option<u64> {
        let handshake = self.handshake_ttl_ms.filter(|&ttl| ttl > 0);
        match (self.idle_ttl(), handshake) {
            (Some(idle), Some(handshake)) => Some(idle.min(handshake)),
            (idle, handshake) => idle.or(handshake),
        }
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            log_capacity: DEFAULT_LOG_CAPACITY,
            event_ttl_ms: DEFAULT_EVENT_TTL_MS,
            idle_ttl_ms: Some(DEFAULT_SESSION_IDLE_TTL_MS),
            handshake_ttl_ms: Some(DEFAULT_HANDSHAKE_TTL_MS),
            max_sessions: DEFAULT_MAX_SESSIONS,
            retry_ms: DEFAULT_RETRY_MS,
            log_budget: LogBudget::default(),
        }
    }
}

/// A stream's live connection.
struct Sink {
    token: u64,
    conn: Conn,
}

/// Where a live connection's events go: the channel its host reads, or — while the route polls
/// a request's dispatch the first time ([`Session::open_request_buffer`]) — a buffer the route
/// takes right after ([`Session::take_request_buffer`]), so a reply ready at once goes out whole
/// with no channel.
enum Conn {
    Channel(mpsc::UnboundedSender<String>),
    Buffer(Vec<String>),
    /// A relay of a stream another instance runs, from a shared log ([`Session::relay_on`]):
    /// nothing is delivered to it here; dropping the sender ends it.
    Relay {
        /// Held for its drop, which ends the relay.
        _ends: futures::channel::oneshot::Sender<()>,
    },
}

/// A session's mutable state. The maps keyed by stream or token hold no heap while they have
/// no entry or one ([`StreamMap`]), so an idle session (no connection, no request running)
/// holds none for them.
struct State {
    log: ReplayLog,
    /// Live sinks by stream.
    sinks: StreamMap<Sink>,
    /// The request streams not answered yet, each with whether an event was logged on it (a
    /// priming event counts).
    open: StreamMap<bool>,
    /// Buffers whose connection ended before the route took them, by token: their events (the
    /// route takes each right after its first poll, so this holds one at most per poll running).
    ended_buffers: StreamMap<Vec<String>>,
    next_stream: u64,
    next_token: u64,
    touched: u64,
    /// Whether a request named the session since the `initialize` that minted it
    /// ([`Session::touch`], [`Session::touch_if_live`]).
    used: bool,
    closed: bool,
}

/// What [`Session::take_request_buffer`] found.
pub(crate) enum Taken {
    /// The connection ended (the request was answered, or the session ended or disconnected it):
    /// every event it got, in order.
    Ended(Vec<String>),
    /// Still live: its events so far queued on a channel now attached in the buffer's place.
    Live(Attached),
}

/// One MCP session (seed `MCPSession`): its id, negotiated protocol version, streams and replay
/// log. Shared as `Arc<Session>`; every method takes `&self`.
pub struct Session {
    /// The id, shared with the server's scope of the session (no copy per request).
    id: Arc<str>,
    /// A supported version is kept as the crate's own text (no copy per session).
    protocol_version: Cow<'static, str>,
    /// The `retry` field's milliseconds ([`SessionOptions::retry_ms`], at most `u32::MAX`,
    /// ~49 days: room for the handshake byte beside it).
    retry_ms: u32,
    clock: Clock,
    state: Mutex<State>,
    /// Where request-stream events also go (a shared event log), if anywhere.
    sink: Option<Arc<dyn EventSink>>,
    /// What this instance saw of the session's `initialize`: [`HANDSHAKE_UNSEEN`] (not yet, or
    /// the session came from a shared store), [`HANDSHAKE_DONE`] or [`HANDSHAKE_FAILED`].
    handshake: AtomicU8,
}

/// [`Session::handshake`]: no `initialize` answered here yet.
const HANDSHAKE_UNSEEN: u8 = 0;
/// [`Session::handshake`]: an `initialize` of the session was answered with a result.
const HANDSHAKE_DONE: u8 = 1;
/// [`Session::handshake`]: the `initialize` that minted the session was answered with an error.
const HANDSHAKE_FAILED: u8 = 2;

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}

/// A stream opened by [`Session::resume`] or [`Session::open_request_stream`].
#[derive(Debug)]
pub struct Attached {
    /// The stream number.
    pub stream: u64,
    /// Identifies this connection for [`Session::detach`].
    pub token: u64,
    /// The stream's events: the replay first, then live events.
    pub events: EventReceiver,
}

impl Session {
    /// A session with a given id (see [`mint_session_id`]) and negotiated protocol version.
    pub fn new(
        id: impl Into<String>,
        protocol_version: impl Into<String>,
        options: &SessionOptions,
        clock: Clock,
    ) -> Self {
        let now = clock();
        Session {
            id: Arc::from(id.into()),
            protocol_version: crate::protocol::version_text(protocol_version.into()),
            retry_ms: u32::try_from(options.retry_ms).unwrap_or(u32::MAX),
            clock,
            state: Mutex::new(State {
                log: ReplayLog::new(options.log_capacity, options.event_ttl_ms)
                    .with_budget(options.log_budget.clone()),
                sinks: StreamMap::Empty,
                open: StreamMap::Empty,
                ended_buffers: StreamMap::Empty,
                next_stream: 1,
                next_token: 0,
                touched: now,
                used: false,
                closed: false,
            }),
            sink: None,
            handshake: AtomicU8::new(HANDSHAKE_UNSEEN),
        }
    }

    /// Record the answer to the session's `initialize`: a result (`ok`) makes a later
    /// `initialize` in the session a repeat ([`Session::initialized`]); an error makes the
    /// session one no request may use ([`Session::initialize_failed`]): its id was minted for a
    /// handshake that did not happen (spec, Session Management: the id comes with the
    /// `InitializeResult`).
    pub fn record_initialize(&self, ok: bool) {
        let state = if ok { HANDSHAKE_DONE } else { HANDSHAKE_FAILED };
        self.handshake.store(state, Ordering::Release);
    }

    /// Whether an `initialize` of this session was answered with a result here.
    pub fn initialized(&self) -> bool {
        self.handshake.load(Ordering::Acquire) == HANDSHAKE_DONE
    }

    /// Whether the `initialize` that minted this session was answered with an error.
    pub fn initialize_failed(&self) -> bool {
        self.handshake.load(Ordering::Acquire) == HANDSHAKE_FAILED
    }

    /// The same session, its request streams numbered from `first` (not `0`, the standalone
    /// stream) instead of `1`: a random base ([`random_first_stream`]) for a session that
    /// several server instances serve, so each stream's number is its own across them.
    pub fn with_first_stream(self, first: u64) -> Self {
        self.lock().next_stream = first.max(1);
        self
    }

    /// The same session, handing each request-stream event to `sink` as it is logged, and each
    /// stream's end (a shared event log; see [`EventSink`]).
    pub fn with_event_sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Whether this session's replay log holds the event `last_event_id` (a resume of it is
    /// served here; otherwise a shared log may know it).
    pub fn knows_event(&self, last_event_id: &str) -> bool {
        let Ok(id) = last_event_id.parse::<EventId>() else {
            return false;
        };
        let now = (self.clock)();
        self.lock().log.replay(id, now).is_some()
    }

    /// The session id (visible ASCII, for the `mcp-session-id` header).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id as the shared text the server keys the session's scope by.
    pub(crate) fn scope(&self) -> Arc<str> {
        self.id.clone()
    }

    /// The protocol version negotiated by `initialize`.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// Whether this session's clients understand priming events (version ≥ 2025-11-25).
    pub fn primes(&self) -> bool {
        &*self.protocol_version >= PRIMING_SINCE_VERSION
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Push a server→client message (its JSON text) on the standalone stream (seed `push`):
    /// logged under a fresh id (returned) and sent to the `GET` stream if one is attached, else
    /// kept for a resume. `None` once the session has ended.
    ///
    /// A session with an [`EventSink`] that takes the message (the `GET` stream may be open on
    /// another instance) neither logs nor delivers it here: the instance holding the stream does,
    /// under an id of its own (the id returned is one this log does not hold).
    pub fn push(&self, json: &str) -> Option<EventId> {
        match &self.sink {
            Some(sink) if !self.is_closed() && sink.pushed(&self.id, json) => {
                let mut state = self.lock();
                (!state.closed).then(|| state.log.reserve(STANDALONE_STREAM))
            }
            _ => self.send(STANDALONE_STREAM, json),
        }
    }

    /// [`Session::push`] delivered on this instance's standalone stream, whatever the sink: what
    /// the instance holding the `GET` stream does with a message another instance handed on.
    pub fn push_here(&self, json: &str) -> Option<EventId> {
        self.send(STANDALONE_STREAM, json)
    }

    /// Log `json` on `stream` and deliver it to the stream's live connection, if any. `None`
    /// once the session has ended.
    ///
    /// The first event of a request stream that was not primed is logged without its text: a
    /// resume replays what came after the event it names on that event's stream, and nothing on
    /// that stream comes before this one, so no resume can replay it (a client without priming
    /// events learns no earlier id). Its id is logged, so a `GET` naming it still finds its
    /// stream ([`Session::resume`]).
    pub fn send(&self, stream: u64, json: &str) -> Option<EventId> {
        self.log_and_deliver(stream, Cow::Borrowed(json))
    }

    /// [`Session::send`] of a text the caller owns: the log keeps it without a copy.
    pub(crate) fn send_owned(&self, stream: u64, json: String) -> Option<EventId> {
        self.log_and_deliver(stream, Cow::Owned(json))
    }

    fn log_and_deliver(&self, stream: u64, json: Cow<'_, str>) -> Option<EventId> {
        let now = (self.clock)();
        let mut state = self.lock();
        if state.closed {
            return None;
        }
        let first = stream != STANDALONE_STREAM
            && state
                .open
                .get_mut(stream)
                .is_some_and(|logged| !std::mem::replace(logged, true));
        let id = state.log.next_id(stream);
        if let Some(sink) = self.sink.as_ref().filter(|_| stream != STANDALONE_STREAM) {
            sink.logged(&self.id, id, Some(&json));
        }
        let text = sse::encode_event(Some(id.text().as_str()), &json);
        let kept = (!first).then(|| json.into_owned());
        let (logged, evicted) = state.log.append_evicting(stream, kept, now);
        debug_assert_eq!(logged, id);
        deliver(&mut state, stream, text);
        drop(state);
        // The evicted event's text is freed after the lock.
        drop(evicted);
        Some(id)
    }

    /// Every retained event after `after` on `after`'s stream (seed `replay`); an unknown,
    /// malformed or evicted id replays nothing.
    pub fn replay(&self, after: &str) -> Vec<Event> {
        let Ok(after) = after.parse::<EventId>() else {
            return Vec::new();
        };
        let now = (self.clock)();
        self.lock().log.replay(after, now).unwrap_or_default()
    }

    /// Open a stream for one request answered over SSE (`POST`): a fresh stream number with this
    /// connection attached, primed (an id and `retry`, empty data) when the client understands
    /// it. Send its messages with [`Session::send`] and end it with [`Session::finish`].
    /// `None` once the session has ended.
    pub fn open_request_stream(&self) -> Option<Attached> {
        let (tx, events) = mpsc::unbounded();
        let (stream, token) = self.open_request(Conn::Channel(tx))?;
        Some(Attached {
            stream,
            token,
            events,
        })
    }

    /// [`Session::open_request_stream`] whose connection collects its events in a buffer until
    /// [`Session::take_request_buffer`] (the route's first poll of the request's dispatch runs in
    /// between): its stream and token. `None` once the session has ended.
    pub(crate) fn open_request_buffer(&self) -> Option<(u64, u64)> {
        self.open_request(Conn::Buffer(Vec::new()))
    }

    /// The events of the buffered connection `token` on `stream`
    /// ([`Session::open_request_buffer`]): all of them when it has ended (the request was
    /// answered at once), else those so far, queued on a channel that replaces the buffer.
    pub(crate) fn take_request_buffer(&self, stream: u64, token: u64) -> Taken {
        let now = (self.clock)();
        let mut state = self.lock();
        if let Some(events) = state.ended_buffers.remove(token) {
            // The connection is over, as a host's detach would record it.
            state.touched = now;
            return Taken::Ended(events);
        }
        if let Some(sink) = state.sinks.get_mut(stream).filter(|s| s.token == token) {
            if let Conn::Buffer(buffered) = &mut sink.conn {
                let (tx, events) = mpsc::unbounded();
                for text in std::mem::take(buffered) {
                    let _ = tx.unbounded_send(text);
                }
                sink.conn = Conn::Channel(tx);
                return Taken::Live(Attached {
                    stream,
                    token,
                    events,
                });
            }
        }
        Taken::Ended(Vec::new())
    }

    /// A fresh request stream, open, primed when the client understands it, with `conn` attached.
    fn open_request(&self, mut conn: Conn) -> Option<(u64, u64)> {
        let primes = self.primes();
        // The clock is read for the priming event's timestamp only.
        let now = primes.then(|| (self.clock)());
        let mut state = self.lock();
        if state.closed {
            return None;
        }
        let stream = state.next_stream;
        state.next_stream += 1;
        state.open.insert(stream, primes);
        if let Some(now) = now {
            let id = state.log.append(stream, None, now);
            if let Some(sink) = &self.sink {
                sink.logged(&self.id, id, None);
            }
            let priming = sse::encode_priming(id.text().as_str(), Some(self.retry_ms.into()));
            match &mut conn {
                Conn::Channel(tx) => {
                    let _ = tx.unbounded_send(priming);
                }
                Conn::Buffer(events) => events.push(priming),
                Conn::Relay { .. } => {}
            }
        }
        let token = attach(&mut state, stream, conn);
        Some((stream, token))
    }

    /// The request on `stream` has been answered: its live connection (if any) ends, and a later
    /// resume of it replays what is retained and then ends.
    pub fn finish(&self, stream: u64) {
        let mut state = self.lock();
        state.open.remove(stream);
        if let Some(sink) = state.sinks.remove(stream) {
            end(&mut state, sink, None);
        }
        if let Some(sink) = &self.sink {
            sink.finished(&self.id, stream);
        }
    }

    /// Open a `GET` stream (seed: replay, then `attach`). With a `last_event_id` this session
    /// logged, replay that id's stream strictly after it and attach to that stream — unless it is
    /// a request stream already answered, whose replay is then all there is (the receiver ends
    /// after it). An id evicted from the log replays what is left of its stream the same way
    /// (the events between are lost; the request's response, if retained or still to come, is
    /// not). Without one, with an unknown or malformed id, or an evicted one of a stream with
    /// nothing left, attach the standalone stream, primed when the client understands it. Either way this
    /// connection replaces any other on the same stream. `None` once the session has ended.
    pub fn resume(&self, last_event_id: Option<&str>) -> Option<Attached> {
        let now = (self.clock)();
        let mut state = self.lock();
        if state.closed {
            return None;
        }
        state.touched = now;
        let (tx, events) = mpsc::unbounded();
        let cursor = last_event_id.and_then(|s| s.parse::<EventId>().ok());
        let replay = cursor.and_then(|c| {
            let replay = state.log.replay(c, now).or_else(|| {
                // Evicted (a long stream passed the log's bound): what is left of its stream —
                // a request's response above all — rather than a fresh stream on which it never
                // comes. A stream with nothing left that is not open gets the fresh one.
                let rest = state.log.replay_evicted(c, now)?;
                let open = c.stream != STANDALONE_STREAM && state.open.contains_key(c.stream);
                (!rest.is_empty() || open).then_some(rest)
            });
            replay.map(|r| (c.stream, r))
        });
        let stream = match replay {
            Some((stream, replay)) => {
                for event in &replay {
                    let data = event.data.as_deref().unwrap_or_default();
                    let _ =
                        tx.unbounded_send(sse::encode_event(Some(event.id.text().as_str()), data));
                }
                if stream != STANDALONE_STREAM && !state.open.contains_key(stream) {
                    // Answered already: the replay is the whole rest of the stream.
                    drop(tx);
                    return Some(Attached {
                        stream,
                        token: u64::MAX,
                        events,
                    });
                }
                stream
            }
            None => {
                if self.primes() {
                    let id = state.log.append(STANDALONE_STREAM, None, now);
                    let _ = tx.unbounded_send(sse::encode_priming(
                        id.text().as_str(),
                        Some(self.retry_ms.into()),
                    ));
                }
                STANDALONE_STREAM
            }
        };
        let token = attach(&mut state, stream, Conn::Channel(tx));
        Some(Attached {
            stream,
            token,
            events,
        })
    }

    /// Unregister a connection (seed `detach`), if it is still the one attached to `stream`.
    pub fn detach(&self, stream: u64, token: u64) {
        let now = (self.clock)();
        let mut state = self.lock();
        if state.sinks.get(stream).is_some_and(|s| s.token == token) {
            if let Some(sink) = state.sinks.remove(stream) {
                end(&mut state, sink, None);
            }
        }
        state.touched = now;
    }

    /// End the connection attached to `stream`, if any (a connection to another instance took
    /// the stream over: each message goes out on one stream only); `true` when one was. The
    /// stream goes on: its events are logged, for a resume.
    pub fn end_connection(&self, stream: u64) -> bool {
        let mut state = self.lock();
        match state.sinks.remove(stream) {
            Some(sink) => {
                end(&mut state, sink, None);
                true
            }
            None => false,
        }
    }

    /// Register a connection here that relays `stream` (another instance runs its request) from
    /// a shared log: the token to unregister it with, and what resolves when another
    /// connection takes the stream over (a connection here, or [`Session::end_connection`]) or
    /// the session ends — the relay then ends. A relay already registered on `stream` is ended.
    /// A relay counts as a live connection (the session is not idle while it runs).
    pub fn relay_on(&self, stream: u64) -> (u64, futures::channel::oneshot::Receiver<()>) {
        let (tx, rx) = futures::channel::oneshot::channel();
        let mut state = self.lock();
        if state.closed {
            return (u64::MAX, rx);
        }
        let token = attach(&mut state, stream, Conn::Relay { _ends: tx });
        (token, rx)
    }

    /// Unregister the relay `token` of `stream` (it ended), if it is still the one registered.
    pub fn relay_off(&self, stream: u64, token: u64) {
        let now = (self.clock)();
        let mut state = self.lock();
        if state.sinks.get(stream).is_some_and(|s| s.token == token) {
            state.sinks.remove(stream);
        }
        state.touched = now;
    }

    /// End the session (`DELETE`, eviction or shutdown): every stream's connection ends and
    /// later calls do nothing. With `retry_ms`, each live connection first gets an SSE `retry`
    /// field (a server-side close of a stream the client may resume).
    pub fn close(&self, retry_ms: Option<u64>) {
        let mut state = self.lock();
        state.closed = true;
        for (_, sink) in state.sinks.take_all() {
            end(&mut state, sink, retry_ms.map(sse::encode_retry));
        }
        state.open = StreamMap::Empty;
    }

    /// End every live connection with a `retry` field, keeping the session (server shutdown:
    /// the client reconnects later and resumes).
    pub fn disconnect_all(&self) {
        let mut state = self.lock();
        for (_, sink) in state.sinks.take_all() {
            end(
                &mut state,
                sink,
                Some(sse::encode_retry(self.retry_ms.into())),
            );
        }
    }

    /// End, with a `retry` field, every live connection that carries no unanswered request
    /// (the standalone stream, a replay of an answered one), keeping the session and the
    /// request streams (the start of a graceful shutdown: their answers still come).
    pub fn disconnect_idle(&self) {
        let mut state = self.lock();
        let idle: Vec<u64> = (state.sinks.keys())
            .filter(|stream| !state.open.contains_key(*stream))
            .collect();
        for stream in idle {
            if let Some(sink) = state.sinks.remove(stream) {
                end(
                    &mut state,
                    sink,
                    Some(sse::encode_retry(self.retry_ms.into())),
                );
            }
        }
    }

    /// End the live connection on `stream` (if any) with an SSE `retry` field, keeping the
    /// stream: what is sent on it later is logged, and a `GET` with the `Last-Event-ID` of its
    /// last event resumes it (spec 2025-11-25 `basic/transports`, Resumability and Redelivery:
    /// the server may close the connection without ending the request, the client polls).
    /// Returns whether a connection was ended (`false`: none attached, or the session ended).
    pub fn disconnect(&self, stream: u64) -> bool {
        let mut state = self.lock();
        match state.sinks.remove(stream) {
            Some(sink) => end(
                &mut state,
                sink,
                Some(sse::encode_retry(self.retry_ms.into())),
            ),
            None => false,
        }
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Whether a live connection is attached to `stream`.
    pub fn is_attached(&self, stream: u64) -> bool {
        self.lock().sinks.contains_key(stream)
    }

    /// Record activity now: a request named the session.
    pub fn touch(&self) {
        let now = (self.clock)();
        let mut state = self.lock();
        state.touched = now;
        state.used = true;
    }

    /// Record activity now when the session is live: not ended and, with an idle TTL, not idle
    /// past it ([`Session::is_idle`]); whether it was. One look at the session's state, where
    /// [`Session::is_closed`], [`Session::is_idle`] and [`Session::touch`] take three.
    pub fn touch_if_live(&self, idle_ttl_ms: Option<u64>) -> bool {
        let idle = idle_ttl_ms.filter(|&ttl| ttl > 0);
        self.touch_if_unexpired(idle, idle)
    }

    /// [`Session::touch_if_live`] with the TTL of a session no request has named yet (`first`,
    /// [`SessionOptions::first_ttl`]) beside the idle TTL ([`Session::is_expired`]).
    pub(crate) fn touch_if_unexpired(&self, idle: Option<u64>, first: Option<u64>) -> bool {
        let now = (self.clock)();
        let mut state = self.lock();
        if state.closed || state.expired(now, idle, first) {
            return false;
        }
        state.touched = now;
        state.used = true;
        true
    }

    /// Whether the session is idle past its TTL (ms): `first` while no request has named it
    /// since its `initialize` ([`SessionOptions::first_ttl`]), else `idle`; `None`: never.
    pub(crate) fn is_expired(&self, idle: Option<u64>, first: Option<u64>) -> bool {
        let now = (self.clock)();
        self.lock().expired(now, idle, first)
    }

    /// Whether the maps keyed by stream or token (live connections, unanswered request
    /// streams, buffers not taken yet) hold an entry or a table (for tests: an idle session's
    /// hold neither), and the replay log's events and room.
    #[cfg(test)]
    pub(crate) fn stream_state(&self) -> (bool, usize, usize) {
        let state = self.lock();
        let maps = [
            (state.sinks.is_empty(), state.sinks.holds_heap()),
            (state.open.is_empty(), state.open.holds_heap()),
            (
                state.ended_buffers.is_empty(),
                state.ended_buffers.holds_heap(),
            ),
        ];
        let held = maps.iter().any(|&(empty, heap)| !empty || heap);
        (held, state.log.len(), state.log.buffer_capacity())
    }

    /// Whether the session is idle past `ttl_ms`: no live connection and no activity for that
    /// long.
    pub fn is_idle(&self, ttl_ms: u64) -> bool {
        let now = (self.clock)();
        self.lock().idle(now, ttl_ms)
    }
}

impl State {
    /// No live connection and no activity for `ttl_ms` up to `now` (ms).
    fn idle(&self, now: u64, ttl_ms: u64) -> bool {
        self.sinks.is_empty() && now.saturating_sub(self.touched) >= ttl_ms
    }

    /// Idle past the TTL that applies ([`Session::is_expired`]) up to `now` (ms).
    fn expired(&self, now: u64, idle: Option<u64>, first: Option<u64>) -> bool {
        let ttl = if self.used { idle } else { first };
        ttl.is_some_and(|ttl| self.idle(now, ttl))
    }
}

fn attach(state: &mut State, stream: u64, conn: Conn) -> u64 {
    let token = state.next_token;
    state.next_token += 1;
    // Replaces (and so ends) any other connection on this stream, a relay too.
    if let Some(old) = state.sinks.insert(stream, Sink { token, conn }) {
        end(state, old, None);
    }
    token
}

/// End a connection taken out of the sinks, after `last` (a `retry` field) if given: a channel
/// ends when dropped; a buffer keeps what it got for the route to take. Whether `last` reached
/// it (`true` without one).
fn end(state: &mut State, sink: Sink, last: Option<String>) -> bool {
    match sink.conn {
        Conn::Channel(tx) => last.is_none_or(|text| tx.unbounded_send(text).is_ok()),
        // Dropped: the relay ends.
        Conn::Relay { .. } => true,
        Conn::Buffer(mut events) => {
            events.extend(last);
            state.ended_buffers.insert(sink.token, events);
            true
        }
    }
}

fn deliver(state: &mut State, stream: u64, text: String) {
    let Some(sink) = state.sinks.get_mut(stream) else {
        return;
    };
    match &mut sink.conn {
        Conn::Channel(tx) => {
            if tx.unbounded_send(text).is_err() {
                state.sinks.remove(stream);
            }
        }
        Conn::Buffer(events) => events.push(text),
        Conn::Relay { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    fn clock() -> (Arc<AtomicU64>, Clock) {
        let now = Arc::new(AtomicU64::new(1_000));
        let c = now.clone();
        (now, Arc::new(move || c.load(Ordering::SeqCst)))
    }

    fn drain(rx: &mut EventReceiver) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(text) = rx.try_recv() {
            out.push(text);
        }
        out
    }

    #[test]
    fn replay_stays_on_its_stream() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-11-25", &SessionOptions::default(), clock);
        let post = s.open_request_stream().unwrap();
        let first = s.push("{\"n\":0}").unwrap();
        s.send(post.stream, "{\"p\":1}").unwrap();
        s.push("{\"n\":1}").unwrap();
        s.send(post.stream, "{\"p\":2}").unwrap();
        let replayed: Vec<_> = s
            .replay(&first.to_string())
            .into_iter()
            .map(|e| e.data.unwrap())
            .collect();
        assert_eq!(replayed, ["{\"n\":1}"]);
        assert!(s.replay("nope").is_empty());
        assert!(s.replay("0-999").is_empty());
    }

    #[test]
    fn a_disconnected_request_stream_is_resumed_with_what_came_after() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-11-25", &SessionOptions::default(), clock);
        let mut post = s.open_request_stream().unwrap();
        let primed = drain(&mut post.events);
        assert_eq!(primed.len(), 1, "{primed:?}");
        assert!(s.disconnect(post.stream));
        assert_eq!(drain(&mut post.events), ["retry: 1000\n\n"]);
        assert!(matches!(
            post.events.try_recv(),
            Err(mpsc::TryRecvError::Closed)
        ));
        assert!(!s.disconnect(post.stream), "nothing attached any more");
        // The answer comes while no connection is attached: logged, then replayed.
        s.send(post.stream, "{\"answer\":1}").unwrap();
        s.finish(post.stream);
        let priming_id = primed[0].lines().next().unwrap().trim_start_matches("id: ");
        let mut resumed = s.resume(Some(priming_id)).unwrap();
        assert_eq!(resumed.stream, post.stream);
        let replay = drain(&mut resumed.events);
        assert_eq!(replay.len(), 1, "{replay:?}");
        assert!(replay[0].ends_with("event: message\ndata: {\"answer\":1}\n\n"));
        assert!(matches!(
            resumed.events.try_recv(),
            Err(mpsc::TryRecvError::Closed)
        ));
    }

    /// A stream longer than the log's bound loses its first events; a resume from one of them
    /// replays what is left of that stream — the response with it — and ends, answered (it got
    /// a fresh standalone stream, on which the response never came). An unknown id, or an
    /// evicted one of a stream with nothing left, still gets the standalone stream.
    #[test]
    fn a_resume_from_an_evicted_event_replays_what_is_left_of_its_stream() {
        let (_, clock) = clock();
        let options = SessionOptions {
            log_capacity: 4,
            ..SessionOptions::default()
        };
        let s = Session::new("s", "2025-11-25", &options, clock);
        let mut post = s.open_request_stream().unwrap();
        let primed = drain(&mut post.events);
        let priming_id = primed[0]
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("id: ")
            .to_owned();
        assert!(s.disconnect(post.stream));
        for n in 0..10 {
            s.send(post.stream, &format!("{{\"progress\":{n}}}"))
                .unwrap();
        }
        s.send(post.stream, "{\"answer\":1}").unwrap();
        s.finish(post.stream);
        assert!(!s.knows_event(&priming_id), "evicted");
        let mut resumed = s.resume(Some(&priming_id)).unwrap();
        assert_eq!(resumed.stream, post.stream);
        let replay = drain(&mut resumed.events);
        assert_eq!(replay.len(), 4, "{replay:?}");
        assert!(
            replay[3].ends_with("data: {\"answer\":1}\n\n"),
            "{replay:?}"
        );
        assert!(matches!(
            resumed.events.try_recv(),
            Err(mpsc::TryRecvError::Closed)
        ));
        // Never logged (a seq the log has not reached): the standalone stream.
        assert_eq!(s.resume(Some("1-zzzz")).unwrap().stream, STANDALONE_STREAM);
        // Evicted, of a stream with nothing left and answered: the standalone stream too.
        let other = s.open_request_stream().unwrap();
        let first_other = EventId {
            stream: other.stream,
            seq: 0,
        }
        .to_string();
        s.finish(other.stream);
        for n in 0..5 {
            s.push(&format!("{{\"n\":{n}}}")).unwrap();
        }
        assert_eq!(
            s.resume(Some(&first_other)).unwrap().stream,
            STANDALONE_STREAM
        );
    }

    fn ended(taken: Taken) -> Vec<String> {
        match taken {
            Taken::Ended(events) => events,
            Taken::Live(_) => panic!("still live"),
        }
    }

    #[test]
    fn a_buffered_request_answered_at_once_is_taken_whole_and_logged() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-11-25", &SessionOptions::default(), clock);
        let (stream, token) = s.open_request_buffer().unwrap();
        assert!(
            s.is_attached(stream),
            "the buffer is the stream's connection"
        );
        s.send(stream, "{\"answer\":1}").unwrap();
        s.finish(stream);
        assert!(!s.is_attached(stream));
        let events = ended(s.take_request_buffer(stream, token));
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(
            events[0].ends_with("retry: 1000\ndata: \n\n"),
            "primed: {events:?}"
        );
        assert!(events[1].ends_with("data: {\"answer\":1}\n\n"));
        // Taken once; the answer is in the log for a resume from the priming event.
        assert!(ended(s.take_request_buffer(stream, token)).is_empty());
        let priming = events[0].lines().next().unwrap().trim_start_matches("id: ");
        let mut resumed = s.resume(Some(priming)).unwrap();
        assert_eq!(drain(&mut resumed.events), events[1..]);
        assert!(matches!(
            resumed.events.try_recv(),
            Err(mpsc::TryRecvError::Closed)
        ));
    }

    #[test]
    fn a_buffered_request_still_running_goes_on_on_a_channel() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock);
        let (stream, token) = s.open_request_buffer().unwrap();
        s.send(stream, "{\"progress\":1}").unwrap();
        let Taken::Live(mut live) = s.take_request_buffer(stream, token) else {
            panic!("the request is still running");
        };
        assert_eq!((live.stream, live.token), (stream, token));
        s.send(stream, "{\"answer\":1}").unwrap();
        s.finish(stream);
        let events = drain(&mut live.events);
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(events[0].ends_with("data: {\"progress\":1}\n\n"));
        assert!(events[1].ends_with("data: {\"answer\":1}\n\n"));
        assert!(matches!(
            live.events.try_recv(),
            Err(mpsc::TryRecvError::Closed)
        ));
    }

    #[test]
    fn a_buffered_connection_ended_early_keeps_what_it_got() {
        let (_, clock) = clock();
        // The session ends: the buffer gets the `retry` a channel would, and ends.
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock.clone());
        let (stream, token) = s.open_request_buffer().unwrap();
        s.send(stream, "{\"progress\":1}").unwrap();
        s.close(Some(500));
        assert!(s.send(stream, "{\"answer\":1}").is_none());
        let events = ended(s.take_request_buffer(stream, token));
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[1], "retry: 500\n\n");
        // The server lets the client resume it: `retry`, and later events are logged only.
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock.clone());
        let (stream, token) = s.open_request_buffer().unwrap();
        let first = s.send(stream, "{\"progress\":1}").unwrap();
        assert!(s.disconnect(stream));
        s.send(stream, "{\"answer\":1}").unwrap();
        s.finish(stream);
        let events = ended(s.take_request_buffer(stream, token));
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[1], "retry: 1000\n\n");
        assert_eq!(s.replay(&first.to_string()).len(), 1);
        // Another connection takes the stream over: the buffer ends with what it had.
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock);
        let (stream, token) = s.open_request_buffer().unwrap();
        let first = s.send(stream, "{\"progress\":1}").unwrap();
        let mut other = s.resume(Some(&first.to_string())).unwrap();
        assert_eq!(other.stream, stream);
        s.send(stream, "{\"answer\":1}").unwrap();
        s.finish(stream);
        assert_eq!(ended(s.take_request_buffer(stream, token)).len(), 1);
        let events = drain(&mut other.events);
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(events[0].ends_with("data: {\"answer\":1}\n\n"));
    }

    #[test]
    fn the_first_event_of_an_unprimed_request_stream_keeps_its_id_not_its_text() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock);
        // Answered at once: one event, which nothing on its stream precedes.
        let (stream, token) = s.open_request_buffer().unwrap();
        let answer = s.send(stream, "{\"answer\":1}").unwrap();
        s.finish(stream);
        let events = ended(s.take_request_buffer(stream, token));
        assert_eq!(events.len(), 1);
        assert!(
            events[0].ends_with("data: {\"answer\":1}\n\n"),
            "delivered whole"
        );
        assert_eq!(s.lock().log.retained_bytes(), 0, "its text is not kept");
        // Its id is known: a resume from it replays nothing and ends (the stream is answered).
        assert!(s.knows_event(&answer.to_string()));
        let mut resumed = s.resume(Some(&answer.to_string())).unwrap();
        assert_eq!(resumed.stream, stream);
        assert!(drain(&mut resumed.events).is_empty());
        assert!(matches!(
            resumed.events.try_recv(),
            Err(mpsc::TryRecvError::Closed)
        ));
        // What comes after the first event is kept, and replayed after it.
        let (stream, _) = s.open_request_buffer().unwrap();
        let progress = s.send(stream, "{\"progress\":1}").unwrap();
        s.send(stream, "{\"answer\":2}").unwrap();
        let replayed = s.replay(&progress.to_string());
        assert_eq!(replayed.len(), 1);
        assert_eq!(replayed[0].data.as_deref(), Some("{\"answer\":2}"));
        assert_eq!(s.lock().log.retained_bytes(), "{\"answer\":2}".len());
        // The standalone stream keeps every push (a priming event may precede any of them).
        let pushed = s.push("{\"n\":0}").unwrap();
        assert_eq!(
            s.lock().log.retained_bytes(),
            "{\"answer\":2}".len() + "{\"n\":0}".len()
        );
        assert!(s.knows_event(&pushed.to_string()));
    }

    /// State that is empty when a session is idle holds no heap: the maps keyed by stream and
    /// token (live connections, unanswered requests, buffers not taken yet) after requests
    /// answered at once, on a channel beside a `GET` stream, still running when taken, and in
    /// parallel; the log has room for the one event an idle session keeps.
    #[test]
    fn an_idle_session_holds_no_stream_maps() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock);
        let idle = |s: &Session| !s.stream_state().0;
        assert!(idle(&s));
        // The `initialize` answer: buffered, answered at once, taken.
        let (stream, token) = s.open_request_buffer().unwrap();
        s.send(stream, "{\"answer\":1}").unwrap();
        s.finish(stream);
        assert_eq!(ended(s.take_request_buffer(stream, token)).len(), 1);
        assert!(idle(&s));
        assert_eq!(s.stream_state(), (false, 1, 1), "room for its one event");

        // Beside a `GET` stream, a request takes a table, kept while the `GET` stream lives
        // (the next request allocates none), released when it goes.
        let mut get = s.resume(None).unwrap();
        let mut post = s.open_request_stream().unwrap();
        assert!(s.lock().sinks.holds_heap(), "two live connections");
        s.send(post.stream, "{\"answer\":2}").unwrap();
        s.finish(post.stream);
        assert_eq!(drain(&mut post.events).len(), 1);
        assert!(s.lock().sinks.holds_heap());
        let (stream, token) = s.open_request_buffer().unwrap();
        s.push("{\"pushed\":1}").unwrap();
        s.finish(stream);
        assert!(ended(s.take_request_buffer(stream, token)).is_empty());
        assert_eq!(
            drain(&mut get.events).len(),
            1,
            "the push went to the GET stream"
        );
        s.detach(get.stream, get.token);
        assert!(idle(&s));

        // Still running when taken, disconnected, answered while no connection is attached.
        let (stream, token) = s.open_request_buffer().unwrap();
        let Taken::Live(mut live) = s.take_request_buffer(stream, token) else {
            panic!("the request is still running");
        };
        assert!(s.disconnect(stream));
        assert_eq!(drain(&mut live.events), ["retry: 1000\n\n"]);
        s.send(stream, "{\"answer\":3}").unwrap();
        s.finish(stream);
        assert!(idle(&s));

        // Requests in parallel.
        let opened: Vec<_> = (0..3).map(|_| s.open_request_buffer().unwrap()).collect();
        assert!(s.lock().open.holds_heap());
        for &(stream, _) in &opened {
            s.send(stream, "{}").unwrap();
            s.finish(stream);
        }
        for &(stream, token) in &opened {
            assert_eq!(ended(s.take_request_buffer(stream, token)).len(), 1);
        }
        assert!(idle(&s));
        assert!(!s.is_closed());
    }

    /// What a session struct costs beside its heap: an upper bound (64-bit targets), so it does
    /// not grow back unnoticed.
    #[test]
    fn the_sessions_made_with_one_options_share_its_log_budget() {
        let (_, clock) = clock();
        let options = SessionOptions {
            log_budget: LogBudget::new(100),
            ..SessionOptions::default()
        };
        let a = Session::new("a", "2025-06-18", &options, clock.clone());
        let b = Session::new("b", "2025-06-18", &options.clone(), clock);
        let x = "x".repeat(60);
        a.push(&x);
        assert_eq!(options.log_budget.used(), 60);
        // `b`'s event does not fit beside `a`'s, and `b` has none of its own to give up.
        b.push(&x);
        assert_eq!(options.log_budget.used(), 60);
        drop(a);
        assert_eq!(
            options.log_budget.used(),
            0,
            "an ended session gives its bytes back"
        );
        b.push(&x);
        assert_eq!(options.log_budget.used(), 60);
    }

    #[test]
    fn a_session_is_compact() {
        assert!(size_of::<Session>() <= 280, "{}", size_of::<Session>());
        // A supported version is the crate's own text; any other is kept as given.
        let (_, clock) = clock();
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock.clone());
        assert!(matches!(s.protocol_version, Cow::Borrowed(_)));
        assert!(!s.primes());
        let s = Session::new("s", "2099-01-01", &SessionOptions::default(), clock);
        assert!(matches!(s.protocol_version, Cow::Owned(_)));
        assert_eq!(s.protocol_version(), "2099-01-01");
        assert!(s.primes());
    }

    #[test]
    fn a_new_connection_replaces_the_old_one() {
        let (_, clock) = clock();
        let s = Session::new("s", "2025-06-18", &SessionOptions::default(), clock);
        let mut one = s.resume(None).unwrap();
        let mut two = s.resume(None).unwrap();
        s.push("x");
        assert!(drain(&mut one.events).is_empty());
        assert!(
            matches!(one.events.try_recv(), Err(mpsc::TryRecvError::Closed)),
            "the first connection ended"
        );
        assert_eq!(
            drain(&mut two.events),
            ["id: 0-0\nevent: message\ndata: x\n\n"]
        );
    }
}
