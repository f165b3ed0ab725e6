//! A task whose tool runs on this server: the input requests it waits on, the answers already
//! delivered, the server→client requests it has out; and the withdrawal of an input request
//! its tool stopped waiting for.

use crate::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures::channel::oneshot;
use futures::future::AbortHandle;
use serde_json::{json, Value};

use super::slot::TaskInputs;
use super::store::{Task, TaskStatus};
use super::{lock, store_error, Tasks};
use crate::wire::jsonrpc::ErrorObject;
use crate::BoxFuture;

/// A task whose tool runs on this server.
pub(super) struct Running {
    pub(super) task_id: String,
    /// When the task's TTL passes (ms): the tool is dropped then.
    pub(super) expires_at: u64,
    pub(super) abort: Mutex<Option<AbortHandle>>,
    /// Input requests the tool waits on: key → (method, where the answer goes).
    pub(super) waiting: Mutex<HashMap<String, (String, oneshot::Sender<Value>)>>,
    /// Answers already delivered, by key (a key names one request for the task's lifetime).
    pub(super) answered: Mutex<HashMap<String, Value>>,
    /// The 2025-11-25 server→client requests of the task awaiting the client's answer.
    pub(super) awaiting: AtomicUsize,
    pub(super) tasks: Weak<Tasks>,
    /// The task's authorization context ([`Task::authorization`]): checked here without a
    /// store read.
    pub(super) authorization: Option<String>,
}

impl Running {
    /// Set the status by the requests out: `input_required` while one awaits the client,
    /// `working` again once none does. Each change reads the count when the store applies it,
    /// so the last one applied shows the current count, in whatever order they run.
    fn show_awaiting(&self) -> BoxFuture<'static, ()> {
        let (tasks, task_id) = (self.tasks.clone(), self.task_id.clone());
        Box::pin(async move {
            let Some(tasks) = tasks.upgrade() else { return };
            let Some(me) = lock(&tasks.running).get(&task_id).cloned() else {
                return;
            };
            let now = tasks.now();
            let _ = tasks
                .change(&task_id, now, &mut |t: &mut Task| {
                    let out = me.awaiting.load(Ordering::SeqCst) > 0;
                    let to = match (t.status, out) {
                        (TaskStatus::Working, true) => TaskStatus::InputRequired,
                        (TaskStatus::InputRequired, false) if t.input_requests.is_empty() => {
                            TaskStatus::Working
                        }
                        _ => return,
                    };
                    t.status = to;
                    t.last_updated_at = now;
                })
                .await;
        })
    }
}

impl TaskInputs for Running {
    fn task_id(&self) -> &str {
        &self.task_id
    }

    fn awaiting_client(&self) -> BoxFuture<'static, ()> {
        self.awaiting.fetch_add(1, Ordering::SeqCst);
        self.show_awaiting()
    }

    fn client_answered(&self) -> BoxFuture<'static, ()> {
        let _ = self
            .awaiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        self.show_awaiting()
    }

    fn spawn(&self, future: BoxFuture<'static, ()>) {
        if let Some(tasks) = self.tasks.upgrade() {
            tasks.run_soon(future);
        }
    }

    fn input(
        &self,
        key: &str,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let ready = |r| -> BoxFuture<'static, _> { Box::pin(futures::future::ready(r)) };
        if let Some(answer) = lock(&self.answered).get(key) {
            return ready(Ok(answer.clone()));
        }
        if self.tasks.upgrade().is_none() {
            return ready(Err(ErrorObject::internal("the server has stopped")));
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(key.to_owned(), (method.to_owned(), tx));
        // A tool that stops waiting (e.g. a select) withdraws its request: nothing stale stays.
        let withdraw = Withdraw {
            tasks: self.tasks.clone(),
            task_id: self.task_id.clone(),
            key: key.to_owned(),
        };
        let request = json!({ "method": method, "params": params });
        let (tasks, task_id, key) = (self.tasks.clone(), self.task_id.clone(), key.to_owned());
        Box::pin(async move {
            let Some(recorded) = tasks.upgrade() else {
                return Err(ErrorObject::internal("the server has stopped"));
            };
            let now = recorded.now();
            let recorded = recorded
                .change(&task_id, now, &mut |t: &mut Task| {
                    if !t.status.is_terminal() {
                        t.input_requests.insert(key.clone(), request.clone());
                        t.status = TaskStatus::InputRequired;
                        t.last_updated_at = now;
                    }
                })
                .await;
            // Not recorded: the withdrawal forgets the waiter.
            recorded.map_err(store_error)?;
            let answer = rx.await;
            std::mem::forget(withdraw);
            answer.map_err(|_| ErrorObject::internal("the task ended before its input came"))
        })
    }
}

/// Withdraws an input request whose waiter went away unanswered: the key leaves the running
/// entry at once and the record at once or soon after (on the spawner), and the task is `working` again
/// when nothing else is outstanding.
struct Withdraw {
    tasks: Weak<Tasks>,
    task_id: String,
    key: String,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(tasks) = self.tasks.upgrade() else {
            return;
        };
        let running: Option<Arc<Running>> = lock(&tasks.running).get(&self.task_id).cloned();
        if let Some(running) = &running {
            lock(&running.waiting).remove(&self.key);
        }
        let (weak, task_id, key) = (self.tasks.clone(), self.task_id.clone(), self.key.clone());
        tasks.run_soon(Box::pin(async move {
            let Some(tasks) = weak.upgrade() else { return };
            let now = tasks.now();
            let _ = tasks
                .change(&task_id, now, &mut |t: &mut Task| {
                    if t.input_requests.remove(&key).is_some() {
                        if t.status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                            t.status = TaskStatus::Working;
                        }
                        t.last_updated_at = now;
                    }
                })
                .await;
        }));
    }
}
