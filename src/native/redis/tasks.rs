//! The task store on Redis ([`RedisTasks`]): the records of the Tasks extension shared by every
//! instance on one Redis server, so a task created on one instance is polled, answered,
//! cancelled and waited for on any other. The core decides ([`crate::server::tasks`]); this is
//! the Redis I/O only.
//!
//! | key (after the prefix) | type | holds | expiry |
//! |---|---|---|---|
//! | `task:{id}` | hash | `rev` (the revision, for compare-and-set) and `task` (the [`Task`] as JSON) | the task's TTL |
//! | `tasks` | sorted set | the live task ids scored by their expiry (ms): the count bound counts it | entries past their score dropped by the next create or update |
//! | `task-bytes` | hash | each live task's [`Task::weight`] | entries dropped with their `tasks` entry |
//! | `task-bytes-total` | string | the sum of `task-bytes`, kept by every script that changes it: the byte bound | — |
//! | `tasks-of:{owner}`, `tasks-unowned` | sorted set | the ids of one owner's tasks scored by creation time: `tasks/list` | the longest TTL of its tasks |
//! | `task-signals` | pub/sub channel | `{id}\n{signal}` ([`TaskSignal::to_json`]): status changes and answers between the instances | — |
//!
//! A create is one script (the bounds checked and the record written atomically, over every
//! instance); an update reads the record, applies the change, and writes it back by a script
//! only if the revision is still the one read (else it reads again, a bounded number of
//! times); a remove is one script. A create or an update first drops the tasks past their
//! expiry from `tasks` and `task-bytes`, and their weights from the total: its cost follows
//! the tasks it drops, not the tasks alive.

use std::sync::{Arc, Mutex, Weak};

use ::redis::aio::ConnectionManager;
use ::redis::{AsyncCommands, Client, RedisError, Script};
use futures::StreamExt;

use super::{connection_manager, subscribe, RedisOptions, RESUBSCRIBE_AFTER};
use crate::http::session::Unavailable;
use crate::server::tasks::{Task, TaskChange, TaskListener, TaskSignal, TaskStore, TaskStoreError};
use crate::BoxFuture;

/// How many times an update reads the record again after losing a race to another change.
const ATTEMPTS: usize = 16;

// The start of every script that changes the live set (keys: KEYS[2] the live set, KEYS[3] the
// weights, KEYS[4] their running total): drops the tasks past their expiry from the live set
// and the weights, and leaves `now` (ms, Redis's clock) and `total` (the live tasks' bytes,
// written back) in locals. The total is kept, not summed: a create or update costs the
// expired tasks it drops, not one step per live task. Where it is missing (a store written
// before it was kept) it is summed once.
macro_rules! sweep {
    () => {
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = tonumber(redis.call('GET', KEYS[4]) or '-1')
if total < 0 then
  total = 0
  for _, w in ipairs(redis.call('HVALS', KEYS[3])) do total = total + tonumber(w) end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  total = total - tonumber(redis.call('HGET', KEYS[3], id) or '0')
  redis.call('HDEL', KEYS[3], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if total < 0 then total = 0 end
redis.call('SET', KEYS[4], total)
"
    };
}

// KEYS[1] the record, KEYS[2] the live set, KEYS[3] the weights, KEYS[4] their total, KEYS[5]
// the owner's index; ARGV[1] id, ARGV[2] JSON, ARGV[3] weight, ARGV[4] TTL left ms (0: none),
// ARGV[5] max tasks, ARGV[6] max bytes, ARGV[7] created at. 1 created, 0 full, -1 too large,
// -2 the id is taken.
const CREATE: &str = concat!(
    sweep!(),
    r"
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 0 end
if total + tonumber(ARGV[3]) > tonumber(ARGV[6]) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -2 end
redis.call('HSET', KEYS[1], 'rev', 1, 'task', ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('SET', KEYS[4], total + tonumber(ARGV[3]))
local indexed = redis.call('EXISTS', KEYS[5])
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[1])
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
  local left = redis.call('PTTL', KEYS[5])
  if indexed == 0 or (left >= 0 and left < ttl) then redis.call('PEXPIRE', KEYS[5], ttl) end
else
  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])
  redis.call('PERSIST', KEYS[5])
