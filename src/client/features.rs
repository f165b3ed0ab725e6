//! The client's background work: progress, cancellation and asynchronous answers to server
//! requests, run on the injected spawner and timer. (The resources / prompts / completion /
//! logging calls are in `primitives.rs`.)
//!
//! ```text
//!  server request (sampling, elicitation, roots) ─► ClientHandler future ─► spawner
//!                                                     └─► transport.send(response)
//!  a batch holding one ─► every answer of it, joined ─► transport.send_batch([responses])
//!  notifications/progress {progressToken = request id} ─► that request's callback
//!                                                     └─► restarts its deadline (if asked)
//!  a request future dropped unanswered ─► notifications/cancelled (spawned, bounded)
//! ```

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc::UnboundedReceiver;
use futures::future::{self, Either};
use futures::{FutureExt, StreamExt};
use serde_json::{json, Map, Value};

use super::{handlers, ClientError, ClientHandler, Inner};
use crate::primitives::tools::panic_message;
use crate::wire::jsonrpc::{
    ErrorObject, JsonRpcBatchResponse, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
    JsonRpcResponse, RequestId,
};
use crate::BoxFuture;

/// How long a background `notifications/cancelled` may take to send.
const CANCEL_SEND_BOUND: Duration = Duration::from_secs(2);

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// A per-request progress callback (`Send + Sync` on native targets).
        pub type ProgressCallback = Arc<dyn Fn(&Progress)>;
    } else {
        /// A per-request progress callback (`Send + Sync` on native targets).
        pub type ProgressCallback = Arc<dyn Fn(&Progress) + Send + Sync>;
    }
}

/// One `notifications/progress` for a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The progress so far (increases with each notification).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable message, if any.
    pub message: Option<String>,
}

/// `params` with `_meta.progressToken` set to `id` (params must be an object or absent).
pub(super) fn with_progress_token(params: Option<Value>, id: i64) -> Result<Value, ClientError> {
    let mut params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(ClientError::InvalidArguments(format!(
                "request params must be a JSON object to carry a progress token, not {}",
                crate::wire::json_text::JsonText(&other)
            )))
        }
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    match meta {
        Value::Object(meta) => {
            meta.insert("progressToken".into(), json!(id));
        }
        _ => {
            return Err(ClientError::InvalidArguments(
                "request params `_meta` must be a JSON object".into(),
            ))
        }
    }
    Ok(Value::Object(params))
}

impl Inner {
    /// Run `task` in the background on the configured spawner.
    pub(super) fn spawn(&self, task: BoxFuture<'static, ()>) {
        match &self.options.spawn {
            Some(spawn) => spawn(task),
            None => {
                drop(task);
                tracing::error!("mcp client: no spawner; set ClientOptions::with_spawner");
            }
        }
    }

