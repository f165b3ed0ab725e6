//! Tasks: a `tools/call` answered at once with a task handle while the tool runs in the
//! background, then polled, answered and cancelled by task id — in both eras, with no I/O.
//!
//! | | 2025-11-25 ([`basic/utilities/tasks`](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks), experimental) | 2026-07-28 (extension `io.modelcontextprotocol/tasks`, SEP-2663) |
//! |---|---|---|
//! | negotiation | `capabilities.tasks` in `initialize` | `capabilities.extensions["io.modelcontextprotocol/tasks"]` in `server/discover`; the client declares it per request |
//! | who decides | the client, with `params.task: { ttl }` | the server, for a client that declares the extension |
//! | created | `{ task: Task }` | `{ resultType: "task", …Task }` (flat) |
//! | methods | `tasks/get`, `tasks/result` (waits), `tasks/list`, `tasks/cancel` (the task) | `tasks/get` (inlines `result` / `error` / `inputRequests`), `tasks/update` (answers), `tasks/cancel` (an empty ack) |
//! | field names | `ttl`, `pollInterval` | `ttlMs`, `pollIntervalMs` |
//!
//! A tool declares `execution.taskSupport` ([`Tool::with_task_support`]): `forbidden` (the
//! default), `optional` or `required`. A task-supporting tool runs as a task from its start; one
//! built with [`Tool::with_task_on_demand`] runs inside the request (2026-07-28 input rounds
//! allowed) until it calls [`RequestContext::run_as_task`]. Inside a task, on the 2026-07-28
//! wire, [`RequestContext::input`] (and `elicit`, `create_message`, `list_roots`) sets the task
//! to `input_required` with the request under its key until `tasks/update` answers it.
//!
//! Records live in a [`TaskStore`] ([`MemoryTaskStore`] by default: bounded in count and bytes,
//! expired by TTL on the server's [`Clock`]); the tool runs on the
//! [`TaskOptions::spawner`]. `tasks/cancel` settles a running task as `cancelled` and drops the
//! tool's future; a status change and the tool's end race through one atomic store update, so a
//! task gets exactly one terminal status.

mod running;
mod shared;
pub(crate) mod slot;
pub mod store;
mod wire;

use crate::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use futures::channel::oneshot;
use futures::future::{AbortHandle, Abortable, Either};
use serde_json::{json, Map, Value};

pub use store::{
    iso8601, MemoryTaskStore, Task, TaskChange, TaskListener, TaskSignal, TaskStatus, TaskStore,
    TaskStoreError, DEFAULT_MAX_TASKS, DEFAULT_MAX_TASK_BYTES,
};

use super::methods::{check_scopes, page, tool_call_params};
use super::McpServer;
use crate::era::mrtr::well_formed;
use crate::era::Era;
use crate::host::{Clock, Sleep, Spawn};
use crate::primitives::tools::{Tool, UnknownTool};
use crate::protocol::{TaskSupport, ToolResult};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};
use crate::BoxFuture;
use running::Running;
use slot::TaskSlot;
use wire::{created, declares_extension, detailed, missing_extension, task_fields, task_id_param};

pub use wire::{RELATED_TASK_META, TASKS_EXTENSION};

/// How a server runs tasks ([`ServerOptions::with_tasks`](crate::ServerOptions::with_tasks)).
#[derive(Clone)]
pub struct TaskOptions {
    /// Where task records live (default: a [`MemoryTaskStore`] of 1,024 tasks, 64 MiB).
    pub store: Arc<dyn TaskStore>,
    /// A task's TTL when the client asks for none (ms; default one hour).
    pub default_ttl_ms: u64,
    /// The longest TTL granted; a longer request is cut to it (ms; default 24 hours).
    pub max_ttl_ms: u64,
    /// The polling interval suggested to clients (ms; default 500).
    pub poll_interval_ms: u64,
    /// Runs the tools in the background (default [`host::defaults::spawner`](crate::host::defaults::spawner));
    /// with none, a task-augmented call fails with `-32603`.
    pub spawner: Option<Spawn>,
    /// The server's timer for tasks (default [`host::defaults::sleep`](crate::host::defaults::sleep)):
    /// a 2025-11-25 `tasks/result` waiting on a shared store reads the task again a second
    /// after the last change signal, so a lost signal delays it at most that long (with none it
    /// waits for signals only); a task's end the store could not take is written again
    /// [`settle_pause`] later (with none it is given up at once, logged).
    pub sleep: Option<Sleep>,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("default_ttl_ms", &self.default_ttl_ms)
            .field("max_ttl_ms", &self.max_ttl_ms)
            .field("poll_interval_ms", &self.poll_interval_ms)
            .finish_non_exhaustive()
    }
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions::new()
    }
}

