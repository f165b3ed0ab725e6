//! What a connection remembers about its era: the era and modern version `connect` settled on,
//! the last `server/discover` result, the tools' `x-mcp-header` annotations, the open listen
//! streams and the cache of complete results (expired by the client's injected clock).

use crate::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use crate::era::Era;
use crate::wire::jsonrpc::JsonRpcNotification;

/// The negotiated modern state of one connection.
#[derive(Default)]
pub(crate) struct EraState {
    inner: Mutex<EraInner>,
}

#[derive(Default)]
pub(super) struct EraInner {
    /// The era `connect` settled on (kept across reconnects: the per-transport era cache).
    pub(super) era: Option<Era>,
    /// The modern protocol version in use.
    pub(super) version: Option<String>,
    /// The last `server/discover` result.
    pub(super) discover: Option<Value>,
    /// `x-mcp-header` annotations of the listed tools: tool name → `(header suffix, path)`.
    pub(super) tool_headers: HashMap<String, Vec<(String, Vec<String>)>>,
    /// Cached complete results of cacheable methods (`ttlMs` > 0): key → (result, expiry in ms
    /// of the client's clock).
    pub(super) cache: HashMap<String, (Value, u64, usize)>,
    /// The JSON size of what the cache holds (each entry's third field).
    pub(super) cache_bytes: usize,
    /// Open listen streams: listen request id → their notification queue (bounded by
    /// [`MAX_QUEUED_LISTEN_NOTIFICATIONS`]) and how many it dropped.
    pub(super) subscriptions: HashMap<i64, (Queue, u64)>,
}

impl EraState {
    pub(super) fn lock(&self) -> MutexGuard<'_, EraInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn era(&self) -> Option<Era> {
        self.lock().era
    }

    pub(crate) fn subscribe(&self, id: i64, tx: Queue) {
        self.lock().subscriptions.insert(id, (tx, 0));
    }

    pub(crate) fn unsubscribe(&self, id: i64) {
        self.lock().subscriptions.remove(&id);
    }

    /// A fresh cached result for this key at `now` (ms); none without a clock.
    pub(super) fn cached(&self, key: &str, now: Option<u64>) -> Option<Value> {
        let now = now?;
        let mut inner = self.lock();
        match inner.cache.get(key) {
            Some((value, expiry, _)) if now < *expiry => Some(value.clone()),
            Some(_) => {
                if let Some((_, _, bytes)) = inner.cache.remove(key) {
                    inner.cache_bytes -= bytes;
                }
                None
            }
            None => None,
        }
    }

    /// Keep a complete result for its `ttlMs` from `now` (ms; a missing or zero TTL, or no
    /// clock, keeps nothing).
    pub(super) fn store(&self, key: String, value: &Value, now: Option<u64>) {
        let ttl = value.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
        let Some(now) = now.filter(|_| ttl > 0) else {
            return;
        };
        // A result over the bound is not kept (a server's `ttlMs` is no licence to hold
        // megabytes per URI: 256 entries of 16 MiB were 4 GiB).
        let bytes = memory_weight(value);
        if bytes > MAX_CACHED_RESULT_BYTES {
            return;
        }
        let mut inner = self.lock();
        if inner.cache.len() >= MAX_CACHE_ENTRIES || inner.cache_bytes + bytes > MAX_CACHE_BYTES {
            inner.cache.clear();
            inner.cache_bytes = 0;
        }
        inner.cache_bytes += bytes;
        let entry = (value.clone(), now.saturating_add(ttl), bytes);
        if let Some((_, _, replaced)) = inner.cache.insert(key, entry) {
            inner.cache_bytes -= replaced;
        }
    }

    /// Drop cached results a change notification makes stale.
    pub(super) fn invalidate(&self, method: &str) {
        let stale: &[&str] = match method {
            "notifications/tools/list_changed" => &["tools/list"],
            "notifications/prompts/list_changed" => &["prompts/list"],
            "notifications/resources/list_changed" => {
                &["resources/list", "resources/templates/list"]
            }
            "notifications/resources/updated" => &["resources/read"],
            _ => return,
        };
        let mut inner = self.lock();
        inner
            .cache
            .retain(|key, _| !stale.iter().any(|m| key.starts_with(&format!("{m} "))));
        inner.cache_bytes = inner.cache.values().map(|(_, _, bytes)| bytes).sum();
    }

    /// Hand a notification tagged with a listen id (or a server `notifications/cancelled` for
    /// one) to that subscription; change notifications invalidate the cache.
    pub(crate) fn route(&self, notification: &JsonRpcNotification) {
        self.invalidate(&notification.method);
        let params = notification.params.as_ref();
        let id = if notification.method == "notifications/cancelled" {
            params.and_then(|p| p.get("requestId"))
        } else {
            params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(crate::era::META_SUBSCRIPTION_ID))
        };
        let Some(id) = id.and_then(Value::as_i64) else {
            return;
        };
        let mut inner = self.lock();
        if let Some((tx, dropped)) = inner.subscriptions.get_mut(&id) {
            if let Err(e) = tx.try_send(notification.clone()) {
                if e.is_full() {
                    // A flood the application does not read: drop, count and say so (the
                    // client's `on` listeners still saw it).
                    *dropped += 1;
                    if dropped.is_power_of_two() {
                        tracing::warn!(
                            subscription = id,
                            dropped = *dropped,
                            limit = MAX_QUEUED_LISTEN_NOTIFICATIONS,
                            method = %notification.method,
                            "mcp client: listen queue full (the subscription is not read); dropped notifications"
                        );
                    }
                }
            }
        }
    }

    pub(crate) fn modern_version(&self) -> Option<String> {
        let inner = self.lock();
        (inner.era == Some(Era::Modern))
            .then(|| inner.version.clone())
            .flatten()
    }
}

