//! Scale-out on Redis (feature `redis`, issue 14): several server instances behind one URL share
//! their sessions and tasks through a Redis server. [`RedisSessions`] is a
//! [`SessionBackend`] (the seam of [`crate::http::session`]) and a
//! [`ScopeStore`] (the seam of [`crate::server::scope`]); [`RedisTasks`] is a
//! [`TaskStore`](crate::server::tasks::TaskStore) (the seam of [`crate::server::tasks`]). The
//! protocol rules stay in the core, this module is the Redis I/O only.
//!
//! | key (prefix `orkestrel-mcp:` by default) | type | holds | expiry |
//! |---|---|---|---|
//! | `{prefix}session:{id}` | hash | the session record: `v` (negotiated version) and the [`ScopeState`] fields (`caps`, `scaps`, `init`, `level`, `subs`, `auth`) | the idle TTL, pushed back by every request and, while an instance holds an open stream of the session, by that instance |
//! | `{prefix}sessions` | sorted set | the live session ids, scored by their expiry (ms): the live-session cap counts it | entries past their score are dropped by the next mint or count |
//! | `{prefix}ended` | pub/sub channel | the id of each session a `DELETE` ended, so every instance closes its local streams | — |
//! | `{prefix}events:{session}:{stream}` | list, and a channel of the same name | the events of one request stream (`"<seq>:<data>"`, then `"end"`), for a resume on any instance and its live relay | the event TTL (5 min), pushed back by each append; at most the replay-log capacity (1024) entries |
//! | `{prefix}push` | pub/sub channel | `{session}\n{message}` for a session's standalone (`GET`) stream, delivered by the instance that holds it | — |
//! | `{prefix}answers` | pub/sub channel | `{session}\n{response}`: a client's response that reached an instance with no request for it, for the instance whose tool awaits it | — |
//! | `{prefix}task:{id}`, `{prefix}tasks`, `{prefix}task-bytes`, `{prefix}task-bytes-total`, `{prefix}tasks-of:{owner}`, `{prefix}tasks-unowned`, `{prefix}task-signals` | hash, sorted set, hash, string, sorted sets, channel | the task records of [`RedisTasks`] (a [`TaskStore`](crate::server::tasks::TaskStore)), their count and byte bounds, each owner's index for `tasks/list`, and the signals between instances | each task's TTL |
//! | `{prefix}cancels` | pub/sub channel | `{session}\n{request id}`: a `notifications/cancelled` that reached an instance not running the request, for the one that runs it | — |
//! | `{prefix}takeovers` | pub/sub channel | `{instance}\n{session}\n{stream}`: a connection to that instance now carries the stream (a `GET`, a resume); the others end theirs on it | — |
//! | `{prefix}changes` | pub/sub channel | `{instance}\n{change}` ([`Change::to_wire`]): a list or resource change made on one instance, for the sessions' `GET` streams and the listen streams of every instance | — |
//!
//! Each operation is one round trip (a Lua script run by `EVALSHA`, over one multiplexed
//! connection that the `redis` crate's connection manager re-establishes after a failure).
//! When Redis cannot be reached, the operation fails with [`Unavailable`] and the session half
//! answers `503` with `Retry-After`; the next request after Redis is back succeeds.
//!
//! What stays in each instance's memory: the live connections (SSE streams) and the local
//! replay logs of the streams it serves, the requests it runs, the server→client requests its
//! tools await, and `subscriptions/listen` streams (2026-07-28: no session, so no shared state).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{AsyncCommands, Client, RedisError};
use futures::StreamExt;

mod events;
mod scripts;
mod tasks;

pub use tasks::RedisTasks;

use scripts::Scripts;

use crate::http::answer::EventStream;
use crate::http::session::{
    mint_session_id, random_first_stream, Clock, MintError, Session, SessionBackend,
    SessionOptions, Unavailable, STANDALONE_STREAM,
};
use crate::server::scope::{ScopeState, ScopeStore};
use crate::server::Change;
use crate::server::McpServer;
use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcResponse, RequestId};
use crate::BoxFuture;

/// The default prefix of every key and channel name.
pub const DEFAULT_PREFIX: &str = "orkestrel-mcp:";