impl TaskOptions {
    /// The defaults: in memory, one-hour TTL (24 h at most), 500 ms polls, the default spawner.
    pub fn new() -> Self {
        TaskOptions {
            store: Arc::new(MemoryTaskStore::default()),
            default_ttl_ms: 3_600_000,
            max_ttl_ms: 86_400_000,
            poll_interval_ms: 500,
            spawner: crate::host::defaults::spawner(),
            sleep: crate::host::defaults::sleep(),
        }
    }

    /// Keep tasks in `store`.
    pub fn with_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// Grant `default_ms` when the client asks for no TTL, and at most `max_ms`.
    pub fn with_ttl(mut self, default_ms: u64, max_ms: u64) -> Self {
        self.max_ttl_ms = max_ms.max(1);
        self.default_ttl_ms = default_ms.clamp(1, self.max_ttl_ms);
        self
    }

    /// Suggest polling every `ms` (at least 1).
    pub fn with_poll_interval(mut self, ms: u64) -> Self {
        self.poll_interval_ms = ms.max(1);
        self
    }

    /// Run tools on `spawner`.
    pub fn with_spawner(mut self, spawner: Spawn) -> Self {
        self.spawner = Some(spawner);
        self
    }

    /// Time `tasks/result`'s re-reads and the retried writes of a task's end with `sleep`
    /// ([`TaskOptions::sleep`]).
    pub fn with_sleep(mut self, sleep: Sleep) -> Self {
        self.sleep = Some(sleep);
        self
    }
}

/// How long a 2025-11-25 `tasks/result` waits for a change signal before it reads the task
/// again (a signal lost between instances delays the answer by at most this).
const RECHECK_MS: u64 = 1_000;

/// The tasks of one server: the options, the clock and the tools running here.
pub(crate) struct Tasks {
    options: TaskOptions,
    clock: Option<Clock>,
    running: Mutex<HashMap<String, Arc<Running>>>,
    /// `tasks/result` callers waiting for a task's status to change, by task id.
    watchers: Mutex<HashMap<String, Vec<oneshot::Sender<()>>>>,
    /// Whether the store is shared with other instances (it carries signals).
    shared: bool,
    /// This instance's tag, qualifying the owners only this instance knows (connections) in a
    /// shared store.
    tag: String,
    me: Weak<Tasks>,
    /// The server, for `notifications/tasks/status` (set once the server exists).
    server: std::sync::OnceLock<Weak<super::Inner>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a request of the authorization context `authorization` may see a task bound to
/// `bound`: a task bound to a context only by that context; one made without a token by anyone
/// holding its id.
fn visible(bound: Option<&str>, authorization: Option<&str>) -> bool {
    bound.is_none_or(|bound| Some(bound) == authorization)
}

fn store_error(e: TaskStoreError) -> ErrorObject {
    match e {
        TaskStoreError::NotFound => ErrorObject::invalid_params("unknown taskId"),
        e => ErrorObject::internal(e),
    }
}

/// The `ttl` a 2025-11-25 `params.task` asks for, in ms: absent or `null` is none (the default
/// is granted); a number at or above 0 is taken (a fraction rounded down, beyond `u64`
/// saturated; the grant caps it); anything else — a negative number, a string — is `-32602`
/// (it was taken silently for none, so `-1` got the default hour).
fn requested_ttl(ttl: Option<&Value>) -> Result<Option<u64>, ErrorObject> {
    match ttl {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(ms), _) => Ok(Some(ms)),
            // `as` saturates: 1e300 is u64::MAX, which the grant caps.
            (None, Some(ms)) if ms >= 0.0 => Ok(Some(ms as u64)),
            _ => Err(ErrorObject::invalid_params(format!(
                "\"task.ttl\" must be a number of milliseconds at or above 0, not {n}"
            ))),
        },
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"task.ttl\" must be a number of milliseconds, not {}",
            crate::wire::json_text::to_text(other)
        ))),
    }
}

/// How many times a task's end is written at most when the store cannot be reached (a shared
/// store: Redis restarting, a network blip): 120, [`settle_pause`] apart (with
/// [`TaskOptions::sleep`]; without a timer, once), about 10 minutes in all.
pub const SETTLE_ATTEMPTS: u32 = 120;

