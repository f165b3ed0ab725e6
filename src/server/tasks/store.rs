//! Where tasks are kept: the [`Task`] record, the pluggable [`TaskStore`] and its in-memory
//! default [`MemoryTaskStore`] (bounded in count and in bytes, expired by TTL on the injected
//! clock). No I/O: every method takes `now_ms` from the caller's [`Clock`](crate::host::Clock).
//!
//! A store keeps what any server instance needs to answer `tasks/get` (status, timestamps, the
//! result or error, the outstanding input requests); the running tool itself (its future, the
//! answers it waits for) stays with the server that runs it.

use crate::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::wire::jsonrpc::ErrorObject;
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// A task's status ([tasks](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks), Task Status).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The tool is running.
    Working,
    /// The tool waits for the client's answer to an input request.
    InputRequired,
    /// The tool returned a result. One with `isError: true` is kept so too (the tasks extension's
    /// `completed`) and shown as `failed` to a 2025-11-25 client, as that revision says.
    Completed,
    /// The tool ended in a JSON-RPC (protocol) error.
    Failed,
    /// Cancelled (`tasks/cancel`) before it ended.
    Cancelled,
}

impl TaskStatus {
    /// Whether the status is final (`completed`, `failed`, `cancelled`): it never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire name (`working`, `input_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// One task as a store keeps it. Times are ms since the Unix epoch; the wire shows them as
/// ISO 8601 ([`iso8601`]). A shared store keeps it as JSON (serde, these field names).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The server-minted, unguessable id.
    pub task_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// An optional human-readable note on the status.
    pub status_message: Option<String>,
    /// When the task was created (ms).
    pub created_at: u64,
    /// When its status, result or input requests last changed (ms).
    pub last_updated_at: u64,
    /// How long after `created_at` the task is kept (ms); `None`: until removed.
    pub ttl_ms: Option<u64>,
    /// The polling interval the server suggests (ms).
    pub poll_interval_ms: Option<u64>,
    /// The tool's result, once `completed`.
    pub result: Option<Value>,
    /// The JSON-RPC error, once `failed`.
    pub error: Option<ErrorObject>,
    /// The outstanding input requests by key (`{ method, params }` each), while `input_required`.
    #[serde(default)]
    pub input_requests: Map<String, Value>,
    /// The connection or session that created the task (`None`: a stateless request): the
    /// 2025-11-25 `tasks/list` shows a caller only its own tasks; the other methods go by the
    /// unguessable id.
    pub owner: Option<String>,
    /// The authorization context the task is bound to (2025-11-25 tasks, "Task Isolation and
    /// Access Control": [`Identity::context`](crate::http::identity::Identity::context) of the
    /// creating request's token; `None` without one): a request of another context finds no
    /// such task, and `tasks/list` shows a context only its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<String>,
}

impl Task {
    /// Whether the task's TTL has passed at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expires_at().is_some_and(|at| now_ms >= at)
    }

    /// When the task's TTL passes (ms, on the clock of `created_at`); `None` without a TTL.
    pub fn expires_at(&self) -> Option<u64> {
        self.ttl_ms.map(|ttl| self.created_at.saturating_add(ttl))
    }

    /// What the task weighs against a store's byte bound: its id, message, result, error and
    /// input requests as JSON text, plus a fixed 128 for the rest.
    pub fn weight(&self) -> usize {
        fn json<T: Serialize>(v: &T) -> usize {
            serde_json::to_vec(v).map_or(0, |v| v.len())
        }
        128 + self.task_id.len()
            + self.owner.as_ref().map_or(0, String::len)
            + self.authorization.as_ref().map_or(0, String::len)
            + self.status_message.as_ref().map_or(0, String::len)
            + self.result.as_ref().map_or(0, json)
            + self.error.as_ref().map_or(0, json)
            + if self.input_requests.is_empty() {
                0
            } else {
                json(&self.input_requests)
            }
    }
}

/// Why a store refused a change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TaskStoreError {
    /// Creating one more task would pass the count bound; nothing was evicted.
    #[error("the task store is full ({0} tasks); retry when a task expires")]
    Full(usize),
    /// The change would pass the byte bound; nothing was evicted and the task is unchanged.
    #[error("the task store would exceed its {0}-byte bound")]
    TooLarge(usize),
    /// No task has that id (or it expired).
    #[error("no task with that id")]
    NotFound,
    /// The store cannot be reached now (a shared store's server is down); nothing changed.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// A change [`TaskStore::update`] applies to a task. A shared store may call it more than
