//! Per-connection state the server keeps, with no I/O: server→client requests awaiting answers,
//! requests in flight (for `notifications/cancelled`), and each scope's (a connection's or a
//! session's) log level, client capabilities, resource subscriptions and push channel.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::channel::oneshot;
use futures::future::AbortHandle;
use serde_json::Value;

use crate::host::Outbound;
use crate::protocol::LogLevel;
use crate::wire::jsonrpc::{ErrorObject, RequestId};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

type Answer = oneshot::Sender<Result<Value, ErrorObject>>;
/// A scope name: a connection's or a session's (`None` for stateless requests).
type Scope = Option<Arc<str>>;
/// A map hashed with foldhash, seeded at random per process: several times cheaper than
/// SipHash on these short keys, and a peer choosing its request ids cannot predict the seed
/// (HashDoS).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Server→client requests awaiting the client's response, by id.
#[derive(Default)]
pub struct Pending {
    next: AtomicI64,
    waiting: Mutex<HashMap<RequestId, (Scope, Answer)>>,
    /// Set by [`Pending::tag`]: ids are `s-{tag}-{n}`, unique across server instances.
    tag: std::sync::OnceLock<String>,
}

impl Pending {
    /// Allocate an id and a slot for its answer.
    pub(crate) fn register(
        &self,
        scope: Option<Arc<str>>,
    ) -> (RequestId, oneshot::Receiver<Result<Value, ErrorObject>>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(match self.tag.get() {
            Some(tag) => format!("s-{tag}-{n}"),
            None => format!("s-{n}"),
        });
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), (scope, tx));
        (id, rx)
    }

    /// Tag every id allocated from now on (`s-{tag}-{n}`); the first tag stays.
    pub(crate) fn tag(&self, tag: &str) {
        let _ = self.tag.set(tag.to_owned());
    }

    pub(crate) fn forget(&self, id: &RequestId) {
        lock(&self.waiting).remove(id);
    }

    /// Deliver a response that arrived on `scope`; `false` when no request of ours sent to that
    /// same scope has that id (logged by the caller). A response from another connection or
    /// session never resolves a request: the ids are a counter, so any peer could guess them.
    pub(crate) fn resolve(
        &self,
        scope: &Scope,
        id: &RequestId,
        payload: Result<Value, ErrorObject>,
    ) -> bool {
        let mut waiting = lock(&self.waiting);
        if waiting.get(id).is_none_or(|(s, _)| s != scope) {
            return false;
        }
        match waiting.remove(id) {
            Some((_, tx)) => {
                let _ = tx.send(payload);
                true
            }
            None => false,
        }
    }

    /// Server→client requests sent to `scope` still waiting for its answer.
    pub(crate) fn waiting_on(&self, scope: &str) -> usize {
        lock(&self.waiting)
            .values()
            .filter(|(s, _)| s.as_deref() == Some(scope))
            .count()
    }

    /// Fail every request waiting on `scope` (its connection ended).
    pub(crate) fn fail_scope(&self, scope: &str) {
        lock(&self.waiting).retain(|_, (s, _)| s.as_deref() != Some(scope));
    }
}

/// What the server remembers about one scope.
#[derive(Default)]
pub(crate) struct Peer {
    pub log_level: Option<LogLevel>,
    pub client_capabilities: Option<Value>,
    /// The capabilities our `initialize` result declared to this peer.
    pub server_capabilities: Option<Value>,
    pub protocol_version: Option<String>,
    /// `notifications/initialized` arrived on this scope: the server may send it requests other
    /// than `ping` from then on (spec `basic/lifecycle`).
    pub initialized: bool,
    pub subscriptions: HashSet<String>,
    pub outbound: Option<Outbound>,
}

/// Every known scope, plus the requests in flight.
#[derive(Default)]
pub(crate) struct Peers {
    scopes: Mutex<FastMap<Arc<str>, Peer>>,
    in_flight: Mutex<FastMap<(Scope, RequestId), AbortHandle>>,
}

impl Peers {
    pub fn with<R>(&self, scope: &Arc<str>, f: impl FnOnce(&mut Peer) -> R) -> R {
        f(lock(&self.scopes).entry(scope.clone()).or_default())
    }

    pub fn read<R>(&self, scope: &str, f: impl FnOnce(&Peer) -> R) -> Option<R> {
        lock(&self.scopes).get(scope).map(f)
    }

    pub fn remove(&self, scope: &str) {
        lock(&self.scopes).remove(scope);
        lock(&self.in_flight).retain(|(s, _), handle| {
            let keep = s.as_deref() != Some(scope);
            if !keep {
                handle.abort();
            }
            keep
        });
    }

    /// The scopes that pass `filter`, with their push channels. (The caller filters further
    /// outside the lock: a shared store's check takes locks of its own.)
    pub fn scopes_where(
        &self,
        filter: impl Fn(&Peer) -> bool,
    ) -> Vec<(Arc<str>, Option<Outbound>)> {
        lock(&self.scopes)
            .iter()
            .filter(|(_, p)| filter(p))
            .map(|(scope, p)| (scope.clone(), p.outbound.clone()))
            .collect()
    }

    /// Record a request in flight; `false` (and nothing recorded) when a request with the same
    /// id is already in flight on `scope` (the spec forbids reusing an id in a session).
    pub fn start(&self, scope: Option<Arc<str>>, id: RequestId, handle: AbortHandle) -> bool {
        match lock(&self.in_flight).entry((scope, id)) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(handle);
                true
            }
        }
    }

    pub fn finish(&self, scope: &Option<Arc<str>>, id: &RequestId) {
        lock(&self.in_flight).remove(&(scope.clone(), id.clone()));
    }

    /// Abort the request `id` on `scope`; `true` when it was running.
    pub fn cancel(&self, scope: &Option<Arc<str>>, id: &RequestId) -> bool {
        match lock(&self.in_flight).remove(&(scope.clone(), id.clone())) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }
}