/// The wait after the `attempt`-th failed write of a task's end (1, 2, …): 100 ms, doubling,
/// at most 5 s.
pub fn settle_pause(attempt: u32) -> std::time::Duration {
    let ms = 100u64 << attempt.saturating_sub(1).min(6);
    std::time::Duration::from_millis(ms.min(5_000))
}

/// A fresh unguessable id: 128 random bits as hex.
fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        tracing::error!("no system randomness for a task id");
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Tasks {
    pub(crate) fn new(options: TaskOptions, clock: Option<Clock>) -> Arc<Tasks> {
        Arc::new_cyclic(|me: &Weak<Tasks>| {
            let hears = me.clone();
            let shared = options.store.subscribe(Arc::new(move |id: &str, signal| {
                if let Some(tasks) = hears.upgrade() {
                    tasks.heard(id, signal);
                }
            }));
            Tasks {
                options,
                clock,
                running: Mutex::new(HashMap::default()),
                watchers: Mutex::new(HashMap::default()),
                shared,
                tag: new_task_id()[..12].to_owned(),
                me: me.clone(),
                server: std::sync::OnceLock::new(),
            }
        })
    }

    /// Change a task in the store (as [`TaskStore::update`]) and, when its status changed,
    /// wake the `tasks/result` callers waiting for it (here, and through the store's signal on
    /// the other instances sharing it), and tell the connection or session that created it:
    /// `notifications/tasks/status` with the task (2025-11-25 `basic/utilities/tasks`, "Task
    /// Status Notification"). Only a scope with a push channel gets it — one that did the
    /// handshake-era `initialize`; the 2026-07-28 extension has no such notification outside
    /// `subscriptions/listen`.
    async fn change(
        &self,
        task_id: &str,
        now: u64,
        change: &mut dyn TaskChange,
    ) -> Result<Task, TaskStoreError> {
        let mut before = None;
        let changed = (self.store())
            .update(task_id, now, &mut |t: &mut Task| {
                // A shared store may retry on a fresher record: the last call counts.
                before = Some(t.status);
                change(t);
            })
            .await;
        if let (Ok(task), Some(before)) = (&changed, before) {
            if task.status != before {
                self.announce(task);
                self.wake(task_id);
                let signal = TaskSignal::Status(task.status);
                self.store().signal(task_id, &signal).await;
            }
        }
        changed
    }

    fn now(&self) -> u64 {
        self.clock.as_ref().map_or(0, |c| c())
    }

    fn store(&self) -> &dyn TaskStore {
        &*self.options.store
    }

    /// Create a task record (durably: `tasks/get` finds it once this returns) and its running
    /// entry. Tools still running here whose task has expired are dropped first.
    async fn create(
        &self,
        ttl_ms: Option<u64>,
        scope: Option<&str>,
        authorization: Option<String>,
    ) -> Result<(Task, Arc<Running>), ErrorObject> {
        if self.options.spawner.is_none() {
            return Err(ErrorObject::internal(
                "this host has no spawner: tasks cannot run",
            ));
        }
        let now = self.now();
        self.drop_expired(now);
        let ttl = ttl_ms
            .unwrap_or(self.options.default_ttl_ms)
            .clamp(1, self.options.max_ttl_ms);
        let task = Task {
            task_id: new_task_id(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl_ms: Some(ttl),
            poll_interval_ms: Some(self.options.poll_interval_ms),
            result: None,
            error: None,
            input_requests: Map::new(),
            owner: self.owner_of(scope),
            authorization,
        };
        self.store()
            .create(task.clone(), now)
            .await
            .map_err(store_error)?;
        let running = Arc::new(Running {
            task_id: task.task_id.clone(),
            expires_at: now.saturating_add(ttl),
            abort: Mutex::new(None),
            waiting: Mutex::new(HashMap::default()),
            answered: Mutex::new(HashMap::default()),
            awaiting: std::sync::atomic::AtomicUsize::new(0),
            tasks: self.me.clone(),
            authorization: task.authorization.clone(),
        });
        lock(&self.running).insert(task.task_id.clone(), running.clone());
        Ok((task, running))
    }

    /// Abort the tools whose task has expired (its TTL passed: the store no longer has it).
    fn drop_expired(&self, now: u64) {
        let gone: Vec<Arc<Running>> = lock(&self.running)
            .values()
            .filter(|r| now >= r.expires_at)
            .cloned()
            .collect();
        for running in gone {
            tracing::debug!(task = %running.task_id, "task expired while running; dropped");
            self.finish(&running);
        }
    }

    /// Run the tool's future on the spawner; its end settles the task.
    fn spawn(
        &self,
        running: Arc<Running>,
        future: BoxFuture<'static, Result<ToolResult, ErrorObject>>,
    ) {
        let (handle, registration) = AbortHandle::new_pair();
        *lock(&running.abort) = Some(handle);
        let tasks = self.me.clone();
        let spawner = self.options.spawner.clone().expect("checked in create");
        spawner(Box::pin(async move {
            let outcome = Abortable::new(future, registration).await;
            let Some(tasks) = tasks.upgrade() else { return };
            if let Ok(outcome) = outcome {
                tasks.settle(&running.task_id, outcome).await;
            }
            tasks.finish(&running);
        }));
    }

    /// The tool ended: `completed` with its result, or `failed` with its JSON-RPC error — unless
    /// the task is already terminal (cancelled first). A result too large for the store fails
    /// the task with a short error instead.
    async fn settle(&self, task_id: &str, outcome: Result<ToolResult, ErrorObject>) {
        let (status, result, error) = match outcome {
            Ok(result) => (
                TaskStatus::Completed,
                Some(serde_json::to_value(result).expect("tool results serialize")),
                None,
            ),
            Err(error) => (TaskStatus::Failed, None, Some(error)),
        };
        let set = |status, result: Option<Value>, error: Option<ErrorObject>| async move {
            let now = self.now();
            self.change(task_id, now, &mut |t: &mut Task| {
                if !t.status.is_terminal() {
                    t.status = status;
                    t.result.clone_from(&result);
                    t.error.clone_from(&error);
                    t.input_requests.clear();
                    t.last_updated_at = now;
                }
            })
            .await
        };
        // A store that cannot be reached now (a shared one: Redis restarting, a network blip)
        // is written again after a pause (the options' timer; none: given up at once), else
        // the end would be lost: the task `working` until its ttl, its result gone. Until the
        // task expires (the store answers `NotFound` then), at most SETTLE_ATTEMPTS writes.
        let (mut status, mut result, mut error) = (status, result, error);
        let (mut attempt, mut shortened) = (0, false);
        loop {
            match set(status, result.clone(), error.clone()).await {
                // Failed instead, with a short error: written as the end is (retried too).
                Err(TaskStoreError::TooLarge(limit)) if !shortened => {
                    shortened = true;
                    (status, result) = (TaskStatus::Failed, None);
                    error = Some(ErrorObject::internal(format!(
                        "the task's result exceeds the task store's {limit}-byte bound"
                    )));
                    continue;
                }
                Err(e @ TaskStoreError::Unavailable(_)) => {
                    attempt += 1;
                    let sleep = (self.options.sleep.as_ref()).filter(|_| attempt < SETTLE_ATTEMPTS);
                    if let Some(sleep) = sleep {
                        if attempt == 1 {
                            tracing::warn!(task = %task_id, error = %e, "cannot record the task's end yet; trying again");
                        }
                        sleep(settle_pause(attempt)).await;
                        continue;
                    }
                    tracing::error!(task = %task_id, error = %e, attempts = attempt, "cannot record the task's end: given up");
                }
                _ => {}
            }
            break;
        }
    }

    /// Forget a running tool: abort it (a no-op once it ended) and wake `tasks/result` callers.
    fn finish(&self, running: &Running) {
        lock(&self.running).remove(&running.task_id);
        if let Some(abort) = lock(&running.abort).take() {
            abort.abort();
        }
        lock(&running.waiting).clear();
        self.wake(&running.task_id);
    }

    /// The task `task_id` as a request of the authorization context `authorization` may see it:
    /// a task bound to another context is an unknown one (its existence is not told).
    async fn get(&self, task_id: &str, authorization: Option<&str>) -> Result<Task, ErrorObject> {
        let now = self.now();
        let found = self.store().get(task_id, now).await.map_err(store_error)?;
        match found.filter(|task| visible(task.authorization.as_deref(), authorization)) {
            Some(task) => Ok(task),
            None => {
                self.drop_expired(now);
                Err(ErrorObject::invalid_params(format!(
                    "unknown taskId {task_id:?}"
                )))
            }
        }
    }

    /// Settle a task as `cancelled` unless it is terminal, and drop its tool (here, or —
    /// through the store's signal — on the instance that runs it): whether it was cancelled now
    /// (`false`: already terminal), and the task after. A task of another authorization context
    /// than `authorization` is left alone and answered as an unknown one. One store round trip.
    async fn cancel(
        &self,
        task_id: &str,
        authorization: Option<&str>,
    ) -> Result<(bool, Task), ErrorObject> {
        let now = self.now();
        let (mut cancelled, mut hidden) = (false, false);
        let task = self
            .change(task_id, now, &mut |t: &mut Task| {
                hidden = !visible(t.authorization.as_deref(), authorization);
                cancelled = !hidden && !t.status.is_terminal();
                if cancelled {
                    t.status = TaskStatus::Cancelled;
                    t.status_message = Some("cancelled by the client".into());
                    t.input_requests.clear();
                    t.last_updated_at = now;
                }
            })
            .await
            .map_err(store_error)?;
        if hidden {
            return Err(store_error(TaskStoreError::NotFound));
        }
        let running = lock(&self.running).get(task_id).cloned();
        if let (true, Some(running)) = (cancelled, running) {
            self.finish(&running);
        }
        Ok((cancelled, task))
    }

    /// Deliver `tasks/update` answers: each one to the input request outstanding under its key
    /// (others are ignored, as are answers without the shape the request needs). A task whose
    /// tool runs on another instance sharing the store gets them through the store's signal.
    async fn update(
        &self,
        task_id: &str,
        responses: &Map<String, Value>,
        authorization: Option<&str>,
    ) -> Result<(), ErrorObject> {
        let running = lock(&self.running).get(task_id).cloned();
        match running {
            Some(running)
                if running
                    .authorization
                    .as_deref()
                    .is_none_or(|b| Some(b) == authorization) =>
            {
                let delivered = self.deliver(&running, responses);
                self.record_answered(task_id, &delivered).await;
            }
            // Another context's task is an unknown one.
            Some(_) => return Err(store_error(TaskStoreError::NotFound)),
            None => {
                let task = self.get(task_id, authorization).await?;
                if self.shared && !task.status.is_terminal() {
                    let signal = TaskSignal::Answers(responses.clone());
                    self.store().signal(task_id, &signal).await;
                }
            }
        }
        Ok(())
    }

    /// Hand answers to the input requests of the tool running here; the keys delivered.
    fn deliver(&self, running: &Running, responses: &Map<String, Value>) -> Vec<String> {
        let mut delivered = Vec::new();
        let mut waiting = lock(&running.waiting);
        for (key, answer) in responses {
            let fits = waiting
                .get(key)
                .is_some_and(|(method, _)| well_formed(method, answer));
            let Some((_, tx)) = fits.then(|| waiting.remove(key)).flatten() else {
                continue;
            };
            lock(&running.answered).insert(key.clone(), answer.clone());
            let _ = tx.send(answer.clone());
            delivered.push(key.clone());
        }
        delivered
    }

    /// The delivered input requests leave the record; the task is `working` again when none
    /// is left.
    async fn record_answered(&self, task_id: &str, delivered: &[String]) {
        if delivered.is_empty() {
            return;
        }
        let now = self.now();
        let _ = self
            .change(task_id, now, &mut |t: &mut Task| {
                for key in delivered {
                    t.input_requests.remove(key);
                }
                if t.status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                    t.status = TaskStatus::Working;
                }
                t.last_updated_at = now;
            })
            .await;
    }
}

