//! Server→client requests across a gateway: the upstream server's sampling, elicitation and
//! roots requests reach the downstream client of the call that caused them, in whichever era
//! each side speaks.
//!
//! The [`Relay`] is the upstream client's [`ClientHandler`]. Each call the gateway forwards
//! ([`Relay::run`]) registers itself while it runs. A 2026-07-28 upstream's input requests
//! come back inside the call they belong to (a per-request handler), so they reach its client
//! exactly. A handshake-era server→client request names no call: it goes to the call in
//! flight — with several, to the newest when they all came on one downstream connection or
//! session, and is refused (`-32603`) when they came from several clients, rather than asked
//! of the wrong one.
//!
//! How the downstream client is asked depends on its era:
//! - **handshake era** (2025-11-25 and before): a real server→client request on its channel
//!   ([`RequestContext::create_message`] and the like);
//! - **2026-07-28**: the call is answered with an input-required result
//!   ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)) and
//!   the upstream call is *parked*: its future, waiting for the answer, is kept under an id
//!   sealed into `requestState`. The client's retry (carrying `inputResponses` and that
//!   `requestState`) resumes it, and the answer goes upstream. Parked calls are bounded in
//!   count ([`RelayOptions::max_parked`]; the oldest is dropped beyond) and idle time
//!   ([`RelayOptions::parked_idle`]); a dropped call is cancelled upstream.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::future::Either;
use futures::StreamExt;
use indexmap::IndexMap;
use serde_json::{json, Value};

use crate::client::{ClientError, ClientHandler, RequestOptions};
use crate::era::Era;
use crate::host::Clock;
use crate::protocol::LogLevel;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};
use crate::BoxFuture;

/// The member of `requestState` naming a parked call.
const STATE_KEY: &str = "gateway";
/// The prefix of the `inputResponses` keys the relay asks under (`gateway-1`, `gateway-2`, …).
const KEY_PREFIX: &str = "gateway-";
/// How many upstream requests one call may have waiting for its client.
const ASK_BUFFER: usize = 16;

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// An upstream call the relay drives: started with the per-request options (progress)
        /// it should pass to the upstream client (`Send` on native targets).
        pub type Start = Box<dyn FnOnce(RequestOptions) -> BoxFuture<'static, Result<Value, ClientError>>>;
    } else {
        /// An upstream call the relay drives: started with the per-request options (progress)
        /// it should pass to the upstream client (`Send` on native targets).
        pub type Start = Box<dyn FnOnce(RequestOptions) -> BoxFuture<'static, Result<Value, ClientError>> + Send>;
    }
}

/// Limits of a [`Relay`].
#[derive(Clone)]
pub struct RelayOptions {
    /// At most this many 2026-07-28 calls parked while their client answers (default 256).
    pub max_parked: usize,
    /// A parked call whose client has not come back within this long is dropped (and
    /// cancelled upstream); default 5 minutes.
    pub parked_idle: Duration,
    /// Milliseconds since the Unix epoch (default: the system clock).
    pub clock: Option<Clock>,
}

impl Default for RelayOptions {
    fn default() -> Self {
        RelayOptions {
            max_parked: 256,
            parked_idle: Duration::from_secs(300),
            clock: None,
        }
    }
}

impl std::fmt::Debug for RelayOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayOptions")
            .field("max_parked", &self.max_parked)
            .field("parked_idle", &self.parked_idle)
            .finish_non_exhaustive()
    }
}

/// One upstream request waiting for the downstream client's answer.
struct Ask {
    method: String,
    params: Value,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// Where a call's progress and logs go: the context of its latest round.
type Sink = Arc<Mutex<Option<RequestContext>>>;

/// A call in flight (running or parked).
struct Active {
    id: u64,
    asks: mpsc::Sender<Ask>,
    sink: Sink,
    parked: bool,
    /// The downstream connection or session the call came on (`None`: a stateless request).
    scope: Option<Arc<str>>,
}

/// A call's state between polls.
struct Call {
    id: u64,
    future: BoxFuture<'static, Result<Value, ClientError>>,
    asks: mpsc::Receiver<Ask>,
    /// The upstream requests the client is being asked (2026-07-28), under their keys.
    waiting: Vec<(String, Ask)>,
    /// How many upstream requests have been keyed (the next key's number).
    asked: u32,
    sink: Sink,
}

impl Call {
    /// Queue `ask` for the client under the next key.
    fn key(&mut self, ask: Ask) {
        self.asked += 1;
        self.waiting
            .push((format!("{KEY_PREFIX}{}", self.asked), ask));
    }
}

struct Parked {
    call: Call,
    since: u64,
}

struct Inner {
    options: RelayOptions,
    clock: Clock,
    next: AtomicU64,
    calls: AtomicU64,
    failures: AtomicU64,
    active: Mutex<Vec<Active>>,
    parked: Mutex<IndexMap<u64, Parked>>,
}

/// The upstream client's handler and the table of calls in flight through the gateway (cheap
/// to clone; every clone is the same relay).
#[derive(Clone)]
pub struct Relay {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("in_flight", &self.in_flight())
            .field("parked", &self.parked())
            .finish()
    }
}

