//! The per-request context a dispatch carries: who asked, with what `_meta`, and the channel back
//! to the caller for notifications (progress, logs) and server→client requests (sampling,
//! elicitation, roots, ping). One place that a transport, a session or a stateless request fills,
//! in either protocol era.

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::era::mrtr::Round;
use crate::era::{self, Era};
pub use crate::host::{Notifier, Outbound};
use crate::http::session::Session;
pub use crate::protocol::LogLevel;
use crate::server::peers::Pending;
use crate::server::tasks::slot::TaskSlot;
use crate::wire::jsonrpc::{
    ErrorCode, ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId,
};

/// What a handler knows about the request it serves, and its way back to the caller.
#[derive(Clone, Default)]
pub struct RequestContext {
    /// The request id (`None` for a notification).
    pub id: Option<RequestId>,
    /// The method name.
    pub method: String,
    /// `params._meta`, when the request carried one.
    pub meta: Option<Map<String, Value>>,
    /// The connection or session the request came on (`None` for a stateless request).
    pub scope: Option<Arc<str>>,
    /// The client's declared capabilities (from `initialize` on this scope), when known.
    pub client_capabilities: Option<Value>,
    /// The minimum level the client asked for (`logging/setLevel` on this scope, or the
    /// request's `_meta` logLevel on the modern wire).
    pub log_level: Option<LogLevel>,
    /// The request's era: set to [`Era::Modern`] by a transport that saw a modern
    /// `MCP-Protocol-Version` header, or by the server for a request with modern `_meta`.
    pub era: Era,
    /// The protocol version the transport carried (the HTTP `MCP-Protocol-Version` header),
    /// checked against the body's on modern requests.
    pub transport_version: Option<String>,
    notifier: Option<Notifier>,
    outbound: Option<Outbound>,
    pub(crate) pending: Option<Arc<Pending>>,
    pub(crate) round: Option<Arc<Round>>,
    /// The task this tool call runs as, or may become ([`crate::server::tasks`]).
    pub(crate) task: Option<Arc<TaskSlot>>,
    /// Set by the server when it does not declare the `logging` capability: then
    /// [`RequestContext::log`] sends nothing (spec `server/utilities/logging`: servers that emit
    /// log messages declare it).
    pub(crate) logging_undeclared: bool,
    /// The request came over a transport that keeps no channel for messages not tied to a
    /// request (a stateless Streamable HTTP endpoint: no session, `GET` answers `405`): a
    /// handshake-era `initialize` declares no `listChanged` or `resources.subscribe`, and
    /// `resources/subscribe` is not served, since nothing could deliver them.
    pub(crate) stateless: bool,
    /// The stateless batch the request came in (a name of its own): with no scope, its
    /// requests are recorded in flight under it, so a `notifications/cancelled` later in the
    /// same batch cancels one (as in a session or on stdio).
    pub(crate) batch: Option<Arc<str>>,
    /// `notifications/initialized` had arrived on the request's scope when it was dispatched:
    /// until then the server sends that scope no request but `ping` (spec `basic/lifecycle`).
    pub(crate) client_initialized: bool,
    /// The protocol version the request is served under: the `MCP-Protocol-Version` header, else
    /// the session's negotiated version, else `2025-03-26` over HTTP with no session (spec
    /// `basic/transports`, Protocol Version Header); `None` when the transport does not say.
    pub protocol_version: Option<String>,
    /// Who the request's bearer token speaks for, when the endpoint requires one
    /// ([`crate::http::auth`]): subject, client id, scopes, claims.
    pub identity: Option<Arc<crate::http::identity::Identity>>,
    session: Option<Arc<Session>>,
    /// The session stream the request is answered on (set with the session by the HTTP route,
    /// for a request answered over SSE).
    stream: Option<u64>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("meta", &self.meta)
            .field("scope", &self.scope)
            .field("log_level", &self.log_level)
            .field(
                "channel",
                &(self.notifier.is_some() || self.outbound.is_some()),
            )
            .field("protocol_version", &self.protocol_version)
            .field("session", &self.session.as_ref().map(|s| s.id().to_owned()))
            .finish()
    }
}

