//! Per-connection state the server keeps, with no I/O: server→client requests awaiting answers,
//! requests in flight (for `notifications/cancelled`), and each scope's (a connection's or a
//! session's) log level, client capabilities, resource subscriptions and push channel.

use crate::collections::{HashMap, HashSet};
use std::borrow::Cow;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::channel::oneshot;
use futures::future::AbortHandle;
use serde_json::Value;

use crate::host::Outbound;
use crate::protocol::LogLevel;
use crate::wire::jsonrpc::{ErrorObject, RequestId};

/// How many resources one scope (a connection or a session) may be subscribed to at once with
/// `resources/subscribe`: 1,024. A subscription beyond it is answered `-32000` "too many
/// resource subscriptions" and nothing is recorded; subscribing again to a URI already
/// subscribed still succeeds, and `resources/unsubscribe` frees a place. With
/// [`MAX_SUBSCRIPTION_URI_BYTES`](super::MAX_SUBSCRIPTION_URI_BYTES) it bounds what a peer's
/// subscriptions hold (8 MiB a scope).
pub const MAX_SUBSCRIPTIONS_PER_SCOPE: usize = 1024;

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

/// What the server remembers about one scope. Kept boxed in the scope map (a slot is a key and
/// a pointer), and compact: the capabilities are shared ([`Shared`]), a supported protocol
/// version is the crate's own text and the subscriptions hold no heap while there are none.
#[derive(Default)]
pub(crate) struct Peer {
    pub log_level: Option<LogLevel>,
    /// `notifications/initialized` arrived on this scope: the server may send it requests other
    /// than `ping` from then on (spec `basic/lifecycle`).
    pub initialized: bool,
    pub client_capabilities: Option<Arc<Value>>,
    /// The capabilities our `initialize` result declared to this peer.
    pub server_capabilities: Option<Arc<Value>>,
    pub protocol_version: Option<Cow<'static, str>>,
    pub subscriptions: Subscriptions,
    pub outbound: Option<Outbound>,
    /// The authorization context of the token its `initialize` carried
    /// ([`Identity::context`](crate::http::identity::Identity::context)): the scope's requests
    /// must come from it (`None`: made without a token, any request may use it).
    /// (A thin pointer: the slot stays small for the many scopes without one.)
    pub authorization: Option<Arc<String>>,
}

/// A scope's resource subscriptions: no heap while there are none. Boxed, so a scope with none
/// spends a pointer on them, not a set's 48 bytes.
#[derive(Default)]
#[allow(clippy::box_collection)]
pub(crate) struct Subscriptions(Option<Box<HashSet<String>>>);

impl Subscriptions {
    pub fn insert(&mut self, uri: String) {
        self.0.get_or_insert_with(Box::default).insert(uri);
    }

    /// Remove `uri`; the set goes with its last URI.
    pub fn remove(&mut self, uri: &str) {
        if let Some(set) = &mut self.0 {
            set.remove(uri);
            if set.is_empty() {
                self.0 = None;
            }
        }
    }

    /// Subscribe to `uri`, at most [`MAX_SUBSCRIPTIONS_PER_SCOPE`]
    /// URIs: one already subscribed takes no further place; past the cap, `-32000` and nothing
    /// is recorded.
    pub fn subscribe(&mut self, uri: String) -> Result<(), ErrorObject> {
        if self.contains(&uri) {
            return Ok(());
        }
        if self.len() >= MAX_SUBSCRIPTIONS_PER_SCOPE {
            return Err(ErrorObject::new(
                crate::wire::jsonrpc::ErrorCode::SERVER_ERROR,
                format!(
                    "too many resource subscriptions: at most {MAX_SUBSCRIPTIONS_PER_SCOPE} per session \
                     or connection; \
                     unsubscribe from one first"
                ),
            ));
        }
        self.insert(uri);
        Ok(())
    }

    /// How many URIs are subscribed.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |set| set.len())
    }

    pub fn contains(&self, uri: &str) -> bool {
        self.0.as_ref().is_some_and(|set| set.contains(uri))
    }

    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter().flat_map(|set| set.iter())
    }

    /// Whether a set is allocated (for tests: none while there is no subscription).
    #[cfg(test)]
    pub fn holds_heap(&self) -> bool {
        self.0.is_some()
    }
}

impl FromIterator<String> for Subscriptions {
    fn from_iter<I: IntoIterator<Item = String>>(iter: I) -> Self {
        let set: HashSet<String> = iter.into_iter().collect();
        Subscriptions((!set.is_empty()).then(|| Box::new(set)))
    }
}