impl Default for Relay {
    fn default() -> Self {
        Relay::new(RelayOptions::default())
    }
}

impl Relay {
    /// A relay with these limits.
    pub fn new(options: RelayOptions) -> Self {
        let clock = options
            .clock
            .clone()
            .unwrap_or_else(crate::host::defaults::system_clock);
        Relay {
            inner: Arc::new(Inner {
                options,
                clock,
                next: AtomicU64::new(1),
                calls: AtomicU64::new(0),
                failures: AtomicU64::new(0),
                active: Mutex::new(Vec::new()),
                parked: Mutex::new(IndexMap::new()),
            }),
        }
    }

    /// How many calls are in flight (running or parked).
    pub fn in_flight(&self) -> usize {
        lock(&self.inner.active).len()
    }

    /// How many 2026-07-28 calls are parked, waiting for their client's retry.
    pub fn parked(&self) -> usize {
        lock(&self.inner.parked).len()
    }

    /// Run one forwarded call for the downstream request `ctx`: start it upstream (or resume
    /// the parked call its `requestState` names), relay its progress, and answer the upstream
    /// server's requests through `ctx`'s client, until the call ends.
    ///
    /// # Errors
    /// The upstream JSON-RPC error as is; `-32603` when the upstream is unreachable; the
    /// input-required marker when a 2026-07-28 client must answer first (the server then
    /// answers the round with an input-required result); `-32602` when `requestState` names a
    /// parked call that is gone (expired or evicted).
    pub async fn run(&self, ctx: &RequestContext, start: Start) -> Result<Value, ErrorObject> {
        let outcome = self.drive(ctx, start).await;
        if matches!(&outcome, Err(e) if e.code != ErrorCode::INPUT_REQUIRED) {
            self.inner.failures.fetch_add(1, Ordering::Relaxed);
        }
        outcome
    }

    /// How many calls have started through this relay (a 2026-07-28 call's later rounds not
    /// counted again).
    pub fn calls(&self) -> u64 {
        self.inner.calls.load(Ordering::Relaxed)
    }

    /// How many of them ended in an error (upstream or downstream).
    pub fn failures(&self) -> u64 {
        self.inner.failures.load(Ordering::Relaxed)
    }

    async fn drive(&self, ctx: &RequestContext, start: Start) -> Result<Value, ErrorObject> {
        let mut call = match self.resume(ctx)? {
            Some(call) => call,
            None => {
                self.inner.calls.fetch_add(1, Ordering::Relaxed);
                self.start(ctx, start)
            }
        };
        let mut guard = Unregister {
            relay: self,
            id: Some(call.id),
        };
        loop {
            if !call.waiting.is_empty() {
                // Every request waiting goes into this one round; those the client has
                // answered (a retry's `inputResponses`) go upstream.
                let mut required = None;
                for (key, ask) in std::mem::take(&mut call.waiting) {
                    match ctx.input(&key, &ask.method, ask.params.clone()).await {
                        Ok(answer) => {
                            let _ = ask.answer.send(Ok(answer));
                        }
                        Err(e) if e.code == ErrorCode::INPUT_REQUIRED => {
                            required = Some(e);
                            call.waiting.push((key, ask));
                        }
                        Err(e) => {
                            let _ = ask.answer.send(Err(e));
                        }
                    }
                }
                if let Some(e) = required {
                    ctx.set_request_state(json!({ STATE_KEY: call.id }));
                    guard.id = None;
                    self.park(call);
                    return Err(e);
                }
                continue;
            }
            match futures::future::select(&mut call.future, call.asks.next()).await {
                Either::Left((result, _)) => {
                    return result.map_err(upstream_error);
                }
                Either::Right((Some(ask), _)) if ctx.era == Era::Modern => {
                    call.key(ask);
                    // The upstream's other requests sent with it join the same round.
                    while let Ok(ask) = call.asks.try_recv() {
                        call.key(ask);
                    }
                }
                Either::Right((Some(ask), _)) => {
                    let answer = ask_handshake_client(ctx, &ask.method, ask.params).await;
                    let _ = ask.answer.send(answer);
                }
                // Unreachable while the call is registered (the table holds a sender); wait
                // for the call alone.
                Either::Right((None, _)) => {
                    return (&mut call.future).await.map_err(upstream_error)
                }
            }
        }
    }