impl RequestContext {
    /// A context with no channel back (in-process dispatch, tests).
    pub fn new() -> Self {
        RequestContext::default()
    }

    /// Where the request is recorded in flight for `notifications/cancelled`: its scope, else
    /// its stateless batch.
    pub(crate) fn in_flight_scope(&self) -> Option<Arc<str>> {
        self.scope.clone().or_else(|| self.batch.clone())
    }

    /// Give the context a channel for notifications about this request.
    pub fn with_notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Give the context a channel for any server→client message (notifications and requests).
    pub fn with_outbound(mut self, outbound: Outbound) -> Self {
        self.outbound = Some(outbound);
        self
    }

    /// Tie the request to a connection or session, so per-scope state (log level, client
    /// capabilities, subscriptions, cancellation) applies.
    ///
    /// The server records a scope's state once the scope is open: an `initialize` on it or the
    /// host's [`McpServer::attach`](crate::McpServer::attach) opens it (the stdio, WebSocket and
    /// HTTP hosts do), [`McpServer::end_scope`](crate::McpServer::end_scope) ends it. A request
    /// that would record state on a scope the server does not know (`resources/subscribe`,
    /// `logging/setLevel`) gets `-32600` and creates nothing, so a message arriving after its
    /// scope ended never brings state back that nothing would free.
    pub fn with_scope(mut self, scope: impl Into<Arc<str>>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The authorization context of the request's verified bearer token
    /// ([`Identity::context`](crate::http::identity::Identity::context); `None` without a token,
    /// or one naming neither subject nor client): what its tasks and session are bound to.
    pub fn authorization(&self) -> Option<String> {
        self.identity
            .as_ref()
            .and_then(|identity| identity.context())
    }

    /// Attach the verified identity of the request's bearer token (set by the HTTP route).
    pub fn with_identity(mut self, identity: Option<Arc<crate::http::identity::Identity>>) -> Self {
        self.identity = identity;
        self
    }

    /// Attach the HTTP session the request arrived in (set by the session layer).
    pub fn with_session(mut self, session: Arc<Session>) -> Self {
        self.session = Some(session);
        self
    }

    /// Mark the session stream (see [`Session::open_request_stream`]) the request is answered on.
    pub(crate) fn with_stream(mut self, stream: u64) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Close the SSE connection this request is being answered on, without ending the request
    /// (spec 2025-11-25 `basic/transports`, [Resumability and
    /// Redelivery](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery)):
    /// the connection gets an SSE `retry` field and ends; what the request sends afterwards
    /// (notifications, its response) is kept, and the client gets it by reconnecting with `GET`
    /// and the `Last-Event-ID` of the last event it saw (polling, SEP-1699). Returns `false`,
    /// and does nothing, when the request is not answered on a resumable session stream
    /// (stdio, WebSocket, stateless or 2026-07-28 HTTP, a JSON answer) or the connection is
    /// already gone.
    pub fn close_sse_stream(&self) -> bool {
        match (&self.session, self.stream) {
            (Some(session), Some(stream)) => session.disconnect(stream),
            _ => false,
        }
    }

    /// The HTTP session the request arrived in (seed `context.state.session`); `None` over
    /// stdio, WebSocket, or stateless HTTP.
    pub fn session(&self) -> Option<&Arc<Session>> {
        self.session.as_ref()
    }

    /// Push a notification on the session's standalone `GET` stream (logged for resumption,
    /// seed clause 19), not tied to this request. Returns `false` when there is no session or it
    /// has ended.
    pub fn push(&self, notification: &JsonRpcNotification) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.push(&notification.to_json()).is_some())
    }

    /// `params._meta.progressToken`, when the caller asked for progress (a `null` token asks
    /// for none: a token is a string or an integer, and a notification may only name one the
    /// request gave, spec `basic/utilities/progress`).
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta
            .as_ref()?
            .get("progressToken")
            .filter(|token| !token.is_null())
    }

    /// Send a notification on the request's channel. Returns `false` when there is no channel or
    /// it has closed (the notification is then dropped, and the caller knows).
    pub fn notify(&self, notification: JsonRpcNotification) -> bool {
        if let Some(outbound) = &self.outbound {
            return outbound(JsonRpcMessage::Notification(notification));
        }
        self.notifier.as_ref().is_some_and(|n| n(notification))
    }

    /// Send `notifications/progress` for this request: `progress` (and `total`, same unit) with
    /// an optional message. `false` when the caller sent no `progressToken` or the channel is
    /// gone (spec 2025-11-25 `basic/utilities/progress`).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = self.progress_token().cloned() else {
            return false;
        };
        let mut params = json!({ "progressToken": token, "progress": number(progress) });
        if let Some(total) = total {
            params["total"] = number(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.notify(JsonRpcNotification::new("notifications/progress").with_params(params))
    }

    /// The message sink, when the transport gave one.
    pub(crate) fn outbound(&self) -> Option<Outbound> {
        self.outbound.clone()
    }

    /// Whether the context has a channel back to the caller.
    pub fn has_channel(&self) -> bool {
        self.outbound.is_some() || self.notifier.is_some()
    }

    /// Send `notifications/message` at `level` (with an optional logger name) when the level is at
    /// or above the one the client asked for. Handshake era: all levels until `logging/setLevel`;
    /// modern wire: nothing unless the request's `_meta` carried a logLevel. Nothing, on any
    /// wire, from a server that does not declare `logging` ([`crate::ServerOptions::with_logging`]).
    /// `false` when filtered out or the channel is gone.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        if self.logging_undeclared
            || self.log_level.is_some_and(|min| level < min)
            || (self.era == Era::Modern && self.log_level.is_none())
        {
            return false;
        }
        let mut params = json!({ "level": level, "data": data });
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.notify(JsonRpcNotification::new("notifications/message").with_params(params))
    }

    /// Send a server→client request on this request's channel and wait for the client's answer.
    ///
    /// # Errors
    /// `-32603` when the context has no channel for requests or it closed before the answer,
    /// and on a connection or session whose client has not sent `notifications/initialized`
    /// when this request was dispatched (any method but `ping`, spec
    /// [lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle));
    /// the client's own JSON-RPC error otherwise. There is no deadline here: wrap the future in
    /// your runtime's timeout if the client may never answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        if self.era == Era::Modern {
            let Some(prefix) = crate::protocol::client_capability_for(method) else {
                return Err(ErrorObject::internal(format!(
                    "the 2026-07-28 wire has no server→client {method} request"
                )));
            };
            let key = self
                .round
                .as_ref()
                .map(|r| r.next_key(prefix))
                .unwrap_or_default();
            return self.input(&key, method, params).await;
        }
        self.send_request(method, params).await
    }

    async fn send_request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let (Some(outbound), Some(pending)) = (&self.outbound, &self.pending) else {
            return Err(ErrorObject::internal(format!(
                "no channel for a server→client {method} request on this transport"
            )));
        };
        if self.scope.is_some() && !self.client_initialized && method != "ping" {
            // Spec basic/lifecycle: "The server SHOULD NOT send requests other than pings and
            // logging before receiving the initialized notification."
            return Err(ErrorObject::internal(format!(
                "no server→client {method} request before the client's notifications/initialized"
            )));
        }
        // Inside a 2025-11-25 task the task shows `input_required` while the client answers.
        let task = self.task.as_ref().and_then(|slot| slot.task());
        let mut waiting = None;
        if let Some(task) = task {
            task.awaiting_client().await;
            waiting = Some(Awaiting(Some(task)));
        }
        let (id, answer) = pending.register(self.scope.clone());
        // The slot goes when this future ends however it ends (answered, failed, or dropped
        // because the request was cancelled): an abandoned request leaves nothing behind.
        let _slot = Forget(pending, id.clone());
        let request = JsonRpcRequest::new(id, method).with_params(params);
        if !outbound(JsonRpcMessage::Request(request)) {
            return Err(ErrorObject::internal("the client's channel is closed"));
        }
        let answer = answer.await.unwrap_or_else(|_| {
            Err(ErrorObject::internal(
                "the client's channel closed before it answered",
            ))
        });
        if let Some(task) = waiting.and_then(|mut w| w.0.take()) {
            task.client_answered().await;
        }
        answer
    }

    /// Ask the client for one input under a handler-chosen `key` (2026-07-28 multi round-trip
    /// requests, [MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)): `method` is `elicitation/create`, `sampling/createMessage` or `roots/list`.
    ///
    /// On the modern wire, the client's answer from `inputResponses[key]` is returned when this
    /// is a retry that carries it; otherwise the request is recorded, an error is returned, and
    /// the server answers the round with an input-required result listing every recorded input
    /// (so ask for all inputs before propagating the first error with `?`, e.g. with `join!`).
    /// On the handshake wire it is a real server→client request ([`RequestContext::request`]).
    ///
    /// # Errors
    /// `-32021` (modern) when the client's capabilities for this request lack the one `method`
    /// needs; the input-required marker while the input is missing; as
    /// [`RequestContext::request`] on the handshake wire.
    pub async fn input(
        &self,
        key: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        let capability = crate::protocol::client_capability_for(method).unwrap_or_default();
        if self.era != Era::Modern {
            if !capability.is_empty() {
                self.require_capability(capability, method)?;
            }
            return self.send_request(method, params).await;
        }
        if !capability.is_empty()
            && self
                .client_capabilities
                .as_ref()
                .is_none_or(|c| c.get(capability).is_none())
        {
            return Err(era::missing_capability(capability));
        }
        if let Some(task) = self.task.as_ref().and_then(|slot| slot.task()) {
            if let Some(answer) = self.round.as_ref().and_then(|r| r.answer(key, method)) {
                return Ok(answer);
            }
            return task.input(key, method, params).await;
        }
        match &self.round {
            Some(round) => round.input(key, method, params),
            None => Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{} cannot ask for input (only tools/call, prompts/get, resources/read can)",
                    self.method
                ),
            )),
        }
    }

    /// The id of the task this tool call runs as ([`crate::server::tasks`]); `None` for a plain
    /// call (or one that has not become a task yet).
    pub fn task_id(&self) -> Option<String> {
        let task = self.task.as_ref()?.task()?;
        Some(task.task_id().to_owned())
    }

    /// Continue this tool call as a task: for a tool built with
    /// [`Tool::with_task_on_demand`](crate::Tool::with_task_on_demand), the request is answered
    /// now with the new task's handle and the tool goes on in the background; `true` once it
    /// runs as a task (at once when it already does). `false` when the call cannot become one
    /// (not such a tool, the client did not declare tasks, the store is full): the tool then
    /// goes on inside the request.
    pub async fn run_as_task(&self) -> bool {
        match &self.task {
            Some(slot) => slot.run_as_task().await,
            None => false,
        }
    }

    /// The handler's own state from the previous round, verified (2026-07-28 `requestState`).
    pub fn request_state(&self) -> Option<&Value> {
        self.round.as_ref()?.state()
    }

    /// Carry `state` to the next round: sealed (HMAC, bound to this request, expiring) into the
    /// input-required result's `requestState`. Ignored when the round completes.
    pub fn set_request_state(&self, state: Value) {
        if let Some(round) = &self.round {
            round.set_state(state);
        }
    }

    fn require_capability(&self, capability: &str, method: &str) -> Result<(), ErrorObject> {
        if self.era == Era::Modern {
            return match &self.client_capabilities {
                Some(caps) if caps.get(capability).is_some() => Ok(()),
                _ => Err(era::missing_capability(capability)),
            };
        }
        match &self.client_capabilities {
            // Unknown (a stateless request): try, and let the client answer.
            None => Ok(()),
            Some(caps) if caps.get(capability).is_some() => Ok(()),
            Some(_) => Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "the client did not declare the `{capability}` capability needed for {method}"
                ),
            )),
        }
    }

    /// `sampling/createMessage` (spec `client/sampling`): `params` is the CreateMessageRequest
    /// params (`messages`, `maxTokens`, …); the result is the client's CreateMessageResult.
    ///
    /// # Errors
    /// `-32600` when the client's known capabilities lack `sampling`; as [`RequestContext::request`].
    pub async fn create_message(&self, params: Value) -> Result<Value, ErrorObject> {
        self.require_capability("sampling", "sampling/createMessage")?;
        self.request("sampling/createMessage", params).await
    }

    /// `elicitation/create` (spec `client/elicitation`): `params` holds `message` and
    /// `requestedSchema` (form mode) or `mode: "url"` with `url`; the result has `action` and
    /// `content`.
    ///
    /// # Errors
    /// `-32600` when the client's known capabilities lack `elicitation`; as [`RequestContext::request`].
    pub async fn elicit(&self, params: Value) -> Result<Value, ErrorObject> {
        self.require_capability("elicitation", "elicitation/create")?;
        self.request("elicitation/create", params).await
    }

    /// `roots/list` (spec `client/roots`): the client's `{ roots: [{ uri, name? }] }`.
    ///
    /// # Errors
    /// `-32600` when the client's known capabilities lack `roots`; as [`RequestContext::request`].
    pub async fn list_roots(&self) -> Result<Value, ErrorObject> {
        self.require_capability("roots", "roots/list")?;
        self.request("roots/list", json!({})).await
    }

    /// `ping` the client.
    ///
    /// # Errors
    /// As [`RequestContext::request`].
    pub async fn ping(&self) -> Result<(), ErrorObject> {
        self.request("ping", json!({})).await.map(|_| ())
    }
}