/// How long one Redis command may take before the request gets `503`.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting to Redis may take.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(1);
/// How many local session handles an instance keeps before it drops the unused ones (no open
/// stream, no request running): the session lives on in Redis, and its next request here loads
/// it again. Past this the instance's memory does not grow with the sessions.
const LOCAL_SESSIONS: usize = 1024;
/// The pause before the pub/sub listener connects again after losing Redis.
pub(super) const RESUBSCRIBE_AFTER: Duration = Duration::from_millis(250);

/// Options for [`RedisSessions::connect`].
#[derive(Clone, Debug)]
pub struct RedisOptions {
    /// The Redis server, `redis://HOST:PORT[/DB]` (or `redis+unix:///path`).
    pub url: String,
    /// The prefix of every key and channel name (default [`DEFAULT_PREFIX`]): instances that
    /// share a prefix share their sessions.
    pub prefix: String,
    /// The session options: the idle TTL (the key expiry), the live-session cap (counted over
    /// every instance), the replay-log bounds, the SSE `retry`.
    pub sessions: SessionOptions,
    /// The most live tasks over every instance ([`RedisTasks`]; default
    /// [`DEFAULT_MAX_TASKS`](crate::server::tasks::DEFAULT_MAX_TASKS)).
    pub max_tasks: usize,
    /// The most bytes of live tasks over every instance, by
    /// [`Task::weight`](crate::server::tasks::Task::weight) (default
    /// [`DEFAULT_MAX_TASK_BYTES`](crate::server::tasks::DEFAULT_MAX_TASK_BYTES)).
    pub max_task_bytes: usize,
}

impl RedisOptions {
    /// The defaults for the Redis server at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        RedisOptions {
            url: url.into(),
            prefix: DEFAULT_PREFIX.to_owned(),
            sessions: SessionOptions::default(),
            max_tasks: crate::server::tasks::DEFAULT_MAX_TASKS,
            max_task_bytes: crate::server::tasks::DEFAULT_MAX_TASK_BYTES,
        }
    }
}

/// A connection to `client`'s server, re-established after a failure, each command bounded in
/// time.
pub(super) async fn connection_manager(client: &Client) -> Result<ConnectionManager, Unavailable> {
    let config = ConnectionManagerConfig::new()
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_connection_timeout(Some(CONNECTION_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500));
    client
        .get_connection_manager_with_config(config)
        .await
        .map_err(|e| unavailable(&e))
}

/// A session this instance has seen: its local handle (streams, replay log) and a digest of the
/// record it last loaded (the server's scope state is restored when it changes).
struct Local {
    session: Arc<Session>,
    seen: u64,
}

/// Sessions shared through Redis: a [`SessionBackend`] for the route's session half and a
/// [`ScopeStore`] for the server's per-session state. Make one per server instance with
/// [`RedisSessions::connect`] and hand it to
/// [`Endpoint::with_session_backend`](crate::native::endpoint::Endpoint::with_session_backend).
pub struct RedisSessions {
    connection: ConnectionManager,
    client: Client,
    options: SessionOptions,
    prefix: String,
    clock: Clock,
    server: McpServer,
    local: Mutex<HashMap<String, Local>>,
    /// The local handle count at which the unused ones are dropped (at least
    /// [`LOCAL_SESSIONS`], twice what was left in use at the last drop: amortized O(1)).
    prune_at: std::sync::atomic::AtomicUsize,
    scripts: Scripts,
    events: Arc<events::EventLog>,
    /// This instance's tag among the instances (its server→client request ids carry it, and
    /// the changes it announces).
    instance: String,
}

impl std::fmt::Debug for RedisSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessions")
            .field("prefix", &self.prefix)
            .field("options", &self.options)
            .field("local", &self.lock().len())
            .finish_non_exhaustive()
    }
}

fn unavailable(e: &RedisError) -> Unavailable {
    Unavailable(format!("redis: {e}"))
}

/// Whether `id` could be a session id (visible ASCII, not absurdly long): anything else names no
/// session, without asking Redis.
fn plausible_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