impl McpServer {
    /// The capabilities of `era`: on 2026-07-28 the tasks slot moves to
    /// `extensions["io.modelcontextprotocol/tasks"]`.
    pub(super) fn era_capabilities(&self, era: Era) -> Value {
        let mut caps = self.capabilities();
        if era == Era::Modern {
            if let Some(map) = caps.as_object_mut() {
                if map.remove("tasks").is_some() {
                    let extensions = map.entry("extensions").or_insert_with(|| json!({}));
                    if let Some(extensions) = extensions.as_object_mut() {
                        extensions.insert(TASKS_EXTENSION.into(), json!({}));
                    }
                }
            }
        }
        caps
    }

    /// The 2025-11-25 `tasks` capability, when tasks are enabled.
    pub(super) fn tasks_capability(&self) -> Option<Value> {
        self.inner
            .tasks
            .as_ref()
            .map(|_| json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }))
    }

    /// `tools/call`: a plain call, a task from the start, or a call that may become a task
    /// (those two through the task engine).
    pub(super) async fn call_tool(
        &self,
        params: Option<Map<String, Value>>,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        let task = params.as_ref().and_then(|p| p.get("task")).cloned();
        let (name, arguments) = tool_call_params(params)?;
        let tool = self
            .tools()
            .get(&name)
            .ok_or_else(|| ErrorObject::invalid_params(UnknownTool(name.clone())))?;
        check_scopes(&tool, &name, &ctx)?;
        // Without tasks, every call is plain (a `task` param is ignored).
        let engine = match &self.inner.tasks {
            Some(engine) => match engine.mode(&tool, task.as_ref(), &ctx)? {
                Mode::Plain => None,
                mode => Some((engine, mode)),
            },
            None => None,
        };
        match engine {
            None => tool.call(arguments, ctx).await.map(plain),
            Some((engine, mode)) => engine.run(self, tool, arguments, ctx, mode).await,
        }
    }

    /// `tasks/*`: `-32601` on a server without tasks.
    pub(super) async fn task_method(
        &self,
        method: &str,
        params: Option<Map<String, Value>>,
        ctx: &RequestContext,
    ) -> Result<Value, ErrorObject> {
        match &self.inner.tasks {
            Some(engine) => engine.method(self, method, params, ctx).await,
            None => Err(ErrorObject::method_not_found(method)),
        }
    }
}