/// The most notifications a listen subscription ([`McpClient::listen`](crate::client::McpClient::listen)) queues while
/// the application does not read it: 1 024. Beyond it a notification is dropped from that queue
/// (counted, logged as a warning with the count); `McpClient::on` listeners still see every one,
/// as they run when it arrives.
pub const MAX_QUEUED_LISTEN_NOTIFICATIONS: usize = 1024;

/// A listen subscription's bounded queue.
pub(crate) type Queue = futures::channel::mpsc::Sender<JsonRpcNotification>;

/// The most cached results a client keeps (the cache is emptied when it is full).
pub const MAX_CACHE_ENTRIES: usize = 256;

/// The most memory cached results take in a client, about: 32 MiB (the cache is emptied when
/// one more would pass it). Counted as [`memory_weight`]: a result's strings and
/// [`VALUE_BYTES`] a value, so a result of a million tiny values counts as what it costs held,
/// not as its ~2 MB of text.
pub const MAX_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// The largest result a client caches, about, in memory: 4 MiB (a larger one is answered, not
/// kept).
pub const MAX_CACHED_RESULT_BYTES: usize = 4 * 1024 * 1024;

/// What one parsed JSON value costs held, about, besides its string bytes (the value itself
/// and, in an object, its map entry).
const VALUE_BYTES: usize = 48;