impl RedisSessions {
    /// Connect to the Redis server of `options` for `server`: its scopes' state is written
    /// through to Redis from now on ([`McpServer::set_scope_store`]), and the sessions other
    /// instances end are closed here. Spawns (on the current tokio runtime) the listener of
    /// ended sessions and the task that keeps this instance's streamed sessions alive.
    ///
    /// # Errors
    /// [`Unavailable`] when the URL is not a Redis URL or the server cannot be reached now.
    pub async fn connect(
        options: RedisOptions,
        server: &McpServer,
        clock: Clock,
    ) -> Result<Arc<RedisSessions>, Unavailable> {
        let client = Client::open(options.url.as_str()).map_err(|e| unavailable(&e))?;
        let connection = connection_manager(&client).await?;
        let events = Arc::new(events::EventLog::spawn(
            options.prefix.clone(),
            connection.clone(),
            options.sessions.log_capacity,
            options.sessions.event_ttl_ms,
            events::MAX_ENTRY_BYTES,
        ));
        // Its server→client request ids are its own among the instances.
        let tag = mint_session_id().map_err(|e| Unavailable(e.to_string()))?;
        let this = Arc::new(RedisSessions {
            connection,
            client,
            options: options.sessions,
            prefix: options.prefix,
            clock,
            server: server.clone(),
            local: Mutex::new(HashMap::new()),
            prune_at: std::sync::atomic::AtomicUsize::new(LOCAL_SESSIONS),
            events,
            scripts: Scripts::new(),
            instance: tag[..12].to_owned(),
        });
        // Subscribed before the first request: no end announced from now on is missed.
        let pubsub = subscribe(&this.client, &this.channels())
            .await
            .map_err(|e| unavailable(&e))?;
        server.tag_request_ids(&this.instance);
        server.set_scope_store(Arc::new(WriteThrough(Arc::downgrade(&this))));
        tokio::spawn(listen_for_ends(Arc::downgrade(&this), pubsub));
        if let Some(ttl) = this.options.idle_ttl() {
            tokio::spawn(keep_alive(Arc::downgrade(&this), ttl));
        }
        Ok(this)
    }

    /// The key of a session's record.
    pub fn record_key(&self, id: &str) -> String {
        format!("{}session:{id}", self.prefix)
    }

    /// The key of the live-session set.
    pub fn live_key(&self) -> String {
        format!("{}sessions", self.prefix)
    }

    /// The live-session count script's answer: (entries past their expiry dropped now, live
    /// sessions left).
    async fn count_live(&self) -> Result<(usize, usize), Unavailable> {
        let mut connection = self.connection.clone();
        (self.scripts.count.key(self.live_key()))
            .invoke_async(&mut connection)
            .await
            .map_err(|e| unavailable(&e))
    }

    /// The channel ended sessions are announced on.
    pub fn ended_channel(&self) -> String {
        format!("{}ended", self.prefix)
    }

    /// The channel a client's response goes on when the instance it reached has no request for
    /// it (`{session}\n{response}`): the instance whose tool awaits it resolves it.
    pub fn answers_channel(&self) -> String {
        format!("{}answers", self.prefix)
    }

    /// The channel list and resource changes are announced on (`{instance}\n{change}`).
    pub fn changes_channel(&self) -> String {
        format!("{}changes", self.prefix)
    }

    /// The channel a client's `notifications/cancelled` goes on when the instance it reached
    /// runs no such request (`{session}\n{request id}`): the instance that runs it cancels it.
    pub fn cancels_channel(&self) -> String {
        format!("{}cancels", self.prefix)
    }

    /// The channel an instance announces a stream it now carries on
    /// (`{instance}\n{session}\n{stream}`): the others end their own connection on it.
    pub fn takeovers_channel(&self) -> String {
        format!("{}takeovers", self.prefix)
    }

    fn channels(&self) -> [String; 6] {
        [
            self.ended_channel(),
            self.answers_channel(),
            self.changes_channel(),
            self.cancels_channel(),
            self.takeovers_channel(),
            events::push_channel(&self.prefix),
        ]
    }

