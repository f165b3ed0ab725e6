//! The client's shared state and its request engine: the pending table keyed by request id,
//! deadlines, cancellation, the sink every inbound message goes through (responses matched by
//! exact id, server requests answered, notifications routed) and the close that fails them all.

use std::collections::VecDeque;

use crate::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{self, Either};
use serde_json::{json, Value};

use super::features::Taken;
use super::{
    era, features, ClientError, ClientEvent, ClientOptions, ClientTransport, Listener,
    ProgressCallback, RequestOptions, SinkHandler, SinkReply,
};
use crate::observe::Observation;
use crate::primitives::tools::panic_message;
use crate::protocol::InitializeResult;
use crate::wire::jsonrpc::{
    ErrorObject, JsonRpcBatchResponse, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
    JsonRpcResponse, RequestId,
};
use crate::BoxFuture;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Idle,
    Connecting,
    Connected,
    Closed(String),
}

pub(super) struct Pending {
    pub(super) method: String,
    pub(super) tx: oneshot::Sender<Result<Value, ClientError>>,
    pub(super) progress: Option<ProgressCallback>,
    /// Signals progress to a deadline that restarts on progress.
    pub(super) ticks: Option<futures::channel::mpsc::UnboundedSender<()>>,
}

pub(super) struct State {
    pub(super) phase: Phase,
    /// The transport was started and not closed by us yet.
    pub(super) started: bool,
    pub(super) pending: HashMap<i64, Pending>,
    /// Recently timed-out ids, to tell a late reply from an unknown one in the logs.
    pub(super) expired: VecDeque<i64>,
    pub(super) initialized: Option<InitializeResult>,
    /// The session the server forgot (Streamable HTTP `404`), until a new one replaces it.
    pub(super) lost_session: Option<String>,
    /// The session the last handshake started (Streamable HTTP `Mcp-Session-Id`), to tell a
    /// session the transport dropped from none ([`Inner::lost_session`]).
    pub(super) session: Option<String>,
}

pub(super) struct Inner {
    pub(super) transport: Arc<dyn ClientTransport>,
    pub(super) options: ClientOptions,
    pub(super) next_id: AtomicI64,
    pub(super) state: Mutex<State>,
    pub(super) lifecycle: futures::lock::Mutex<()>,
    pub(super) listeners: RwLock<Vec<Listener>>,
    pub(super) era: era::EraState,
    /// Server→client requests accepted and not yet answered (a disconnect waits for them).
    pub(super) answering: Arc<features::Answering>,
    /// Problems the transport reported so far (each is an `error` event; the log has the 1st,
    /// 2nd, 4th, 8th, … so a flood of them does not flood it).
    pub(super) transport_errors: std::sync::atomic::AtomicU64,
}

pub(super) const EXPIRED_MEMORY: usize = 256;

pub(super) fn fail_all(pending: HashMap<i64, Pending>, error: &ClientError) {
    for (_, p) in pending {
        let _ = p.tx.send(Err(error.clone()));
    }
}

/// Removes a request's pending entry when its future ends or is dropped; a request dropped
/// while still unanswered is cancelled with `notifications/cancelled` (sent in the background).
pub(super) struct PendingGuard<'a> {
    inner: &'a Inner,
    id: i64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let abandoned = {
            let mut state = self.inner.lock();
            let connected = state.phase == Phase::Connected;
            let abandoned = state
                .pending
                .remove(&self.id)
                .filter(|p| connected && p.method != "initialize");
            if abandoned.is_some() {
                // Its answer may still come (spec: cancellation races the response).
                state.expired.push_back(self.id);
                if state.expired.len() > EXPIRED_MEMORY {
                    state.expired.pop_front();
                }
            }
            abandoned
        };
        if abandoned.is_some() {
            self.inner
                .send_cancelled(self.id, "the caller abandoned the request".into());
        }
    }
}