/// About how much memory `value` takes held: [`VALUE_BYTES`] a value plus its strings' and keys'
/// bytes (walked without recursion).
fn memory_weight(value: &Value) -> usize {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        total = total.saturating_add(VALUE_BYTES);
        match value {
            Value::String(s) => total = total.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    total = total.saturating_add(key.len());
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    total
}

/// The methods whose complete results the client caches for their `ttlMs` ([caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching); not
/// `server/discover`, which `connect` re-runs).
pub const CACHED_METHODS: &[&str] = &[
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The cache is bounded in memory too: a result over 4 MiB held is not kept, and the whole
    /// past 32 MiB is emptied (256 entries of a server's 10 MB results held 2.5 GB).
    #[test]
    fn cached_results_are_bounded_in_bytes() {
        let state = EraState::default();
        let big =
            json!({"contents": [{"text": "x".repeat(MAX_CACHED_RESULT_BYTES)}], "ttlMs": 60_000});
        state.store("resources/read big".into(), &big, Some(0));
        assert_eq!(state.cached("resources/read big", Some(1)), None);
        // A result counts as what it costs held: 100,000 tiny values are no 300 KB of text.
        let tiny: Vec<Value> = (0..100_000).map(|_| json!([])).collect();
        let many = json!({"contents": [{"text": "", "pad": tiny}], "ttlMs": 60_000});
        assert!(crate::wire::json_text::to_text(&many).len() < 1024 * 1024);
        state.store("resources/read many".into(), &many, Some(0));
        assert_eq!(state.cached("resources/read many", Some(1)), None);
        let half = json!({"contents": [{"text": "y".repeat(MAX_CACHED_RESULT_BYTES - 1000)}], "ttlMs": 60_000});
        let fit = MAX_CACHE_BYTES / MAX_CACHED_RESULT_BYTES;
        for i in 0..fit {
            state.store(format!("resources/read {i}"), &half, Some(0));
        }
        assert!(state.lock().cache_bytes <= MAX_CACHE_BYTES);
        assert_eq!(state.lock().cache.len(), fit);
        // One more passes the bound: the cache is emptied, then holds it alone.
        state.store("resources/read more".into(), &half, Some(0));
        assert_eq!(state.lock().cache.len(), 1);
        assert!(state.cached("resources/read more", Some(1)).is_some());
        // Storing the same key again replaces its size, not adds to it.
        state.store("resources/read more".into(), &half, Some(0));
        assert_eq!(state.lock().cache_bytes, memory_weight(&half));
    }

    #[test]
    fn cached_results_expire_on_the_injected_clock_and_need_one() {
        let state = EraState::default();
        let result = json!({"tools": [], "ttlMs": 1000});
        state.store("tools/list {}".into(), &result, Some(5_000));
        assert_eq!(state.cached("tools/list {}", Some(5_999)), Some(result));
        assert_eq!(state.cached("tools/list {}", Some(6_000)), None);
        // Without a clock nothing is kept or served.
        state.store("prompts/list {}".into(), &json!({"ttlMs": 1000}), None);
        assert_eq!(state.cached("prompts/list {}", Some(0)), None);
        state.store("prompts/list {}".into(), &json!({"ttlMs": 1000}), Some(0));
        assert_eq!(state.cached("prompts/list {}", None), None);
        // A zero TTL keeps nothing; a change notification drops what it makes stale.
        state.store("resources/list {}".into(), &json!({"ttlMs": 0}), Some(0));
        assert_eq!(state.cached("resources/list {}", Some(0)), None);
        state.store("tools/list {}".into(), &json!({"ttlMs": 1000}), Some(0));
        state.route(&JsonRpcNotification::new(
            "notifications/tools/list_changed",
        ));
        assert_eq!(state.cached("tools/list {}", Some(1)), None);
    }

    #[test]
    fn a_notification_flood_on_an_unread_subscription_is_bounded() {
        let state = EraState::default();
        let (tx, mut rx) = futures::channel::mpsc::channel(MAX_QUEUED_LISTEN_NOTIFICATIONS - 1);
        state.subscribe(7, tx);
        let flood = MAX_QUEUED_LISTEN_NOTIFICATIONS + 100;
        for i in 0..flood {
            let meta = json!({ "_meta": { crate::era::META_SUBSCRIPTION_ID: 7 }, "n": i });
            state.route(&JsonRpcNotification::new("notifications/message").with_params(meta));
        }
        assert_eq!(
            state.lock().subscriptions[&7].1,
            100,
            "the overflow is counted"
        );
        let mut queued = Vec::new();
        while let Ok(n) = rx.try_recv() {
            queued.push(n.params.unwrap()["n"].as_u64().unwrap());
        }
        // The first ones are kept, in order; the newest were dropped.
        let expected: Vec<u64> = (0..MAX_QUEUED_LISTEN_NOTIFICATIONS as u64).collect();
        assert_eq!(queued, expected);
    }
}