end
return 1
"
);

// KEYS[1] the record, KEYS[2] the live set, KEYS[3] the weights, KEYS[4] their total; ARGV[1]
// id, ARGV[2] the revision read, ARGV[3] JSON, ARGV[4] weight, ARGV[5] max bytes. 1 written,
// 0 changed since read, -1 gone (or expired: no weight is written for a task the sweep just
// dropped), -2 too large. The record keeps its expiry.
const UPDATE: &str = concat!(
    sweep!(),
    r"
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev or not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return -1 end
if rev ~= ARGV[2] then return 0 end
local old = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
local after = total - old + tonumber(ARGV[4])
if after > tonumber(ARGV[5]) then return -2 end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'task', ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('SET', KEYS[4], after)
return 1
"
);

// KEYS[1] the record, KEYS[2] the live set, KEYS[3] the weights, KEYS[4] their total, KEYS[5]
// the owner's index; ARGV[1] id. The number of records deleted (0 or 1); the task's weight
// leaves the total (a total not kept yet is left to the next sweep to sum).
const REMOVE: &str = r"
local deleted = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
local w = redis.call('HGET', KEYS[3], ARGV[1])
if w then
  redis.call('HDEL', KEYS[3], ARGV[1])
  local total = redis.call('GET', KEYS[4])
  if total then redis.call('SET', KEYS[4], math.max(0, tonumber(total) - tonumber(w))) end
end
return deleted
";

/// Task records on Redis: a [`TaskStore`] shared by every instance with the same Redis server
/// and prefix, bounded in count and bytes over all of them. Make one per server instance with
/// [`RedisTasks::connect`] and hand it to
/// [`TaskOptions::with_store`](crate::server::tasks::TaskOptions::with_store).
pub struct RedisTasks {
    connection: ConnectionManager,
    client: Client,
    prefix: String,
    max_tasks: usize,
    max_bytes: usize,
    create: Script,
    update: Script,
    remove: Script,
    listeners: Mutex<Vec<TaskListener>>,
}

impl std::fmt::Debug for RedisTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTasks")
            .field("prefix", &self.prefix)
            .field("max_tasks", &self.max_tasks)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

fn unavailable(e: &RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(format!("redis: {e}"))
}

impl RedisTasks {
    /// Connect to the Redis server of `options` (its URL, prefix and task bounds). Spawns, on
    /// the current tokio runtime, the listener of the other instances' signals.
    ///
    /// # Errors
    /// [`Unavailable`] when the URL is not a Redis URL or the server cannot be reached now.
    pub async fn connect(options: &RedisOptions) -> Result<Arc<RedisTasks>, Unavailable> {
        let client = Client::open(options.url.as_str()).map_err(|e| super::unavailable(&e))?;
        let connection = connection_manager(&client).await?;
        let this = Arc::new(RedisTasks {
            connection,
            client,
            prefix: options.prefix.clone(),
            max_tasks: options.max_tasks,
            max_bytes: options.max_task_bytes,
            create: Script::new(CREATE),
            update: Script::new(UPDATE),
            remove: Script::new(REMOVE),
            listeners: Mutex::new(Vec::new()),
        });
        // Subscribed before the first task: no signal sent from now on is missed.
        let pubsub = subscribe(&this.client, &[this.signals_channel()])
            .await
            .map_err(|e| super::unavailable(&e))?;
        tokio::spawn(listen(Arc::downgrade(&this), pubsub));
        Ok(this)
    }

    /// The key of a task's record.
    pub fn record_key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    /// The key of the live-task set (the count bound).
    pub fn live_key(&self) -> String {
        format!("{}tasks", self.prefix)
    }

    /// The key of the live tasks' weights (the byte bound).
    pub fn weights_key(&self) -> String {
        format!("{}task-bytes", self.prefix)
    }

    /// The key of the live tasks' weights' running total (bytes, a string holding an integer).
    pub fn total_key(&self) -> String {
        format!("{}task-bytes-total", self.prefix)
    }

