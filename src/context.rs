//! The per-request context a dispatch carries: who asked, with what `_meta`, and a way to send
//! notifications back on the request's own channel (DESIGN "Protocol eras": one place that a
//! transport, a session or a stateless request fills).

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::jsonrpc::{JsonRpcNotification, RequestId};
use crate::session::Session;

/// A sink for server→client notifications tied to one request (its SSE stream, its stdio pipe,
/// its WebSocket). Returns `false` when the channel is gone.
pub type Notifier = Arc<dyn Fn(JsonRpcNotification) -> bool + Send + Sync>;

/// What a handler knows about the request it serves.
#[derive(Clone, Default)]
pub struct RequestContext {
    /// The request id (`None` for a notification).
    pub id: Option<RequestId>,
    /// The method name.
    pub method: String,
    /// `params._meta`, when the request carried one.
    pub meta: Option<Map<String, Value>>,
    /// The protocol version the request is served under: the `MCP-Protocol-Version` header, else
    /// the session's negotiated version, else `2025-03-26` over HTTP with no session (spec
    /// `basic/transports`, Protocol Version Header); `None` when the transport does not say.
    pub protocol_version: Option<String>,
    notifier: Option<Notifier>,
    session: Option<Arc<Session>>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("meta", &self.meta)
            .field("protocol_version", &self.protocol_version)
            .field("notifier", &self.notifier.is_some())
            .field("session", &self.session.as_ref().map(|s| s.id().to_owned()))
            .finish()
    }
}

impl RequestContext {
    /// A context with no notification channel (in-process dispatch, tests).
    pub fn new() -> Self {
        RequestContext::default()
    }

    /// Give the context a channel for notifications about this request.
    pub fn with_notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Attach the HTTP session the request arrived in (set by the session layer).
    pub fn with_session(mut self, session: Arc<Session>) -> Self {
        self.session = Some(session);
        self
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

    /// Send `notifications/progress` for this request (spec `basic/utilities/progress`):
    /// `progress` (increasing), optional `total` and `message`. Returns `false` when the caller
    /// sent no `progressToken` (nothing is sent) or the channel has closed.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = self.progress_token().cloned() else {
            return false;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token);
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::String(message.to_owned()));
        }
        self.notify(
            JsonRpcNotification::new("notifications/progress").with_params(Value::Object(params)),
        )
    }

    /// Send `notifications/message` (spec `server/utilities/logging`) with a level (`"debug"`,
    /// `"info"`, … `"emergency"`), an optional logger name and any JSON `data`, on this request's
    /// channel. Returns `false` when the channel is gone.
    pub fn log(&self, level: &str, logger: Option<&str>, data: Value) -> bool {
        let mut params = Map::new();
        params.insert("level".into(), Value::String(level.to_owned()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::String(logger.to_owned()));
        }
        params.insert("data".into(), data);
        self.notify(
            JsonRpcNotification::new("notifications/message").with_params(Value::Object(params)),
        )
    }

    /// `params._meta.progressToken`, when the caller asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.as_ref()?.get("progressToken")
    }

    /// Send a notification on the request's channel. Returns `false` when there is no channel or
    /// it has closed (the notification is then dropped, and the caller knows).
    pub fn notify(&self, notification: JsonRpcNotification) -> bool {
        self.notifier.as_ref().is_some_and(|n| n(notification))
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