/// once (it retries on a concurrent change, on the fresher record): the last call's effect is
/// what is kept, so a change only reads and writes the task it is given (and its own state).
pub trait TaskChange: FnMut(&mut Task) + MaybeSend {}

impl<F: FnMut(&mut Task) + MaybeSend + ?Sized> TaskChange for F {}

/// What the server instances sharing a store tell each other about one task
/// ([`TaskStore::signal`]); the core decides what each one means.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskSignal {
    /// The task's status changed to this one: `tasks/result` callers waiting for it read it
    /// again, and a terminal status stops its tool on the instance that runs it (a
    /// `tasks/cancel` served elsewhere).
    Status(TaskStatus),
    /// `tasks/update` answers (key → response), for the instance whose tool waits for them.
    Answers(Map<String, Value>),
    /// Signals may have been lost (the store's link to the others was down): every instance
    /// reads again the tasks it runs and the ones it waits for. A store sends it to its own
    /// listeners (any task id) once the link is back.
    Resync,
}

impl TaskSignal {
    /// The signal as JSON text: `{"status":"cancelled"}`, `{"answers":{…}}` or
    /// `{"resync":true}`.
    pub fn to_json(&self) -> String {
        crate::wire::json_text::to_text(&match self {
            TaskSignal::Status(status) => serde_json::json!({ "status": status }),
            TaskSignal::Answers(answers) => serde_json::json!({ "answers": answers }),
            TaskSignal::Resync => serde_json::json!({ "resync": true }),
        })
    }

    /// The signal of [`TaskSignal::to_json`]'s text; `None` for anything else.
    pub fn from_json(text: &str) -> Option<TaskSignal> {
        let value: Value = serde_json::from_str(text).ok()?;
        if let Some(status) = value.get("status") {
            return serde_json::from_value(status.clone())
                .ok()
                .map(TaskSignal::Status);
        }
        match (value.get("answers"), value.get("resync")) {
            (Some(Value::Object(answers)), _) => Some(TaskSignal::Answers(answers.clone())),
            (None, Some(Value::Bool(true))) => Some(TaskSignal::Resync),
            _ => None,
        }
    }
}

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// Hears the signals other instances sent through a shared store
        /// ([`TaskStore::subscribe`]): the task's id and the signal (`Send + Sync` on native
        /// targets only).
        pub type TaskListener = Arc<dyn Fn(&str, TaskSignal)>;
    } else {
        /// Hears the signals other instances sent through a shared store
        /// ([`TaskStore::subscribe`]): the task's id and the signal (`Send + Sync` on native
        /// targets only).
        pub type TaskListener = Arc<dyn Fn(&str, TaskSignal) + Send + Sync>;
    }
}

/// Where tasks live: the in-memory [`MemoryTaskStore`] by default, or a shared one (a database,
/// a cache) so that any server instance can serve any task.
///
/// Implementations apply [`TaskStore::update`] atomically (no other change to that task
/// interleaves: a lock, or a compare-and-set retried on the fresher record), never evict a live
/// task to make room, and treat a task whose TTL passed as absent. A store shared by several
/// instances also carries [`TaskSignal`]s between them ([`TaskStore::signal`],
/// [`TaskStore::subscribe`]); the default methods carry none (a store of one instance).
pub trait TaskStore: MaybeSend + MaybeSync {
    /// Keep a new task.
    ///
    /// # Errors
    /// [`TaskStoreError::Full`] or [`TaskStoreError::TooLarge`] when a bound would be passed;
    /// [`TaskStoreError::Unavailable`] when the store cannot be reached.
    fn create(&self, task: Task, now_ms: u64) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// The task with that id; `None` when absent or expired at `now_ms`.
    ///
    /// # Errors
    /// [`TaskStoreError::Unavailable`] when the store cannot be reached.
    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>>;

    /// Change a task with `change`, atomically; the task after the change.
    ///
    /// # Errors
    /// [`TaskStoreError::NotFound`] for an absent or expired task; [`TaskStoreError::TooLarge`]
    /// when the changed task would pass the byte bound (then it stays as it was);
    /// [`TaskStoreError::Unavailable`] when the store cannot be reached (or, for a shared
    /// store, concurrent changes kept winning).
    fn update<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
        change: &'a mut dyn TaskChange,
    ) -> BoxFuture<'a, Result<Task, TaskStoreError>>;

    /// The live tasks of `owner` (a connection or session; `None`: tasks of stateless
    /// requests), newest first.
    ///
    /// # Errors
    /// [`TaskStoreError::Unavailable`] when the store cannot be reached.
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<Task>, TaskStoreError>>;

    /// Forget a task; `true` when it was there.
    ///
    /// # Errors
    /// [`TaskStoreError::Unavailable`] when the store cannot be reached.
    fn remove<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>>;

    /// Tell the other instances sharing the store `signal` about `task_id` (best effort: a
    /// lost signal is made up for by reading the record again). Default: nothing (no other
    /// instance).
    fn signal<'a>(&'a self, task_id: &'a str, signal: &'a TaskSignal) -> BoxFuture<'a, ()> {
        let _ = (task_id, signal);
        Box::pin(futures::future::ready(()))
    }

    /// Hand the signals other instances send to `listener` from now on; `true` when the store
    /// is shared and carries them. Default: `false` (a store of one instance).
    fn subscribe(&self, listener: TaskListener) -> bool {
        let _ = listener;
        false
    }
}