    /// Publish `payload` on `channel` for the other instances (`what` it is, for the warning
    /// when Redis cannot take it: the message is then lost, as a lost signal is).
    fn publish(
        &self,
        channel: String,
        payload: String,
        what: &'static str,
    ) -> BoxFuture<'static, ()> {
        let mut connection = self.connection.clone();
        Box::pin(async move {
            let published: Result<usize, _> = connection.publish(&channel, &payload).await;
            if let Err(e) = published {
                tracing::warn!(error = %e, "redis: cannot hand {what} on to the other instances");
            }
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Local>> {
        self.local.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ttl_arg(&self) -> u64 {
        self.options.idle_ttl().unwrap_or(0)
    }

    /// A new session's expiry in ms (0: none): [`SessionOptions::first_ttl`]; the first request
    /// that names the session sets the idle TTL (the `TOUCH` script).
    fn first_ttl_arg(&self) -> u64 {
        self.options.first_ttl().unwrap_or(0)
    }

    /// A fresh local handle for session `id`, with its push channel attached to the server.
    fn local_session(&self, id: &str, version: &str) -> Arc<Session> {
        // Its request streams numbered from a random base, and their events shared.
        let first = random_first_stream().unwrap_or(1);
        let session = Arc::new(
            Session::new(id, version, &self.options, self.clock.clone())
                .with_first_stream(first)
                .with_event_sink(self.events.clone()),
        );
        self.attach(&session);
        session
    }

    /// Give the server `session`'s push channel (which opens its scope).
    fn attach(&self, session: &Arc<Session>) {
        let push = session.clone();
        self.server.attach(
            &session.scope(),
            Arc::new(move |m| push.push(&m.to_json()).is_some()),
        );
    }

    /// The local handle of a session whose record Redis returned (`flat`: fields and values),
    /// with the server's scope state restored when the record changed since this instance last
    /// saw it. `None` for a record without a version (not one of ours).
    fn loaded(&self, id: &str, flat: &[String]) -> Option<Arc<Session>> {
        let mut digest = DefaultHasher::new();
        flat.hash(&mut digest);
        let seen = digest.finish();
        // Unchanged since this instance last saw it, and the server still holds its scope:
        // nothing to parse or restore. (A scope the server has forgotten while the handle was
        // kept is restored below: its user binding and negotiated state are in the record, and
        // an unknown scope admits no token.)
        let held = match self.lock().get(id) {
            Some(entry)
                if !entry.session.is_closed()
                    && entry.seen == seen
                    && self.server.knows_scope(id) =>
            {
                Some(entry.session.clone())
            }
            _ => None,
        };
        if let Some(session) = held {
            session.touch();
            return Some(session);
        }
        let pairs = flat.chunks_exact(2).map(|p| (p[0].as_str(), p[1].as_str()));
        let state = ScopeState::from_fields(pairs);
        let version = state.protocol_version.clone()?;
        let mut local = self.lock();
        let session = match local.get_mut(id) {
            Some(entry) if !entry.session.is_closed() => {
                entry.seen = seen;
                let session = entry.session.clone();
                drop(local);
                if !self.server.knows_scope(id) {
                    self.attach(&session);
                }
                session
            }
            _ => {
                drop(local);
                let session = self.local_session(id, &version);
                self.remember(id, &session, seen);
                session
            }
        };
        // Its `initialize` was answered with a result (on this instance or another: the record
        // holds the declared capabilities from then on): a repeat is refused here too, as on
        // the instance that minted it (it renegotiated the shared record's version).
        if state.server_capabilities.is_some() {
            session.record_initialize(true);
        }
        self.server.restore_scope(&session.scope(), state);
        session.touch();
        Some(session)
    }

    /// Keep `session`'s local handle; past [`LOCAL_SESSIONS`] handles, drop the unused ones
    /// first.
    fn remember(&self, id: &str, session: &Arc<Session>, seen: u64) {
        use std::sync::atomic::Ordering;
        let len = {
            let mut local = self.lock();
            local.insert(
                id.to_owned(),
                Local {
                    session: session.clone(),
                    seen,
                },
            );
            local.len()
        };
        if len >= self.prune_at.load(Ordering::Relaxed) {
            let left = self.drop_unused();
            self.prune_at
                .store(LOCAL_SESSIONS.max(2 * left), Ordering::Relaxed);
        }
    }

    /// Drop the local handles nothing uses now — no open stream, and no request or tool holding
    /// the handle (only this map and the server's push channel do) — and forget their scopes
    /// here; the sessions live on in Redis. The count of handles left.
    fn drop_unused(&self) -> usize {
        let unused: Vec<(String, Arc<Session>)> = {
            let mut local = self.lock();
            let ids: Vec<String> = (local.iter())
                .filter(|(_, l)| l.session.is_idle(0) && Arc::strong_count(&l.session) <= 2)
                .map(|(id, _)| id.clone())
                .collect();
            let unused: Vec<(String, Arc<Session>)> = ids
                .into_iter()
                .filter_map(|id| local.remove(&id).map(|l| (id, l.session)))
                .collect();
            // The scopes end under the lock: a request loading one of these sessions again
            // meanwhile would otherwise have its new scope (user binding, negotiated version,
            // requests in flight) ended by this.
            for (id, _) in &unused {
                self.server.end_scope(id);
            }
            unused
        };
        for (_, session) in &unused {
            session.close(None);
        }
        tracing::debug!(
            dropped = unused.len(),
            "redis: dropped unused local session handles"
        );
        self.lock().len()
    }

    /// Forget session `id` here: its local streams close and the server forgets its scope.
    fn forget(&self, id: &str) -> Option<Arc<Session>> {
        let entry = {
            let mut local = self.lock();
            let entry = local.remove(id)?;
            // Under the lock, as in `drop_unused`.
            self.server.end_scope(id);
            entry
        };
        entry.session.close(None);
        Some(entry.session)
    }

    /// Drop the local handles idle past the TTL (no open stream, no request here for that long):
    /// the session lives on in Redis, and is loaded again by its next request here.
    fn prune_local(&self) -> usize {
        let Some(ttl) = self.options.idle_ttl() else {
            return 0;
        };
        // Not a handle a request or tool holds now (as in `drop_unused`): one loaded for a
        // request but not touched yet would be closed under it.
        let idle: Vec<String> = (self.lock().iter())
            .filter(|(_, l)| l.session.is_idle(ttl) && Arc::strong_count(&l.session) <= 2)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            let removed = {
                let mut local = self.lock();
                // Taken up by a request since the listing: kept.
                if local
                    .get(id)
                    .is_some_and(|l| Arc::strong_count(&l.session) > 2)
                {
                    continue;
                }
                let removed = local.remove(id);
                if removed.is_some() {
                    // Under the lock, as in `drop_unused`.
                    self.server.end_scope(id);
                }
                removed
            };
            if let Some(entry) = removed {
                entry.session.close(None);
            }
        }
        idle.len()
    }

    /// The sessions of this instance that have an open stream (their idle expiry is pushed
    /// back while it is open).
    fn streamed(&self) -> Vec<String> {
        (self.lock().iter())
            .filter(|(_, l)| !l.session.is_idle(0))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// A message for a session's standalone stream, from any instance: delivered if that
    /// stream is open here.
    fn pushed(&self, payload: &str) {
        let Some((id, json)) = payload.split_once('\n') else {
            return;
        };
        let session = self.lock().get(id).map(|l| l.session.clone());
        if let Some(session) = session.filter(|s| s.is_attached(STANDALONE_STREAM)) {
            session.push_here(json);
        }
    }

    /// A client's response another instance handed on: resolved here if one of this instance's
    /// tools awaits it.
    fn answered(&self, payload: &str) {
        let Some((session, json)) = payload.split_once('\n') else {
            return;
        };
        if let Ok(JsonRpcMessage::Response(response)) = JsonRpcMessage::from_slice(json.as_bytes())
        {
            if self.server.resolve_response(session, response) {
                tracing::debug!(%session, "redis: resolved a response handed on by another instance");
            }
        }
    }

    /// Another instance now carries a stream of a session: this instance's connection on it,
    /// if any, ends (the events still reach the shared log, for the other instance to relay).
    fn taken_over(&self, payload: &str) {
        let mut parts = payload.splitn(3, '\n');
        let (Some(origin), Some(session), Some(stream)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        let Ok(stream) = stream.parse::<u64>() else {
            return;
        };
        if origin == self.instance {
            return;
        }
        let local = self.lock().get(session).map(|l| l.session.clone());
        if local.is_some_and(|s| s.end_connection(stream)) {
            tracing::debug!(%session, stream, "redis: another instance took a stream over; its connection here ended");
        }
    }

    /// A client's cancellation another instance handed on: the request cancelled here if it
    /// runs here.
    fn cancelled(&self, payload: &str) {
        let Some((session, id)) = payload.split_once('\n') else {
            return;
        };
        let id = serde_json::from_str::<serde_json::Value>(id)
            .ok()
            .and_then(|id| RequestId::from_value(&id));
        if let Some(id) = id {
            if self.server.cancel_request(session, &id) {
                tracing::debug!(%session, %id, "redis: cancelled a request for another instance's notifications/cancelled");
            }
        }
    }

    /// A list or resource change announced by an instance (this one too): delivered to the
    /// sessions whose `GET` stream is open here, by the core's rule on their state as Redis
    /// holds it now (a subscription made on another instance counts), and — when another
    /// instance made it — to this instance's own scopes and listen streams.
    async fn changed(&self, payload: &str) {
        let Some((origin, change)) = payload.split_once('\n') else {
            return;
        };
        let Some(change) = Change::from_wire(change) else {
            return;
        };
        if origin != self.instance {
            self.server
                .deliver_change(&change, |scope| !self.lock().contains_key(scope));
        }
        let held: Vec<String> = (self.lock().iter())
            .filter(|(_, l)| l.session.is_attached(STANDALONE_STREAM))
            .map(|(id, _)| id.clone())
            .collect();
        if held.is_empty() {
            return;
        }
        let mut pipe = ::redis::pipe();
        for id in &held {
            pipe.hgetall(self.record_key(id));
        }
        let mut connection = self.connection.clone();
        let records: Vec<Vec<String>> = match pipe.query_async(&mut connection).await {
            Ok(records) => records,
            Err(e) => {
                tracing::warn!(error = %e, "redis: cannot read the sessions a change is for");
                return;
            }
        };
        let mut sessions = HashMap::new();
        for (id, flat) in held.iter().zip(records) {
            if let Some(session) = (!flat.is_empty()).then(|| self.loaded(id, &flat)).flatten() {
                sessions.insert(id.as_str(), session);
            }
        }
        let json = change.notification().to_json();
        for scope in self
            .server
            .change_recipients(&change, |scope| sessions.contains_key(scope))
        {
            if let Some(session) = sessions.get(&*scope) {
                session.push_here(&json);
            }
        }
    }

    /// The number of sessions this instance holds a local handle of.
    pub fn local_len(&self) -> usize {
        self.lock().len()
    }
}

impl SessionBackend for RedisSessions {
    fn options(&self) -> &SessionOptions {
        &self.options
    }

    fn mint<'a>(
        &'a self,
        protocol_version: &'a str,
    ) -> BoxFuture<'a, Result<Arc<Session>, MintError>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let id = loop {
                let id = mint_session_id().map_err(MintError::Random)?;
                let minted: i64 = self
                    .scripts
                    .mint
                    .key(self.record_key(&id))
                    .key(self.live_key())
                    .arg(self.first_ttl_arg())
                    .arg(self.options.max_sessions)
                    .arg(&id)
                    .arg(protocol_version)
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|e| MintError::Unavailable(unavailable(&e)))?;
                match minted {
                    1 => break id,
                    0 => return Err(MintError::AtCapacity),
                    _ => continue,
                }
            };
            let session = self.local_session(&id, protocol_version);
            let mut digest = DefaultHasher::new();
            ["v".to_owned(), protocol_version.to_owned()].hash(&mut digest);
            self.remember(&id, &session, digest.finish());
            Ok(session)
        })
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Arc<Session>>, Unavailable>> {
        Box::pin(async move {
            if !plausible_id(id) {
                return Ok(None);
            }
            let mut connection = self.connection.clone();
            let record: Option<Vec<String>> = self
                .scripts
                .touch
                .key(self.record_key(id))
                .key(self.live_key())
                .arg(self.ttl_arg())
                .arg(id)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| unavailable(&e))?;
            match record {
                Some(flat) => Ok(self.loaded(id, &flat)),
                None => {
                    // Ended or expired elsewhere: close what is still open here.
                    self.forget(id);
                    Ok(None)
                }
            }
        })
    }

    fn end<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Arc<Session>>, Unavailable>> {
        Box::pin(async move {
            if !plausible_id(id) {
                return Ok(None);
            }
            let mut connection = self.connection.clone();
            let ended: i64 = self
                .scripts
                .end
                .key(self.record_key(id))
                .key(self.live_key())
                .arg(id)
                .arg(self.ended_channel())
                .invoke_async(&mut connection)
                .await
                .map_err(|e| unavailable(&e))?;
            let local = self.forget(id);
            Ok(if ended > 0 {
                local.or_else(|| {
                    let gone = Session::new(id, "", &self.options, self.clock.clone());
                    gone.close(None);
                    Some(Arc::new(gone))
                })
            } else {
                None
            })
        })
    }

    fn expire_idle(&self) -> BoxFuture<'_, Result<usize, Unavailable>> {
        Box::pin(async move {
            self.prune_local();
            Ok(self.count_live().await?.0)
        })
    }

    fn count(&self) -> BoxFuture<'_, Result<usize, Unavailable>> {
        Box::pin(async move { Ok(self.count_live().await?.1) })
    }

    fn resume_shared<'a>(
        &'a self,
        session: &'a Arc<Session>,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<EventStream>, Unavailable>> {
        Box::pin(events::resume(
            &self.client,
            &self.connection,
            &self.prefix,
            session,
            self.record_key(session.id()),
            last_event_id,
        ))
    }

    fn attached<'a>(&'a self, id: &'a str, stream: u64) -> BoxFuture<'a, ()> {
        let payload = format!("{}\n{id}\n{stream}", self.instance);
        self.publish(self.takeovers_channel(), payload, "a stream taken over")
    }

    fn disconnect_idle(&self) {
        let sessions: Vec<_> = self.lock().values().map(|l| l.session.clone()).collect();
        for session in sessions {
            session.disconnect_idle();
        }
    }

    fn disconnect_all(&self) {
        let sessions: Vec<_> = self.lock().values().map(|l| l.session.clone()).collect();
        for session in sessions {
            session.disconnect_all();
        }
    }
}

