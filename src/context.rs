//! The per-request context a dispatch carries: who asked, with what `_meta`, and a way to send
//! notifications back on the request's own channel (DESIGN "Protocol eras": one place that a
//! transport, a session or a stateless request fills).

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::jsonrpc::{JsonRpcNotification, RequestId};

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
    notifier: Option<Notifier>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("meta", &self.meta)
            .field("notifier", &self.notifier.is_some())
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