/// The default store: a map in memory, at most `max_tasks` tasks and `max_bytes` bytes (by
/// [`Task::weight`]); expired tasks are dropped when met and before each create.
#[derive(Debug)]
pub struct MemoryTaskStore {
    max_tasks: usize,
    max_bytes: usize,
    inner: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    tasks: HashMap<String, (Task, usize)>,
    bytes: usize,
}

impl Memory {
    fn drop_expired(&mut self, now_ms: u64) {
        let expired: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, (t, _))| t.expired(now_ms))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.forget(&id);
        }
    }

    fn forget(&mut self, id: &str) -> bool {
        match self.tasks.remove(id) {
            Some((_, weight)) => {
                self.bytes -= weight;
                true
            }
            None => false,
        }
    }
}

/// 1,024 tasks.
pub const DEFAULT_MAX_TASKS: usize = 1024;
/// 64 MiB.
pub const DEFAULT_MAX_TASK_BYTES: usize = 64 << 20;

impl Default for MemoryTaskStore {
    fn default() -> Self {
        MemoryTaskStore::new(DEFAULT_MAX_TASKS, DEFAULT_MAX_TASK_BYTES)
    }
}

impl MemoryTaskStore {
    /// A store of at most `max_tasks` tasks weighing at most `max_bytes` in all.
    pub fn new(max_tasks: usize, max_bytes: usize) -> Self {
        MemoryTaskStore {
            max_tasks,
            max_bytes,
            inner: Mutex::new(Memory::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many tasks are kept (expired ones included until met).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl MemoryTaskStore {
    fn create_now(&self, task: Task, now_ms: u64) -> Result<(), TaskStoreError> {
        let mut memory = self.lock();
        memory.drop_expired(now_ms);
        if memory.tasks.len() >= self.max_tasks {
            return Err(TaskStoreError::Full(self.max_tasks));
        }
        let weight = task.weight();
        if memory.bytes + weight > self.max_bytes {
            return Err(TaskStoreError::TooLarge(self.max_bytes));
        }
        memory.bytes += weight;
        memory.tasks.insert(task.task_id.clone(), (task, weight));
        Ok(())
    }

    fn get_now(&self, task_id: &str, now_ms: u64) -> Option<Task> {
        let mut memory = self.lock();
        match memory.tasks.get(task_id) {
            Some((task, _)) if task.expired(now_ms) => {
                memory.forget(task_id);
                None
            }
            Some((task, _)) => Some(task.clone()),
            None => None,
        }
    }

    fn update_now(
        &self,
        task_id: &str,
        now_ms: u64,
        change: &mut dyn TaskChange,
    ) -> Result<Task, TaskStoreError> {
        let mut memory = self.lock();
        let Some((task, weight)) = memory.tasks.get(task_id) else {
            return Err(TaskStoreError::NotFound);
        };
        if task.expired(now_ms) {
            memory.forget(task_id);
            return Err(TaskStoreError::NotFound);
        }
        let (old_weight, mut changed) = (*weight, task.clone());
        change(&mut changed);
        let new_weight = changed.weight();
        let bytes = memory.bytes - old_weight + new_weight;
        if bytes > self.max_bytes {
            return Err(TaskStoreError::TooLarge(self.max_bytes));
        }
        memory.bytes = bytes;
        memory
            .tasks
            .insert(task_id.to_owned(), (changed.clone(), new_weight));
        Ok(changed)
    }

    fn list_now(&self, owner: Option<&str>, now_ms: u64) -> Vec<Task> {
        let mut memory = self.lock();
        memory.drop_expired(now_ms);
        let mut tasks: Vec<Task> = (memory.tasks.values())
            .filter(|(t, _)| t.owner.as_deref() == owner)
            .map(|(t, _)| t.clone())
            .collect();
        tasks.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| a.task_id.cmp(&b.task_id))
        });
        tasks
    }
}

fn ready<'a, T: MaybeSend + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(futures::future::ready(value))
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: Task, now_ms: u64) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        ready(self.create_now(task, now_ms))
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        ready(Ok(self.get_now(task_id, now_ms)))
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
        change: &'a mut dyn TaskChange,
    ) -> BoxFuture<'a, Result<Task, TaskStoreError>> {
        ready(self.update_now(task_id, now_ms, change))
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<Task>, TaskStoreError>> {
        ready(Ok(self.list_now(owner, now_ms)))
    }

    fn remove<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        ready(Ok(self.lock().forget(task_id)))
    }
}