    fn start(&self, ctx: &RequestContext, start: Start) -> Call {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(ASK_BUFFER);
        let sink: Sink = Arc::new(Mutex::new(Some(ctx.clone())));
        lock(&self.inner.active).push(Active {
            id,
            asks: tx.clone(),
            sink: sink.clone(),
            parked: false,
            scope: ctx.scope.clone(),
        });
        let progress_sink = sink.clone();
        // Logs upstream: as many as this client takes (a handshake-era client takes every
        // level until it sets one; a 2026-07-28 client only what its request asked for).
        let log_level = match ctx.era {
            Era::Modern => ctx.log_level,
            _ => Some(ctx.log_level.unwrap_or(LogLevel::Debug)),
        };
        let options = RequestOptions {
            log_level,
            // A 2026-07-28 upstream's inputs for this call come back to this call.
            handler: Some(Arc::new(CallHandler { asks: tx })),
            on_progress: Some(Arc::new(move |p: &crate::client::Progress| {
                if let Some(ctx) = lock(&progress_sink).as_ref() {
                    ctx.progress(p.progress, p.total, p.message.as_deref());
                }
            })),
            ..RequestOptions::default()
        };
        Call {
            id,
            future: start(options),
            asks: rx,
            waiting: Vec::new(),
            asked: 0,
            sink,
        }
    }

    /// The parked call `ctx`'s `requestState` names, taken out of the table and pointed at
    /// `ctx`; `None` when the state names none.
    fn resume(&self, ctx: &RequestContext) -> Result<Option<Call>, ErrorObject> {
        let Some(id) = ctx
            .request_state()
            .and_then(|state| state.get(STATE_KEY))
            .and_then(Value::as_u64)
        else {
            return Ok(None);
        };
        self.expire();
        let Some(parked) = lock(&self.inner.parked).shift_remove(&id) else {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "the gateway no longer holds this call (it waited too long for the answer); call again",
            ));
        };
        let call = parked.call;
        *lock(&call.sink) = Some(ctx.clone());
        if let Some(active) = lock(&self.inner.active).iter_mut().find(|a| a.id == id) {
            active.parked = false;
        }
        Ok(Some(call))
    }

    fn park(&self, call: Call) {
        self.expire();
        let id = call.id;
        *lock(&call.sink) = None;
        if let Some(active) = lock(&self.inner.active).iter_mut().find(|a| a.id == id) {
            active.parked = true;
        }
        let evicted = {
            let mut parked = lock(&self.inner.parked);
            let evicted = (parked.len() >= self.inner.options.max_parked.max(1))
                .then(|| parked.shift_remove_index(0))
                .flatten();
            let since = (self.inner.clock)();
            parked.insert(id, Parked { call, since });
            evicted
        };
        if let Some((old, _)) = evicted {
            tracing::debug!(
                call = old,
                "gateway: the oldest parked call is dropped (too many)"
            );
            self.unregister(old);
        }
    }

    /// Drop the parked calls idle beyond [`RelayOptions::parked_idle`].
    fn expire(&self) {
        let now = (self.inner.clock)();
        let idle = u64::try_from(self.inner.options.parked_idle.as_millis()).unwrap_or(u64::MAX);
        let expired: Vec<Parked> = {
            let mut parked = lock(&self.inner.parked);
            let ids: Vec<u64> = parked
                .iter()
                .filter(|(_, p)| now.saturating_sub(p.since) > idle)
                .map(|(id, _)| *id)
                .collect();
            ids.iter()
                .filter_map(|id| parked.shift_remove(id))
                .collect()
        };
        for parked in expired {
            tracing::debug!(call = parked.call.id, "gateway: a parked call expired");
            self.unregister(parked.call.id);
        }
    }

    fn unregister(&self, id: u64) {
        lock(&self.inner.active).retain(|a| a.id != id);
    }

    /// Route one upstream request that names no call (the handshake era) to the call in
    /// flight: the running ones first, else the parked ones. Several candidates are told apart
    /// only when they all came on the same downstream connection or session (then the newest
    /// answers); otherwise the request is refused rather than shown to the wrong client.
    fn ask(&self, method: &str, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let target = {
            let active = lock(&self.inner.active);
            let running: Vec<&Active> = active.iter().filter(|a| !a.parked).collect();
            let candidates = if running.is_empty() {
                active.iter().collect()
            } else {
                running
            };
            match candidates.as_slice() {
                [] => Err("no call is in flight through the gateway to ask its client"),
                [one] => Ok(one.asks.clone()),
                [first, ..]
                    if first.scope.is_some()
                        && candidates.iter().all(|a| a.scope == first.scope) =>
                {
                    Ok(candidates[candidates.len() - 1].asks.clone())
                }
                _ => {
                    Err("calls of several clients are in flight and the request names none of them")
                }
            }
        };
        match target {
            Ok(asks) => send_ask(asks, method, params),
            Err(why) => {
                let error = ErrorObject::internal(format!("{method}: {why}"));
                Box::pin(async move { Err(error) })
            }
        }
    }

    /// Relay an upstream `notifications/message` to the newest call in flight (its client's
    /// log level applies); `false` when no call is in flight or the level filters it out.
    pub fn log(&self, params: &Value) -> bool {
        let Ok(level) = serde_json::from_value::<LogLevel>(params["level"].clone()) else {
            return false;
        };
        let sink = lock(&self.inner.active)
            .iter()
            .rev()
            .find(|a| !a.parked)
            .map(|a| a.sink.clone());
        let Some(sink) = sink else {
            return false;
        };
        let ctx = lock(&sink).clone();
        ctx.is_some_and(|ctx| {
            ctx.log(
                level,
                params["logger"].as_str(),
                params.get("data").cloned().unwrap_or(Value::Null),
            )
        })
    }
}