/// JSON values shared by every scope that records an equal one (the capabilities a server
/// declares are the same for all its peers, and the clients of a deployment send a few sets
/// of them): the last [`SHARED_KEPT`] distinct values recorded, compared when a scope records
/// its own (at `initialize`, or when a shared store restores a scope), never on a request.
#[derive(Default)]
pub(crate) struct Shared(Mutex<Vec<Arc<Value>>>);

/// How many distinct values a [`Shared`] keeps: a bound, as a peer chooses what it sends.
const SHARED_KEPT: usize = 8;

impl Shared {
    /// `value`, shared with an equal one kept (copied only when none is).
    pub fn share(&self, value: &Value) -> Arc<Value> {
        let mut kept = lock(&self.0);
        match kept.iter().position(|v| **v == *value) {
            Some(at) => {
                // The most recent first: it is the likeliest next.
                kept[..=at].rotate_right(1);
                kept[0].clone()
            }
            None => {
                let shared = Arc::new(value.clone());
                kept.truncate(SHARED_KEPT - 1);
                kept.insert(0, shared.clone());
                shared
            }
        }
    }
}

/// Every known scope, plus the requests in flight.
#[derive(Default)]
pub(crate) struct Peers {
    scopes: Mutex<FastMap<Arc<str>, Box<Peer>>>,
    in_flight: Mutex<FastMap<(Scope, RequestId), AbortHandle>>,
    /// The client capabilities scopes recorded.
    pub client_capabilities: Shared,
    /// The server capabilities declared to scopes.
    pub server_capabilities: Shared,
}

impl Peers {
    /// Change `scope`'s state, opening it first when the server does not know it: for what
    /// begins a scope (`initialize`, [`McpServer::attach`](super::McpServer::attach), a shared
    /// store restoring one, a connection's start).
    pub fn open<R>(&self, scope: &Arc<str>, f: impl FnOnce(&mut Peer) -> R) -> R {
        f(lock(&self.scopes).entry(scope.clone()).or_default())
    }

    /// Change `scope`'s state if the server knows it; `None` (and nothing created) for a scope
    /// never opened or already ended: a late message of an ended connection or session must not
    /// bring back state nothing would free again.
    pub fn with<R>(&self, scope: &str, f: impl FnOnce(&mut Peer) -> R) -> Option<R> {
        lock(&self.scopes).get_mut(scope).map(|peer| f(peer))
    }

    /// How many scopes the server knows (for tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        lock(&self.scopes).len()
    }

    pub fn read<R>(&self, scope: &str, f: impl FnOnce(&Peer) -> R) -> Option<R> {
        lock(&self.scopes).get(scope).map(|peer| f(peer))
    }

    /// The key `scope` is filed under.
    #[cfg(test)]
    pub fn key(&self, scope: &str) -> Option<Arc<str>> {
        lock(&self.scopes)
            .get_key_value(scope)
            .map(|(k, _)| k.clone())
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
            hashbrown::hash_map::Entry::Occupied(_) => false,
            hashbrown::hash_map::Entry::Vacant(slot) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// A scope costs a slot of the scope map (its key and a pointer) and its boxed, compact
    /// state: upper bounds (64-bit targets), so neither grows back unnoticed.
    #[test]
    fn a_scope_is_a_small_slot_and_a_compact_box() {
        assert!(size_of::<(Arc<str>, Box<Peer>)>() <= 24);
        assert!(size_of::<Peer>() <= 80, "{}", size_of::<Peer>());
    }

    #[test]
    fn equal_values_are_shared_among_the_last_few_distinct_ones() {
        let shared = Shared::default();
        let x = |n: usize| serde_json::json!({ "x": n });
        let a = shared.share(&x(1));
        assert!(Arc::ptr_eq(&a, &shared.share(&x(1))));
        let b = shared.share(&x(2));
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(*b, x(2));
        // Alternating values are each shared.
        assert!(Arc::ptr_eq(&a, &shared.share(&x(1))));
        assert!(Arc::ptr_eq(&b, &shared.share(&x(2))));
        // Past the bound, the least recently recorded goes: 1 did, as 3 ..= 9 came after it.
        for n in 3..=SHARED_KEPT + 1 {
            shared.share(&x(n));
        }
        assert!(Arc::ptr_eq(&b, &shared.share(&x(2))));
        assert!(!Arc::ptr_eq(&a, &shared.share(&x(1))));
        assert_eq!(*a, x(1), "a value handed out stays as it was");
        assert_eq!(lock(&shared.0).len(), SHARED_KEPT);
    }
}