    /// The key of one owner's task index (`tasks/list`).
    pub fn owner_key(&self, owner: Option<&str>) -> String {
        match owner {
            Some(owner) => format!("{}tasks-of:{owner}", self.prefix),
            None => format!("{}tasks-unowned", self.prefix),
        }
    }

    /// The channel the instances' signals go on (`{id}\n{signal}`).
    pub fn signals_channel(&self) -> String {
        format!("{}task-signals", self.prefix)
    }

    fn heard(&self, payload: &str) {
        let Some((id, signal)) = payload.split_once('\n') else {
            return;
        };
        let Some(signal) = TaskSignal::from_json(signal) else {
            return;
        };
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for listener in listeners {
            listener(id, signal.clone());
        }
    }

    /// Tell the listeners that signals may have been lost ([`TaskSignal::Resync`]).
    fn resync(&self) {
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for listener in listeners {
            listener("", TaskSignal::Resync);
        }
    }

    /// The record of `id`: its revision and the task, `None` when gone.
    async fn read(&self, id: &str) -> Result<Option<(String, Task)>, TaskStoreError> {
        let mut connection = self.connection.clone();
        let (rev, json): (Option<String>, Option<String>) = ::redis::cmd("HMGET")
            .arg(self.record_key(id))
            .arg("rev")
            .arg("task")
            .query_async(&mut connection)
            .await
            .map_err(|e| unavailable(&e))?;
        let (Some(rev), Some(json)) = (rev, json) else {
            return Ok(None);
        };
        match serde_json::from_str(&json) {
            Ok(task) => Ok(Some((rev, task))),
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "redis: a task record that does not parse");
                Ok(None)
            }
        }
    }
}