/// How one `tools/call` runs.
pub(super) enum Mode {
    Plain,
    Task(Option<u64>),
    OnDemand,
}

/// The task side of a server that runs tasks ([`ServerOptions::with_tasks`](crate::ServerOptions::with_tasks)),
/// as the rest of the server reaches it: through this vtable, built only by
/// [`McpServer::new`](super::McpServer::new) from the options' tasks. A program that never builds a
/// server with tasks (the JS bindings, which have no tasks option) links none of the task
/// machinery; a server without tasks never calls any of it.
pub(super) trait TaskEngine: crate::MaybeSend + crate::MaybeSync {
    /// Tie the tasks to their server (once, at its construction).
    fn bind(&self, server: Weak<super::Inner>);

    /// How a `tools/call` of `tool` runs, with the call's `task` param.
    fn mode(
        &self,
        tool: &Tool,
        task: Option<&Value>,
        ctx: &RequestContext,
    ) -> Result<Mode, ErrorObject>;

    /// A `tools/call` that runs as a task from its start, or may become one ([`Mode::Task`],
    /// [`Mode::OnDemand`]).
    fn run<'a>(
        &'a self,
        server: &'a McpServer,
        tool: Arc<Tool>,
        arguments: Value,
        ctx: RequestContext,
        mode: Mode,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>>;

