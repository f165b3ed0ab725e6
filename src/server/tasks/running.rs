//! A task whose tool runs on this server: the input requests it waits on, the answers already
//! delivered, the `tasks/result` callers waiting for its end; and the withdrawal of an input
//! request its tool stopped waiting for.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};

use futures::channel::oneshot;
use futures::future::AbortHandle;
use serde_json::{json, Value};

use super::slot::TaskInputs;
use super::store::TaskStatus;
use super::{lock, store_error, Tasks};
use crate::wire::jsonrpc::ErrorObject;
use crate::BoxFuture;

/// A task whose tool runs on this server.
pub(super) struct Running {
    pub(super) task_id: String,
    pub(super) abort: Mutex<Option<AbortHandle>>,
    /// Input requests the tool waits on: key → (method, where the answer goes).
    pub(super) waiting: Mutex<HashMap<String, (String, oneshot::Sender<Value>)>>,
    /// Answers already delivered, by key (a key names one request for the task's lifetime).
    pub(super) answered: Mutex<HashMap<String, Value>>,
    /// `tasks/result` callers waiting for the end; `None` once it ended.
    pub(super) ended: Mutex<Option<Vec<oneshot::Sender<()>>>>,
    pub(super) tasks: Weak<Tasks>,
}

impl TaskInputs for Running {
    fn task_id(&self) -> &str {
        &self.task_id
    }

    fn awaiting_client(&self, waiting: bool) {
        let Some(tasks) = self.tasks.upgrade() else {
            return;
        };
        let now = tasks.now();
        let (from, to) = match waiting {
            true => (TaskStatus::Working, TaskStatus::InputRequired),
            false => (TaskStatus::InputRequired, TaskStatus::Working),
        };
        let _ = tasks.change(&self.task_id, now, &mut |t| {
            if t.status == from {
                t.status = to;
                t.last_updated_at = now;
            }
        });
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
        let Some(tasks) = self.tasks.upgrade() else {
            return ready(Err(ErrorObject::internal("the server has stopped")));
        };
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(key.to_owned(), (method.to_owned(), tx));
        let now = tasks.now();
        let request = json!({ "method": method, "params": params });
        let recorded = tasks.change(&self.task_id, now, &mut |t| {
            if !t.status.is_terminal() {
                t.input_requests.insert(key.to_owned(), request.clone());
                t.status = TaskStatus::InputRequired;
                t.last_updated_at = now;
            }
        });
        if let Err(e) = recorded {
            lock(&self.waiting).remove(key);
            return ready(Err(store_error(e)));
        }
        // A tool that stops waiting (e.g. a select) withdraws its request: nothing stale stays.
        let withdraw = Withdraw {
            tasks: self.tasks.clone(),
            task_id: self.task_id.clone(),
            key: key.to_owned(),
        };
        Box::pin(async move {
            let answer = rx.await;
            std::mem::forget(withdraw);
            answer.map_err(|_| ErrorObject::internal("the task ended before its input came"))
        })
    }
}

/// Withdraws an input request whose waiter went away unanswered: the key leaves the running
/// entry and the record, and the task is `working` again when nothing else is outstanding.
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
        if let Some(running) = lock(&tasks.running).get(&self.task_id).cloned() {
            lock(&running.waiting).remove(&self.key);
        }
        let now = tasks.now();
        let _ = tasks.change(&self.task_id, now, &mut |t| {
            if t.input_requests.remove(&self.key).is_some() {
                if t.status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                    t.status = TaskStatus::Working;
                }
                t.last_updated_at = now;
            }
        });
    }
}