/// A number as JSON: integral values within ±2^53 as integers (`5`, not `5.0`).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// Sets a task back to `working` when its server→client request ends, however it ends: in
/// the background when the request's future is dropped before the answer.
struct Awaiting(Option<Arc<dyn crate::server::tasks::slot::TaskInputs>>);

impl Drop for Awaiting {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.spawn(task.client_answered());
        }
    }
}

/// Forgets a server→client request's slot in [`Pending`] when dropped.
struct Forget<'a>(&'a Pending, RequestId);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(&self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn capture() -> (Outbound, Arc<Mutex<Vec<JsonRpcMessage>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        (
            Arc::new(move |m| {
                s.lock().unwrap().push(m);
                true
            }),
            seen,
        )
    }

    #[test]
    fn progress_needs_a_token_and_log_respects_the_level() {
        let (outbound, seen) = capture();
        let mut ctx = RequestContext::new().with_outbound(outbound);
        assert!(!ctx.progress(1.0, None, None), "no token, no progress");
        ctx.meta = Some(json!({"progressToken": null}).as_object().unwrap().clone());
        assert!(!ctx.progress(1.0, None, None), "a null token is none");
        ctx.meta = Some(json!({"progressToken": "t"}).as_object().unwrap().clone());
        assert!(ctx.progress(1.0, Some(2.0), Some("half")));
        ctx.log_level = Some(LogLevel::Warning);
        assert!(!ctx.log(LogLevel::Info, None, json!("quiet")));
        assert!(ctx.log(LogLevel::Error, Some("db"), json!("loud")));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(
            serde_json::to_value(&seen[0]).unwrap()["params"],
            json!({"progressToken":"t","progress":1,"total":2,"message":"half"})
        );
        assert_eq!(
            serde_json::to_value(&seen[1]).unwrap()["params"],
            json!({"level":"error","data":"loud","logger":"db"})
        );
    }

    #[test]
    fn requests_without_a_channel_or_capability_fail_clearly() {
        let ctx = RequestContext::new();
        let err = futures::executor::block_on(ctx.ping()).unwrap_err();
        assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
        assert!(!ctx.close_sse_stream(), "no session stream to close");
        let ctx = RequestContext {
            client_capabilities: Some(json!({"roots":{}})),
            ..RequestContext::new()
        };
        let err = futures::executor::block_on(ctx.create_message(json!({}))).unwrap_err();
        assert!(err.message.contains("sampling"));
    }
}