    /// `tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/result` and `tasks/list`.
    fn method<'a>(
        &'a self,
        server: &'a McpServer,
        method: &'a str,
        params: Option<Map<String, Value>>,
        ctx: &'a RequestContext,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>>;

    /// The tasks themselves (tests look into them).
    #[cfg(test)]
    fn tasks(&self) -> &Tasks;
}

/// How a server holds its task engine: behind a thin pointer, so that a server without tasks
/// holds a null and nothing else. (`None` of the fat `Arc<dyn TaskEngine>` leaves the vtable
/// half undefined, and LLVM filled it with the one vtable the program has, the engine's: that
/// kept the whole engine in the JS packages.)
pub(super) type Engine = Box<Arc<dyn TaskEngine>>;

/// The engine of a server with these tasks ([`McpServer::new`](super::McpServer::new)).
pub(super) fn engine(options: TaskOptions, clock: Option<Clock>) -> Arc<dyn TaskEngine> {
    Tasks::new(options, clock)
}

impl TaskEngine for Tasks {
    fn bind(&self, server: Weak<super::Inner>) {
        let _ = self.server.set(server);
    }

    fn mode(
        &self,
        tool: &Tool,
        task: Option<&Value>,
        ctx: &RequestContext,
    ) -> Result<Mode, ErrorObject> {
        let support = tool.descriptor().task_support();
        if ctx.era == Era::Modern {
            // The server decides; a legacy `task` param is ignored (SEP-2663).
            return Ok(match (support, declares_extension(ctx)) {
                (TaskSupport::Forbidden, _) => Mode::Plain,
                (TaskSupport::Required, false) => {
                    return Err(missing_extension(&format!("tool {}", tool.name())))
                }
                (_, false) => Mode::Plain,
                (_, true) if tool.task_on_demand() => Mode::OnDemand,
                (_, true) => Mode::Task(None),
            });
        }
        match (task, support) {
            (None, TaskSupport::Required) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "tool {} must be called as a task (params.task)",
                    tool.name()
                ),
            )),
            (None, _) => Ok(Mode::Plain),
            (Some(_), TaskSupport::Forbidden) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("tool {} does not run as a task", tool.name()),
            )),
            (Some(Value::Object(task)), _) => Ok(Mode::Task(requested_ttl(task.get("ttl"))?)),
            (Some(_), _) => Err(ErrorObject::invalid_params(r#""task" must be an object"#)),
        }
    }

    fn run<'a>(
        &'a self,
        server: &'a McpServer,
        tool: Arc<Tool>,
        arguments: Value,
        ctx: RequestContext,
        mode: Mode,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>> {
        Box::pin(self.run_tool(server, tool, arguments, ctx, mode))
    }

    fn method<'a>(
        &'a self,
        server: &'a McpServer,
        method: &'a str,
        params: Option<Map<String, Value>>,
        ctx: &'a RequestContext,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>> {
        Box::pin(self.task_method(server, method, params, ctx))
    }

    #[cfg(test)]
    fn tasks(&self) -> &Tasks {
        self
    }
}