/// The server's write-through of a session's state into its Redis record.
struct WriteThrough(Weak<RedisSessions>);

impl ScopeStore for WriteThrough {
    fn shares(&self, scope: &str) -> bool {
        self.0
            .upgrade()
            .is_some_and(|this| this.lock().contains_key(scope))
    }

    fn changed(&self, change: &Change) {
        if let Some(this) = self.0.upgrade() {
            let payload = format!("{}\n{}", this.instance, change.to_wire());
            this.events.announce(this.changes_channel(), payload);
        }
    }

    fn unanswered(&self, scope: &str, response: JsonRpcResponse) -> BoxFuture<'static, ()> {
        let Some(this) = self.0.upgrade() else {
            return Box::pin(futures::future::ready(()));
        };
        // Only a session's response can be another instance's (not a WebSocket's or stdio's).
        if !this.lock().contains_key(scope) {
            tracing::debug!(id = ?response.id, "ignoring a response: no request of ours is pending");
            return Box::pin(futures::future::ready(()));
        }
        let payload = format!("{scope}\n{}", response.to_json());
        this.publish(this.answers_channel(), payload, "a response")
    }

    fn uncancelled(&self, scope: &str, id: &RequestId) -> BoxFuture<'static, ()> {
        let Some(this) = self.0.upgrade() else {
            return Box::pin(futures::future::ready(()));
        };
        // Only a session's request can run on another instance (not a WebSocket's or stdio's).
        if !this.lock().contains_key(scope) {
            return Box::pin(futures::future::ready(()));
        }
        let payload = format!(
            "{scope}\n{}",
            crate::wire::json_text::to_text(&id.to_value())
        );
        this.publish(this.cancels_channel(), payload, "a cancellation")
    }

    fn save(&self, scope: &str, state: ScopeState) -> BoxFuture<'static, ()> {
        let Some(this) = self.0.upgrade() else {
            return Box::pin(futures::future::ready(()));
        };
        // Only this instance's sessions are in Redis (a WebSocket or stdio scope is not).
        if !this.lock().contains_key(scope) {
            return Box::pin(futures::future::ready(()));
        }
        let key = this.record_key(scope);
        let mut connection = this.connection.clone();
        let scope = scope.to_owned();
        Box::pin(async move {
            let present = state.to_fields();
            let mut invocation = this.scripts.save.key(key);
            invocation.arg(present.len());
            for (field, value) in &present {
                invocation.arg(*field).arg(value);
            }
            for field in state.absent_fields() {
                invocation.arg(field);
            }
            let written: Result<i64, _> = invocation.invoke_async(&mut connection).await;
            match written {
                Ok(1) => {}
                Ok(_) => {
                    tracing::debug!(session = %scope, "redis: the session ended before its state was written")
                }
                Err(e) => {
                    tracing::warn!(session = %scope, error = %e, "redis: cannot write a session's state")
                }
            }
        })
    }
}