impl Inner {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session to replace before a request goes out: one a request saw expire, or the one
    /// the last handshake started when the transport no longer holds it (a `404` to another
    /// message dropped it: a notification's, or a request's whose error is still on its way).
    pub(super) fn lost_session(&self) -> Option<String> {
        let mut state = self.lock();
        // Read under the state lock (as the handshake records it), so a renewal that ends
        // meanwhile cannot pair its new session with the transport's empty one.
        if state.lost_session.is_none() && self.transport.session_id().is_none() {
            state.lost_session = state.session.clone();
        }
        state.lost_session.clone()
    }

    /// The injected clock's reading (ms), if the client has a clock.
    pub(crate) fn now(&self) -> Option<u64> {
        self.options.clock.as_ref().map(|clock| clock())
    }

    pub(super) fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        match &self.options.sleep {
            Some(sleep) => sleep(duration),
            None => Box::pin(future::pending()),
        }
    }

    pub(super) fn check_open(&self) -> Result<(), ClientError> {
        match &self.lock().phase {
            Phase::Connected => Ok(()),
            Phase::Closed(cause) => Err(ClientError::closed(cause.clone())),
            Phase::Idle | Phase::Connecting => Err(ClientError::NotConnected),
        }
    }

    /// Send a notification, within the client's request timeout: a server that never accepts
    /// it (no status line, a `202` that never comes, a stream that never ends) fails it with
    /// [`ClientError::Timeout`] instead of holding the caller for good.
    /// (`handshake`: sent as part of `connect`, whose failure closes the client itself; its
    /// bound also covers an HTTP transport's wait for its GET stream.)
    pub(super) async fn notify_within_timeout(
        &self,
        notification: JsonRpcNotification,
        handshake: bool,
    ) -> Result<(), ClientError> {
        let method = notification.method.clone();
        let mut timeout = self.options.timeout;
        if handshake {
            // An HTTP transport's send of `notifications/initialized` also waits (at most
            // `LISTEN_ARM_TIMEOUT`) for its GET stream to be answered: not the server's fault.
            timeout += crate::http::exchange::LISTEN_ARM_TIMEOUT;
        }
        let message = JsonRpcMessage::Notification(notification);
        let send: BoxFuture<'_, Result<(), ClientError>> = if handshake {
            self.transport.send(message)
        } else {
            Box::pin(self.send_or_close(message))
        };
        match future::select(send, self.sleep(timeout)).await {
            Either::Left((sent, _)) => sent,
            Either::Right(((), _)) => Err(ClientError::Timeout {
                method,
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    pub(super) async fn send_or_close(&self, message: JsonRpcMessage) -> Result<(), ClientError> {
        self.send_or_close_with(message, None).await
    }

    pub(super) async fn send_or_close_with(
        &self,
        message: JsonRpcMessage,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<(), ClientError> {
        let result = match headers {
            Some(headers) => self.transport.send_modern(message, headers).await,
            None => self.transport.send(message).await,
        };
        if let Err(ClientError::TransportClosed { cause }) = &result {
            self.on_closed(cause.clone());
        }
        result
    }

    pub(super) async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        self.request_with(method, params, options, None).await
    }

    /// A request; `headers` (a 2026-07-28 request's HTTP headers) go through
    /// [`ClientTransport::send_modern`].
    pub(super) async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.request_id(id, method, params, options, headers).await
    }

    /// [`Inner::request_with`] under an id taken from `next_id` beforehand, inside the
    /// request's client span (its trace context goes out in `params._meta`).
    pub(super) async fn request_id(
        &self,
        id: i64,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let observed = Observation::client(method, id, params.as_ref());
        if observed.enabled() {
            observed.session_id(self.transport.session_id().as_deref());
            let version = self.era.modern_version().or_else(|| {
                let state = self.lock();
                state
                    .initialized
                    .as_ref()
                    .map(|i| i.protocol_version.clone())
            });
            observed.protocol_version(version.as_deref());
        }
        let params = observed.inject(params);
        let result = observed
            .instrument(self.exchange(id, method, params, options, headers))
            .await;
        match &result {
            Ok(value) => observed.finish_result(method, value),
            Err(ClientError::Rpc(error)) => observed.finish_object(method, error),
            Err(error) => observed.finish_error(error.error_type(), Some(&error.to_string())),
        }
        result
    }

    /// One request's exchange: pending entry, send, answer or deadline.
    async fn exchange(
        &self,
        id: i64,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let timeout = options.timeout.unwrap_or(self.options.timeout);
        let params = match (&options.on_progress, params) {
            (Some(_), params) => Some(features::with_progress_token(params, id)?),
            (None, params) => params,
        };
        let (ticks, ticks_rx) = match options.max_total_timeout {
            Some(_) if options.on_progress.is_some() => {
                let (tx, rx) = futures::channel::mpsc::unbounded();
                (Some(tx), Some(rx))
            }
            _ => (None, None),
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.lock();
            match (&state.phase, method) {
                (Phase::Connected, _)
                | (Phase::Connecting, "initialize")
                | (Phase::Connecting, "server/discover") => {}
                (Phase::Closed(cause), _) => return Err(ClientError::closed(cause.clone())),
                _ => return Err(ClientError::NotConnected),
            }
            let limit = self.options.max_pending.max(1);
            if state.pending.len() >= limit {
                tracing::warn!(limit, %method, "mcp client: too many requests pending; refused one");
                return Err(ClientError::TooManyPending { limit });
            }
            state.pending.insert(
                id,
                Pending {
                    method: method.to_owned(),
                    tx,
                    progress: options.on_progress.clone(),
                    ticks,
                },
            );
        }
        let _guard = PendingGuard { inner: self, id };
        let http_modern = headers.is_some();
        let mut request = JsonRpcRequest::new(id, method);
        if let Some(params) = params {
            request = request.with_params(params);
        }
        let abandoned = || Err(ClientError::closed("the request was abandoned"));
        let exchange = async {
            // Race the send with the answer: a request/response transport (HTTP) may still be
            // inside `send` when a disconnect or a close fails the request.
            // A modern HTTP request is cancelled by dropping its response stream (no
            // notifications/cancelled).
            let send =
                std::pin::pin!(self.send_or_close_with(JsonRpcMessage::Request(request), headers));
            let mut rx = rx;
            match future::select(send, &mut rx).await {
                Either::Left((sent, _)) => {
                    if let Err(error) = sent {
                        if let Some(p) = self.lock().pending.remove(&id) {
                            let _ = p.tx.send(Err(error));
                        }
                    }
                    rx.await.unwrap_or_else(|_| abandoned())
                }
                Either::Right((answer, _)) => answer.unwrap_or_else(|_| abandoned()),
            }
        };
        let exchange = std::pin::pin!(exchange);
        let deadline = self.deadline(timeout, options.max_total_timeout, ticks_rx);
        match future::select(exchange, deadline).await {
            Either::Left((result, _)) => result,
            Either::Right(((), _)) => {
                {
                    let mut state = self.lock();
                    state.pending.remove(&id);
                    state.expired.push_back(id);
                    if state.expired.len() > EXPIRED_MEMORY {
                        state.expired.pop_front();
                    }
                }
                let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                if method != "initialize" && method != "server/discover" && !http_modern {
                    self.cancel(id, timeout_ms).await;
                }
                Err(ClientError::Timeout {
                    method: method.to_owned(),
                    timeout_ms,
                })
            }
        }
    }

    /// Best-effort `notifications/cancelled` for a timed-out request, bounded in time.
    pub(super) async fn cancel(&self, id: i64, timeout_ms: u64) {
        let notification = JsonRpcNotification::new("notifications/cancelled").with_params(json!({
            "requestId": id,
            "reason": format!("timed out after {timeout_ms} ms"),
        }));
        let send = self
            .transport
            .send(JsonRpcMessage::Notification(notification));
        let bound = self.sleep(Duration::from_millis(timeout_ms.clamp(1, 2_000)));
        if let Either::Left((Err(e), _)) = future::select(send, bound).await {
            tracing::debug!(error = %e, id, "mcp client: could not send notifications/cancelled");
        }
    }

    pub(super) fn on_closed(&self, cause: String) {
        let (was_connected, pending) = {
            let mut state = self.lock();
            let was_open = matches!(state.phase, Phase::Connected | Phase::Connecting);
            let was_connected = state.phase == Phase::Connected;
            if was_open {
                state.phase = Phase::Closed(cause.clone());
            }
            (was_connected, std::mem::take(&mut state.pending))
        };
        if !pending.is_empty() {
            tracing::debug!(count = pending.len(), %cause, "mcp client: failing pending requests");
        }
        fail_all(pending, &ClientError::closed(cause.clone()));
        if was_connected {
            self.emit(&ClientEvent::Disconnect { cause });
        }
    }

    pub(super) fn emit(&self, event: &ClientEvent) {
        let listeners = self
            .listeners
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for listener in listeners {
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| listener(event))) {
                let message = panic_message(&*panic);
                match &self.options.on_error {
                    Some(handler) => {
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            handler(&message, event.name())
                        }));
                    }
                    None => {
                        tracing::error!(%message, event = event.name(), "mcp client: a listener panicked")
                    }
                }
            }
        }
    }

    /// One inbound value: a message, or a batch whose elements are taken one by one, each as
    /// it would be alone, and whose requests are answered in one array (the table in
    /// `transport.rs`).
    pub(super) fn receive(&self, value: Value) -> Option<SinkReply> {
        let items = match value {
            Value::Array(items) => items,
            value => {
                return match self.take(value) {
                    Taken::Nothing => None,
                    Taken::Now(response) => {
                        Some(SinkReply::Message(JsonRpcMessage::Response(response)))
                    }
                    Taken::Later(later) => {
                        self.answer_later(later);
                        None
                    }
                };
            }
        };
        if items.is_empty() {
            tracing::warn!("mcp client: the server sent an empty batch");
            self.emit(&ClientEvent::Error(ClientError::InvalidResponse(
                "the server sent an empty batch".into(),
            )));
            let error =
                ErrorObject::invalid_request("an empty batch: a batch holds at least one message");
            let response = JsonRpcResponse::error(None, error);
            return Some(SinkReply::Message(JsonRpcMessage::Response(response)));
        }
        let taken: Vec<Taken> = items.into_iter().map(|item| self.take(item)).collect();
        if taken.iter().any(|t| matches!(t, Taken::Later(_))) {
            // The array goes out once the handlers have answered too.
            self.answer_batch_later(taken);
            return None;
        }
        let responses = taken.into_iter().filter_map(|t| match t {
            Taken::Now(response) => Some(response),
            _ => None,
        });
        JsonRpcBatchResponse::new(responses.collect()).map(SinkReply::Batch)
    }

    /// Take one message (alone or an element of a batch): resolve a response, route a
    /// notification, answer a request now or through the handler.
    pub(super) fn take(&self, value: Value) -> Taken {
        let has_method = value.get("method").is_some();
        match JsonRpcMessage::from_value(value) {
            Ok(JsonRpcMessage::Response(response)) => {
                self.resolve(response);
                Taken::Nothing
            }
            Ok(JsonRpcMessage::Request(request)) => {
                let handled = matches!(
                    request.method.as_str(),
                    "sampling/createMessage" | "elicitation/create" | "roots/list"
                );
                let response = if request.method == "ping" {
                    JsonRpcResponse::result(request.id, json!({}))
                } else if handled
                    && self.options.handler.is_some()
                    && self.answering.count() >= features::MAX_ANSWERING
                {
                    // A server that floods requests the handler answers (each a sampling call,
                    // a prompt to the user, a POST) gets the rest refused at once.
                    tracing::warn!(method = %request.method, limit = features::MAX_ANSWERING, "mcp client: too many of the server's requests being answered; refused one");
                    JsonRpcResponse::error(
                        Some(request.id),
                        ErrorObject::new(
                            crate::wire::jsonrpc::ErrorCode::SERVER_ERROR,
                            format!(
                                "too many requests being answered ({} at once); try again later",
                                features::MAX_ANSWERING
                            ),
                        ),
                    )
                } else if let (true, Some(handler)) = (handled, &self.options.handler) {
                    return Taken::Later(self.answer_of(handler.as_ref(), request));
                } else {
                    tracing::debug!(method = %request.method, "mcp client: unsupported server request");
                    JsonRpcResponse::error(
                        Some(request.id),
                        ErrorObject::method_not_found(&request.method),
                    )
                };
                Taken::Now(response)
            }
            Ok(JsonRpcMessage::Notification(notification)) => {
                self.era.route(&notification);
                if notification.method == "notifications/progress" {
                    self.progress(&notification);
                }
                self.emit(&ClientEvent::Notification(notification));
                Taken::Nothing
            }
            Err(invalid) if has_method => {
                tracing::warn!(error = %invalid, "mcp client: invalid server message");
                self.emit(&ClientEvent::Error(ClientError::InvalidResponse(format!(
                    "invalid server message: {}",
                    invalid.error.message
                ))));
                invalid.response().map_or(Taken::Nothing, Taken::Now)
            }
            Err(invalid) => {
                let error = ClientError::InvalidResponse(invalid.error.message.clone());
                let pending = match &invalid.id {
                    Some(RequestId::Number(id)) => self.lock().pending.remove(id),
                    _ => None,
                };
                match pending {
                    Some(p) => {
                        tracing::warn!(id = ?invalid.id, method = %p.method, error = %invalid, "mcp client: invalid response");
                        let _ = p.tx.send(Err(error));
                    }
                    None => {
                        tracing::warn!(id = ?invalid.id, error = %invalid, "mcp client: dropped an invalid message");
                        self.emit(&ClientEvent::Error(error));
                    }
                }
                Taken::Nothing
            }
        }
    }

    pub(super) fn resolve(&self, response: JsonRpcResponse) {
        let (pending, late) = match &response.id {
            Some(RequestId::Number(id)) => {
                let mut state = self.lock();
                let pending = state.pending.remove(id);
                let late = pending.is_none() && state.expired.contains(id);
                (pending, late)
            }
            _ => (None, false),
        };
        match (pending, response.payload) {
            (Some(p), payload) => {
                let _ = p.tx.send(
                    payload
                        .map(crate::wire::jsonrpc::ResultValue::into_value)
                        .map_err(ClientError::Rpc),
                );
            }
            (None, _) if late => {
                tracing::debug!(id = ?response.id, "mcp client: ignored a reply that came after its deadline or cancellation");
            }
            (None, Err(error)) if response.id.is_none() => {
                tracing::warn!(%error, "mcp client: error response with a null id");
                self.emit(&ClientEvent::Error(ClientError::Rpc(error)));
            }
            (None, _) => {
                tracing::warn!(id = ?response.id, "mcp client: dropped a response with an unknown or duplicate id");
            }
        }
    }
}

/// The sink the client hands its transport; holds the client weakly so a transport's reader
/// task never keeps a dropped client alive.
pub(super) struct ClientSink {
    pub(super) inner: Weak<Inner>,
}

impl SinkHandler for ClientSink {
    fn receive(&self, value: Value) -> Option<SinkReply> {
        self.inner.upgrade()?.receive(value)
    }

    fn error(&self, message: String) {
        if let Some(inner) = self.inner.upgrade() {
            let count = 1 + inner
                .transport_errors
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if count.is_power_of_two() {
                tracing::warn!(%message, count, "mcp client: a problem with the server's messages");
            } else {
                tracing::debug!(%message, count, "mcp client: a problem with the server's messages");
            }
            inner.emit(&ClientEvent::Error(ClientError::Transport(message)));
        }
    }

    fn closed(&self, cause: String) {
        if let Some(inner) = self.inner.upgrade() {
            inner.on_closed(cause);
        }
    }
}
