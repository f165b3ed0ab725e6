//! What a store shared between server instances adds to the tasks of one server: the
//! signals heard from the others (a status change wakes the `tasks/result` callers waiting
//! here and stops a tool cancelled elsewhere; answers reach the tool waiting here; after a
//! lost link everything is read again), the owners only this instance knows qualified with
//! its tag, and the status notification to a task's owner.

use std::sync::{Arc, Weak};

use futures::channel::oneshot;
use serde_json::Value;

use super::running::Running;
use super::store::{Task, TaskSignal};
use super::wire::task_fields;
use super::{lock, Tasks};
use crate::era::Era;
use crate::BoxFuture;

impl Tasks {
    /// `notifications/tasks/status` with `task` to its owner's push channel, if it has one here
    /// (a session's channel reaches its `GET` stream on whichever instance holds it).
    pub(super) fn announce(&self, task: &Task) {
        let (Some(owner), Some(inner)) = (
            task.owner.as_deref().map(|o| self.scope_of(o)),
            self.server.get().and_then(Weak::upgrade),
        ) else {
            return;
        };
        let Some(Some(outbound)) = inner.peers.read(owner, |p| p.outbound.clone()) else {
            return;
        };
        let status = crate::wire::jsonrpc::JsonRpcNotification::new("notifications/tasks/status")
            .with_params(Value::Object(task_fields(task, Era::Legacy)));
        if !outbound(crate::wire::jsonrpc::JsonRpcMessage::Notification(status)) {
            tracing::debug!(task = %task.task_id, "the task's owner is gone: no status notification");
        }
    }

    /// The owner a task of `scope` is kept under: the scope itself, except in a shared store
    /// for a scope the other instances do not share (a connection: its name is only unique
    /// here), qualified with this instance's tag.
    pub(super) fn owner_of(&self, scope: Option<&str>) -> Option<String> {
        let scope = scope?;
        let shares = |inner: &crate::server::Inner| {
            let store = inner.scope_store.read().unwrap_or_else(|e| e.into_inner());
            store.as_ref().is_some_and(|s| s.shares(scope))
        };
        let server = self.server.get().and_then(Weak::upgrade);
        Some(match server {
            Some(inner) if self.shared && !shares(&inner) => format!("{scope}@{}", self.tag),
            _ => scope.to_owned(),
        })
    }

    /// The scope of an owner [`Tasks::owner_of`] made.
    pub(super) fn scope_of<'a>(&self, owner: &'a str) -> &'a str {
        owner
            .strip_suffix(self.tag.as_str())
            .and_then(|o| o.strip_suffix('@'))
            .unwrap_or(owner)
    }

    /// A signal another instance sent through the store: a status change wakes the waiting
    /// `tasks/result` callers here, and a terminal one stops the tool if it runs here; answers
    /// go to the tool if it waits here.
    pub(super) fn heard(&self, task_id: &str, signal: TaskSignal) {
        let running = lock(&self.running).get(task_id).cloned();
        match signal {
            TaskSignal::Status(status) => {
                self.wake(task_id);
                if let (true, Some(running)) = (status.is_terminal(), running) {
                    tracing::debug!(task = %task_id, status = status.as_str(), "task settled on another instance; its tool stops here");
                    self.finish(&running);
                }
            }
            TaskSignal::Answers(answers) => {
                let Some(running) = running else { return };
                let delivered = self.deliver(&running, &answers);
                if delivered.is_empty() {
                    return;
                }
                let (tasks, id) = (self.me.clone(), task_id.to_owned());
                self.run_soon(Box::pin(async move {
                    if let Some(tasks) = tasks.upgrade() {
                        tasks.record_answered(&id, &delivered).await;
                    }
                }));
            }
            TaskSignal::Resync => self.resync(),
        }
    }

    /// Signals may have been lost: the waiting `tasks/result` callers read again, and each
    /// tool running here whose task is now terminal (cancelled elsewhere) or gone stops.
    fn resync(&self) {
        let waited: Vec<String> = lock(&self.watchers).keys().cloned().collect();
        for id in waited {
            self.wake(&id);
        }
        let running: Vec<Arc<Running>> = lock(&self.running).values().cloned().collect();
        for running in running {
            let tasks = self.me.clone();
            self.run_soon(Box::pin(async move {
                let Some(tasks) = tasks.upgrade() else { return };
                let now = tasks.now();
                match tasks.store().get(&running.task_id, now).await {
                    Ok(Some(task)) if !task.status.is_terminal() => {}
                    Ok(_) => {
                        tracing::debug!(task = %running.task_id, "task settled or gone while signals were lost; its tool stops");
                        tasks.finish(&running);
                    }
                    Err(e) => {
                        tracing::debug!(task = %running.task_id, error = %e, "cannot read a task again")
                    }
                }
            }));
        }
    }

    /// Run `future` now if it completes at once (a store in memory), else on the spawner: with
    /// an in-memory store a change made from synchronous code (a drop) is done before it returns.
    pub(super) fn run_soon(&self, mut future: BoxFuture<'static, ()>) {
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        if future.as_mut().poll(&mut cx).is_pending() {
            if let Some(spawn) = &self.options.spawner {
                spawn(future);
            }
        }
    }

    /// Wake the `tasks/result` callers waiting on `task_id` here (they read it again).
    pub(super) fn wake(&self, task_id: &str) {
        for waiter in lock(&self.watchers).remove(task_id).into_iter().flatten() {
            let _ = waiter.send(());
        }
    }

    /// Be woken (through the receiver) at the next status change of `task_id` heard here.
    pub(super) fn watch(&self, task_id: &str) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        let mut watchers = lock(&self.watchers);
        // Callers that stopped waiting (answered, gone) leave nothing behind.
        watchers.retain(|_, waiting| {
            waiting.retain(|w| !w.is_canceled());
            !waiting.is_empty()
        });
        watchers.entry(task_id.to_owned()).or_default().push(tx);
        rx
    }
}