/// A tool's result as the JSON of a plain `tools/call` answer.
fn plain(result: ToolResult) -> Value {
    serde_json::to_value(result).expect("tool results serialize")
}

impl Tasks {
    /// A `tools/call` that runs as a task from its start ([`Mode::Task`]), or inside the
    /// request until it becomes one ([`Mode::OnDemand`]).
    async fn run_tool(
        &self,
        server: &McpServer,
        tool: Arc<Tool>,
        arguments: Value,
        mut ctx: RequestContext,
        mode: Mode,
    ) -> Result<Value, ErrorObject> {
        let era = ctx.era;
        match mode {
            Mode::Plain => tool.call(arguments, ctx).await.map(plain),
            Mode::Task(ttl) => {
                let (task, running) = self
                    .create(ttl, ctx.scope.as_deref(), ctx.authorization())
                    .await?;
                ctx.task = Some(TaskSlot::bound(running.clone()));
                // The task outlives this request, whose own stream (a POST's SSE) ends with the
                // handle: its server→client requests go on the scope's push channel (the
                // session's GET stream, or the connection) when it has one.
                if era == Era::Legacy {
                    let push = ctx.scope.as_deref().and_then(|scope| {
                        (server.inner.peers)
                            .read(scope, |p| p.outbound.clone())
                            .flatten()
                    });
                    if let Some(push) = push {
                        ctx = ctx.with_outbound(push);
                    }
                }
                self.spawn(
                    running,
                    Box::pin(async move { tool.call(arguments, ctx).await }),
                );
                Ok(created(&task, era))
            }
            Mode::OnDemand => {
                let owner = ctx.scope.clone();
                let authorization = ctx.authorization();
                let (slot, detach) = TaskSlot::deferred();
                ctx.task = Some(slot.clone());
                let mut future: BoxFuture<'static, _> =
                    Box::pin(async move { tool.call(arguments, ctx).await });
                let ready = match futures::future::select(&mut future, detach).await {
                    Either::Left((outcome, _)) => return outcome.map(plain),
                    Either::Right((Ok(ready), _)) => ready,
                    Either::Right((Err(_), _)) => return future.await.map(plain),
                };
                match self.create(None, owner.as_deref(), authorization).await {
                    Ok((task, running)) => {
                        slot.bind(running.clone());
                        self.spawn(running, future);
                        let _ = ready.send(());
                        Ok(created(&task, era))
                    }
                    Err(error) => {
                        tracing::debug!(%error.message, "could not become a task; runs on inside the request");
                        drop(ready);
                        future.await.map(plain)
                    }
                }
            }
        }
    }