    /// The request deadline: `timeout`, restarted by each tick when `max_total` is set, and
    /// never later than `max_total` in all.
    pub(super) fn deadline(
        &self,
        timeout: Duration,
        max_total: Option<Duration>,
        ticks: Option<UnboundedReceiver<()>>,
    ) -> BoxFuture<'static, ()> {
        let (Some(max_total), Some(mut ticks)) = (max_total, ticks) else {
            return self.sleep(timeout);
        };
        let sleep = self.options.sleep.clone();
        let nap = move |d: Duration| -> BoxFuture<'static, ()> {
            match &sleep {
                Some(sleep) => sleep(d),
                None => Box::pin(future::pending()),
            }
        };
        Box::pin(async move {
            let mut total = nap(max_total);
            loop {
                let idle = future::select(nap(timeout), &mut total);
                match future::select(idle, ticks.next()).await {
                    Either::Left(_) => return,
                    Either::Right((Some(()), _)) => continue,
                    Either::Right((None, idle)) => {
                        idle.await;
                        return;
                    }
                }
            }
        })
    }

    /// Route a `notifications/progress` to its request's callback and deadline.
    pub(super) fn progress(&self, notification: &JsonRpcNotification) {
        let Some(params) = &notification.params else {
            return;
        };
        let Some(RequestId::Number(id)) =
            params.get("progressToken").and_then(RequestId::from_value)
        else {
            return;
        };
        let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
            tracing::debug!(id, "mcp client: a progress notification without a number");
            return;
        };
        let (callback, ticks) = {
            let state = self.lock();
            match state.pending.get(&id) {
                Some(p) => (p.progress.clone(), p.ticks.clone()),
                None => return,
            }
        };
        if let Some(ticks) = ticks {
            let _ = ticks.unbounded_send(());
        }
        if let Some(callback) = callback {
            let update = Progress {
                progress,
                total: params.get("total").and_then(Value::as_f64),
                message: params
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| callback(&update))) {
                tracing::error!(message = %panic_message(&*panic), "mcp client: a progress callback panicked");
            }
        }
    }

    /// Answer a server request through the handler, in the background.
    ///
    /// The request counts as [accepted](Answering) from now until its answer was handed to the
    /// transport, so a [`disconnect`](super::McpClient::disconnect) waits for it.
    /// The handler's answer to `request`, to come; its place among the accepted requests is
    /// taken now (so `disconnect` waits for it).
    pub(super) fn answer_of(&self, handler: &dyn ClientHandler, request: JsonRpcRequest) -> Later {
        let params = request.params.map(Value::Object).unwrap_or(Value::Null);
        let answer = AssertUnwindSafe(handlers::answer(handler, &request.method, params));
        let id = request.id;
        let method = request.method;
        let accepted = self.answering.begin();
        let response = Box::pin(async move {
            match answer.catch_unwind().await {
                Ok(Ok(result)) => JsonRpcResponse::result(id, result),
                Ok(Err(error)) => JsonRpcResponse::error(Some(id), error),
                Err(panic) => {
                    let message = panic_message(&*panic);
                    tracing::error!(%method, %message, "mcp client: a handler panicked");
                    JsonRpcResponse::error(
                        Some(id),
                        ErrorObject::internal(format!("the client handler failed: {message}")),
                    )
                }
            }
        });
        Later { response, accepted }
    }

    /// Write the handler's answer to one request when it comes.
    pub(super) fn answer_later(&self, later: Later) {
        let transport = self.transport.clone();
        self.spawn(Box::pin(async move {
            let Later { response, accepted } = later;
            let response = response.await;
            let id = response.id.clone();
            if let Err(e) = transport.send(JsonRpcMessage::Response(response)).await {
                tracing::warn!(?id, error = %e, "mcp client: could not answer a server request");
            }
            drop(accepted);
        }));
    }

    /// Write the answers to a batch's requests as one array once every one is answered, in
    /// the batch's order (JSON-RPC 2.0 batch): those answered at once wait for the handlers'.
    pub(super) fn answer_batch_later(&self, taken: Vec<Taken>) {
        let transport = self.transport.clone();
        let mut accepted = Vec::new();
        let mut answers: Vec<BoxFuture<'static, JsonRpcResponse>> = Vec::new();
        for t in taken {
            match t {
                Taken::Nothing => {}
                Taken::Now(response) => answers.push(Box::pin(future::ready(response))),
                Taken::Later(later) => {
                    answers.push(later.response);
                    accepted.push(later.accepted);
                }
            }
        }
        self.spawn(Box::pin(async move {
            let responses = future::join_all(answers).await;
            if let Some(batch) = JsonRpcBatchResponse::new(responses) {
                let n = batch.responses().len();
                if let Err(e) = transport.send_batch(batch).await {
                    tracing::warn!(responses = n, error = %e, "mcp client: could not answer a batch of server requests");
                }
            }
            drop(accepted);
        }));
    }

    /// Send `notifications/cancelled` for `id` in the background, bounded in time.
    pub(super) fn send_cancelled(&self, id: i64, reason: String) {
        let notification = JsonRpcNotification::new("notifications/cancelled")
            .with_params(json!({ "requestId": id, "reason": reason }));
        let transport = self.transport.clone();
        let bound = self.sleep(CANCEL_SEND_BOUND);
        self.spawn(Box::pin(async move {
            let send = transport.send(JsonRpcMessage::Notification(notification));
            if let Either::Left((Err(e), _)) = future::select(send, bound).await {
                tracing::debug!(error = %e, id, "mcp client: could not send notifications/cancelled");
            }
        }));
    }
}

/// What taking one inbound message leaves to answer.
pub(super) enum Taken {
    /// Nothing to answer (a response, a notification, what cannot be answered).
    Nothing,
    /// This answer, at once (`ping`, an unsupported method, an invalid request).
    Now(JsonRpcResponse),
    /// The handler's answer, to come.
    Later(Later),
}

/// A server request a [`ClientHandler`] answers: the answer to come, and its place among the
/// accepted requests (given back when dropped).
pub(super) struct Later {
    response: BoxFuture<'static, JsonRpcResponse>,
    accepted: Accepted,
}

/// How long [`McpClient::disconnect`](super::McpClient::disconnect) waits for the answers to
/// server→client requests it already accepted (a handler still running, or its answer being
/// written) before it closes the transport: 5 s. After it the transport closes anyway and
/// those answers are lost (logged).
pub const ANSWER_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// The most server→client requests a client's handler answers at once: 64. Past it a request
/// is refused at once (`-32000`, "too many requests being answered").
pub const MAX_ANSWERING: usize = 64;

/// The server→client requests a client accepted and has not answered yet.
#[derive(Default)]
pub(super) struct Answering {
    state: std::sync::Mutex<(usize, Vec<futures::channel::oneshot::Sender<()>>)>,
}

/// One accepted request: its place is given back when dropped (answer written, or task dropped).
pub(super) struct Accepted(std::sync::Arc<Answering>);

impl Drop for Accepted {
    fn drop(&mut self) {
        let waiters = {
            let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
            state.0 -= 1;
            if state.0 == 0 {
                std::mem::take(&mut state.1)
            } else {
                Vec::new()
            }
        };
        for waiter in waiters {
            let _ = waiter.send(());
        }
    }
}

impl Answering {
    /// Count one more accepted request.
    pub(super) fn begin(self: &std::sync::Arc<Self>) -> Accepted {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 += 1;
        Accepted(self.clone())
    }

    /// How many are being answered.
    pub(super) fn count(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// Resolves once none is being answered.
    pub(super) fn idle(&self) -> BoxFuture<'static, ()> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 == 0 {
            return Box::pin(futures::future::ready(()));
        }
        let (tx, rx) = futures::channel::oneshot::channel();
        state.1.push(tx);
        Box::pin(async move {
            let _ = rx.await;
        })
    }
}

#[cfg(test)]
#[path = "features_tests.rs"]
mod tests;
