//! The link between one tool call's [`RequestContext`](crate::RequestContext) and the task it
//! runs as (or may become): where its input requests go once it is a task, and the signal by
//! which a tool that ran inside the request asks to continue as a task.

use std::sync::{Arc, Mutex};

use futures::channel::oneshot;
use serde_json::Value;

use crate::wire::jsonrpc::ErrorObject;
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// A running task as its tool sees it.
pub(crate) trait TaskInputs: MaybeSend + MaybeSync {
    /// The task's id.
    fn task_id(&self) -> &str;
    /// Ask the client for one input under `key`: the task shows `input_required` with the
    /// request until a `tasks/update` answers it.
    fn input(
        &self,
        key: &str,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>>;
    /// A 2025-11-25 server→client request of the task goes out: the task shows
    /// `input_required` once the returned future is done.
    fn awaiting_client(&self) -> BoxFuture<'static, ()>;
    /// That request ended (answered or not): the task is `working` again, once the returned
    /// future is done, unless another one is out.
    fn client_answered(&self) -> BoxFuture<'static, ()>;
    /// Run `future` now if it completes at once, else in the background (on the task's
    /// spawner).
    fn spawn(&self, future: BoxFuture<'static, ()>);
}

/// One tool call's task link.
#[derive(Default)]
pub(crate) struct TaskSlot {
    bound: Mutex<Option<Arc<dyn TaskInputs>>>,
    detach: Mutex<Option<oneshot::Sender<oneshot::Sender<()>>>>,
}

impl TaskSlot {
    /// A slot already bound to a task.
    pub(crate) fn bound(task: Arc<dyn TaskInputs>) -> Arc<TaskSlot> {
        let slot = TaskSlot::default();
        *slot.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Arc::new(slot)
    }

    /// A slot that may become a task: the request hears the tool's wish on the receiver.
    pub(crate) fn deferred() -> (Arc<TaskSlot>, oneshot::Receiver<oneshot::Sender<()>>) {
        let (tx, rx) = oneshot::channel();
        let slot = TaskSlot {
            bound: Mutex::new(None),
            detach: Mutex::new(Some(tx)),
        };
        (Arc::new(slot), rx)
    }

    pub(crate) fn bind(&self, task: Arc<dyn TaskInputs>) {
        *self.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    }

    pub(crate) fn task(&self) -> Option<Arc<dyn TaskInputs>> {
        self.bound.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Continue as a task: `true` once the task exists (at once when it already does); `false`
    /// when this call cannot become one (then the tool goes on inside the request).
    pub(crate) async fn run_as_task(&self) -> bool {
        if self.task().is_some() {
            return true;
        }
        let Some(detach) = self.detach.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return false;
        };
        let (ready, created) = oneshot::channel();
        if detach.send(ready).is_err() {
            return false;
        }
        created.await.is_ok()
    }
}