    /// `tasks/get`, `tasks/update`, `tasks/cancel` (both eras), `tasks/result` and `tasks/list`
    /// (2025-11-25 only: removed by SEP-2663).
    async fn task_method(
        &self,
        server: &McpServer,
        method: &str,
        params: Option<Map<String, Value>>,
        ctx: &RequestContext,
    ) -> Result<Value, ErrorObject> {
        let era = ctx.era;
        let params = params.as_ref();
        match (era, method) {
            (Era::Modern, "tasks/result" | "tasks/list") | (Era::Legacy, "tasks/update") => {
                return Err(ErrorObject::method_not_found(method))
            }
            (Era::Modern, _) if !declares_extension(ctx) => return Err(missing_extension(method)),
            _ => {}
        }
        let authorization = ctx.authorization();
        let auth = authorization.as_deref();
        match method {
            "tasks/get" => Ok(detailed(
                &self.get(&task_id_param(params)?, auth).await?,
                era,
            )),
            "tasks/update" => {
                let id = task_id_param(params)?;
                let responses = match params.and_then(|p| p.get("inputResponses")) {
                    Some(Value::Object(map)) => map,
                    Some(_) => {
                        return Err(ErrorObject::invalid_params(
                            r#""inputResponses" must be an object"#,
                        ))
                    }
                    None => return Err(ErrorObject::invalid_params(r#"missing "inputResponses""#)),
                };
                self.update(&id, responses, auth).await?;
                Ok(json!({}))
            }
            "tasks/cancel" => {
                let id = task_id_param(params)?;
                let (cancelled, task) = self.cancel(&id, auth).await?;
                match era {
                    // An ack, also for a task already terminal (idempotent).
                    Era::Modern => Ok(json!({})),
                    Era::Legacy if cancelled => Ok(detailed(&task, era)),
                    Era::Legacy => Err(ErrorObject::invalid_params(format!(
                        "task {id} is already terminal"
                    ))),
                }
            }
            "tasks/result" => self.task_result(&task_id_param(params)?, auth).await,
            "tasks/list" => {
                // Only the caller's own tasks: its connection's or session's, and its
                // authorization context's. A request with neither (stateless, no token) has
                // no tasks of its own to list — listing every such task would hand out the ids
                // that are their only protection (Task Isolation: "SHOULD NOT declare
                // tasks.list" without context-binding).
                if ctx.scope.is_none() && auth.is_none() {
                    return Err(ErrorObject::method_not_found(method));
                }
                let owner = self.owner_of(ctx.scope.as_deref());
                let listed: Vec<Value> = (self.store())
                    .list(owner.as_deref(), self.now())
                    .await
                    .map_err(store_error)?
                    .iter()
                    .filter(|t| t.authorization.as_deref() == auth)
                    .map(|t| Value::Object(task_fields(t, era)))
                    .collect();
                let (items, next) = page(listed, params, server.inner.options.page_size)?;
                let mut out = json!({ "tasks": items });
                if let Some(next) = next {
                    out["nextCursor"] = json!(next);
                }
                Ok(out)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// 2025-11-25 `tasks/result`: wait for the end, then the tool's result (with the
    /// related-task `_meta`), its JSON-RPC error, or an error for a cancelled task. The task
    /// may run on another instance sharing the store: a change signal (or, should one be lost,
    /// the [`TaskOptions::sleep`] timer) has it read again; a store that cannot be reached after
    /// the first read is read again at the next recheck. The wait is bounded by the task's TTL:
    /// an expired task is an unknown one, and past the TTL the first read gave, a store still
    /// unreachable fails the call with its error.
    async fn task_result(
        &self,
        id: &str,
        authorization: Option<&str>,
    ) -> Result<Value, ErrorObject> {
        // Until when the task lives, once read (its creation plus its TTL; `None`: not read
        // yet, or no TTL).
        let mut read = None;
        loop {
            // Watched before the read: a change between the two wakes it.
            let changed = self.watch(id);
            let task = match self.get(id, authorization).await {
                Ok(task) => task,
                // The store unreachable (a shared one: Redis stalled, restarting) while waiting
                // for a task already read, within its TTL: read again at the next recheck. The
                // task goes on; failing here told the client it had failed (`-32603`, task
                // still working).
                Err(e)
                    if e.code == ErrorCode::INTERNAL_ERROR
                        && read.is_some_and(|expires: Option<u64>| {
                            expires.is_none_or(|at| self.now() < at)
                        }) =>
                {
                    tracing::debug!(task = %id, error = %e.message, "tasks/result: the task store is unavailable; waiting on");
                    self.wait(changed).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            read = Some(task.expires_at());
            match task.status {
                TaskStatus::Completed => {
                    let mut result = task.result.unwrap_or(json!({}));
                    if let Some(map) = result.as_object_mut() {
                        let meta = map.entry("_meta").or_insert_with(|| json!({}));
                        meta[RELATED_TASK_META] = json!({ "taskId": id });
                    }
                    return Ok(result);
                }
                TaskStatus::Failed => {
                    return Err(task
                        .error
                        .unwrap_or_else(|| ErrorObject::internal("the task failed")))
                }
                TaskStatus::Cancelled => {
                    return Err(ErrorObject::internal(format!("task {id} was cancelled")))
                }
                TaskStatus::Working | TaskStatus::InputRequired => {}
            }
            self.wait(changed).await;
        }
    }

    /// Wait for `changed` (a signal that the task changed) or the next recheck.
    async fn wait(&self, changed: futures::channel::oneshot::Receiver<()>) {
        match &self.options.sleep {
            Some(sleep) => {
                let recheck = sleep(std::time::Duration::from_millis(RECHECK_MS));
                futures::future::select(changed, recheck).await;
            }
            None => {
                let _ = changed.await;
            }
        }
    }
}

#[cfg(test)]
mod tests;