impl ClientHandler for Relay {
    /// Sampling, elicitation (form and URL) and roots: whatever the downstream client of the
    /// call declared decides, per request.
    fn capabilities(&self) -> Value {
        capabilities()
    }

    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.ask("sampling/createMessage", params)
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.ask("elicitation/create", params)
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.ask("roots/list", json!({}))
    }
}

/// Put one upstream request on a call's channel and wait for its client's answer.
fn send_ask(
    mut asks: mpsc::Sender<Ask>,
    method: &str,
    params: Value,
) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    let (tx, rx) = oneshot::channel();
    let ask = Ask {
        method: method.to_owned(),
        params,
        answer: tx,
    };
    let sent = asks.try_send(ask).map_err(|e| {
        if e.is_full() {
            "too many requests are waiting for this call's client"
        } else {
            "the call ended"
        }
    });
    let method = method.to_owned();
    Box::pin(async move {
        if let Err(why) = sent {
            return Err(ErrorObject::internal(format!("{method}: {why}")));
        }
        rx.await.unwrap_or_else(|_| {
            Err(ErrorObject::internal(format!(
                "{method}: the call ended before its client answered"
            )))
        })
    })
}

/// One call's handler for a 2026-07-28 upstream: its input requests arrive on the call's own
/// channel (exact, whatever else is in flight).
struct CallHandler {
    asks: mpsc::Sender<Ask>,
}

impl ClientHandler for CallHandler {
    fn capabilities(&self) -> Value {
        capabilities()
    }

    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        send_ask(self.asks.clone(), "sampling/createMessage", params)
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        send_ask(self.asks.clone(), "elicitation/create", params)
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        send_ask(self.asks.clone(), "roots/list", json!({}))
    }
}

/// What a gateway's client declares: whatever the downstream client of each call declared
/// decides, per request.
fn capabilities() -> Value {
    json!({ "sampling": {}, "elicitation": { "form": {}, "url": {} }, "roots": {} })
}

/// Takes a call out of the in-flight table when its future ends or is dropped (a downstream
/// cancellation), unless it was parked.
struct Unregister<'a> {
    relay: &'a Relay,
    id: Option<u64>,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.relay.unregister(id);
        }
    }
}

/// Ask a handshake-era client with a real server→client request (its capabilities checked).
async fn ask_handshake_client(
    ctx: &RequestContext,
    method: &str,
    params: Value,
) -> Result<Value, ErrorObject> {
    match method {
        "sampling/createMessage" => ctx.create_message(params).await,
        "elicitation/create" => ctx.elicit(params).await,
        "roots/list" => ctx.list_roots().await,
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// The downstream error for an upstream failure: its JSON-RPC error as is, anything else
/// `-32603` with the reason (a closed connection without its cause).
pub(crate) fn upstream_error(error: ClientError) -> ErrorObject {
    match error {
        ClientError::Rpc(error) => error,
        // Why it closed (a child's exit status and last stderr lines) is the gateway's to log,
        // not its clients' to read.
        ClientError::TransportClosed { cause } => {
            tracing::warn!(%cause, "gateway: the upstream connection closed");
            ErrorObject::internal("upstream: the upstream server's connection closed")
        }
        other => ErrorObject::internal(format!("upstream: {other}")),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