/// ms since the Unix epoch as an ISO 8601 UTC timestamp, `2025-11-25T10:30:00.123Z`.
pub fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(id: &str, at: u64, ttl: Option<u64>) -> Task {
        Task {
            task_id: id.into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: at,
            last_updated_at: at,
            ttl_ms: ttl,
            poll_interval_ms: None,
            result: None,
            error: None,
            input_requests: Map::new(),
            owner: None,
            authorization: None,
        }
    }

    #[test]
    fn iso8601_renders_utc_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_764_066_600_123), "2025-11-25T10:30:00.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn memory_store_is_bounded_and_expires_by_ttl() {
        use futures::executor::block_on;
        let store = MemoryTaskStore::new(2, 10_000);
        block_on(store.create(task("a", 0, Some(100)), 0)).unwrap();
        block_on(store.create(task("b", 10, None), 10)).unwrap();
        assert_eq!(
            block_on(store.create(task("c", 20, None), 20)),
            Err(TaskStoreError::Full(2))
        );
        let get = |id: &str, now| block_on(store.get(id, now)).unwrap();
        assert!(get("a", 20).is_some() && get("b", 20).is_some());
        assert!(get("a", 99).is_some(), "alive until its TTL");
        assert!(get("a", 100).is_none(), "gone at its TTL");
        block_on(store.create(task("c", 120, None), 120)).unwrap();
        let ids = |tasks: Vec<Task>| tasks.into_iter().map(|t| t.task_id).collect::<Vec<_>>();
        assert_eq!(ids(block_on(store.list(None, 120)).unwrap()), ["c", "b"]);
        let big = json!("x".repeat(20_000));
        let err = block_on(store.update("b", 120, &mut |t| t.result = Some(big.clone())));
        assert_eq!(err, Err(TaskStoreError::TooLarge(10_000)));
        assert_eq!(get("b", 120).unwrap().result, None, "unchanged");
        assert!(block_on(store.remove("b")).unwrap());
        assert!(!block_on(store.remove("b")).unwrap());
        assert_eq!(
            block_on(store.update("b", 120, &mut |_| {})),
            Err(TaskStoreError::NotFound)
        );
    }

    #[test]
    fn memory_store_lists_one_owners_tasks_only() {
        use futures::executor::block_on;
        let store = MemoryTaskStore::default();
        let owned = |id: &str, at, owner: Option<&str>| Task {
            owner: owner.map(str::to_owned),
            ..task(id, at, None)
        };
        block_on(store.create(owned("a", 1, Some("s1")), 1)).unwrap();
        block_on(store.create(owned("b", 2, Some("s2")), 2)).unwrap();
        block_on(store.create(owned("c", 3, Some("s1")), 3)).unwrap();
        block_on(store.create(owned("d", 4, None), 4)).unwrap();
        let ids = |owner| {
            (block_on(store.list(owner, 5)).unwrap().into_iter())
                .map(|t| t.task_id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(Some("s1")), ["c", "a"]);
        assert_eq!(ids(Some("s2")), ["b"]);
        assert_eq!(ids(None), ["d"]);
        assert!(ids(Some("s3")).is_empty());
        // A store of one instance carries no signals.
        assert!(!store.subscribe(Arc::new(|_: &str, _| {})));
    }

    #[test]
    fn signals_round_trip_as_json() {
        for signal in [
            TaskSignal::Status(TaskStatus::Cancelled),
            TaskSignal::Status(TaskStatus::InputRequired),
            TaskSignal::Answers(
                json!({"k": {"action": "accept"}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        ] {
            assert_eq!(TaskSignal::from_json(&signal.to_json()), Some(signal));
        }
        assert_eq!(
            TaskSignal::Status(TaskStatus::InputRequired).to_json(),
            r#"{"status":"input_required"}"#
        );
        assert_eq!(TaskSignal::from_json("{}"), None);
        assert_eq!(TaskSignal::from_json(r#"{"status":"nope"}"#), None);
        assert_eq!(TaskSignal::from_json("not json"), None);
    }
}