async fn subscribe(
    client: &Client,
    channels: &[String],
) -> Result<::redis::aio::PubSub, RedisError> {
    let subscribed = tokio::time::timeout(CONNECTION_TIMEOUT, async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channels).await?;
        Ok::<_, RedisError>(pubsub)
    })
    .await;
    subscribed.unwrap_or_else(|_| {
        Err(RedisError::from((
            ::redis::ErrorKind::Io,
            "timed out subscribing",
        )))
    })
}

/// Close here the sessions other instances end (the `ended` channel). After losing Redis it
/// subscribes again and checks every local session, so an end announced meanwhile is not missed.
async fn listen_for_ends(this: Weak<RedisSessions>, first: ::redis::aio::PubSub) {
    let mut pubsub = Some(first);
    loop {
        if let Some(mut subscribed) = pubsub.take() {
            let mut messages = subscribed.on_message();
            while let Some(message) = messages.next().await {
                let Ok(payload) = message.get_payload::<String>() else {
                    continue;
                };
                let Some(sessions) = this.upgrade() else {
                    return;
                };
                let channel = message.get_channel_name();
                if channel == sessions.ended_channel() {
                    sessions.forget(&payload);
                } else if channel == sessions.answers_channel() {
                    sessions.answered(&payload);
                } else if channel == sessions.cancels_channel() {
                    sessions.cancelled(&payload);
                } else if channel == sessions.takeovers_channel() {
                    sessions.taken_over(&payload);
                } else if channel == sessions.changes_channel() {
                    sessions.changed(&payload).await;
                } else {
                    sessions.pushed(&payload);
                }
            }
            tracing::warn!("redis: lost the subscription to ended sessions; subscribing again");
        }
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
        let Some(sessions) = this.upgrade() else {
            return;
        };
        let client = sessions.client.clone();
        let channels = sessions.channels();
        drop(sessions);
        if let Ok(subscribed) = subscribe(&client, &channels).await {
            reconcile(&this).await;
            pubsub = Some(subscribed);
        }
    }
}