impl TaskStore for RedisTasks {
    fn create(&self, task: Task, now_ms: u64) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(&task).map_err(|e| {
                TaskStoreError::Unavailable(format!("the task does not serialize: {e}"))
            })?;
            let left = task.ttl_ms.map_or(0, |ttl| {
                (task.created_at.saturating_add(ttl))
                    .saturating_sub(now_ms)
                    .max(1)
            });
            let mut connection = self.connection.clone();
            let created: i64 = (self.create.key(self.record_key(&task.task_id)))
                .key(self.live_key())
                .key(self.weights_key())
                .key(self.total_key())
                .key(self.owner_key(task.owner.as_deref()))
                .arg(&task.task_id)
                .arg(json)
                .arg(task.weight())
                .arg(left)
                .arg(self.max_tasks)
                .arg(self.max_bytes)
                .arg(task.created_at)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| unavailable(&e))?;
            match created {
                1 => Ok(()),
                0 => Err(TaskStoreError::Full(self.max_tasks)),
                -1 => Err(TaskStoreError::TooLarge(self.max_bytes)),
                _ => Err(TaskStoreError::Unavailable(format!(
                    "task id {} is taken",
                    task.task_id
                ))),
            }
        })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move {
            let read = self.read(task_id).await?;
            Ok(read.map(|(_, t)| t).filter(|t| !t.expired(now_ms)))
        })
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
        change: &'a mut dyn TaskChange,
    ) -> BoxFuture<'a, Result<Task, TaskStoreError>> {
        Box::pin(async move {
            for _ in 0..ATTEMPTS {
                let Some((rev, mut task)) = self.read(task_id).await? else {
                    return Err(TaskStoreError::NotFound);
                };
                if task.expired(now_ms) {
                    return Err(TaskStoreError::NotFound);
                }
                let before = serde_json::to_string(&task).unwrap_or_default();
                change(&mut task);
                let after = serde_json::to_string(&task).map_err(|e| {
                    TaskStoreError::Unavailable(format!("the task does not serialize: {e}"))
                })?;
                if after == before {
                    return Ok(task);
                }
                let mut connection = self.connection.clone();
                let written: i64 = (self.update.key(self.record_key(task_id)))
                    .key(self.live_key())
                    .key(self.weights_key())
                    .key(self.total_key())
                    .arg(task_id)
                    .arg(rev)
                    .arg(after)
                    .arg(task.weight())
                    .arg(self.max_bytes)
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|e| unavailable(&e))?;
                match written {
                    1 => return Ok(task),
                    0 => continue,
                    -1 => return Err(TaskStoreError::NotFound),
                    _ => return Err(TaskStoreError::TooLarge(self.max_bytes)),
                }
            }
            Err(TaskStoreError::Unavailable(format!(
                "task {task_id} kept changing: {ATTEMPTS} attempts lost to other changes"
            )))
        })
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<Task>, TaskStoreError>> {
        Box::pin(async move {
            let index = self.owner_key(owner);
            let mut connection = self.connection.clone();
            let last = isize::try_from(self.max_tasks).unwrap_or(isize::MAX) - 1;
            let ids: Vec<String> = connection
                .zrevrange(&index, 0, last)
                .await
                .map_err(|e| unavailable(&e))?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut pipe = ::redis::pipe();
            for id in &ids {
                pipe.hget(self.record_key(id), "task");
            }
            let records: Vec<Option<String>> = pipe
                .query_async(&mut connection)
                .await
                .map_err(|e| unavailable(&e))?;
            let mut tasks = Vec::with_capacity(ids.len());
            let mut gone = Vec::new();
            for (id, record) in ids.iter().zip(records) {
                match record.and_then(|json| serde_json::from_str::<Task>(&json).ok()) {
                    Some(task) if task.owner.as_deref() == owner => {
                        if !task.expired(now_ms) {
                            tasks.push(task);
                        }
                    }
                    _ => gone.push(id.clone()),
                }
            }
            if !gone.is_empty() {
                let dropped: Result<usize, _> = connection.zrem(&index, &gone).await;
                if let Err(e) = dropped {
                    tracing::debug!(error = %e, "redis: cannot drop expired tasks from an index");
                }
            }
            tasks.sort_by(|a, b| {
                b.created_at
                    .cmp(&a.created_at)
                    .then_with(|| a.task_id.cmp(&b.task_id))
            });
            Ok(tasks)
        })
    }

    fn remove<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let Some((_, task)) = self.read(task_id).await? else {
                return Ok(false);
            };
            let mut connection = self.connection.clone();
            let deleted: i64 = (self.remove.key(self.record_key(task_id)))
                .key(self.live_key())
                .key(self.weights_key())
                .key(self.total_key())
                .key(self.owner_key(task.owner.as_deref()))
                .arg(task_id)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(deleted > 0)
        })
    }

    fn signal<'a>(&'a self, task_id: &'a str, signal: &'a TaskSignal) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let payload = format!("{task_id}\n{}", signal.to_json());
            let mut connection = self.connection.clone();
            let published: Result<usize, _> =
                connection.publish(self.signals_channel(), payload).await;
            if let Err(e) = published {
                tracing::warn!(task = %task_id, error = %e, "redis: cannot signal a task's change to the other instances");
            }
        })
    }

    fn subscribe(&self, listener: TaskListener) -> bool {
        (self.listeners.lock().unwrap_or_else(|e| e.into_inner())).push(listener);
        true
    }
}

/// Hand the signals of the `task-signals` channel to the listeners. After losing Redis it
/// subscribes again and sends them [`TaskSignal::Resync`] (signals sent meanwhile are lost).
async fn listen(this: Weak<RedisTasks>, first: ::redis::aio::PubSub) {
    let mut pubsub = Some(first);
    loop {
        if let Some(mut subscribed) = pubsub.take() {
            let mut messages = subscribed.on_message();
            while let Some(message) = messages.next().await {
                let Ok(payload) = message.get_payload::<String>() else {
                    continue;
                };
                let Some(tasks) = this.upgrade() else {
                    return;
                };
                tasks.heard(&payload);
            }
            tracing::warn!("redis: lost the subscription to task signals; subscribing again");
        }
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
        let Some(tasks) = this.upgrade() else {
            return;
        };
        let (client, channel) = (tasks.client.clone(), tasks.signals_channel());
        drop(tasks);
        if let Ok(subscribed) = subscribe(&client, &[channel]).await {
            pubsub = Some(subscribed);
            // What was signalled meanwhile is lost: the core reads its tasks again.
            if let Some(tasks) = this.upgrade() {
                tasks.resync();
            }
        }
    }
}