/// Forget the local sessions whose record is gone (ended or expired while this instance could
/// not hear of it).
async fn reconcile(this: &Weak<RedisSessions>) {
    let Some(sessions) = this.upgrade() else {
        return;
    };
    let ids: Vec<String> = sessions.lock().keys().cloned().collect();
    if ids.is_empty() {
        return;
    }
    let mut pipe = ::redis::pipe();
    for id in &ids {
        pipe.exists(sessions.record_key(id));
    }
    let mut connection = sessions.connection.clone();
    let exists: Result<Vec<bool>, _> = pipe.query_async(&mut connection).await;
    if let Ok(exists) = exists {
        for (id, live) in ids.iter().zip(exists) {
            if !live {
                sessions.forget(id);
            }
        }
    }
}

/// Push back the idle expiry of the sessions with an open stream here (a third of the TTL
/// apart, one round trip for all), and drop the local handles idle past the TTL.
async fn keep_alive(this: Weak<RedisSessions>, ttl_ms: u64) {
    let every = Duration::from_millis((ttl_ms / 3).clamp(100, 60_000));
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(sessions) = this.upgrade() else {
            return;
        };
        sessions.prune_local();
        let streamed = sessions.streamed();
        if streamed.is_empty() {
            continue;
        }
        let mut invocation = sessions.scripts.keep.key(sessions.live_key());
        invocation.arg(ttl_ms);
        for id in &streamed {
            invocation.key(sessions.record_key(id)).arg(id);
        }
        let mut connection = sessions.connection.clone();
        match invocation
            .invoke_async::<Vec<String>>(&mut connection)
            .await
        {
            // A session whose record is gone (expired or evicted, its `ended` never announced)
            // is gone here too: its open streams end, as they would have at its next request.
            Ok(gone) => {
                for id in gone {
                    tracing::debug!(session = %id, "redis: a streamed session's record is gone; its streams here end");
                    sessions.forget(&id);
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "redis: cannot push back the expiry of streamed sessions");
            }
        }
    }
}
